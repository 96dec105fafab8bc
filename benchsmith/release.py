"""Writing and reading release directories.

Layout of ``<registry>/<name>/<version>/``::

    README.md                               dataset card (YAML + prose)
    data/<config>/<split>-00000-of-0000N.parquet
    release.json                            manifest (sources, counts, fingerprints, tools)
    croissant.json                          Croissant 1.0 metadata
    reports/                                written by `benchsmith validate`

:class:`ReleaseWriter` streams examples into parquet in record batches of
``batch_rows`` rows, so memory stays bounded whatever the split size. Writing is
deterministic (fixed parquet options, builder order, no timestamps inside data
files) and atomic: everything goes into a hidden temporary sibling that is
renamed into place at the very end, so a builder that raises, a schema error or
Ctrl-C leaves no release directory behind.
"""

from __future__ import annotations

import itertools
import json
import operator
import os
import platform
import shutil
import stat
from collections.abc import Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor, wait
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

import benchsmith
from benchsmith import fingerprint_registry, progress
from benchsmith.builder import Builder, Config
from benchsmith.erratum import ErrataApplier
from benchsmith.errors import (
    BenchsmithError,
    ConfigError,
    EnvironmentFault,
    MissingSourceError,
    ReleaseError,
    SchemaError,
    did_you_mean,
)
from benchsmith.features import ClassLabel
from benchsmith.fingerprint import CANONICAL_BATCH_ROWS, Fingerprinter, fingerprint_table
from benchsmith.manifest import ConfigInfo, read_manifest
from benchsmith.manifest import SplitInfo as ManifestSplitInfo
from benchsmith.registry import CARD, MANIFEST, write_text_atomic  # noqa: F401 - re-exported for callers
from benchsmith.source import Sources, sha256_file

if TYPE_CHECKING:
    import datasets

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


@dataclass
class SplitInfo:
    num_examples: int
    num_bytes: int
    fingerprint: str
    files: list[str]
    #: sha256 of each parquet file, in ``files`` order: what publish, audit and evaluate verify cheaply
    sha256: list[str]

    def to_dict(self) -> dict[str, Any]:
        return {
            "num_examples": self.num_examples,
            "num_bytes": self.num_bytes,
            "fingerprint": self.fingerprint,
            "files": self.files,
            "sha256": self.sha256,
        }


@dataclass
class SkippedSplit:
    reason: str


def _tool_versions() -> dict[str, str]:
    from importlib.metadata import version  # not `import datasets` (~0.6 s): a build does not load it

    return {
        "benchsmith": benchsmith.__version__,
        "datasets": version("datasets"),
        "pyarrow": pa.__version__,
        "python": platform.python_version(),
    }


#: the id hash of :class:`_IdIndex` (a name of its own so a test can force collisions)
_id_hash = hash
#: id hashes an :class:`_IdIndex` holds in memory (8 MB) before it moves them to disk
_ID_MEMORY_ROWS = 1 << 20
# Hashes are multiplied by this odd constant (a bijection of 64-bit integers, so equal stays
# equal and unequal unequal) before bucketing: hash() of small ints is the int itself, and
# unmixed they would all fall into one bucket.
_MIX = 0x9E3779B97F4A7C15
_MASK = (1 << 64) - 1
_BUCKET_SHIFT = np.uint64(56)  # 256 buckets by the top 8 bits


def _mixed(value: Any) -> int:
    """The mixed hash of one id, as :meth:`_SplitEncoder._check_ids` computes it for a batch."""
    return ((_id_hash(value) & _MASK) * _MIX) & _MASK


def _bucket_bounds(ordered: np.ndarray) -> np.ndarray:
    """Where each of the 256 buckets starts in a sorted array of mixed hashes (257 offsets)."""
    return np.searchsorted(ordered >> _BUCKET_SHIFT, np.arange(257, dtype=np.uint64))


