"""Label-issue detection: out-of-fold cross-encoder probabilities + confident learning.

The labelled items (a builder passes train and validation pooled) are cut into ``folds``
seeded folds; for each fold the cross-encoder of
:mod:`~benchsmith.validation.baselines.multiple_choice` is fine-tuned from the pretrained
weights on the other folds (fixed epochs, no model selection: the held-out fold must
stay unseen) and predicts the held-out fold. Every item so gets one out-of-fold
probability per option, and cleanlab's ``find_label_issues`` (confident learning,
``filter_by="prune_by_noise_rate"``) flags the items whose given label the model
confidently disagrees with, ranked by self-confidence (the probability of the given
label, lowest first).

Classes are option positions (0 = first option ...); an item with fewer options than the
widest one has probability 0 for the positions it lacks.

The result is **candidate errata** for a maintainer to read (id, given label, predicted
label, probabilities, rank), never a change to the data: a flagged item may be a hard
item the model gets wrong. :func:`flip_labels` and :func:`precision_recall` measure how
well the detector finds errors planted on purpose (:func:`measure_planted_errors`).
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field, replace
from typing import Any

from benchsmith.validation.baselines.multiple_choice import (
    MCItem,
    MCOptions,
    check_items,
    train_multiple_choice,
)
from benchsmith.validation.baselines.runtime import RunRecord

from benchsmith.errors import ConfigError, did_you_mean

DEFAULT_FOLDS = 5
FILTERS = ("prune_by_noise_rate", "prune_by_class", "both", "confident_learning", "predicted_neq_given")


@dataclass(frozen=True)
class LabelIssue:
    """One candidate erratum: the evidence a maintainer needs to judge it."""

    rank: int
    id: str
    given_label: int
    predicted_label: int
    probabilities: list[float]
    self_confidence: float
    fold: int


@dataclass
class LabelIssueReport:
    issues: list[LabelIssue]
    n_items: int
    folds: int
    out_of_fold_accuracy: float
    filter_by: str
    records: list[RunRecord] = field(default_factory=list)

    @property
    def flagged_ids(self) -> list[str]:
        return [i.id for i in self.issues]

    def to_dict(self) -> dict[str, Any]:
        return {
            "issues": [asdict(i) for i in self.issues],
            "n_items": self.n_items,
            "folds": self.folds,
            "out_of_fold_accuracy": self.out_of_fold_accuracy,
            "filter_by": self.filter_by,
            "records": [r.to_dict() for r in self.records],
        }


@dataclass
class OutOfFold:
    """Per item: the probabilities of its options padded to the widest item, and its fold."""

    probabilities: list[list[float]]
    fold_of: list[int]
    records: list[RunRecord]


def fold_assignment(n: int, folds: int, seed: int) -> list[int]:
    """Seeded fold number per item, sizes differing by at most one."""
    order = list(range(n))
    random.Random(seed).shuffle(order)
    fold_of = [0] * n
    for rank, i in enumerate(order):
        fold_of[i] = rank % folds
    return fold_of


def out_of_fold_probabilities(items: Sequence[MCItem], *, folds: int = DEFAULT_FOLDS, seed: int = 0,
                              options: MCOptions | None = None) -> OutOfFold:
    """Train ``folds`` cross-encoders, each on all but one fold, and predict the held-out fold.

    ``options.max_examples`` is ignored here (subsample the items beforehand); every fold
    uses ``seed``.
    """
    items = list(items)
    check_items(items, "label-issue items")
    if isinstance(folds, bool) or not isinstance(folds, int) or folds < 2:
        raise ConfigError(f"folds is {folds!r}; expected an integer >= 2", hint="Use 5 (default) or 3 on CPU")
    if len(items) < folds:
        raise ConfigError(f"{len(items)} item(s) cannot be cut into {folds} folds",
                          hint="Pass more items or fewer folds")
    opts = MCOptions.make(options, seed=seed, max_examples=None)
    fold_of = fold_assignment(len(items), folds, seed)
    widest = max(len(it.options) for it in items)
    probabilities: list[list[float]] = [[] for _ in items]
    records = []
    for f in range(folds):
        held = [i for i in range(len(items)) if fold_of[i] == f]
        rest = [items[i] for i in range(len(items)) if fold_of[i] != f]
        result = train_multiple_choice(rest, None, {"heldout": [items[i] for i in held]}, opts)
        result.record.hyperparameters.update(fold=f, folds=folds)
        records.append(result.record)
        for i in held:
            probs = result.predictions["heldout"][items[i].id].probabilities
            probabilities[i] = list(probs) + [0.0] * (widest - len(probs))
    return OutOfFold(probabilities, fold_of, records)


def detect_label_issues(items: Sequence[MCItem], *, folds: int = DEFAULT_FOLDS, seed: int = 0,
                        options: MCOptions | None = None, top: int | None = None,
                        filter_by: str = "prune_by_noise_rate") -> LabelIssueReport:
    """Candidate label errors among ``items``, most suspicious first (at most ``top``)."""
    if filter_by not in FILTERS:
        raise ConfigError(f"unknown cleanlab filter {filter_by!r}", hint=did_you_mean(filter_by, FILTERS))
    oof = out_of_fold_probabilities(items, folds=folds, seed=seed, options=options)
    return rank_label_issues(items, oof, filter_by=filter_by, top=top, folds=folds)


def rank_label_issues(items: Sequence[MCItem], oof: OutOfFold, *, filter_by: str = "prune_by_noise_rate",
                      top: int | None = None, folds: int | None = None) -> LabelIssueReport:
    """cleanlab's ranking of out-of-fold probabilities (split out so it can run on stored ones)."""
    import numpy as np

    try:
        from cleanlab.filter import find_label_issues
    except ImportError:
        raise ConfigError("label-issue detection needs cleanlab, which is not installed",
                          hint="pip install 'benchsmith[models]' (or pip install cleanlab)") from None
    items = list(items)
    labels = np.asarray([it.label for it in items])
    probs = np.asarray(oof.probabilities, dtype=float)
    ranked = find_label_issues(labels, probs, filter_by=filter_by, return_indices_ranked_by="self_confidence",
                               n_jobs=1)
    predicted = probs.argmax(1)
    issues = [
        LabelIssue(rank=r + 1, id=items[i].id, given_label=int(labels[i]), predicted_label=int(predicted[i]),
                   probabilities=[round(float(p), 6) for p in probs[i, : len(items[i].options)]],
                   self_confidence=round(float(probs[i, labels[i]]), 6), fold=oof.fold_of[i])
        for r, i in enumerate(ranked[:top] if top is not None else ranked)
    ]
    return LabelIssueReport(issues=issues, n_items=len(items), folds=folds or len(set(oof.fold_of)),
                            out_of_fold_accuracy=round(float((predicted == labels).mean()), 6),
                            filter_by=filter_by, records=oof.records)


