"""Index a release, scan sources against it (locally or on Dask), and report per item and split.

Execution: the sources are cut into partitions (:mod:`.corpus`). With one partition, or
``workers=1``, they are scanned in this process. Otherwise the local default is one
process per core (forked, so the index is inherited, not sent); ``scheduler=ADDRESS`` sends
the index once to every worker of a running ``distributed`` cluster (``scatter``,
broadcast) and maps the partitions over it. Either way results come back per partition,
in completion order, and are merged in partition order, so the report does not depend on
how the work was spread. A progress bar counts partitions and shows lines per second.

On Dask the scan costs about what it costs in one process (benchmarks/README.md) only on workers
configured for it: a nanny's default ``MALLOC_TRIM_THRESHOLD_=65536`` makes every large numpy
temporary of a batch a fresh mmap, the worker's statistical profiler samples every thread's stack
each 10 ms, and the event loop's 20 ms health check and 500 ms system monitor each take the
interpreter lock from the task. docs/commands.md gives the Dask config that turns them off.

Per item at most :data:`.task.MAX_LOCATIONS` locations are kept (the first ones in partition and
line order) with the total count of matches, so memory is bounded however often a common
n-gram occurs.
"""

from __future__ import annotations

import fnmatch
import logging
import multiprocessing
import os
import socket
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures import as_completed as done
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from benchsmith import progress
from benchsmith.errors import ConfigError
from benchsmith.lookup import resolve_release
from benchsmith.validation.contamination import corpus, task
from benchsmith.validation.contamination.ngrams import DEFAULT_MIN_TOKENS, DEFAULT_NGRAM, Item, ItemIndex
from benchsmith.validation.dataview import ConfigView, configs

if TYPE_CHECKING:
    from benchsmith.release import Release

_SHOW = 20
logger = logging.getLogger(__name__)


def matched_fields(view: ConfigView) -> list[str]:
    """``policy.contamination_fields``, else the config's text fields."""
    declared = view.policy.contamination_fields
    if declared:
        return [f for f in declared if f in view.features]
    return view.text_fields


def build_index(release: Release, *, ngram: int = DEFAULT_NGRAM, min_tokens: int = DEFAULT_MIN_TOKENS,
                near: float | None = None) -> ItemIndex:
    """The n-gram index of every matched value of every config and split of a release
    (``near``: also near duplicates at this Jaccard threshold, :meth:`ItemIndex.enable_near`)."""
    index = ItemIndex(ngram=ngram, min_tokens=min_tokens)
    for view in configs(release):
        fields = matched_fields(view)
        if not fields:
            continue
        for split in view.splits:
            cols = [view.id_field] if view.id_field else []
            row = 0
            for batch in view.batches(split, cols + fields):
                data = {c: batch.column(c).to_pylist() for c in cols + fields}
                for i in range(batch.num_rows):
                    texts = []
                    for f in fields:
                        v = data[f][i]
                        texts += [(f, corpus._text(x)) for x in (v if isinstance(v, list) else [v])]
                    ident = data[view.id_field][i] if view.id_field else row + i
                    index.add_item(Item(view.config, split, row + i, ident), texts)
                row += batch.num_rows
    index.freeze()
    return index.enable_near(near) if near is not None else index


@contextmanager
def dask_client(address: str) -> Iterator[Any]:
    """A ``distributed`` client of a running scheduler (a one-line ConfigError when none answers)."""
    try:
        from dask.distributed import Client
    except ModuleNotFoundError as exc:
        raise ConfigError("dask[distributed] is not installed", hint="pip install 'benchsmith[scale]'") from exc

    logging.getLogger("distributed").setLevel(logging.ERROR)
    _reachable(address)
    try:
        client = Client(address, timeout="10s")
    except (OSError, TimeoutError, ValueError) as exc:
        raise ConfigError(f"cannot reach the Dask scheduler at {address!r}: {exc}",
                          hint="Start one with `dask scheduler` (and `dask worker ADDRESS`), or drop --scheduler "
                          "to run on this machine's cores") from None
    try:
        yield client
    finally:
        client.close()


def _reachable(address: str) -> None:
    """Fail at once (not after Dask's retries) when nothing listens at a tcp:// address."""

    url = urlsplit(address if "://" in address else f"tcp://{address}")
    if url.scheme not in ("tcp", "tls") or url.hostname is None or url.port is None:
        return  # other transports: let Dask judge
    try:
        socket.create_connection((url.hostname, url.port), timeout=5).close()
    except OSError as exc:
        raise ConfigError(f"cannot reach the Dask scheduler at {address!r}: {exc}",
                          hint="Start one with `dask scheduler` (and `dask worker ADDRESS`), or drop --scheduler "
                          "to run on this machine's cores") from None


