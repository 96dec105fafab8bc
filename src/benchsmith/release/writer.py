"""The writer and its commit: :class:`ReleaseWriter` builds one version of a dataset.

It streams each split's examples through :class:`~benchsmith.release.encoding.SplitEncoder`
into :class:`~benchsmith.release.shards.ShardSink` in record batches of ``batch_rows`` rows,
so memory stays bounded whatever the split size, and records the release's metadata as a typed
:class:`~benchsmith.manifest.ReleaseInfo` (``release.json`` is its ``to_dict()``). Writing is
deterministic (fixed parquet options, builder order, no timestamps inside data files) and
atomic: everything goes into a hidden temporary sibling that is renamed into place at the very
end, so a builder that raises, a schema error or Ctrl-C leaves no release directory behind.
"""

from __future__ import annotations

import itertools
import json
import platform
import shutil
from collections.abc import Generator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor, wait
from dataclasses import dataclass
from importlib.metadata import version
from pathlib import Path
from typing import Any

import pyarrow as pa

import benchsmith
from benchsmith import fingerprint_registry, progress, registry
from benchsmith.builder import Builder, Config
from benchsmith.cards import card  # a module: cards.card reads releases (benchsmith.release.reader)
from benchsmith.changelog import newest_older, record_changes
from benchsmith.erratum import ErrataApplier
from benchsmith.errors import BenchsmithError, EnvironmentFault, MissingSourceError, ReleaseError
from benchsmith.fingerprint import CANONICAL_BATCH_ROWS
from benchsmith.hub_guard import guard_hub_tag
from benchsmith.manifest import ConfigInfo, ReleaseInfo, SplitInfo
from benchsmith.registry import MANIFEST
from benchsmith.release.encoding import SplitEncoder
from benchsmith.release.reader import Release, find_releases
from benchsmith.release.shards import DEFAULT_BATCH_ROWS, DEFAULT_SHARD_BYTES, ShardSink
from benchsmith.source import Sources

#: release.json's key order as the writer has always written it (``ReleaseInfo.to_dict`` keeps it)
_KEY_ORDER = ("name", "version", "pretty_name", "description", "license", "homepage", "citation",
              "task_categories", "task_ids", "multilinguality", "source_datasets", "paperswithcode_id",
              "release_notes", "release_date", "builder", "sources", "configs", "skipped_configs", "partial",
              "missing_configs", "errata_applied", "errata_pending", "seed", "reproducible", "rai",
              "tool_versions", "fingerprint_definition")


@dataclass
class SkippedSplit:
    """A split left out of the build (``skip_missing``): why, as release.json records it."""

    reason: str


def _tool_versions() -> dict[str, str]:
    return {
        "benchsmith": benchsmith.__version__,
        "datasets": version("datasets"),
        "pyarrow": pa.__version__,
        "python": platform.python_version(),
    }


def _settle(pending: Future | None) -> None:
    """Wait for a write in flight without raising its error (the caller is already unwinding)."""
    if pending is not None:
        wait([pending])


def _built(splits: dict[str, dict[str, SplitInfo | SkippedSplit]]) -> dict[str, dict[str, str]]:
    """``{config: {split: fingerprint}}`` of the splits a build wrote (skipped ones left out)."""
    built = {c: {s: i.fingerprint for s, i in v.items() if isinstance(i, SplitInfo)} for c, v in splits.items()}
    return {c: v for c, v in built.items() if v}


def _run(job: Generator[None, None, Any], *, to_pause: bool = False) -> Any:
    """Run a split's writing (:meth:`ReleaseWriter._write_split`) to its pause (``to_pause``:
    None if it paused) or to its end: its record."""
    try:
        next(job)
    except StopIteration as done:
        return done.value
    if to_pause:
        return None
    try:
        next(job)
    except StopIteration as done:
        return done.value
    raise AssertionError("a split's writing pauses once")


