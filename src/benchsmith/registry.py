"""The registry: where releases live, what state each version is in, and how one is committed.

Layout of a registry root::

    <root>/<name>/<version>/                 a release (see benchsmith.release)
    <root>/<name>/<version>/reports/         validation reports
    <root>/<name>/.published/<version>.json  marker: published on these fingerprints
    <root>/<name>/.sealed/<version>.json     the seal validate recorded (outside the release)
    <root>/<name>/.reports/<version>/        reports of re-validating a published (read-only) release
    <root>/.locks/<name>/<version>.lock      per-version lock (flock; the file stays, harmlessly)
    <root>/<name>/.<version>.tmp-<pid>-*     a build or publish in progress (staging)
    <root>/<name>/.<version>.old-<pid>       the previous release, aside during a commit
    <root>/.staging/<name>/<version>/        an audit's rebuild, before it is committed

Decisions:

* **Status** of a version: ``built`` (a release folder), ``validated`` (its report passed
  on the fingerprints now in the manifest) or ``published`` (a marker records the
  fingerprints it was published on). :func:`status` says which, and on which fingerprints.
* **Locks.** A per-version file lock (``flock``, :func:`lock`) is held from a build's start to its
  commit, and by publish, so two builds of one version, or a build racing a publish,
  serialise; the guards ("exists", "published") are re-checked under the lock.
* **Atomic commit.** A release is written into a hidden staging sibling and renamed into
  place. Replacing an existing version renames the old one aside first; a crash between the
  two renames leaves ``.<version>.old-<pid>`` and no release. :func:`recover`, run first by
  every registry operation, puts such a folder back (or removes it when the new release is
  in place) and removes staging folders whose process is dead.
* **Recovery touches only what the registry made.** A staging (or aside) folder holds the
  file :data:`STAGING_MARK`, written when it was created; :func:`recover` acts on a
  ``.<version>.<kind>-<pid>`` folder only when it holds that file (a regular file, the folder
  a real folder), and ignores any other name (a pid no process can have included). Commands
  given a release *path* recover only when the path lies in a registry (:func:`in_registry`),
  never in the parent of an arbitrary folder.
* **What is a registry.** A root ``<root>`` whose ``.locks`` folder exists (every build into
  it made one). ``validate`` and ``publish`` of a folder outside a registry take no lock and
  write nothing outside the folder (no ``<grandparent>/.locks``).
* **Seal records.** ``validate`` of a release in a registry records its seal (and whether it
  passed, on which fingerprints) in ``<root>/<name>/.sealed/<version>.json``, outside the
  folder, where editing the release cannot rewrite it (the published marker's rule); the copy
  in ``reports/validation.json`` is informative there. See :mod:`benchsmith.seal`.
* **Permissions.** Files and folders are created with the process umask, like any file a
  user writes (``mkstemp``/``mkdtemp`` alone would make them private).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import stat
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from filelock import FileLock, Timeout

from benchsmith.errors import PublishError, ReleaseError, writing

MANIFEST = "release.json"
CARD = "README.md"
REPORTS = "reports"
REPORT_JSON = "validation.json"
MARKER_DIR = ".published"
SEAL_DIR = ".sealed"
#: written into every staging / aside folder the registry makes: what :func:`recover` may touch
STAGING_MARK = ".benchsmith-staging"
LOCK_DIR = ".locks"
STAGING = ".staging"
LOCK_TIMEOUT_S = 600.0

#: a leftover's name; the pid has at most 9 digits (Linux's pid_max is at most 2^22): a longer number
#: is no process's, and the name is ignored (``os.kill`` would raise OverflowError past 2^31)
_LEFTOVER = re.compile(r"^\.(?P<version>\d+\.\d+\.\d+)\.(?P<kind>tmp|old|publish)-(?P<pid>\d{1,9})(?:-|$)")


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def _chmod(path: Path, mode: int) -> None:
    try:
        os.chmod(path, mode & ~_umask())
    except OSError:  # e.g. a filesystem without modes: the default is as good as it gets
        pass


def write_text_atomic(path: str | Path, text: str, *, newline: str | None = None) -> None:
    """Write a UTF-8 text file through a temporary sibling renamed into place, so a reader
    (the gate, ``load_dataset``) never sees a half-written report, card or marker.

    Every file benchsmith writes whole goes through here: a write that fails (disk full,
    ``ulimit -f``, EIO, a read-only folder) removes the temporary file, leaves the previous
    ``path`` as it was, and is the :class:`~benchsmith.errors.EnvironmentFault` naming ``path``.
    ``newline``: as :func:`open`'s (``""`` writes ``\n`` as is on every platform)."""
    path = Path(path)
    with writing(path):
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
        try:
            with os.fdopen(fd, "w", encoding="utf-8", newline=newline) as fh:
                fh.write(text)
            _chmod(Path(tmp), 0o666)
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise


def make_staging(parent: Path, version: str, kind: str = "tmp") -> Path:
    """A fresh hidden staging folder ``.<version>.<kind>-<pid>-*`` beside the version folder."""
    parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{version}.{kind}-{os.getpid()}-", dir=parent))
    _chmod(tmp, 0o777)
    _mark(tmp)
    return tmp


