"""``benchsmith new NAME``: scaffold an out-of-tree builder package (:mod:`benchsmith.scaffold`)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from benchsmith.cli.options import JSON_OPTION
from benchsmith.cli.output import console, emit
from benchsmith.scaffold import render, scaffold


def new_cmd(
    name: Annotated[str, typer.Argument(metavar="NAME",
                                        help="Dataset name: lower-case letters, digits, - and _.")],
    dest: Annotated[
        Path | None, typer.Option("--dir", metavar="DIR",
                                  help="Folder to create (default ./benchsmith-NAME); must be new or empty.")
    ] = None,
    json_out: bool = JSON_OPTION,
) -> None:
    """Scaffold an out-of-tree builder package.

    The package holds an entry point, the builder, checksums, published figures, a fixture
    and tests that pass as generated."""
    out = scaffold(name, dest)
    files = sorted(render(name))
    emit({"name": name, "path": out, "files": files}, json_out, lambda: console.print(
        f"created {out} ({len(files)} files)\n"
        f"next: cd {out} && pip install -e '.[test]' && python -m pytest -q",
        highlight=False, markup=False))
