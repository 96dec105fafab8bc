"""sha256 of every file of each real dataset's release, to hold a speed-up to byte-identical output.

Builds each dataset (``benchsmith --quiet build NAME``) into a fresh registry from the raw folder
and prints one ``sha256  dataset/relative/path`` line per release file, sorted, so two trees'
outputs compare with ``diff``:

    python benchmarks/release_sha256.py [--raw ../shared/raw] [--datasets ...] > after.txt
    diff before.txt after.txt    # empty: every release byte the same
"""

from __future__ import annotations

import argparse
import hashlib
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
SKIP_MISSING = {"cognition"}  # ../shared/raw has no CoGnition train files


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--raw", type=Path, default=REPO.parent / "shared" / "raw")
    ap.add_argument("--datasets", nargs="+", default=["comve", "xcopa", "mucow", "cognition"])
    args = ap.parse_args()
    exe = str(Path(sys.executable).parent / "benchsmith")
    with tempfile.TemporaryDirectory(prefix="release-sha256-") as tmp:
        for name in args.datasets:
            reg = Path(tmp) / name
            subprocess.run([exe, "--quiet", "build", name, "--sources", str(args.raw.resolve()),
                            "--registry", str(reg), *(["--skip-missing"] if name in SKIP_MISSING else [])],
                           check=True, stdout=subprocess.DEVNULL)
            files = sorted(p for p in reg.rglob("*") if p.is_file())
            for p in files:
                digest = hashlib.sha256(p.read_bytes()).hexdigest()
                print(f"{digest}  {name}/{p.relative_to(reg).as_posix()}", flush=True)


if __name__ == "__main__":
    main()
