"""Split fingerprints: the sha256 of a split's canonical Arrow table.

Canonical form: the schema *without* metadata, the rows in release order, cut
into record batches of :data:`CANONICAL_BATCH_ROWS` rows, each batch re-laid out
contiguously (no slice offsets), serialised as one uncompressed Arrow IPC
stream. Two tables with the same schema and the same values in the same order
therefore hash the same however they were chunked or stored, and a change to any
value, to the order or to a type changes the hash. The parquet bytes are not
hashed: they also depend on the writer's version and options.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable

import pyarrow as pa

CANONICAL_BATCH_ROWS = 65_536


class _HashSink:
    """A write-only file object that feeds sha256."""

    def __init__(self) -> None:
        self.h = hashlib.sha256()
        self.closed = False

    def write(self, data) -> int:
        self.h.update(data)
        return len(data)

    def flush(self) -> None:  # pyarrow calls it
        pass

    def close(self) -> None:
        self.closed = True


def _contiguous(batch: pa.RecordBatch) -> pa.RecordBatch:
    return pa.RecordBatch.from_arrays(
        [pa.concat_arrays([col]) for col in batch.columns], schema=batch.schema
    )


class Fingerprinter:
    """Incremental fingerprint: feed batches in order, read ``hexdigest()`` at the end.

    Batches may have any size; rows are re-cut into canonical batches.
    """

    def __init__(self, schema: pa.Schema) -> None:
        self.schema = schema.remove_metadata()
        self._sink = _HashSink()
        self._writer = pa.ipc.new_stream(pa.PythonFile(self._sink, mode="w"), self.schema)
        self._pending: list[pa.RecordBatch] = []
        self._pending_rows = 0
        self._digest: str | None = None

    def update(self, batch: pa.RecordBatch) -> None:
        batch = pa.RecordBatch.from_arrays(batch.columns, schema=self.schema)
        if not self._pending and batch.num_rows == CANONICAL_BATCH_ROWS:
            # the writer's own batch size: already a canonical batch (what _emit would cut)
            self._writer.write_batch(_contiguous(batch))
            return
        self._pending.append(batch)
        self._pending_rows += batch.num_rows
        while self._pending_rows >= CANONICAL_BATCH_ROWS:
            self._emit(CANONICAL_BATCH_ROWS)

    def _emit(self, n: int) -> None:
        table = pa.Table.from_batches(self._pending, schema=self.schema)
        head, rest = table.slice(0, n), table.slice(n)
        self._writer.write_batch(_contiguous(head.combine_chunks().to_batches()[0]))
        self._pending = rest.combine_chunks().to_batches() if rest.num_rows else []
        self._pending_rows = rest.num_rows

    def hexdigest(self) -> str:
        if self._digest is None:
            if self._pending_rows:
                self._emit(self._pending_rows)
            self._writer.close()
            self._digest = self._sink.h.hexdigest()
        return self._digest


def fingerprint_batches(schema: pa.Schema, batches: Iterable[pa.RecordBatch]) -> str:
    """The fingerprint of the rows of ``batches`` in order (any batch sizes; see module docstring)."""
    fp = Fingerprinter(schema)
    for b in batches:
        fp.update(b)
    return fp.hexdigest()


def fingerprint_table(table: pa.Table) -> str:
    """The fingerprint of a table, however it is chunked (see module docstring)."""
    return fingerprint_batches(table.schema, table.to_batches())
