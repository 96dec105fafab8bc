"""Results of a previous identical check, reused: what makes a second ``validate`` fast.

A check opts in with ``cacheable = True`` when its results are a function of the release's
data files and ``release.json``, the code, the installed packages and its own parameters,
and nothing else (no card, no other release, no raw source, no clock). Its results are
stored as JSON under ``$BENCHSMITH_HOME/cache/validation/<key>.json`` (best effort:
:mod:`benchsmith.cache`), the key being the sha256 of

* the bytes of every ``data/**/*.parquet`` file and of ``release.json`` (hashed here, from
  the files as they are now: the manifest's fingerprints are not trusted for this);
* the code: every file of the installed ``benchsmith`` packages (``benchsmith``,
  ``builders`` with their ``published.yaml``/``known_artifacts.yaml``, ``validation``,
  ``loaders``, ``cards``), so any edit, not only a version bump, misses;
* the installed distributions and their versions (the ``*.dist-info`` names on
  ``sys.path``: a new scikit-learn or sacremoses misses);
* the check's class and its parameters (``vars(check)`` as JSON; a parameter that has no
  JSON form, such as a function, makes the check uncacheable for that run, unless the check
  says what stands for it with ``cache_params()``: ``fidelity`` gives each figure's declaration,
  its measure being the builder's code, which the code digest covers).

So a hit is the result the check would compute again, bit for bit, unless the check reads
something it did not declare. Checks that read more stay uncached and run every time:
``schema`` (reads the card, which ``validate`` rewrites), ``contamination`` (other releases),
``drift`` (the previous release), builder checks that read raw sources or annotation
files, and the model baselines. ``validate --no-cache`` (or ``BENCHSMITH_NO_CACHE=1``) runs
every check. The report says which results came from the cache (``notes``).
"""

from __future__ import annotations

import dataclasses
import enum
import hashlib
import importlib
import json
import os
import sys
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from benchsmith import seal
from benchsmith.cache import cache_path, read_json, write_bytes
from benchsmith.validation.check import Check, CheckResult, Status

if TYPE_CHECKING:
    from benchsmith.release import Release

#: bump to drop every stored result (a change of the stored format)
FORMAT = 1
_PACKAGES = ("benchsmith", "benchsmith.builders", "benchsmith.validation", "benchsmith.loaders",
             "benchsmith.cards")


def disabled() -> bool:
    """``BENCHSMITH_NO_CACHE`` set to anything but ''/0."""
    return os.environ.get("BENCHSMITH_NO_CACHE", "") not in ("", "0")


def _hash_file(h: Any, path: Path) -> None:
    with open(path, "rb") as f:
        h.update(hashlib.file_digest(f, "sha256").digest())


@lru_cache(maxsize=1)
def code_digest() -> str:
    """sha256 over every file of the installed benchsmith packages and the names (with
    versions) of the installed distributions (see module docstring)."""
    h = hashlib.sha256(f"format {FORMAT}\n".encode())
    roots: list[Path] = []
    for name in _PACKAGES:
        roots += [Path(p) for p in importlib.import_module(name).__path__]
    for root in dict.fromkeys(roots):
        for dirpath, dirnames, filenames in os.walk(root):
            dirnames[:] = sorted(d for d in dirnames if d != "__pycache__" and not d.startswith("."))
            for fn in sorted(filenames):
                if fn.endswith((".pyc", ".pyo")):
                    continue
                p = Path(dirpath, fn)
                h.update(str(p.relative_to(root)).encode() + b"\0")
                _hash_file(h, p)
    dists: set[str] = set()
    for entry in sys.path:
        try:
            dists.update(n for n in os.listdir(entry or ".") if n.endswith(".dist-info"))
        except OSError:
            continue
    h.update("\n".join(sorted(dists)).encode())
    return h.hexdigest()


