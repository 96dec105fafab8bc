"""`benchsmith validate` of the real datasets, cold and warm, as ratios to their build.

For each dataset and each round (interleaved, so both trees see the same machine load), each
side in fresh subprocesses timed from outside (start-up included, as a user waits):

* ``build``: ``benchsmith --quiet build NAME --sources RAW --registry TMP`` with a fresh
  ``$BENCHSMITH_HOME`` (``--skip-missing`` for CoGnition: the raw folder lacks its train split);
* ``cold``: ``benchsmith --quiet validate NAME`` right after, same home: the caches
  (``$BENCHSMITH_HOME/cache``) hold only what the build wrote;
* ``warm``: the same validate again (caches filled, the OS file cache warm).

Figures of merit: ``cold / build`` (goal <= 2) and ``warm / build`` (goal <= 1), in wall and
CPU seconds (children's user + system, steadier on a loaded machine), min over rounds.

``--before REV`` also runs the tree of git revision REV (laid out as installed: ``builders/``,
``loaders/``, ``validation/``, ``cards/`` under ``benchsmith/``, first on ``PYTHONPATH``),
interleaved with the working tree, and reports both. Prints one JSON object, and a markdown
table on stderr.

Both trees are byte-compiled first (``compileall``, as pip does on install), so neither side
compiles its modules in every child: with ``PYTHONDONTWRITEBYTECODE=1`` (set in the team's
shells) a tree without ``__pycache__`` (the ``--before`` archive, a fresh worktree) paid ~0.45-0.8
CPU s a command compiling ~110 modules that an installed or main's tree did not (sixth pass).

    python benchmarks/validate_real.py [--raw ../shared/raw] [--datasets xcopa ...] [--repeat 2]
        [--before 2d2aafe]
"""

from __future__ import annotations

import argparse
import compileall
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve()
REPO = HERE.parent.parent
SKIP_MISSING = {"cognition"}
MAPPED = ("builders", "loaders", "validation", "cards")


def tree_of(rev: str, dest: Path) -> Path:
    """Revision ``rev`` of this repository, laid out as installed, under ``dest``."""
    src = dest / "src"
    src.mkdir(parents=True)
    archive = subprocess.run(["git", "-C", str(REPO), "archive", rev], check=True, capture_output=True).stdout
    tar = dest / "src.tar"
    tar.write_bytes(archive)
    with tarfile.open(tar) as t:
        t.extractall(src, filter="data")
    out = dest / "tree"
    shutil.copytree(src / "benchsmith", out / "benchsmith")
    for folder in MAPPED:
        shutil.copytree(src / folder, out / "benchsmith" / folder)
    return out


def run(cmd: list[str], home: Path, tree: Path | None) -> tuple[float, float]:
    """(wall seconds, CPU seconds) of one child."""
    env = dict(os.environ, BENCHSMITH_HOME=str(home), HF_DATASETS_OFFLINE="1", HF_HUB_OFFLINE="1")
    if tree is not None:
        env["PYTHONPATH"] = str(tree) + os.pathsep + env.get("PYTHONPATH", "")
    t = time.perf_counter()
    proc = subprocess.Popen(cmd, env=env, cwd=tempfile.gettempdir(), stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE)
    err = proc.stderr.read().decode() if proc.stderr else ""
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t
    if os.waitstatus_to_exitcode(status) not in (0, 1):  # 1: a failed gate still timed a validation
        raise SystemExit(f"{' '.join(cmd)} failed:\n{err[-3000:]}")
    return wall, usage.ru_utime + usage.ru_stime


def one_round(exe: str, name: str, raw: Path, work: Path, tree: Path | None) -> dict[str, tuple[float, float]]:
    home, reg = work / "home", work / "reg"
    shutil.rmtree(home, ignore_errors=True)
    shutil.rmtree(reg, ignore_errors=True)
    build = [exe, "--quiet", "build", name, "--sources", str(raw), "--registry", str(reg),
             *(["--skip-missing"] if name in SKIP_MISSING else [])]
    validate = [exe, "--quiet", "validate", name, "--registry", str(reg)]
    out = {"build": run(build, home, tree), "cold": run(validate, home, tree), "warm": run(validate, home, tree)}
    html = next(reg.glob(f"{name}/*/reports/validation.html"))
    out["report_bytes"] = (html.stat().st_size, 0.0)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--raw", type=Path, default=REPO.parent / "shared" / "raw")
    ap.add_argument("--datasets", nargs="+", default=["comve", "xcopa", "cognition", "mucow"])
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--before", help="git revision to compare with (interleaved)")
    args = ap.parse_args()
    exe = str(Path(sys.executable).parent / "benchsmith")
    raw = args.raw.resolve()
    work = Path(tempfile.mkdtemp(prefix="validate-real-"))
    sides: dict[str, Path | None] = {"after": None}
    if args.before:
        sides = {"before": tree_of(args.before, work / "before"), "after": None}
    for tree in sides.values():  # as installed: bytecode written once, not compiled by every child
        compileall.compile_dir(str(tree or REPO), quiet=1, workers=1,
                               rx=None if tree else re.compile(r"[/\\](\.venv|\.git|tests)[/\\]"))
    report: dict = {"raw": str(raw), "repeat": args.repeat, "before": args.before,
                    "goals": {"cold_over_build": 2.0, "warm_over_build": 1.0}, "datasets": {}}
    try:
        for name in args.datasets:
            got: dict[str, list[dict[str, tuple[float, float]]]] = {s: [] for s in sides}
            for _ in range(args.repeat):
                for side, tree in sides.items():
                    got[side].append(one_round(exe, name, raw, work / side, tree))
            row: dict = {}
            for side, rounds in got.items():
                best = {k: (min(r[k][0] for r in rounds), min(r[k][1] for r in rounds)) for k in rounds[0]}
                row[side] = {
                    "build_s": round(best["build"][0], 2), "build_cpu_s": round(best["build"][1], 2),
                    "cold_s": round(best["cold"][0], 2), "cold_cpu_s": round(best["cold"][1], 2),
                    "warm_s": round(best["warm"][0], 2), "warm_cpu_s": round(best["warm"][1], 2),
                    "cold_over_build": round(best["cold"][0] / best["build"][0], 2),
                    "warm_over_build": round(best["warm"][0] / best["build"][0], 2),
                    "cold_over_build_cpu": round(best["cold"][1] / best["build"][1], 2),
                    "warm_over_build_cpu": round(best["warm"][1] / best["build"][1], 2),
                    "report_bytes": int(best["report_bytes"][0]),
                }
            report["datasets"][name] = row
            print(json.dumps({name: row}), file=sys.stderr, flush=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print("| dataset | side | build s | validate cold s (/ build) | validate warm s (/ build) | CPU: cold / build, "
          "warm / build | report bytes |\n|---|---|---|---|---|---|---|", file=sys.stderr)
    for name, row in report["datasets"].items():
        for side, r in row.items():
            print(f"| {name} | {side} | {r['build_s']} | {r['cold_s']} ({r['cold_over_build']}) | {r['warm_s']} "
                  f"({r['warm_over_build']}) | {r['cold_over_build_cpu']} / {r['warm_over_build_cpu']} | "
                  f"{r['report_bytes']:,} |", file=sys.stderr)
    print(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
