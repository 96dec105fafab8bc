"""The command line: one JSON object with --json, one-line errors with exit status 2."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import one_json, run_cli
from toy_builder import FIXTURES, ToyBuilder

from benchsmith.builder import register, unregister


@pytest.fixture
def toy():
    register(ToyBuilder)
    yield
    unregister("toy")


run = run_cli


def test_list_json(capsys, toy):
    code, out, _ = run(capsys, "list", "--json")
    assert code == 0
    toy_entry = one_json(out)["builders"]["toy"]
    assert toy_entry["versions"] == ["1.0.0", "1.1.0"]
    assert toy_entry["configs"] == ["plain", "short"]


def test_build_then_show(capsys, toy, tmp_path):
    code, out, err = run(
        capsys, "--quiet", "build", "toy", "--sources", str(FIXTURES), "--registry", str(tmp_path), "--json"
    )
    assert code == 0, err
    built = one_json(out)
    assert built["configs"]["plain"] == {"train": 20, "validation": 5, "test": 4}
    assert len(built["fingerprints"]["plain"]["train"]) == 64
    code, out, _ = run(capsys, "show", "toy", "--registry", str(tmp_path), "--json")
    assert code == 0
    assert one_json(out)["version"] == "1.1.0"
    code, out, _ = run(capsys, "show", str(tmp_path / "toy" / "1.1.0"))
    assert code == 0 and "plain" in out


def test_build_older_version_and_config(capsys, toy, tmp_path):
    code, out, _ = run(
        capsys, "build", "toy", "--version", "1.0.0", "--config", "short",
        "--sources", str(FIXTURES), "--registry", str(tmp_path), "--json",
    )
    assert code == 0
    assert one_json(out)["configs"] == {"short": {"train": 20}}


def test_sources_lists_expected_locations(capsys, toy):
    code, out, _ = run(capsys, "sources", "toy", "--json")
    assert code == 0
    (src,) = one_json(out)["sources"]
    assert src["files"][0] == {
        "path": "items.tsv", "expected_at": "DIR/toy/items.tsv", "sha256": None, "size": None, "required": True
    }


def test_sources_checksums_prints_checksum_lines(capsys, toy):
    code, out, _ = run(capsys, "sources", "toy", "--checksums", str(FIXTURES))
    assert code == 0
    lines = out.splitlines()
    assert lines[0] == "source\tpath\tsize\tsha256"
    source, path, size, sha = lines[1].split("\t")
    assert (source, path) == ("toy", "items.tsv")
    assert int(size) == (FIXTURES / "toy" / "items.tsv").stat().st_size and len(sha) == 64


@pytest.mark.parametrize(
    ("argv", "pattern"),
    [
        (["build", "toyy"], "unknown dataset 'toyy'. Did you mean 'toy'?"),
        (["build", "toy", "--version", "9.9.9"], "has no version '9.9.9'"),
        (["build", "toy", "--config", "plian"], "toy has no config 'plian'. Did you mean 'plain'?"),
        (["build", "toy", "--sources", "/nonexistent"], "no folder for source 'toy'"),
        (["show", "/nonexistent/release"], "no release directory"),
    ],
)
def test_user_mistakes_are_one_line_exit_2(capsys, toy, argv, pattern):
    code, out, err = run(capsys, *argv)
    assert code == 2
    assert out == ""
    assert pattern in err
    assert len(err.strip().splitlines()) == 1, err
    assert "Traceback" not in err


def test_existing_release_is_a_user_error(capsys, toy, tmp_path):
    args = ["build", "toy", "--sources", str(FIXTURES), "--registry", str(tmp_path)]
    assert run(capsys, *args)[0] == 0
    code, _, err = run(capsys, *args)
    assert code == 2 and "--overwrite" in err


def test_console_script_runs(tmp_path):
    """The installed `benchsmith` entry point works as a subprocess (exit codes included)."""
    exe = Path(sys.executable).parent / "benchsmith"
    proc = subprocess.run([str(exe), "build", "no-such-dataset"], check=False, capture_output=True, text=True,
                          env={**os.environ, "BENCHSMITH_HOME": str(tmp_path)})
    assert proc.returncode == 2
    assert "unknown dataset 'no-such-dataset'" in proc.stderr


def test_unknown_command_is_a_usage_error(capsys):
    code, _out, err = run(capsys, "nosuchcmd")
    assert code == 2
    assert "No such command 'nosuchcmd'" in err and "Traceback" not in err


def _command_paths() -> list[list[str]]:
    from typer.main import get_command

    from benchsmith.builder import discover
    from benchsmith.cli import app

    discover()  # the builders' own sub-commands (stage, harvest)
    root = get_command(app)
    paths = []
    for name, cmd in root.commands.items():
        paths.append([name])
        for sub in getattr(cmd, "commands", {}):
            paths.append([name, sub])
    return paths


def test_every_command_has_working_help(capsys):
    paths = _command_paths()
    assert ["build"] in paths and ["evaluate"] in paths
    for path in paths:
        code, out, err = run(capsys, *path, "--help")
        assert code == 0, (path, err)
        assert "Usage:" in out, path


def test_version_and_global_flags_anywhere(capsys):
    import benchsmith
    from benchsmith.cli import hoist_global_flags

    code, out, _ = run_cli(capsys, "--version")
    assert code == 0 and out.strip() == f"benchsmith {benchsmith.__version__}"
    assert hoist_global_flags(["validate", "x", "--quiet", "-v"]) == ["--quiet", "-v", "validate", "x"]
    assert hoist_global_flags(["evaluate", "x", "--", "-q"]) == ["evaluate", "x", "--", "-q"]


def test_did_you_mean_ignores_case_and_hidden_folders(capsys, tmp_path):
    from benchsmith.errors import did_you_mean

    assert did_you_mean("XCOPA", ["comve", "xcopa"]).startswith("Did you mean 'xcopa'?")
    (tmp_path / ".staging").mkdir()
    (tmp_path / "xcopa").mkdir()
    code, _, err = run_cli(capsys, "show", "nothing", "--registry", str(tmp_path))
    assert code == 2 and ".staging" not in err


def test_is_registered_is_membership_in_every_builder():
    from benchsmith.builder import builders, is_registered

    assert is_registered("comve") and not is_registered("no_such_dataset") and not is_registered("no-such")
    assert all(is_registered(name) for name in builders())


# ----------------------------------------------------------------------------- help as people read it


def _help(*argv: str, columns: int = 80) -> str:
    env = {**os.environ, "COLUMNS": str(columns)}
    proc = subprocess.run([sys.executable, "-m", "benchsmith.cli", *argv], check=False, capture_output=True,
                          text=True, env=env)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def test_dash_h_is_help_and_commands_read_in_workflow_order():
    top = _help("-h")
    assert top == _help("--help")
    commands = top.split("Commands:\n", 1)[1].splitlines()
    names = [line.split()[0] for line in commands if line.strip()]
    assert names[:9] == ["build", "validate", "audit", "publish", "evaluate", "diff", "show", "list", "sources"]
    assert names[-3:] == ["harvest", "stage", "new"]
    assert not any(line.rstrip().endswith("...") for line in commands)  # no summary cut at 80 columns
    assert all(len(line) <= 80 for line in top.splitlines())
    assert _help("build", "-h") == _help("build", "--help") and "Usage: benchsmith build" in _help("build", "-h")


def test_every_option_shows_a_word_for_its_value(capsys):
    """``--config NAME``, ``--limit N``, ``--sources DIR``: never typer's ``<list[str]>``, ``<str>``, ``TEXT``."""
    for path in _command_paths():
        code, out, err = run(capsys, *path, "-h")
        assert code == 0, (path, err)
        options = out.split("Options:\n", 1)[1] if "Options:\n" in out else ""
        for line in options.splitlines():
            if line.startswith("  -"):
                assert "<" not in line.split("  ", 2)[1] and " TEXT" not in line, (path, line)


