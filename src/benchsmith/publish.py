"""Publishing a validated release: to the local registry, or to the Hugging Face Hub.

Both paths go through the gate first (``validation.gate.require_passed``): the release
must carry a validation report that passed and was computed on the data now in the
release. A published version is never overwritten (the registry's markers and locks,
``benchsmith.registry``, enforce it):

* **Local registry** (the default, no account needed): the release is copied (atomically)
  to ``<registry>/<name>/<version>`` if it is not there already, and a marker
  ``<registry>/<name>/.published/<version>.json`` records its split fingerprints. From
  then on ``build``/``audit`` refuse to replace that version with different data
  (``PublishError``); publishing the same data again is a no-op.
* **Hub** (``--hub ORG/NAME``): one commit makes ``main`` of the dataset repo hold exactly
  the release folder's files (and ``seal.json``, :mod:`benchsmith.hub_listing`), checked back
  after the commit, and it is tagged with the version. A tag that already exists with the same
  files, or with the same release (:mod:`benchsmith.release_identity`: same data and declared
  metadata, another validation report), is "already published" (nothing written); with other
  data it is a ``PublishError``, so a version on the Hub is never moved. Transient faults are retried (:data:`RETRY_DELAYS`,
  ``BENCHSMITH_HUB_RETRY_DELAYS``) without making a commit twice. Any failure is one
  ``PublishError`` line, and a repo created by a failed publish is deleted again (see
  :func:`publish_hub`). The token comes from huggingface_hub's usual places (``HF_TOKEN``,
  ``hf auth login``) and is never printed; ``--endpoint`` selects another Hub.
"""

from __future__ import annotations

import logging
import os
import resource
import shutil
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
from huggingface_hub import CommitOperationAdd, CommitOperationDelete, HfApi, constants, get_token
from huggingface_hub.errors import HfHubHTTPError, HFValidationError
from huggingface_hub.hf_api import RepoFile
from huggingface_hub.utils import validate_repo_id

from benchsmith import hub_listing, redact, registry, seal
from benchsmith.cards.card import render_files
from benchsmith.errors import GateError, PublishError, writing
from benchsmith.hub_errors import brief, explain, from_xet, hub_session
from benchsmith.release import Release
from benchsmith.release_identity import MANIFEST, same_release
from benchsmith.seal import Seal
from benchsmith.source import benchsmith_home
from benchsmith.validation.gate import require_passed
from benchsmith.validation.runner import find_builder
from benchsmith.viewer import require_viewer_compatible

logger = logging.getLogger(__name__)


def preflight(release: Release, *, allow_partial: bool = False, keep_open: dict[str, int] | None = None) -> Seal:
    """What every publish checks first, under the version's lock: the validation report passed
    on the manifest's fingerprints (the gate), the bytes on disk are the sealed ones (every file
    hashed: the seal, never the manifest's own sha256, is the authority), the build is complete
    (unless ``allow_partial``) and every source file has a registered checksum. Returns the seal;
    ``keep_open`` receives the checked files' fds (see :func:`benchsmith.seal.differences`)."""
    require_passed(release)
    sealed = _require_sealed(release, keep_open)
    try:
        if release.info.partial and not allow_partial:
            missing = release.info.missing_configs
            skipped = sorted(c for c, v in release.info.configs.items() if v.skipped_splits)
            raise PublishError(
                f"{release.name} {release.version} is a partial build"
                + (f" ({len(missing)} config(s) not built: {', '.join(missing[:5])}{' ...' if len(missing) > 5 else ''})"
                   if missing else "")
                + (f" (splits skipped in {', '.join(skipped)})" if skipped else ""),
                path=release.path,
                hint="Build every config (no --config / --skip-missing), or pass --allow-partial to publish it as is",
            )
        require_registered_sources(release)
    except BaseException:
        seal.close_all(keep_open)
        raise
    return sealed


def _require_sealed(release: Release, keep_open: dict[str, int] | None) -> Seal:
    """The seal and registered-content check of a publish: the bytes are the ones the trusted seal
    records (the published marker's, the registry's seal record, or only for a folder outside a
    registry the copy in reports/validation.json), that validation passed, and each split's data is
    its version's registered content (``fingerprints.tsv``) when the version is registered."""
    sealed, source = seal.certify(release, error=PublishError, registered=True, keep_open=keep_open)
    if sealed is None:
        raise GateError(f"{release.name} {release.version} has no seal ({source})", path=release.path,
                        hint=f"Run `benchsmith validate {release.path}` again: it records the seal publish checks")
    if seal.passed(release.path) is False:
        seal.close_all(keep_open)
        raise GateError(f"{release.name} {release.version} did not pass its validation ({source} says so)",
                        path=release.path, hint="Read the report, fix the release and validate it again")
    return sealed


