"""Where a cold `benchsmith validate` spends its time: CPU and wall seconds per check, per process.

Builds each dataset once into a temporary registry, snapshots ``$BENCHSMITH_HOME`` as the build
left it, then for each run restores that snapshot (cold: the caches hold only what the build
wrote) and runs ``benchsmith --quiet validate NAME`` in a child whose ``runner._run_one`` is
wrapped to log, from whichever process runs the check (main or forked worker), the check's name,
pid, start/end wall offsets and CPU seconds (``time.process_time``). Also logs start-up (process
start to the first check) and the tail (last check to exit: report, card, seal).

Prints one line per check (``M`` main process, ``W`` worker) and a per-process sum, and a JSON
object with everything on stdout.

    python benchmarks/validate_checks.py --datasets comve xcopa [--workers 1 0] [--repeat 1]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve()
REPO = HERE.parent.parent

CHILD = r"""
import atexit, json, os, sys, time
T0 = float(os.environ["VC_T0"])
LOG = os.environ["VC_LOG"]
def log(**kw):
    with open(LOG, "a") as f:
        f.write(json.dumps(kw) + "\n")
log(event="python", pid=os.getpid(), t=time.time() - T0, cpu=time.process_time())
from benchsmith.validation import runner
real = runner._run_one
def timed(release, check):
    t, c = time.time() - T0, time.process_time()
    try:
        return real(release, check)
    finally:
        log(event="check", name=check.name, pid=os.getpid(), start=t, end=time.time() - T0,
            cpu=time.process_time() - c)
runner._run_one = timed
main_pid = os.getpid()
atexit.register(lambda: os.getpid() == main_pid and log(event="exit", pid=main_pid, t=time.time() - T0,
                                                          cpu=time.process_time()))
from benchsmith.cli import main
sys.argv = ["benchsmith", *sys.argv[1:]]
sys.exit(main())
"""


def build(exe: str, name: str, raw: Path, reg: Path, home: Path) -> None:
    env = dict(os.environ, BENCHSMITH_HOME=str(home), HF_DATASETS_OFFLINE="1", HF_HUB_OFFLINE="1")
    cmd = [exe, "--quiet", "build", name, "--sources", str(raw), "--registry", str(reg)]
    if name == "cognition":
        cmd.append("--skip-missing")
    subprocess.run(cmd, env=env, check=True, stdout=subprocess.DEVNULL)


def one_run(name: str, reg: Path, snapshot: Path, home: Path, workers: str) -> dict:
    shutil.rmtree(home, ignore_errors=True)
    shutil.copytree(snapshot, home)
    for rep in reg.glob(f"{name}/*/reports"):  # as the build left it
        shutil.rmtree(rep)
    log = home / "checks.jsonl"
    t0 = time.time()
    env = dict(os.environ, BENCHSMITH_HOME=str(home), HF_DATASETS_OFFLINE="1", HF_HUB_OFFLINE="1",
               VC_T0=repr(t0), VC_LOG=str(log), BENCHSMITH_VALIDATE_WORKERS=workers)
    cmd = [sys.executable, "-c", CHILD, "--quiet", "validate", name, "--registry", str(reg)]
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    err = proc.stderr.read().decode() if proc.stderr else ""
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.time() - t0
    if os.waitstatus_to_exitcode(status) not in (0, 1):
        raise SystemExit(err[-3000:])
    events = [json.loads(line) for line in log.read_text().splitlines()]
    return {"wall": wall, "cpu_children": usage.ru_utime + usage.ru_stime, "events": events}


def show(name: str, workers: str, run: dict) -> None:
    ev = run["events"]
    main_pid = next(e["pid"] for e in ev if e["event"] == "python")
    checks = [e for e in ev if e["event"] == "check"]
    first = min(e["start"] for e in checks)
    last = max(e["end"] for e in checks if e["pid"] == main_pid)
    exit_ = next(e for e in ev if e["event"] == "exit")
    print(f"== {name} workers={workers}: wall {run['wall']:.2f} s, CPU (all processes) "
          f"{run['cpu_children']:.2f} s; start-up to first check {first:.2f} s, last main check to exit "
          f"{exit_['t'] - last:.2f} s", file=sys.stderr)
    sums: dict[str, list[float]] = {}
    for e in sorted(checks, key=lambda e: e["start"]):
        who = "M" if e["pid"] == main_pid else "W"
        s = sums.setdefault(who, [0.0, 0.0, 1e9, 0.0])
        s[0] += e["cpu"]
        s[1] += e["end"] - e["start"]
        s[2], s[3] = min(s[2], e["start"]), max(s[3], e["end"])
        print(f"  {who} {e['name']:<28} cpu {e['cpu']:6.2f}  wall {e['end'] - e['start']:6.2f}  "
              f"[{e['start']:6.2f} - {e['end']:6.2f}]", file=sys.stderr)
    for who, (cpu, w, a, b) in sums.items():
        print(f"  sum {who}: cpu {cpu:.2f}, wall {w:.2f}, span {a:.2f} - {b:.2f}", file=sys.stderr)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--raw", type=Path, default=REPO.parent / "shared" / "raw")
    ap.add_argument("--datasets", nargs="+", default=["comve", "xcopa"])
    ap.add_argument("--workers", nargs="+", default=["1"], help="BENCHSMITH_VALIDATE_WORKERS values to run")
    ap.add_argument("--repeat", type=int, default=1)
    args = ap.parse_args()
    exe = str(Path(sys.executable).parent / "benchsmith")
    work = Path(tempfile.mkdtemp(prefix="validate-checks-"))
    out: dict = {}
    try:
        for name in args.datasets:
            reg, snapshot = work / name / "reg", work / name / "home0"
            build(exe, name, args.raw.resolve(), reg, snapshot)
            for _ in range(args.repeat):
                for workers in args.workers:
                    run = one_run(name, reg, snapshot, work / name / "home", workers)
                    show(name, workers, run)
                    out.setdefault(name, {}).setdefault(workers, []).append(run)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(json.dumps(out))


if __name__ == "__main__":
    main()
