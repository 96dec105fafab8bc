"""The command line: one JSON object with --json, one-line errors with exit status 2."""

from __future__ import annotations

import json
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


def test_sources_register_prints_checksum_lines(capsys, toy):
    code, out, _ = run(capsys, "sources", "toy", "--register", str(FIXTURES))
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
    import typer.main

    from benchsmith.cli import _load_plugins, app

    _load_plugins()
    root = typer.main.get_command(app)
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


def _fresh(code: str, home: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", code], check=False, capture_output=True, text=True,
                          env={**os.environ, "BENCHSMITH_HOME": str(home)}, cwd=str(home))


HEAVY = ("datasets", "pyarrow", "pandas", "torch", "transformers", "sklearn", "benchsmith.validation.runner")


_PROBE = ("import sys; from benchsmith.cli import main; code = main({argv!r}); "
          "print([m for m in {heavy!r} if m in sys.modules]); sys.exit(code)")


def test_help_starts_without_heavy_libraries(tmp_path):
    """`--help` lists the plug-ins' commands from their source: no datasets, pyarrow, torch..."""
    for argv in (["--help"], []):
        proc = _fresh(_PROBE.format(argv=argv, heavy=HEAVY), tmp_path)
        assert proc.stdout.strip().endswith("[]"), (argv, proc.stdout[-300:])
        assert "validate" in proc.stdout + proc.stderr and "audit" in proc.stdout + proc.stderr


@pytest.mark.slow
def test_list_reads_the_builder_index_without_heavy_libraries(tmp_path):
    """The first `list` discovers every builder and writes the index; the next reads it."""
    first = _fresh(_PROBE.format(argv=["list", "--json"], heavy=HEAVY), tmp_path)
    assert first.returncode == 0, first.stderr
    # the console script (another sys.executable name, its own folder first on sys.path) reads
    # the same index instead of writing one of its own that `python -c` would then rewrite
    exe = Path(sys.executable).parent / "benchsmith"
    script = subprocess.run([str(exe), "list", "--json"], check=True, capture_output=True, text=True,
                            env={**os.environ, "BENCHSMITH_HOME": str(tmp_path)}, cwd=str(tmp_path))
    again = _fresh(_PROBE.format(argv=["list", "--json"], heavy=HEAVY), tmp_path)
    assert again.stdout.strip().endswith("[]"), again.stdout[-300:]
    assert json.loads(again.stdout.splitlines()[0]) == json.loads(first.stdout.splitlines()[0])
    assert json.loads(script.stdout) == json.loads(first.stdout.splitlines()[0])


def test_top_level_help_is_the_same_before_and_after_plugins_load(tmp_path):
    code = ("import io, contextlib; from benchsmith.cli import main, _load_plugins\n"
            "def help_text():\n"
            "    out = io.StringIO()\n"
            "    with contextlib.redirect_stdout(out):\n"
            "        main(['--help'])\n"
            "    return out.getvalue()\n"
            "before = help_text(); _load_plugins(); after = help_text()\n"
            "assert before == after, (before, after); print('same')")
    proc = _fresh(code, tmp_path)
    assert proc.returncode == 0 and proc.stdout.strip() == "same", proc.stderr[-2000:]


def test_list_index_follows_the_builders_and_in_process_registrations(capsys, toy, tmp_path, monkeypatch):
    from benchsmith import builder_index

    (tmp_path / "pkg").mkdir()
    monkeypatch.setattr(builder_index, "_package_dirs", lambda: [tmp_path / "pkg"])
    before = builder_index.stamp()
    assert builder_index.stamp() == before
    (tmp_path / "pkg" / "new_builder.py").write_text("# a builder added\n")
    assert builder_index.stamp() != before  # a new or edited builder file: the index is rebuilt
    code, out, _ = run(capsys, "list", "--json")
    assert code == 0 and "toy" in one_json(out)["builders"]  # registered in this process: always listed


def test_plugin_commands_name_the_module_that_defines_each_root_command():
    """cli_app.PLUGIN_COMMANDS (what one command line imports) agrees with the plug-ins' source."""
    import ast
    import importlib.util

    from benchsmith.cli_app import PLUGIN_COMMANDS, PLUGIN_MODULES

    found = {}
    for module in PLUGIN_MODULES:
        tree = ast.parse(Path(importlib.util.find_spec(module).origin).read_text(encoding="utf-8"))
        for node in tree.body:
            for deco in getattr(node, "decorator_list", []):
                if isinstance(deco, ast.Call) and getattr(deco.func, "id", None) == "root_command":
                    found[deco.args[0].value] = module
    assert found == PLUGIN_COMMANDS


def test_validate_mounts_its_own_plugin_only(tmp_path):
    """`validate` imports neither the other plug-ins, nor every builder and its CLI, nor pydantic
    (its float option, not given, builds no typer coercion); its help is typer's as before."""
    code = ("import contextlib, io, sys; from benchsmith.cli import main\n"
            "out = io.StringIO()\n"
            "with contextlib.redirect_stdout(out):\n"
            "    code = main(['validate', '--help'])\n"
            "print(code, 'near-dup-threshold' in out.getvalue(), [m for m in ('pydantic', "
            "'benchsmith.validation.baselines.cli', 'benchsmith.changelog_cli', 'benchsmith.builders.comve', "
            "'benchsmith.builders.xcopa.cli') if m in sys.modules])")
    proc = _fresh(code, tmp_path)
    assert proc.stdout.strip() == "0 True []", proc.stdout + proc.stderr[-2000:]


def test_mounting_one_plugin_then_all_keeps_the_help_order(capsys):
    from benchsmith import cli_app

    cli_app._mount_plugins((cli_app.PLUGIN_COMMANDS["diff"],))
    cli_app._load_plugins()
    names = [info.name for info in cli_app.app.registered_commands]
    assert names[: len(cli_app.CORE_COMMANDS)] == list(cli_app.CORE_COMMANDS)
    assert names[len(cli_app.CORE_COMMANDS):][: len(cli_app.PLUGIN_COMMANDS)] == list(cli_app.PLUGIN_COMMANDS)


def test_is_registered_is_membership_in_every_builder():
    from benchsmith.builder import builders, is_registered

    assert is_registered("comve") and not is_registered("no_such_dataset") and not is_registered("no-such")
    assert all(is_registered(name) for name in builders())
