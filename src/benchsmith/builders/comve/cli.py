"""ComVE's command ``benchsmith stage comve errata`` (re-derive ``errata.generated.tsv`` from the built
1.0.0 data, ``errata.py``). Submissions are scored by the generic ``benchsmith evaluate comve``
with the metrics of ``metric.py``."""

from __future__ import annotations

import tempfile
from collections import Counter
from pathlib import Path
from typing import Annotated

import typer

from benchsmith.builders.comve import ComVE
from benchsmith.builders.comve.errata import derive_rows, same_rows
from benchsmith.builders.comve.errata import write as write_tsv
from benchsmith.cli import JSON_OPTION, emit, stage_app
from benchsmith.release import ReleaseWriter
from benchsmith.source import resolve_sources

comve_stage = typer.Typer(help="ComVE construction stages: the errata table.", no_args_is_help=True)
stage_app.add_typer(comve_stage, name="comve")


@comve_stage.command("errata")
def stage_errata(
    sources: Annotated[Path, typer.Option("--sources", metavar="DIR", help="Folder with comve/ (e.g. ../shared/raw).")],
    write: Annotated[bool, typer.Option("--write", help="Rewrite errata.generated.tsv beside the builder.")] = False,
    json_out: bool = JSON_OPTION,
) -> None:
    """Re-derive the generated errata; say if they changed.

    Builds 1.0.0 (upstream as released) into a temporary registry, derives errata.generated.tsv from it,
    and says whether the file beside the builder is up to date (--write replaces it)."""
    builder = ComVE("1.0.0")
    with tempfile.TemporaryDirectory(prefix="comve-errata-") as tmp:
        srcs = resolve_sources(builder.sources, builder.checksums(), sources)
        rows = derive_rows(ReleaseWriter(builder, Path(tmp), srcs).write())
    path = ComVE.generated_errata_path()
    result = {"path": str(path), "rows": len(rows), "errata": dict(Counter(r.id for r in rows)),
              "up_to_date": same_rows(path, rows), "written": write}
    if write:
        write_tsv(path, rows)
    emit(result, json_out)
