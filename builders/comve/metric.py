"""The ComVE scorer (:class:`ComVEMetric`): ComVE submissions scored exactly as the task's
official scorers did, on the :class:`~benchsmith.validation.metric.Metric` base.

``benchsmith evaluate comve`` and the ComVE baselines (``baseline.py``) use this class.

Submission format (the task's): a CSV without header, one row per instance:
``id,answer`` for subtask A (``0``/``1``, the statement that does not make sense)
and B (``A``/``B``/``C``), ``id,reason`` for subtask C. A first row whose id cell
is literally ``id`` is taken as a header and skipped (no ComVE id is ``id``).

Figures: accuracy for A and B; for C, corpus BLEU with the official options
(:class:`~benchsmith.validation.metrics.bleu.CorpusBLEU` defaults: whitespace
tokens, 4-grams, no smoothing, shortest reference length, empty references
skipped), on the official 0-100 scale.

Signature: ComVE's figures *are* the generic accuracy and BLEU, so :class:`ComVEMetric`
takes its name, options and signature from the metric it delegates to (``accuracy`` for
A and B, ``bleu`` for C) and a figure reads the same as every other accuracy or BLEU of
benchsmith: ``accuracy:1|match:exact|benchsmith:X|n:1000`` and
``nrefs:3|case:mixed|eff:no|tok:whitespace|smooth:none|reflen:shortest|maxn:4|version:...``
(``nrefs`` and ``n`` are facts of the scoring call, in the result's signature only).

Unlike the official scripts, which log and exit, every problem is a
:class:`~benchsmith.errors.PredictionError` that names the file, the line and
the id: a malformed row, an empty or duplicate id, a label outside the
subtask's answers, an id the split does not hold (extra), an id without a
prediction (missing), a file that is not UTF-8 or holds a NUL byte (also in a
subtask C reason). The file is read as every scorer reads predictions
(:mod:`benchsmith.validation.predictions`): streamed and checked row by row
against the gold ids, so the first bad row is reported as soon as it is read.
"""

from __future__ import annotations

import csv
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from benchsmith.loaders.rawfile import short
from benchsmith.validation import predictions as pred_files
from benchsmith.validation.metric import Metric
from benchsmith.validation.metrics.accuracy import Accuracy
from benchsmith.validation.metrics.bleu import CorpusBLEU

from benchsmith.errors import ConfigError, PredictionError, did_you_mean

if TYPE_CHECKING:
    from benchsmith.release import Release

SUBTASKS = {"a": "subtask_a", "b": "subtask_b", "c": "subtask_c"}
ANSWERS = {"a": ("0", "1"), "b": ("A", "B", "C")}
_FORMAT = {"a": "id,answer with answer 0 or 1", "b": "id,answer with answer A, B or C", "c": "id,reason"}


def check_subtask(subtask: str) -> str:
    key = subtask.strip().lower().removeprefix("subtask_").removeprefix("subtask")
    if key not in SUBTASKS:
        raise ConfigError(f"ComVE has no subtask {subtask!r}", hint=did_you_mean(subtask, SUBTASKS))
    return key


def read_predictions(path: str | Path, subtask: str, gold: Mapping[str, Any] | None = None,
                     split: str = "test") -> dict[str, tuple[str, int]]:
    """``{id: (answer, line)}`` from a submission file; see module docstring for errors.

    Streamed and checked row by row (:mod:`benchsmith.validation.predictions`): the first bad row
    is reported as soon as it is read. With ``gold`` (``{id: answer}`` of ``split``) an id the split
    lacks is such a row too, so what is kept is bounded by the gold data, whatever the file's size.
    """
    subtask = check_subtask(subtask)
    path = Path(path)
    hint = f"Write one row per instance: {_FORMAT[subtask]}"
    # csv reads text lines (a quoted reason may span several); the terminator goes back on each line
    reader = csv.reader((text + "\n" for _, text in pred_files.lines(path, hint)), strict=True)
    out: dict[str, tuple[str, int]] = {}
    end = 0
    try:
        for row in reader:
            line, end = end + 1, reader.line_num
            if not row:
                continue
            if not out and line == 1 and row[0].strip().lower() == "id":
                continue  # header
            if len(row) != 2:
                raise PredictionError(
                    f"row for id {short(row[0])} has {len(row)} column(s); expected 2 ({_FORMAT[subtask]})",
                    path=path,
                    line=line,
                    hint="Write one `id,answer` row per instance (quote answers that contain commas)",
                )
            pid, answer = row[0].strip(), row[1].strip()
            if not pid:
                raise PredictionError("empty id; expected an instance id", path=path, line=line)
            if pid in out:
                raise PredictionError(
                    f"duplicate prediction for id {short(pid)} (first on line {out[pid][1]})",
                    path=path,
                    line=line,
                    hint="Keep one prediction per id",
                )
            if subtask in ANSWERS and answer not in ANSWERS[subtask]:
                raise PredictionError(
                    f"id {short(pid)} has answer {short(row[1])}; expected one of {list(ANSWERS[subtask])}",
                    path=path,
                    line=line,
                    hint="Subtask A answers the index of the statement that does not make sense; "
                    "subtask B the letter of the correct reason",
                )
            if gold is not None and pid not in gold:
                raise _extra(pid, path, line, split)
            out[pid] = (row[1] if subtask == "c" else answer, line)
    except csv.Error as exc:
        raise PredictionError(f"malformed CSV: {exc}", path=path, line=end + 1) from None
    if not out:
        raise PredictionError("no predictions in the file", path=path, hint=f"Write rows as {_FORMAT[subtask]}")
    return out


