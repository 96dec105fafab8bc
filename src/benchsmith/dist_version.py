"""An installed distribution's version, as ``importlib.metadata.version`` gives it, for a build.

A build records the versions of the tools that made it (``release.json``'s ``tool_versions``) and
XCOPA's card keys its word counts by jieba's. ``importlib.metadata`` costs a build ~20 ms CPU:
importing it (email, zipfile, csv...) and indexing every ``sys.path`` folder. Where the package
sits in a folder holding exactly one ``<name>-<version>.dist-info`` for it (a ``pip install``),
:func:`version` reads that folder's ``METADATA`` instead; anything else (no such folder, two of
them, an egg or an editable install elsewhere) asks ``importlib.metadata``. tests/test_core_release.py
compares both on the tools a build records.
"""

from __future__ import annotations

import importlib.util
from importlib.metadata import version as metadata_version
from pathlib import Path


def _from_dist_info(name: str) -> str | None:
    spec = importlib.util.find_spec(name)  # finds a top-level package without importing it
    if spec is None or not spec.origin or spec.submodule_search_locations is None:
        return None
    site = Path(spec.origin).parent.parent
    prefix = f"{name}-"
    found = [p for p in site.glob(f"{name}-*.dist-info") if "-" not in p.name[len(prefix):-len(".dist-info")]]
    if len(found) != 1:
        return None
    try:
        with open(found[0] / "METADATA", encoding="utf-8") as fh:
            for line in fh:
                if line.startswith("Version:"):
                    return line[len("Version:"):].strip()
                if not line.strip():  # the headers end: no Version
                    return None
    except OSError:
        return None
    return None


def version(name: str) -> str:
    """``importlib.metadata.version(name)`` (a top-level import name equal to its distribution's, e.g.
    ``datasets``, ``jieba``); ``importlib.metadata.PackageNotFoundError`` when it is not installed."""
    found = _from_dist_info(name)
    if found is not None:
        return found

    return metadata_version(name)
