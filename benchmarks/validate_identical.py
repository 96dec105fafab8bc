"""`benchsmith validate --json` with the worker process and without: the same results, one by one.

For each dataset: build it once into its own temporary registry, then validate it cold (the
caches as the build left them) with ``BENCHSMITH_VALIDATE_WORKERS=1`` and with ``=0``, and warm
(again, same home) with the worker; compares every result (status, summary, metrics, details,
figures) of the three runs. ``--before REV`` also validates (cold, with its own worker setting) the
same build with the tree of git revision REV (``validate_real.tree_of``) and compares it too.
Prints one line per dataset and exits 1 when any result differs.

    python benchmarks/validate_identical.py [--datasets comve xcopa mucow cognition] [--raw ../shared/raw]
        [--before aa8e707]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def validate(exe: str, name: str, reg: Path, home: Path, workers: str,
             tree: Path | None = None) -> list[dict]:
    env = dict(os.environ, BENCHSMITH_HOME=str(home), BENCHSMITH_VALIDATE_WORKERS=workers,
               HF_DATASETS_OFFLINE="1", HF_HUB_OFFLINE="1")
    if tree is not None:
        env["PYTHONPATH"] = str(tree) + os.pathsep + env.get("PYTHONPATH", "")
    out = subprocess.run([exe, "--quiet", "validate", name, "--registry", str(reg), "--json"], check=False, env=env,
                         capture_output=True, text=True)
    if out.returncode not in (0, 1):
        raise SystemExit(out.stderr[-3000:])
    return json.loads(out.stdout)["results"]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--raw", type=Path, default=REPO.parent / "shared" / "raw")
    ap.add_argument("--datasets", nargs="+", default=["comve", "xcopa", "mucow", "cognition"])
    ap.add_argument("--before", help="git revision whose validate must give the same results")
    args = ap.parse_args()
    exe = str(Path(sys.executable).parent / "benchsmith")
    work = Path(tempfile.mkdtemp(prefix="validate-identical-"))
    bad = 0
    try:
        before = None
        if args.before:
            sys.path.insert(0, str(Path(__file__).resolve().parent))
            from validate_real import tree_of

            before = tree_of(args.before, work / "before")
        for name in args.datasets:
            reg, built = work / name / "reg", work / name / "home0"
            built.mkdir(parents=True)  # a build may leave the home untouched (nothing to cache)
            cmd = [exe, "--quiet", "build", name, "--sources", str(args.raw.resolve()),
                   "--registry", str(reg)]
            env = dict(os.environ, BENCHSMITH_HOME=str(built), HF_DATASETS_OFFLINE="1", HF_HUB_OFFLINE="1")
            subprocess.run(cmd + (["--skip-missing"] if name == "cognition" else []), env=env, check=True,
                           stdout=subprocess.DEVNULL)
            runs = {}
            for label, workers in (("worker", "1"), ("alone", "0")):
                home = work / name / label
                shutil.copytree(built, home)
                runs[label] = validate(exe, name, reg, home, workers)
            runs["warm"] = validate(exe, name, reg, work / name / "worker", "1")
            if before is not None:
                shutil.copytree(built, work / name / "before")
                runs["before"] = validate(exe, name, reg, work / name / "before", "1", before)
            base = runs["alone"]
            for label in [k for k in runs if k != "alone"]:
                got = runs[label]
                differ = [i for i, (a, b) in enumerate(zip(base, got)) if a != b] + (
                    ["count"] if len(base) != len(got) else [])
                bad += bool(differ)
                print(f"{name}: {label} vs alone: {len(got)} / {len(base)} results, {len(differ)} differ"
                      + (f" (first: {base[differ[0]]['check'] if differ[0] != 'count' else 'count'})"
                         if differ else ""), flush=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
