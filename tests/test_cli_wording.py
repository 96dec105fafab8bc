"""Wording of messages and help: a path that is not there, help text without reST markup."""

from __future__ import annotations

import pytest
from conftest import run_cli
from typer.main import get_command

from benchsmith.builder import discover
from benchsmith.cli import app, output


@pytest.mark.parametrize("arg", ["/nonexistent", "./no/such/release", "~/nope", "a/b/c"])
def test_show_of_a_missing_path_names_the_path(capsys, tmp_path, arg):
    code, out, err = run_cli(capsys, "show", arg, "--registry", str(tmp_path))
    assert code == 2 and out == ""
    assert err == (f"error: no release directory {arg!r}. Pass a folder that holds release.json, or NAME[/VERSION] "
                   "of a release in the registry (`benchsmith list` shows the datasets)\n")
    assert "''" not in err


def test_show_of_an_unknown_name_still_says_what_to_do(capsys, tmp_path):
    code, _, err = run_cli(capsys, "show", "xcopaa", "--registry", str(tmp_path))
    assert code == 2 and "no release of 'xcopaa'" in err and "`benchsmith list`" in err


def _command_paths() -> list[list[str]]:
    discover()  # the builders' own sub-commands (stage, harvest)
    group = get_command(app)
    paths: list[list[str]] = []

    def walk(cmd, path, ctx=None):
        ctx = type(group).context_class(cmd, info_name=path[-1] if path else "benchsmith", parent=ctx)
        paths.append(path)
        if hasattr(cmd, "list_commands"):
            for name in cmd.list_commands(ctx):
                walk(cmd.get_command(ctx, name), [*path, name], ctx)

    walk(group, [])
    return paths


def test_no_help_text_shows_rest_markup(capsys):
    """Docstrings become --help text as written: ``x`` (reST) showed its backquotes (evaluate xcopa)."""
    paths = _command_paths()
    assert ["evaluate", "xcopa"] in paths and len(paths) > 20
    for path in paths:
        code, out, err = run_cli(capsys, *path, "--help")
        assert code == 0 and "Usage:" in out, (path, err)
        assert "``" not in out, f"benchsmith {' '.join(path)} --help shows reST double backquotes"


@pytest.mark.parametrize("columns", [80, 120])
@pytest.mark.parametrize("name", ["xcopa", "comve"])
def test_baseline_list_fits_the_terminal_without_cutting_names(capsys, monkeypatch, name, columns):
    from benchsmith.builder import get_builder

    monkeypatch.setattr(output.console, "width", columns)
    code, out, err = run_cli(capsys, "baseline", name, "--list")
    assert code == 0, err
    assert "…" not in out and all(len(line) <= columns for line in out.splitlines())
    specs = [s.summary() for s in get_builder(name).baselines()]
    for s in specs:
        assert f" {s['name']} " in out and f" {s['engine']} " in out  # whole, on one line
    if columns == 80:
        assert "left out to fit 80 columns: paper" in out
    if name == "xcopa" and columns == 120:  # wide enough: every paper id, one a line
        assert "left out" not in out
        assert all(f" {p} " in out for s in specs for p in s["paper"])


def test_stage_constituents_without_a_model_suggests_a_backend_it_accepts(capsys, tmp_path):
    """It used to suggest --backend spacy, which it then rejects ("gives no constituency trees")."""
    sentences = tmp_path / "s.txt"
    sentences.write_text("the cat sat on the mat\n")
    for backend, model in (("benepar", "no_such_benepar_model"), ("stanza", str(tmp_path / "no-stanza"))):
        code, out, err = run_cli(capsys, "stage", "cognition", "constituents", str(sentences), "--backend", backend,
                                 "--model", model)
        assert code == 2 and out == "" and "--backend spacy" not in err, err
        other = "stanza" if backend == "benepar" else "benepar"
        assert f"--backend {other}" in err and "spaCy gives no constituency trees" in err
    code, _, err = run_cli(capsys, "stage", "cognition", "constituents", str(sentences), "--backend", "spacy")
    assert code == 2 and "gives no constituency trees" in err  # consistent with the hints above
