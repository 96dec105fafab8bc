"""The console prints messages and data verbatim (issue 29): ``:100:`` is a line number, not an emoji
code, and ``[red]x[/]`` in a path or a data value is text, not markup."""

from __future__ import annotations

import pytest
from conftest import run_cli
from xcopa_helpers import build_fixture

from benchsmith.cli.output import console, err_console, literal, table

TRICKY = "[red]x[/]:smile:"


def _tricky_path(tmp_path):
    """``.../[red]x[/]:smile:.jsonl`` (the ``/`` of ``[/]`` makes ``[red]x[`` a folder)."""
    (tmp_path / "[red]x[").mkdir()
    return tmp_path / "[red]x[" / "]:smile:.jsonl"


@pytest.fixture(scope="module")
def release(tmp_path_factory):
    return build_fixture(tmp_path_factory.mktemp("lreg"), "1.1.0")


def test_an_error_keeps_its_line_number_and_brackets(release, tmp_path, capsys):
    path = _tricky_path(tmp_path)
    path.write_bytes(b"\n" * 99 + b'{"lang": "\xff"}\n')  # blank lines are skipped: line 100 is the bad one
    code, out, err = run_cli(capsys, "evaluate", "xcopa", "--allow-unvalidated", str(path), "--release", str(release.path))
    assert code == 2 and out == ""
    # the fixture release is not validated: evaluate warns about that on a line of its own first
    lines = [line for line in err.strip().splitlines() if not line.startswith("WARNING ")]
    assert len(lines) == 1 and lines[0].startswith(f"error: {path}:100: invalid UTF-8"), err
    assert str(path).endswith(f"{TRICKY}.jsonl")
    assert "\U0001f4af" not in err and "\U0001f604" not in err


def test_a_file_without_the_brackets_still_reads(release, tmp_path, capsys):
    """The other outcome: the same command on a good file scores (exit 0)."""
    path = _tricky_path(tmp_path)
    path.write_text("".join(f'{{"lang": "et", "idx": {x["idx"]}, "label": {x["label"]}}}\n'
                            for x in release.examples("et", "test")), encoding="utf-8")
    code, out, _err = run_cli(capsys, "evaluate", "xcopa", "--allow-unvalidated", str(path), "--release", str(release.path))
    assert code == 0 and "1.0000" in out


def test_tables_print_data_verbatim(capsys):
    console.print(table(f"t {TRICKY}", ["file.txt:100:", "c"], [[f"[bold]v[/] {TRICKY}", 3]]))
    out = capsys.readouterr().out
    assert f"t {TRICKY}" in out and "file.txt:100:" in out and f"[bold]v[/] {TRICKY}" in out


def test_literal_data_inside_our_own_styles(capsys):
    console.print(f"[yellow]skipped[/] {literal('file.txt:100: [red]x[/]')}")
    err_console.print(f"error: file.txt:100: {TRICKY}", markup=False)
    got = capsys.readouterr()
    assert got.out == "skipped file.txt:100: [red]x[/]\n"  # our [yellow] applied, the data's printed
    assert got.err == f"error: file.txt:100: {TRICKY}\n"
