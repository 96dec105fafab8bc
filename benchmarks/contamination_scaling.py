"""How fast, how linear and how lean is `benchsmith contamination`?

Scans synthetic corpora against one real release (default: XCOPA built from
``$BENCHSMITH_RAW`` into ``--workdir``; ``--release DIR`` for another). A corpus line is
5-20 words drawn half from the release's own vocabulary, half from made-up words, so
many windows are made of known words and reach the hash search (the costly case), plus
one planted item per 100,000 lines. Each scan runs in a *fresh subprocess*
(``scan.source_parts`` + ``build_index`` + ``run``, as the command does); its wall time,
CPU seconds (its worker processes included) and peak RSS (``os.wait4``; the largest of the
process and its waited-for workers) are read by the parent. The child also reports its
scan time alone (past imports and the index).

Sides, interleaved in ``--repeat`` rounds over the sizes (every side sees the same spread of
load on a shared machine): ``one`` (one process), ``local`` (the default: one process per
core), ``dask1`` and ``dask2`` (``--scheduler`` of a ``distributed`` LocalCluster of 1 or 2
single-threaded worker processes, started once by this script before the rounds and closed
after them). Every child runs in this script's environment as it was before any cluster started:
a Dask nanny writes its ``pre-spawn-environ`` (``MALLOC_TRIM_THRESHOLD_=65536``, which disables
glibc's adaptive heap and makes every large numpy temporary a fresh mmap, +20-40 % CPU on this
scan) into the environment of the process that starts it, which would otherwise leak into the
``one`` and ``local`` sides. The cluster's workers run as docs/commands.md recommends for a scan:
with glibc's default allocator (that setting unset), without the worker's statistical profiler
(it samples every thread's stack every 10 ms), and with the event loop's health check and system
monitor at 1 s and 10 s (20 ms and 500 ms by default: each wake-up takes the interpreter lock from
the scan); ``--dask-default-env`` keeps Dask's defaults instead. Figures of merit: MB and lines
per CPU second (``one``'s scan), 10x lines at most 11x time (``local``), peak memory flat in the
corpus size, ``dask2`` at least 1.7x ``dask1``'s throughput, ``dask1`` within 1.1x of ``one``
(scan wall time; the scan's CPU seconds include the workers'). A ratio of two sides is the median over rounds of the ratio within
a round (the sides of a round run back to back, so a shared machine's slow minutes cancel out of
it); rates are from each side's fastest round. Prints one JSON object.

    python benchmarks/contamination_scaling.py [--sizes 100000 1000000] [--repeat 1] [--sides one local dask1 dask2]
        [--release DIR] [--workdir DIR] [--dask-default-env]
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
from typing import Any

HERE = Path(__file__).resolve()


def child(release: str, corpus: str, workers: int, scheduler: str | None) -> None:
    from benchsmith.release import Release
    from benchsmith.validation.contamination import scan

    start = time.perf_counter()
    r = Release(release)
    parts, _ = scan.source_parts([corpus])
    index = scan.build_index(r)
    w0 = _worker_cpu(scheduler)
    c0, t0 = _cpu(), time.perf_counter()
    counts, _, lines, _, ran = scan.run(index, parts, workers=workers, scheduler=scheduler)
    c1, t1 = _cpu(), time.perf_counter()
    print(json.dumps({"lines": lines, "scan_s": t1 - t0, "scan_cpu_s": c1 - c0 + _worker_cpu(scheduler) - w0,
                      "setup_s": t0 - start, "items_found": len(counts), "ran": ran}))


def _worker_cpu(scheduler: str | None) -> float:
    """CPU seconds of a cluster's workers so far (0 without one)."""
    if not scheduler:
        return 0.0
    from dask.distributed import Client

    with Client(scheduler, timeout="30s") as client:
        return sum(client.run(_cpu).values())


def _cpu() -> float:
    """CPU seconds of this process and its reaped workers (a local pool is reaped inside run())."""
    import resource

    return sum(r.ru_utime + r.ru_stime for r in (resource.getrusage(resource.RUSAGE_SELF),
                                                 resource.getrusage(resource.RUSAGE_CHILDREN)))


