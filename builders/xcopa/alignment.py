"""Joining XCOPA items to the English COPA items they translate.

XCOPA ``validation`` idx ``i`` translates COPA dev item ``401 + i`` (copa-dev.xml) and
XCOPA ``test`` idx ``i`` translates COPA test item ``501 + i`` (copa-test.xml numbers
its items 501-1000). On that join we measure three things per item and language:

* **label**: does XCOPA's gold choice agree with COPA's ``most-plausible-alternative``?
* **question**: does ``question`` agree with COPA's ``asks-for``?
* **choice order**: are choice1/choice2 COPA's a1/a2 in that order?

XCOPA keeps COPA's choice order and labels on every item (checked at build time: a
label that disagrees with COPA stops the build; there is no exception list). The
order cannot be read off the human translations (different languages), so the
``xcopa_consistency`` check measures it independently on the Google back-translations
(``data-gmt``, ten languages): :func:`order_margin` is positive when a back-translated
choice1/choice2 pair is closer (word-set Jaccard, summed over the ten languages) to
COPA's a2/a1 than to a1/a2. On the real data no item is reversed (validation 0/100,
test 0/500).

The question table beside the builder is *derived* here from the raw files, and a
real-data test re-derives it: ``errata.tsv`` (every ``question`` that disagrees with
COPA, with its evidence). Regenerate it with
``benchsmith stage xcopa tables --sources RAW_DIR --write`` (without ``--write`` it
only says whether it is up to date).
"""

from __future__ import annotations

import csv
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchsmith.loaders.copa_xml import CopaItem, read_copa_xml
from benchsmith.loaders.xcopa_jsonl import (
    GMT_LANGUAGES,
    LANGUAGES,
    XcopaRecord,
    read_xcopa_jsonl,
    xcopa_relpath,
)

from benchsmith.errors import ParseError

COPA_DEV, COPA_TEST = "datasets/copa-dev.xml", "datasets/copa-test.xml"
#: split -> (COPA file inside the copa source, COPA id of XCOPA idx 0)
COPA_SPLITS = {"validation": (COPA_DEV, 401), "test": (COPA_TEST, 501)}
#: COPA dev items 1-400 are the English training set of the XCOPA paper.
EN_TRAIN_LAST_ID = 400

ERRATA_COLUMNS = ("lang", "split", "idx", "copa_id", "field", "upstream", "fixed", "others_agree", "evidence")


def copa_id(split: str, idx: int) -> int:
    return COPA_SPLITS[split][1] + idx


def index_copa(items: Iterable[CopaItem]) -> dict[int, CopaItem]:
    return {it.id: it for it in items}


def copa_item_for(
    record: XcopaRecord, split: str, copa: Mapping[int, CopaItem], path: Path
) -> CopaItem:
    """The COPA item an XCOPA record translates; a ParseError when the idx has none."""
    cid = copa_id(split, record.idx)
    item = copa.get(cid)
    if item is None:
        first = COPA_SPLITS[split][1]
        lo, hi = (min(copa), max(copa)) if copa else (first, first - 1)
        raise ParseError(
            f"idx {record.idx} does not align with English COPA: {split} idx i translates "
            f"{COPA_SPLITS[split][0]} item {first}+i, and item {cid} is not there (ids {lo}-{hi})",
            path=path,
            line=record.line,
            hint=f"XCOPA {split} idx must lie in 0-{hi - first}; check that the file is upstream's",
        )
    return item


# --------------------------------------------------------------------------- tables


@dataclass(frozen=True)
class QuestionErratum:
    lang: str
    split: str
    idx: int
    copa_id: int
    upstream: str
    fixed: str
    others_agree: int  # how many of the other XCOPA languages agree with COPA on this item
    evidence: str


def read_errata_tsv(path: Path) -> list[QuestionErratum]:
    rows = _read_tsv(path, ERRATA_COLUMNS)
    out = []
    for line, r in rows:
        if r["field"] != "question" or r["upstream"] not in ("cause", "effect") or r["fixed"] not in ("cause", "effect"):
            raise ParseError(f"row {r!r} is not a question fix (cause/effect)", path=path, line=line)
        out.append(
            QuestionErratum(r["lang"], r["split"], _number(r["idx"], path, line),
                            _number(r["copa_id"], path, line), r["upstream"], r["fixed"],
                            _number(r["others_agree"], path, line), r["evidence"])
        )
    return out


def write_errata_tsv(path: Path, errata: Iterable[QuestionErratum]) -> None:
    _write_tsv(path, ERRATA_COLUMNS, (
        (e.lang, e.split, e.idx, e.copa_id, "question", e.upstream, e.fixed, e.others_agree, e.evidence) for e in errata
    ))


