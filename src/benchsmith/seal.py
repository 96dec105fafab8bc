"""The seal: one digest over every byte of a validated release.

``validate`` seals a release after it has re-rendered the card: it lists every file of the
folder (relative POSIX path, size, sha256) and hashes that listing into one digest. From then
on every step that trusts the release (``publish``, ``audit``, ``evaluate``, ``show``, a Hub
upload) compares the bytes on disk with the seal; the manifest's own per-file sha256 is never
the authority (whoever edits a data file can edit release.json too, and release.json is sealed
like any other file).

Decisions:

* **Regular files only.** The folder is walked without following links (``os.scandir`` and
  ``lstat``); a symlink, FIFO, socket or device anywhere in it is a :class:`ReleaseError`
  naming it. Files are opened component by component with ``O_NOFOLLOW`` (``openat``), so a
  link swapped in after the walk is refused too, and nothing outside the folder is ever read.
* **Hidden entries** (a name starting with ``.``, at any depth: the ``.name.xxx.tmp`` of an
  atomic write, a build's ``.split-shard`` files) are in-progress leftovers, not part of the
  release: never listed, hashed, copied or uploaded. A link or special file is still refused
  there (hidden, or inside a hidden folder): "regular files only" holds for the whole folder.
* **By rule**: ``reports/validation.json`` and ``reports/validation.html`` are part of the
  release (copied and uploaded) but outside the digest: validation.json records the seal (it
  cannot hold its own digest), and validation.html is rendered from it. Every other file is
  sealed, other files under ``reports/`` (saved baseline results) included.
* **Canonical listing.** One line per sealed file, sorted by path, each the JSON array
  ``[path, size, sha256]`` (JSON escaping keeps any file name on one line), after a first line
  naming the listing's version; the digest is the sha256 of that text in UTF-8.
* **Where it is kept.** Never only inside the folder it seals when there is a place outside:
  whoever edits the folder could rewrite a seal kept there. Once published, the published
  marker (``<registry>/<name>/.published/<version>.json``) is the authority; before, for a
  release in a registry, the registry's seal record (``<registry>/<name>/.sealed/<version>.json``,
  written by ``validate``, :func:`benchsmith.registry.record_seal`); only a folder outside any
  registry (a download, a copy) is checked against the copy in ``reports/validation.json``
  (key ``seal``), and then a registered version's data is also checked against the builder's
  ``fingerprints.tsv`` (:func:`benchsmith.fingerprint_registry.require_registered`), the one
  record outside the folder there is.
* **Reading the report.** ``reports/validation.json`` is read through :func:`read_report`:
  opened component by component with ``O_NOFOLLOW`` and refused unless a regular file, so a
  link (or ``reports`` being a link, FIFO or device) is refused before anything is opened
  through it.
* **Cheap or full.** :func:`verify` with ``full=False`` compares the listing and the sizes
  only (``show`` by default, and says so); with ``full=True`` it hashes every file (publish,
  audit, evaluate, ``show --verify``). Each file is read once, streamed.
"""

from __future__ import annotations

import errno
import hashlib
import json
import os
import re
import stat
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from benchsmith import progress, registry
from benchsmith.errors import BenchsmithError, GateError, ReleaseError
from benchsmith.fingerprint_registry import require_registered

if TYPE_CHECKING:
    from benchsmith.release import Release

#: first line of the canonical listing: bump when the listing's rules change
LISTING_VERSION = "benchsmith-seal/1"
#: files of the release that are outside the digest (see the module docstring)
BY_RULE = ("reports/validation.json", "reports/validation.html")
_SHA256 = re.compile(r"[0-9a-f]{64}")
_CHUNK = 1 << 20


@dataclass(frozen=True)
class Entry:
    """One sealed file."""

    path: str
    size: int
    sha256: str


