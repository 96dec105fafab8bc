"""How close is `benchsmith build` to writing parquet with pyarrow, and is its memory flat?

For each ``--rows`` size, two fresh subprocesses stream the same synthetic rows
(``id`` + 2 text columns, generated one at a time, never held in a list):

* ``build``: through the real ``ReleaseWriter`` (encoding, id checks, fingerprinting,
  sharding, manifest, card, atomic rename);
* ``floor``: ``pa.RecordBatch.from_pylist`` of 65,536-row batches into one
  ``pq.ParquetWriter`` with the same parquet options.

Each child reports its own wall time and CPU time (``time.process_time``: every thread of
the child, steadier than wall time on a shared machine) (imports excluded, row generation included on
both sides; both sides convert one empty array before the clock starts, so that neither
pays inside it the pandas import pyarrow makes on its first conversion of Python objects:
before that, the floor paid it, ~0.4 s, and the build did not, as its child imported
``datasets`` and with it pandas) and its peak RSS is read with ``os.wait4`` (``ru_maxrss`` of that child
alone). Figures of merit: ``ratio`` = build / floor time (min of ``--repeat``; ``ratio_cpu`` in CPU
seconds), and
how the build's peak RSS grows with the rows against the floor's (flat: the same
growth as pyarrow's own). ``--tree DIR`` runs the build children against another
source tree (a before/after comparison; see ``benchmarks/validate_scaling.py``).
Prints one JSON object.

    python benchmarks/build_floor.py [--rows 1000000 5000000] [--repeat 3] [--tree DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve()
WORDS = ["the", "a", "cat", "dog", "sat", "on", "mat", "under", "tree", "river", "bank", "money", "water", "ran",
         "quickly", "slowly", "red", "blue"]
BATCH = 65_536


def stream_rows(n: int, seed: int = 0):
    rng = random.Random(seed)
    choices, randint = rng.choices, rng.randint
    for i in range(n):
        yield {"id": f"ex-{i:08d}", "premise": " ".join(choices(WORDS, k=randint(5, 15))),
               "hypothesis": " ".join(choices(WORDS, k=randint(3, 10)))}


def _warm_conversion() -> None:
    """pyarrow's first conversion of Python objects imports pandas: done here, off the clock."""
    import pyarrow as pa

    pa.array([], type=pa.null())


def child_build(n: int, out: Path) -> tuple[float, float]:
    from datasets import Features, Value

    from benchsmith import progress
    from benchsmith.builder import Builder, Config
    from benchsmith.release import ReleaseWriter
    from benchsmith.source import Sources

    progress.set_enabled(False)
    _warm_conversion()
    features = Features({"id": Value("string"), "premise": Value("string"), "hypothesis": Value("string")})

    class Synthetic(Builder):
        name = "synthetic"
        release_notes = {"1.0.0": "synthetic benchmark data"}  # noqa: RUF012 - as the Builder base declares it

        def configs(self):
            return [Config("default", "synthetic rows", features, splits=("train",))]

        def examples(self, config, split, sources):
            yield from stream_rows(n)

    t, c = time.perf_counter(), time.process_time()
    ReleaseWriter(Synthetic(), out, Sources({}), overwrite=True).write()
    return time.perf_counter() - t, time.process_time() - c


def child_floor(n: int, out: Path) -> tuple[float, float]:
    import itertools

    import pyarrow as pa
    import pyarrow.parquet as pq

    from benchsmith.release import PARQUET_OPTIONS

    _warm_conversion()
    schema = pa.schema([("id", pa.string()), ("premise", pa.string()), ("hypothesis", pa.string())])
    t, c = time.perf_counter(), time.process_time()
    rows = stream_rows(n)
    out.mkdir(parents=True, exist_ok=True)
    with pq.ParquetWriter(out / "floor.parquet", schema, **PARQUET_OPTIONS) as writer:
        while batch := list(itertools.islice(rows, BATCH)):
            writer.write_batch(pa.RecordBatch.from_pylist(batch, schema=schema), row_group_size=BATCH)
    return time.perf_counter() - t, time.process_time() - c


def run_child(args: list[str], tree: Path | None) -> tuple[float, float, float]:
    """(wall and CPU seconds the child measured, its peak RSS in MB)."""
    env = dict(os.environ)
    if tree is not None:
        env["PYTHONPATH"] = str(tree) + os.pathsep + env.get("PYTHONPATH", "")
    proc = subprocess.Popen([sys.executable, str(HERE), *args], stdout=subprocess.PIPE, env=env,
                            cwd=tempfile.gettempdir())
    out = proc.stdout.read().decode() if proc.stdout else ""
    _, status, usage = os.wait4(proc.pid, 0)
    if os.waitstatus_to_exitcode(status):
        raise SystemExit(f"child {args} failed")
    wall, cpu = map(float, out.strip().splitlines()[-1].split())
    return wall, cpu, usage.ru_maxrss / 1024


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, nargs="+", default=[1_000_000, 5_000_000])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--tree", type=Path, help="run the build children against this source tree")
    ap.add_argument("--child", choices=["build", "floor"], help=argparse.SUPPRESS)
    ap.add_argument("--n", type=int, help=argparse.SUPPRESS)
    ap.add_argument("--out", type=Path, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        fn = child_build if args.child == "build" else child_floor
        wall, cpu = fn(args.n, args.out)
        print(round(wall, 4), round(cpu, 4))
        return
    work = Path(tempfile.mkdtemp(prefix="build-floor-"))
    rows = {}
    try:
        for n in args.rows:
            got: dict[str, list[tuple[float, float, float]]] = {"build": [], "floor": []}
            for _ in range(args.repeat):  # side by side: build, floor, build, floor ...
                for kind in ("build", "floor"):
                    tree = args.tree.resolve() if args.tree and kind == "build" else None
                    got[kind].append(run_child(["--child", kind, "--n", str(n), "--out", str(work / kind)], tree))
            rows[n] = {
                **{f"{k}_s_min": round(min(t for t, _, _ in v), 3) for k, v in got.items()},
                **{f"{k}_s_median": round(statistics.median(t for t, _, _ in v), 3) for k, v in got.items()},
                **{f"{k}_cpu_s_min": round(min(c for _, c, _ in v), 3) for k, v in got.items()},
                **{f"{k}_peak_rss_mb": round(max(m for _, _, m in v), 1) for k, v in got.items()},
            }
            rows[n]["ratio"] = round(rows[n]["build_s_min"] / rows[n]["floor_s_min"], 2)
            rows[n]["ratio_cpu"] = round(rows[n]["build_cpu_s_min"] / rows[n]["floor_cpu_s_min"], 2)
    finally:
        import shutil

        shutil.rmtree(work, ignore_errors=True)
    sizes = sorted(rows)
    growth = {}
    if len(sizes) > 1:
        lo, hi = sizes[0], sizes[-1]
        growth = {k: round(rows[hi][f"{k}_peak_rss_mb"] - rows[lo][f"{k}_peak_rss_mb"], 1) for k in ("build", "floor")}
    print(json.dumps({"rows": rows, "peak_rss_growth_mb": growth, "tree": str(args.tree) if args.tree else None,
                      "target": "ratio <= 1.2; build RSS grows like the floor's"}, indent=1))


if __name__ == "__main__":
    main()
