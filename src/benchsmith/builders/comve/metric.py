"""ComVE's metrics (:class:`ComVEAccuracy` for subtasks A and B, :class:`ComVEBLEU` for C):
ComVE submissions scored exactly as the task's official scorers did, on the one scoring
contract (:class:`~benchsmith.validation.metric.Metric`, declared in :data:`METRICS`).

``benchsmith evaluate comve PREDICTIONS --subtask a`` (or ``--config subtask_a``) and the ComVE
baselines (``baseline.py``) use these classes; :func:`comve_metric` picks one for a subtask.

Submission format (the task's): a CSV without header, one row per instance:
``id,answer`` for subtask A (``0``/``1``, the statement that does not make sense)
and B (``A``/``B``/``C``), ``id,reason`` for subtask C. A first row whose id cell
is literally ``id`` is taken as a header and skipped (no ComVE id is ``id``).

Figures: accuracy for A and B; for C, corpus BLEU with the official options
(:class:`~benchsmith.validation.metrics.bleu.CorpusBLEU` defaults: whitespace
tokens, 4-grams, no smoothing, shortest reference length, empty references
skipped), on the official 0-100 scale.

Signature: ComVE's figures *are* the generic accuracy and BLEU, so :class:`ComVEAccuracy`
is :class:`~benchsmith.validation.metrics.accuracy.Accuracy` and :class:`ComVEBLEU` takes its
name, options and signature from :class:`~benchsmith.validation.metrics.bleu.CorpusBLEU`; a
figure reads the same as every other accuracy or BLEU of benchsmith: ``accuracy:1|match:exact|benchsmith:X|n:1000`` and
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
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from benchsmith.errors import ConfigError, PredictionError, did_you_mean
from benchsmith.loaders.rawfile import short
from benchsmith.validation import predictions as pred_files
from benchsmith.validation.metric import Metric, Option, Score
from benchsmith.validation.metrics.accuracy import Accuracy
from benchsmith.validation.metrics.bleu import CorpusBLEU

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
    names = release.config_info(config).features_dict["label"]["names"]  # no datasets import
    labels = table.column("label").to_pylist()
    if subtask == "a":
        return {i: str(v) for i, v in zip(ids, labels)}
    return {i: names[v] for i, v in zip(ids, labels)}


def match_ids(gold: Mapping[str, Any], preds: Mapping[str, tuple[str, int]], path: Path, split: str = "test") -> None:
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


class Gold(dict):
    """``{id: answer}`` (C: ``{id: [reference, ...]}``) of one subtask's split, which it names
    (the submission reader's messages say which split an id is missing from)."""

    def __init__(self, answers: Mapping[str, Any], subtask: str, split: str) -> None:
        super().__init__(answers)
        self.subtask, self.split = subtask, split


SUBTASK = Option("subtask", str, "a, b or c (the same as --config subtask_a, subtask_b, subtask_c).")


class _Submission:
    """What both ComVE metrics share: the subtask (from ``--subtask`` or ``--config``), the
    gold of a split, and the submission reader. ``subtask=None`` until a config names it."""

    OPTIONS = (SUBTASK,)
    subtask: str | None

    def _subtasks(self) -> tuple[str, ...]:
        return tuple(k for k, v in SUBTASKS.items() if self.scores_config(v))  # type: ignore[attr-defined]

    def target(self, release: Release, config: str | None, split: str | None) -> tuple[str, str] | None:
        key = self.subtask
        if config is not None:
            by_config = {v: k for k, v in SUBTASKS.items()}
            if config not in by_config:
                raise ConfigError(f"ComVE has no config {config!r}", hint=did_you_mean(config, by_config))
            if key is not None and key != by_config[config]:
                raise ConfigError(f"--subtask {key} and --config {config} name different subtasks",
                                  hint="Pass one of them")
            key = by_config[config]
        if key is None:
            raise ConfigError("say which ComVE subtask to score", hint="Pass --subtask a, b or c")
        if key not in self._subtasks():
            return None
        config = SUBTASKS[key]
        if config not in release.configs():
            raise ConfigError(f"release {release.name} {release.version} has no config {config!r}",
                              hint=did_you_mean(config, release.configs()))
        return config, Metric.check_split(release, config, split or "test")

    def references(self, release: Release, config: str | None, split: str) -> Gold:
        subtask = {v: k for k, v in SUBTASKS.items()}[str(config)]
        return Gold(gold_from_release(release, subtask, split), subtask, split)

    def read_predictions(self, path: Path, references: Gold) -> dict[str, str]:
        """The submission, checked row by row against ``references`` (every id, nothing else)."""
        preds = read_predictions(path, references.subtask, references, references.split)
        match_ids(references, preds, path, references.split)
        return {i: a for i, (a, _) in preds.items()}


class ComVEAccuracy(_Submission, Accuracy):
    """Subtasks A and B: :class:`~benchsmith.validation.metrics.accuracy.Accuracy` of a submission.

    ``score(predictions, references)``: both ``{id: answer}`` (``"0"``/``"1"`` or a letter).
    """

    description = "accuracy of the answers (subtasks A and B)"
    CONFIGS = ("subtask_a", "subtask_b")

    def __init__(self, subtask: str | None = None) -> None:
        self.subtask = None if subtask is None else check_subtask(subtask)


class ComVEBLEU(_Submission, Metric[Mapping[str, str], Mapping[str, Sequence[str]]]):
    """Subtask C: the official corpus BLEU (:class:`~benchsmith.validation.metrics.bleu.CorpusBLEU`
    defaults), keyed by id. ``score(predictions, references)``: ``{id: reason}`` against
    ``{id: [reference, ...]}``, over the ids of the references in their order."""

    name = "bleu"
    description = "the official corpus BLEU of the reasons (subtask C, 0-100)"
    CONFIGS = ("subtask_c",)

    def __init__(self, subtask: str | None = None) -> None:
        self.subtask = None if subtask is None else check_subtask(subtask)
        self.bleu = CorpusBLEU()

    def options(self) -> dict[str, Any]:
        return self.bleu.options()

    def signature(self) -> str:
        return self.bleu.signature()

    def score(self, predictions: Mapping[str, str], references: Mapping[str, Sequence[str]]) -> Score:
        missing = [i for i in references if i not in predictions]
        if missing:
            raise ConfigError(f"no prediction for id {missing[0]!r} ({len(missing)} missing)")
        ids = list(references)
        return self.bleu.score([predictions[i] for i in ids], [references[i] for i in ids])


#: what ``benchsmith evaluate comve`` scores with (``Builder.metrics``)
METRICS = (ComVEAccuracy, ComVEBLEU)


def comve_metric(subtask: str) -> ComVEAccuracy | ComVEBLEU:
    """The metric of one subtask: :class:`ComVEBLEU` for C, :class:`ComVEAccuracy` for A and B."""
    key = check_subtask(subtask)
    return ComVEBLEU(key) if key == "c" else ComVEAccuracy(key)