@dataclass(frozen=True)
class Seal:
    """The sealed listing of a release and its digest."""

    files: tuple[Entry, ...]

    @property
    def digest(self) -> str:
        return hashlib.sha256(listing_text(self.files).encode("utf-8")).hexdigest()

    def by_path(self) -> dict[str, Entry]:
        return {e.path: e for e in self.files}

    def to_dict(self) -> dict[str, Any]:
        return {
            "digest": self.digest,
            "listing": LISTING_VERSION,
            "by_rule": list(BY_RULE),
            "files": [{"path": e.path, "size": e.size, "sha256": e.sha256} for e in self.files],
        }

    @classmethod
    def from_dict(cls, obj: Any, *, where: Path | str) -> Seal:
        """Parse a recorded seal (untrusted: a report or marker may have been edited)."""

        def bad(what: str) -> ReleaseError:
            return ReleaseError(f"the recorded seal is malformed ({what})", path=where,
                                hint="Validate the release again (`benchsmith validate`) to record a new seal")

        if not isinstance(obj, dict) or not isinstance(obj.get("files"), list):
            raise bad("expected an object with a list of files")
        if obj.get("listing") != LISTING_VERSION:
            raise bad(f"listing {obj.get('listing')!r}, expected {LISTING_VERSION!r}")
        files = []
        for f in obj["files"]:
            if not isinstance(f, dict) or not isinstance(f.get("path"), str) or not _safe_rel(f["path"]):
                raise bad(f"entry {f!r} has no relative path inside the release")
            if type(f.get("size")) is not int or f["size"] < 0 or not isinstance(f.get("sha256"), str) \
                    or not _SHA256.fullmatch(f["sha256"]):
                raise bad(f"entry {f['path']!r} needs a size (int >= 0) and a 64-hex sha256")
            files.append(Entry(f["path"], f["size"], f["sha256"]))
        seal = cls(tuple(sorted(files, key=lambda e: e.path)))
        if len(seal.by_path()) != len(files):
            raise bad("a path is listed twice")
        if obj.get("digest") != seal.digest:
            raise bad("its digest is not the digest of its listing")
        return seal


def listing_text(files: tuple[Entry, ...] | list[Entry]) -> str:
    """The canonical listing the digest is taken over (see the module docstring)."""
    lines = [LISTING_VERSION]
    lines += [json.dumps([e.path, e.size, e.sha256], ensure_ascii=False) for e in sorted(files, key=lambda e: e.path)]
    return "\n".join(lines) + "\n"


def _safe_rel(rel: str) -> bool:
    parts = rel.split("/")
    return bool(rel) and not rel.startswith("/") and all(p not in ("", ".", "..") for p in parts) and "\\" not in rel \
        and "\0" not in rel


def shown(rel: str) -> str:
    """A release path as messages print it: as is, or JSON-quoted when it holds a control
    character (a file name may hold a newline; a message stays on one line)."""
    return rel if rel.isprintable() else json.dumps(rel, ensure_ascii=False)


def _lmode(dir_fd: int, name: str) -> int | None:
    """The mode of ``name`` in ``dir_fd`` without following it (None: gone meanwhile)."""
    try:
        return os.stat(name, dir_fd=dir_fd, follow_symlinks=False).st_mode
    except OSError:
        return None


def _not_regular(path: Path, mode: int | None, root: Path) -> ReleaseError:
    rel = path.relative_to(root).as_posix()
    kind = ("a symbolic link" if mode is None or stat.S_ISLNK(mode) else "a FIFO" if stat.S_ISFIFO(mode)
            else "a socket" if stat.S_ISSOCK(mode) else "a device" if stat.S_ISBLK(mode) or stat.S_ISCHR(mode)
            else "a file where a folder belongs" if stat.S_ISREG(mode) else "not a regular file")
    return ReleaseError(
        f"{shown(rel)} is {kind}; a release holds regular files only",
        path=path if rel.isprintable() else root,
        hint="Replace it with the file itself (or remove it), then validate the release again; "
        "benchsmith never reads through a link",
    )


# --------------------------------------------------------------------------- the walk


