"""A version tagged on the builder's Hub repo is that content: ``build`` checks it before the commit.

Kept apart from :mod:`benchsmith.reference` (which reads whole snapshots and imports the command
layer): the release writer imports only this, huggingface_hub and the error types.
"""

from __future__ import annotations

import json

from huggingface_hub import constants, hf_hub_download
from huggingface_hub.errors import EntryNotFoundError, RepositoryNotFoundError, RevisionNotFoundError

from benchsmith import hub_http
from benchsmith.errors import EnvironmentFault, PublishError, ReleaseError
from benchsmith.hub_errors import explain, network
from benchsmith.redact import redact
from benchsmith.source import benchsmith_home


def guard_hub_tag(repo_id: str, version: str, fingerprints: dict[str, dict[str, str]], *,
                  endpoint: str | None = None) -> None:
    """Refuse a build of ``version`` whose content differs from the tag ``version`` of the
    builder's Hub repo (``Builder.hub_repo``): a published version never changes. Compares the
    split fingerprints with the tag's ``release.json`` (one small download); built splits that the
    tag lacks, or the other way round, differ too. Offline (``HF_HUB_OFFLINE``), without the repo
    or the tag, there is nothing to compare: the build goes on (publish checks again, online).
    """
    if constants.HF_HUB_OFFLINE:
        return
    hub_http.install()
    ref = f"hf://datasets/{repo_id}@{version}"
    try:
        path = hf_hub_download(repo_id, "release.json", repo_type="dataset", revision=version, endpoint=endpoint,
                               cache_dir=benchsmith_home() / "cache" / "hub" / "files")
        with open(path, encoding="utf-8") as fh:
            published = json.load(fh)
        theirs = {c: {s: i.get("fingerprint") for s, i in (cfg.get("splits") or {}).items()}
                  for c, cfg in (published.get("configs") or {}).items()}
    except (RepositoryNotFoundError, RevisionNotFoundError, EntryNotFoundError):
        return
    except Exception as exc:  # noqa: BLE001 - any failure (HTTP, timeout, bad JSON) is one line
        problem, _ = explain(exc, endpoint or constants.ENDPOINT, doing=f"reading release.json of {ref}",
                              again="try again")
        raise (EnvironmentFault if network(exc) else ReleaseError)(
            redact(f"cannot read release.json of {ref} to compare with this build ({problem})"),
            hint="Check the network and the builder's hub_repo, or set HF_HUB_OFFLINE=1 to "
                 "build without the comparison (publish compares again)") from None
    # every split this build has must be the tag's (a partial build compares the splits it has)
    differ = sorted(f"{c}/{s}" for c, splits in fingerprints.items() for s, fp in splits.items()
                    if theirs.get(c, {}).get(s) != fp)
    if differ:
        raise PublishError(f"{repo_id} {version} is published on the Hub ({ref}) with other content: "
                           f"{', '.join(differ[:3])}{' ...' if len(differ) > 3 else ''} differ",
                           hint="A published version never changes: add a new version to the builder's "
                           "release_notes and build that")
