"""Is `benchsmith evaluate xcopa` flat in memory in the size of the predictions file (issue 29)?

Issue 29's probe: a 10M-line predictions file whose line 5,501 is bad. Lines 1-5,500 predict
every test item of the 11 XCOPA languages (500 each, the gold labels); line 5,501 and every
line after it are

* ``repeated``: the first lines again (line 5,501 predicts an item a second time), or
* ``extra``: ids the split lacks (``idx`` 500, 501, ...),

so the scorer must stop at line 5,501 with a PredictionError. Each (kind, size) runs
``benchsmith --quiet evaluate xcopa FILE --release REL --json`` in a fresh subprocess
(``--repeat`` times, sizes interleaved); its peak RSS is read with ``os.wait4``
(``ru_maxrss`` of that child alone). Before the streaming readers: 2.05 GB / 7.7 s
(repeated) and 3.9 GB / 48 s (extra ids) at 10M lines (issue 29). Prints one JSON object.

The release is built from ``$BENCHSMITH_RAW`` (default ``../shared/raw``) into a temporary
registry unless ``--release DIR`` names one.

    python benchmarks/evaluate_memory.py [--lines 1000000 10000000] [--repeat 1] [--release DIR]
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

LANGS = ["et", "ht", "id", "it", "qu", "sw", "ta", "th", "tr", "vi", "zh"]
BAD_LINE = 5_501


def build_release(registry: Path) -> Path:
    raw = os.environ.get("BENCHSMITH_RAW", str(Path(__file__).resolve().parents[1] / ".." / "shared" / "raw"))
    configs = [a for lang in LANGS for a in ("--config", lang)]
    subprocess.run([sys.executable, "-m", "benchsmith.cli", "--quiet", "build", "xcopa", "--sources", raw,
                    "--registry", str(registry), *configs], check=True, stdout=subprocess.DEVNULL)
    return next(registry.glob("xcopa/*"))


def write_file(path: Path, release: Path, kind: str, n_lines: int) -> None:
    import pyarrow.parquet as pq

    good = []
    for lang in LANGS:
        table = pq.read_table(sorted((release / "data" / lang).glob("test-*.parquet")), columns=["idx", "label"])
        good += [json.dumps({"lang": lang, "idx": i, "label": y}) + "\n"
                 for i, y in zip(table.column("idx").to_pylist(), table.column("label").to_pylist())]
    assert len(good) == BAD_LINE - 1, len(good)
    with path.open("w", encoding="utf-8") as f:
        f.writelines(good)
        left, k = n_lines - len(good), 0
        while left > 0:
            if kind == "repeated":
                block = good[: min(left, len(good))]
            else:  # ids the split lacks, 5,500 a block
                block = [json.dumps({"lang": LANGS[j % 11], "idx": 500 + k + j // 11, "label": 0}) + "\n"
                         for j in range(min(left, 5_500))]
                k += 500
            f.writelines(block)
            left -= len(block)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--lines", type=int, nargs="+", default=[1_000_000, 10_000_000])
    ap.add_argument("--kinds", nargs="+", default=["repeated", "extra"])
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--release", type=Path)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-evaluate-") as tmp:
        tmp = Path(tmp)
        release = args.release or build_release(tmp / "registry")
        results: dict = {}
        for kind in args.kinds:
            for n in args.lines:
                path = tmp / f"{kind}-{n}.jsonl"
                write_file(path, release, kind, n)
                runs = []
                for _ in range(args.repeat):
                    before = os.times()
                    r = measure(path, release)
                    after = os.times()
                    r["cpu_s"] = round(after.children_user - before.children_user
                                       + after.children_system - before.children_system, 2)
                    runs.append(r)
                results[f"{kind}/{n}"] = {
                    "file_mb": round(path.stat().st_size / 1e6, 1),
                    "exit": runs[0]["exit"], "error": runs[0]["error"],
                    "peak_rss_mb": max(r["peak_rss_mb"] for r in runs),
                    "wall_s_min": min(r["wall_s"] for r in runs),
                    "wall_s_median": statistics.median(r["wall_s"] for r in runs),
                    "cpu_s_min": min(r["cpu_s"] for r in runs),
                }
                path.unlink()
        print(json.dumps({"bad_line": BAD_LINE, "release": str(release), "results": results}, indent=1))


def measure(path: Path, release: Path) -> dict:
    """One child: exit status, its own peak RSS (os.wait4), wall time."""
    start = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "benchsmith.cli", "--quiet", "evaluate", "xcopa", str(path),
                             "--release", str(release), "--json"], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    err = proc.stderr.read() if proc.stderr else b""
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    return {"exit": os.waitstatus_to_exitcode(status), "wall_s": round(wall, 2),
            "peak_rss_mb": round(usage.ru_maxrss / 1024, 1), "error": err.decode().strip()[-240:]}


if __name__ == "__main__":
    main()