def _extra(pid: str, path: Path, line: int, split: str) -> PredictionError:
    return PredictionError(
        f"prediction for id {short(pid)}, which is not in the {split} split; expected ids of that split only",
        path=path,
        line=line,
        hint="Check --split (train, validation, test, trial) and the ids you predicted for",
    )


def gold_from_release(release: Release, subtask: str, split: str) -> dict[str, Any]:
    """``{id: answer}`` (A: ``"0"``/``"1"``, B: letter, C: list of references) in release order."""
    subtask = check_subtask(subtask)
    config = SUBTASKS[subtask]
    table = release.table(config, split)
    ids = table.column("id").to_pylist()
    if subtask == "c":
        return dict(zip(ids, table.column("references").to_pylist()))
    names = release.features(config)["label"].names
    labels = table.column("label").to_pylist()
    if subtask == "a":
        return {i: str(v) for i, v in zip(ids, labels)}
    return {i: names[v] for i, v in zip(ids, labels)}


def match_ids(gold: Mapping[str, Any], preds: Mapping[str, tuple[str, int]], path: Path, split: str) -> None:
    """Every gold id has a prediction and no prediction is for an id outside the split."""
    for pid, (_, line) in preds.items():
        if pid not in gold:
            raise _extra(pid, path, line, split)
    missing = [i for i in gold if i not in preds]
    if missing:
        raise PredictionError(
            f"no prediction for id {missing[0]!r}"
            + (f" (and {len(missing) - 1} more, e.g. {', '.join(missing[1:4])})" if len(missing) > 1 else "")
            + f"; expected one prediction for each of the {len(gold)} {split} instances",
            path=path,
            hint="Predict every instance of the split",
        )


class ComVEMetric(Metric):
    """The official-compatible scorer of one ComVE subtask: accuracy (A, B) or corpus BLEU (C).

    Args:
        subtask: ``a``, ``b`` or ``c`` (also ``A``, ``subtask_b`` ...); anything else is a
            ConfigError with the valid names.
    """

    def __init__(self, subtask: str) -> None:
        self.subtask = check_subtask(subtask)
        self.metric: Accuracy | CorpusBLEU = CorpusBLEU() if self.subtask == "c" else Accuracy()

    @property
    def name(self) -> str:  # type: ignore[override]
        return self.metric.name

    @property
    def version(self) -> str:  # type: ignore[override]
        return self.metric.version

    def options(self) -> dict[str, Any]:
        return self.metric.options()

    def signature(self) -> str:
        return self.metric.signature()

    def score(self, gold: Mapping[str, Any], predictions: Mapping[str, str]) -> dict[str, Any]:
        """Figures over the ids of ``gold`` (every one needs a prediction), with the result's signature."""
        if self.subtask == "c":
            ids = list(gold)
            res = self.metric.corpus_score([predictions[i] for i in ids], [gold[i] for i in ids])
            return {"metric": "bleu", "bleu": res.score, "n": len(ids),
                    **{k: v for k, v in res.to_dict().items() if k != "score"}}
        res = self.metric.corpus_score(gold, predictions)
        return {"metric": "accuracy", **res.to_dict(), "n": res.total}


def score(gold: Mapping[str, Any], predictions: Mapping[str, str], subtask: str) -> dict[str, Any]:
    """Figures for one subtask: accuracy (A, B) or official BLEU (C); see :class:`ComVEMetric`."""
    return ComVEMetric(subtask).score(gold, predictions)


def evaluate_file(release: Release, subtask: str, predictions_path: str | Path, split: str = "test") -> dict[str, Any]:
    """Read, check and score a submission against a release's split."""
    subtask = check_subtask(subtask)
    config = SUBTASKS[subtask]
    if split not in release.splits(config):
        raise ConfigError(
            f"release {release.name} {release.version} has no split {split!r} for {config}",
            hint=did_you_mean(split, release.splits(config)),
        )
    path = Path(predictions_path)
    gold = gold_from_release(release, subtask, split)  # first: each row is checked against it as it is read
    preds = read_predictions(path, subtask, gold, split)
    match_ids(gold, preds, path, split)
    figures = score(gold, {i: a for i, (a, _) in preds.items()}, subtask)
    return {
        "dataset": release.name,
        "version": release.version,
        "subtask": subtask.upper(),
        "split": split,
        "predictions": str(path),
        **figures,
    }
