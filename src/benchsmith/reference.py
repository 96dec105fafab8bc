"""A release named from anywhere: a folder, ``NAME[/VERSION]`` in a registry, or a Hub revision.

``validate --previous``, ``audit --previous`` and ``diff`` accept any of::

    registry/xcopa/1.0.0                     a release folder
    xcopa/1.0.0   xcopa                      NAME[/VERSION] in the registry (newest version)
    hf://datasets/ORG/NAME@REV               a revision (tag, branch or commit) of a Hub dataset repo

(``hf://datasets/...`` is huggingface_hub's own URL form, as ``HfFileSystem`` reads it.)

Decisions for Hub revisions:

* The revision is resolved to its commit id first (one API call), and the snapshot is kept
  under ``$BENCHSMITH_HOME/cache/hub/<org>--<name>/<commit>/``: a commit never changes, so a
  cached snapshot is reused without asking the Hub again, and a tag that moved is noticed
  (its new commit is another folder). ``HF_HUB_OFFLINE=1`` uses the commit the tag had
  when it was last resolved (``refs/<rev>`` beside the snapshots), or fails saying so.
* The snapshot is downloaded by ``huggingface_hub.snapshot_download`` into a staging
  sibling and renamed into place when complete (an interrupted download leaves no
  half-snapshot that a later run would trust). ``local_dir`` mode writes regular files, not
  the links into a blob store of the default cache, so the folder is a release folder like
  any other and goes through the same untrusted-input checks (``benchsmith.release.Release``).
* A snapshot is then checked like any release: its data files against its manifest's
  per-file sha256 (:meth:`Release.require_intact`), and against the ``seal.json`` listing that
  ``publish --hub`` uploaded with it (every listed file there with its size and sha256, no
  unlisted file; :mod:`benchsmith.hub_listing`). A snapshot without ``seal.json`` (not published
  by benchsmith) is accepted with a note (logged, and ``release.seal_note``).
* Any Hub failure is one :class:`~benchsmith.errors.ReleaseError` line naming the repo, the
  revision and the endpoint.
"""

from __future__ import annotations

import logging
import os
import re
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import unquote

from huggingface_hub import HfApi, constants, get_token, snapshot_download
from huggingface_hub.errors import RepositoryNotFoundError

from benchsmith import hub_http
from benchsmith.cache import benchsmith_home
from benchsmith.errors import ConfigError, EnvironmentFault, GateError, ReleaseError
from benchsmith.hub_errors import explain, hub_session, network
from benchsmith.hub_listing import SEAL_FILE, verify_snapshot
from benchsmith.lookup import gold_release, resolve_release
from benchsmith.redact import redact
from benchsmith.registry import write_text_atomic
from benchsmith.release import Release
from benchsmith.semver import parse_version

logger = logging.getLogger(__name__)

_HF = re.compile(r"^hf://datasets/(?P<repo>[A-Za-z0-9][\w.\-]*/[\w.\-]+)(?:@(?P<rev>[^/]+))?/?$")


@dataclass(frozen=True)
class HubRef:
    repo_id: str
    revision: str

    def __str__(self) -> str:
        return f"hf://datasets/{self.repo_id}@{self.revision}"


def parse_hub_ref(text: str) -> HubRef | None:
    """``HubRef`` for ``hf://datasets/ORG/NAME[@REV]`` (REV default ``main``; URL-encoded
    revisions such as ``refs%2Fpr%2F1`` are decoded), None for anything not starting with
    ``hf://``; a malformed ``hf://`` reference is a :class:`ReleaseError`."""
    if not text.startswith("hf://"):
        return None
    m = _HF.match(text)
    if not m:
        raise ReleaseError(f"{text!r} is not a Hub dataset reference",
                           hint="Write hf://datasets/ORG/NAME@REVISION (a tag such as 1.0.0, a branch or a commit)")
    return HubRef(m["repo"], unquote(m["rev"] or "main"))


