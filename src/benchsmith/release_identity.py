"""When two copies of a version are the same release (``publish`` to a tag that exists).

Two runners that build a version from the same registered sources get byte-identical data,
but their validation may differ (``--baselines none`` on one, ``cheap`` on the other): the
report, the card's sections drawn from it and so the seal differ. Publishing the second copy
to the tag the first made must be a no-op success, while different data under that tag stays
refused. So a copy is **the same release** as the tag's when:

* every file but the report-derived ones is identical, path for path (sizes and sha256 / git
  blob ids of the Hub's listing): the data files (so the split fingerprints), ``changes/``,
  ``croissant.json`` and ``lm_eval/``, with no file added or missing;
* ``release.json`` declares the same thing: equal once the runner's own facts are set aside
  (:data:`RUNNER_FIELDS`: the library versions it ran, and each source's ``origin``, a
  ``--sources`` folder or a download of the same sha256-checked files).

The report-derived files are :data:`REPORT_DERIVED`: the card (``README.md``: its YAML and
prose other than the validation sections are rendered from ``release.json``, compared above),
``reports/`` and the Hub's ``seal.json`` (a digest over all of them). The tag keeps its own.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any

from benchsmith.hub_listing import Uploaded, tree_differences

#: files whose content follows from the validation report, not from the data and the manifest
REPORT_DERIVED = ("README.md", "reports/", "seal.json")
MANIFEST = "release.json"
#: top-level manifest keys that describe the runner, not the release
RUNNER_FIELDS = ("tool_versions",)


def _report_derived(path: str) -> bool:
    return any(path == p or (p.endswith("/") and path.startswith(p)) for p in REPORT_DERIVED)


def declared(manifest: dict[str, Any]) -> dict[str, Any]:
    """``release.json`` without the runner's facts (:data:`RUNNER_FIELDS`, each source's ``origin``)."""
    out = {k: v for k, v in manifest.items() if k not in RUNNER_FIELDS}
    sources = out.get("sources")
    if isinstance(sources, dict):
        out["sources"] = {name: ({k: v for k, v in s.items() if k != "origin"} if isinstance(s, dict) else s)
                          for name, s in sources.items()}
    return out


def same_release(remote: Sequence[Any], expected: Sequence[Uploaded], remote_manifest: Callable[[], bytes],
                 local_manifest: bytes) -> tuple[list[str] | None, list[str]]:
    """Whether the tag's files (``remote``: the Hub's listing) hold the same release as the upload
    (``expected``), by the definition of this module. Returns ``(kept, reasons)``: the same release
    gives the paths that differ but are report-derived (and ``release.json`` when only the runner's
    facts differ), kept as the tag has them, and no reasons; another release gives ``None`` and
    what makes it another (the differing data files, or the declared manifest fields).
    ``remote_manifest`` fetches the tag's ``release.json``, read only when it differs."""
    problems = tree_differences(list(remote), list(expected))
    differing = sorted({p.split(": ", 1)[0] for p in problems})
    reasons = [p for p in problems if not _report_derived(p.split(": ", 1)[0]) and not p.startswith(MANIFEST + ":")]
    if reasons:
        return None, reasons
    if MANIFEST in differing:
        try:
            theirs = json.loads(remote_manifest())
        except (ValueError, UnicodeDecodeError):
            return None, [f"{MANIFEST}: not a JSON manifest on the Hub"]
        ours = declared(json.loads(local_manifest))
        if not isinstance(theirs, dict) or declared(theirs) != ours:
            theirs = declared(theirs) if isinstance(theirs, dict) else {}
            keys = sorted(k for k in set(theirs) | set(ours) if theirs.get(k) != ours.get(k))
            return None, [f"{MANIFEST}: declares other {', '.join(keys[:5])}"]
    return differing, []
