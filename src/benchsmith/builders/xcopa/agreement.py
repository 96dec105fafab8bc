"""Agreement among XCOPA's annotators: Fleiss' kappa, and the translators' labels behind ``changed``.

**What ``changed`` is.** Each of the 11 translators labelled every
item before translating it (Section 2, "Final Dataset"); the released ``label`` is the
majority label, and ``changed`` marks the items where *this language's translator chose
the other alternative* and was overridden ("we override a single translator's label with
the majority label without altering the translation", Section 3; footnote 5: "we
explicitly tag the corresponding questions with an apposite marker"). It is not a flag
for items adapted to the culture. The released data reproduce every agreement figure of
the paper with this reading (published.yaml, ``xcopa_agreement``):

* Table 3, all 22 cells: 100 x (1 - changed / items) per language and split;
* Section 2's averages, 2.1 % (validation) and 2.4 % (test) of labels off the majority;
* footnote 6: 10 validation items with 1 translator in disagreement, 5 with 2, 1 with 3;
* Section 2's Fleiss' kappa over the 11 translators, 0.921 (validation) and 0.911
  (test): the translator's label is ``label`` where ``changed`` is false and the other
  choice where it is true (the task has two choices), so the raters x items matrix is
  recovered exactly.

Not released: the 4 Italian native speakers' labels of the follow-up experiment (kappa
0.926 / 0.917, Section 3). When a maintainer has such labels they are supplied as a TSV
(``BENCHSMITH_XCOPA_ANNOTATIONS``) with header ``lang  split  idx  annotator  label``
(label 0/1 or choice1/choice2), every item labelled by the same number of annotators;
``fleiss_by_language`` computes Fleiss' kappa (statsmodels' formula) per language (items of both
splits pooled).
"""

from __future__ import annotations

import csv
import io
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from benchsmith.errors import ConfigError, ParseError, did_you_mean
from benchsmith.loaders.xcopa_jsonl import LANGUAGES, read_utf8

if TYPE_CHECKING:
    from benchsmith.release import Release

COLUMNS = ("lang", "split", "idx", "annotator", "label")
_LABELS = {"0": 0, "1": 1, "choice1": 0, "choice2": 1}


def read_annotations(path: str | Path) -> dict[str, dict[tuple[str, int], dict[str, int]]]:
    """``{lang: {(split, idx): {annotator: label}}}``; ParseError with file:line on bad rows."""
    path = Path(path)
    out: dict[str, dict[tuple[str, int], dict[str, int]]] = defaultdict(dict)
    reader = csv.reader(io.StringIO(read_utf8(path, hint="Save the annotations as UTF-8"), newline=""),
                        delimiter="\t")
    header = next(reader, None)
    if header is None or tuple(header) != COLUMNS:
        raise ParseError(f"header is {header!r}; expected {list(COLUMNS)}", path=path, line=1)
    for line, row in enumerate(reader, start=2):
        if len(row) != len(COLUMNS):
            raise ParseError(f"{len(row)} columns; expected {len(COLUMNS)}", path=path, line=line)
        lang, split, idx, annotator, label = row
        if lang not in LANGUAGES:
            raise ParseError(f"unknown language {lang!r}", path=path, line=line, hint=did_you_mean(lang, LANGUAGES))
        if split not in ("validation", "test"):
            raise ParseError(f"split is {split!r}; expected validation or test", path=path, line=line)
        if not (idx.isascii() and idx.isdigit()):
            raise ParseError(f"idx is {idx!r}; expected a non-negative integer", path=path, line=line)
        if label not in _LABELS:
            raise ParseError(f"label is {label!r}; expected one of {sorted(_LABELS)}", path=path, line=line)
        item = out[lang].setdefault((split, int(idx)), {})
        if annotator in item:
            raise ParseError(f"annotator {annotator!r} labels {lang}/{split}/{idx} twice", path=path, line=line)
        item[annotator] = _LABELS[label]
    if not out:
        raise ParseError("no annotation rows", path=path)
    for lang, items in out.items():
        sizes = {len(v) for v in items.values()}
        if len(sizes) != 1:
            raise ParseError(
                f"{lang}: items have {sorted(sizes)} annotators; Fleiss' kappa needs the same number for every item",
                path=path,
            )
    return dict(out)


def fleiss(labels_per_item: list[list[int]]) -> float:
    """Fleiss' kappa of items x raters labels (0/1), for two categories.

    statsmodels' ``aggregate_raters(..., n_cat=2)`` + ``fleiss_kappa(method="fleiss")``,
    written out in numpy: the build's card reports it, and statsmodels is only in the
    ``validation`` extra, which a build does not need.
    """
    data = np.asarray(labels_per_item)
    if data.ndim != 2:
        raise ValueError(f"expected an items x raters matrix, got shape {data.shape}")
    if data.size and (data.min() < 0 or data.max() > 1):
        raise ValueError("labels must be 0 or 1")
    n_cat = 2
    counts = np.zeros((data.shape[0], n_cat), int)  # aggregate_raters: per item, raters per category
    for c in range(n_cat):
        counts[:, c] = (data == c).sum(axis=1)
    table = 1.0 * counts
    n_sub, _ = table.shape
    n_total = table.sum()
    n_rat = table.sum(1).max()
    if n_total != n_sub * n_rat:
        raise ValueError("every item needs the same number of raters")
    p_cat = table.sum(0) / n_total
    table2 = table * table
    p_rat = (table2.sum(1) - n_rat) / (n_rat * (n_rat - 1.))
    p_mean = p_rat.mean()
    p_mean_exp = (p_cat * p_cat).sum()
    return float((p_mean - p_mean_exp) / (1 - p_mean_exp))


def fleiss_by_language(path: str | Path) -> dict[str, dict[str, float]]:
    out = {}
    for lang, items in sorted(read_annotations(path).items()):
        matrix = [list(v.values()) for _, v in sorted(items.items())]
        out[lang] = {"kappa": round(fleiss(matrix), 4), "items": len(matrix), "annotators": len(matrix[0])}
    return out


# ----------------------------------------------------------------- the translators, from the release


def translator_label(label: int, changed: bool) -> int:
    """The translator's own label: the released (majority) label, or the other choice where ``changed``."""
    return int(label) ^ int(bool(changed))


def translator_matrix(release: Release, split: str, langs: Sequence[str]) -> list[list[int]]:
    """Items x translators: each language's translator's label on every ``idx`` of ``split``.

    Raises:
        ConfigError: a language lacks the split, or the languages' idx differ.
    """
    per: dict[str, dict[int, int]] = {}
    for lang in langs:
        rows = release.table(lang, split, ["idx", "label", "changed"]).to_pylist()
        per[lang] = {r["idx"]: translator_label(r["label"], r["changed"]) for r in rows}
    idx = sorted(per[langs[0]]) if langs else []
    odd = [lang for lang in langs if sorted(per[lang]) != idx]
    if odd:
        raise ConfigError(f"{split}: the idx of {odd} differ from {langs[0]}'s; translators can't be compared")
    return [[per[lang][i] for lang in langs] for i in idx]


def changed_counts(release: Release, lang: str, split: str) -> tuple[int, int]:
    """``(items with changed = true, items)`` of ``lang/split``."""
    flags = release.table(lang, split, ["changed"]).column("changed").to_pylist()
    return sum(bool(x) for x in flags), len(flags)


def majority_agreement_pct(release: Release, lang: str, split: str) -> float:
    """Table 3's cell: % of the translator's labels that agree with the majority label."""
    changed, n = changed_counts(release, lang, split)
    return round(100 * (1 - changed / n), 4)