def hub_cache() -> Path:
    return benchsmith_home() / "cache" / "hub"


def resolve(text: str, registry: Path | None = None, *, endpoint: str | None = None,
            token: str | None = None) -> Release:
    """The release ``text`` names (see the module docstring)."""
    ref = parse_hub_ref(text)
    if ref is None:
        return resolve_release(text, registry)
    return hub_release(ref, endpoint=endpoint, token=token)


def gold(text: str, registry: Path | None = None, *, allow_unvalidated: bool = False) -> Release:
    """The release ``text`` names, to score against: :func:`hub_gold` for a Hub revision, else
    :func:`benchsmith.lookup.gold_release`."""
    ref = parse_hub_ref(text)
    if ref is None:
        return gold_release(text, registry, allow_unvalidated=allow_unvalidated)
    return hub_gold(ref, allow_unvalidated=allow_unvalidated)


def _commit_of(ref: HubRef, api, folder: Path) -> str:
    """The commit id the revision names now (recorded under ``refs/``), or offline the last one."""
    refs = folder / "refs" / ref.revision.replace("/", "%2F")
    if constants.HF_HUB_OFFLINE:
        if refs.is_file():
            return refs.read_text(encoding="utf-8").strip()
        raise ReleaseError(f"{ref} is not in the cache and HF_HUB_OFFLINE is set", path=folder,
                           hint="Unset HF_HUB_OFFLINE to download it once")
    sha = api.dataset_info(ref.repo_id, revision=ref.revision).sha
    if not sha or not re.fullmatch(r"[0-9a-f]{40}", sha):
        raise ReleaseError(f"the Hub answered no commit id for {ref}", hint="Check the revision name")
    refs.parent.mkdir(parents=True, exist_ok=True)

    write_text_atomic(refs, sha + "\n")
    return sha


def newest_hub_tag(repo_id: str, *, at_most: str, endpoint: str | None = None) -> str | None:
    """The highest semver tag of a Hub dataset repo that is not above ``at_most`` (the same
    version included: a rebuild is then compared with what was published under it); None
    when there is none, the repo does not exist, or ``HF_HUB_OFFLINE`` is set."""
    if constants.HF_HUB_OFFLINE:
        return None
    hub_http.install()
    try:
        refs = HfApi(endpoint=endpoint).list_repo_refs(repo_id, repo_type="dataset")
    except RepositoryNotFoundError:
        return None
    except Exception as exc:  # noqa: BLE001 - one line, as every Hub failure
        problem, hint = explain(exc, endpoint or constants.ENDPOINT, doing=f"listing the tags of {repo_id}",
                                 again="try again")
        raise (EnvironmentFault if network(exc) else ReleaseError)(
            redact(f"cannot list the tags of hf://datasets/{repo_id}: {problem}"), hint=redact(hint)) from None
    limit = parse_version(at_most)
    versions = []
    for tag in refs.tags:
        try:
            v = parse_version(tag.name)
        except ConfigError:  # not a version tag
            continue
        if v <= limit:
            versions.append((v, tag.name))
    return max(versions)[1] if versions else None


