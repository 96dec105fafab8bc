"""Errata: known defects of the upstream data, as rows of two tables beside a builder,
applied by one mechanism in the core.

Every builder has the same two tables, in the same format, read together (:func:`read_errata`):

* ``errata.tsv``: **hand-written**. To fix an item by hand, add rows here (a new ``id``, the
  ``version`` that first ships the fix, the item's ``old`` and ``new`` values and the
  evidence), bump the builder's version and add its ``release_notes``. No command rewrites it.
* ``errata.generated.tsv``: written only by a builder's stage command (``benchsmith stage
  xcopa tables --write``, ``benchsmith stage comve errata --write``) from the raw files;
  never edited by hand, since the next ``--write`` replaces it.

An erratum id lives in one table only (a repeated id is a ParseError naming both files);
the generated rows apply first, then the hand-written ones, so a hand-written row may fix
an item a generated one also touches (its ``old`` is then the generated ``new``).

Each table (tab-separated, UTF-8, ``#`` starts a comment line) has the columns::

    id  version  item  field  old  new  evidence

* ``id`` groups rows into one erratum (``xcopa-th-question``); ``version`` is the first
  release version that applies it (all rows of an id share it). Building version X applies
  every erratum whose version is <= X, so 1.0.0 can reproduce upstream as released.
* ``item`` is ``config/split/example-id`` (the example id as the config's id field spells
  it; ``*`` as config means every config that has that split and id).
* ``field`` is the feature to change and ``old`` its upstream value, ``new`` the fixed one.
  Values are written as the field reads: text as is (``\\t``, ``\\n`` and ``\\\\`` escaped),
  a ClassLabel by its name, a list as a JSON array. ``new`` = ``<drop>`` (with ``field`` and
  ``old`` = ``*``) leaves the example out.
* ``evidence`` says how we know, for this row.

The applier (:class:`ErrataApplier`) is strict, so that a stale erratum can never pass
silently: a row whose ``old`` is not the value found, or a row that matches no example of
a split that was built, stops the build with a :class:`~benchsmith.errors.ParseError`
naming the ``errata.tsv`` line.
"""

from __future__ import annotations

import csv
import json
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from datasets import ClassLabel

from benchsmith.errors import ConfigError, ParseError
from benchsmith.registry import write_text_atomic
from benchsmith.semver import parse_version

COLUMNS = ("id", "version", "item", "field", "old", "new", "evidence")
DROP = "<drop>"
ANY = "*"
#: the hand-written table and the generated one, in the order they apply (see the module docstring)
HAND_WRITTEN = "errata.tsv"
GENERATED = "errata.generated.tsv"


def _unescape(text: str) -> str:
    if "\\" not in text:
        return text
    out, i = [], 0
    while i < len(text):
        c = text[i]
        if c == "\\" and i + 1 < len(text):
            out.append({"t": "\t", "n": "\n", "r": "\r", "\\": "\\"}.get(text[i + 1], "\\" + text[i + 1]))
            i += 2
        else:
            out.append(c)
            i += 1
    return "".join(out)


def _escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace("\t", "\\t").replace("\n", "\\n").replace("\r", "\\r")


@dataclass(frozen=True)
class ErratumRow:
    """One row of ``errata.tsv``: one field of one example (or one dropped example)."""

    id: str
    version: str
    config: str
    split: str
    item: str
    field: str
    old: str
    new: str
    evidence: str
    path: Path | None = None
    line: int | None = None

    @property
    def drop(self) -> bool:
        return self.new == DROP

    @property
    def key(self) -> str:
        return f"{self.config}/{self.split}/{self.item}"

    def cells(self) -> tuple[str, ...]:
        return (self.id, self.version, self.key, self.field, _escape(self.old), _escape(self.new), _escape(self.evidence))


