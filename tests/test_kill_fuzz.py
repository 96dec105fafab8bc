"""Kill fuzzer (issue 43, the probe's kill class): SIGKILL at a random moment of every command
that forks (``validate`` with its worker, ``harvest`` with its Dask workers and eflomal) and of
``build`` and ``publish``. Whenever the kill lands: no process of the killed command's process
group outlives it (a worker dies with its parent), the next command on the registry succeeds
(or says the version does not exist) and leaves no staging behind, and a release that is there
is whole (its files are the ones its manifest records).

Half the ``validate`` and ``harvest`` cases kill at a random moment after the first child
appeared (validate's worker lives ~2 s on the toy-sized XCOPA fixture, so a random time alone
rarely hits it); the others, and every ``build`` and ``publish`` case, at a random time.

Each case is a seeded draw of a command and a delay, one test id per case; the command runs in a
fresh interpreter in its own session, so its process group is its own.
"""

from __future__ import annotations

import os
import random
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import TOY_HARVEST_ARGV, run_cli
from process_helpers import wait_until
from test_core_seal import CLI, copy_sealed, sealed, toy  # noqa: F401 - fixtures
from toy_builder import FIXTURES
from xcopa_helpers import build_fixture

from benchsmith import registry
from benchsmith.release import Release

SEED = 4320
XCOPA_VERSION = "1.1.0"  # the fixture version the XCOPA tests build
#: command -> (cases, the longest delay drawn, seconds: about the command's own run on the toy)
COMMANDS = {"build": (3, 5.0), "validate": (4, 12.0), "publish": (2, 5.0), "harvest": (3, 20.0)}
CASES = [(name, i) for name, (n, _) in COMMANDS.items() for i in range(n)]

def group(pgid: int) -> list[int]:
    """The live (not zombie) processes of process group ``pgid`` (Linux: /proc)."""
    out = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            fields = Path(f"/proc/{entry}/stat").read_text().rpartition(")")[2].split()
        except OSError:
            continue
        if fields[0] != "Z" and int(fields[2]) == pgid:
            out.append(int(entry))
    return out


@pytest.fixture(scope="module")
def xcopa_fixture(tmp_path_factory) -> Path:
    """XCOPA's fixture release: its partial-input probe is a ``concurrent`` check, so validate forks
    its worker (the toy's checks are too cheap for one)."""
    return build_fixture(tmp_path_factory.mktemp("killxcopa"), XCOPA_VERSION).path


def argv_of(name: str, reg: Path) -> list[str]:
    if name == "build":
        return ["-q", "build", "toy", "--sources", str(FIXTURES), "--registry", str(reg), "--overwrite"]
    if name == "validate":
        return ["-q", "validate", str(reg / "xcopa" / XCOPA_VERSION), "--baselines", "cheap"]
    if name == "publish":
        return ["-q", "publish", str(reg / "toy" / "1.1.0"), "--registry", str(reg)]
    return [*TOY_HARVEST_ARGV, "--registry", str(reg), "--workers", "2"]


def leftovers(reg: Path) -> list[str]:
    """Hidden entries of the registry's dataset folders but its own records."""
    records = {registry.MARKER_DIR, ".sealed", ".reports", ".locks"}
    return sorted(f"{d.name}/{p.name}" for d in reg.iterdir() if d.is_dir() and not d.name.startswith(".")
                  for p in d.iterdir() if p.name.startswith(".") and p.name not in records)


@pytest.mark.slow
@pytest.mark.fuzz("kills")
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="/proc and PR_SET_PDEATHSIG")
@pytest.mark.parametrize("name, case", CASES, ids=[f"{n}-{i}" for n, i in CASES])
def test_a_killed_command_leaves_no_process_and_a_registry_that_recovers(name, case, sealed, toy, tmp_path,  # noqa: F811
                                                                          capsys, xcopa_fixture):
    if name == "harvest":
        pytest.importorskip("eflomal")
    rng = random.Random(SEED * 1000 + list(COMMANDS).index(name) * 100 + case)
    delay = rng.uniform(0.0, COMMANDS[name][1])
    reg = tmp_path / "reg"
    if name == "validate":
        shutil.copytree(xcopa_fixture, reg / "xcopa" / XCOPA_VERSION)
        (reg / registry.LOCK_DIR).mkdir()
    elif name in ("publish", "build") and (name != "build" or rng.random() < 0.5):
        copy_sealed(sealed, reg)  # a validated release (build: one to overwrite)
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    env = {**os.environ, "TMPDIR": str(scratch), "BENCHSMITH_HOME": str(tmp_path / "home")}
    proc = subprocess.Popen([sys.executable, "-c", CLI, *argv_of(name, reg)], env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True)
    seen: set[int] = set()
    forks = name in ("validate", "harvest") and case % 2 == 0  # these cases kill while a child runs
    end = time.monotonic() + (60 if forks else delay)
    while time.monotonic() < end and proc.poll() is None:
        seen.update(group(proc.pid))
        if forks and len(seen) > 1:
            delay = rng.uniform(0.0, 0.5)
            time.sleep(delay)
            break
        time.sleep(0.05)
    assert not forks or len(seen) > 1, f"{name} never forked: nothing to test"
    try:
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
        killed = proc.returncode == -signal.SIGKILL
        err = proc.stderr.read().decode(errors="replace")
        assert killed or "Traceback" not in err, err[-3000:]
        assert wait_until(lambda: group(proc.pid) == [], 10), \
            f"{name} killed after {delay:.2f} s left {group(proc.pid)} running (its group held {sorted(seen)})"
    finally:
        for pid in group(proc.pid):
            os.kill(pid, signal.SIGKILL)
        proc.stderr.close()
    # the next command recovers the registry
    version = {"harvest": "mucow-harvest-deu-eng/1.0.0", "validate": f"xcopa/{XCOPA_VERSION}"}.get(name, "toy/1.1.0")
    code, _, err = run_cli(capsys, "show", version, "--registry", str(reg))
    assert code in (0, 2) and "Traceback" not in err, err
    assert code == 0 or "not found" in err or "no release" in err or "does not exist" in err, err
    if reg.is_dir():
        assert leftovers(reg) == [], f"{name} killed after {delay:.2f} s: staging left after the next command"
    if code == 0:
        release = Release(reg / version)
        assert release.verify_files() == [], f"{name} killed after {delay:.2f} s: a half-written release"
    print(f"{name} killed {'after a child started, ' if forks else ''}after {delay:.2f} s (killed: {killed}); "
          f"its group held {len(seen)} processes")
