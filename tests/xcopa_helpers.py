"""Shared pieces of the XCOPA tests: the fixture builder and a sources tree with one file swapped."""

from __future__ import annotations

import logging
import shutil
from pathlib import Path

from benchsmith.builders.xcopa import Xcopa
from benchsmith.release import ReleaseWriter
from benchsmith.source import resolve_sources

FIXTURES = Path(__file__).parent / "fixtures"
XCOPA_FIX = FIXTURES / "xcopa"
COPA_FIX = FIXTURES / "copa"
FIXTURE_CONFIGS = ["et", "th", "translation-et", "translation-th", "en"]


class FixtureXcopa(Xcopa):
    """The real builder, reading the fixture's own errata table (``errata_path()`` honours
    ``tables_dir``). It has no published.yaml or checksums.tsv of its own: the fixture's
    counts are not the paper's, and its files are unregistered."""

    tables_dir = XCOPA_FIX / "_tables"


def build_fixture(registry: Path, version: str, sources_dir: Path = FIXTURES,
                  builder: type[Xcopa] = FixtureXcopa):
    """Build the fixture configs (the fixture has et and th only, so other files are absent)."""
    logging.getLogger("benchsmith.source").setLevel(logging.ERROR)  # fixture files are unregistered
    b = builder(version)
    srcs = resolve_sources(b.sources, {}, sources_dir, allow_missing=True)
    return ReleaseWriter(b, registry, srcs, configs=FIXTURE_CONFIGS).write()


def sources_with(tmp: Path, replace: dict[str, Path]) -> Path:
    """A copy of the fixture sources where ``replace`` maps ``source/relpath`` to a twin file."""
    root = tmp / "sources"
    shutil.copytree(XCOPA_FIX, root / "xcopa", ignore=shutil.ignore_patterns("_*"))
    shutil.copytree(COPA_FIX, root / "copa", ignore=shutil.ignore_patterns("_*"))
    for rel, twin in replace.items():
        shutil.copyfile(twin, root / rel)
    return root