def test_sources_with_registry_does_not_suggest_an_option_that_hashes_files(capsys, toy):
    """`sources NAME --registry` (a slip: most commands take --registry) suggested --register."""
    code, out, err = run(capsys, "sources", "toy", "--registry")
    assert code == 2 and out == "" and "No such option: --registry" in err
    assert "--register" not in err
    code, _, err = run(capsys, "sources", "toy", "--register", str(FIXTURES))
    assert code == 2 and "No such option: --register" in err


def test_build_validate_publish_each_say_what_to_run_next(capsys, tmp_path):
    """The last stderr line of each step is the next command; run as printed, it does the next step."""
    import shlex

    from toy_builder import RegisteredToyBuilder

    register(RegisteredToyBuilder)  # publishable: its source's checksum is registered
    reg = tmp_path / "reg"
    try:
        code, _, err = run(capsys, "-q", "build", "toy", "--sources", str(FIXTURES), "--registry", str(reg))
        assert code == 0, err
        step = err.strip().splitlines()[-1]
        assert step == f"next: benchsmith validate toy/1.1.0 --registry {reg}"
        validate = [*shlex.split(step.removeprefix("next: benchsmith "))]
        code, _, err = run(capsys, "-q", *validate, "--near-dup-threshold", "0.95", "--baselines", "none")
        assert code == 0, err
        step = err.strip().splitlines()[-1]
        assert step == f"next: benchsmith publish toy/1.1.0 --registry {reg}"
        code, out, err = run(capsys, *shlex.split(step.removeprefix("next: benchsmith ")))
        assert code == 0, err
        step = err.strip().splitlines()[-1]
        assert step == f'next: load it with datasets.load_dataset("{reg / "toy" / "1.1.0"}", "plain")'
        # --json: stdout is the one object, and stderr has no next step
        code, out, err = run(capsys, "-q", "build", "toy", "--sources", str(FIXTURES), "--registry",
                             str(tmp_path / "other"), "--json")
        assert code == 0 and one_json(out)["version"] == "1.1.0" and "next:" not in err
    finally:
        unregister("toy")


def test_no_command_summary_is_cut_at_80_columns(capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "80")
    for path in [[], *_command_paths()]:
        code, out, err = run(capsys, *path, "-h")
        assert code == 0, (path, err)
        listed = out.split("Commands:\n", 1)[1].splitlines() if "Commands:\n" in out else []
        assert not any(line.rstrip().endswith("...") for line in listed), (path, out)
