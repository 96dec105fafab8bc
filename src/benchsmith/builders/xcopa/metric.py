"""The XCOPA metric: per-language accuracy and the average over languages (``XcopaAccuracy``).

A :class:`~benchsmith.validation.metric.Metric` like every scorer: its signature records
the name, version and the options that move the number (exact match, macro average),
and each result's signature adds the call's facts (dataset and version, split, how many
languages were averaged). ``benchsmith evaluate xcopa`` (declared in :data:`METRICS`) prints it.

Prediction files (one prediction per item; the format is chosen by the suffix):

* ``.jsonl``: one object a line, ``{"lang": "et", "idx": 0, "label": 1}``;
* ``.csv`` / ``.tsv``: a header ``lang,idx,label`` then one row per item.

``lang`` is a config name of the release (``et`` ... ``zh``, ``translation-et``,
``en``); ``idx`` is the item's ``idx``; ``label`` is ``0``/``1`` or
``choice1``/``choice2``. Every language present in the file is scored and must be
complete (every idx of the split predicted exactly once). ``average`` is the mean
accuracy over the XCOPA languages (the 11 human-translated configs) in the file,
as in the paper's tables; ``complete`` says whether all 11 were there and ``missing``
lists the XCOPA languages the file lacks (the score also carries a warning, which
``benchsmith evaluate xcopa`` prints on stderr: an average over fewer languages is not the
paper's "All"). ``--config et`` scores one language.

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
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from benchsmith.errors import ConfigError, PredictionError, did_you_mean
from benchsmith.loaders.rawfile import short
from benchsmith.loaders.xcopa_jsonl import LANGUAGES
from benchsmith.validation import predictions as pred_files
from benchsmith.validation.metric import Metric, Score
from benchsmith.validation.metrics.accuracy import Accuracy

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


@dataclass(frozen=True)
class Gold:
    """The gold labels of one split, ``{lang: {idx: label}}``, and the release they come from
    (named in the result signature)."""

    labels: Mapping[str, Mapping[int, int]]
    dataset: str
    split: str


class XcopaAccuracy(Metric[Mapping[str, Mapping[int, int]], Gold]):
    """Accuracy per language (exact match of the predicted choice, per :class:`Accuracy`) and the
    macro average over the XCOPA languages in the predictions, as in the paper's tables.

    ``score(predictions, references)``: ``{lang: {idx: label}}`` against a :class:`Gold`; every
    language predicted must be complete. The value is the average (``None`` when the predictions
    hold no XCOPA language); a subset of the 11 languages scores, with a warning.
    """

    name = "xcopa-accuracy"
    description = "accuracy per language and the average over the XCOPA languages"

    def options(self) -> dict[str, str]:
        return {"match": "exact", "average": "macro"}

    def target(self, release: Release, config: str | None, split: str | None) -> tuple[str | None, str]:
        """Every config of ``split`` (default test) unless ``--config`` names one."""
        split = split or "test"
        if config is not None:
            if config not in release.configs():
                raise ConfigError(f"release {release.name} {release.version} has no config {config!r}",
                                  hint=did_you_mean(config, release.configs()))
            return config, self.check_split(release, config, split)
        if not any(split in release.splits(c) for c in release.configs()):
            splits = {s for c in release.configs() for s in release.splits(c)}
            raise ConfigError(f"release {release.name} {release.version} has no split {split!r}",
                              hint=did_you_mean(split, splits))
        return None, split

    def references(self, release: Release, config: str | None, split: str) -> Gold:
        """Gold labels of ``config`` (``None``: every config that has ``split``)."""
        configs = [config] if config else [c for c in release.configs() if split in release.splits(c)]
        labels = {}
        for lang in configs:
            t = release.table(lang, split, ["idx", "label"])
            labels[lang] = dict(zip(t.column("idx").to_pylist(), t.column("label").to_pylist()))
        return Gold(labels, f"{release.name}-{release.version}", split)

    def read_predictions(self, path: Path, references: Gold) -> dict[str, dict[int, int]]:
        """The file, streamed and checked row by row against the gold (gold first, a few thousand
        labels, so memory does not grow with the file); a language it predicts must be complete."""
        preds = read_predictions(path, list(references.labels), references.labels)
        for lang, got in preds.items():
            gold = references.labels[lang]
            if len(got) != len(gold):
                absent = sorted(set(gold) - set(got))
                raise PredictionError(
                    f"{lang}/{references.split}: no prediction for idx {absent[0]} "
                    f"({len(absent)} of {len(gold)} missing)",
                    path=path, hint="Predict every item of each language you submit",
                )
        return {lang: {i: y for i, (y, _) in got.items()} for lang, got in preds.items()}

    def score(self, predictions: Mapping[str, Mapping[int, int]], references: Gold) -> Score:
        per_item = Accuracy()
        per_lang: dict[str, dict[str, Any]] = {}
        for lang in [c for c in references.labels if c in predictions]:
            result = per_item.score({str(i): str(y) for i, y in predictions[lang].items()},
                                    {str(i): str(y) for i, y in references.labels[lang].items()})
            per_lang[lang] = {"accuracy": result.value, **result.details}
        unknown = sorted(set(predictions) - set(references.labels))
        if unknown:
            raise ConfigError(f"predictions for {unknown[0]!r}, which the gold data lacks",
                              hint=did_you_mean(unknown[0], references.labels))
        xcopa_langs = [lang for lang in LANGUAGES if lang in per_lang]
        accuracies = [per_lang[lang]["accuracy"] for lang in xcopa_langs]
        average = sum(accuracies) / len(accuracies) if accuracies else None
        missing = [lang for lang in LANGUAGES if lang not in per_lang]
        n = len(xcopa_langs)
        warnings = () if not missing else (
            (f"covers {n} of {n + len(missing)} XCOPA languages; missing: {', '.join(missing)}. The average is over "
            f"{n} language{'s' if n != 1 else ''}, not the 11 of the paper's \"All\"."),)
        return Score(self.name, average,
                     self.result_signature(dataset=references.dataset, split=references.split, languages=n),
                     {"languages": per_lang, "average": average, "average_over": xcopa_langs,
                      "complete": not missing, "missing": missing},
                     warnings=warnings)


#: what ``benchsmith evaluate xcopa`` scores with (``Builder.metrics``)
METRICS = (XcopaAccuracy,)
