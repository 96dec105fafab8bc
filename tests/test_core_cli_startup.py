"""The command line's start-up helpers (plain_table, typer's coercion) and its one-line errors."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Annotated

import typer
import typer.core
from typer.testing import CliRunner

from benchsmith import cli_coercion

def test_plain_table_draws_what_rich_draws(monkeypatch):
    import io

    from rich.console import Console

    from benchsmith.commands import plain_table, table

    monkeypatch.setenv("COLUMNS", "60")
    rows = [("comve", "1.0.0, 1.1.0", "subtask_a, subtask_b"), ("[b]x[/b]", "", "et")]
    out = io.StringIO()
    console = Console(file=out, width=60, soft_wrap=True, emoji=False)
    console.print(table("datasets", ["name", "v", "configs"], rows))
    assert plain_table("datasets", ["name", "v", "configs"], rows) == out.getvalue()
    wrapped = plain_table("t", ["a", "b"], [("x" * 30, "y " * 40)]).splitlines()
    assert max(map(len, wrapped)) <= 60 and len(wrapped) > 5  # too wide: the widest column wraps


def test_a_user_mistake_still_prints_one_line_and_exits_2(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "benchsmith.cli", "build", "nosuchdataset"], capture_output=True,
                          text=True, cwd=str(tmp_path), env={**os.environ, "BENCHSMITH_HOME": str(tmp_path / "home")},
                          check=False)
    assert proc.returncode == 2
    assert len(proc.stderr.strip().splitlines()) == 1 and proc.stderr.startswith("error: "), proc.stderr


# ----------------------------------------------------------------------------- typer's coercion

app = typer.Typer()


@app.command()
def _probe_cmd(
    name: str,
    out: Annotated[Path | None, typer.Option("--out")] = None,
    src: Annotated[Path | None, typer.Option("--src", exists=True, dir_okay=False)] = None,
    tags: Annotated[list[str] | None, typer.Option("--tag")] = None,
    paths: Annotated[list[Path] | None, typer.Option("--path")] = None,
    n: Annotated[int, typer.Option("--n", min=0)] = 1,
    flag: Annotated[bool, typer.Option("--flag")] = False,
) -> None:
    print(repr((name, out, src, tags, paths, n, flag)))


def _both(args: list[str], monkeypatch) -> tuple[tuple, tuple]:
    assert cli_coercion.install() and cli_coercion.TYPERS_OWN is not None
    fast = CliRunner().invoke(app, args)
    with monkeypatch.context() as m:
        m.setattr(typer.core, "build_runtime_param", cli_coercion.TYPERS_OWN)
        own = CliRunner().invoke(app, args)
    return (fast.exit_code, fast.output), (own.exit_code, own.output)


def test_plain_values_coerce_as_typer_does(tmp_path, monkeypatch):
    f = tmp_path / "f.txt"
    f.write_text("x")
    cases = [
        ["a"],
        ["a b", "--out", "rel/x", "--src", str(f), "--tag", "t1", "--tag", "", "--path", ".", "--path", str(f),
         "--n", "3", "--flag"],
        ["a", "--out", ""],
        ["a", "--src", str(tmp_path / "missing")],  # exists=True: typer's message
        ["a", "--src", str(tmp_path)],  # dir_okay=False
        ["a", "--n", "x"],  # handed to typer's own coercion (pydantic)
        ["a", "--n", "-1"],
        ["ü\u00e9", "--out", "ü/é"],
    ]
    for args in cases:
        fast, own = _both(args, monkeypatch)
        assert fast == own, args
    assert _both(cases[1], monkeypatch)[0][0] == 0 and _both(cases[3], monkeypatch)[0][0] == 2


def test_only_plain_parameters_take_the_front():
    from typer._coercion import resolve_type_descriptor
    from typer.models import OptionInfo

    def plain(annotation, **info) -> bool:
        return cli_coercion._plain(resolve_type_descriptor(annotation, OptionInfo(**info)))

    assert plain(str) and plain(bool) and plain(Path) and plain(list[str]) and plain(list[Path])
    assert not plain(int) and not plain(float) and not plain(list[int]) and not plain(tuple[str, str])
    assert not plain(str, parser=str.upper) and not plain(Path, path_type=str)


# ----------------------------------------------------------------------------- builder index key


def test_index_key_scans_the_distributions_again_only_when_a_site_folder_changes(tmp_path, monkeypatch):
    from benchsmith import builder_index

    monkeypatch.setenv("BENCHSMITH_HOME", str(tmp_path / "home"))
    scans = []
    real = builder_index._scan_distributions
    monkeypatch.setattr(builder_index, "_scan_distributions", lambda: scans.append(1) or real())
    first = builder_index.stamp()
    assert builder_index.stamp() == first and len(scans) == 1  # remembered: no second scan
    site = tmp_path / "site"
    site.mkdir()
    monkeypatch.syspath_prepend(str(site))  # a new sys.path folder (as a package installed into one)
    assert builder_index.stamp() != first and len(scans) == 2
    builder_index.stamp()
    assert len(scans) == 2