@dataclass(frozen=True)
class Erratum:
    """All rows of one erratum id; ``what`` and ``fix`` are summarised from the rows."""

    id: str
    version: str
    rows: tuple[ErratumRow, ...] = field(default=(), repr=False)

    @property
    def items(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(r.key for r in self.rows))

    @property
    def what(self) -> str:
        drops = [r for r in self.rows if r.drop]
        changes = Counter((r.field, r.old, r.new) for r in self.rows if not r.drop)
        parts = []
        if changes:
            by_field = Counter(f for f, _, _ in changes.elements())
            parts.append("; ".join(f"`{f}` on {n} item(s)" for f, n in by_field.items()))
        if drops:
            configs = sorted({r.config for r in drops})
            parts.append(f"{len(drops)} item(s) dropped from {', '.join(configs)}")
        return " and ".join(parts)

    @property
    def fix(self) -> str:
        changes = Counter((r.field, r.old, r.new) for r in self.rows if not r.drop)
        shown = [f"{f}: {o!r} -> {n!r}" + (f" (x{c})" if c > 1 else "") for (f, o, n), c in changes.most_common(3)]
        more = len(changes) - len(shown)
        text = "; ".join(shown) + (f"; and {more} other change(s)" if more > 0 else "")
        drops = sum(r.drop for r in self.rows)
        if drops:
            text = (text + "; " if text else "") + f"drop {drops} item(s)"
        return text

    @property
    def evidence(self) -> str:
        first = self.rows[0].evidence if self.rows else ""
        return first + (f" (and {len(self.rows) - 1} more rows in errata.tsv)" if len(self.rows) > 1 else "")

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "version": self.version, "what": self.what, "fix": self.fix,
                "evidence": self.evidence, "items": list(self.items)}


def read_errata_tsv(path: str | Path) -> list[Erratum]:
    """Every erratum of ``path`` in file order (``[]`` when the file does not exist)."""
    path = Path(path)
    if not path.is_file():
        return []
    rows: list[ErratumRow] = []
    with open(path, encoding="utf-8", newline="") as fh:
        lines = ((n, line) for n, line in enumerate(fh, start=1) if line.strip() and not line.startswith("#"))
        header = next(lines, None)
        if header is None or tuple(header[1].rstrip("\r\n").split("\t")) != COLUMNS:
            raise ParseError(f"header is {header[1].rstrip() if header else None!r}; expected {list(COLUMNS)}",
                             path=path, line=header[0] if header else 1,
                             hint="See benchsmith/erratum.py for the errata.tsv format")
        for n, line in lines:
            cells = next(csv.reader([line.rstrip("\r\n")], delimiter="\t", quoting=csv.QUOTE_NONE))
            if len(cells) != len(COLUMNS):
                raise ParseError(f"{len(cells)} columns; expected {len(COLUMNS)} ({', '.join(COLUMNS)})",
                                 path=path, line=n)
            rid, version, item, fld, old, new, evidence = cells
            parts = item.split("/", 2)
            if len(parts) != 3 or not all(parts):
                raise ParseError(f"item {item!r} is not config/split/id", path=path, line=n)
            if new == DROP and (fld, old) != (ANY, ANY):
                raise ParseError(f"a {DROP} row needs field and old = '*', got {fld!r}, {old!r}", path=path, line=n)
            try:
                parse_version(version)
            except ConfigError:
                raise ParseError(f"version {version!r} is not MAJOR.MINOR.PATCH", path=path, line=n) from None
            rows.append(ErratumRow(rid, version, parts[0], parts[1], parts[2], fld, _unescape(old), _unescape(new),
                                   _unescape(evidence), path, n))
    by_id: dict[str, list[ErratumRow]] = {}
    for r in rows:
        group = by_id.setdefault(r.id, [])
        if group and group[0].version != r.version:
            raise ParseError(f"erratum {r.id!r} has rows for versions {group[0].version} and {r.version}",
                             path=path, line=r.line, hint="All rows of one erratum id share its version")
        group.append(r)
    return [Erratum(i, g[0].version, tuple(g)) for i, g in by_id.items()]


def read_errata(paths: Iterable[str | Path]) -> list[Erratum]:
    """Every erratum of the tables ``paths`` (a builder's generated table, then its hand-written
    one), in order; a missing table has none. An id found in two tables is a ParseError: the
    hand-written erratum needs an id of its own, so that regenerating cannot merge or drop it."""
    out: list[Erratum] = []
    seen: dict[str, Path] = {}
    for path in paths:
        for e in read_errata_tsv(path):
            if e.id in seen:
                raise ParseError(f"erratum {e.id!r} is also defined in {seen[e.id]}", path=e.rows[0].path,
                                 line=e.rows[0].line, hint="Give the hand-written erratum an id of its own")
            seen[e.id] = Path(path)
            out.append(e)
    return out