def walk(root: str | Path) -> Iterator[tuple[str, int]]:
    """``(relative posix path, size)`` of every regular, non-hidden file under ``root``, sorted
    by path; a link or special file anywhere (hidden ones too) is a :class:`ReleaseError`."""
    root = Path(root)
    if not root.is_dir():
        raise ReleaseError("not a release folder", path=root, hint="Pass a release directory")
    yield from _walk(root, root, "")


#: the deepest folder nesting a release may have (data/<config>/<shard> and lm_eval/... are 2-3)
MAX_DEPTH = 32


def _utf8(name: str) -> bool:
    """Whether a file name (as ``os`` decodes it, bad bytes as surrogates) was valid UTF-8."""
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _walk(root: Path, folder: Path, prefix: str, hidden: bool = False) -> Iterator[tuple[str, int]]:
    try:
        entries = sorted(os.scandir(folder), key=lambda e: e.name)
    except NotADirectoryError:
        raise _not_regular(folder, None, root) from None
    if prefix.count("/") >= MAX_DEPTH:  # a release is a few levels deep; 1,000 would exhaust the stack
        raise ReleaseError(f"{shown(prefix[:80])}... is nested more than {MAX_DEPTH} folders deep; a release is not",
                           path=root, hint="Remove the nested folders, then validate the release again")
    for entry in entries:
        path = folder / entry.name
        if not _utf8(entry.name):
            raise ReleaseError(f"{os.fsencode(prefix + entry.name)!r} has a name that is not UTF-8; a release's "
                               "file names are", path=root, hint="Rename or remove it, then validate the release again")
        st = entry.stat(follow_symlinks=False)
        # hidden entries (in-progress leftovers) are never listed, but a link or special file
        # is refused wherever it is, inside a hidden folder too
        skip = hidden or entry.name.startswith(".")
        rel = f"{prefix}{entry.name}"
        if stat.S_ISDIR(st.st_mode):
            yield from _walk(root, path, rel + "/", skip)
        elif not stat.S_ISREG(st.st_mode):
            raise _not_regular(path, st.st_mode, root)
        elif not skip:
            yield rel, st.st_size


def open_regular(root: str | Path, rel: str) -> int:
    """A read-only fd of ``root/rel``, opened one component at a time with ``O_NOFOLLOW``
    (a link at any level is refused, whenever it appeared); the caller closes it."""
    root = Path(root)
    if not _safe_rel(rel):
        raise ReleaseError(f"{rel!r} is not a path inside the release", path=root)
    parts = rel.split("/")
    nofollow = os.O_RDONLY | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)
    fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY)
    try:
        for i, part in enumerate(parts):
            last = i == len(parts) - 1
            try:
                nfd = os.open(part, nofollow | (os.O_NONBLOCK if last else os.O_DIRECTORY), dir_fd=fd)
            except OSError as exc:
                if exc.errno in (errno.ELOOP, errno.ENOTDIR, errno.EMLINK):
                    raise _not_regular(root.joinpath(*parts[: i + 1]), _lmode(fd, part), root) from None
                raise
            os.close(fd)
            fd = nfd
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise _not_regular(root / rel, mode, root)
        os.set_blocking(fd, True)
        out, fd = fd, -1
        return out
    finally:
        if fd >= 0:
            os.close(fd)


def hash_fd(fd: int) -> tuple[int, str]:
    """(size, sha256) of an open file from its start, streamed; leaves the offset at the end."""
    os.lseek(fd, 0, os.SEEK_SET)
    h = hashlib.sha256()
    size = 0
    while block := os.read(fd, _CHUNK):
        h.update(block)
        size += len(block)
    return size, h.hexdigest()


def hash_file(root: str | Path, rel: str) -> tuple[int, str]:
    fd = open_regular(root, rel)
    try:
        return hash_fd(fd)
    finally:
        os.close(fd)


def compute(root: str | Path) -> Seal:
    """Seal the folder as it is now: every sealed file hashed once."""

    files = []
    listed = [(rel, size) for rel, size in walk(root) if rel not in BY_RULE]
    with progress.bar("seal", total=sum(s for _, s in listed)) as bar:
        for rel, _ in listed:
            size, digest = hash_file(root, rel)
            files.append(Entry(rel, size, digest))
            bar.advance(size)
    return Seal(tuple(sorted(files, key=lambda e: e.path)))  # the order from_dict reads back


