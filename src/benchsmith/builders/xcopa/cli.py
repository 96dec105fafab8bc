"""Command line of XCOPA: ``benchsmith stage xcopa tables|diversity``. Predictions are scored
by the generic ``benchsmith evaluate xcopa PREDICTIONS`` with the metric of ``metric.py``."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from benchsmith.cli import JSON_OPTION, console, emit, stage_app, table
from benchsmith.loaders.xcopa_jsonl import LANGUAGES

from . import Xcopa
from .alignment import RawData, derive_question_errata, question_errata_up_to_date, write_question_errata
from .diversity import beside_paper, diversity_indices, typology_alternatives

xcopa_stage = typer.Typer(help="XCOPA construction stages: evidence tables, diversity indices.", no_args_is_help=True)
stage_app.add_typer(xcopa_stage, name="xcopa")


@xcopa_stage.command("tables")
def stage_tables(
    sources: Annotated[Path, typer.Option("--sources", metavar="DIR", help="Folder with xcopa/ and copa/ (e.g. ../shared/raw).")],
    write: Annotated[bool, typer.Option("--write", help="Rewrite the tables beside the builder.")] = False,
    json_out: bool = JSON_OPTION,
) -> None:
    """Re-derive the generated errata; say if they changed.

    errata.generated.tsv holds the question disagreements with COPA."""
    raw = RawData.read(sources / "xcopa", sources / "copa")
    errata = derive_question_errata(raw)
    errata_path = Xcopa.generated_errata_path()
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
    """Table 2's diversity indices beside our measurement.

    Table 2's six columns and Section 1's count (published.yaml) beside our measurement, and the
    typology row with every lang2vec syntax feature set (which one matches the paper best)."""
    rows = beside_paper(LANGUAGES)
    indices = diversity_indices(LANGUAGES)
    alternatives = typology_alternatives()
    with_english = typology_alternatives(add=["en"])

    def human() -> None:
        columns = ["figure", "unit", "measured", "paper", "difference", "languages"]
        console.print(table("Table 2 and Section 1: the language samples", columns,
                            [(r["figure"], _unit(r["args"]), r["measured"], r["paper"],
                              f"{r['difference']:+}" + ("" if r["agrees"] else
                                                         " (known discrepancy)" if r["discrepancy"] else
                                                         " (beyond tolerance)"),
                              " ".join(r["languages"]))
                             for r in rows]))
        typ = [k for k in next(iter(alternatives.values())) if k.startswith("table2/")]
        for title, alts in (("Typology row by lang2vec feature set", alternatives),
                            ("Typology row, English added to every sample", with_english)):
            ranked = sorted(alts.items(), key=lambda kv: kv[1]["mean_abs_error"])
            console.print(table(title, ["setting", *(_column(f) for f in typ), "mean |diff|", "max |diff|"],
                                [(k, *(v[f] for f in typ), v["mean_abs_error"], v["max_abs_error"])
                                 for k, v in ranked]))
        console.print(table("XCOPA, all indices", ["index", "value"], [(k, v) for k, v in indices.items()]))

    emit({"languages": list(LANGUAGES), "figures": rows, "indices": indices,
          "typology_alternatives": alternatives, "typology_alternatives_with_english": with_english},
         json_out, human)


def _column(figure_id: str) -> str:
    """Table 2's column of a figure id: ``table2/typology`` -> xcopa, ``table2/tydiqa/typology`` -> tydiqa."""
    parts = figure_id.split("/")
    return parts[1] if len(parts) == 3 else "xcopa"


def _unit(args: dict) -> str:
    if args.get("index") in ("family", "areas"):
        return {"family": "ratio", "areas": "count"}[args["index"]]
    return {"e": "nats", 2: "bits"}.get(args.get("base", "e"), str(args.get("base")))
