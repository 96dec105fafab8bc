"""Raw sources: declaration, resolution and sha256 verification.

A builder declares each raw input as a :class:`Source`: a name, where upstream
publishes it, its licence, and the files (relative paths inside the source's
folder) the builder reads. Checksums are data, not code: they live in a
``checksums.tsv`` beside the builder (columns ``source``, ``path``, ``size``,
``sha256``), written by ``benchsmith sources NAME --checksums DIR``.

Resolution (``resolve_sources``):

* ``--sources DIR``: the source is ``DIR/<source.name>/`` laid out like the
  official download (TFDS's "manual dir"); ``../shared/raw`` is laid out so.
* otherwise, if the source has a downloadable ``url``, it is fetched once into
  ``$BENCHSMITH_HOME/downloads/<name>/`` (archives are extracted) and reused.
* otherwise a :class:`~benchsmith.errors.MissingSourceError` says where to put it.

Every declared file is sha256-checked. A file whose checksum is not yet known is
accepted and its observed sha256 is recorded in ``release.json``; ``resolve_sources``
warns once per source with such files (``verify_source`` alone, as ``sources
--checksums`` uses it, does not: there no file is expected to be registered yet).

A source folder laid out as GitHub's "Download ZIP" extracts it, with the files under
one top folder ``<repo>-<branch>/`` (``DIR/xcopa/xcopa-master/data/...``), is
accepted: when the declared files are not directly under ``DIR/<source>/`` and it
holds a single folder that has them, that folder is the source's root.

Messages name the dataset (``benchsmith sources xcopa``), never a placeholder: the
``dataset`` argument, else the registered builder that declares the source.
Optional files (``Source.optional``) may be absent; a builder asks
``ResolvedSource.has(path)`` before reading them, and ``path()`` on an absent
file raises ``MissingSourceError`` naming it.
"""

from __future__ import annotations

import csv
import hashlib
import http.client
import logging
import os
import re
import shutil
import tempfile
import urllib.parse
import urllib.request
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from benchsmith.archive import archive_kind, extract_archive
from benchsmith.cache import benchsmith_home
from benchsmith.errors import (
    ChecksumError,
    ConfigError,
    MissingSourceError,
    SourceError,
    did_you_mean,
    writing,
)

log = logging.getLogger(__name__)

CHECKSUM_COLUMNS = ("source", "path", "size", "sha256")
_SHA256 = re.compile(r"[0-9a-fA-F]{64}")


@dataclass(frozen=True)
class Source:
    """One raw input of a builder.

    Attributes:
        name: folder name under ``--sources DIR`` (``comve``, ``xcopa`` ...).
        url: upstream download (archive or file); empty when it cannot be fetched.
        license: SPDX id or upstream's wording.
        files: relative paths the builder needs (forward slashes, as upstream names them).
        optional: relative paths the builder reads when present.
        description: one line for ``benchsmith sources``.
        archive_root: folder inside the downloaded archive that corresponds to the
            source folder (e.g. ``COPA-resources``); empty when the archive's root is it.

    A build finds the files under ``--sources DIR/<name>/``, or downloads ``url`` into
    ``$BENCHSMITH_HOME/downloads/<name>/`` (an archive is extracted, ``archive_root`` inside it
    taken as the folder), and checks each file against the builder's ``checksums.tsv``::

        Source("copa", url="https://example.org/COPA-resources.tgz", license="BSD-2-Clause",
               files=("datasets/copa-dev.xml", "datasets/copa-test.xml"),
               description="English COPA, as its authors distribute it", archive_root="COPA-resources")
    """

    name: str
    url: str = ""
    license: str = ""
    files: tuple[str, ...] = ()
    optional: tuple[str, ...] = ()
    description: str = ""
    archive_root: str = ""

    @property
    def all_files(self) -> tuple[str, ...]:
        return tuple(self.files) + tuple(self.optional)


@dataclass(frozen=True)
class FileRecord:
    """What verification found for one file."""

    path: str
    size: int | None
    sha256: str | None
    expected_sha256: str | None
    status: str  # "verified" | "unregistered" | "absent"


@dataclass
class ResolvedSource:
    """A source found on disk, with every present file verified."""

    source: Source
    root: Path
    records: dict[str, FileRecord] = field(default_factory=dict)
    origin: str = "sources-dir"  # or "download-cache"
    dataset: str = ""  # the dataset whose build resolved it (named in messages)

    def has(self, rel: str) -> bool:
        rec = self.records.get(rel)
        return rec is not None and rec.status != "absent"

    def path(self, rel: str) -> Path:
        """Absolute path of a declared file; raises if it is absent."""
        if rel not in self.records:
            raise ConfigError(
                f"source {self.source.name!r} does not declare file {rel!r}",
                hint=f"Declare it in the builder's Source(files=...). {did_you_mean(rel, self.records)}",
            )
        if not self.has(rel):
            raise MissingSourceError(
                f"source file {rel!r} of {self.source.name!r} is missing",
                path=self.root / rel,
                hint=f"Put the upstream file there (see {sources_command(self.source, self.dataset)}), "
                "or build only the splits the sources provide with --skip-missing",
            )
        return self.root / rel

    def manifest(self) -> dict:
        """The entry written into release.json."""
        return {
            "url": self.source.url,
            "license": self.source.license,
            "origin": self.origin,
            "files": {
                r.path: {"sha256": r.sha256, "size": r.size, "status": r.status}
                for r in self.records.values()
            },
        }