def hub_release(ref: HubRef, *, endpoint: str | None = None, token: str | None = None):
    """Download (once) and open the release at a Hub revision (see the module docstring)."""
    api = HfApi(endpoint=endpoint, token=token)
    folder = hub_cache() / ref.repo_id.replace("/", "--")
    try:
        with hub_session(api.endpoint):
            commit = _commit_of(ref, api, folder)
            target = folder / commit
            if not (target / "release.json").is_file():
                folder.mkdir(parents=True, exist_ok=True)
                tmp = Path(tempfile.mkdtemp(prefix=f".{commit}.tmp-{os.getpid()}-", dir=folder))
                try:
                    _require_bounded_listing(api, ref, commit)
                    snapshot_download(ref.repo_id, repo_type="dataset", revision=commit, local_dir=tmp,
                                      endpoint=api.endpoint, token=token)
                    shutil.rmtree(tmp / ".cache", ignore_errors=True)  # huggingface_hub's download metadata
                    if target.exists():  # another process finished first: same commit, same bytes
                        shutil.rmtree(tmp, ignore_errors=True)
                    else:
                        os.replace(tmp, target)
                except BaseException:
                    shutil.rmtree(tmp, ignore_errors=True)
                    raise
    except ReleaseError:
        raise
    except Exception as exc:  # noqa: BLE001 - every Hub failure becomes one line
        if isinstance(exc, OSError) and exc.errno is not None and not network(exc):  # the cache's disk: full...
            raise EnvironmentFault.writing(exc, folder) from None
        problem, hint = explain(exc, api.endpoint, doing=f"reading the Hub repo {ref.repo_id}", again="try again")
        secret = token or get_token()
        # an unreachable or silent Hub is the machine's network (exit 3); anything the Hub said is not
        raise (EnvironmentFault if network(exc) else ReleaseError)(
            redact(f"cannot read {ref} from {api.endpoint}: {problem}", secret), hint=redact(hint, secret)) from None
    release = Release(target)
    try:
        release.require_intact()
    except ReleaseError as exc:
        raise ReleaseError(f"the snapshot of {ref} does not match its own manifest: {exc.message}", path=target,
                           hint="The Hub copy was changed after publishing; compare with another revision") from None
    _check_seal(release, ref)
    release.origin = str(ref)  # type: ignore[attr-defined]  # said in reports: where the previous came from
    return release


def hub_gold(ref: HubRef, *, allow_unvalidated: bool = False, endpoint: str | None = None) -> Release:
    """:func:`hub_release` for scoring (``evaluate --release hf://...``). A snapshot that matches
    the ``seal.json`` its publish uploaded is certified: ``publish`` uploads only a release whose
    validation passed, and the listing pins every byte. One without that listing (not published by
    benchsmith) is a :class:`GateError` unless ``allow_unvalidated``, then scored with a warning."""
    release = hub_release(ref, endpoint=endpoint)
    if release.seal_note is None:  # type: ignore[attr-defined]
        return release
    if not allow_unvalidated:
        raise GateError(f"{ref} has no {SEAL_FILE} (not published by benchsmith): its gold data is not certified",
                        hint="Score against a revision benchsmith published, or pass --allow-unvalidated to "
                        "score against it anyway")
    logger.warning("%s: scoring against gold data nobody certified (--allow-unvalidated)", ref)
    return release


#: the most entries a Hub revision's file listing may have before it is downloaded: a release has
#: a few files per config and split, so anything near this is not a release (and would take hours)
MAX_HUB_ENTRIES = 20_000


def _require_bounded_listing(api, ref: HubRef, commit: str) -> None:
    """Refuse a revision listing more than :data:`MAX_HUB_ENTRIES` files and folders, before
    anything is downloaded (the listing is read page by page, and stops there)."""
    for count, _ in enumerate(api.list_repo_tree(ref.repo_id, repo_type="dataset", revision=commit,
                                                 recursive=True), start=1):
        if count > MAX_HUB_ENTRIES:
            raise ReleaseError(f"{ref} lists more than {MAX_HUB_ENTRIES:,} files and folders; a release has far fewer",
                               hint="Check the repo and the revision: this is not a benchsmith release")


def _check_seal(release, ref: HubRef) -> None:
    """Check a snapshot against the ``seal.json`` listing its publish uploaded
    (:func:`benchsmith.hub_listing.verify_snapshot`: a :class:`ReleaseError` naming the file
    that differs); a snapshot without one is accepted, and the note is logged and kept on the
    release (``seal_note``) for reports."""
    note = verify_snapshot(release, str(ref))
    release.seal_note = note  # type: ignore[attr-defined]
    if note:
        logger.warning("note: %s", note)


__all__ = ["HubRef", "gold", "hub_gold", "hub_release", "newest_hub_tag", "parse_hub_ref", "resolve"]