def make_corpus(path: Path, n: int, release: str) -> None:
    from benchsmith.release import Release
    from benchsmith.validation.contamination import scan

    index = scan.build_index(Release(release))
    rng = random.Random(n)
    known = sorted(index.vocab.to_pylist())
    words = [rng.choice(known) for _ in range(4000)] + [f"zq{i}x" for i in range(4000)]
    with open(path, "w", encoding="utf-8") as f:
        for i in range(n):
            if i % 100_000 == 50_000:  # one planted item value per 100,000 lines
                v = rng.randrange(len(index.values))
                f.write(f"planted: {index.words(v, 0, len(index.value_tokens(v)))}\n")
            else:
                f.write(" ".join(rng.choice(words) for _ in range(rng.randint(5, 20))) + ".\n")


def run_child(args: list[str], env: dict[str, str]) -> dict:
    start = time.perf_counter()
    proc = subprocess.Popen([sys.executable, str(HERE), "--child", *args], stdout=subprocess.PIPE,
                            cwd=tempfile.gettempdir(), env=env)
    out = proc.stdout.read().decode() if proc.stdout else ""
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    if status != 0:
        raise SystemExit(f"child {args} failed: {status}")
    got = json.loads(out.strip().splitlines()[-1])
    return {**got, "wall_s": wall, "cpu_s": usage.ru_utime + usage.ru_stime, "peak_rss_mb": usage.ru_maxrss / 1024}


def start_cluster(workers: int, default_env: bool) -> Any:
    """A ``distributed`` LocalCluster of single-threaded worker processes on 127.0.0.1, configured
    as docs/commands.md recommends unless ``default_env`` (see the module docstring)."""
    import logging

    import dask
    from dask.distributed import LocalCluster

    logging.getLogger("distributed").setLevel(logging.ERROR)
    recommended = {"distributed.nanny.pre-spawn-environ.MALLOC_TRIM_THRESHOLD_": None,
                   "distributed.worker.profile.enabled": False,
                   "distributed.admin.tick.interval": "1s", "distributed.admin.system-monitor.interval": "10s"}
    with dask.config.set({} if default_env else recommended):
        return LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, host="127.0.0.1",
                            dashboard_address=":0")


