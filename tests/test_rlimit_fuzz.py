"""Resource-limit fuzzer (issue 43, row 7's class): ``build``, ``validate``, ``evaluate`` and
``publish`` of the toy under ``RLIMIT_AS``, ``RLIMIT_NOFILE`` or ``RLIMIT_FSIZE`` at a random level
exit 0, or 3 with one line (an ``EnvironmentFault``): never a traceback, a signal (SIGABRT) or a
hang; and the next command, without the limit, finds the registry whole (no staging left, a
release that is there verifies).

Each case is a seeded draw of a command, a limit and its level, one test id per case; the command
runs in a fresh interpreter whose limit is set before it starts (``preexec_fn``), through the
console script's entry (``benchsmith.console.run``: a library the CLI cannot load under the limit is
one line too), with the toy installed as a plug-in (an entry point), as a user's builder would be.
"""

from __future__ import annotations

import os
import random
import resource
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import run_cli
from test_core_seal import copy_sealed, sealed, toy  # noqa: F401 - fixtures
from test_kill_fuzz import leftovers
from toy_builder import FIXTURES

from benchsmith.release import Release

TESTS = Path(__file__).parent
#: the console script, as ``pip install`` writes it
RUN = "import sys; from benchsmith.console import run; sys.exit(run(sys.argv[1:]))"


@pytest.fixture(scope="module")
def plugin_path(tmp_path_factory) -> str:
    """A folder that installs the toy as a ``benchsmith.builders`` entry point (put on PYTHONPATH)."""
    site = tmp_path_factory.mktemp("toy-plugin")
    info = site / "toy_fuzz_plugin-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: toy-fuzz-plugin\nVersion: 0.1\n", encoding="utf-8")
    (info / "entry_points.txt").write_text("[benchsmith.builders]\ntoy = toy_fuzz_plugin\n", encoding="utf-8")
    (site / "toy_fuzz_plugin.py").write_text(
        "from toy_builder import RegisteredToyBuilder\nfrom benchsmith.builder import register\n"
        "register(RegisteredToyBuilder)\n", encoding="utf-8")
    return os.pathsep.join([str(site), str(TESTS)])
SEED = 4340
COMMANDS = ("build", "validate", "evaluate", "publish")
LIMITS = {  # limit -> the range its level is drawn from
    "AS": (resource.RLIMIT_AS, 250 * 2**20, 2 * 2**30),
    "NOFILE": (resource.RLIMIT_NOFILE, 12, 160),
    "FSIZE": (resource.RLIMIT_FSIZE, 0, 256 * 2**10),
}
#: two cases per command, the limits in turn (every limit on every command would be 12; the slow run's budget keeps 8)
_DRAWS = [(c, list(LIMITS)[(2 * n + i) % len(LIMITS)], i) for n, c in enumerate(COMMANDS) for i in range(2)]
CASES = [pytest.param(c, lim, i, id=f"{c}-{lim}-{i}") for c, lim, i in _DRAWS]


def argv_of(name: str, reg: Path, tmp: Path) -> list[str]:
    release = reg / "toy" / "1.1.0"
    if name == "build":
        return ["-q", "build", "toy", "--sources", str(FIXTURES), "--registry", str(reg), "--overwrite"]
    if name == "validate":
        return ["-q", "validate", str(release), "--near-dup-threshold", "0.95", "--baselines", "cheap"]
    if name == "publish":
        return ["-q", "publish", str(release), "--registry", str(reg)]
    preds = tmp / "subtaskA_answers.csv"
    preds.write_text("toy-1,0\n")
    return ["-q", "evaluate", "comve", str(preds), "--subtask", "a", "--release", str(release)]


@pytest.mark.slow
@pytest.mark.fuzz("resource-limits")
@pytest.mark.parametrize("name, limit, case", CASES)
def test_a_command_under_a_resource_limit_exits_0_or_3_in_one_line(name, limit, case, sealed, toy, tmp_path,  # noqa: F811
                                                                   capsys, plugin_path):
    rng = random.Random(f"{SEED}-{name}-{limit}-{case}")
    which, low, high = LIMITS[limit]
    level = rng.randint(low, high)
    reg = tmp_path / "reg"
    target = copy_sealed(sealed, reg)
    env = {**os.environ, "BENCHSMITH_HOME": str(tmp_path / "home"), "PYTHONPATH": plugin_path}

    def limited() -> None:
        resource.setrlimit(which, (level, level))

    try:
        proc = subprocess.run([sys.executable, "-c", RUN, *argv_of(name, reg, tmp_path)], env=env,
                              preexec_fn=limited, capture_output=True, text=True, timeout=180, check=False)
    except subprocess.TimeoutExpired:
        pytest.fail(f"{name} under RLIMIT_{limit}={level:,} hung (180 s)")
    err = proc.stderr.strip()
    label = f"{name} under RLIMIT_{limit}={level:,}: exit {proc.returncode}: {err[-1500:]}"
    if name == "evaluate" and proc.returncode == 2:  # the toy has no ComVE config: past the gold check and seal
        assert "has no config 'subtask_a'" in err, label
    else:
        assert proc.returncode in (0, 3), label
    assert "Traceback" not in err, label
    if proc.returncode == 3:
        assert len(err.splitlines()) == 1 and err.startswith("error: "), label
    code, _, show_err = run_cli(capsys, "show", "toy/1.1.0", "--registry", str(reg))
    assert code == 0 and leftovers(reg) == [], (show_err, label)
    assert Release(target).verify_files() == [], label
    print(label[:300])