class Sources(Mapping[str, ResolvedSource]):
    """All resolved sources of one build, looked up by source name: what
    ``Builder.examples(config, split, sources)`` reads from (``sources.path(name, rel)``)."""

    def __init__(self, resolved: Mapping[str, ResolvedSource]):
        self._resolved = dict(resolved)

    def __getitem__(self, name: str) -> ResolvedSource:
        try:
            return self._resolved[name]
        except KeyError:
            raise ConfigError(
                f"no source named {name!r} in this build", hint=did_you_mean(name, self._resolved)
            ) from None

    def __iter__(self):
        return iter(self._resolved)

    def __len__(self) -> int:
        return len(self._resolved)

    def path(self, source: str, rel: str) -> Path:
        """The verified file ``rel`` (a path of the source's ``files``) of the source named ``source``."""
        return self[source].path(rel)

    def manifest(self) -> dict:
        return {name: rs.manifest() for name, rs in sorted(self._resolved.items())}


# --------------------------------------------------------------------------- checksums


def sha256_file(path: Path) -> str:
    """Hex sha256 of a file in bounded memory (``hashlib.file_digest``)."""
    with open(path, "rb") as fh:
        return hashlib.file_digest(fh, "sha256").hexdigest()


def read_checksums(path: Path, *, dataset: str | None = None) -> dict[tuple[str, str], tuple[int | None, str]]:
    """Read a checksums TSV into ``{(source, path): (size, sha256)}``.

    A missing file means "no checksums known yet" and returns ``{}``. ``dataset`` names
    the builder in messages (default: the folder holding the file, ``builders/<dataset>/``).
    """
    if not path.exists():
        return {}
    regenerate = (f"Regenerate it with `benchsmith sources {dataset or Path(path).parent.name} --checksums DIR --write` "
                  "(redirecting with `> checksums.tsv` empties the file before benchsmith reads it)")
    out: dict[tuple[str, str], tuple[int | None, str]] = {}
    with open(path, encoding="utf-8", newline="") as fh:
        rows = csv.reader(fh, delimiter="\t")
        header = next(rows, None)
        if header is None or tuple(header) != CHECKSUM_COLUMNS:
            raise SourceError(
                f"checksums header is {header!r}; expected {list(CHECKSUM_COLUMNS)!r}",
                path=path,
                line=1,
                hint=regenerate,
            )
        for lineno, row in enumerate(rows, start=2):
            if not row or row[0].startswith("#"):
                continue
            if len(row) != 4 or not _SHA256.fullmatch(row[3]) or not (row[2] == "" or row[2].isdigit()):
                raise SourceError(
                    f"malformed checksum row {row!r}; expected source, path, size (digits or empty), 64-hex sha256",
                    path=path,
                    line=lineno,
                    hint=regenerate,
                )
            size = int(row[2]) if row[2] else None
            out[(row[0], row[1])] = (size, row[3].lower())
    return out


def checksum_lines(resolved: Iterable[ResolvedSource]) -> list[str]:
    """TSV lines (with header) that register the observed checksums."""
    lines = ["\t".join(CHECKSUM_COLUMNS)]
    for rs in resolved:
        for rec in rs.records.values():
            if rec.status != "absent":
                lines.append(f"{rs.source.name}\t{rec.path}\t{rec.size}\t{rec.sha256}")
    return lines


# --------------------------------------------------------------------------- resolution


#: dataset name per declared source, filled by ``builder.register`` (kept here, not read from
#: the builder registry, so that this module never imports ``benchsmith.builder``)
_DECLARED_BY: dict[Source, set[str]] = {}


def declare_sources(dataset: str, sources: Iterable[Source]) -> None:
    """Record that ``dataset``'s builder declares ``sources`` (for :func:`sources_command`)."""
    for source in sources:
        _DECLARED_BY.setdefault(source, set()).add(dataset)


def forget_sources(dataset: str) -> None:
    """Undo :func:`declare_sources` for ``dataset`` (its builder was unregistered)."""
    for names in _DECLARED_BY.values():
        names.discard(dataset)


