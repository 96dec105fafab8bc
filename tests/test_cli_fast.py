"""The entry point's typer-free reading of a plain ``benchsmith build`` (benchsmith/cli.py) against
the one definition of the command, the typer app's ``build_cmd`` (benchsmith/cli_app.py)."""

from __future__ import annotations

import os
import subprocess
import sys
import typing
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from benchsmith import cli, cli_app
from benchsmith.errors import BenchsmithError

WORDS = ["build", "comve", "xcopa", "-q", "--quiet", "-v", "--verbose", "--version", "1.0.0", "--sources", "raw",
         "--registry", "reg", "--config", "subtask_a", "tuples", "--skip-missing", "--overwrite",
         "--register-fingerprints", "--json", "--bogus", "--sources=raw", "--", "", "-x", "list"]


def _build_command():
    return cli_app._root_group(["build"]).commands["build"]


def _kind(param) -> str:
    """flag / values / path / value, from click's parameter and ``build_cmd``'s annotation."""
    if param.is_flag:
        return "flag"
    if param.multiple:
        return "values"
    hint = typing.get_type_hints(cli_app.build_cmd, include_extras=True)[param.name]
    args = typing.get_args(typing.get_args(hint)[0] if typing.get_origin(hint) is typing.Annotated else hint)
    return "path" if Path in args else "value"


def test_the_fast_path_table_is_build_cmds_options():
    params = _build_command().params
    derived = {opt: (p.name, _kind(p)) for p in params if p.param_type_name == "option"
               for opt in [*p.opts, *p.secondary_opts]}
    assert derived == cli.BUILD_OPTIONS
    assert [p.name for p in params if p.param_type_name == "argument"] == ["name"]


def _typer_reading(argv: list[str], monkeypatch) -> tuple[bool, bool, dict] | None:
    """(quiet, verbose, build's keyword arguments) as the typer app reads ``argv``; None if it
    does not run the build (help, usage error)."""
    seen: dict = {}
    monkeypatch.setattr(cli_app, "configure", lambda quiet, verbose: seen.update(quiet=quiet, verbose=verbose))
    monkeypatch.setattr("benchsmith.cli_build.build", lambda name, **kw: seen.update(kwargs={"name": name, **kw}))
    code = cli_app.run_app(argv)
    if "kwargs" not in seen:
        return None
    assert code == 0
    return seen["quiet"], seen["verbose"], seen["kwargs"]


@pytest.mark.parametrize("argv", [
    ["--quiet", "build", "comve", "--sources", "/raw", "--registry", "/tmp/reg", "--overwrite"],
    ["build", "xcopa", "--config", "en", "--config", "translation-et", "--json", "-v"],
    ["build", "cognition", "--skip-missing", "--version", "1.0.0", "--register-fingerprints"],
    ["build", "mucow"],
])
def test_plain_build_lines_take_the_fast_path_with_typers_arguments(argv, monkeypatch, capsys):
    argv = cli.hoist_global_flags(argv)
    fast = cli.build_arguments(argv)
    assert fast is not None
    assert fast == _typer_reading(argv, monkeypatch)


@pytest.mark.parametrize("argv", [
    ["build", "--help"], ["--version", "build", "comve"], ["build", "comve", "--sources=raw"],
    ["build", "comve", "--sources"], ["build", "comve", "--sources", ""], ["build", "comve", "extra"],
    ["build", "comve", "--bogus"], ["build", "comve", "--", "x"], ["build"], ["list"], [],
    ["build", "comve", "--version", "1", "--version", "2"], ["build", "comve", "--sources", "-q"],
])
def test_anything_else_goes_to_typer(argv):
    assert cli.build_arguments(cli.hoist_global_flags(argv)) is None


def _fast_reads_as_typer(words: list[str]) -> None:
    argv = cli.hoist_global_flags(words)
    fast = cli.build_arguments(argv)
    if fast is None:
        return
    with pytest.MonkeyPatch.context() as mp:
        assert fast == _typer_reading(argv, mp)


# An equality test of an internal fast path, not a reader of files: 100 random lines in the default
# run (the lines above are its fixed cases), 1,000 in the slow run (tests/conftest.py: budgets)
@settings(max_examples=100, deadline=None)
@given(st.lists(st.sampled_from(WORDS), max_size=9))
def test_whatever_the_fast_path_reads_typer_reads_the_same(words):
    _fast_reads_as_typer(words)


@pytest.mark.slow
@settings(max_examples=1_000, deadline=None)
@given(st.lists(st.sampled_from(WORDS), max_size=9))
def test_whatever_the_fast_path_reads_typer_reads_the_same_long_run(words):
    _fast_reads_as_typer(words)


def test_a_fast_build_imports_no_typer_and_says_what_typer_says(tmp_path):
    """A build that fails at its sources: the fast path ran (no typer, no click), and the one
    error line and exit status are those of the typer app (``cli_app.run_app``)."""
    probe = ("import sys; from benchsmith.cli import main; code = main(sys.argv[1:]); "
             "print('MODULES', sorted(m for m in ('typer', 'click') if m in sys.modules), file=sys.stderr); "
             "sys.exit(code)")
    env = {**os.environ, "BENCHSMITH_HOME": str(tmp_path / "home")}
    argv = ["--quiet", "build", "comve", "--sources", str(tmp_path / "nowhere"), "--registry", str(tmp_path / "r")]
    fast = subprocess.run([sys.executable, "-c", probe, *argv], capture_output=True, text=True, env=env, check=False)
    assert fast.returncode == 2
    error, modules = fast.stderr.splitlines()
    assert modules == "MODULES []" and error.startswith("error: ") and "no folder for source 'comve'" in error
    # the typer app on the same line: the same error (run_app leaves it to main, which prints it)
    with pytest.raises(BenchsmithError) as raised:
        cli_app.run_app(cli.hoist_global_flags(argv))
    assert error == f"error: {raised.value}" and raised.value.exit_code == 2


@pytest.mark.slow
@pytest.mark.realdata
def test_a_real_build_imports_no_typer(raw, tmp_path):
    """Nor jinja2 (the card is written by cards/card_body.py), numpy.ma (ComVE's Arrow columns are
    made from numpy buffers, not ``pa.array``) or ComVE's record-by-record reader (its dataclasses):
    README "Benchmarks", sixth pass."""
    heavy = ('typer', 'click', 'rich', 'jinja2', 'numpy.ma', 'benchsmith.loaders.comve_csv')
    probe = ("import sys; from benchsmith.cli import main; code = main(sys.argv[1:]); "
             f"print('MODULES', sorted(m for m in {heavy!r} if m in sys.modules), file=sys.stderr); "
             "sys.exit(code)")
    proc = subprocess.run([sys.executable, "-c", probe, "--quiet", "build", "comve", "--sources", str(raw),
                           "--registry", str(tmp_path / "r")], capture_output=True, text=True, check=False,
                          env={**os.environ, "BENCHSMITH_HOME": str(tmp_path / "home")})
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr.splitlines()[-1] == "MODULES []"
