"""``benchsmith harvest mucow``. Systems are scored by the generic ``benchsmith evaluate mucow``
with the metrics of ``metric.py``."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from benchsmith.cli import JSON_OPTION, REGISTRY_OPTION, console, emit, harvest_app, table
from benchsmith.lookup import registry_path
from benchsmith.release import ReleaseWriter

from .corpora import SUBTITLE_LABELS
from .harvest import HarvestBuilder, HarvestOptions, no_items, run_harvest


@harvest_app.command("mucow")
def harvest_mucow(
    parallel: Annotated[
        list[str], typer.Option("--parallel", metavar="DIR", help="Folder of Moses pairs / TMX, or LABEL=PATH (repeatable).")
    ],
    inventory: Annotated[Path, typer.Option("--inventory", metavar="DIR", help="Folder of OMW *.tab files or BabelNet *.tsv exports.")],
    src: Annotated[str, typer.Option("--src", metavar="LANG", help="Source language (ISO 639-1 or 639-3).")],
    tgt: Annotated[str, typer.Option("--tgt", metavar="LANG", help="Target language (ISO 639-1 or 639-3).")],
    registry: Path | None = REGISTRY_OPTION,
    scheduler: Annotated[
        str | None, typer.Option("--scheduler", metavar="ADDRESS", help="Dask scheduler ADDRESS (default: a local in-process cluster).")
    ] = None,
    min_links: Annotated[int, typer.Option("--min-links", metavar="N", min=1, help="One-to-one links a translation needs.")] = 10,
    min_targets: Annotated[int, typer.Option("--min-targets", metavar="N", min=2, help="Distinct translations a source word needs.")] = 2,
    merge_threshold: Annotated[
        float | None,
        typer.Option("--merge-threshold", metavar="X", min=-1.0, max=1.0, help="Merge senses whose USE embeddings' cosine exceeds this."),
    ] = None,
    subtitles: Annotated[
        list[str] | None, typer.Option("--subtitles", metavar="LABEL", help="Corpus labels that count as subtitles (repeatable).")
    ] = None,
    pos_backend: Annotated[str, typer.Option("--pos-backend", metavar="NAME", help="auto | spacy | stanza")] = "auto",
    chunk_size: Annotated[
        int, typer.Option("--chunk-size", metavar="N", min=1000, help="Sentence pairs per eflomal call (its statistics' scope).")
    ] = 200_000,
    seed: Annotated[int, typer.Option("--seed", metavar="N", min=0, help="Seeds eflomal's sampler and the choice of sentences.")] = 0,
    workers: Annotated[
        int | None, typer.Option("--workers", metavar="N", min=1, help="Worker processes of the local cluster (default: one per core).")
    ] = None,
    overwrite: Annotated[bool, typer.Option("--overwrite", help="Replace an existing release of this version.")] = False,
    json_out: bool = JSON_OPTION,
) -> None:
    """Harvest MuCoW suites from parallel text into a release.

    Parallel text and a sense inventory give the configs scoring and translation."""
    opts = HarvestOptions(
        src=src, tgt=tgt, min_links=min_links, min_targets=min_targets, merge_threshold=merge_threshold,
        subtitle_labels=tuple(subtitles) if subtitles else SUBTITLE_LABELS, pos_backend=pos_backend,
        chunk_size=chunk_size, seed=seed,
    )
    result = run_harvest(parallel, inventory, opts, scheduler=scheduler, workers=workers)
    builder = HarvestBuilder(result)
    if not result.scoring and not result.translation:
        raise no_items(result.options, len(result.words), result.counts.get("sentence_pairs", 0))
    rel = ReleaseWriter(builder, registry_path(registry), builder.sources_for_release(), overwrite=overwrite).write()
    stats = result.statistics()
    out = {**rel.summary(), "statistics": stats, "alignment": result.alignment}

    def human() -> None:
        console.print(f"harvested {builder.name} {rel.version} -> {rel.path}", markup=False)
        console.print(table("MuCoW harvest", ["figure", "value"], [
            ("sentence pairs", f"{stats['sentence_pairs']:,}"),
            ("candidate words", stats["candidate_words"]),
            ("ambiguous words", stats["ambiguous_words"]),
            ("senses per word", f"{stats['senses_per_word']:.2f}"),
            ("scoring items", stats["scoring"]["items"]),
            ("translation items", stats["translation"]["items"]),
            ("noun test", stats["pos"]),
            ("reproducible", "yes" if result.alignment.get("deterministic") else "no (eflomal seeded itself)"),
        ]))

    emit(out, json_out, human)
