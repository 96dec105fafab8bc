"""ComVE's commands: ``benchsmith evaluate comve`` (score a submission with the
official-compatible scorer, ``metric.py``) and ``benchsmith stage comve errata``
(re-derive ``errata.tsv`` from the built 1.0.0 data, ``errata.py``)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from benchsmith.commands import (
    JSON_OPTION,
    REGISTRY_OPTION,
    console,
    emit,
    evaluate_app,
    gold_release,
    stage_app,
    table,
)

comve_stage = typer.Typer(help="ComVE construction stages: the errata table.", no_args_is_help=True)
stage_app.add_typer(comve_stage, name="comve")


@evaluate_app.command("comve")
def evaluate_comve(
    predictions: Annotated[Path, typer.Argument(help="Submission CSV: id,answer (A: 0/1, B: A/B/C) or id,reason (C).")],
    subtask: Annotated[str, typer.Option("--subtask", help="a, b or c.")],
    split: Annotated[str, typer.Option("--split", help="train, validation, test or trial.")] = "test",
    release: Annotated[
        str, typer.Option("--release", help="Release directory or NAME[/VERSION] in the registry.")
    ] = "comve",
    registry: Path | None = REGISTRY_OPTION,
    json_out: bool = JSON_OPTION,
) -> None:
    """Accuracy (subtasks A, B) or the official BLEU (subtask C) of PREDICTIONS on a ComVE split."""
    from benchsmith.builders.comve.metric import evaluate_file

    rel = gold_release(release, registry)
    figures = evaluate_file(rel, subtask, predictions, split)

    def human() -> None:
        main = ("BLEU", f"{figures['bleu']:.4f}") if figures["metric"] == "bleu" else (
            "accuracy", f"{figures['accuracy'] * 100:.4f}%")
        rows = [("subtask", figures["subtask"]), ("split", f"{split} ({figures['n']} instances)"),
                main, ("release", f"{rel.name} {rel.version}")]
        console.print(table(f"ComVE subtask {figures['subtask']}", ["", "value"], rows))
        # whole, unwrapped: a figure must be reproducible from its printout
        console.print(f"signature: {figures['signature']}", soft_wrap=True, highlight=False, markup=False)

    emit(figures, json_out, human)


@comve_stage.command("errata")
def stage_errata(
    sources: Annotated[Path, typer.Option("--sources", help="Folder with comve/ (e.g. ../shared/raw).")],
    write: Annotated[bool, typer.Option("--write", help="Rewrite builders/comve/errata.tsv.")] = False,
    json_out: bool = JSON_OPTION,
) -> None:
    """Build 1.0.0 (upstream as released) into a temporary registry, derive errata.tsv from it,
    and say whether the file beside the builder is up to date (--write replaces it)."""
    import tempfile
    from collections import Counter

    from benchsmith.builders.comve import ComVE
    from benchsmith.builders.comve.errata import derive_rows, same_rows
    from benchsmith.builders.comve.errata import write as write_tsv

    from benchsmith.release import ReleaseWriter
    from benchsmith.source import resolve_sources

    builder = ComVE("1.0.0")
    with tempfile.TemporaryDirectory(prefix="comve-errata-") as tmp:
        srcs = resolve_sources(builder.sources, builder.checksums(), sources)
        rows = derive_rows(ReleaseWriter(builder, Path(tmp), srcs).write())
    path = ComVE.errata_path()
    result = {"path": str(path), "rows": len(rows), "errata": dict(Counter(r.id for r in rows)),
              "up_to_date": same_rows(path, rows), "written": write}
    if write:
        write_tsv(path, rows)
    emit(result, json_out)