def flip_labels(items: Sequence[MCItem], fraction: float = 0.02, seed: int = 0) -> tuple[list[MCItem], list[str]]:
    """Copies of ``items`` with the labels of a seeded random ``fraction`` changed, and the changed ids.

    Two options: the other one; k options: another one at random. At least one label
    changes when ``fraction > 0``; items with a single option are never picked.
    """
    if not 0 <= fraction <= 1:
        raise ConfigError(f"fraction is {fraction!r}; expected 0 <= fraction <= 1", hint="Typical: 0.02")
    items = list(items)
    rng = random.Random(seed)
    candidates = [i for i, it in enumerate(items) if len(it.options) > 1]
    n = min(len(candidates), max(1, round(fraction * len(items)))) if fraction > 0 else 0
    chosen = sorted(rng.sample(candidates, n))
    out = list(items)
    for i in chosen:
        it = items[i]
        others = [k for k in range(len(it.options)) if k != it.label]
        out[i] = replace(it, label=others[0] if len(others) == 1 else rng.choice(others))
    return out, [items[i].id for i in chosen]


def precision_recall(flagged_ids: Iterable[str], flipped_ids: Iterable[str]) -> dict[str, Any]:
    """Precision and recall of ``flagged_ids`` against the planted ``flipped_ids`` (None when undefined)."""
    flagged, flipped = set(flagged_ids), set(flipped_ids)
    hits = len(flagged & flipped)
    precision = hits / len(flagged) if flagged else None
    recall = hits / len(flipped) if flipped else None
    f1 = (2 * precision * recall / (precision + recall)
          if precision is not None and recall is not None and precision + recall > 0 else None)
    return {"precision": precision, "recall": recall, "f1": f1, "flagged": len(flagged), "flipped": len(flipped),
            "true_positives": hits}


def measure_planted_errors(items: Sequence[MCItem], *, fraction: float = 0.02, seed: int = 0,
                           folds: int = DEFAULT_FOLDS, options: MCOptions | None = None) -> dict[str, Any]:
    """Flip ``fraction`` of the labels, detect issues, and score the detector on the flips."""
    noisy, flipped = flip_labels(items, fraction, seed)
    report = detect_label_issues(noisy, folds=folds, seed=seed, options=options)
    return {"fraction": fraction, "seed": seed, **precision_recall(report.flagged_ids, flipped),
            "flipped_ids": flipped, "report": report}


__all__ = [
    "LabelIssue", "LabelIssueReport", "OutOfFold", "detect_label_issues", "flip_labels", "fold_assignment",
    "measure_planted_errors", "out_of_fold_probabilities", "precision_recall", "rank_label_issues",
]
