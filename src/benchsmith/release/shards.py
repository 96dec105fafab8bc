"""Shard writing: one split's encoded record batches into parquet shards, fingerprinted on the
way (:class:`ShardSink`), with the fixed parquet options that make two builds byte-identical."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from benchsmith.fingerprint import CANONICAL_BATCH_ROWS, Fingerprinter
from benchsmith.manifest import SplitInfo
from benchsmith.source import sha256_file

#: Fixed parquet options: part of what makes two builds byte-identical.
PARQUET_OPTIONS: dict[str, Any] = {
    "compression": "zstd",
    "compression_level": 3,
    "use_dictionary": True,
    "write_statistics": True,
    "data_page_size": 1 << 20,
    "version": "2.6",
}
#: Rows per parquet row group; a new shard starts past ``shard_bytes`` of Arrow data.
DEFAULT_BATCH_ROWS = CANONICAL_BATCH_ROWS
DEFAULT_SHARD_BYTES = 256 << 20


class ShardSink:
    """Writes encoded batches of one split to parquet shards and fingerprints them."""

    def __init__(self, out_dir: Path, split: str, schema: pa.Schema, batch_rows: int, shard_bytes: int):
        out_dir.mkdir(parents=True, exist_ok=True)
        self.out_dir, self.split, self.schema = out_dir, split, schema
        self.batch_rows, self.max_shard_bytes = batch_rows, shard_bytes
        self.fp = Fingerprinter(schema)
        self.shards: list[Path] = []
        self.writer: pq.ParquetWriter | None = None
        self.shard_bytes = 0
        self.num_examples = 0
        self.num_bytes = 0

    def write(self, batch: pa.RecordBatch) -> None:
        if self.writer is None or self.shard_bytes >= self.max_shard_bytes:
            self.close()
            self.shards.append(self.out_dir / f".{self.split}-shard{len(self.shards):05d}.parquet")
            self.writer = pq.ParquetWriter(self.shards[-1], self.schema, **PARQUET_OPTIONS)
            self.shard_bytes = 0
        self.writer.write_batch(batch, row_group_size=self.batch_rows)
        self.fp.update(batch)
        self.shard_bytes += batch.nbytes
        self.num_examples += batch.num_rows
        self.num_bytes += batch.nbytes

    def close(self) -> None:
        if self.writer is not None:
            self.writer.close()
            self.writer = None

    def discard(self) -> None:
        self.close()
        for shard in self.shards:
            shard.unlink(missing_ok=True)

    def finish(self) -> SplitInfo:
        """Close, give the shards their final ``<split>-0000i-of-0000N`` names and return the split
        as release.json records it."""
        self.close()
        root = self.out_dir.parent.parent
        files, digests = [], []
        for i, shard in enumerate(self.shards):
            final = self.out_dir / f"{self.split}-{i:05d}-of-{len(self.shards):05d}.parquet"
            os.replace(shard, final)
            files.append(final.relative_to(root).as_posix())
            digests.append(sha256_file(final))
        return SplitInfo(name=self.split, num_examples=self.num_examples, num_bytes=self.num_bytes,
                         fingerprint=self.fp.hexdigest(), files=tuple(files), sha256=tuple(digests))

