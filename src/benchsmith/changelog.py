"""The item-level changelog between two releases of one dataset (``benchsmith diff OLD NEW``).

Drift (``benchsmith.validation.drift``) says *whether* a split changed and which ids; this
module says *what* changed in each item: per config and split, the ids added, removed and
changed, and for each changed item every field with its value before and after, plus the
errata of the newer release that explain it.

Decisions:

* **Identity.** Items are matched by the config's declared id field (its typed policy in
  ``release.json``); a config without one is compared by position, and says so.
* **Cost.** A split whose fingerprint is the same in both releases is not read at all. A
  split that differs is read column-wise into memory once per side (the largest split in
  scope, CoGnition's 10,800-item CG test, is a few MB); only changed rows are turned into
  Python values.
* **Explained changes.** An erratum explains an item when it is applied in the newer release
  and not in the older one, and its ``items`` name the item as ``id``, ``split/id`` or
  ``config/split/id`` (the forms drift accepts).
* **Output.** :meth:`Changelog.to_dict` (``--json``) keeps every item; :meth:`to_markdown`
  lists counts and the first ``limit`` items of each kind per split, and says how many it
  left out. Values are shown as JSON; long strings are cut in markdown only.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import pyarrow as pa

from benchsmith.errors import BenchsmithError
from benchsmith.registry import MANIFEST
from benchsmith.semver import parse_version

if TYPE_CHECKING:  # the release module imports this one to write "Changes since" (no cycle at run time)
    from benchsmith.release import Release

Kind = Literal["added", "removed", "changed"]

#: items of each kind per split listed in markdown (the JSON lists all)
MARKDOWN_LIMIT = 10
_CELL = 80  # characters of a value shown in markdown


@dataclass(frozen=True)
class FieldChange:
    field: str
    before: Any
    after: Any

    def to_dict(self) -> dict[str, Any]:
        return {"field": self.field, "before": self.before, "after": self.after}


@dataclass(frozen=True)
class ItemChange:
    id: Any
    kind: Kind
    fields: tuple[FieldChange, ...] = ()
    errata: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"id": self.id, "kind": self.kind}
        if self.kind == "changed":
            out["fields"] = [f.to_dict() for f in self.fields]
        if self.errata:
            out["errata"] = list(self.errata)
        return out


@dataclass
class SplitChanges:
    config: str
    split: str
    #: ``same`` (fingerprints equal), ``changed``, ``added`` or ``removed`` (the whole split)
    status: Literal["same", "changed", "added", "removed"]
    num_examples: tuple[int | None, int | None]
    items: list[ItemChange] = field(default_factory=list)
    reordered: bool = False
    matched_by: str = "id"

    def count(self, kind: Kind) -> int:
        return sum(1 for i in self.items if i.kind == kind)

    @property
    def unexplained(self) -> list[ItemChange]:
        return [i for i in self.items if i.kind != "added" and not i.errata]

    def to_dict(self) -> dict[str, Any]:
        return {
            "config": self.config, "split": self.split, "status": self.status,
            "num_examples": {"before": self.num_examples[0], "after": self.num_examples[1]},
            "added": self.count("added"), "removed": self.count("removed"), "changed": self.count("changed"),
            "unexplained": len(self.unexplained), "reordered": self.reordered, "matched_by": self.matched_by,
            "items": [i.to_dict() for i in self.items],
        }


@dataclass
class Changelog:
    name: str
    before: str  # version (and where it came from)
    after: str
    splits: list[SplitChanges]

    def totals(self) -> dict[str, int]:
        return {k: sum(s.count(k) for s in self.splits) for k in ("added", "removed", "changed")} | {
            "unexplained": sum(len(s.unexplained) for s in self.splits),
            "splits_changed": sum(1 for s in self.splits if s.status != "same"),
        }

    @property
    def identical(self) -> bool:
        return all(s.status == "same" for s in self.splits)

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "before": self.before, "after": self.after, "totals": self.totals(),
                "splits": [s.to_dict() for s in self.splits]}

    def to_markdown(self, limit: int = MARKDOWN_LIMIT, *, heading: str = "##", full: str | None = None,
                    per_split: bool = True) -> str:
        """Counts per split and the first ``limit`` items of each kind, per split or (``per_split=False``,
        the card's excerpt) in all (``full``: where the complete changelog is, named when items
        were left out)."""
        t = self.totals()
        lines = [f"{heading} Changes in {self.name} {self.after} since {self.before}", ""]
        if self.identical:
            return "\n".join(lines + ["No split changed: every fingerprint is the same.", ""])
        lines += [(f"{t['added']} added, {t['removed']} removed, {t['changed']} changed item(s) in "
                   f"{t['splits_changed']} split(s); {t['unexplained']} removal(s)/change(s) not explained by an "
                   "erratum of this version."), "",
                  "| config | split | status | before | after | added | removed | changed |",
                  "|---|---|---|---|---|---|---|---|"]
        for s in self.splits:
            if s.status == "same":
                continue
            b, a = s.num_examples
            lines.append(f"| {s.config} | {s.split} | {s.status}{' (reordered)' if s.reordered else ''} | "
                         f"{'' if b is None else b} | {'' if a is None else a} | {s.count('added')} | "
                         f"{s.count('removed')} | {s.count('changed')} |")
        left_out = 0
        if not per_split:
            lines.append("")
            for kind in ("changed", "removed", "added"):
                items = [(s, i) for s in self.splits for i in s.items if i.kind == kind]
                lines += [f"{_item_line(i)} ({s.config}/{s.split})" for s, i in items[:limit]]
                left_out += max(0, len(items) - limit)
            if left_out:
                lines += ["", f"{left_out} more item(s) not listed here: the full changelog is {full}."]
            return "\n".join(lines) + "\n"
        for s in self.splits:
            if not s.items:
                continue
            lines += ["", f"{heading}# {s.config} / {s.split}", ""]
            for kind in ("changed", "removed", "added"):
                of_kind = [i for i in s.items if i.kind == kind]
                lines += [_item_line(item) for item in of_kind[:limit]]
                left_out += max(0, len(of_kind) - limit)
        if left_out:
            lines += ["", f"{left_out} more item(s) not listed here" + (f": the full changelog is {full}." if full
                                                                          else " (`benchsmith diff --json`).")]
        return "\n".join(lines) + "\n"


def _cut(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False, default=str)
    text = text.replace("|", "\\|").replace("\n", " ")
    return text if len(text) <= _CELL else text[: _CELL - 1] + "…"


def _item_line(item: ItemChange) -> str:
    why = f" (erratum {', '.join(item.errata)})" if item.errata else ""
    if item.kind != "changed":
        return f"- {item.kind} `{item.id}`{why}"
    parts = "; ".join(f"`{f.field}`: {_cut(f.before)} → {_cut(f.after)}" for f in item.fields)
    return f"- changed `{item.id}`{why}: {parts}"


# --------------------------------------------------------------------------- computing it


def _errata_by_item(new: Release, old: Release) -> dict[str, list[str]]:
    """Item reference (as errata.tsv names it) -> ids of the errata newly applied in ``new``."""
    before = {e.get("id") for e in old.info.errata_applied}
    out: dict[str, list[str]] = {}
    for e in new.info.errata_applied:
        if e.get("id") in before:
            continue
        for ref in e.get("items", []) or []:
            out.setdefault(str(ref), []).append(str(e.get("id")))
    return out


def _explaining(errata: dict[str, list[str]], config: str, split: str, ident: Any) -> tuple[str, ...]:
    found: list[str] = []
    for ref in (str(ident), f"{split}/{ident}", f"{config}/{split}/{ident}"):
        for e in errata.get(ref, ()):
            if e not in found:
                found.append(e)
    return tuple(found)


def _id_field(release: Release, config: str) -> str | None:
    entry = release.config_info(config)
    id_field = entry.validation_policy.id_field
    return id_field if id_field in entry.features_dict else None


def _rows(table: pa.Table, key: str | None) -> tuple[list[Any], list[Any]]:
    """(keys, rows as hashable JSON strings) of a table; keys are ids or positions."""
    names = [n for n in table.column_names if n != key]
    keys = table.column(key).to_pylist() if key else list(range(table.num_rows))
    body = table.select(names).to_pylist()
    return keys, [json.dumps(r, sort_keys=True, ensure_ascii=False, default=str) for r in body]


def _split(old: Release, new: Release, config: str, split: str, errata: dict[str, list[str]]) -> SplitChanges:
    n_old, n_new = old.num_examples(config, split), new.num_examples(config, split)
    if old.split_info(config, split).fingerprint == new.split_info(config, split).fingerprint:
        return SplitChanges(config, split, "same", (n_old, n_new))
    key_old, key_new = _id_field(old, config), _id_field(new, config)
    key = key_new if key_new is not None and key_new == key_old else None
    t_old, t_new = old.table(config, split), new.table(config, split)
    ids_old, blobs_old = _rows(t_old, key)
    ids_new, blobs_new = _rows(t_new, key)
    where_old = {i: n for n, i in enumerate(ids_old)}
    where_new = {i: n for n, i in enumerate(ids_new)}
    items: list[ItemChange] = []
    changed_rows: list[tuple[Any, int, int]] = []
    for n, ident in enumerate(ids_new):
        m = where_old.get(ident)
        if m is None:
            items.append(ItemChange(ident, "added", errata=_explaining(errata, config, split, ident)))
        elif blobs_old[m] != blobs_new[n]:
            changed_rows.append((ident, m, n))
    for ident in ids_old:
        if ident not in where_new:
            items.append(ItemChange(ident, "removed", errata=_explaining(errata, config, split, ident)))
    for ident, m, n in changed_rows:
        before, after = json.loads(blobs_old[m]), json.loads(blobs_new[n])
        fields = tuple(FieldChange(f, before.get(f), after.get(f))
                       for f in dict.fromkeys([*before, *after]) if before.get(f) != after.get(f))
        items.append(ItemChange(ident, "changed", fields, _explaining(errata, config, split, ident)))
    reordered = not items and ids_old != ids_new
    return SplitChanges(config, split, "changed", (n_old, n_new), items, reordered,
                        matched_by=f"id field {key!r}" if key else "position (no common id field)")


def diff(old: Release, new: Release, *, configs: Sequence[str] | None = None,
         before_label: str | None = None, after_label: str | None = None) -> Changelog:
    """The item-level changelog from ``old`` to ``new`` (see the module docstring)."""
    errata = _errata_by_item(new, old)
    wanted: Iterable[str] = configs or list(dict.fromkeys([*old.configs(), *new.configs()]))
    splits: list[SplitChanges] = []
    for config in wanted:
        in_old, in_new = config in old.configs(), config in new.configs()
        names_old = old.splits(config) if in_old else []
        names_new = new.splits(config) if in_new else []
        for split in dict.fromkeys([*names_old, *names_new]):
            if split not in names_new:
                splits.append(SplitChanges(config, split, "removed", (old.num_examples(config, split), None)))
            elif split not in names_old:
                splits.append(SplitChanges(config, split, "added", (None, new.num_examples(config, split))))
            else:
                splits.append(_split(old, new, config, split, errata))
    return Changelog(new.name, before_label or old.version, after_label or new.version, splits)


# --------------------------------------------------------------------------- in a release

#: where a build records its changes since the previous version (inside the release)
CHANGES_DIR = "changes"
#: items of each kind per split the card lists
CARD_LIMIT = 5


def newest_older(releases: Iterable[Release], version: str) -> Release | None:
    """The newest of ``releases`` older than ``version`` (None if none)."""
    mine = parse_version(version)
    older = sorted((r for r in releases if parse_version(r.version) < mine), key=lambda r: parse_version(r.version))
    return older[-1] if older else None


def record_changes(new: Release, previous: Release | Callable[[], Release | None] | None) -> dict[str, Any] | None:
    """Write ``changes/since-<previous>.{json,md}`` into a release being built (``new``, in its
    staging folder) and record ``changes_since`` (version, files, totals) in its manifest; the
    card renders the markdown.

    ``previous``: the release to compare with, or a function finding it (the writer passes the
    newest older version in its registry). No previous version: nothing. A previous release that
    cannot be read is not a reason to fail a build: the manifest says why there is no changelog
    (``changes_since.error``) and the card shows it.
    """
    staging = Path(new.path)
    try:
        prev = previous() if callable(previous) else previous
        if prev is None or prev.version == new.version:
            return None
        log = diff(prev, new, before_label=prev.version)
    except BenchsmithError as exc:
        record: dict[str, Any] = {"error": f"no changelog: the previous release could not be read ({exc.message})"}
    else:
        base = f"{CHANGES_DIR}/since-{prev.version}"
        (staging / CHANGES_DIR).mkdir(exist_ok=True)
        (staging / f"{base}.json").write_text(json.dumps(log.to_dict(), indent=1, ensure_ascii=False, default=str)
                                              + "\n", encoding="utf-8")
        (staging / f"{base}.md").write_text(log.to_markdown(CARD_LIMIT, heading="###", full=f"`{base}.json`",
                                                            per_split=False), encoding="utf-8")
        record = {"version": prev.version, "json": f"{base}.json", "markdown": f"{base}.md", "totals": log.totals()}
    info = replace(new.info, extra={**new.info.extra, "changes_since": record})
    (staging / MANIFEST).write_text(json.dumps(info.to_dict(), indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return record