def ensure_release(workdir: Path) -> str:
    reg = workdir / "registry"
    path = reg / "xcopa" / "1.1.0"  # a fixed version, so that figures compare across releases of benchsmith
    if not (path / "release.json").is_file():
        raw = os.environ.get("BENCHSMITH_RAW", str(HERE.parent.parent.parent / "shared" / "raw"))
        subprocess.run([sys.executable, "-m", "benchsmith.console", "-q", "build", "xcopa", "--version", "1.1.0",
                        "--sources", raw, "--registry", str(reg)], check=True, stdout=subprocess.DEVNULL,
                       env={**os.environ, "BENCHSMITH_HOME": str(workdir)})
    return str(path)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--child", nargs="*")
    ap.add_argument("--sizes", type=int, nargs="+", default=[100_000, 1_000_000])
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--release")
    ap.add_argument("--workdir", type=Path)
    ap.add_argument("--sides", nargs="+", default=["one", "local", "dask1", "dask2"])
    ap.add_argument("--dask-default-env", action="store_true",
                    help="workers with Dask's defaults (MALLOC_TRIM_THRESHOLD_=65536, the profiler on, 20 ms ticks)")
    a = ap.parse_args()
    if a.child is not None:
        release, corpus, workers, scheduler = a.child
        child(release, corpus, int(workers), scheduler if scheduler != "-" else None)
        return
    workdir = a.workdir or Path(tempfile.mkdtemp(prefix="contam-bench-"))
    workdir.mkdir(parents=True, exist_ok=True)
    release = a.release or ensure_release(workdir)
    corpora = {}
    for n in a.sizes:
        corpora[n] = workdir / f"corpus-{n}.txt"
        if not corpora[n].is_file():
            make_corpus(corpora[n], n, release)
    cores = os.cpu_count() or 1
    env = dict(os.environ)  # before a nanny writes its pre-spawn environment into this process's
    clusters = {side: start_cluster(int(side.removeprefix("dask")), a.dask_default_env)
                for side in a.sides if side.startswith("dask")}
    runs: dict[str, dict[int, list[dict]]] = {s: {n: [] for n in a.sizes} for s in a.sides}
    try:
        for _ in range(a.repeat):
            for n in a.sizes:
                for side in a.sides:
                    workers, sched = (("1", clusters[side].scheduler_address) if side in clusters
                                      else {"one": ("1", "-"), "local": (str(cores), "-")}[side])
                    runs[side][n].append(run_child([release, str(corpora[n]), workers, sched], env))
    finally:
        for cluster in clusters.values():
            cluster.close()

    def summary(rs: list[dict]) -> dict:
        return {"wall_min_s": round(min(r["wall_s"] for r in rs), 2),
                "wall_median_s": round(statistics.median(r["wall_s"] for r in rs), 2),
                "scan_min_s": round(min(r["scan_s"] for r in rs), 2),
                "scan_median_s": round(statistics.median(r["scan_s"] for r in rs), 2),
                "scan_rounds_s": [round(r["scan_s"], 2) for r in rs],
                "scan_cpu_min_s": round(min(r["scan_cpu_s"] for r in rs), 2),
                "cpu_min_s": round(min(r["cpu_s"] for r in rs), 2),
                "peak_rss_mb": round(max(r["peak_rss_mb"] for r in rs)),
                "items_found": rs[0]["items_found"], "ran": rs[0]["ran"]}

    out: dict = {"release": release, "cores": cores, "sizes": a.sizes, "dask_default_env": a.dask_default_env,
                 "sides": {s: {n: summary(rs) for n, rs in v.items()} for s, v in runs.items()}}
    small, big = min(a.sizes), max(a.sizes)
    if "one" in a.sides:
        one = out["sides"]["one"]
        # per core = per CPU second of the one-process scan: on a loaded machine wall time is shared
        out["lines_per_second_per_core"] = {n: round(n / one[n]["scan_cpu_min_s"]) for n in a.sizes}
        out["lines_per_wall_second_one_process"] = {n: round(n / one[n]["scan_min_s"]) for n in a.sizes}
        out["lines_per_cpu_second_whole_command"] = {n: round(n / one[n]["cpu_min_s"]) for n in a.sizes}
    if "local" in a.sides and big != small:
        loc = out["sides"]["local"]
        out["time_ratio_big_over_small"] = {"wall": round(loc[big]["wall_min_s"] / loc[small]["wall_min_s"], 2),
                                            "scan": round(loc[big]["scan_min_s"] / loc[small]["scan_min_s"], 2),
                                            "scan_cpu": round(loc[big]["scan_cpu_min_s"] / loc[small]["scan_cpu_min_s"], 2),
                                            "lines": big / small}
    if "one" in a.sides and big != small:
        out["peak_rss_ratio_big_over_small_one_process"] = round(
            out["sides"]["one"][big]["peak_rss_mb"] / out["sides"]["one"][small]["peak_rss_mb"], 2)
    def paired(a: str, b: str, n: int, key: str = "scan_s") -> float:
        """The median over rounds of side a's ``key`` over side b's in the same round."""
        return round(statistics.median(x[key] / y[key] for x, y in zip(runs[a][n], runs[b][n])), 2)

    if "dask1" in a.sides and "dask2" in a.sides:
        out["dask_2_workers_speedup"] = {n: paired("dask1", "dask2", n) for n in a.sizes}
    if "dask1" in a.sides and "one" in a.sides:
        out["dask_1_worker_over_one_process"] = {n: paired("dask1", "one", n) for n in a.sizes}
        out["dask_1_worker_over_one_process_cpu"] = {n: paired("dask1", "one", n, "scan_cpu_s") for n in a.sizes}
    if "dask2" in a.sides and "one" in a.sides:
        out["dask_2_workers_over_one_process_cpu"] = {n: paired("dask2", "one", n, "scan_cpu_s") for n in a.sizes}
    if "local" in a.sides and "one" in a.sides:
        out["local_speedup"] = {n: paired("one", "local", n) for n in a.sizes}
    out["mb"] = {n: round(corpora[n].stat().st_size / 1e6, 1) for n in a.sizes}
    if "one" in a.sides:
        out["mb_per_cpu_second_one_process"] = {n: round(out["mb"][n] / out["sides"]["one"][n]["scan_cpu_min_s"], 1)
                                                for n in a.sizes}
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