class _IdIndex:
    """The hashes of the ids a split has had so far, in memory that does not grow with the split.

    (A Python set of the ids held ~340 bytes an id: 341 MB at 1M rows, 681 MB at 5M.) Each
    batch adds its ids' 64-bit hashes, mixed, sorted and without repeats. Past
    ``_ID_MEMORY_ROWS`` hashes the held batches are merged into one sorted segment and
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
        self.memory_rows = _ID_MEMORY_ROWS if memory_rows is None else memory_rows
        self.spill_dir = spill_dir
        self.segments: list[tuple[int, np.ndarray]] = []  # (byte offset in the file, bucket bounds)
        self.file: Any = None

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
        import tempfile

        segment = np.concatenate(self.batches)
        segment.sort()  # repeats across batches stay: repeated() finds them
        if self.file is None:
            self.file = tempfile.TemporaryFile(dir=self.spill_dir)  # noqa: SIM115 - closed by close()
        offset = self.file.seek(0, os.SEEK_END)
        self.file.write(segment.tobytes())
        self.segments.append((offset, _bucket_bounds(segment)))
        self.batches, self.held = [], 0

    def repeated(self) -> set[int]:
        """The mixed hashes that more than one batch had."""
        if not self.segments and len(self.batches) < 2:
            return set()
        held = np.concatenate(self.batches) if self.batches else np.empty(0, dtype=np.uint64)
        held.sort()
        held_bounds = _bucket_bounds(held)
        if self.file is not None:
            self.file.flush()
        out: set[int] = set()
        for b in range(256):
            parts = [held[held_bounds[b]:held_bounds[b + 1]]]
            for offset, bounds in self.segments:
                n = int(bounds[b + 1] - bounds[b])
                if n:
                    data = os.pread(self.file.fileno(), 8 * n, offset + 8 * int(bounds[b]))
                    parts.append(np.frombuffer(data, dtype=np.uint64))
            bucket = np.concatenate(parts)
            bucket.sort()
            out.update(bucket[1:][bucket[1:] == bucket[:-1]].tolist())
        return out

    def close(self) -> None:
        if self.file is not None:
            self.file.close()
            self.file = None


class _Repeat(Exception):
    # control flow inside the writer, never seen by a user
    """A repeated id found inside a batch while suspects wait for confirmation."""

    def __init__(self, pending: list[tuple[int, Any]]) -> None:
        super().__init__()
        self.pending = pending  # (example number, id) of the batch up to and with the repeat


class _SplitEncoder:
    """Turns example dicts into record batches, column-wise (the fast path)."""

    def __init__(self, config: Config, split: str, id_field: str | None, batch_rows: int = 65_536,
                 spill_dir: Path | None = None):
        self.config = config
        self.batch_rows = batch_rows
        self.split = split
        self.features = config.features
        self.schema = self.features.arrow_schema
        self.names = list(self.features)
        self.name_set = set(self.names)
        self.id_field = id_field if id_field in self.name_set else None
        self.class_labels = {
            n: f for n, f in self.features.items() if isinstance(f, ClassLabel)
        }
        self.ids = _IdIndex(spill_dir)  # spills to the staging folder's disk, not /tmp (maybe RAM)
        # Non-label columns convert in one C++ pass; ClassLabel columns also accept names.
        self.plain_schema = pa.schema([f for f in self.schema if f.name not in self.class_labels])

    def where(self, index: int, example: dict | None = None) -> str:
        ident = f" (id {example.get(self.id_field)!r})" if example and self.id_field else ""
        return f"{self.config.name}/{self.split} example #{index}{ident}"

    def encode(self, rows: list[dict], start: int) -> pa.RecordBatch:
        """Validate and convert one batch of examples.

        The checks run in bulk at C speed (``map`` over builtins, one
        ``RecordBatch.from_pylist`` pass); only when one fails does a per-row pass
        locate the offending example for the message.
        """
        name_set = self.name_set
        if not all(map(operator.eq, map(dict.keys, rows), itertools.repeat(name_set))):
            i, ex = next((i, ex) for i, ex in enumerate(rows) if ex.keys() != name_set)
            raise SchemaError(
                f"{self.where(start + i, ex)} has missing fields {sorted(name_set - ex.keys())} "
                f"and extra fields {sorted(ex.keys() - name_set)}",
                hint="Make the builder yield exactly the config's features",
            )
        if self.id_field:
            self._check_ids(list(map(operator.itemgetter(self.id_field), rows)), rows, start)
        labels = {
            n: self._labels(feat, n, list(map(operator.itemgetter(n), rows)), rows, start)
            for n, feat in self.class_labels.items()
        }
        try:
            plain = pa.RecordBatch.from_pylist(rows, schema=self.plain_schema)
        except (pa.ArrowInvalid, pa.ArrowTypeError, TypeError, OverflowError) as exc:
            self._raise_bad_value(rows, start, exc)
        arrays = [
            pa.array(labels[n], type=typ) if n in labels else plain.column(n)
            for n, typ in zip(self.names, self.schema.types)
        ]
        return pa.RecordBatch.from_arrays(arrays, schema=self.schema)

    def _check_ids(self, ids: list, rows: list[dict], start: int) -> None:
        """Record the batch's ids; a repeat raises SchemaError (see :class:`_IdIndex`)."""
        h = np.fromiter(map(_id_hash, ids), dtype=np.int64, count=len(ids)).view(np.uint64)
        ordered = np.sort(h * np.uint64(_MIX))  # wraps modulo 2**64, as _mixed() does
        if len(ordered) > 1 and bool((ordered[1:] == ordered[:-1]).any()):
            here: set = set()
            for i, v in enumerate(ids):  # equal hashes in the batch: compare the ids themselves
                if v in here:
                    if len(self.ids):  # an earlier batch may hold an earlier repeat: settle that first
                        raise _Repeat([(start + k, ids[k]) for k in range(i + 1)])
                    raise self.duplicate(start + i, v)
                here.add(v)
            ordered = np.unique(ordered)  # a hash collision inside the batch: one entry
        self.ids.add(ordered)

    def duplicate(self, index: int, value: Any) -> SchemaError:
        return SchemaError(
            f"{self.where(index, {self.id_field: value})}: duplicate {self.id_field} {value!r}",
            hint="Example ids must be unique within a split",
        )

    def first_duplicate(self, shards: Sequence[Path], pending: Sequence[tuple[int, Any]] = ()) -> SchemaError | None:
        """The first repeated id among the written shards followed by ``pending`` (example number,
        id) pairs not yet written, reading back only the ids whose hash is a suspect."""
        wanted = self.ids.repeated() | {_mixed(v) for _, v in pending}
        if not wanted:
            return None
        first: dict[Any, int] = {}

        def written() -> Iterator[tuple[int, Any]]:
            n = 0
            for shard in shards:
                for batch in pq.ParquetFile(shard).iter_batches(batch_size=self.batch_rows, columns=[self.id_field]):
                    for i, v in enumerate(batch.column(0).to_pylist()):
                        yield n + i, v
                    n += batch.num_rows

        for index, v in itertools.chain(written(), pending):
            if _mixed(v) not in wanted:
                continue
            if v in first:
                return self.duplicate(index, v)
            first[v] = index
        return None

    def _raise_bad_value(self, rows: list[dict], start: int, exc: Exception) -> None:
        for n in self.plain_schema.names:
            values = [ex[n] for ex in rows]
            typ = self.schema.field(n).type
            try:
                pa.array(values, type=typ)
            except (pa.ArrowInvalid, pa.ArrowTypeError, TypeError, OverflowError) as col_exc:
                bad = self._find_bad(values, typ)
                raise SchemaError(
                    f"{self.where(start + bad, rows[bad])}: field {n!r} value {values[bad]!r} "
                    f"does not fit feature {self.features[n]!r} ({col_exc})",
                    hint="Fix the builder or the declared features",
                ) from None
        raise SchemaError(f"{self.config.name}/{self.split}: examples do not fit the features ({exc})")

    def _labels(self, feat: ClassLabel, name: str, values: list, rows: list[dict], start: int) -> list:
        if all(type(v) is int for v in values):
            lo, hi = (min(values), max(values)) if values else (0, 0)
            if -1 <= lo and hi < feat.num_classes:
                return values
        # names as the ClassLabel spells them map in one pass; anything else (an int, a name
        # with spaces or digits that str2int reads, a bad value) takes the row-by-row path
        index = {n: i for i, n in enumerate(feat.names)}
        if all(type(v) is str and v in index for v in values):
            return [index[v] for v in values]
        return [self._label(feat, name, v, start + i, rows[i]) for i, v in enumerate(values)]

    @staticmethod
    def _find_bad(values: list, typ: pa.DataType) -> int:
        for i, v in enumerate(values):
            try:
                pa.array([v], type=typ)
            except (pa.ArrowInvalid, pa.ArrowTypeError, TypeError, OverflowError):
                return i
        return 0

    def _label(self, feat: ClassLabel, name: str, value: Any, index: int, ex: dict) -> int:
        if isinstance(value, str):
            try:
                return feat.str2int(value)
            except ValueError:
                raise SchemaError(
                    f"{self.where(index, ex)}: label {name!r} is {value!r}; expected one of {feat.names}",
                    hint="Fix the builder or the ClassLabel names",
                ) from None
        if isinstance(value, bool) or not isinstance(value, int) or not -1 <= value < feat.num_classes:
            raise SchemaError(
                f"{self.where(index, ex)}: label {name!r} is {value!r}; expected an int in "
                f"[0, {feat.num_classes}) or -1 for unlabeled, or one of {feat.names}",
                hint="Fix the builder or the ClassLabel names",
            )
        return value


