"""What one task runs, in this process, a local worker process or on a Dask worker: scan one
partition against the index.

Kept apart from :mod:`.scan` (sources, execution, the report) so that a worker imports only the
readers and the matcher (numpy, pyarrow), never ``datasets``: a fresh Dask worker unpickles the
index and this module's :func:`scan_part` before its first task.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any

from benchsmith.validation.contamination import corpus
from benchsmith.validation.contamination.ngrams import ItemIndex

#: locations kept per item (the first ones in partition and line order), with the total count
MAX_LOCATIONS = 5

#: the index of a local run (:func:`use_index`)
_INDEX: ItemIndex | None = None


@dataclass
class PartResult:
    """What one partition found: lines read, and per item the match count and first locations."""

    lines: int = 0
    counts: dict[int, int] = field(default_factory=dict)
    locations: dict[int, list[dict[str, Any]]] = field(default_factory=dict)


def scan_part(part: corpus.Part, index: ItemIndex | None = None) -> PartResult:
    """Scan one partition (``index``: the scattered index on Dask, else the forked global)."""
    index = index if index is not None else _INDEX
    assert index is not None, "no index: call through run()"  # internal invariant, not user input
    out = PartResult()
    for texts, where in corpus.batches(part):
        out.lines += len(texts)
        encoded = index.encode(texts)
        for hit in index.scan(texts, encoded):
            item, fld = index.values[hit.value]
            _keep(out, item, part, where[hit.line], {"word": hit.word, "item_field": fld, "n": hit.n,
                                                      "ngram": index.words(hit.value, hit.start, hit.n)})
        for line_no, value, jaccard in index.near(texts, encoded):
            item, fld = index.values[value]
            _keep(out, item, part, where[line_no], {"word": 0, "item_field": fld, "n": None, "jaccard": jaccard,
                                                    "ngram": index.near_texts[value]})
    return out


def _keep(out: PartResult, item: int, part: corpus.Part, w: Any, what: dict[str, Any]) -> None:
    """Count a match of an item and keep its location while fewer than MAX_LOCATIONS are."""
    out.counts[item] = out.counts.get(item, 0) + 1
    kept = out.locations.setdefault(item, [])
    if len(kept) < MAX_LOCATIONS:
        number, src_field = (w, "") if isinstance(w, int) else w
        # a text file's 1-based line; a parquet file's row; another release's item id and field
        at = {"id": number, "field": src_field} if part.kind == "release" else (
            {"row": number} if part.kind == "parquet" else {"line": number})
        kept.append({"source": part.source, "file": part.where, **at, **what})


def use_index(index: ItemIndex | None) -> None:
    """The index :func:`scan_part` uses when it is given none, in this process (a local run; a
    spawned worker's initializer; a forked worker inherits it)."""
    global _INDEX
    _INDEX = index


def slow_settings() -> list[str]:
    """Which of Dask's worker defaults that double a scan's CPU this worker runs with
    (docs/commands.md): the nanny's ``MALLOC_TRIM_THRESHOLD_`` and the statistical profiler."""
    import dask

    slow = ["MALLOC_TRIM_THRESHOLD_"] if os.environ.get("MALLOC_TRIM_THRESHOLD_") else []
    if dask.config.get("distributed.worker.profile.enabled", False):
        slow.append("profiler")
    return slow
