"""The spilling index of a split's example ids: finds a repeated id in memory that does not grow
with the split (see :class:`IdIndex`)."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import IO, Any

import numpy as np

#: the id hash of :class:`IdIndex` (a name of its own so a test can force collisions)
id_hash = hash
#: id hashes an :class:`IdIndex` holds in memory (8 MB) before it moves them to disk
MEMORY_ROWS = 1 << 20
# Hashes are multiplied by this odd constant (a bijection of 64-bit integers, so equal stays
# equal and unequal unequal) before bucketing: hash() of small ints is the int itself, and
# unmixed they would all fall into one bucket.
MIX = 0x9E3779B97F4A7C15
_MASK = (1 << 64) - 1
_BUCKET_SHIFT = np.uint64(56)  # 256 buckets by the top 8 bits


def mixed(value: Any) -> int:
    """The mixed hash of one id (:func:`mixed_batch` of a whole batch)."""
    return ((id_hash(value) & _MASK) * MIX) & _MASK


def mixed_batch(ids: list[Any]) -> np.ndarray:
    """The mixed hashes of a batch of ids, sorted (uint64; the product wraps modulo 2**64, as
    :func:`mixed` computes it one id at a time)."""
    h = np.fromiter(map(id_hash, ids), dtype=np.int64, count=len(ids)).view(np.uint64)
    return np.sort(h * np.uint64(MIX))


def bucket_bounds(ordered: np.ndarray) -> np.ndarray:
    """Where each of the 256 buckets starts in a sorted array of mixed hashes (257 offsets)."""
    return np.searchsorted(ordered >> _BUCKET_SHIFT, np.arange(257, dtype=np.uint64))


class IdIndex:
    """The hashes of the ids a split has had so far, in memory that does not grow with the split.

    (A Python set of the ids held ~340 bytes an id: 341 MB at 1M rows, 681 MB at 5M.) Each
    batch adds its ids' 64-bit hashes, mixed, sorted and without repeats. Past
    ``MEMORY_ROWS`` hashes the held batches are merged into one sorted segment and
    appended to an anonymous temporary file in the release's staging folder (gone when
    closed, or when the process dies). :meth:`repeated` then finds the hashes two batches
    had, bucket by bucket (the top 8 bits), so it holds 1/256 of the split at a time.

    A hash is only a hint: the check stays exact.

    * Repeats *within* a batch are confirmed on the ids themselves at once.
    * A hash two batches had belongs to a duplicate or to a hash collision: when the split
      ends, or when a repeat inside a batch must be reported, the written ids of those
      hashes are read back from the shards and compared. The error names the first repeated
      id in example order; it comes at the end of the split when the earlier copy is in
      another batch.
    """

    def __init__(self, spill_dir: Path | None = None, memory_rows: int | None = None) -> None:
        self.batches: list[np.ndarray] = []  # held in memory, each sorted
        self.held = 0
        self.count = 0
        self.memory_rows = MEMORY_ROWS if memory_rows is None else memory_rows
        self.spill_dir = spill_dir
        self.segments: list[tuple[int, np.ndarray]] = []  # (byte offset in the file, bucket bounds)
        self.file: IO[bytes] | None = None

    def __len__(self) -> int:
        return self.count

    def add(self, ordered: np.ndarray) -> None:
        """Add a batch's mixed hashes (uint64), sorted and without repeats."""
        self.batches.append(ordered)
        self.held += len(ordered)
        self.count += len(ordered)
        if self.held > self.memory_rows:
            self._spill()

    def _spill(self) -> None:
        segment = np.concatenate(self.batches)
        segment.sort()  # repeats across batches stay: repeated() finds them
        if self.file is None:
            self.file = tempfile.TemporaryFile(dir=self.spill_dir)  # noqa: SIM115 - closed by close()
        offset = self.file.seek(0, os.SEEK_END)
        self.file.write(segment.tobytes())
        self.segments.append((offset, bucket_bounds(segment)))
        self.batches, self.held = [], 0

    def repeated(self) -> set[int]:
        """The mixed hashes that more than one batch had."""
        if not self.segments and len(self.batches) < 2:
            return set()
        held = np.concatenate(self.batches) if self.batches else np.empty(0, dtype=np.uint64)
        held.sort()
        held_bounds = bucket_bounds(held)
        if self.file is not None:
            self.file.flush()
        fileno = self.file.fileno() if self.file is not None else -1  # segments exist only with the file
        out: set[int] = set()
        for b in range(256):
            parts = [held[held_bounds[b]:held_bounds[b + 1]]]
            for offset, bounds in self.segments:
                n = int(bounds[b + 1] - bounds[b])
                if n:
                    data = os.pread(fileno, 8 * n, offset + 8 * int(bounds[b]))
                    parts.append(np.frombuffer(data, dtype=np.uint64))
            bucket = np.concatenate(parts)
            bucket.sort()
            out.update(bucket[1:][bucket[1:] == bucket[:-1]].tolist())
        return out

    def close(self) -> None:
        if self.file is not None:
            self.file.close()
            self.file = None

