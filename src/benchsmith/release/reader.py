"""The reader: :class:`Release`, a release directory on disk, and :func:`find_releases`.

A release folder is untrusted input: opening one reads ``release.json`` into the typed
:class:`~benchsmith.manifest.ReleaseInfo` (``Release.info``; every check of
:mod:`benchsmith.manifest` applies), and every data file is checked before it is read.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pyarrow as pa
import pyarrow.parquet as pq

from benchsmith.errors import ConfigError, EnvironmentFault, ReleaseError, did_you_mean
from benchsmith.fingerprint import fingerprint_table
from benchsmith.manifest import ConfigInfo, ReleaseInfo, SplitInfo, read_manifest
from benchsmith.registry import MANIFEST, reports_dir, version_dirs
from benchsmith.seal import status
from benchsmith.semver import parse_version
from benchsmith.source import sha256_file

if TYPE_CHECKING:
    import datasets


class Release:
    """A release directory on disk, read through its manifest.

    The folder is untrusted: ``release.json`` is checked against the schema of
    :mod:`benchsmith.manifest` when the release is opened (a ``ReleaseError``, exit 2, names
    the file and the JSON path of the defect), and every data file is checked before it is
    read (:meth:`files`): a regular file, not a symlink, inside the release. ``info`` is the
    typed :class:`~benchsmith.manifest.ReleaseInfo` every reader goes through (metadata the
    schema does not type is in ``info.extra``); there is no untyped manifest dict.

    The reading API a measure, a check or a metric uses::

        release = Release("registry/my_bench/1.1.0")
        release.info.configs["default"].splits["test"].num_examples   # the typed manifest
        release.num_examples("default", "test")                       # the same
        table = release.table("default", "test", ["id", "label"])     # a pyarrow.Table
        release.features("default")["label"].names                   # datasets.Features
        for example in release.examples("default", "test"): ...       # dicts, streamed

    A measure, a check or a metric receives the release; ``Release(path)`` opens a release
    folder (``<registry>/<name>/<version>``).
    """

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.info: ReleaseInfo = read_manifest(self.path)

    @classmethod
    def written(cls, path: str | Path, info: ReleaseInfo) -> Release:
        """The release the writer has just written at ``path``, whose ``release.json`` is ``info``'s
        ``to_dict()``: opened without reading and checking that file again. For the writer only: a folder from
        elsewhere is opened with ``Release(path)``."""
        release = cls.__new__(cls)
        release.path, release.info = Path(path), info
        return release

    @property
    def name(self) -> str:
        """The dataset's release name (``info.name``)."""
        return self.info.name

    @property
    def version(self) -> str:
        """The release's version (``info.version``)."""
        return self.info.version

    def configs(self) -> list[str]:
        """The names of the configs built, in the manifest's order."""
        return list(self.info.configs)

    def config_info(self, config: str) -> ConfigInfo:
        """The typed config (``info.configs[config]``); an unknown name is a ConfigError with suggestions."""
        try:
            return self.info.configs[config]
        except KeyError:
            raise ConfigError(
                f"release {self.name} {self.version} has no config {config!r}",
                hint=did_you_mean(config, self.info.configs),
            ) from None

    def splits(self, config: str) -> list[str]:
        """The names of the config's splits that were built."""
        return list(self.config_info(config).splits)

    def split_info(self, config: str, split: str) -> SplitInfo:
        """The typed split (``info["fingerprint"]`` also works, for readers of the dict)."""
        splits = self.config_info(config).splits
        if split not in splits:
            raise ConfigError(
                f"release {self.name} {self.version} config {config!r} has no split {split!r}",
                hint=did_you_mean(split, splits),
            )
        return splits[split]

    def num_examples(self, config: str, split: str) -> int:
        """The split's example count as the manifest records it (no data file is read)."""
        return self.split_info(config, split).num_examples

    def features(self, config: str) -> datasets.Features:
        """The config's features (a copy: callers may change it)."""
        return self.config_info(config).features.copy()

    def check_features(self) -> None:
        """Parse every config's features now (``datasets.Features.from_dict``): a ReleaseError naming the
        config and the feature when one cannot be read (opening a release checks their shape
        only, see :mod:`benchsmith.manifest`)."""
        for info in self.info.configs.values():
            _ = info.arrow_schema  # parses the features: a dtype pyarrow cannot map fails here

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
            if table.schema.equals(schema, check_metadata=True):
                return table
            return table.cast(schema)  # parquet names list items `element`, the features `item`
        except (pa.ArrowException, ValueError, KeyError) as exc:
            raise self._unreadable(config, split, exc) from None
        except OSError as exc:
            raise EnvironmentFault.from_os_error(exc) or self._unreadable(config, split, exc) from None

    def iter_batches(self, config: str, split: str, batch_size: int = 65_536) -> Iterator[pa.RecordBatch]:
        """The split as Arrow record batches, shard after shard: memory bounded by ``batch_size``."""
        for f in self.files(config, split):
            try:
                yield from pq.ParquetFile(f).iter_batches(batch_size=batch_size)
            except (pa.ArrowException, ValueError) as exc:
                raise self._unreadable(config, split, exc) from None
            except OSError as exc:
                raise EnvironmentFault.from_os_error(exc) or self._unreadable(config, split, exc) from None

    def examples(self, config: str, split: str) -> Iterator[dict[str, Any]]:
        """The split's examples as dicts, in order (a ``ClassLabel`` as its index), streamed."""
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
        return reports_dir(self.path)

    def summary(self) -> dict[str, Any]:
        """What ``benchsmith show`` prints."""
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
