"""The XCOPA scorer: per-language accuracy and the average over languages (``XcopaAccuracy``).

A :class:`~benchsmith.validation.metric.Metric` like every scorer: its signature records
the name, version and the options that move the number (exact match, macro average),
and each result's signature adds the call's facts (dataset and version, split, how many
languages were averaged). ``benchsmith evaluate xcopa`` prints it.

Prediction files (one prediction per item; the format is chosen by the suffix):

* ``.jsonl``: one object a line, ``{"lang": "et", "idx": 0, "label": 1}``;
* ``.csv`` / ``.tsv``: a header ``lang,idx,label`` then one row per item.

``lang`` is a config name of the release (``et`` ... ``zh``, ``translation-et``,
``en``); ``idx`` is the item's ``idx``; ``label`` is ``0``/``1`` or
``choice1``/``choice2``. Every language present in the file is scored and must be
complete (every idx of the split predicted exactly once). ``average`` is the mean
accuracy over the XCOPA languages (the 11 human-translated configs) in the file,
as in the paper's tables; ``complete`` says whether all 11 were there and ``missing``
lists the XCOPA languages the file lacks (``benchsmith evaluate xcopa`` also warns on
stderr: an average over fewer languages is not the paper's "All").

Files are UTF-8 (a leading BOM, as spreadsheet programs write it, is ignored).
Every problem is a :class:`~benchsmith.errors.PredictionError` naming the file
and, where there is one, the line: invalid UTF-8, JSON or CSV, a missing field,
an unknown language, an idx that is not a whole number, a label outside the
four spellings, a repeated item, an idx the split lacks, or a missing item.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from benchsmith.loaders.rawfile import loads_json
from benchsmith.loaders.xcopa_jsonl import LANGUAGES, read_utf8
from benchsmith.validation.metric import Metric
from benchsmith.validation.metrics.accuracy import Accuracy

from benchsmith.errors import ConfigError, PredictionError, did_you_mean

_LABELS = {0: 0, 1: 1, "0": 0, "1": 1, "choice1": 0, "choice2": 1}
_HINT = "Write one prediction per item: jsonl {\"lang\", \"idx\", \"label\"} or CSV/TSV lang,idx,label"


def _rows(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    suffix = path.suffix.lower()
    if suffix not in (".csv", ".tsv", ".jsonl"):
        raise PredictionError(f"unknown predictions format {suffix!r}; expected .jsonl, .csv or .tsv",
                              path=path, hint=_HINT)
    content = read_utf8(path, PredictionError, "Save the predictions as UTF-8")
    # a BOM is what spreadsheet programs put before the header, not part of it
    fh = io.StringIO(content.removeprefix("\ufeff"), newline="")
    if suffix == ".jsonl":
        for line, text in enumerate(fh, start=1):
            if not text.strip():
                continue
            obj = loads_json(text, path, line, error=PredictionError, hint=_HINT)
            if not isinstance(obj, dict):
                raise PredictionError("line is not a JSON object", path=path, line=line, hint=_HINT)
            yield line, obj
        return
    reader = csv.DictReader(fh, delimiter="\t" if suffix == ".tsv" else ",")
    try:
        if reader.fieldnames is None or not {"lang", "idx", "label"} <= set(reader.fieldnames):
            raise PredictionError(f"header is {reader.fieldnames}; expected lang, idx, label",
                                  path=path, line=1, hint=_HINT)
        for row in reader:
            yield reader.line_num, row
    except csv.Error as exc:
        raise PredictionError(f"malformed CSV: {exc}", path=path, line=reader.line_num, hint=_HINT) from None


def read_predictions(path: str | Path, configs: list[str]) -> dict[str, dict[int, tuple[int, int]]]:
    """``{lang: {idx: (label, line)}}``; PredictionError (file:line) on any bad row."""
    path = Path(path)
    if not path.is_file():
        raise PredictionError("predictions file not found", path=path, hint=_HINT)
    out: dict[str, dict[int, tuple[int, int]]] = {}
    for line, row in _rows(path):
        missing = [k for k in ("lang", "idx", "label") if row.get(k) in (None, "")]
        if missing:
            raise PredictionError(f"missing {missing}", path=path, line=line, hint=_HINT)
        lang = str(row["lang"])
        if lang not in configs:
            raise PredictionError(f"unknown language {lang!r}", path=path, line=line, hint=did_you_mean(lang, configs))
        idx = _idx(row["idx"])
        if idx is None:
            raise PredictionError(f"idx {row['idx']!r} is not an integer", path=path, line=line, hint=_HINT)
        label = row["label"]
        if isinstance(label, (bool, list, dict)) or label not in _LABELS:  # JSON arrays/objects: unhashable
            raise PredictionError(f"{lang}/{idx}: label {label!r}; expected 0, 1, choice1 or choice2",
                                  path=path, line=line, hint=_HINT)
        preds = out.setdefault(lang, {})
        if idx in preds:
            raise PredictionError(f"{lang}/{idx} is predicted twice (first at line {preds[idx][1]})",
                                  path=path, line=line, hint=_HINT)
        preds[idx] = (_LABELS[label], line)
    if not out:
        raise PredictionError("no predictions in the file", path=path, hint=_HINT)
    return out


def _idx(value: Any) -> int | None:
    """An idx from JSON (a whole number) or CSV (its digits); None for anything else (1.5, true, [0])."""
    if isinstance(value, bool) or (isinstance(value, float) and not value.is_integer()):
        return None
    try:
        return int(value)
    except (TypeError, ValueError):
        return None


class XcopaAccuracy(Metric):
    """Accuracy per language (exact match of the predicted choice, per :class:`Accuracy`) and the
    macro average over the XCOPA languages in the predictions file, as in the paper's tables."""

    name = "xcopa-accuracy"

    def options(self) -> dict[str, str]:
        return {"match": "exact", "average": "macro"}

    def score(self, release: Any, predictions: str | Path, split: str = "test") -> dict[str, Any]:
        """Per-language accuracy of a predictions file against a release's gold labels."""
        configs = [c for c in release.configs() if split in release.splits(c)]
        if not configs:
            splits = {s for c in release.configs() for s in release.splits(c)}
            raise ConfigError(f"release {release.name} {release.version} has no split {split!r}",
                              hint=did_you_mean(split, splits))
        predictions = Path(predictions)
        preds = read_predictions(predictions, configs)
        per_item = Accuracy()
        per_lang: dict[str, dict[str, Any]] = {}
        for lang in [c for c in configs if c in preds]:
            t = release.table(lang, split, ["idx", "label"])
            gold = dict(zip(t.column("idx").to_pylist(), t.column("label").to_pylist()))
            got = preds[lang]
            extra = sorted(set(got) - set(gold))
            if extra:
                raise PredictionError(
                    f"{lang}/{split} has no idx {extra[0]} ({len(extra)} unknown idx)",
                    path=predictions, line=got[extra[0]][1], hint=f"{lang}/{split} has idx 0-{max(gold)}",
                )
            absent = sorted(set(gold) - set(got))
            if absent:
                raise PredictionError(
                    f"{lang}/{split}: no prediction for idx {absent[0]} "
                    f"({len(absent)} of {len(gold)} missing)",
                    path=predictions, hint="Predict every item of each language you submit",
                )
            result = per_item.corpus_score({str(i): str(y) for i, y in gold.items()},
                                           {str(i): str(y) for i, (y, _) in got.items()})
            per_lang[lang] = {"accuracy": result.accuracy, "correct": result.correct, "total": result.total}
        xcopa_langs = [lang for lang in LANGUAGES if lang in per_lang]
        accuracies = [per_lang[lang]["accuracy"] for lang in xcopa_langs]
        average = sum(accuracies) / len(accuracies) if accuracies else None
        return {
            "dataset": release.name,
            "version": release.version,
            "split": split,
            "languages": per_lang,
            "average": average,
            "average_over": xcopa_langs,
            "complete": len(xcopa_langs) == len(LANGUAGES),
            "missing": [lang for lang in LANGUAGES if lang not in per_lang],
            "signature": self.result_signature(dataset=f"{release.name}-{release.version}", split=split,
                                               languages=len(xcopa_langs)),
        }


def score(release: Any, predictions: str | Path, split: str = "test") -> dict[str, Any]:
    """``XcopaAccuracy().score(...)``: what ``benchsmith evaluate xcopa`` prints."""
    return XcopaAccuracy().score(release, predictions, split)
