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

Files are read as every scorer reads them (:mod:`benchsmith.validation.predictions`:
streamed, UTF-8, a leading BOM ignored, NUL bytes and non-finite numbers refused).
The gold labels are loaded first and each row is checked as it is read, so the
first bad line is reported at once and memory does not grow with the file.
Every problem is a :class:`~benchsmith.errors.PredictionError` naming the file
and, where there is one, the line: invalid UTF-8, JSON or CSV, a missing field,
an unknown language, an idx that is not a whole number or outside int64, a label
outside the four spellings, a repeated item, an idx the split lacks, or a missing item.
"""

from __future__ import annotations

import csv
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from benchsmith.loaders.rawfile import short
from benchsmith.loaders.xcopa_jsonl import LANGUAGES
from benchsmith.validation import predictions as pred_files
from benchsmith.validation.metric import Metric
from benchsmith.validation.metrics.accuracy import Accuracy

from benchsmith.errors import ConfigError, PredictionError, did_you_mean

if TYPE_CHECKING:
    from benchsmith.release import Release

_LABELS = {0: 0, 1: 1, "0": 0, "1": 1, "choice1": 0, "choice2": 1}
_HINT = "Write one prediction per item: jsonl {\"lang\", \"idx\", \"label\"} or CSV/TSV lang,idx,label"


def _rows(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """``(line, row)`` of a predictions file, streamed (see :mod:`benchsmith.validation.predictions`)."""
    suffix = path.suffix.lower()
    if suffix not in (".csv", ".tsv", ".jsonl"):
        raise PredictionError(f"unknown predictions format {suffix!r}; expected .jsonl, .csv or .tsv",
                              path=path, hint=_HINT)
    if suffix == ".jsonl":
        for line, text in pred_files.lines(path):
            if not text.strip():
                continue
            obj = pred_files.loads(text, path, line, hint=_HINT)
            if not isinstance(obj, dict):
                raise PredictionError("line is not a JSON object", path=path, line=line, hint=_HINT)
            yield line, obj
        return
    # csv reads text lines (a quoted field may span several); the terminator goes back on each line
    reader = csv.DictReader((text + "\n" for _, text in pred_files.lines(path)),
                            delimiter="\t" if suffix == ".tsv" else ",")
    try:
        if reader.fieldnames is None or not {"lang", "idx", "label"} <= set(reader.fieldnames):
            raise PredictionError(f"header is {reader.fieldnames}; expected lang, idx, label",
                                  path=path, line=1, hint=_HINT)
        for row in reader:
            yield reader.line_num, row
    except csv.Error as exc:
        raise PredictionError(f"malformed CSV: {exc}", path=path, line=reader.line_num, hint=_HINT) from None


def read_predictions(path: str | Path, configs: list[str],
                     gold: Mapping[str, Mapping[int, int]] | None = None) -> dict[str, dict[int, tuple[int, int]]]:
    """``{lang: {idx: (label, line)}}``; PredictionError (file:line) on any bad row.

    The file is streamed and each row checked as it is read, so the first bad line is reported at
    once; with ``gold`` (``{lang: {idx: label}}``) an idx the split lacks is one too, and what is kept
    is bounded by the gold data, whatever the file's size.
    """
    path = Path(path)
    out: dict[str, dict[int, tuple[int, int]]] = {}
    for line, row in _rows(path):
        missing = [k for k in ("lang", "idx", "label") if row.get(k) in (None, "")]
        if missing:
            raise PredictionError(f"missing {missing}", path=path, line=line, hint=_HINT)
        lang = row["lang"]
        if not isinstance(lang, str) or lang not in configs:
            raise PredictionError(f"unknown language {short(lang)}", path=path, line=line,
                                  hint=did_you_mean(str(lang), configs))
        idx = pred_files.integer(row["idx"], path, line, "idx", hint=_HINT)
        label = row["label"]
        if isinstance(label, (bool, list, dict)) or label not in _LABELS:  # JSON arrays/objects: unhashable
            raise PredictionError(f"{lang}/{idx}: label {short(label)}; expected 0, 1, choice1 or choice2",
                                  path=path, line=line, hint=_HINT)
        preds = out.setdefault(lang, {})
        if idx in preds:
            raise PredictionError(f"{lang}/{idx} is predicted twice (first at line {preds[idx][1]})",
                                  path=path, line=line, hint=_HINT)
        if gold is not None and idx not in gold[lang]:
            have = gold[lang]
            raise PredictionError(f"{lang} has no idx {idx}", path=path, line=line,
                                  hint=f"{lang} has idx {min(have)}-{max(have)}" if have else None)
        preds[idx] = (_LABELS[label], line)
    if not out:
        raise PredictionError("no predictions in the file", path=path, hint=_HINT)
    return out


class XcopaAccuracy(Metric):
    """Accuracy per language (exact match of the predicted choice, per :class:`Accuracy`) and the
    macro average over the XCOPA languages in the predictions file, as in the paper's tables."""

    name = "xcopa-accuracy"

    def options(self) -> dict[str, str]:
        return {"match": "exact", "average": "macro"}

    def score(self, release: Release, predictions: str | Path, split: str = "test") -> dict[str, Any]:
        """Per-language accuracy of a predictions file against a release's gold labels."""
        configs = [c for c in release.configs() if split in release.splits(c)]
        if not configs:
            splits = {s for c in release.configs() for s in release.splits(c)}
            raise ConfigError(f"release {release.name} {release.version} has no split {split!r}",
                              hint=did_you_mean(split, splits))
        predictions = Path(predictions)
        # gold first (a few thousand labels), so every row is checked as it is read
        golds = {}
        for lang in configs:
            t = release.table(lang, split, ["idx", "label"])
            golds[lang] = dict(zip(t.column("idx").to_pylist(), t.column("label").to_pylist()))
        preds = read_predictions(predictions, configs, golds)
        per_item = Accuracy()
        per_lang: dict[str, dict[str, Any]] = {}
        for lang in [c for c in configs if c in preds]:
            gold, got = golds[lang], preds[lang]
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


def score(release: Release, predictions: str | Path, split: str = "test") -> dict[str, Any]:
    """``XcopaAccuracy().score(...)``: what ``benchsmith evaluate xcopa`` prints."""
    return XcopaAccuracy().score(release, predictions, split)