def write_errata_tsv(path: str | Path, rows: Iterable[ErratumRow], comment: str = "") -> None:
    """Write rows in the format :func:`read_errata_tsv` reads (an optional ``#`` comment first),
    atomically (:func:`~benchsmith.registry.write_text_atomic`)."""
    text = "".join(f"# {line}\n" if line else "#\n" for line in comment.splitlines())
    text += "\t".join(COLUMNS) + "\n" + "".join("\t".join(r.cells()) + "\n" for r in rows)
    write_text_atomic(path, text, newline="")


def _as_cell(value: Any, feature: Any) -> str:
    """An example's value as errata.tsv spells it (ClassLabel by name, lists as JSON)."""
    if isinstance(feature, ClassLabel) and isinstance(value, int) and not isinstance(value, bool):
        return feature.int2str(value) if 0 <= value < feature.num_classes else str(value)
    if isinstance(value, (list, tuple, dict)):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, bool):
        return "true" if value else "false"
    return "" if value is None else str(value)


def _from_cell(text: str, current: Any, feature: Any) -> Any:
    if isinstance(feature, ClassLabel):
        return feature.str2int(text) if isinstance(current, int) else text
    if isinstance(current, (list, tuple, dict)):
        return json.loads(text)
    if isinstance(current, bool):
        return text == "true"
    if isinstance(current, int):
        return int(text)
    if isinstance(current, float):
        return float(text)
    return text


class ErrataApplier:
    """Applies the rows of the applied errata to one config/split's example stream.

    Use :meth:`apply` on the builder's iterator, then :meth:`finish` once the split is
    written: it raises on rows that matched nothing (stale errata).
    """

    def __init__(self, errata: Iterable[Erratum], config: str, split: str, id_field: str | None,
                 features: Mapping[str, Any]) -> None:
        self.config, self.split, self.features = config, split, features
        self.id_field = id_field
        self.rows: dict[str, list[ErratumRow]] = {}
        for e in errata:
            for r in e.rows:
                if r.split == split and r.config in (config, ANY):
                    self.rows.setdefault(r.item, []).append(r)
        self.used: set[int] = set()

    def __bool__(self) -> bool:
        return bool(self.rows)

    def apply(self, examples: Iterable[dict]) -> Iterator[dict]:
        if not self.rows:
            yield from examples
            return
        if self.id_field is None:
            first = next(iter(self.rows.values()))[0]
            raise ParseError(f"erratum {first.id!r} names items of {self.config}, which has no id field",
                             path=first.path, line=first.line)
        for ex in examples:
            rows = self.rows.get(str(ex.get(self.id_field)))
            if not rows:
                yield ex
                continue
            keep = True
            for r in rows:
                self.used.add(id(r))
                if r.drop:
                    keep = False
                    continue
                if r.field not in ex:
                    if r.config == ANY:
                        continue
                    raise ParseError(f"erratum {r.id!r}: {self.config} has no field {r.field!r}",
                                     path=r.path, line=r.line, hint=f"Fields: {sorted(ex)}")
                found = _as_cell(ex[r.field], self.features.get(r.field))
                if found != r.old:
                    raise ParseError(
                        f"erratum {r.id!r} expects {r.key} {r.field} = {r.old!r}, but the source has {found!r}",
                        path=r.path, line=r.line,
                        hint="Upstream changed or the row is wrong: review it against the raw files",
                    )
                ex = {**ex, r.field: _from_cell(r.new, ex[r.field], self.features.get(r.field))}
            if keep:
                yield ex

    def finish(self) -> None:
        """Raise on a row of this config/split that matched no example (a stale erratum)."""
        for rows in self.rows.values():
            for r in rows:
                if id(r) not in self.used and r.config != ANY:
                    raise ParseError(f"erratum {r.id!r} names {r.key}, which this build does not contain",
                                     path=r.path, line=r.line,
                                     hint="Upstream changed or the row is wrong: review it against the raw files")