# --------------------------------------------------------------------------- comparing


def differences(root: str | Path, sealed: Seal, *, full: bool = True, keep_open: dict[str, int] | None = None
                ) -> list[str]:
    """What differs between the folder and the seal, one line per file in path order (``[]``:
    the bytes are the sealed ones). ``full=False`` compares paths and sizes only.

    ``keep_open``: receives a read-only fd (``O_NOFOLLOW``) of every file of the release that
    matched (the by-rule reports too), hashed through that very fd, so a caller can copy or
    upload exactly the bytes that were checked; the caller closes them."""
    root = Path(root)
    want = sealed.by_path()
    listed = dict(walk(root))
    have = {rel: size for rel, size in listed.items() if rel not in BY_RULE}
    out = []
    for rel in sorted(set(want) | set(have)):
        if rel not in have:
            out.append(f"{shown(rel)}: missing (sealed with {want[rel].size:,} bytes)")
        elif rel not in want:
            out.append(f"{shown(rel)}: not in the seal (added after validation, {have[rel]:,} bytes)")
        elif have[rel] != want[rel].size:
            out.append(f"{shown(rel)}: size {want[rel].size:,} -> {have[rel]:,} bytes")
        elif full or keep_open is not None:
            fd = open_regular(root, rel)
            size, digest = hash_fd(fd)
            if (size, digest) != (want[rel].size, want[rel].sha256):
                os.close(fd)
                out.append(f"{shown(rel)}: content changed (sha256 differs from the seal, same size)")
            elif keep_open is not None:
                keep_open[rel] = fd
            else:
                os.close(fd)
    if keep_open is not None:
        for rel in BY_RULE:
            if rel in listed:
                keep_open[rel] = open_regular(root, rel)
    return out


def copy_sealed(src: str | Path, dst: str | Path, fds: dict[str, int], sealed: Seal) -> None:
    """Write the files behind ``fds`` (from :func:`differences`) under ``dst``, checking each
    sealed one against the seal again as it is copied (one read per file)."""
    want = sealed.by_path()
    for rel, fd in sorted(fds.items()):
        out = Path(dst) / rel
        out.parent.mkdir(parents=True, exist_ok=True)
        os.lseek(fd, 0, os.SEEK_SET)
        h, size = hashlib.sha256(), 0
        with open(out, "wb") as fh:
            while block := os.read(fd, _CHUNK):
                h.update(block)
                size += len(block)
                fh.write(block)
        if rel in want and (size, h.hexdigest()) != (want[rel].size, want[rel].sha256):
            raise ReleaseError(f"{rel} changed while it was being copied", path=Path(src) / rel,
                               hint="Nothing may write into a release while it is published: publish again")


def describe(problems: list[str], limit: int = 3) -> str:
    return "; ".join(problems[:limit]) + (f" (+{len(problems) - limit} more)" if len(problems) > limit else "")


# --------------------------------------------------------------------------- where a seal is kept


#: the sources :func:`recorded` names
FROM_MARKER = "the published marker"
FROM_REGISTRY = "the registry's seal record"
FROM_REPORT = "reports/validation.json"
#: a report is a few MB at most (``small enough to publish``); a larger one is not ours
MAX_REPORT_BYTES = 256 << 20


