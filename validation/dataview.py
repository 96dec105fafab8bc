"""What a check needs to know about a config, read from the release alone.

Checks never need the builder: the field roles come from the config's features
and from its typed validation policy (``benchsmith.policy.Policy``) as stored in
``release.json``. Columns are read once per split content: the cache is
keyed by the split's fingerprint plus the shards' sizes and mtimes, so neither a
rebuilt release nor a shard edited in place is served stale columns.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

import datasets
import pyarrow.parquet as pq

from benchsmith.errors import ConfigError, did_you_mean
from benchsmith.policy import AUTO, Policy

# CJK characters are one token each (no spaces to split on); other scripts split on
# runs of word characters *and combining marks*: Python's \w leaves out marks (Mn,
# Mc), which would cut Tamil, Hindi or Thai words at every vowel sign; punctuation
# marks are tokens of their own. Marks are collected from the BMP once at import
# (about 2,000 code points; no third-party regex engine needed).
_CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af"


def _mark_class() -> str:
    marks = [chr(c) for c in range(0x300, 0x10000) if unicodedata.category(chr(c)).startswith("M")]
    return "".join(re.escape(m) for m in marks)


_MARKS = _mark_class()
_TOKEN = re.compile(rf"[{_CJK}]|(?:[^\W{_CJK}]|[{_MARKS}])+|[^\w\s{_MARKS}]")


def tokens(text: str) -> list[str]:
    """Language-agnostic tokens: word runs (with their combining marks), single CJK
    characters, punctuation."""
    return _TOKEN.findall(text)


def as_text(value: Any) -> str:
    """A field value as one string (lists of strings joined by spaces; None -> '')."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, (list, tuple)):
        return " ".join(as_text(v) for v in value)
    return str(value)


def _is_text_feature(f: Any) -> bool:
    if isinstance(f, datasets.Value):
        return f.dtype in ("string", "large_string")
    inner = getattr(f, "feature", None)
    return inner is not None and _is_text_feature(inner)


@lru_cache(maxsize=32)
def _read_column(files: tuple[str, ...], stamp: tuple, column: str) -> tuple[Any, ...]:
    del stamp  # part of the cache key only
    out: list[Any] = []
    for f in files:
        out.extend(pq.read_table(f, columns=[column]).column(column).to_pylist())
    return tuple(out)


@dataclass(frozen=True)
class MultipleChoice:
    """How a multiple-choice config lays out its options.

    ``choices`` is either several fields (one option each) or one list-valued field;
    the label's int value ``i`` selects option ``i``.
    """

    choices: tuple[str, ...]
    list_field: str | None
    label: str
    context: tuple[str, ...]


class ConfigView:
    """One config of a release, with the roles of its fields."""

    def __init__(self, release: Any, config: str) -> None:
        self.release = release
        self.config = config
        self.features: datasets.Features = release.features(config)
        entry = release.manifest["configs"][config]
        self.metadata: Mapping[str, Any] = entry.get("metadata", {}) or {}
        self.policy: Policy = Policy.from_dict(entry.get("policy"), where=f"release.json configs.{config}.policy")
        self.id_field: str | None = self.policy.id_field
        if self.id_field not in self.features:
            self.id_field = None
        self.splits: list[str] = release.splits(config)

    # ------------------------------------------------------------ field roles
    @property
    def text_fields(self) -> list[str]:
        declared = self.policy.text_fields
        if declared:
            return [f for f in declared if f in self.features]
        return [n for n, f in self.features.items() if n != self.id_field and _is_text_feature(f)]

    @property
    def label_field(self) -> str | None:
        """``policy.label``; ``"auto"``: the only ClassLabel; ``None`` declares that the config
        has no label (its ClassLabels are attributes, e.g. a domain)."""
        declared = self.policy.label
        if declared is None:
            return None
        if declared != AUTO and declared in self.features:
            return declared
        labels = [n for n, f in self.features.items() if isinstance(f, datasets.ClassLabel)]
        return labels[0] if len(labels) == 1 else None

    @property
    def label_fields(self) -> list[str]:
        """ClassLabel fields plus the declared (int) label field."""
        out = [n for n, f in self.features.items() if isinstance(f, datasets.ClassLabel)]
        lf = self.label_field
        if lf and lf not in out:
            out.append(lf)
        return out

    def label_names(self, field: str) -> list[str] | None:
        f = self.features[field]
        if isinstance(f, datasets.ClassLabel):
            return list(f.names)
        mc = self.multiple_choice
        if mc is not None and field == mc.label and not mc.list_field:
            return list(mc.choices)
        return None

    @property
    def multiple_choice(self) -> MultipleChoice | None:
        choices = self.policy.choices
        label = self.label_field
        if not choices or label is None:
            return None
        context = tuple(c for c in self.policy.context if c in self.features)
        if isinstance(choices, str):
            return MultipleChoice((), choices, label, context) if choices in self.features else None
        fields = tuple(c for c in choices if c in self.features)
        return MultipleChoice(fields, None, label, context) if len(fields) >= 2 else None

    @property
    def dedup_fields(self) -> list[str]:
        """Fields whose joint content defines a duplicate (default: the text fields)."""
        declared = self.policy.dedup_fields
        if declared:
            return [f for f in declared if f in self.features]
        return self.text_fields

    def setting(self, key: str, default: Any) -> Any:
        """``policy.<key>``, or ``default`` when it is None (an unknown key is an error)."""
        if key not in Policy.keys():
            raise ConfigError(f"unknown validation policy key {key!r}", hint=did_you_mean(key, Policy.keys()))
        v = getattr(self.policy, key)
        return default if v is None else v

    # ------------------------------------------------------------ data
    def num_rows(self, split: str) -> int:
        return self.release.num_examples(self.config, split)

    def column(self, split: str, name: str) -> Sequence[Any]:
        files = tuple(str(Path(p)) for p in self.release.files(self.config, split))
        # the fingerprint names the content; size and mtime catch a shard edited in place
        fp = self.release.split_info(self.config, split)["fingerprint"]
        stamp = (fp, *((st.st_size, st.st_mtime_ns) for st in (Path(f).stat() for f in files)))
        return _read_column(files, stamp, name)

    def texts(self, split: str, name: str) -> list[str]:
        return [as_text(v) for v in self.column(split, name)]

    def options(self, split: str) -> list[list[str]]:
        mc = self.multiple_choice
        if mc is None:
            raise ValueError(f"{self.config} is not a multiple-choice config")
        if mc.list_field:
            return [[as_text(o) for o in (row or [])] for row in self.column(split, mc.list_field)]
        cols = [self.texts(split, c) for c in mc.choices]
        return [list(row) for row in zip(*cols)]

    def labeled(self, split: str, field: str) -> list[int]:
        """Label values of a split (-1 and None = unlabeled are kept as -1)."""
        return [-1 if v is None else int(v) for v in self.column(split, field)]

    def ids(self, split: str) -> list[Any]:
        """The split's ids, or row numbers when the config has no id field."""
        if self.id_field is None:
            return list(range(self.num_rows(split)))
        return list(self.column(split, self.id_field))


def configs(release: Any) -> list[ConfigView]:
    """A view of every config of a release, in manifest order."""
    return [ConfigView(release, c) for c in release.configs()]
