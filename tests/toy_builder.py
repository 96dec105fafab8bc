"""A tiny builder over tests/fixtures/toy used by the core tests."""

from __future__ import annotations

import csv
from collections.abc import Iterator
from pathlib import Path

import datasets

from benchsmith.builder import Builder, Config
from benchsmith.source import Source

FIXTURES = Path(__file__).parent / "fixtures" / "toy"


class ToyBuilder(Builder):
    name = "toy"
    pretty_name = "Toy"
    description = "Thirty labelled sentences."
    release_notes = {"1.0.0": "as upstream", "1.1.0": "drops toy-30"}  # noqa: RUF012 - as the Builder base declares it
    license = "CC0-1.0"
    sources = (Source("toy", url="", license="CC0-1.0", files=("items.tsv",), optional=("extra.tsv",)),)
    fail_after: int | None = None  # tests set it to make examples() raise midway

    def configs(self):
        feats = datasets.Features(
            {
                "id": datasets.Value("string"),
                "text": datasets.Value("string"),
                "label": datasets.ClassLabel(names=["no", "yes"]),
                "tokens": datasets.List(datasets.Value("string")),
            }
        )
        return [
            Config("plain", "all sentences", feats),
            Config("short", "train only", feats, splits=("train",)),
        ]

    @classmethod
    def data_path(cls, filename: str) -> Path:
        """errata.tsv and published.yaml of the toy live with its fixture."""
        return FIXTURES / "_builder" / filename

    def examples(self, config: Config, split: str, sources) -> Iterator[dict]:
        path = sources.path("toy", "items.tsv")
        with open(path, encoding="utf-8", newline="") as fh:
            for n, row in enumerate(csv.DictReader(fh, delimiter="\t")):
                if self.fail_after is not None and n >= self.fail_after:
                    raise RuntimeError("builder blew up midway")
                if row["split"] != split:
                    continue
                yield {"id": row["id"], "text": row["text"], "label": row["label"], "tokens": row["text"].split()}


def fixture_checksums() -> dict[tuple[str, str], tuple[int | None, str]]:
    """The toy fixture's checksums as `benchsmith sources toy --checksums` would print them."""
    from benchsmith.source import sha256_file

    path = FIXTURES / "toy" / "items.tsv"
    return {("toy", "items.tsv"): (path.stat().st_size, sha256_file(path))}


class RegisteredToyBuilder(ToyBuilder):
    """The toy with its fixture's checksum registered: a build of it is publishable (``publish``
    refuses sources without a registered checksum; the plain toy keeps them unregistered)."""

    @classmethod
    def checksums(cls) -> dict[tuple[str, str], tuple[int | None, str]]:
        return fixture_checksums()