def read_report(release_path: str | Path) -> dict[str, Any] | None:
    """``reports/validation.json`` of a release as a JSON object, or None when there is none.
    Opened without following links (:func:`open_regular`): a link or special file there, or in
    place of ``reports/``, is a :class:`ReleaseError` before anything is read through it."""
    root = Path(release_path)
    rel = BY_RULE[0]
    try:
        fd = open_regular(root, rel)
    except FileNotFoundError:
        return None
    try:
        with os.fdopen(fd, "rb") as fh:
            raw = fh.read(MAX_REPORT_BYTES + 1)
        if len(raw) > MAX_REPORT_BYTES:
            raise ReleaseError(f"the validation report is over {MAX_REPORT_BYTES:,} bytes", path=root / rel,
                               hint=f"Validate the release again (`benchsmith validate {root}`)")
        data = json.loads(raw.decode("utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError, RecursionError) as exc:
        raise ReleaseError(f"unreadable validation report ({type(exc).__name__}: {str(exc)[:200]})",
                           path=root / rel, hint=f"Validate the release again (`benchsmith validate {root}`)"
                           ) from None
    if not isinstance(data, dict):
        raise ReleaseError("unreadable validation report (not a JSON object)", path=root / rel,
                           hint=f"Validate the release again (`benchsmith validate {root}`)")
    return data


def recorded(release_path: str | Path) -> tuple[Seal | None, str]:
    """The seal the release's bytes must match, and where it comes from (see "Where it is kept"):
    the published marker's, else the registry's seal record for a release in a registry, else
    ``reports/validation.json``'s for a folder outside any registry; ``(None, why)`` when there is
    none to trust."""

    path = Path(release_path)
    marker = registry.published_marker(path)
    if marker is not None:
        if marker.get("seal") is None:
            return None, "published before seals were recorded"
        return Seal.from_dict(marker["seal"], where=registry.marker_path(path)), FROM_MARKER
    report = read_report(path)  # read (and refused when a link) even where it is not the authority
    if registry.in_registry(path):
        record = registry.seal_record(path)
        if record is not None:
            return Seal.from_dict(record["seal"], where=registry.seal_record_path(path)), FROM_REGISTRY
        if report is None:
            return None, "not validated"
        return None, "validated before the registry recorded seals (the copy inside the folder is not proof)"
    if report is None:
        return None, "not validated"
    if report.get("seal") is None:
        return None, "validated before seals were recorded"
    return Seal.from_dict(report["seal"], where=path / BY_RULE[0]), FROM_REPORT


def passed(release_path: str | Path) -> bool | None:
    """Whether the validation the seal comes from passed (the record :func:`recorded` trusts
    says so; a published release passed its gate); None when nothing records a validation."""

    path = Path(release_path)
    if registry.published_marker(path) is not None:
        return True
    if registry.in_registry(path):
        record = registry.seal_record(path)
        return None if record is None else record["passed"]
    report = read_report(path)
    return None if report is None else bool(report.get("passed"))


def manifest_differences(release: Release, sealed: Seal) -> list[str]:
    """The data files release.json lists that are not sealed files, or whose sha256 there is not
    the sealed file's (sealed bytes the build did not write: a re-encoded parquet), one line each."""
    names, problems = sealed.by_path(), []
    for _, _, info in release.info.iter_splits():
        for i, rel in enumerate(info.files):
            if rel not in names:
                problems.append(f"release.json lists {rel!r}, which is not a sealed file of the release")
            elif info.sha256 is not None and info.sha256[i] != names[rel].sha256:
                problems.append(f"{shown(rel)}: its sha256 in release.json is not the sealed file's")
    return problems


def require(release: Release, sealed: Seal, *, source: str, error: type[BenchsmithError] = ReleaseError,
            published: bool = False, keep_open: dict[str, int] | None = None) -> None:
    """Raise ``error`` naming the first file whose bytes differ from ``sealed`` (every file hashed)
    and what to do; also refuse a manifest whose data ``files`` are not sealed files.
    ``keep_open``: as for :func:`differences` (closed again here when this raises)."""
    try:
        problems = differences(release.path, sealed, full=True, keep_open=keep_open)
    except BaseException:
        close_all(keep_open)
        raise
    problems += manifest_differences(release, sealed)
    if problems:
        close_all(keep_open)
        what = "published" if published else "validated"
        raise error(
            f"{release.name} {release.version} is not the release that was {what}: {describe(problems)} "
            f"(seal {sealed.digest[:12]} from {source})",
            path=release.path,
            hint=("Restore the published files: a published version never changes (bump the version for new data)"
                  if published else f"Restore the validated files, or validate again (`benchsmith validate "
                  f"{release.path}`) if the change is intended"),
        )


def certify(release: Release, *, error: type[BenchsmithError] = ReleaseError, registered: bool | None = None,
            keep_open: dict[str, int] | None = None) -> tuple[Seal | None, str]:
    """Check a release against the seal :func:`recorded` trusts (:func:`require`), and its data
    against the fingerprints its builder registered for the version
    (:func:`benchsmith.fingerprint_registry.require_registered`): ``registered=None`` does the
    latter only where the seal is the copy inside the folder (nothing outside it vouches for the
    folder then). Returns ``(seal, source)``; ``(None, why)`` when no seal is recorded (nothing
    checked: the caller decides whether that is allowed). ``keep_open``: as for :func:`require`."""

    sealed, source = recorded(release.path)
    if sealed is None:
        return None, source
    require(release, sealed, source=source, error=error, published=source == FROM_MARKER, keep_open=keep_open)
    if registered or (registered is None and source == FROM_REPORT):
        try:
            require_registered(release, error=error)
        except BaseException:
            close_all(keep_open)
            raise
    return sealed, source


def require_gold(release: Release, *, allow_unvalidated: bool = False) -> str | None:
    """What ``evaluate`` checks before it scores against a release's gold data: :func:`certify`,
    and that the validation behind the seal passed. A release with no seal, or whose validation
    failed, is a :class:`GateError` unless ``allow_unvalidated``; then its files are still checked
    (regular files only, each data file against release.json) and the warning to print is
    returned (None: certified)."""
    sealed, source = certify(release)
    verdict = passed(release.path)
    if sealed is not None and verdict is not False:
        return None
    what = f"has no seal ({source})" if sealed is None else f"failed its validation ({source})"
    if not allow_unvalidated:
        raise GateError(f"{release.name} {release.version} {what}: its gold data is not certified",
                        path=release.path,
                        hint=f"Validate it (`benchsmith validate {release.path}`) and fix what fails, or pass "
                        "--allow-unvalidated to score against it anyway")
    if sealed is None:
        list(walk(release.path))
        release.require_intact()
    return (f"{release.name} {release.version} {what}: scoring against gold data nobody certified "
            "(--allow-unvalidated)")


def close_all(fds: dict[str, int] | None) -> None:
    """Close the fds :func:`differences` kept open, and forget them."""
    for fd in (fds or {}).values():
        os.close(fd)
    if fds:
        fds.clear()


def status(target: Path) -> dict[str, Any]:
    """``{"status": built|validated|published, "fingerprints_match": bool | None, ...}`` of a version folder."""
    manifest = json.loads((target / registry.MANIFEST).read_text(encoding="utf-8"))
    fps = {c: {s: i["fingerprint"] for s, i in info.get("splits", {}).items()}
           for c, info in manifest.get("configs", {}).items()}
    marker = registry.published_marker(target) if (target.parent / registry.MARKER_DIR).is_dir() else None
    if marker is not None:
        return {"status": "published",
                "on_fingerprints": "the manifest's" if marker["fingerprints"] == fps else "other data",
                "published_to": {"local": bool(marker.get("local", True)), "hub": marker.get("hub", [])}}
    report = read_report(target)  # a link or special file there is refused, never followed
    if registry.in_registry(target):  # the registry's seal record says how validate ended, not the folder
        record = registry.seal_record(target)
        if record is None:
            return {"status": "built"} | ({"report": "not recorded by the registry"} if report is not None else {})
        if record["passed"] and record.get("fingerprints") == fps:
            return {"status": "validated", "on_fingerprints": "the manifest's"}
        return {"status": "built", "report": "failed" if not record["passed"] else "on other data"}
    if report is not None:
        same = report.get("fingerprints") == fps
        if report.get("passed") and same:
            return {"status": "validated", "on_fingerprints": "the manifest's"}
        return {"status": "built", "report": "failed" if not report.get("passed") else "on other data"}
    return {"status": "built"}
