"""Does `validate` scale linearly in time and stay bounded in memory?

Builds synthetic COPA-like multiple-choice releases (premise, two options, label;
train/validation/test = 80/10/10%, 0.1% of test planted as near duplicates of train)
of each ``--sizes`` row count, then runs ``validate`` on each (every generic check,
the cheap baselines, the JSON + HTML report) in a *fresh subprocess*, so that one
size's memory cannot leak into the next; the child's peak RSS is read with
``os.wait4`` (``ru_maxrss`` of that child alone). Building a release is not timed
(releases are cached under ``--workdir`` and reused).

Figures of merit, per size against the smallest: the time ratio (``10x rows ->
at most 11x time``) and the peak RSS (at most 2 GB at 1M rows). Each size runs
``--repeat`` times, in rounds over the sizes (so every size sees the same spread of
machine load); min and median are reported, and the CPU seconds of the child (every
thread), the steadier figure on a shared machine. ``--tree DIR`` runs the children
against another source tree laid out like this repository (for before/after
comparisons: a copy whose ``benchsmith/`` holds symlinks ``validation``,
``builders``, ``loaders``, ``cards`` to its sibling folders), side by side with
the current tree when ``--compare`` is given. Prints one JSON object.

    python benchmarks/validate_scaling.py [--sizes 50000 500000 1000000] [--repeat 1]
        [--baselines cheap] [--workdir DIR] [--tree DIR [--compare]]
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
REPO = HERE.parent.parent
WORDS = [f"{a}{b}" for a in "bcdfghklmnprstvz" for b in ("a", "e", "i", "o", "u", "an", "el", "or")]
SPLITS = ("train", "validation", "test")


def _row(i: int) -> dict:
    """Row ``i`` of every synthetic release (a pure function of ``i``: rows stream)."""
    rng = random.Random(i)

    def sentence() -> str:
        return " ".join(rng.choice(WORDS) for _ in range(rng.randint(6, 14)))

    return {"id": f"ex-{i}", "premise": sentence(), "choice1": sentence(), "choice2": sentence(),
            "label": rng.randint(0, 1)}


def split_ranges(n: int) -> dict[str, range]:
    n_train, n_val = int(n * 0.8), int(n * 0.1)
    return {"train": range(n_train), "validation": range(n_train, n_train + n_val),
            "test": range(n_train + n_val, n)}


def planted(n: int) -> int:
    """Test rows that repeat a train row's premise with one more word (0.1% of rows)."""
    return max(1, n // 1000)


def stream_rows(n: int, split: str):
    ranges = split_ranges(n)
    for k, i in enumerate(ranges[split]):
        row = _row(i)
        if split == "test" and k < planted(n):
            src = _row(ranges["train"][k])
            row = {**src, "id": row["id"], "premise": src["premise"] + " ok"}
        yield row


def build(root: Path, n: int) -> Path:
    """Write the synthetic release of ``n`` rows under ``root`` (once) and return its path."""
    import datasets

    from benchsmith import progress
    from benchsmith.builder import Builder, Config, Policy
    from benchsmith.release import ReleaseWriter
    from benchsmith.source import Sources

    progress.set_enabled(False)
    feats = datasets.Features(
        {"id": datasets.Value("string"), "premise": datasets.Value("string"), "choice1": datasets.Value("string"),
         "choice2": datasets.Value("string"), "label": datasets.ClassLabel(names=["1", "2"])}
    )

    class Synthetic(Builder):
        name = f"synthetic{n}"
        release_notes = {"1.0.0": "synthetic"}  # noqa: RUF012 - as the Builder base declares it

        def configs(self):
            return [Config("default", "synthetic", feats, splits=SPLITS, policy=Policy(
                task="multiple_choice", choices=("choice1", "choice2"), label="label", context=("premise",)))]

        def examples(self, config, split, sources):
            yield from stream_rows(n, split)

    return ReleaseWriter(Synthetic(), root, Sources({}), overwrite=True).write().path


def _cpu() -> float:
    """CPU seconds of this process, every thread (steadier than wall time on a loaded machine)."""
    import resource

    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def child_validate(path: Path, baselines: str) -> None:
    """In the child: validate one release, print per-check seconds and the near-duplicate count."""
    from benchsmith import progress
    from benchsmith.release import Release
    from benchsmith.validation import runner

    progress.set_enabled(False)
    per_check: dict[str, float] = {}
    per_check_cpu: dict[str, float] = {}
    original = runner.run_checks

    def timed_run_checks(release, checks):  # per-check seconds, same order and crash handling
        results = []
        for check in checks:
            t, c = time.perf_counter(), _cpu()
            results.extend(original(release, [check]))
            name = getattr(check, "name", type(check).__name__)
            per_check[name] = round(per_check.get(name, 0.0) + time.perf_counter() - t, 3)
            per_check_cpu[name] = round(per_check_cpu.get(name, 0.0) + _cpu() - c, 3)
        return results

    runner.run_checks = timed_run_checks
    t, c = time.perf_counter(), _cpu()
    v = runner.validate(Release(path), baselines=baselines, builder=None, previous=None)
    seconds, cpu = time.perf_counter() - t, _cpu() - c
    by = {r["check"]: r for r in v.report["results"]}
    print(json.dumps({
        "validate_s": round(seconds, 3),
        "validate_cpu_s": round(cpu, 3),
        "per_check_s": per_check,
        "per_check_cpu_s": per_check_cpu,
        "near_duplicate_pairs": by.get("near_duplicates", {}).get("metrics", {}).get("pairs"),
        "partial_input": {k: by.get("partial_input", {}).get("metrics", {}).get(k) for k in ("accuracy", "gain")},
        "summary": v.report["summary"],
    }))


def run_child(args: list[str], tree: Path | None) -> tuple[float, int, str]:
    """(wall seconds, peak RSS in bytes, stdout) of one fresh child process."""
    env = dict(os.environ)
    if tree is not None:
        env["PYTHONPATH"] = str(tree) + os.pathsep + env.get("PYTHONPATH", "")
    t = time.perf_counter()
    # cwd outside the repository, so that --tree's package wins over the checkout's
    proc = subprocess.Popen([sys.executable, str(HERE), *args], stdout=subprocess.PIPE, env=env, cwd=tempfile.gettempdir())
    out = proc.stdout.read().decode() if proc.stdout else ""
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode:
        raise SystemExit(f"child {args} failed with status {proc.returncode}")
    return wall, usage.ru_maxrss * 1024, out  # ru_maxrss is in KiB on Linux


def measure(sizes: list[int], releases: dict[int, Path], repeat: int, baselines: str, tree: Path | None) -> dict:
    walls: dict[int, list[float]] = {n: [] for n in sizes}
    rss: dict[int, list[int]] = {n: [] for n in sizes}
    inner: dict[int, list[dict]] = {n: [] for n in sizes}
    for _ in range(repeat):  # rounds over the sizes: every size sees the same spread of machine load
        for n in sizes:
            wall, peak, out = run_child(["--child-validate", str(releases[n]), "--baselines", baselines], tree)
            walls[n].append(wall)
            rss[n].append(peak)
            inner[n].append(json.loads(out.strip().splitlines()[-1]))
    rows = {}
    for n in sizes:
        runs = inner[n]
        best = min(range(repeat), key=lambda i: runs[i]["validate_s"])
        rows[n] = {
            "validate_s_min": min(r["validate_s"] for r in runs),
            "validate_s_median": round(statistics.median(r["validate_s"] for r in runs), 3),
            "validate_cpu_s_min": min(r["validate_cpu_s"] for r in runs),
            "wall_s_min": round(min(walls[n]), 3),
            "peak_rss_mb": round(max(rss[n]) / 2**20, 1),
            "per_check_s": runs[best]["per_check_s"],
            "per_check_cpu_s": runs[best]["per_check_cpu_s"],
            "near_duplicate_pairs": runs[best]["near_duplicate_pairs"],
            "planted_near_duplicates": planted(n),
            "partial_input": runs[best]["partial_input"],
            "summary": runs[best]["summary"],
        }
    base = sizes[0]
    for n in sizes[1:]:
        rows[n]["time_ratio_vs_smallest"] = round(rows[n]["validate_s_min"] / rows[base]["validate_s_min"], 2)
        rows[n]["cpu_ratio_vs_smallest"] = round(rows[n]["validate_cpu_s_min"] / rows[base]["validate_cpu_s_min"], 2)
        rows[n]["rows_ratio_vs_smallest"] = round(n / base, 2)
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[50_000, 500_000, 1_000_000])
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--baselines", default="cheap", choices=["none", "cheap"])
    ap.add_argument("--workdir", type=Path, default=Path(tempfile.gettempdir()) / "benchsmith-validate-scaling")
    ap.add_argument("--tree", type=Path, help="run the validate children against this source tree")
    ap.add_argument("--compare", action="store_true", help="with --tree: also run the current tree, side by side")
    ap.add_argument("--child-validate", type=Path, help=argparse.SUPPRESS)
    ap.add_argument("--child-build", type=int, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child_validate:
        child_validate(args.child_validate, args.baselines)
        return
    if args.child_build:
        print(build(args.workdir, args.child_build))
        return
    sizes = sorted(args.sizes)
    releases = {}
    for n in sizes:  # built once by the current tree, in a child (its rows never sit in this process)
        path = args.workdir / f"synthetic{n}" / "1.0.0"
        if not (path / "release.json").is_file():
            run_child(["--child-build", str(n), "--workdir", str(args.workdir)], None)
        releases[n] = path
    out: dict = {"sizes": sizes, "baselines": args.baselines, "repeat": args.repeat,
                 "targets": {"time_ratio_per_10x_rows": 11, "peak_rss_mb_at_1m_rows": 2048}}
    if args.tree is not None:
        # interleave trees per size would mix warm caches; each child is fresh anyway
        out["tree"] = measure(sizes, releases, args.repeat, args.baselines, args.tree.resolve())
        out["tree_path"] = str(args.tree)
        if args.compare:
            out["current"] = measure(sizes, releases, args.repeat, args.baselines, None)
    else:
        out["current"] = measure(sizes, releases, args.repeat, args.baselines, None)
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
