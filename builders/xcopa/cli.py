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
    err_console,
    evaluate_app,
    gold_release,
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
    """Score XCOPA predictions: accuracy per language and the average over the XCOPA languages.

    A file without every XCOPA language still scores (exit 0: scoring a subset is a
    legitimate use, e.g. the paper's "USE ∩ XCOPA" languages), but a warning on stderr
    names the missing languages, since the average is then not the paper's "All".
    """
    from .metric import score

    result = score(gold_release(release, registry), predictions, split)
    if result["missing"]:
        n = len(result["average_over"])
        err_console.print(
            f"warning: {predictions} covers {n} of {n + len(result['missing'])} XCOPA languages; missing: "
            f"{', '.join(result['missing'])}. The average is over {n} language{'s' if n != 1 else ''}, "
            "not the 11 of the paper's \"All\".",
            markup=False, highlight=False,
        )

    def human() -> None:
        rows = [(lang, f"{r['accuracy']:.4f}", f"{r['correct']}/{r['total']}") for lang, r in result["languages"].items()]
        if result["average"] is not None:
            n = len(result["average_over"])
            rows.append(("average", f"{result['average']:.4f}", f"{n} language{'s' if n != 1 else ''}"))
        console.print(table(f"XCOPA {result['version']} {split}", ["language", "accuracy", "correct"], rows))
        console.print(result["signature"], highlight=False, markup=False)

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
    """Table 2's six columns and Section 1's count (published.yaml) beside our measurement, and the
    typology row with every lang2vec syntax feature set (which one matches the paper best)."""
    from benchsmith.loaders.xcopa_jsonl import LANGUAGES

    from .diversity import beside_paper, diversity_indices, typology_alternatives

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
