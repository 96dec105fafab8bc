"""Fixture releases for the validation tests, built programmatically.

``make_release`` writes a real release (through ``ReleaseWriter``) from rows
given inline, so each check gets one dataset that trips it and one that passes,
without fixture files to keep in sync.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import datasets
import pyarrow as pa
import pyarrow.parquet as pq

from benchsmith.builder import Builder, Config, Erratum, Policy
from benchsmith.release import PARQUET_OPTIONS, Release, ReleaseWriter
from benchsmith.source import Sources

TEXT = datasets.Value("string")


def text_features(labels: Sequence[str] = ("no", "yes")) -> datasets.Features:
    return datasets.Features({"id": TEXT, "text": TEXT, "label": datasets.ClassLabel(names=list(labels))})


def mc_features() -> datasets.Features:
    return datasets.Features(
        {"id": TEXT, "premise": TEXT, "choice1": TEXT, "choice2": TEXT, "label": datasets.ClassLabel(names=["1", "2"])}
    )


MC_META = {"task": "multiple_choice", "choices": ["choice1", "choice2"], "label": "label", "context": ["premise"]}


def make_builder(
    splits: Mapping[str, Sequence[dict[str, Any]]],
    features: datasets.Features,
    metadata: Mapping[str, Any] | None = None,
    *,
    name: str = "fx",
    version: str = "1.0.0",
    config: str = "default",
    expectations: Sequence[Any] = (),
    checks: Sequence[Any] = (),
    errata: Sequence[Erratum] = (),
) -> Builder:
    rows = {s: list(r) for s, r in splits.items()}

    class SpecBuilder(Builder):
        release_notes = {version: "fixture"}  # noqa: RUF012 - as the Builder base declares it

        def configs(self):
            return [Config(config, "fixture config", features, splits=tuple(rows), policy=Policy.from_dict(metadata))]

        def examples(self, cfg, split, sources):
            yield from (dict(r) for r in rows[split])

        def expectations(self):
            return list(expectations)

        def checks(self):
            return list(checks)

        def errata(self):
            return list(errata)

    SpecBuilder.name = name
    return SpecBuilder(version)


def make_release(registry: Path, splits, features, metadata=None, **kw) -> Release:
    """Build a fixture release into ``registry`` and return it."""
    overwrite = kw.pop("overwrite", False)
    b = make_builder(splits, features, metadata, **kw)
    return ReleaseWriter(b, registry, Sources({}), overwrite=overwrite).write()


def rewrite_split(release: Release, config: str, split: str, edit) -> None:
    """Replace a split's data in place (``edit`` maps the list of rows to new rows),
    keeping the manifest: what a corrupted or tampered release looks like."""
    path = release.files(config, split)[0]
    rows = edit(release.table(config, split).to_pylist())
    schema = release.features(config).arrow_schema
    pq.write_table(pa.Table.from_pylist(rows, schema=schema), path, **PARQUET_OPTIONS)


def balanced_text_rows(n: int, prefix: str, seed: int = 0) -> list[dict[str, Any]]:
    """Distinct random sentences with alternating labels and label-independent lengths."""
    rng = random.Random(seed)
    words = [f"w{i}" for i in range(400)]
    return [
        {"id": f"{prefix}-{i}", "text": " ".join(rng.choice(words) for _ in range(rng.randint(5, 12))), "label": i % 2}
        for i in range(n)
    ]


def mc_rows(n: int, prefix: str, seed: int = 0, cue: str | None = None, longer: bool = False) -> list[dict[str, Any]]:
    """COPA-like rows; ``cue`` puts a word in every correct option, ``longer`` makes it longer."""
    rng = random.Random(seed)
    words = [f"v{i}" for i in range(500)]

    def sentence(k: int) -> str:
        return " ".join(rng.choice(words) for _ in range(k))

    out = []
    for i in range(n):
        label = rng.randint(0, 1)
        right = sentence(rng.randint(4, 8))
        wrong = sentence(rng.randint(4, 8))
        if cue:
            right = f"{right} {cue}"
            wrong = f"{wrong} {rng.choice(words)}"
        if longer:
            right = f"{right} {sentence(6)}"
        opts = [wrong, right] if label == 1 else [right, wrong]
        out.append({"id": f"{prefix}-{i}", "premise": sentence(7), "choice1": opts[0], "choice2": opts[1], "label": label})
    return out
