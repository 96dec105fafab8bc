"""Fixture helpers for builder tests: where the fixture files are, writing them, building them."""

from __future__ import annotations

import csv
import logging
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from benchsmith.builder import Builder, register, unregister
from benchsmith.release import ReleaseWriter
from benchsmith.source import resolve_sources


def fixtures_dir(test_file: str | Path, *parts: str) -> Path:
    """``<folder of test_file>/fixtures/<parts...>``: a test's fixture folder, laid out like the
    raw download (``fixtures_dir(__file__)`` is the ``--sources`` folder of the fixture)."""
    return Path(test_file).resolve().parent.joinpath("fixtures", *parts)


def write_tsv(path: Path, header: Sequence[str], rows: Iterable[Sequence[Any] | Mapping[str, Any]],
              *, delimiter: str = "\t") -> Path:
    """Write a small delimited fixture file (parents created); dict rows follow ``header``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8", newline="") as fh:
        out = csv.writer(fh, delimiter=delimiter, lineterminator="\n")
        out.writerow(header)
        for row in rows:
            out.writerow([row.get(h, "") for h in header] if isinstance(row, Mapping) else list(row))
    return path


@contextmanager
def registered(cls: type[Builder]) -> Iterator[type[Builder]]:
    """Register ``cls`` for the ``with`` block (a fixture subclass, a test's own builder)."""
    register(cls)
    try:
        yield cls
    finally:
        unregister(cls.name)


def build_release(builder: Builder | type[Builder], sources: Path, registry: Path, *,
                  configs: Sequence[str] | None = None, checksums: bool = False) -> Any:
    """Build ``builder`` from the fixture folder ``sources`` into ``registry`` and return the
    :class:`~benchsmith.release.Release`. Fixture files are not the registered download:
    their checksums are not compared unless ``checksums``, and absent optional files are skipped."""

    b = builder() if isinstance(builder, type) else builder
    logging.getLogger("benchsmith.source").setLevel(logging.ERROR)
    resolved = resolve_sources(b.sources, b.checksums() if checksums else {}, sources, allow_missing=True)
    return ReleaseWriter(b, registry, resolved, configs=configs, skip_missing=True).write()