def _execute(index: ItemIndex, parts: Sequence[corpus.Part], scheduler: str | None,
             workers: int | None, on_done: Callable[[int, task.PartResult], None]) -> str:
    """Run every partition; ``on_done(position, result)`` as each finishes. Returns where it ran."""
    if scheduler:
        from dask.distributed import as_completed

        with dask_client(scheduler) as client:
            # hash=False: a content key would tokenize the whole index in this process (about as
            # long as scanning 8 MB), and the index is sent once per run anyway
            shared = client.scatter(index.for_workers(), broadcast=True, hash=False)
            slow = sorted({s for found in client.run(task.slow_settings).values() for s in found})
            if slow:
                logger.warning("the Dask workers' %s can double a scan's time (docs/commands.md)", " and ".join(slow))
            futures = client.map(task.scan_part, list(parts), index=shared, pure=False)
            position = {f.key: i for i, f in enumerate(futures)}
            for fut in as_completed(futures):
                on_done(position[fut.key], fut.result())
            n = len(client.scheduler_info().get("workers", {}))
        return f"dask {scheduler} ({n} workers)"
    workers = workers or os.cpu_count() or 1
    task.use_index(index)
    try:
        if workers == 1 or len(parts) == 1:
            for i, p in enumerate(parts):
                on_done(i, task.scan_part(p))
            return "in process"

        ctx = multiprocessing.get_context("fork" if "fork" in multiprocessing.get_all_start_methods() else None)
        # a forked worker inherits the index; a spawned one is handed it once
        init: dict[str, Any] = {} if ctx.get_start_method() == "fork" else {"initializer": task.use_index,
                                                                            "initargs": (index.for_workers(),)}
        with ProcessPoolExecutor(max_workers=min(workers, len(parts)), mp_context=ctx, **init) as pool:
            futures = {pool.submit(task.scan_part, p): i for i, p in enumerate(parts)}
            for fut in done(futures):
                on_done(futures[fut], fut.result())
        return f"{min(workers, len(parts))} local processes"
    finally:
        task.use_index(None)


def run(index: ItemIndex, parts: Sequence[corpus.Part], *, scheduler: str | None = None,
        workers: int | None = None) -> tuple[dict[int, int], dict[int, list[dict[str, Any]]], int, dict[str, int], str]:
    """(per item: match count, first locations; lines read; lines per source; where it ran)."""
    results: dict[int, task.PartResult] = {}
    start = time.perf_counter()
    with progress.bar("contamination", total=len(parts)) as bar:
        lines = 0

        def on_done(i: int, r: task.PartResult) -> None:
            nonlocal lines
            results[i] = r
            lines += r.lines
            rate = lines / max(time.perf_counter() - start, 1e-9)
            bar.update(description=f"contamination: {lines:,} lines, {rate:,.0f} lines/s")
            bar.advance()

        ran = _execute(index, parts, scheduler, workers, on_done)
    counts: dict[int, int] = {}
    locations: dict[int, list[dict[str, Any]]] = {}
    per_source: dict[str, int] = {}
    for i in range(len(parts)):  # partition order: the report does not depend on the schedule
        r = results[i]
        per_source[parts[i].source] = per_source.get(parts[i].source, 0) + r.lines
        for item, c in r.counts.items():
            counts[item] = counts.get(item, 0) + c
            kept = locations.setdefault(item, [])
            kept.extend(r.locations[item][: task.MAX_LOCATIONS - len(kept)])
    return counts, locations, sum(r.lines for r in results.values()), per_source, ran


# --------------------------------------------------------------------------- sources and report


def source_parts(specs: Sequence[str], *, registry: Any = None, text_fields: tuple[str, ...] = (),
                 chunk: int = corpus.CHUNK_BYTES) -> tuple[list[corpus.Part], list[dict[str, Any]]]:
    """Partitions of every SOURCE argument, and a description of each source."""


    parts: list[corpus.Part] = []
    described = []
    for spec in specs:
        if spec.startswith("hf://"):
            got = corpus.hub_parts(spec, text_fields)
            kind, label = "hub", spec
        elif (Path(spec) / "release.json").is_file() or (  # NAME or NAME/VERSION (a name has no dot)
                not Path(spec).exists() and not any(c in spec for c in "*?[") and spec.count("/") <= 1
                and "." not in spec.split("/")[0]):
            other = resolve_release(spec, registry)
            label = f"{other.name}/{other.version}"
            got = corpus.release_parts(other, label, matched_fields)
            kind = "release"
        else:
            got = corpus.file_parts(spec, corpus._regular_files(spec), text_fields, chunk)
            kind, label = "files", spec
        parts += got
        described.append({"source": label, "kind": kind, "files": len({p.path for p in got}), "partitions": len(got)})
    return parts, described