def _number(value: str, path: Path, line: int, kind: type = int) -> Any:
    try:
        return kind(value)
    except ValueError:
        raise ParseError(f"{value!r} is not {'an integer' if kind is int else 'a number'}",
                         path=path, line=line) from None


def _read_tsv(path: Path, columns: tuple[str, ...]) -> list[tuple[int, dict[str, str]]]:
    with open(path, encoding="utf-8", newline="") as fh:
        reader = csv.reader(fh, delimiter="\t")
        header = next(reader, None)
        if header is None or tuple(header) != columns:
            raise ParseError(f"header is {header!r}; expected {list(columns)}", path=path, line=1,
                             hint="Regenerate with `benchsmith stage xcopa tables --sources RAW_DIR --write`")
        out = []
        for line, row in enumerate(reader, start=2):
            if len(row) != len(columns):
                raise ParseError(f"{len(row)} columns; expected {len(columns)}", path=path, line=line)
            out.append((line, dict(zip(columns, row))))
    return out


def _write_tsv(path: Path, columns: tuple[str, ...], rows: Iterable[tuple]) -> None:
    with open(path, "w", encoding="utf-8", newline="") as fh:
        w = csv.writer(fh, delimiter="\t", lineterminator="\n")
        w.writerow(columns)
        w.writerows(rows)


# --------------------------------------------------------------------------- derivation

_WORD = re.compile(r"[a-z]+")


def _words(text: str) -> set[str]:
    return set(_WORD.findall(text.lower()))


def _jaccard(a: str, b: str) -> float:
    wa, wb = _words(a), _words(b)
    return len(wa & wb) / max(1, len(wa | wb))


def order_margin(choice1: str, choice2: str, alternative1: str, alternative2: str) -> float:
    """How much closer (word-set Jaccard) the choices are to COPA's alternatives crosswise
    (``choice1`` ~ ``alternative2``, ``choice2`` ~ ``alternative1``) than straight: positive
    when the choices are in COPA's reversed order."""
    cross = _jaccard(choice1, alternative2) + _jaccard(choice2, alternative1)
    straight = _jaccard(choice1, alternative1) + _jaccard(choice2, alternative2)
    return cross - straight


@dataclass
class RawData:
    """Every XCOPA file and both COPA files, read once (for derivation and audits)."""

    copa: dict[str, dict[int, CopaItem]]  # split -> id -> item
    human: dict[tuple[str, str], list[XcopaRecord]]  # (lang, split) -> records
    gmt: dict[tuple[str, str], list[XcopaRecord]]

    @classmethod
    def read(cls, xcopa_root: Path, copa_root: Path, languages: Iterable[str] = LANGUAGES) -> RawData:
        copa = {s: index_copa(read_copa_xml(Path(copa_root) / f)) for s, (f, _) in COPA_SPLITS.items()}
        human, gmt = {}, {}
        for lang in languages:
            for split in COPA_SPLITS:
                human[lang, split] = read_xcopa_jsonl(Path(xcopa_root) / xcopa_relpath(lang, split))
                if lang in GMT_LANGUAGES:
                    gmt[lang, split] = read_xcopa_jsonl(Path(xcopa_root) / xcopa_relpath(lang, split, translated=True))
        return cls(copa, human, gmt)

    def copa_for(self, split: str, record: XcopaRecord) -> CopaItem | None:
        return self.copa[split].get(copa_id(split, record.idx))


def derive_question_errata(raw: RawData) -> list[QuestionErratum]:
    """Every human-translated item whose ``question`` disagrees with COPA's ``asks-for``."""
    out = []
    langs = sorted({lang for lang, _ in raw.human})
    by_idx = {key: {r.idx: r for r in records} for key, records in raw.human.items()}
    for lang in langs:
        others = [o for o in langs if o != lang]
        for split in COPA_SPLITS:
            for r in raw.human[lang, split]:
                c = raw.copa_for(split, r)
                if c is None or r.question == c.asks_for:
                    continue
                agree = sum(
                    1 for o in others
                    if (x := by_idx[o, split].get(r.idx)) is not None and x.question == c.asks_for
                )
                evidence = (
                    f"{COPA_SPLITS[split][0]} item {c.id} asks-for={c.asks_for}; "
                    f"{agree}/{len(others)} other XCOPA languages say {c.asks_for}"
                )
                out.append(QuestionErratum(lang, split, r.idx, c.id, r.question, c.asks_for, agree, evidence))
    return out
