"""What does `benchsmith harvest mucow` cost on top of eflomal? Ratios at 1x and 10x, local and --scheduler.

On Tatoeba deu-eng (``$BENCHSMITH_RAW/opus/tatoeba/deu-eng``, 17,565 pairs) and the same corpus
concatenated 10 times (175,650 pairs), with OMW-Wiktionary, side by side in one run:

* **eflomal**: eflomal's own time on the same corpus, tokenised beforehand exactly as the harvest
  tokenises it (``benchsmith.nlp.tokenize``, not timed): ``eflomal.Aligner().align(src, tgt,
  links_filename_fwd=..., links_filename_rev=...)`` with eflomal's defaults, in a fresh process;
  also, where the checkout has it, the seeded call the harvest makes (``EflomalAligner(0)``: same
  CPU work, but each direction's samplers in one thread, which costs wall time only where other
  processes compete for the cores);
* **harvest (local)**: ``benchsmith -q harvest mucow ... --json`` in a fresh process (its default
  local Dask cluster);
* **harvest (--scheduler)**: the same against a real ``distributed`` cluster started here: ``dask
  scheduler`` and two ``dask worker --nworkers 1 --nthreads 1`` processes on 127.0.0.1, stopped at
  the end.

An untimed warm-up harvest runs first (OS file cache; the harvest's caches: the POS probe's answer,
the seeded copy of eflomal's binary). Each is timed as wall clock and as CPU seconds (the process and every descendant it waited for;
for the scheduler path the CPU of the workers is added), with the peak RSS summed over the
process tree (sampled every 0.1 s with psutil). The figures of merit:

* ``overhead = (harvest wall - eflomal wall) / eflomal wall``: the target is <= 0.5 at 1x and 10x;
* the same with CPU seconds (on a shared, loaded machine the CPU ratio is the steadier one);
* ``scheduler / local`` wall ratio: with two workers it should not be slower than local;
* peak RSS at 10x / 1x.

Nothing here is a test: timings never go into tests. Prints one JSON object (and a table on stderr).

    python benchmarks/harvest_overhead.py [--raw DIR] [--scales 1,10] [--no-scheduler] [--repeat 1]
        [--workers 1,4,16] [--out FILE]

``--workers 1,4,16`` sweeps the worker count (issue 26, on a many-core machine): for each N, the
local harvest runs with ``--workers N`` and the ``--scheduler`` harvest against a cluster of N
single-threaded workers started for it; rows are ``harvest_local_wN`` / ``harvest_scheduler_wN``
with the same figures, plus ``busy_wN`` (CPU seconds of the harvest over N x wall: how busy the N
workers were on average). Without it, the local harvest uses its default (one worker per core) and
the cluster two workers, as before. ``--out`` rewrites FILE with the JSON after every measurement,
so a run stopped at a time limit keeps what it measured.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import psutil

PAIR = ("deu", "eng")
STEM = "tatoeba-test-v2021-08-07"

EFLOMAL_SEEDED = r"""
import sys
from benchsmith.builders.mucow.aligner import EflomalAligner
src, tgt = sys.argv[1:3]
with open(src, encoding="utf-8") as s, open(tgt, encoding="utf-8") as t:
    EflomalAligner(0)(s.read().splitlines(), t.read().splitlines(), 0)
"""

EFLOMAL_ONLY = r"""
import sys, eflomal
src, tgt, out = sys.argv[1:4]
with open(src, encoding="utf-8") as s, open(tgt, encoding="utf-8") as t:
    eflomal.Aligner().align(s.read().splitlines(), t.read().splitlines(),
                            links_filename_fwd=out + ".fwd", links_filename_rev=out + ".rev", quiet=True)