def _mark(folder: Path) -> None:
    """Write :data:`STAGING_MARK` into a folder the registry made (what :func:`recover` may touch)."""
    os.close(os.open(folder / STAGING_MARK, os.O_WRONLY | os.O_CREAT | os.O_NOFOLLOW, 0o644))


def _ours(folder: Path) -> bool:
    """``folder`` is a real folder holding a regular :data:`STAGING_MARK`: the registry made it."""
    try:
        return stat.S_ISDIR(os.lstat(folder).st_mode) and stat.S_ISREG(os.lstat(folder / STAGING_MARK).st_mode)
    except OSError:
        return False


def version_dir(root: str | Path, name: str, version: str) -> Path:
    return Path(root) / name / version


def reports_dir(release_path: str | Path) -> Path:
    return Path(release_path) / REPORTS


def detached_reports_dir(release_path: str | Path) -> Path:
    """Where ``validate`` writes the report of a published (read-only) release:
    ``<root>/<name>/.reports/<version>/``, outside the release."""
    release_path = Path(release_path)
    return release_path.parent / ".reports" / release_path.name


# --------------------------------------------------------------------------- locks


#: how often a blocked :func:`lock` tries again (filelock's default poll interval)
LOCK_POLL_S = 0.05


@contextmanager
def lock(target: Path, timeout: float = LOCK_TIMEOUT_S) -> Iterator[None]:
    """Hold the per-version lock of ``<root>/<name>/<version>`` (blocking up to ``timeout``
    seconds; 0: one try; negative: no limit): filelock's ``FileLock`` on
    ``<root>/.locks/<name>/<version>.lock`` (an exclusive ``flock`` on POSIX).
    """
    lock_dir = target.parent.parent / LOCK_DIR / target.parent.name
    lock_dir.mkdir(parents=True, exist_ok=True)
    path = lock_dir / f"{target.name}.lock"
    held = FileLock(str(path))
    try:
        held.acquire(timeout=timeout if timeout >= 0 else -1, poll_interval=LOCK_POLL_S)
    except Timeout:
        raise _locked(target, path) from None
    try:
        yield
    finally:
        held.release()


def _locked(target: Path, path: Path) -> ReleaseError:
    return ReleaseError(f"{target.parent.name} {target.name} is locked by another build or publish", path=path,
                        hint="Wait for it to finish; if no benchsmith process is running, delete the lock file")


# --------------------------------------------------------------------------- recovery


def _alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    if pid <= 0:  # kill(0) and kill(-n) signal process groups
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def recover(dataset_dir: Path) -> list[str]:
    """Put back or remove what interrupted commits left in ``<root>/<name>``; returns what it did.
    Only folders the registry made (they hold :data:`STAGING_MARK`) whose process is dead."""
    done: list[str] = []
    if not dataset_dir.is_dir():
        return done
    for entry in sorted(dataset_dir.iterdir()):
        m = _LEFTOVER.match(entry.name)
        if not m or not _ours(entry) or _alive(int(m["pid"])):
            continue
        target = dataset_dir / m["version"]
        if m["kind"] == "old" and not os.path.lexists(target):
            os.replace(entry, target)  # the crash came between the two renames: restore the old release
            (target / STAGING_MARK).unlink(missing_ok=True)
            done.append(f"restored {target.name} from {entry.name}")
        else:
            shutil.rmtree(entry, ignore_errors=True)
            done.append(f"removed {entry.name}")
    return done


def in_registry(release_path: str | Path) -> bool:
    """Whether ``<root>/<name>/<version>`` lies in a registry: ``<root>/.locks`` is a real folder
    (every build into the registry made it). A folder elsewhere (a download, a copy) is not, and
    nothing beside it is locked, recovered or recorded."""
    try:
        return stat.S_ISDIR(os.lstat(Path(release_path).absolute().parent.parent / LOCK_DIR).st_mode)
    except OSError:
        return False


# --------------------------------------------------------------------------- commit


def commit(staging: Path, target: Path, *, overwrite: bool) -> None:
    """Rename a finished staging folder into place (the caller holds the version's lock). The
    target's seal record goes with the folder it described; a seal record of the staging folder
    (an audit's validated rebuild in ``<root>/.staging``) comes with the folder."""
    if target.exists():
        if not overwrite:
            raise ReleaseError(f"release {target.parent.name} {target.name} already exists", path=target,
                               hint="Pass --overwrite to replace it, or bump the builder's version")
        forget_seal(target)
        old = target.with_name(f".{target.name}.old-{os.getpid()}")
        _mark(target)  # aside, it is the registry's to restore
        os.replace(target, old)
        os.replace(staging, target)
        shutil.rmtree(old, ignore_errors=True)
    else:
        forget_seal(target)
        os.replace(staging, target)
    (target / STAGING_MARK).unlink(missing_ok=True)
    staged_seal = seal_record_path(staging)
    if staged_seal.is_file():
        seal_record_path(target).parent.mkdir(parents=True, exist_ok=True)
        os.replace(staged_seal, seal_record_path(target))