def release_digest(release: Release) -> str:
    """sha256 over the bytes of the release's data files and ``release.json``, read through the
    seal's regular-files-only walk (:func:`benchsmith.seal.walk` / :func:`~benchsmith.seal.hash_file`:
    a link or special file anywhere is a ReleaseError, nothing outside the folder is opened)."""
    h = hashlib.sha256()
    for rel, _ in seal.walk(release.path):
        if rel == "release.json" or rel.startswith("data/"):
            h.update(rel.encode() + b"\0" + seal.hash_file(release.path, rel)[1].encode())
    return h.hexdigest()


def _param(value: Any) -> Any:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {"__dataclass__": type(value).__qualname__, **dataclasses.asdict(value)}
    if isinstance(value, enum.Enum):
        return value.value
    if isinstance(value, (Path, set, frozenset)):
        return sorted(map(str, value)) if isinstance(value, (set, frozenset)) else str(value)
    raise TypeError(f"no JSON form for a parameter of type {type(value).__name__}")


def check_key(check: Check, release_key: str) -> str | None:
    """The key of ``check``'s results on a release whose :func:`release_digest` is
    ``release_key``, or None when the check is not cacheable."""
    if not getattr(check, "cacheable", False):
        return None
    own = getattr(check, "cache_params", None)  # a check whose parameters hold functions names them itself
    try:
        params = json.dumps(own() if own is not None else vars(check), sort_keys=True, default=_param)
    except (TypeError, ValueError):
        return None
    cls = type(check)
    blob = json.dumps([FORMAT, code_digest(), release_key, f"{cls.__module__}.{cls.__qualname__}", params])
    return hashlib.sha256(blob.encode()).hexdigest()


def _path(key: str) -> Path:
    return cache_path("validation", f"{key}.json")


def load(key: str) -> list[CheckResult] | None:
    """The stored results of ``key``, or None (missing, unreadable, or malformed)."""
    got = read_json(_path(key))
    if not isinstance(got, list):
        return None
    try:
        return [CheckResult(**{**d, "status": Status(d["status"])}) for d in got]
    except (TypeError, KeyError, ValueError):
        return None


def stored(key: str) -> bool:
    """Whether results are stored under ``key`` (they may still be unreadable: :func:`load`)."""
    return _path(key).is_file()


def store(key: str, results: list[CheckResult]) -> list[CheckResult]:
    """Store results (as the report's JSON writes them: ``default=str``; best effort) and
    return them as they will be read back, so a run that stores and a run that hits
    report the same values (tuples read back as lists, numpy scalars as numbers)."""
    try:
        text = json.dumps([r.to_dict() for r in results], ensure_ascii=False, allow_nan=False, default=str)
    except (TypeError, ValueError):  # NaN, or a key JSON cannot hold: not cached
        return results
    write_bytes(_path(key), text.encode("utf-8"))
    return [CheckResult(**{**d, "status": Status(d["status"])}) for d in json.loads(text)]


class CachedCheck(Check):
    """``check`` served from the cache under ``key`` when stored, else run and stored."""

    def __init__(self, check: Check, key: str, hits: list[str]) -> None:
        self.inner, self.key, self.hits = check, key, hits
        self.name, self.family = check.name, check.family  # type: ignore[misc]

    def run(self, release: Release) -> list[CheckResult]:
        got = load(self.key)
        if got is not None:
            self.hits.append(self.name)
            return got
        return store(self.key, self.inner.run(release))


def cached_checks(release: Release, checks: Sequence[Check], hits: list[str]) -> list[Check]:
    """``checks`` with each cacheable one wrapped in :class:`CachedCheck` (all as they are
    when the cache is :func:`disabled`); the names of the checks served from the cache are
    appended to ``hits`` as they run."""
    if disabled():
        return list(checks)
    release_key = release_digest(release)
    out: list[Check] = []
    for check in checks:
        key = check_key(check, release_key)
        out.append(check if key is None else CachedCheck(check, key, hits))
    return out