"""


class Meter:
    """Wall, CPU (own + waited-for descendants, + extra processes) and peak tree RSS of one command."""

    def __init__(self, extra: list[psutil.Process] | None = None) -> None:
        self.extra = extra or []

    @staticmethod
    def _cpu(procs: list[psutil.Process]) -> float:
        """CPU seconds of ``procs`` and all their descendants: each process's own time plus that of the
        children it has reaped (a live child counts once, itself; a reaped one once, in its parent)."""
        total = 0.0
        tree = []
        for p in procs:
            try:
                tree += [p, *p.children(recursive=True)]
            except psutil.Error:
                pass
        for p in tree:
            try:
                t = p.cpu_times()
                total += t.user + t.system + t.children_user + t.children_system
            except psutil.Error:
                pass
        return total

    def run(self, argv: list[str], env: dict | None = None) -> dict:
        extra0 = self._cpu(self.extra)
        before = os.times()
        t0 = time.perf_counter()
        proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, text=True)
        peak = [0]
        done = threading.Event()

        def sample() -> None:
            try:
                root = psutil.Process(proc.pid)
            except psutil.Error:
                return
            while not done.is_set():
                rss = 0
                try:
                    for p in [root, *root.children(recursive=True), *self.extra,
                              *[c for e in self.extra for c in e.children(recursive=True)]]:
                        try:
                            rss += p.memory_info().rss
                        except psutil.Error:
                            pass
                except psutil.Error:
                    pass
                peak[0] = max(peak[0], rss)
                done.wait(0.1)

        sampler = threading.Thread(target=sample, daemon=True)
        sampler.start()
        out, err = proc.communicate()
        wall = time.perf_counter() - t0
        done.set()
        sampler.join()
        after = os.times()
        if proc.returncode != 0:
            raise SystemExit(f"{' '.join(argv[:4])}... exited {proc.returncode}:\n{err[-3000:]}")
        cpu = (after.children_user - before.children_user) + (after.children_system - before.children_system)
        cpu += self._cpu(self.extra) - extra0
        return {"wall_s": round(wall, 2), "cpu_s": round(cpu, 2), "peak_rss_mb": round(peak[0] / 2**20, 1),
                "stdout": out}


def corpus(raw: Path, scale: int, root: Path) -> Path:
    """A folder with the Tatoeba pair, concatenated ``scale`` times."""
    folder = root / f"tatoeba-x{scale}"
    folder.mkdir(parents=True, exist_ok=True)
    for lang in PAIR:
        text = (raw / "opus" / "tatoeba" / "deu-eng" / f"{STEM}.{lang}").read_text(encoding="utf-8")
        if not text.endswith("\n"):
            text += "\n"
        (folder / f"{STEM}.{lang}").write_text(text * scale, encoding="utf-8")
    return folder


def tokenised(folder: Path, out_dir: Path) -> tuple[Path, Path]:
    """The corpus tokenised as the harvest tokenises it (space-joined tokens), not timed. Written to
    ``out_dir``, not beside the corpus: the harvest would read it as a second corpus."""
    from benchsmith.nlp.tokenize import get_tokenizer

    out_dir.mkdir(parents=True, exist_ok=True)
    out = []
    for lang in PAIR:
        tok = get_tokenizer(lang)
        path = out_dir / f"tok.{lang}"
        lines = (folder / f"{STEM}.{lang}").read_text(encoding="utf-8").splitlines()
        cache: dict[str, str] = {}  # the copies repeat: tokenise each distinct line once (untimed anyway)
        with path.open("w", encoding="utf-8") as f:
            for line in lines:
                if line not in cache:
                    cache[line] = " ".join(tok(line))
                f.write(cache[line] + "\n")
        out.append(path)
    return out[0], out[1]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Cluster:
    """``dask scheduler`` + ``workers`` single-threaded ``dask worker`` processes on 127.0.0.1."""

    def __init__(self, workdir: Path, workers: int = 2) -> None:
        workdir.mkdir(parents=True, exist_ok=True)
        self.port = free_port()
        self.address = f"tcp://127.0.0.1:{self.port}"
        dask = [sys.executable, "-m", "distributed.cli.dask_scheduler"]
        log = (workdir / "dask.log").open("w")
        self.procs = [subprocess.Popen([*dask, "--host", "127.0.0.1", "--port", str(self.port),
                                        "--dashboard-address", ":0", "--no-show"], stdout=log, stderr=log)]
        self._wait_port()
        for k in range(workers):
            self.procs.append(subprocess.Popen(
                [sys.executable, "-m", "distributed.cli.dask_worker", self.address, "--nworkers", "1",
                 "--nthreads", "1", "--host", "127.0.0.1", "--dashboard-address", ":0",
                 "--local-directory", str(workdir / f"worker-{k}")], stdout=log, stderr=log))
        self._wait_workers(workers)

    def _wait_port(self, timeout: float = 60) -> None:
        end = time.time() + timeout
        while time.time() < end:
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
                return
            except OSError:
                time.sleep(0.2)
        raise SystemExit("dask scheduler did not start")

    def _wait_workers(self, n: int) -> None:
        from dask.distributed import Client

        with Client(self.address, timeout="60s") as c:
            c.wait_for_workers(n, timeout=120)

    @property
    def processes(self) -> list[psutil.Process]:
        return [psutil.Process(p.pid) for p in self.procs[1:]]

    def stop(self) -> None:
        for p in reversed(self.procs):
            p.terminate()
        for p in self.procs:
            try:
                p.wait(timeout=20)
            except subprocess.TimeoutExpired:
                p.kill()


def harvest_argv(folder: Path, raw: Path, registry: Path, scheduler: str | None,
                 workers: int | None = None) -> list[str]:
    exe = shutil.which("benchsmith", path=str(Path(sys.executable).parent)) or "benchsmith"
    argv = [exe, "-q", "harvest", "mucow", "--parallel", str(folder), "--inventory",
            str(raw / "sense-inventory" / "omw-wikt"), "--src", PAIR[0], "--tgt", PAIR[1],
            "--registry", str(registry), "--overwrite", "--json"]
    argv += ["--workers", str(workers)] if workers and not scheduler else []
    return argv + (["--scheduler", scheduler] if scheduler else [])


def has_seeded_aligner() -> bool:
    """Whether this checkout seeds eflomal (benchsmith.builders.mucow.aligner); earlier ones did not."""
    import importlib.util

    return importlib.util.find_spec("benchsmith.builders.mucow.aligner") is not None


def best(runs: list[dict]) -> dict:
    return min(runs, key=lambda r: r["wall_s"])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--raw", type=Path, default=Path(os.environ.get("BENCHSMITH_RAW", "../shared/raw")))
    ap.add_argument("--scales", default="1,10")
    ap.add_argument("--repeat", type=int, default=1, help="runs per measurement (the fastest is kept)")
    ap.add_argument("--no-scheduler", action="store_true", help="skip the --scheduler runs")
    ap.add_argument("--workers", default="", help="worker counts to sweep, e.g. 1,4,16 (default: no sweep)")
    ap.add_argument("--out", type=Path, help="rewrite this file with the JSON after every measurement")
    args = ap.parse_args()
    sweep = [int(w) for w in args.workers.split(",") if w.strip()]
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # `kill` stops the cluster this started, too
    raw = args.raw.resolve()
    env = {**os.environ, "BENCHSMITH_HOME": tempfile.mkdtemp(prefix="bs-home-")}
    out: dict = {"machine": {"cpus": os.cpu_count(), "load_avg_start": os.getloadavg()}, "scales": {}}
    def save() -> None:
        if args.out:
            args.out.write_text(json.dumps(out, indent=1))

    with tempfile.TemporaryDirectory(prefix="harvest-overhead-") as tmp:
        root = Path(tmp)
        # (label, local --workers, cluster size): no sweep keeps the original two rows
        runs = [(f"_w{w}", w, w) for w in sweep] or [("", None, 2)]
        cluster: Cluster | None = None
        warm = False
        try:
            for scale in [int(s) for s in args.scales.split(",")]:
                folder = corpus(raw, scale, root)
                src, tgt = tokenised(folder, root / f"tokenised-x{scale}")
                meter = Meter()
                row: dict = {"pairs": 17565 * scale}
                out["scales"][f"x{scale}"] = row
                row["eflomal"] = best([meter.run([sys.executable, "-c", EFLOMAL_ONLY, str(src), str(tgt),
                                                  str(root / f"links-x{scale}")], env) for _ in range(args.repeat)])
                row["eflomal"].pop("stdout")
                if has_seeded_aligner():
                    row["eflomal_seeded"] = best([meter.run([sys.executable, "-c", EFLOMAL_SEEDED, str(src), str(tgt)],
                                                            env) for _ in range(args.repeat)])
                    row["eflomal_seeded"].pop("stdout")
                if not warm:  # untimed: fills the OS file cache and the harvest's own caches (POS probe, tools)
                    meter.run(harvest_argv(folder, raw, root / "reg-warm", None), env)
                    warm = True
                e = row["eflomal"]
                for label, local_workers, size in runs:
                    names = [f"harvest_local{label}"]
                    row[names[0]] = best([meter.run(harvest_argv(folder, raw, root / "reg", None, local_workers), env)
                                          for _ in range(args.repeat)])
                    if not args.no_scheduler:
                        # started for this measurement and stopped after it: idle workers of another size
                        # must not share the cores with the local runs
                        cluster = Cluster(root / f"cluster-x{scale}-{size}", size)
                        names.append(f"harvest_scheduler{label}")
                        row[names[1]] = best([
                            Meter(cluster.processes).run(harvest_argv(folder, raw, root / "reg-sched", cluster.address),
                                                         env) for _ in range(args.repeat)])
                        cluster.stop()
                        cluster = None
                    for name in names:
                        h = row[name]
                        stats = json.loads(h.pop("stdout"))["statistics"]
                        h["ambiguous_words"] = stats["ambiguous_words"]
                        h["items"] = [stats["scoring"]["items"], stats["translation"]["items"]]
                        h["overhead_wall"] = round((h["wall_s"] - e["wall_s"]) / e["wall_s"], 2)
                        h["overhead_cpu"] = round((h["cpu_s"] - e["cpu_s"]) / e["cpu_s"], 2)
                        if local_workers:
                            h["busy"] = round(h["cpu_s"] / (local_workers * h["wall_s"]), 2)
                    if len(names) == 2:
                        row[f"scheduler_over_local_wall{label}"] = round(row[names[1]]["wall_s"]
                                                                         / row[names[0]]["wall_s"], 2)
                    print(f"x{scale}{label}: {json.dumps({n: row[n] for n in names})}", file=sys.stderr)
                    save()
        finally:
            if cluster is not None:
                cluster.stop()
    scales = out["scales"]
    first = f"harvest_local{runs[0][0]}"
    if first in scales.get("x1", {}) and first in scales.get("x10", {}):
        out["peak_rss_x10_over_x1"] = round(scales["x10"][first]["peak_rss_mb"] / scales["x1"][first]["peak_rss_mb"], 2)
    out["machine"]["load_avg_end"] = os.getloadavg()
    shutil.rmtree(env["BENCHSMITH_HOME"], ignore_errors=True)
    save()
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