def datasets_declaring(source: Source) -> list[str]:
    """Names of the builders registered so far that declare ``source`` (no discovery: a build
    has imported its own builder)."""
    return sorted(_DECLARED_BY.get(source, ()))


def sources_command(source: Source, dataset: str | None = None, register: str | None = None) -> str:
    """```benchsmith sources xcopa``` (with ``--checksums DIR`` when ``register`` is given) for messages:
    ``dataset``, else the builder that declares ``source``, else the source's own name."""
    names = [dataset] if dataset else datasets_declaring(source) or [source.name]
    suffix = f" --checksums {register}" if register else ""
    return " or ".join(f"`benchsmith sources {n}{suffix}`" for n in names)


def register_dir(root: Path, source: Source) -> str:
    """The DIR of ``--checksums DIR`` for a source found at ``root`` (``DIR/<source>/`` or, GitHub-zip
    layout, ``DIR/<source>/<repo>-<branch>/``); ``DIR`` when ``root`` is laid out otherwise."""
    for up in (root, root.parent):
        if up.name == source.name:
            return str(up.parent)
    return "DIR"


def _folders(root: Path) -> list[str]:
    if not root.is_dir():
        return []
    return sorted(p.name for p in root.iterdir() if p.is_dir() and not p.name.startswith("."))


def _folders_with_files(root: Path, source: Source) -> list[str]:
    """The folders of ``root`` that hold declared files of ``source``, when ``root`` itself holds none."""
    if not root.is_dir() or any((root / rel).is_file() for rel in source.all_files):
        return []
    return [f for f in _folders(root) if any((root / f / rel).is_file() for rel in source.all_files)]


def github_zip_root(root: Path, source: Source) -> Path | None:
    """The top folder of a GitHub "Download ZIP" layout under ``root`` (``xcopa/xcopa-master/``):
    the one folder holding declared files when ``root`` holds none itself (stray folders beside
    it, e.g. ``__MACOSX/``, are ignored); ``None`` otherwise (the caller reports what is missing)."""
    with_files = _folders_with_files(root, source)
    return root / with_files[0] if len(with_files) == 1 else None


def verify_source(
    source: Source,
    root: Path,
    checksums: Mapping[tuple[str, str], tuple[int | None, str]],
    *,
    allow_missing: bool = False,
    dataset: str | None = None,
) -> ResolvedSource:
    """Check every declared file of ``source`` under ``root``.

    ``root`` may hold the files under one GitHub-zip top folder (see :func:`github_zip_root`).
    Files without a registered sha256 are accepted as ``unregistered`` without a word:
    :func:`resolve_sources` warns about them (``sources --checksums`` expects them).
    ``dataset`` names the builder in messages (see :func:`sources_command`).

    Raises:
        MissingSourceError: a required file is absent (all absent files are named)
            and ``allow_missing`` is false.
        ChecksumError: a present file's sha256 differs from the registered one.
    """
    given = Path(root)
    root = github_zip_root(given, source) or given
    top_folders = _folders_with_files(given, source)
    if len(top_folders) > 1:  # two extracted downloads side by side: which one is meant is a guess
        raise MissingSourceError(
            f"source {source.name!r}: none of its files is directly under {given}, and {len(top_folders)} "
            f"folders in it have them ({', '.join(top_folders)}); expected one layout: the files directly "
            f"under {given}, or under a single top folder as a GitHub zip extracts ({source.name}-master/)",
            path=given,
            hint="Keep one of those folders (or move its content up one level)",
        )
    records: dict[str, FileRecord] = {}
    missing: list[str] = []
    for rel in source.all_files:
        expected = checksums.get((source.name, rel))
        exp_sha = expected[1] if expected else None
        fpath = root / rel
        if not fpath.is_file():
            records[rel] = FileRecord(rel, None, None, exp_sha, "absent")
            if rel in source.files:
                missing.append(rel)
            continue
        actual = sha256_file(fpath)
        if exp_sha is not None and actual != exp_sha:
            raise ChecksumError(
                f"sha256 mismatch for source {source.name!r}: expected {exp_sha}, got {actual}",
                path=fpath,
                hint="The file is corrupt or a different upstream version; re-download it "
                f"(see {sources_command(source, dataset)}), or if upstream changed on purpose, "
                f"re-register with {sources_command(source, dataset, register=register_dir(root, source))}",
            )
        records[rel] = FileRecord(
            rel, fpath.stat().st_size, actual, exp_sha, "verified" if exp_sha else "unregistered"
        )
    if missing and not allow_missing:
        first = root / missing[0]
        more = f" (and {len(missing) - 1} more: {', '.join(missing[1:4])}...)" if len(missing) > 1 else ""
        folders = _folders(given) if root == given and len(missing) == len(source.files) else []
        layout = (f" (nor under its folder{'s' if len(folders) > 1 else ''} {', '.join(f + '/' for f in folders[:3])}"
                  f"{' ...' if len(folders) > 3 else ''}: a GitHub zip's single top folder is looked into)"
                  if folders else "")
        raise MissingSourceError(
            f"source {source.name!r} is missing {missing[0]!r}{more}{layout}",
            path=first,
            hint=f"Put the upstream files under {root} laid out as {sources_command(source, dataset)} lists"
            + (", or pass --skip-missing to build only the splits they provide" if source.files else ""),
        )
    return ResolvedSource(source, root, records, dataset=dataset or "")


