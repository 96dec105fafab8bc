"""What a Hub publication holds, and how benchsmith knows it later: ``seal.json`` and tree checks.

The release's seal (``benchsmith.seal``) cannot describe a Hub tag byte for byte: the card,
``croissant.json`` and ``lm_eval/`` are uploaded as Hub renderings (snippet and configs naming the
repo and revision), whose bytes differ from the local files, and the two by-rule reports are
outside the digest. So ``publish --hub`` uploads, in the same commit, a ``seal.json`` at the
repo root: the listing (path, size, sha256) of every file of that commit as uploaded, except
``.gitattributes`` and ``seal.json`` itself, plus the release's seal digest.

Decisions, and what they prove:

* **"Same content" on the Hub** (re-publishing a version whose tag exists) is decided from the
  tag's tree, not from its ``seal.json`` alone: every file that would be uploaded (seal.json
  included, whose bytes are a function of the others) is on the tag with the same size and the
  same LFS sha256 (for an LFS file) or git blob id (sha1 of ``blob N\\0`` + bytes, otherwise),
  and the tag holds no other file except ``.gitattributes``. That proves the tag's bytes equal
  what this publish would upload (up to a sha1 collision for non-LFS files); it does not prove
  who uploaded them. Same: "already published", nothing written. Otherwise a ``PublishError``.
* **After a commit** the same comparison runs on the new commit: a file missing, of another
  size or another hash is a ``PublishError`` naming it (the Hub or a proxy changed the upload).
* **A snapshot** downloaded for ``--previous``/``diff`` (:func:`verify_snapshot`): every file its
  ``seal.json`` lists is there with that size and sha256, and no other regular file is (hidden
  ones such as ``.gitattributes`` aside). This proves the snapshot is what the listing says; the
  listing itself is only as trustworthy as the Hub repo's write access (anyone who can push can
  push a matching seal.json). A snapshot without ``seal.json`` (not published by benchsmith, or
  before this file existed) is accepted with a note: it is then checked against its own
  manifest only.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from huggingface_hub.utils.sha import git_hash

from benchsmith import seal
from benchsmith.errors import BenchsmithError, ReleaseError

if TYPE_CHECKING:
    from benchsmith.release import Release

#: the listing's file at the root of a published Hub commit
SEAL_FILE = "seal.json"
#: first key of seal.json: bump when its rules change
LISTING = "benchsmith-hub-listing/1"
#: paths of a Hub commit that are not part of the publication (the Hub's own)
HUB_OWN = (".gitattributes",)
_CHUNK = 1 << 20


@dataclass(frozen=True)
class Uploaded:
    """One file as uploaded: size, sha256 (LFS oid) and git blob id."""

    path: str
    size: int
    sha256: str
    git_oid: str


def hash_bytes(path: str, data: bytes) -> Uploaded:
    """An in-memory upload (a Hub rendering): huggingface_hub's own git blob id."""
    return Uploaded(path, len(data), hashlib.sha256(data).hexdigest(), git_hash(data))


def hash_path(path: str, local: str) -> Uploaded:
    """Hash a file (``local``: a path or a ``/proc/self/fd/N`` link) once, streamed: both digests
    in one pass (huggingface_hub's ``git_hash`` takes the whole bytes, ``sha_fileobj`` one digest)."""
    size = os.stat(local).st_size
    sha, git = hashlib.sha256(), hashlib.sha1(b"blob %d\0" % size)
    with open(local, "rb") as fh:
        for chunk in iter(lambda: fh.read(_CHUNK), b""):
            sha.update(chunk)
            git.update(chunk)
    return Uploaded(path, size, sha.hexdigest(), git.hexdigest())


def seal_json(files: list[Uploaded], *, release_seal: str, name: str, version: str) -> bytes:
    """The bytes of ``seal.json`` for a commit that uploads ``files`` (deterministic)."""
    body = {
        "listing": LISTING, "name": name, "version": version, "release_seal": release_seal,
        "files": [{"path": f.path, "size": f.size, "sha256": f.sha256}
                  for f in sorted(files, key=lambda f: f.path) if f.path not in (SEAL_FILE, *HUB_OWN)],
    }
    return (json.dumps(body, indent=1, ensure_ascii=False) + "\n").encode("utf-8")


def tree_differences(remote: list[Any], expected: list[Uploaded]) -> list[str]:
    """How the remote files (``RepoFile``-like: path, size, blob_id, lfs.sha256) differ from
    ``expected``; ``[]`` when they are the same files with the same bytes."""
    have = {f.path: f for f in remote if hasattr(f, "size") and hasattr(f, "blob_id")}
    problems = []
    for want in sorted(expected, key=lambda f: f.path):
        got = have.get(want.path)
        if got is None:
            problems.append(f"{want.path}: missing on the Hub")
        elif got.size != want.size:
            problems.append(f"{want.path}: {got.size} bytes on the Hub, {want.size} uploaded")
        elif got.lfs is not None and got.lfs.sha256 != want.sha256:
            problems.append(f"{want.path}: LFS sha256 {got.lfs.sha256[:12]} on the Hub, {want.sha256[:12]} uploaded")
        elif got.lfs is None and got.blob_id != want.git_oid:
            problems.append(f"{want.path}: git blob {got.blob_id[:12]} on the Hub, {want.git_oid[:12]} uploaded")
    wanted = {f.path for f in expected}
    problems += [f"{p}: on the Hub but not in the release" for p in sorted(set(have) - wanted - set(HUB_OWN))]
    return problems


def verify_snapshot(release: Release, where: str) -> str | None:
    """Check a downloaded snapshot against its ``seal.json`` (see the module docstring);
    :class:`ReleaseError` naming the first differing file. Returns a note when there is no
    listing to check against (accepted), else None."""
    root = Path(release.path)
    path = root / SEAL_FILE
    if not path.is_file() or path.is_symlink():
        return f"{where} has no {SEAL_FILE} (not published by benchsmith): checked against its manifest only"

    def bad(what: str) -> ReleaseError:
        return ReleaseError(f"the snapshot of {where} does not match its {SEAL_FILE}: {what}", path=path,
                            hint="The Hub copy was changed after publishing; compare with another revision")

    try:
        body = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise bad(f"it is not readable JSON ({type(exc).__name__})") from None
    if not isinstance(body, dict) or body.get("listing") != LISTING or not isinstance(body.get("files"), list):
        raise bad(f"expected an object with listing {LISTING!r} and a list of files")
    listed: dict[str, tuple[int, str]] = {}
    for f in body["files"]:
        if not (isinstance(f, dict) and isinstance(f.get("path"), str) and seal._safe_rel(f["path"])
                and type(f.get("size")) is int and isinstance(f.get("sha256"), str)):
            raise bad(f"malformed entry {str(f)[:80]}")
        listed[f["path"]] = (f["size"], f["sha256"])
    try:
        present = dict(seal.walk(root))  # regular, non-hidden files; a link is an error
    except BenchsmithError as exc:
        raise bad(exc.message) from None
    for rel, (size, sha) in sorted(listed.items()):
        if rel not in present:
            raise bad(f"{rel} is listed but missing")
        got_size, got_sha = seal.hash_file(root, rel)
        if (got_size, got_sha) != (size, sha):
            raise bad(f"{rel} has {got_size} bytes, sha256 {got_sha[:12]}; listed {size} bytes, {sha[:12]}")
    extra = sorted(set(present) - set(listed) - {SEAL_FILE})
    if extra:
        raise bad(f"{extra[0]} is not listed" + (f" (+{len(extra) - 1} more)" if len(extra) > 1 else ""))
    return None
