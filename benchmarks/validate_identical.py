"""`benchsmith validate --json` with the worker process and without: the same results, one by one.

For each dataset: build it once into its own temporary registry, then validate it cold (the
caches as the build left them) with ``BENCHSMITH_VALIDATE_WORKERS=1`` and with ``=0``, and warm
(again, same home) with the worker; compares every result (status, summary, metrics, details,
figures) of the three runs. Prints one line per dataset and exits 1 when any result differs.

    python benchmarks/validate_identical.py [--datasets comve xcopa mucow cognition] [--raw ../shared/raw]
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


def validate(exe: str, name: str, reg: Path, home: Path, workers: str) -> list[dict]:
    env = dict(os.environ, BENCHSMITH_HOME=str(home), BENCHSMITH_VALIDATE_WORKERS=workers,
               HF_DATASETS_OFFLINE="1", HF_HUB_OFFLINE="1")
    out = subprocess.run([exe, "--quiet", "validate", name, "--registry", str(reg), "--json"], env=env,
                         capture_output=True, text=True)
    if out.returncode not in (0, 1):
        raise SystemExit(out.stderr[-3000:])
    return json.loads(out.stdout)["results"]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--raw", type=Path, default=REPO.parent / "shared" / "raw")
    ap.add_argument("--datasets", nargs="+", default=["comve", "xcopa", "mucow", "cognition"])
    args = ap.parse_args()
    exe = str(Path(sys.executable).parent / "benchsmith")
    work = Path(tempfile.mkdtemp(prefix="validate-identical-"))
    bad = 0
    try:
        for name in args.datasets:
            reg, built = work / name / "reg", work / name / "home0"
            cmd = [exe, "--quiet", "build", name, "--sources", str(args.raw.resolve()), "--registry", str(reg)]
            env = dict(os.environ, BENCHSMITH_HOME=str(built), HF_DATASETS_OFFLINE="1", HF_HUB_OFFLINE="1")
            subprocess.run(cmd + (["--skip-missing"] if name == "cognition" else []), env=env, check=True,
                           stdout=subprocess.DEVNULL)
            runs = {}
            for label, workers in (("worker", "1"), ("alone", "0")):
                home = work / name / label
                shutil.copytree(built, home)
                runs[label] = validate(exe, name, reg, home, workers)
            runs["warm"] = validate(exe, name, reg, work / name / "worker", "1")
            base = runs["alone"]
            for label in ("worker", "warm"):
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