def warn_unregistered(rs: ResolvedSource) -> None:
    """One warning per source whose files have no registered sha256 (accepted, recorded in release.json)."""
    files = [r.path for r in rs.records.values() if r.status == "unregistered"]
    if not files:
        return
    shown = ", ".join(files[:3]) + (f" and {len(files) - 3} more" if len(files) > 3 else "")
    log.warning(
        "source %s: %d file%s without a registered sha256 (%s): accepted for this build, the observed sha256 "
        "recorded in release.json, and the build is not compared with fingerprints.tsv; register them with %s", rs.source.name, len(files), "" if len(files) == 1 else "s", shown,
        sources_command(rs.source, rs.dataset or None, register=register_dir(rs.root, rs.source)),
    )


def resolve_sources(
    sources: Iterable[Source],
    checksums: Mapping[tuple[str, str], tuple[int | None, str]],
    sources_dir: Path | None = None,
    *,
    allow_missing: bool = False,
    download: bool = True,
    dataset: str | None = None,
) -> Sources:
    """Find and verify every source of a build (see module docstring); ``dataset`` names the
    builder in messages (default: the registered builder declaring each source)."""
    resolved: dict[str, ResolvedSource] = {}
    for src in sources:
        if sources_dir is not None:
            root = Path(sources_dir) / src.name
            if not root.is_dir():
                raise MissingSourceError(
                    f"no folder for source {src.name!r} under --sources",
                    path=root,
                    hint=f"Create {root} laid out like the official download "
                    f"({sources_command(src, dataset)} lists the files)",
                )
            rs = verify_source(src, root, checksums, allow_missing=allow_missing, dataset=dataset)
        else:
            if not src.url or not download:
                raise MissingSourceError(
                    f"source {src.name!r} has no download url and no --sources DIR was given",
                    hint=f"Pass --sources DIR with DIR/{src.name}/ laid out like the official download "
                    f"({sources_command(src, dataset)} lists the files)",
                )
            rs = verify_source(src, fetch(src), checksums, allow_missing=allow_missing, dataset=dataset)
            rs.origin = "download-cache"
        warn_unregistered(rs)
        resolved[src.name] = rs
    return Sources(resolved)


def _download(source: Source) -> Iterator[bytes]:
    """``source.url``'s bytes; a failure to fetch them (not to store them) is a :class:`SourceError`."""
    try:
        with urllib.request.urlopen(source.url, timeout=60) as resp:
            while block := resp.read(1 << 20):
                yield block
    except (OSError, ValueError, http.client.HTTPException) as exc:  # ValueError: a malformed url
        raise SourceError(
            f"could not download source {source.name!r} from {source.url}: {exc}",
            hint=f"Download it yourself and pass --sources DIR with DIR/{source.name}/",
        ) from exc


def fetch(source: Source, cache: Path | None = None) -> Path:
    """Download ``source.url`` once into the cache and return the source folder.

    Archives (.zip, .tar, .tar.gz, .tgz, .tar.bz2, .tar.xz) are extracted (see
    :func:`extract_archive`); a plain file is stored under its own name. Writing is
    atomic: a failed download or extraction leaves no folder behind, so a truncated
    archive is never cached. ``file://`` urls are accepted (used by the tests).

    Raises:
        SourceError: the download failed, or the archive is corrupt, truncated or
            holds an unsafe entry.
    """
    cache = cache or benchsmith_home() / "downloads"
    dest = cache / source.name
    if dest.is_dir():
        return dest / source.archive_root if source.archive_root else dest
    with writing(dest):  # the cache's disk (full, read-only): a fault naming the source's folder, exit 3
        cache.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=f".{source.name}-", dir=cache))
    try:
        fname = Path(urllib.parse.urlparse(source.url).path).name or "download"
        target = tmp / fname
        with writing(dest), open(target, "wb") as out:
            out.writelines(_download(source))
        with writing(dest):
            extracted = tmp / "content"
            extracted.mkdir()
            if archive_kind(target) is None:
                shutil.move(target, extracted / fname)
            else:
                extract_archive(target, extracted, origin=f"source {source.name!r} from {source.url}")
            os.replace(extracted, dest)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return dest / source.archive_root if source.archive_root else dest