def _settle(pending: Future | None) -> None:
    """Wait for a write in flight without raising its error (the caller is already unwinding)."""
    if pending is not None:
        wait([pending])


class _ShardSink:
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
        """Close and give the shards their final ``<split>-0000i-of-0000N`` names."""
        self.close()
        root = self.out_dir.parent.parent
        files, digests = [], []
        for i, shard in enumerate(self.shards):
            final = self.out_dir / f"{self.split}-{i:05d}-of-{len(self.shards):05d}.parquet"
            os.replace(shard, final)
            files.append(final.relative_to(root).as_posix())
            digests.append(sha256_file(final))
        return SplitInfo(self.num_examples, self.num_bytes, self.fp.hexdigest(), files, digests)


def _built(splits: dict[str, dict[str, SplitInfo | SkippedSplit]]) -> dict[str, dict[str, str]]:
    """``{config: {split: fingerprint}}`` of the splits a build wrote (skipped ones left out)."""
    built = {c: {s: i.fingerprint for s, i in v.items() if isinstance(i, SplitInfo)} for c, v in splits.items()}
    return {c: v for c, v in built.items() if v}


class ReleaseWriter:
    """Build one version of a dataset into ``<registry>/<name>/<version>``.

    Args:
        builder: the builder instance (its ``version`` is the release version).
        registry: the registry root directory.
        sources: resolved sources (``benchsmith.source.resolve_sources``).
        configs: names of configs to build (default: all).
        skip_missing: a split whose builder raises ``MissingSourceError`` is left
            out and recorded as skipped instead of failing the build.
        overwrite: replace an existing release of the same version.
        register_fingerprints: record the build's split fingerprints as its version's in the
            builder's ``fingerprints.tsv`` instead of comparing with them
            (``benchsmith.fingerprint_registry``; the outcome is ``fingerprint_outcome``).
        previous: the release this version is compared with for its "Changes since" section
            (``benchsmith.changelog.record_changes``); default: the newest older version of
            the same dataset in ``registry``.
    """

    def __init__(
        self,
        builder: Builder,
        registry: Path,
        sources: Sources,
        *,
        configs: Sequence[str] | None = None,
        skip_missing: bool = False,
        overwrite: bool = False,
        batch_rows: int = DEFAULT_BATCH_ROWS,
        shard_bytes: int = DEFAULT_SHARD_BYTES,
        register_fingerprints: bool = False,
        previous: Release | None = None,
    ) -> None:
        self.builder = builder
        self.register_fingerprints = register_fingerprints
        self.fingerprint_outcome: fingerprint_registry.Outcome | None = None
        self.previous = previous
        self.registry = Path(registry)
        self.sources = sources
        self.configs = [builder.config(c) for c in configs] if configs else list(builder.configs())
        self.skip_missing = skip_missing
        self.overwrite = overwrite
        self.batch_rows = batch_rows
        self.shard_bytes = shard_bytes

    @property
    def target(self) -> Path:
        return self.registry / self.builder.name / self.builder.version

    def write(self) -> Release:
        """Build into a staging sibling and commit it; the version's lock is held throughout."""
        from benchsmith import registry

        target = self.target
        registry.recover(target.parent)
        with registry.lock(target, timeout=0):
            # the guards run under the lock, so a concurrent build or publish cannot slip between
            registry.guard_published(target)  # a published version is never rebuilt in place
            if target.exists() and not self.overwrite:
                raise ReleaseError(
                    f"release {self.builder.name} {self.builder.version} already exists",
                    path=target,
                    hint="Pass --overwrite to replace it, or bump the builder's version",
                )
            tmp = registry.make_staging(target.parent, self.builder.version)
            try:
                splits = self._write_into(tmp)
                # a version's registered content never changes: checked (or registered) before the commit
                self.fingerprint_outcome = self._registered_fingerprints(splits)
                if self.builder.hub_repo:  # a version tagged on the builder's Hub repo is that content
                    from benchsmith.hub_guard import guard_hub_tag

                    guard_hub_tag(self.builder.hub_repo, self.builder.version, _built(splits))
                registry.commit(tmp, target, overwrite=self.overwrite)
            except BaseException as exc:
                shutil.rmtree(tmp, ignore_errors=True)
                if isinstance(exc, OSError) and not isinstance(exc, BenchsmithError) and exc.filename is None:
                    # a write() that failed (EFBIG, EIO...) names no file: name the release being written
                    raise EnvironmentFault.of(exc, where=target) from exc
                raise
        return Release(target)

    def _registered_fingerprints(
        self, splits: dict[str, dict[str, SplitInfo | SkippedSplit]]
    ) -> fingerprint_registry.Outcome:
        built = _built(splits)
        skipped = [(c, s) for c, v in splits.items() for s, i in v.items() if isinstance(i, SkippedSplit)]
        if self.register_fingerprints:
            declared = {c.name for c in self.builder.configs()}
            full = not skipped and {c.name for c in self.configs} >= declared
            return fingerprint_registry.register(self.builder, built, self.sources, full=full)
        return fingerprint_registry.check(self.builder, built, self.sources,
                                          selected=[c.name for c in self.configs], skipped=skipped)

    def _write_into(self, tmp: Path) -> dict[str, dict[str, SplitInfo | SkippedSplit]]:
        splits: dict[str, dict[str, SplitInfo | SkippedSplit]] = {}
        # One writer thread for the whole release (not one per split: XCOPA has 45 small ones)
        with ThreadPoolExecutor(max_workers=1, thread_name_prefix="benchsmith-writer") as pool:
            for config in self.configs:
                splits[config.name] = {}
                for split in config.splits:
                    splits[config.name][split] = self._write_split(tmp, config, split, pool)
        if not any(isinstance(s, SplitInfo) for c in splits.values() for s in c.values()):
            raise ReleaseError(
                f"{self.builder.name}: no split could be built",
                hint="Check --sources: every split was skipped for missing files",
            )
        manifest = self._manifest(splits)
        (tmp / MANIFEST).write_text(json.dumps(manifest, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
        from benchsmith.changelog import newest_older, record_changes

        staged = Release(tmp)
        record_changes(staged, self.previous if self.previous is not None
                       else lambda: newest_older(find_releases(self.registry, staged.name), staged.version))
        from benchsmith.cards.card import write_card_files

        write_card_files(Release(tmp), self.builder)
        return splits

    def _write_split(
        self, root: Path, config: Config, split: str, pool: ThreadPoolExecutor
    ) -> SplitInfo | SkippedSplit:
        enc = _SplitEncoder(config, split, config.policy.id_field, self.batch_rows, spill_dir=root)
        errata = ErrataApplier(self.builder.errata_applied, config.name, split, enc.id_field, config.features)
        sink = _ShardSink(root / "data" / config.name, split, enc.schema, self.batch_rows, self.shard_bytes)
        # One writer thread: parquet encoding and sha256 release the GIL, so batch N is
        # written while Python encodes batch N+1. At most one batch waits (bounded memory),
        # and a single worker keeps the order (determinism). A split of one batch is written
        # here: there is nothing to overlap it with.
        pending: Future | None = None
        n_rows = 0
        try:
            examples = iter(errata.apply(self.builder.examples(config, split, self.sources)))
            with progress.bar(f"{self.builder.name}/{config.name}/{split}") as bar:
                # islice pulls a batch at C speed; memory is bounded by batch_rows.
                while (rows := list(itertools.islice(examples, self.batch_rows))) or n_rows == 0:
                    try:
                        batch = enc.encode(rows, n_rows)
                    except _Repeat as repeat:  # confirm the earlier suspects against the written shards
                        if pending is not None:
                            pending.result()
                        sink.close()
                        raise enc.first_duplicate(sink.shards, repeat.pending) or enc.duplicate(*repeat.pending[-1])
                    if pending is not None:
                        pending.result()
                    if n_rows == 0 and len(rows) < self.batch_rows:  # the first batch is the last
                        sink.write(batch)
                    else:
                        pending = pool.submit(sink.write, batch)
                    n_rows += len(rows)
                    bar.advance(len(rows))
                    if not rows:  # empty split: a schema-only file was written
                        break
            if pending is not None:
                pending.result()
            errata.finish()
            info = sink.finish()
            # ids whose hash two batches had: read back, compare exactly
            error = enc.first_duplicate([root / f for f in info.files])
            if error is not None:
                raise error
            return info
        except MissingSourceError as exc:
            _settle(pending)  # the writer thread may still hold a shard open
            sink.discard()
            if not self.skip_missing:
                raise
            # the reason without the build machine's absolute path (release.json is published)
            return SkippedSplit(exc.message if isinstance(exc, MissingSourceError) else str(exc))
        finally:
            _settle(pending)
            sink.close()
            enc.ids.close()

    def _manifest(self, splits: dict[str, dict[str, SplitInfo | SkippedSplit]]) -> dict[str, Any]:
        b = self.builder
        configs: dict[str, Any] = {}
        for config in self.configs:
            built = {s: i.to_dict() for s, i in splits[config.name].items() if isinstance(i, SplitInfo)}
            skipped = {s: i.reason for s, i in splits[config.name].items() if isinstance(i, SkippedSplit)}
            if not built:
                configs.setdefault("__skipped__", {})[config.name] = skipped
                continue
            configs[config.name] = {
                "description": config.description,
                "languages": list(config.languages),
                "features": config.features.to_dict(),
                "policy": config.policy.to_dict(),
                "metadata": dict(config.metadata),
                "splits": built,
                "skipped_splits": skipped,
            }
        skipped_configs = configs.pop("__skipped__", {})
        declared = [c.name for c in b.configs()]
        missing_configs = [c for c in declared if c not in configs]
        return {
            "name": b.name,
            "version": b.version,
            "pretty_name": b.pretty_name or b.name,
            "description": b.description,
            "license": b.license,
            "homepage": b.homepage,
            "citation": b.citation,
            "task_categories": list(b.task_categories),
            "task_ids": list(b.task_ids),
            "multilinguality": list(b.multilinguality),
            "source_datasets": list(b.source_datasets),
            "paperswithcode_id": b.paperswithcode_id,
            "release_notes": b.release_notes.get(b.version, ""),
            "release_date": b.release_dates.get(b.version),
            "builder": f"{type(b).__module__}.{type(b).__qualname__}",
            "sources": self.sources.manifest(),
            "configs": configs,
            "skipped_configs": skipped_configs,
            # a build of some configs only (--config) or with skipped splits is partial: publish
            # refuses it unless told otherwise, and the card says what is missing
            "partial": bool(missing_configs) or any(v.get("skipped_splits") for v in configs.values()),
            "missing_configs": missing_configs,
            "errata_applied": [e.to_dict() for e in b.errata_applied],
            "errata_pending": [e.to_dict() for e in b.errata() if e not in b.errata_applied],
            "seed": b.seed,
            "reproducible": bool(getattr(b, "reproducible", True)),
            **({"rai": dict(b.rai)} if b.rai else {}),  # Croissant RAI fields only the builder knows
            "tool_versions": _tool_versions(),
            "fingerprint_definition": "sha256 of the Arrow IPC stream of the split "
            f"(schema without metadata, {CANONICAL_BATCH_ROWS}-row batches)",
        }


class Release:
    """A release directory on disk, read through its manifest.

    The folder is untrusted: ``release.json`` is checked against the schema of
    :mod:`benchsmith.manifest` when the release is opened (a ``ReleaseError``, exit 2, names
    the file and the JSON path of the defect), and every data file is checked before it is
    read (:meth:`files`): a regular file, not a symlink, inside the release. ``info`` is the
    typed :class:`~benchsmith.manifest.ReleaseInfo` every accessor goes through; ``manifest``
    stays the parsed dict for readers of metadata the schema does not type.
    """

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.manifest, self.info = read_manifest(self.path)

    @property
    def name(self) -> str:
        return self.info.name

    @property
    def version(self) -> str:
        return self.info.version

    def configs(self) -> list[str]:
        return list(self.info.configs)

    def config_info(self, config: str) -> ConfigInfo:
        try:
            return self.info.configs[config]
        except KeyError:
            raise ConfigError(
                f"release {self.name} {self.version} has no config {config!r}",
                hint=did_you_mean(config, self.info.configs),
            ) from None

    def splits(self, config: str) -> list[str]:
        return list(self.config_info(config).splits)

    def split_info(self, config: str, split: str) -> ManifestSplitInfo:
        """The typed split (``info["fingerprint"]`` also works, for readers of the dict)."""
        splits = self.config_info(config).splits
        if split not in splits:
            raise ConfigError(
                f"release {self.name} {self.version} config {config!r} has no split {split!r}",
                hint=did_you_mean(split, splits),
            )
        return splits[split]

    def num_examples(self, config: str, split: str) -> int:
        return self.split_info(config, split).num_examples

    def features(self, config: str) -> datasets.Features:
        """The config's features (a copy: callers may change it)."""
        return self.config_info(config).features.copy()

    def check_features(self) -> None:
        """Parse every config's features now (benchsmith.features, else ``datasets``): a ReleaseError naming the
        config and the feature when one cannot be read (opening a release checks their shape
        only, see :mod:`benchsmith.manifest`)."""
        for info in self.info.configs.values():
            _ = info.arrow_schema  # benchsmith's feature types first: datasets only where they cannot read it

    def fingerprints(self) -> dict[str, dict[str, str]]:
        """``{config: {split: fingerprint}}`` as the manifest records them (what the gate,
        the report and the publish marker compare)."""
        return {c: {s: i.fingerprint for s, i in info.splits.items()} for c, info in self.info.configs.items()}

    def _file_problem(self, rel: str) -> str | None:
        """Why ``<release>/<rel>`` must not be read (None: a regular file inside the release).

        ``rel`` passed the schema (relative, under data/, no '..', no '.'); here the filesystem
        is checked: ``lstat`` of every step says no symlink, and of the last a regular file, so
        the path cannot leave the release (the release folder itself may be reached through a
        symlink: only what is inside it counts). Checked before each read; a file swapped
        between the check and the read by someone with write access to the release is out of
        scope (they could as well change the data).
        """
        path = self.path
        parts = rel.split("/")
        for i, part in enumerate(parts):  # lstat each step: cheaper than resolve(), and as strict
            path = path / part
            try:
                st = os.lstat(path)
            except FileNotFoundError:
                return "missing"
            except NotADirectoryError:
                return "missing (a file stands where one of its folders should be)"
            except OSError as exc:
                fault = EnvironmentFault.from_os_error(exc)
                if fault is not None:
                    raise fault from None
                return f"unreadable ({exc.strerror})"
            if stat.S_ISLNK(st.st_mode):
                if i < len(parts) - 1:
                    return "reached through a symbolic link to a folder (a release holds regular files only)"
                return "a symbolic link (a release holds regular files only)"
        if not stat.S_ISREG(st.st_mode):
            return "not a regular file"
        return None

    def files(self, config: str, split: str) -> list[Path]:
        """The split's data files, each checked (see :meth:`_file_problem`); a ReleaseError
        naming release.json's entry otherwise: nothing outside the release is ever read."""
        info = self.split_info(config, split)
        out = []
        for i, rel in enumerate(info.files):
            problem = self._file_problem(rel)
            if problem is not None:
                raise ReleaseError(
                    f"configs.{config}.splits.{split}.files[{i}] {rel!r} is {problem}",
                    path=self.path / MANIFEST,
                    hint="Restore the release's files (or rebuild it with `benchsmith build ... --overwrite`)",
                )
            out.append(self.path / rel)
        return out

    def _unreadable(self, config: str, split: str, exc: Exception) -> ReleaseError:
        what = str(exc).split("\n")[0][:200] or type(exc).__name__
        return ReleaseError(
            f"{config}/{split}: the data files do not read as the features release.json records "
            f"({type(exc).__name__}: {what})",
            path=self.path,
            hint="Restore the release's files (or rebuild it with `benchsmith build ... --overwrite`)",
        )

    def table(self, config: str, split: str, columns: Sequence[str] | None = None) -> pa.Table:
        """The split as one Arrow table (reads every shard), in the declared Arrow types.

        Parquet renames list children (``item`` -> ``element``); casting back to the
        features' schema keeps tables comparable with what the writer fingerprinted.
        """
        files = self.files(config, split)
        schema = self.config_info(config).arrow_schema
        if columns is not None:
            missing = [c for c in columns if c not in schema.names]
            if missing:
                raise ConfigError(f"release {self.name} {self.version} config {config!r} has no column "
                                  f"{missing[0]!r}", hint=did_you_mean(missing[0], schema.names))
            schema = pa.schema([schema.field(c) for c in columns], metadata=schema.metadata)
        try:
            tables = []
            for f in files:  # ParquetFile.read: a third of read_table's cost on small files (no dataset layer)
                with pq.ParquetFile(f) as pf:
                    tables.append(pf.read(columns=columns))
            table = pa.concat_tables(tables) if len(tables) > 1 else tables[0]
            return table.cast(schema)
        except (pa.ArrowException, ValueError, KeyError) as exc:
            raise self._unreadable(config, split, exc) from None
        except OSError as exc:
            raise EnvironmentFault.from_os_error(exc) or self._unreadable(config, split, exc) from None

    def iter_batches(self, config: str, split: str, batch_size: int = 65_536) -> Iterator[pa.RecordBatch]:
        for f in self.files(config, split):
            try:
                yield from pq.ParquetFile(f).iter_batches(batch_size=batch_size)
            except (pa.ArrowException, ValueError) as exc:
                raise self._unreadable(config, split, exc) from None
            except OSError as exc:
                raise EnvironmentFault.from_os_error(exc) or self._unreadable(config, split, exc) from None

    def examples(self, config: str, split: str) -> Iterator[dict[str, Any]]:
        for batch in self.iter_batches(config, split):
            yield from batch.to_pylist()

    def verify_files(self) -> list[str]:
        """Cheap integrity: each data file's sha256 against the manifest (``[]`` = intact).

        Returns one line per problem (a missing, changed, linked or unrecorded file). Releases
        written before per-file digests were recorded fall back to the full :meth:`verify`.
        """
        problems = []
        for config, split, info in self.info.iter_splits():
            if info.sha256 is None:
                return [f"{c}: fingerprint differs" for c in self.verify()]
            for rel, expected in zip(info.files, info.sha256, strict=True):
                problem = self._file_problem(rel)
                if problem is not None:
                    problems.append(f"{rel}: {problem}")
                elif sha256_file(self.path / rel) != expected:
                    problems.append(f"{rel}: sha256 differs from release.json")
        data = self.path / "data"
        if data.is_dir() and not data.is_symlink():
            recorded = {f for _, _, info in self.info.iter_splits() for f in info.files}
            for path in sorted(data.rglob("*.parquet")):
                rel = path.relative_to(self.path).as_posix()
                if rel not in recorded:
                    problems.append(f"{rel}: not in release.json")
        return problems

    def require_intact(self) -> None:
        """ReleaseError unless every data file matches the manifest (see :meth:`verify_files`)
        and every config's features read (:meth:`check_features`)."""
        self.check_features()
        problems = self.verify_files()
        if problems:
            raise ReleaseError(
                f"release {self.name} {self.version} was changed on disk: {'; '.join(problems[:3])}"
                + (f" (+{len(problems) - 3} more)" if len(problems) > 3 else ""),
                path=self.path,
                hint="Rebuild it (`benchsmith build ... --overwrite`) or restore the files; "
                "a validated or published release must not change",
            )

    def verify(self) -> list[str]:
        """Recompute every split's fingerprint; returns the ``config/split`` that differ."""
        return [f"{c}/{s}" for c, s, info in self.info.iter_splits()
                if fingerprint_table(self.table(c, s)) != info.fingerprint]

    @property
    def reports_dir(self) -> Path:
        """``<release>/reports``: where validation writes its report."""
        from benchsmith.registry import reports_dir

        return reports_dir(self.path)

    def summary(self) -> dict[str, Any]:
        """What ``benchsmith show`` prints."""
        from benchsmith.registry import status

        self.check_features()
        info = self.info
        return {
            "name": self.name,
            "version": self.version,
            "path": str(self.path),
            **status(self.path),
            "partial": info.partial,
            "missing_configs": list(info.missing_configs),
            "license": info.license,
            "configs": {c: {s: i.num_examples for s, i in ci.splits.items()} for c, ci in info.configs.items()},
            "skipped": {c: dict(ci.skipped_splits) for c, ci in info.configs.items() if ci.skipped_splits}
            | {c: dict(s) for c, s in info.skipped_configs.items()},
            "errata_applied": [e["id"] for e in info.errata_applied],
            "sources": {
                n: {f: r.get("status") for f, r in (s.get("files") or {}).items()}
                for n, s in info.sources.items()
            },
        }


def find_releases(registry: Path, name: str) -> list[Release]:
    """Every release of ``name`` in a registry, oldest version first.

    A folder ``<registry>/<name>/<version>`` whose release.json names another dataset or
    version is a ReleaseError: a registry lookup must return what it was asked for.
    """
    from benchsmith.registry import version_dirs
    from benchsmith.semver import parse_version

    out = []
    for d in version_dirs(registry, name):
        try:
            parse_version(d.name)
        except ConfigError:  # not a version folder (e.g. a user's scratch copy)
            continue
        release = Release(d)
        if (release.name, release.version) != (name, d.name):
            raise ReleaseError(
                f"release.json names {release.name} {release.version}, but the folder is {name}/{d.name}",
                path=d / MANIFEST,
                hint="A registry folder holds the release it is named after: move or rebuild it",
            )
        out.append(release)
    return sorted(out, key=lambda r: parse_version(r.version))
