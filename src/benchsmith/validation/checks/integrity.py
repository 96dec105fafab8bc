"""Integrity checks: the data is what the card and the manifest say it is.

* ``schema``: every parquet shard has the declared Arrow schema and the row counts
  of the manifest; the card's YAML (``dataset_info``) declares the same features
  and split sizes as the manifest. A hand-edited card or a swapped shard fails.
* ``fingerprint``: each split's content hashes to the manifest's fingerprint.
* ``unique_ids``: ids are present, non-empty and unique within a split (fail);
  the same id in two splits of a config is a warning, since (split, id) still
  identifies an example but a diff between versions keyed on ids gets ambiguous.
* ``empty_fields``: no text field is null, empty or whitespace-only, except the
  fields listed in ``policy.allow_empty``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import datasets
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import yaml
from datasets.info import DatasetInfosDict
from huggingface_hub import DatasetCardData

from benchsmith.fingerprint import Fingerprinter
from benchsmith.validation.check import Check, CheckResult, Status, register_check
from benchsmith.validation.dataview import ConfigView, configs

if TYPE_CHECKING:
    from benchsmith.release import Release

_SHOW = 10  # offending items listed in details


def _norm_type(t: pa.DataType) -> pa.DataType:
    """Arrow type with list children unnamed: parquet renames ``item`` to ``element``."""
    if pa.types.is_list(t):
        return pa.list_(_norm_type(t.value_type))
    if pa.types.is_large_list(t):
        return pa.large_list(_norm_type(t.value_type))
    if pa.types.is_fixed_size_list(t):
        return pa.list_(_norm_type(t.value_type), t.list_size)
    if pa.types.is_struct(t):
        return pa.struct([pa.field(f.name, _norm_type(f.type)) for f in t])
    return t


def _card_features(config: str, card_list: Any) -> datasets.Features:
    """One config's features as the card declares them, read as ``datasets`` reads a card's
    ``dataset_info``."""
    card = DatasetCardData(dataset_info=[{"config_name": config, "features": card_list}])
    return DatasetInfosDict.from_dataset_card_data(card)[config].features


def card_front_matter(release: Release) -> dict[str, Any] | None:
    """The YAML front matter of the release's README.md, or None if there is none.

    Raises:
        yaml.YAMLError: the front matter is not valid YAML.
    """
    path = release.path / "README.md"
    if not path.is_file():
        return None
    text = path.read_text(encoding="utf-8")
    if not text.startswith("---\n"):
        return None
    end = text.find("\n---", 4)
    if end < 0:
        return None
    # libyaml's safe loader when built (the same values; 10x faster on XCOPA's 133 KB of YAML)
    return yaml.load(text[4:end], Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader)) or {}


@register_check
class SchemaCheck(Check):
    name = "schema"
    family = "integrity"
    topic = "data does not match the declared features"
    why = ("loaders and evaluators read the declared features: rows that differ break them or are "
        "misread")
    todo = "fix the builder's features or the examples it writes, then rebuild"

    def run(self, release: Release) -> list[CheckResult]:
        card_error = "README.md has no YAML front matter (the card is missing or not rendered)"
        try:
            card = card_front_matter(release)
        except yaml.YAMLError as exc:  # a hand-edited card is a finding, not a crash
            card, card_error = None, f"README.md's YAML front matter does not parse ({exc})"
        if card is not None and not isinstance(card, dict):
            card, card_error = None, f"README.md's YAML front matter is a {type(card).__name__}, not a mapping"
        card_infos: dict[str, Any] = {}
        if card is not None:
            infos = card.get("dataset_info") or []
            if isinstance(infos, dict):  # a single config is written as a mapping
                infos = [infos]
            card_infos = {i.get("config_name", "default"): i for i in infos}
        results = []
        for view in configs(release):
            problems = self._config_problems(release, view, card, card_infos, card_error)
            n_fields = len(view.features)
            if problems:
                results.append(
                    self.result(
                        Status.FAIL,
                        f"{len(problems)} schema mismatch(es): {problems[0]}",
                        config=view.config,
                        details={"problems": problems},
                    )
                )
            else:
                results.append(
                    self.result(
                        Status.PASS,
                        f"{n_fields} fields and {len(view.splits)} split(s) match the card and the data files",
                        config=view.config,
                        metrics={"fields": n_fields},
                    )
                )
        return results

    def _config_problems(
        self, release: Release, view: ConfigView, card: dict | None, card_infos: dict[str, Any], card_error: str
    ) -> list[str]:
        problems: list[str] = []
        expected = pa.schema([pa.field(f.name, _norm_type(f.type)) for f in view.features.arrow_schema])
        for split in view.splits:
            n_rows, unreadable = 0, False  # a split with an absent or unreadable shard has no row count
            for path in release.files(view.config, split):
                rel = path.relative_to(release.path).as_posix()
                if not path.is_file():
                    problems.append(f"{rel} is missing")
                    unreadable = True
                    continue
                try:
                    with pq.ParquetFile(path) as pf:  # one open for the schema and the row count
                        got = pa.schema([pa.field(f.name, _norm_type(f.type)) for f in pf.schema_arrow])
                        n_rows += pf.metadata.num_rows
                except (OSError, pa.ArrowException) as exc:
                    problems.append(f"{rel} is not a readable parquet file ({exc})")
                    unreadable = True
                    continue
                if got.names != expected.names:
                    problems.append(f"{rel} has columns {got.names}; the card declares {expected.names}")
                else:
                    for g, e in zip(got, expected):
                        if not g.type.equals(e.type):
                            problems.append(f"{rel} column {g.name!r} is {g.type}; the card declares {e.type}")
            declared = view.num_rows(split)
            if n_rows != declared and not unreadable:
                problems.append(f"{split} has {n_rows} rows in its files; the manifest says {declared}")
        if card is None:
            problems.append(card_error)
            return problems
        info = card_infos.get(view.config)
        if info is None:
            problems.append(f"the card's dataset_info has no config {view.config!r}")
            return problems
        try:
            card_features = _card_features(view.config, info.get("features") or [])
        except Exception as exc:  # noqa: BLE001 - malformed YAML features are a finding, not a crash
            problems.append(f"the card's features for {view.config!r} do not parse: {exc}")
        else:
            if card_features != view.features:
                diff = sorted(set(card_features) ^ set(view.features)) or [
                    n for n in view.features if card_features.get(n) != view.features[n]
                ]
                problems.append(f"the card's features differ from the manifest's (fields {diff})")
        card_splits = {s.get("name"): s.get("num_examples") for s in info.get("splits") or []}
        for split in view.splits:
            if card_splits.get(split) != view.num_rows(split):
                problems.append(
                    f"the card says {split} has {card_splits.get(split)} examples; the manifest says "
                    f"{view.num_rows(split)}"
                )
        return problems


@register_check
class FingerprintCheck(Check):
    name = "fingerprint"
    cacheable = True  # reads the release's data only (validation/result_cache.py)
    portable = True  # shares no in-process memo: either process may run it (validation/runner.py)
    cost = 0.1  # CPU s on ComVE, roughly
    family = "integrity"
    topic = "split content differs from release.json's fingerprint"
    why = "the data is not what was built and registered: the release cannot be reproduced"
    todo = "rebuild the release with `benchsmith build` (never edit a release by hand)"

    def run(self, release: Release) -> list[CheckResult]:
        results = []
        for view in configs(release):
            bad = []
            schema = view.features.arrow_schema
            for split in view.splits:
                try:  # streamed: one record batch at a time, cast to the declared types (see Release.table)
                    fp = Fingerprinter(schema)
                    for batch in view.batches(split, schema.names):
                        fp.update(batch.cast(schema))
                    got = fp.hexdigest()
                except (OSError, pa.ArrowException) as exc:
                    bad.append({"split": split, "error": str(exc)})
                    continue
                want = release.split_info(view.config, split).fingerprint
                if got != want:
                    bad.append({"split": split, "manifest": want, "data": got})
            if bad:
                results.append(
                    self.result(
                        Status.FAIL,
                        f"content of {', '.join(b['split'] for b in bad)} differs from release.json's fingerprint",
                        config=view.config,
                        details={"mismatches": bad},
                    )
                )
            else:
                results.append(
                    self.result(Status.PASS, f"{len(view.splits)} split fingerprint(s) verified", config=view.config)
                )
        return results


@register_check
class UniqueIdsCheck(Check):
    name = "unique_ids"
    cacheable = True  # reads the release's data only (validation/result_cache.py)
    portable = True  # shares no in-process memo: either process may run it (validation/runner.py)
    cost = 0.1  # CPU s on ComVE, roughly
    family = "integrity"
    topic = "ids repeat across splits"
    why = ("an id that names two examples cannot identify one across splits and versions (errata, "
        "predictions, drift)")
    todo = ("when upstream numbers the items of each split on its own, acknowledge it in "
        "acknowledged.yaml quoting upstream; otherwise make the ids unique in the builder (an id "
        "repeated within a split always fails)")
    figure_metric = 'ids_in_two_splits'

    def run(self, release: Release) -> list[CheckResult]:
        results = []
        for view in configs(release):
            if view.id_field is None:
                results.append(
                    self.result(
                        Status.WARN,
                        f"no id field {view.policy.id_field!r}: examples cannot be tracked "
                        "across versions",
                        config=view.config,
                    )
                )
                continue
            within: dict[str, list[Any]] = {}
            empty: dict[str, int] = {}
            across: list[dict[str, Any]] = []
            n_across, distinct = 0, 0
            earlier: list[tuple[str, pa.Array]] = []  # (split, its distinct ids), in split order
            for split in view.splits:
                # Arrow's hash kernels on the id column (a few bytes an id), not Python sets;
                # unique values and counts come in order of first appearance
                chunks, n_empty = [], 0
                for batch in view.batches(split, [view.id_field]):
                    col = batch.column(0)
                    chunks.append(col)
                    n_empty += sum(1 for i in col.to_pylist() if i is None or (isinstance(i, str) and not i.strip()))
                empty[split] = n_empty
                ids = pa.chunked_array(chunks, type=view.features.arrow_schema.field(view.id_field).type)
                counts = pc.value_counts(ids)
                more_than_once = pc.greater(counts.field("counts"), 1)
                repeated = counts.filter(more_than_once).field("values").drop_null()
                if len(repeated):
                    within[split] = repeated.to_pylist()
                unique = pc.unique(ids)
                owned = pa.array(np.zeros(len(unique), dtype=bool))
                for first, seen in earlier:  # an id's owner is the first split that has it
                    hit = pc.and_(pc.is_in(unique, value_set=seen), pc.invert(owned))
                    n_hit = pc.sum(hit).as_py() or 0
                    if n_hit:
                        n_across += n_hit
                        room = _SHOW - len(across)
                        across.extend({"id": i, "splits": [first, split]}
                                      for i in unique.filter(hit).slice(0, max(room, 0)).to_pylist())
                        owned = pc.or_(owned, hit)
                distinct += len(unique) - (pc.sum(owned).as_py() or 0)
                earlier.append((split, unique))
            metrics = {
                "duplicate_ids": sum(len(v) for v in within.values()),
                "empty_ids": sum(empty.values()),
                "ids_in_two_splits": n_across,
            }
            details = {
                "duplicates": {s: v[:_SHOW] for s, v in within.items()},
                "empty": {s: n for s, n in empty.items() if n},
                "across_splits": across,
            }
            if within or metrics["empty_ids"]:
                what = []
                if within:
                    what.append(f"{metrics['duplicate_ids']} duplicated id(s) in {', '.join(within)}")
                if metrics["empty_ids"]:
                    what.append(f"{metrics['empty_ids']} empty id(s)")
                status, summary = Status.FAIL, "; ".join(what)
            elif across:
                status = Status.WARN
                summary = f"{n_across} id(s) appear in two splits (e.g. {across[0]['id']!r})"
            else:
                status = Status.PASS
                summary = f"{distinct:,} ids, unique within and across splits"
            results.append(self.result(status, summary, config=view.config, metrics=metrics, details=details))
        return results


def _is_empty(value: Any) -> bool:
    if value is None:
        return True
    if isinstance(value, str):
        return not value.strip()
    if isinstance(value, (list, tuple)):
        return not value or any(_is_empty(v) for v in value)
    return False


@register_check
class EmptyFieldsCheck(Check):
    name = "empty_fields"
    cacheable = True  # reads the release's data only (validation/result_cache.py)
    portable = True  # shares no in-process memo: either process may run it (validation/runner.py)
    cost = 0.2  # CPU s on ComVE, roughly
    family = "integrity"
    topic = "required fields are empty"
    why = ("an empty premise, option or label is an item no model can answer: it is scored as an "
        "error")
    todo = ("fix the loader or the builder, or record the rows as an erratum in errata.tsv citing "
        "upstream; a field that may be empty is listed in the config policy's allow_empty")

    def run(self, release: Release) -> list[CheckResult]:
        results = []
        for view in configs(release):
            allowed = set(view.policy.allow_empty)
            fields = view.text_fields
            counts: dict[str, dict[str, int]] = {}
            examples: dict[str, list[Any]] = {}
            for split in view.splits if fields else ():
                start = 0
                for batch in view.batches(split, fields):  # streamed; ids are read for offending rows only
                    for f in fields:
                        bad = [start + i for i, v in enumerate(batch.column(f).to_pylist()) if _is_empty(v)]
                        if bad:
                            counts.setdefault(f, {})[split] = counts.get(f, {}).get(split, 0) + len(bad)
                            shown = examples.setdefault(f, [])
                            if len(shown) < _SHOW:
                                shown.extend(view.ids_of(split, bad[: _SHOW - len(shown)]))
                    start += batch.num_rows
            flagged = {f: c for f, c in counts.items() if f not in allowed}
            tolerated = {f: c for f, c in counts.items() if f in allowed}
            metrics = {"empty_values": sum(sum(c.values()) for c in flagged.values())}
            details = {"empty": flagged, "examples": {f: examples[f] for f in flagged}, "allowed_empty": tolerated}
            if flagged:
                first = next(iter(flagged))
                summary = (
                    f"{metrics['empty_values']} empty or whitespace-only value(s) in "
                    f"{', '.join(flagged)} (e.g. {first} of {examples[first][0]!r})"
                )
                status = Status.FAIL
            else:
                summary = f"no empty text in {len(fields)} field(s)" + (
                    f"; {', '.join(tolerated)} may be empty by declaration" if tolerated else ""
                )
                status = Status.PASS
            results.append(self.result(status, summary, config=view.config, metrics=metrics, details=details))
        return results