# --------------------------------------------------------------------------- published markers


def marker_path(target: Path) -> Path:
    """Where the 'published' marker of ``<root>/<name>/<version>`` lives."""
    return target.parent / MARKER_DIR / f"{target.name}.json"


def published_marker(target: Path) -> dict | None:
    """The published marker of a version (a JSON object), or None if it was not published.

    Keys: ``name``, ``version``, ``fingerprints``, ``seal`` (see :mod:`benchsmith.seal`; absent
    in markers written before seals), ``local`` (``publish`` without ``--hub`` recorded it) and
    ``hub`` (one ``{repo, tag, commit, endpoint}`` per Hub publication)."""
    marker = marker_path(target)
    if not marker.is_file():
        return None
    try:
        data = json.loads(marker.read_text(encoding="utf-8"))
        if not isinstance(data, dict) or not isinstance(data["fingerprints"], dict):
            raise TypeError("not an object with 'fingerprints'")
        if not isinstance(data.get("hub", []), list):
            raise TypeError("'hub' is not a list")
    except (json.JSONDecodeError, KeyError, TypeError, UnicodeDecodeError) as exc:
        raise PublishError(
            f"corrupt published marker ({type(exc).__name__}: {exc}); expected a JSON object with 'fingerprints'",
            path=marker,
            hint="Restore it from backup or version control; a published version stays published",
        ) from None
    return data


def published_fingerprints(target: Path) -> dict | None:
    """The fingerprints recorded when this version was published, or None if it was not."""
    marker = published_marker(target)
    return None if marker is None else marker["fingerprints"]


def guard_published(target: Path, new_fingerprints: dict | None = None) -> None:
    """Refuse to replace a published version with different data."""
    recorded = published_fingerprints(target)
    if recorded is not None and recorded != new_fingerprints:
        raise PublishError(
            f"version {target.name} of {target.parent.name} is published and is never overwritten",
            path=target,
            hint="Bump the builder's version (add it to release_notes) and build that",
        )


def mark_published(target: Path, name: str, version: str, fingerprints: dict, *, seal: dict | None = None,
                   hub: dict | None = None) -> None:
    """Write (or extend) the marker: a local publish sets ``local``, a Hub publish appends to ``hub``
    (once: an "already published" re-publish of the same tag and commit adds nothing);
    the seal is the one the release was published on (the caller checked any earlier one is equal)."""
    marker = marker_path(target)
    marker.parent.mkdir(parents=True, exist_ok=True)
    data = published_marker(target) or {"name": name, "version": version, "fingerprints": fingerprints,
                                         "local": False, "hub": []}
    if seal is not None:
        data["seal"] = seal
    if hub is None:
        data["local"] = True
    elif hub not in data.setdefault("hub", []):
        data["hub"].append(hub)
    write_text_atomic(marker, json.dumps(data, indent=2) + "\n")


# --------------------------------------------------------------------------- seal records


def seal_record_path(target: Path) -> Path:
    """Where ``validate`` records the seal of ``<root>/<name>/<version>`` (outside the release)."""
    return target.parent / SEAL_DIR / f"{target.name}.json"


def record_seal(target: Path, seal: dict, *, passed: bool, fingerprints: dict) -> None:
    """Record the seal ``validate`` took of a release in a registry, with its verdict and the
    fingerprints it was validated on (the caller holds the version's lock)."""
    path = seal_record_path(target)
    path.parent.mkdir(parents=True, exist_ok=True)
    write_text_atomic(path, json.dumps({"seal": seal, "passed": passed, "fingerprints": fingerprints}, indent=2)
                      + "\n")


def forget_seal(target: Path) -> None:
    """Drop the seal record of a version whose folder is replaced (a rebuild is not validated)."""
    seal_record_path(target).unlink(missing_ok=True)


def seal_record(target: Path) -> dict | None:
    """The seal record of a version in a registry (``{"seal", "passed", "fingerprints"}``), or None."""
    path = seal_record_path(target)
    try:
        if not stat.S_ISREG(os.lstat(path).st_mode):
            raise TypeError("not a regular file")
        data = json.loads(path.read_text(encoding="utf-8"))
        if not isinstance(data, dict) or not isinstance(data.get("seal"), dict) \
                or not isinstance(data.get("passed"), bool):
            raise TypeError("not an object with 'seal' and 'passed'")
    except FileNotFoundError:
        return None
    except (OSError, json.JSONDecodeError, TypeError, UnicodeDecodeError) as exc:
        raise ReleaseError(f"corrupt seal record ({type(exc).__name__}: {exc})", path=path,
                           hint=f"Remove it and validate the release again (`benchsmith validate {target}`)"
                           ) from None
    return data


# --------------------------------------------------------------------------- status


def version_dirs(root: str | Path, name: str) -> list[Path]:
    """Every version folder of ``name`` (with a manifest), in no particular order."""
    base = Path(root) / name
    if not base.is_dir():
        return []
    return [d for d in base.iterdir() if not d.name.startswith(".") and (d / MANIFEST).is_file()]
