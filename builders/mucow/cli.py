"""``benchsmith evaluate mucow`` and ``benchsmith harvest mucow``."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from benchsmith.commands import (
    JSON_OPTION,
    REGISTRY_OPTION,
    console,
    emit,
    evaluate_app,
    gold_release,
    harvest_app,
    registry_path,
    table,
)
from benchsmith.errors import ConfigError, did_you_mean
from benchsmith.nlp.tokenize import same_language

if TYPE_CHECKING:
    from benchsmith.release import Release


def _same_pair(a: str | None, b: str) -> bool:
    """Whether two SRC-TGT pairs name the same languages (``de-en`` is ``deu-eng``: a harvest records ISO 639-3)."""
    if not a or a.count("-") != 1 or b.count("-") != 1:
        return a == b
    return all(same_language(x, y) for x, y in zip(a.split("-"), b.split("-")))


def find_config(release: Release, variant: str, pair: str) -> str:
    """``<variant>-<pair>`` in a released suite, or ``<variant>`` of a harvested release for that pair."""
    configs = release.configs()
    if f"{variant}-{pair}" in configs:
        return f"{variant}-{pair}"
    if variant in configs and _same_pair(release.config_info(variant).metadata.get("pair"), pair):
        return variant
    have = [c for c in configs if c.startswith(variant)]
    skipped = release.info.skipped_configs
    if f"{variant}-{pair}" in skipped:
        raise ConfigError(f"release {release.name} {release.version} has no {variant}-{pair}: its upstream file was absent",
                          path=release.path, hint="Rebuild from sources that include it")
    raise ConfigError(f"release {release.name} {release.version} has no {variant} suite for pair {pair!r}",
                      path=release.path, hint=did_you_mean(f"{variant}-{pair}", have))


@evaluate_app.command("mucow")
def evaluate_mucow(
    pair: Annotated[str, typer.Option("--pair", help="Language pair SRC-TGT, e.g. cs-en.")],
    release: Annotated[
        str, typer.Option("--release", help="Release directory or NAME[/VERSION] in the registry (default: newest mucow).")
    ] = "mucow",
    scores: Annotated[
        Path | None,
        typer.Option("--scores", help="Scoring suite: one model score per line; per item the reference, then each contrastive."),
    ] = None,
    maximize: Annotated[bool, typer.Option("--maximize", help="Higher scores are better (default: lower, e.g. NLL).")] = False,
    translations: Annotated[
        Path | None, typer.Option("--translations", help="Translation suite: system output, one detokenised line per sentence.")
    ] = None,
    lemmatized: Annotated[
        Path | None, typer.Option("--lemmatized", help="The same output lemmatised (space-separated lemmas per line).")
    ] = None,
    registry: Path | None = REGISTRY_OPTION,
    json_out: bool = JSON_OPTION,
) -> None:
    """Score a system on a MuCoW suite: accuracy (--scores) or precision/recall/F (--translations + --lemmatized)."""
    from .metric import MucowScoringAccuracy, MucowTranslationPRF, read_lines_exact, read_scores

    if (scores is None) == (translations is None and lemmatized is None):
        raise ConfigError("give either --scores FILE, or --translations FILE with --lemmatized FILE",
                          hint="--scores scores the scoring suite; --translations/--lemmatized the translation suite")
    if scores is None and (translations is None or lemmatized is None):
        raise ConfigError("--translations and --lemmatized go together", hint="Pass both files")
    if maximize and scores is None:
        raise ConfigError("--maximize applies to --scores only")
    r = gold_release(release, registry)
    if scores is not None:
        config = find_config(r, "scoring", pair)
        items = list(r.examples(config, "test"))
        metric = MucowScoringAccuracy(maximize)
        values = read_scores(scores, metric.expected_lines(items))
        out = {"pair": pair, "config": config, "release": str(r.path), **metric.score(items, values, pair=pair)}

        def human() -> None:
            rows = [("all", out["correct"], out["total"], f"{out['accuracy']:.4f}")]
            rows += [(c, v["correct"], v["total"], f"{v['accuracy']:.4f}") for c, v in out["by_corpus"].items()]
            console.print(table(f"MuCoW {config} accuracy", ["corpus", "correct", "total", "accuracy"], rows))
            console.print(out["signature"], markup=False, highlight=False)

        emit(out, json_out, human)
        return
    config = find_config(r, "translation", pair)
    items = list(r.examples(config, "test"))
    tgt = r.config_info(config).languages[-1]
    metric = MucowTranslationPRF(tgt)
    out = {"pair": pair, "config": config, "release": str(r.path),
           **metric.score(items, read_lines_exact(translations, len(items), "translations"),
                          read_lines_exact(lemmatized, len(items), "lemmatised translations"), pair=pair)}

    def human_t() -> None:
        rows = [(name, d["positive"], d["negative"], d["unknown"], f"{d['precision']:.4f}", f"{d['recall']:.4f}",
                 f"{d['f']:.4f}", f"{d['recall_tables']:.4f}")
                for name, d in (("in", out["in_domain"]), ("out", out["out_of_domain"]), ("all", out))]
        console.print(table(f"MuCoW {config}", ["domain", "pos", "neg", "unk", "precision", "recall", "F",
                                                 "recall (WMT19 tables)"], rows))
        console.print(out["signature"], markup=False, highlight=False)

    emit(out, json_out, human_t)


@harvest_app.command("mucow")
def harvest_mucow(
    parallel: Annotated[
        list[str], typer.Option("--parallel", help="Folder of Moses pairs / TMX, or LABEL=PATH (repeatable).")
    ],
    inventory: Annotated[Path, typer.Option("--inventory", help="Folder of OMW *.tab files or BabelNet *.tsv exports.")],
    src: Annotated[str, typer.Option("--src", help="Source language (ISO 639-1 or 639-3).")],
    tgt: Annotated[str, typer.Option("--tgt", help="Target language (ISO 639-1 or 639-3).")],
    registry: Path | None = REGISTRY_OPTION,
    scheduler: Annotated[
        str | None, typer.Option("--scheduler", help="Dask scheduler ADDRESS (default: a local in-process cluster).")
    ] = None,
    min_links: Annotated[int, typer.Option("--min-links", min=1, help="One-to-one links a translation needs.")] = 10,
    min_targets: Annotated[int, typer.Option("--min-targets", min=2, help="Distinct translations a source word needs.")] = 2,
    merge_threshold: Annotated[
        float | None,
        typer.Option("--merge-threshold", min=-1.0, max=1.0, help="Merge senses whose USE embeddings' cosine exceeds this."),
    ] = None,
    subtitles: Annotated[
        list[str] | None, typer.Option("--subtitles", help="Corpus labels that count as subtitles (repeatable).")
    ] = None,
    pos_backend: Annotated[str, typer.Option("--pos-backend", help="auto | spacy | stanza")] = "auto",
    chunk_size: Annotated[
        int, typer.Option("--chunk-size", min=1000, help="Sentence pairs per eflomal call (its statistics' scope).")
    ] = 200_000,
    seed: Annotated[int, typer.Option("--seed", min=0, help="Seeds eflomal's sampler and the choice of sentences.")] = 0,
    workers: Annotated[
        int | None, typer.Option("--workers", min=1, help="Worker processes of the local cluster (default: one per core).")
    ] = None,
    overwrite: Annotated[bool, typer.Option("--overwrite", help="Replace an existing release of this version.")] = False,
    json_out: bool = JSON_OPTION,
) -> None:
    """Harvest MuCoW suites from parallel text and a sense inventory into a release (configs scoring, translation)."""
    from benchsmith.release import ReleaseWriter

    from .corpora import SUBTITLE_LABELS
    from .harvest import HarvestBuilder, HarvestOptions, no_items, run_harvest

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