def _finish(paused: list[tuple[str, str, Generator[None, None, Any]]],
            splits: dict[str, dict[str, Any]], *, keep: int = 0) -> None:
    """Run the paused splits but the last ``keep`` to their end, in order, recording each."""
    while len(paused) > keep:
        config, split, job = paused.pop(0)  # out of the list first: if it raises, it is closed
        splits[config][split] = _run(job)


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
        self._written: ReleaseInfo | None = None  # the manifest _write_into wrote last

    @property
    def target(self) -> Path:
        return self.registry / self.builder.name / self.builder.version

    def write(self) -> Release:
        """Build into a staging sibling and commit it; the version's lock is held throughout."""
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
                    guard_hub_tag(self.builder.hub_repo, self.builder.version, _built(splits))
                registry.commit(tmp, target, overwrite=self.overwrite)
            except BaseException as exc:
                shutil.rmtree(tmp, ignore_errors=True)
                if isinstance(exc, OSError) and not isinstance(exc, BenchsmithError) and exc.filename is None:
                    # a write() that failed (EFBIG, EIO...) names no file: name the release being written
                    raise EnvironmentFault.of(exc, where=target) from exc
                raise
        assert self._written is not None  # _write_into sets it
        return Release.written(target, self._written)  # its release.json: what _write_into wrote

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
        # One writer thread for the whole release (not one per split: XCOPA has 45 small ones).
        # Splits overlap by one: split N's last batch is written while split N+1 is read and
        # encoded (ComVE's 16 one-batch splits were written with the main thread waiting), and
        # split N is finished (renames, checks) before split N+1's, so errors keep their order.
        paused: list[tuple[str, str, Generator[None, None, SplitInfo | SkippedSplit]]] = []
        with ThreadPoolExecutor(max_workers=1, thread_name_prefix="benchsmith-writer") as pool:
            try:
                for config in self.configs:
                    splits[config.name] = {}
                    for split in config.splits:
                        job = self._write_split(tmp, config, split, pool)
                        try:
                            record = _run(job, to_pause=True)
                        except BaseException:
                            _finish(paused, splits)  # the earlier split's own error came first
                            raise
                        if record is None:
                            paused.append((config.name, split, job))
                            _finish(paused, splits, keep=1)
                        else:  # skipped or failed at once: the earlier split first (release order)
                            _finish(paused, splits)
                            splits[config.name][split] = record
                _finish(paused, splits)
            finally:
                for _, _, job in paused:  # unwinding: settle its write, close its files
                    job.close()
        if not any(isinstance(s, SplitInfo) for c in splits.values() for s in c.values()):
            raise ReleaseError(
                f"{self.builder.name}: no split could be built",
                hint="Check --sources: every split was skipped for missing files",
            )
        info = self._manifest(splits)
        (tmp / MANIFEST).write_text(json.dumps(info.to_dict(), indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
        # opened once (Release.written): the manifest just written is read again only where
        # record_changes rewrote it (a previous version to compare with)
        staged = Release(tmp)
        if record_changes(staged, self.previous if self.previous is not None
                          else lambda: newest_older(find_releases(self.registry, staged.name), staged.version)
                          ) is not None:
            staged = Release(tmp)
        card.write_card_files(staged, self.builder, staged=True)
        self._written = staged.info  # the committed release's manifest (write())
        return splits

    def _write_split(
        self, root: Path, config: Config, split: str, pool: ThreadPoolExecutor
    ) -> Generator[None, None, SplitInfo | SkippedSplit]:
        """Write one split; pauses once (``yield``) while its last batch is in the writer thread,
        so that the caller can start the next split (:func:`_run`), and returns its record."""
        enc = SplitEncoder(config, split, config.policy.id_field)
        errata = ErrataApplier(self.builder.errata_applied, config.name, split, enc.id_field, config.features)
        sink = ShardSink(root / "data" / config.name, split, enc.schema, self.batch_rows, self.shard_bytes)
        # One writer thread: parquet encoding and sha256 release the GIL, so batch N is
        # written while Python encodes batch N+1 (or, for the last, the next split's first).
        # At most one batch waits (bounded memory), and a single worker keeps the order
        # (determinism).
        pending: Future | None = None
        n_rows = 0
        try:
            examples = iter(errata.apply(self.builder.examples(config, split, self.sources)))
            # islice pulls a batch at C speed; memory is bounded by batch_rows.
            chunks = iter(lambda: list(itertools.islice(examples, self.batch_rows)), [])
            with progress.bar(f"{self.builder.name}/{config.name}/{split}") as bar:
                while (rows := next(chunks, [])) or n_rows == 0:
                    batch = enc.encode(rows, n_rows)
                    if pending is not None:
                        pending.result()
                    pending = pool.submit(sink.write, batch)
                    n_rows += batch.num_rows
                    bar.advance(batch.num_rows)
                    if not batch.num_rows:  # empty split: a schema-only file was written
                        break
            yield  # the last batch is being written: the caller starts the next split meanwhile
            if pending is not None:
                pending.result()
            errata.finish()
            info = sink.finish()
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

    def _manifest(self, splits: dict[str, dict[str, SplitInfo | SkippedSplit]]) -> ReleaseInfo:
        """The release's metadata, typed: what ``release.json`` records (see :mod:`benchsmith.manifest`)."""
        b = self.builder
        configs: dict[str, ConfigInfo] = {}
        skipped_configs: dict[str, dict[str, str]] = {}
        for config in self.configs:
            built = {s: i for s, i in splits[config.name].items() if isinstance(i, SplitInfo)}
            skipped = {s: i.reason for s, i in splits[config.name].items() if isinstance(i, SkippedSplit)}
            if not built:
                skipped_configs[config.name] = skipped
                continue
            configs[config.name] = ConfigInfo(
                name=config.name,
                description=config.description,
                languages=tuple(config.languages),
                features_dict=config.features.to_dict(),
                policy=config.policy.to_dict(),
                metadata=dict(config.metadata),
                splits=built,
                skipped_splits=skipped,
            )
        declared = [c.name for c in b.configs()]
        missing_configs = [c for c in declared if c not in configs]
        return ReleaseInfo(
            name=b.name,
            version=b.version,
            pretty_name=b.pretty_name or b.name,
            description=b.description,
            license=b.license,
            homepage=b.homepage,
            citation=b.citation,
            task_categories=tuple(b.task_categories),
            task_ids=tuple(b.task_ids),
            multilinguality=tuple(b.multilinguality),
            source_datasets=tuple(b.source_datasets),
            paperswithcode_id=b.paperswithcode_id,
            release_notes=b.release_notes.get(b.version, ""),
            release_date=b.release_dates.get(b.version),
            builder=f"{type(b).__module__}.{type(b).__qualname__}",
            sources=self.sources.manifest(),
            configs=configs,
            skipped_configs=skipped_configs,
            # a build of some configs only (--config) or with skipped splits is partial: publish
            # refuses it unless told otherwise, and the card says what is missing
            partial=bool(missing_configs) or any(c.skipped_splits for c in configs.values()),
            missing_configs=tuple(missing_configs),
            errata_applied=tuple(e.to_dict() for e in b.errata_applied),
            errata_pending=tuple(e.to_dict() for e in b.errata() if e not in b.errata_applied),
            seed=b.seed,
            reproducible=bool(getattr(b, "reproducible", True)),
            extra={"rai": dict(b.rai)} if b.rai else {},  # Croissant RAI fields only the builder knows
            tool_versions=_tool_versions(),
            fingerprint_definition="sha256 of the Arrow IPC stream of the split "
            f"(schema without metadata, {CANONICAL_BATCH_ROWS}-row batches)",
            _order=_KEY_ORDER,
        )
