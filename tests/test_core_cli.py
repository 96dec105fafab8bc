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