def require_registered_sources(release: Release) -> None:
    """PublishError naming the first source file whose sha256 was not registered when the release
    was built (``release.json`` records each file's status): a build may accept it with a warning,
    a publication may not, since nobody could tell later which upstream bytes it was made from."""
    sources = release.info.sources  # checked by benchsmith.manifest: every file record has a status
    unregistered = [
        f"{name}/{rel}"
        for name, src in sources.items()
        for rel, rec in ((src or {}).get("files") or {}).items()
        if not isinstance(rec, dict) or rec.get("status") not in ("verified", "absent")
    ]
    if unregistered:
        more = f" (+{len(unregistered) - 1} more)" if len(unregistered) > 1 else ""
        raise PublishError(
            f"{release.name} {release.version} was built from a source file without a registered checksum: "
            f"{unregistered[0]}{more}",
            path=release.path / registry.MANIFEST,
            hint=f"Register its checksum (`benchsmith sources {release.name} --checksums DIR --write`), "
            "rebuild, validate, then publish",
        )


def _check_marker(target: Path, sealed: Seal, release: Release) -> dict | None:
    """The version's marker in the registry, refused when it records other bytes."""
    marker = registry.published_marker(target)
    recorded = (marker or {}).get("seal")
    if isinstance(recorded, dict) and recorded.get("digest") != sealed.digest:
        raise PublishError(
            f"{release.name} {release.version} was published with other bytes (seal {str(recorded.get('digest'))[:12]}, "
            f"this release's {sealed.digest[:12]})",
            path=registry.marker_path(target),
            hint="A published version never changes: bump the builder's version and publish that",
        )
    registry.guard_published(target, release.fingerprints())
    return marker


@contextmanager
def _version_locks(release: Release, target: Path) -> Iterator[None]:
    """The lock of the registry's version and, when the release lives elsewhere, its own: no
    build or validate writes into either while they are checked and copied."""
    with registry.lock(target, timeout=0):
        if target.resolve() == release.path.resolve() or not registry.in_registry(release.path):
            yield  # a folder outside any registry: nothing beside it is written (no lock)
            return
        with registry.lock(release.path, timeout=0):
            yield


