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
* **Hub** (``--hub ORG/NAME``): the release folder is committed to the dataset repo and the
  commit is tagged with the version. A tag that already exists is a ``PublishError``, so
  a version on the Hub is never moved. The token comes from huggingface_hub's usual
  places (``HF_TOKEN``, ``hf auth login``); ``--endpoint`` selects another Hub (a local
  test Hub needs ``HF_HUB_DISABLE_XET=1``, which is set when unset).
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

from benchsmith import registry
from benchsmith.errors import PublishError
from benchsmith.release import Release


def preflight(release: Release, *, allow_partial: bool = False) -> None:
    """What every publish checks first: the files on disk are the ones the manifest records
    (per-file sha256), the build is complete (unless ``allow_partial``), and the validation
    report passed on exactly these fingerprints (the gate)."""
    from benchsmith.validation.gate import require_passed

    release.require_intact()
    if release.manifest.get("partial") and not allow_partial:
        missing = release.manifest.get("missing_configs") or []
        skipped = sorted(c for c, v in release.manifest["configs"].items() if v.get("skipped_splits"))
        raise PublishError(
            f"{release.name} {release.version} is a partial build"
            + (f" ({len(missing)} config(s) not built: {', '.join(missing[:5])}{' ...' if len(missing) > 5 else ''})"
               if missing else "")
            + (f" (splits skipped in {', '.join(skipped)})" if skipped else ""),
            path=release.path,
            hint="Build every config (no --config / --skip-missing), or pass --allow-partial to publish it as is",
        )
    require_passed(release)


def publish_local(release: Release, registry_root: Path, *, allow_partial: bool = False) -> dict[str, Any]:
    """Gate, copy into the registry if needed, and mark the version published (under its lock)."""
    preflight(release, allow_partial=allow_partial)
    fps = release.fingerprints()
    target = registry.version_dir(registry_root, release.name, release.version)
    registry.recover(target.parent)
    with registry.lock(target, timeout=0):
        registry.guard_published(target, fps)
        already = registry.published_fingerprints(target) == fps
        if target.resolve() != release.path.resolve():
            if target.exists():
                if Release(target).fingerprints() != fps:
                    raise PublishError(
                        f"the registry already holds a different {release.name} {release.version}",
                        path=target,
                        hint="Bump the version, or validate and publish the release that is in the registry",
                    )
            else:
                tmp = registry.make_staging(target.parent, release.version, kind="publish")
                try:
                    shutil.copytree(release.path, tmp, dirs_exist_ok=True)
                    registry.commit(tmp, target, overwrite=False)
                except BaseException:
                    shutil.rmtree(tmp, ignore_errors=True)
                    raise
        if not already:
            registry.mark_published(target, release.name, release.version, fps)
    return {"published": str(target), "registry": str(registry_root), "already_published": already,
            "name": release.name, "version": release.version}


def publish_hub(release: Release, repo_id: str, *, endpoint: str | None = None, token: str | None = None,
                api: Any = None, allow_partial: bool = False) -> dict[str, Any]:
    """Gate, then commit the release folder to a Hub dataset repo and tag it with the version."""
    preflight(release, allow_partial=allow_partial)
    os.environ.setdefault("HF_HUB_DISABLE_XET", "1")
    from huggingface_hub import HfApi
    from huggingface_hub.errors import HfHubHTTPError

    api = api or HfApi(endpoint=endpoint, token=token)
    try:
        api.create_repo(repo_id, repo_type="dataset", exist_ok=True)
        tags = {t.name for t in api.list_repo_refs(repo_id, repo_type="dataset").tags}
        if release.version in tags:
            raise PublishError(
                f"{repo_id} already has a tag {release.version}; a published version is never overwritten",
                hint="Bump the builder's version and publish that",
            )
        commit = api.upload_folder(
            repo_id=repo_id,
            repo_type="dataset",
            folder_path=str(release.path),
            commit_message=f"{release.name} {release.version}",
        )
        api.create_tag(repo_id, tag=release.version, repo_type="dataset", revision=commit.oid,
                       tag_message=f"{release.name} {release.version}")
    except HfHubHTTPError as exc:
        raise PublishError(
            f"the Hub refused {repo_id}: {exc}",
            hint="Check the token (HF_TOKEN), the repo name and --endpoint",
        ) from None
    return {"published": f"{repo_id}@{release.version}", "commit": commit.oid, "tag": release.version,
            "name": release.name, "version": release.version}