def by_design(policy_patterns: Sequence[str], source: str, file: str = "") -> bool:
    """Whether a match is a declared by-design overlap: an fnmatch pattern of the policy matches
    the source's name (a release's ``NAME`` or ``NAME/VERSION``, a path or address as given)
    or the matched file's path or file name."""
    names = {source, os.path.basename(source.rstrip("/")), source.split("/")[0], file, os.path.basename(file)}
    return any(fnmatch.fnmatch(n, p) for p in policy_patterns for n in names if n)


def report(release: Release, index: ItemIndex, counts: dict[int, int], locations: dict[int, list[dict[str, Any]]],
           *, sources: list[dict[str, Any]], lines: int, seconds: float, ran: str,
           per_source: dict[str, int]) -> dict[str, Any]:
    """The JSON report: per config and split the rate, the gate, and the contaminated items."""
    for s in sources:
        s["lines"] = per_source.get(s["source"], 0)
    views = {v.config: v for v in configs(release)}
    per_split: dict[tuple[str, str], dict[str, Any]] = {}
    for view in views.values():
        limits = dict(view.policy.contamination_max_fraction)
        for split in view.splits:
            per_split[(view.config, split)] = {
                "config": view.config, "split": split, "items": view.num_rows(split),
                "fields": matched_fields(view), "too_short": index.too_short.get((view.config, split), 0),
                "contaminated": 0, "gated": 0, "by_source": {}, "max_fraction": limits.get(split),
                "by_design": list(view.policy.contamination_by_design)}
    items = []
    for number in sorted(counts):
        it = index.items[number]
        row = per_split[(it.config, it.split)]
        srcs = sorted({loc["source"] for loc in locations[number]})
        row["contaminated"] += 1
        designed = [by_design(row["by_design"], loc["source"], loc["file"]) for loc in locations[number]]
        if not all(designed):
            row["gated"] += 1
        for s in srcs:
            row["by_source"][s] = row["by_source"].get(s, 0) + 1
        items.append({"config": it.config, "split": it.split, "row": it.row, "id": it.id,
                      "matches": counts[number], "by_design": all(designed), "locations": locations[number]})
    failed = []
    for row in per_split.values():
        row["rate"] = round(row["contaminated"] / max(row["items"], 1), 6)
        row["gated_rate"] = round(row["gated"] / max(row["items"], 1), 6)
        limit = row["max_fraction"]
        row["status"] = ("fail" if limit is not None and row["gated_rate"] > limit
                         else "warn" if row["gated"] else "pass")
        if row["status"] == "fail":
            failed.append(f"{row['config']}/{row['split']}")
    return {
        "release": f"{release.name}/{release.version}", "ngram": index.ngram, "min_tokens": index.min_tokens,
        "near_duplicates": getattr(index, "near_threshold", None),
        "sources": sources, "lines": lines, "seconds": round(seconds, 3),
        "lines_per_second": round(lines / seconds) if seconds > 0 else None, "ran": ran,
        "splits": list(per_split.values()), "items": items, "failed": failed, "passed": not failed,
    }


def _where(loc: dict[str, Any]) -> str:
    if "id" in loc:
        return f"item {loc['id']!r} ({loc['field']})"
    return f"row {loc['row']}" if "row" in loc else f"line {loc['line']}"


def markdown(rep: dict[str, Any]) -> str:
    """The report for people (a pull request, a README)."""
    out = [f"## Contamination of {rep['release']}", "",
           f"{rep['ngram']}-grams of normalised words (a matched field shorter than that: the whole field, "
           f"from {rep['min_tokens']} words). Sources: "
           + "; ".join(f"{s['source']} ({s['kind']}, {s['lines']:,} lines)" for s in rep["sources"])
           + f". {rep['lines']:,} lines in {rep['seconds']} s ({rep['ran']}).", "",
           "| config | split | items | contaminated | rate | by source | max | status |",
           "|---|---|---|---|---|---|---|---|"]
    for r in rep["splits"]:
        by = ", ".join(f"{k} {v}" for k, v in r["by_source"].items()) or "-"
        if r["contaminated"] > r["gated"]:
            by += f" ({r['contaminated'] - r['gated']} by design)"
        limit = "-" if r["max_fraction"] is None else f"{r['max_fraction']:.1%}"
        out.append(f"| {r['config']} | {r['split']} | {r['items']:,} | {r['contaminated']:,} | {r['rate']:.2%} | "
                   f"{by} | {limit} | {r['status']} |")
    if rep["items"]:
        out += ["", f"First {min(_SHOW, len(rep['items']))} of {len(rep['items'])} contaminated items:", ""]
        out += [f"- {item_line(it)}" for it in rep["items"][:_SHOW]]
    return "\n".join(out) + "\n"


def item_line(it: dict[str, Any]) -> str:
    """One contaminated item of the report and where it was first found."""
    loc = it["locations"][0]
    return (f"`{it['config']}/{it['split']}` {it['id']!r} ({it['matches']} match(es)): "
            f"{loc['item_field']} \"{loc['ngram']}\" in {loc['file']} {_where(loc)}, word {loc['word']}")
