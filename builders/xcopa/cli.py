"""Command line of XCOPA: ``benchsmith evaluate xcopa PREDICTIONS`` (per-language accuracy
and the average) and ``benchsmith stage xcopa tables|diversity``."""

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
    resolve_release,
    stage_app,
    table,
)

xcopa_stage = typer.Typer(help="XCOPA construction stages: evidence tables, diversity indices.", no_args_is_help=True)
stage_app.add_typer(xcopa_stage, name="xcopa")


@evaluate_app.command("xcopa")
def evaluate_xcopa(
    predictions: Annotated[Path, typer.Argument(help="jsonl {lang, idx, label} or CSV/TSV lang,idx,label.")],
    split: Annotated[str, typer.Option("--split", help="validation or test.")] = "test",
    release: Annotated[str, typer.Option("--release", help="Release dir or xcopa[/VERSION] in the registry.")] = "xcopa",
    registry: Path | None = REGISTRY_OPTION,
    json_out: bool = JSON_OPTION,
) -> None:
    """Score XCOPA predictions: accuracy per language and the average over the XCOPA languages."""
    from .metric import score

    result = score(resolve_release(release, registry), predictions, split)

    def human() -> None:
        rows = [(lang, f"{r['accuracy']:.4f}", f"{r['correct']}/{r['total']}") for lang, r in result["languages"].items()]
        if result["average"] is not None:
            rows.append(("average", f"{result['average']:.4f}", f"{len(result['average_over'])} languages"))
        console.print(table(f"XCOPA {result['version']} {split}", ["language", "accuracy", "correct"], rows))
        console.print(result["signature"], highlight=False)

    emit(result, json_out, human)


@xcopa_stage.command("tables")
def stage_tables(
    sources: Annotated[Path, typer.Option("--sources", help="Folder with xcopa/ and copa/ (e.g. ../shared/raw).")],
    write: Annotated[bool, typer.Option("--write", help="Rewrite the tables beside the builder.")] = False,
    json_out: bool = JSON_OPTION,
) -> None:
    """Re-derive errata.tsv (question disagreements with COPA) from the raw files; say whether it changed."""
    from . import Xcopa
    from .alignment import RawData, derive_question_errata, question_errata_up_to_date, write_question_errata

    raw = RawData.read(sources / "xcopa", sources / "copa")
    errata = derive_question_errata(raw)
    errata_path = Xcopa.errata_path()
    result = {
        "question_errata": len(errata),
        "errata_tsv_up_to_date": question_errata_up_to_date(errata_path, errata),
        "written": write,
    }
    if write:
        write_question_errata(errata_path, errata)
    emit(result, json_out)


@xcopa_stage.command("diversity")
def stage_diversity(json_out: bool = JSON_OPTION) -> None:
    """The language-sample indices of XCOPA's Table 2 (published.yaml) beside our measurement."""
    from benchsmith.loaders.xcopa_jsonl import LANGUAGES

    from .diversity import beside_paper, diversity_indices

    rows = beside_paper(LANGUAGES)
    indices = diversity_indices(LANGUAGES)

    def human() -> None:
        columns = ["figure", "unit", "measured", "paper", "difference"]
        console.print(table("XCOPA language sample, Table 2", columns,
                            [(r["figure"], _unit(r["args"]), r["measured"], r["paper"],
                              f"{r['difference']:+}" + ("" if r["agrees"] else " (beyond tolerance)"))
                             for r in rows]))
        console.print(table("All indices", ["index", "value"], [(k, v) for k, v in indices.items()]))

    emit({"languages": list(LANGUAGES), "figures": rows, "indices": indices}, json_out, human)


def _unit(args: dict) -> str:
    if args.get("index") == "family":
        return "ratio"
    return {"e": "nats", 2: "bits"}.get(args.get("base", "e"), str(args.get("base")))
