"""Wall and CPU seconds of the start-up commands (`--help`, `build --help`, `list`, `list --json`).

Each command runs ``--repeat`` times in a fresh process (``os.wait4``: CPU of that child), the
commands and the trees interleaved so that every side sees the same machine load; one warm-up
run per side first (``list`` builds its builder index on a first run: README "Benchmarks").
Each tree has its own ``$BENCHSMITH_HOME``, so the two trees' builder indexes do not evict each
other. ``--tree DIR`` adds a before side: DIR laid out as installed (``benchmarks/validate_real.py``
``tree_of``), imported through ``PYTHONPATH`` from a neutral working directory. Prints one JSON
object: per command and side, the median and minimum wall and CPU seconds.

    python benchmarks/cli_startup.py [--repeat 10] [--tree DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

COMMANDS = {"--help": ["--help"], "build --help": ["build", "--help"], "list": ["list"],
            "list --json": ["list", "--json"]}


def run(args: list[str], home: Path, tree: Path | None) -> tuple[float, float]:
    env = dict(os.environ, BENCHSMITH_HOME=str(home))
    if tree is not None:
        env["PYTHONPATH"] = str(tree) + os.pathsep + env.get("PYTHONPATH", "")
    exe = str(Path(sys.executable).parent / "benchsmith")
    t = time.perf_counter()
    proc = subprocess.Popen([exe, *args], env=env, cwd=tempfile.gettempdir(), stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(proc.pid, 0)
    if os.waitstatus_to_exitcode(status):
        raise SystemExit(f"benchsmith {' '.join(args)} failed")
    return time.perf_counter() - t, usage.ru_utime + usage.ru_stime


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=10)
    ap.add_argument("--tree", type=Path)
    args = ap.parse_args()
    sides = {"after": None, **({"before": args.tree.resolve()} if args.tree else {})}
    with tempfile.TemporaryDirectory(prefix="cli-startup-") as tmp:
        homes = {s: Path(tmp) / s for s in sides}
        for side, tree in sides.items():
            for cmd in COMMANDS.values():
                run(cmd, homes[side], tree)  # warm-up: bytecode, the builder index
        got: dict[str, dict[str, list[tuple[float, float]]]] = {c: {s: [] for s in sides} for c in COMMANDS}
        for _ in range(args.repeat):
            for name, cmd in COMMANDS.items():
                for side, tree in sides.items():
                    got[name][side].append(run(cmd, homes[side], tree))
    out = {name: {side: {"wall_median": round(statistics.median(w for w, _ in v), 3),
                         "wall_min": round(min(w for w, _ in v), 3),
                         "cpu_median": round(statistics.median(c for _, c in v), 3),
                         "cpu_min": round(min(c for _, c in v), 3)} for side, v in sides_.items()}
           for name, sides_ in got.items()}
    print(json.dumps({"repeat": args.repeat, "load": os.getloadavg()[0], "commands": out}, indent=1))


if __name__ == "__main__":
    main()