def _fd_budget() -> int:
    """How many checked files a publish holds open at once: half the soft ``RLIMIT_NOFILE``, less
    a margin for pyarrow, huggingface_hub's sockets and upload threads (a 1,024 limit: 448)."""
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    return max(0, (soft if soft != resource.RLIM_INFINITY else 1 << 16) // 2 - 64)


def _held_open(release: Release) -> dict[str, int] | None:
    """``{}`` for preflight to fill with the checked files' fds when the release has few enough
    files (:func:`_fd_budget`); ``None`` for a larger one, whose files are then copied one
    descriptor at a time (:func:`_copy_checked`): never one open file per file."""
    return {} if sum(1 for _ in seal.walk(release.path)) <= _fd_budget() else None


def _copy_checked(src: Path, dst: Path, fds: dict[str, int] | None, sealed: Seal) -> None:
    """Copy the release's files under ``dst``, each checked against the seal as it is copied:
    from the fds preflight kept, or, without them, opening one file at a time (``O_NOFOLLOW``)."""
    if fds is not None:
        seal.copy_sealed(src, dst, fds, sealed)
        return
    for rel, _ in seal.walk(src):
        fd = seal.open_regular(src, rel)
        try:
            seal.copy_sealed(src, dst, {rel: fd}, sealed)
        finally:
            os.close(fd)


def _install(release: Release, target: Path, sealed: Seal, fds: dict[str, int] | None,
             staged: Path | None = None) -> None:
    """Make ``target`` hold the release: copy the checked files there (staging, verified, then
    renamed into place; ``staged``: a checked copy made already), or check that the copy already
    there has the sealed bytes."""
    if target.resolve() == release.path.resolve():
        return
    if target.exists():
        if seal.differences(target, sealed, full=True):
            raise PublishError(
                f"the registry already holds a different {release.name} {release.version}",
                path=target,
                hint="Bump the version, or validate and publish the release that is in the registry",
            )
        return
    with writing(target):  # a full disk names the version being written, not its staging folder
        tmp = staged or registry.make_staging(target.parent, release.version, kind="publish")
        try:
            if staged is None:
                _copy_checked(release.path, tmp, fds, sealed)
            registry.commit(tmp, target, overwrite=False)
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            raise


def publish_local(release: Release, registry_root: Path, *, allow_partial: bool = False) -> dict[str, Any]:
    """Under the version's lock: preflight, copy the sealed files into the registry if needed,
    and mark the version published there with its seal."""
    target = registry.version_dir(registry_root, release.name, release.version)
    registry.recover(target.parent)
    fds = _held_open(release)
    with _version_locks(release, target):
        sealed = preflight(release, allow_partial=allow_partial, keep_open=fds)
        try:
            marker = _check_marker(target, sealed, release)
            already = marker is not None and bool(marker.get("local", True))
            _install(release, target, sealed, fds)
        finally:
            seal.close_all(fds)
        if not already:
            registry.mark_published(target, release.name, release.version, release.fingerprints(),
                                    seal=sealed.to_dict())
    return {"published": str(target), "registry": str(registry_root), "already_published": already,
            "name": release.name, "version": release.version, "seal": sealed.digest}


def hub_record_registry(release: Release, registry_root: Path | None) -> Path:
    """Where a Hub publication is recorded: ``registry_root`` when given, else the registry that
    holds the release folder (``<root>/<name>/<version>`` with ``<root>`` a registry), else the
    default registry. A copy shaped like a registry's folder is not one: nothing is written beside it."""
    if registry_root is not None:
        return Path(registry_root)
    path = release.path.resolve()
    if path.name == release.version and path.parent.name == release.name and registry.in_registry(path):
        return path.parent.parent

    return benchsmith_home() / "registry"


# --------------------------------------------------------------------------- the Hub



def publish_hub(release: Release, repo_id: str, *, endpoint: str | None = None, token: str | None = None,
                allow_partial: bool = False, registry_root: Path | None = None) -> dict[str, Any]:
    """Gate, then make one commit on ``main`` of the Hub dataset repo ``repo_id`` whose files
    are exactly the release folder's, and tag it with the version.

    * The commit mirrors the folder: files on ``main`` that the release does not have (another
      version's configs) are deleted in the same commit, except ``.gitattributes``; hidden
      files of the folder (``.*``, in-progress leftovers) are not uploaded. It names the head
      it was computed on (``parent_commit``), so a concurrent push makes it fail, not mix.
    * An existing tag is checked before anything is written: the same files as this publish
      would upload (paths, sizes, LFS sha256 / git blob ids, :mod:`benchsmith.hub_listing`) is
      "already published"; anything else a :class:`PublishError` naming the first difference.
      A version on the Hub never moves.
    * Before the Hub is contacted: the viewer check (:func:`benchsmith.viewer.require_viewer_compatible`)
      on the Hub-rendered card. After the commit: its files listed and compared with the upload.
    * Transient faults (connection, timeout, 429, 5xx) are retried after :func:`retry_delays`;
      before retrying a commit (or tag) publish checks whether it landed (response lost).
    * Any failure (HTTP error, no connection, ``HF_HUB_OFFLINE``, an upload error) is one
      :class:`PublishError` naming the repo, the endpoint and what to do; the token never
      appears in it. A repo created by this call is deleted again on failure; a repo that
      existed is left as it was (a commit is atomic; only a failed tag after a successful
      commit leaves an untagged commit on ``main``, and the message says to publish again).
    * The commit holds exactly the sealed files and the two by-rule reports, each uploaded from
      the fd it was hashed through (``O_NOFOLLOW``: nothing is read through a link), under the
      version's lock; the card, Croissant and lm_eval/ are the Hub renderings of the same release.
    * Recorded like a local publish (:func:`hub_record_registry` says in which registry): the
      release is copied there if absent and its marker gets ``{repo, tag, commit, endpoint}`` and
      the seal, so ``show`` says where it went and ``build --overwrite`` refuses the version.
    * xet: huggingface_hub reads ``HF_HUB_DISABLE_XET`` once, at import, into
      ``huggingface_hub.constants``. Unless that variable is set, uploads to an endpoint
      other than huggingface.co (a self-hosted or test Hub, which has no xet storage) switch
      xet off for this call through that constant; huggingface.co keeps the library default.
    """
    try:
        validate_repo_id(repo_id)
    except HFValidationError as exc:
        raise PublishError(f"--hub {repo_id!r} is not a Hub repo id ({brief(exc)})",
                           hint="Use ORG/NAME (letters, digits, '-', '_' and '.')") from None
    api = HfApi(endpoint=endpoint, token=token)
    secret = token or get_token()
    what = f"{release.name} {release.version} to {repo_id} at {redact.safe_url(api.endpoint)}"
    if constants.HF_HUB_OFFLINE:
        raise PublishError(f"cannot publish {what}: HF_HUB_OFFLINE is set, so the Hub is not contacted",
                           hint="Unset HF_HUB_OFFLINE (or set it to 0) and publish again")
    target = registry.version_dir(hub_record_registry(release, registry_root), release.name, release.version)
    registry.recover(target.parent)
    fds = _held_open(release)
    with _version_locks(release, target):
        sealed = preflight(release, allow_partial=allow_partial, keep_open=fds)
        staged: Path | None = None
        try:
            _check_marker(target, sealed, release)
            rendered = _hub_rendered(release, repo_id)
            # the viewer check runs on the card as it will be uploaded, before the Hub is contacted
            require_viewer_compatible(release, card_text=rendered.get("README.md"))
            if fds is None:  # too many files to hold open: upload a checked private copy
                with writing(target):
                    staged = registry.make_staging(target.parent, release.version, kind="publish")
                    _copy_checked(release.path, staged, None, sealed)
                local = {rel: str(staged / rel) for rel, _ in seal.walk(staged)}
            else:
                local = _local_paths(release.path, fds)
            out = _commit_to_hub(release, api, repo_id, local, secret, what, rendered, sealed)
            _install(release, target, sealed, fds, staged=staged)
        finally:
            seal.close_all(fds)
            if staged is not None:
                shutil.rmtree(staged, ignore_errors=True)  # gone already when it became the registry's copy
        registry.mark_published(target, release.name, release.version, release.fingerprints(), seal=sealed.to_dict(),
                                hub={"repo": repo_id, "tag": release.version, "commit": out["commit"],
                                     "endpoint": redact.safe_url(api.endpoint)})
    return out | {"seal": sealed.digest, "recorded_in": str(registry.marker_path(target))}


def _commit_to_hub(release: Release, api: Any, repo_id: str, local: dict[str, str], secret: str | None,
                   what: str, rendered: dict[str, str], sealed: Seal) -> dict[str, Any]:
    """One commit of the checked files (``local``: path in the release -> where to upload it from)
    and ``seal.json`` on main, checked back, then
    the tag (see :func:`publish_hub`); a tag that exists with the same files is "already published"."""
    created = False
    commit_oid: str | None = None
    made: str | None = None  # the commit this call made (never one found on the Hub)
    removed: list[str] = []
    # what the commit will hold, hashed once: sizes, sha256 (LFS) and git blob ids to compare with
    expected = [hub_listing.hash_bytes(rel, rendered[rel].encode("utf-8")) if rel in rendered
                else hub_listing.hash_path(rel, path) for rel, path in local.items()]
    listing = hub_listing.seal_json(expected, release_seal=sealed.digest, name=release.name, version=release.version)
    expected.append(hub_listing.hash_bytes(hub_listing.SEAL_FILE, listing))
    out = {"published": f"{repo_id}@{release.version}", "tag": release.version, "name": release.name,
           "version": release.version, "already_published": False}
    with hub_session(api.endpoint):
        try:
            if not _retrying(lambda: api.repo_exists(repo_id, repo_type="dataset"), "check the repo"):
                created = _retrying(lambda: _create_repo(api, repo_id), "create the repo")
            refs = _retrying(lambda: api.list_repo_refs(repo_id, repo_type="dataset"), "list the refs")
            tagged = next((t.target_commit for t in refs.tags if t.name == release.version), None)
            if tagged is not None:
                problems = hub_listing.tree_differences(_remote_files(api, repo_id, tagged), expected)
                kept, reasons = _same_release_on_hub(api, repo_id, tagged, expected, local) if problems else ([], [])
                problems = reasons or problems  # another release: name what makes it one first
                if problems and kept is None:
                    raise PublishError(
                        f"{repo_id} already has a tag {release.version} with other content ({problems[0]}"
                        + (f"; +{len(problems) - 1} more" if len(problems) > 1 else "")
                        + "); a published version is never overwritten",
                        hint="Bump the builder's version and publish that",
                    )
                if kept:
                    out |= {"same_release": True, "kept_on_hub": kept,
                            "note": f"the same release: same data and declared metadata; the tag keeps its own "
                                    f"{', '.join(kept[:3])}{' ...' if len(kept) > 3 else ''}"}
                return out | {"commit": tagged, "already_published": True, "repo_created": False, "removed": []}
            head = next((b.target_commit for b in refs.branches if b.name == "main"), None)
            if head is not None and not hub_listing.tree_differences(_remote_files(api, repo_id, head), expected):
                commit_oid = head  # main already holds exactly these files (a publish whose tag failed)
            else:
                operations, removed = _mirror_operations(api, repo_id, head, local, rendered, listing)
                made = commit_oid = _commit_once(api, repo_id, operations, head, expected,
                                          f"{release.name} {release.version}")
                problems = hub_listing.tree_differences(_remote_files(api, repo_id, commit_oid), expected)
                if problems:
                    raise PublishError(
                        f"the Hub does not hold what was uploaded to {repo_id} (commit {commit_oid[:12]}): "
                        f"{problems[0]}" + (f" (+{len(problems) - 1} more)" if len(problems) > 1 else ""),
                        hint="Check the repo on the Hub (a proxy or hook changed the upload), then publish a new version",
                    )
            try:
                _tag_once(api, repo_id, release.version, commit_oid, f"{release.name} {release.version}")
            except Exception:
                # a racing publisher of the same release tagged first (409): its tag holds these files
                won = _tagged_with(api, repo_id, release.version, expected)
                if won is None:
                    raise
                return out | {"commit": won, "already_published": True, "repo_created": created, "removed": []}
        except BaseException as exc:
            undone = _undo(api, repo_id, created=created, commit_oid=commit_oid, made=made, secret=secret)
            if isinstance(exc, PublishError):
                if not created:
                    raise
                raise PublishError(f"{exc.message}; {undone}", hint=exc.hint) from None
            if not isinstance(exc, Exception):  # KeyboardInterrupt and the like: cleaned up, re-raised
                raise
            # -v adds the detail, never a traceback: the failure is handled (one line below)
            logger.debug("publishing to the Hub failed: %s", brief(exc))
            problem, hint = explain(exc, api.endpoint, token_sent=secret is not None)
            raise PublishError(_redact(f"cannot publish {what}: {problem}; {undone}", secret),
                               hint=_redact(hint, secret)) from None
    return out | {"commit": commit_oid, "repo_created": created, "removed": removed}


def _same_release_on_hub(api: Any, repo_id: str, tagged: str, expected: list[Any],
                         local: dict[str, str]) -> tuple[list[str] | None, list[str]]:
    """Whether the tag holds the same release as this upload (:func:`benchsmith.release_identity.same_release`:
    the same data and declared metadata, e.g. from a second runner whose validation differs):
    ``(kept, [])`` with the report-derived paths the tag keeps, or ``(None, reasons)``."""
    def theirs() -> bytes:
        with tempfile.TemporaryDirectory(prefix="benchsmith-tag-") as tmp:
            path = _retrying(lambda: api.hf_hub_download(repo_id, MANIFEST, repo_type="dataset", revision=tagged,
                                                         local_dir=tmp), "read the tag's release.json")
            return Path(path).read_bytes()

    if MANIFEST not in local:
        return None, []
    with open(local[MANIFEST], "rb") as fh:
        ours = fh.read()
    return same_release(_remote_files(api, repo_id, tagged), expected, theirs, ours)


# --------------------------------------------------------------------------- retries

#: seconds to wait before each retry of a Hub call that failed transiently (connection error,
#: timeout, 429, 5xx); ``BENCHSMITH_HUB_RETRY_DELAYS`` (comma-separated seconds, "" for none)
#: overrides it, as the tests do
RETRY_DELAYS: tuple[float, ...] = (2.0, 8.0, 30.0)


def retry_delays() -> tuple[float, ...]:
    text = os.environ.get("BENCHSMITH_HUB_RETRY_DELAYS")
    if text is None:
        return RETRY_DELAYS
    try:
        delays = tuple(float(x) for x in text.split(",") if x.strip())
    except ValueError:
        delays = (-1.0,)
    if any(d < 0 for d in delays):
        raise PublishError(f"BENCHSMITH_HUB_RETRY_DELAYS={text!r} is not a list of seconds",
                           hint="Write comma-separated seconds, e.g. 2,8,30 (or leave it unset)")
    return delays


def transient(exc: BaseException) -> bool:
    """Worth retrying: no connection, a timeout, 429 Too Many Requests, or a 5xx of the Hub."""
    if isinstance(exc, HfHubHTTPError):
        status = exc.response.status_code if exc.response is not None else None
        return status == 429 or (status is not None and status >= 500)
    if from_xet(exc):  # hf_xet raises ConnectionError for a 4xx too (a Hub without xet): not transient
        return False
    if isinstance(exc, ConnectionError | TimeoutError):
        return True
    return isinstance(exc, httpx.TransportError)


def _retrying(call: Callable[[], Any], doing: str, landed: Callable[[], Any] | None = None) -> Any:
    """``call()``, retried after each delay of :func:`retry_delays` while it fails transiently.
    Before each retry ``landed()`` (when given) checks whether the failed call took effect
    anyway (its response was lost): a result other than None is returned as the call's.

    Why not huggingface_hub's ``http_backoff``: it retries one HTTP request, while a commit is
    several (preupload, LFS batch, the ndjson commit) and a commit or tag whose response was lost
    must not be sent again; only a retry around the whole call with the ``landed`` check can say
    "it landed, do not commit twice" (tests/test_core_publish_hub.py, the ``lose=`` faults)."""
    delays = retry_delays()
    for attempt in range(len(delays) + 1):
        try:
            return call()
        except Exception as exc:
            if attempt == len(delays) or not transient(exc):
                raise
            # info, not warning: a failure stays one line; `-v` shows the retries
            logger.info("the Hub failed to %s (%s); retrying in %gs", doing, brief(exc), delays[attempt])
            time.sleep(delays[attempt])
            if landed is not None:
                try:
                    done = landed()
                except Exception as again:  # noqa: BLE001 - the check failed too: the retry decides
                    logger.debug("checking whether %s landed failed: %s", doing, brief(again))
                    done = None
                if done is not None:
                    return done
    raise AssertionError("unreachable")  # pragma: no cover


def _commit_once(api: Any, repo_id: str, operations: list[Any], head: str | None, expected: list[Any],
                 message: str) -> str:
    """Create the commit, retried; a commit whose response was lost is found on main (main moved
    from ``head`` to a commit holding exactly ``expected``) and never made twice."""

    def landed() -> str | None:
        refs = api.list_repo_refs(repo_id, repo_type="dataset")
        now = next((b.target_commit for b in refs.branches if b.name == "main"), None)
        if now is not None and now != head and not hub_listing.tree_differences(
                _remote_files(api, repo_id, now), expected):
            return now
        return None

    return _retrying(lambda: api.create_commit(repo_id, operations, repo_type="dataset", parent_commit=head,
                                               commit_message=message).oid, "commit", landed)


def _tag_once(api: Any, repo_id: str, tag: str, commit_oid: str, message: str) -> None:
    """Create the tag, retried; a tag that landed on ``commit_oid`` despite an error is kept."""

    def landed() -> bool | None:
        refs = api.list_repo_refs(repo_id, repo_type="dataset")
        return True if any(t.name == tag and t.target_commit == commit_oid for t in refs.tags) else None

    _retrying(lambda: api.create_tag(repo_id, tag=tag, repo_type="dataset", revision=commit_oid,
                                     tag_message=message), "tag", landed)


def _tagged_with(api: Any, repo_id: str, tag: str, expected: list[Any]) -> str | None:
    """The commit ``tag`` names if it holds exactly the ``expected`` files, else None (also when
    the Hub cannot be read: the caller's own error is the one to report)."""
    try:
        refs = api.list_repo_refs(repo_id, repo_type="dataset")
        tagged = next((t.target_commit for t in refs.tags if t.name == tag), None)
        if tagged is None or hub_listing.tree_differences(_remote_files(api, repo_id, tagged), expected):
            return None
    except Exception:  # noqa: BLE001 - unreadable: not shown to be the same release
        return None
    return tagged


def _remote_files(api: Any, repo_id: str, revision: str) -> list[Any]:
    """The files (``RepoFile``: size, blob id, LFS sha256) of a commit, retried."""
    entries = _retrying(lambda: list(api.list_repo_tree(repo_id, repo_type="dataset", revision=revision,
                                                        recursive=True)), "list the files")
    return [e for e in entries if isinstance(e, RepoFile)]


def _create_repo(api: Any, repo_id: str) -> bool:
    """Create the dataset repo; False when it appeared meanwhile (someone else created it)."""
    try:
        api.create_repo(repo_id, repo_type="dataset", exist_ok=False)
    except HfHubHTTPError as exc:
        if exc.response is not None and exc.response.status_code == 409:
            return False
        raise
    return True


def _hub_rendered(release: Release, repo_id: str) -> dict[str, str]:
    """The card, Croissant and lm_eval/ files rendered for the Hub copy (loading snippet with
    the repo and revision, lm-eval configs pointing at it); the local release stays as it is."""
    return render_files(release, find_builder(release)[0], hub={"repo": repo_id, "revision": release.version})


def _local_paths(folder: Path, fds: dict[str, int]) -> dict[str, str]:
    """Each checked file's upload path: its fd's /proc/self/fd link, a fresh open of the very
    inode that was hashed (whatever is at its path now), with its own offset, as
    huggingface_hub's upload threads need. (A file object would be shared by two operations
    with the same content, which huggingface_hub uploads once from two threads.) Without
    /proc the path itself is used, under the version's lock."""
    proc = Path("/proc/self/fd")
    return {rel: f"{proc}/{fds[rel]}" if proc.is_dir() else str(folder / rel) for rel in sorted(fds)}


def _mirror_operations(api: Any, repo_id: str, head: str | None, local: dict[str, str],
                       rendered: dict[str, str], listing: bytes) -> tuple[list[Any], list[str]]:
    """The commit operations that make ``main`` hold exactly the checked files (``local``: path
    in the release -> upload path), ``seal.json`` and ``.gitattributes``, with the Hub's
    ``rendered`` texts in place of the local copies of those paths; also the paths it deletes."""
    remote = {f.path for f in _remote_files(api, repo_id, head)} if head else set()
    removed = sorted(remote - set(local) - {".gitattributes", hub_listing.SEAL_FILE})
    adds = [CommitOperationAdd(path_in_repo=rel, path_or_fileobj=rendered[rel].encode("utf-8") if rel in rendered
                               else path) for rel, path in local.items()]
    adds.append(CommitOperationAdd(path_in_repo=hub_listing.SEAL_FILE, path_or_fileobj=listing))
    # a Hub rendering of a file the release does not have is left out: the commit holds exactly
    # the sealed list (README.md, croissant.json and lm_eval/ are rendered for it and sealed)
    return [CommitOperationDelete(path_in_repo=p) for p in removed] + adds, removed


def _undo(api: Any, repo_id: str, *, created: bool, commit_oid: str | None, made: str | None,
          secret: str | None) -> str:
    """Undo what a failed publish did to the Hub; says what state it left (for the message).

    A repo this call created is deleted only while it holds nothing but its first commit and
    the commit this call made (``made``): two first publishes can race, and the other one's
    commit or tag may already be there; deleting the repo would lose it."""
    if created:
        try:
            refs = api.list_repo_refs(repo_id, repo_type="dataset")
            history = [c.commit_id for c in api.list_repo_commits(repo_id, repo_type="dataset")]
        except Exception as exc:  # noqa: BLE001 - cannot tell what the repo holds: never delete blindly
            return _redact(f"the repo {repo_id} it created was left as it was (reading it failed: {brief(exc)}): "
                           "check it, and delete it by hand if it holds no commit", secret)
        others = [c for c in history[:-1] if c != made]  # history[-1]: the commit create_repo made
        if others or refs.tags or any(b.name != "main" for b in refs.branches):
            return (f"the repo {repo_id} it created holds commits or tags another publisher made meanwhile, "
                    "so it was left as it was")
        try:
            api.delete_repo(repo_id, repo_type="dataset", missing_ok=True)
        except Exception as exc:  # noqa: BLE001 - the Hub went away meanwhile: said, first error kept
            return _redact(f"the repo {repo_id} it created could not be deleted ({brief(exc)}): "
                           "delete it by hand", secret)
        return f"the repo {repo_id} it created was deleted again"
    if commit_oid is not None:
        return (f"commit {commit_oid[:12]} is on main of {repo_id} but has no tag: "
                "publish the same release again to tag it")
    return f"{repo_id} was left as it was"


def _redact(text: str, secret: str | None) -> str:
    return redact.redact(text, secret)
