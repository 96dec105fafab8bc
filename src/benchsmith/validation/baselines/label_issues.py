"""Label-issue detection: out-of-fold cross-encoder probabilities + cleanlab's confident learning.

The items are cut into ``folds`` seeded folds (scikit-learn's ``KFold``); for each, the
cross-encoder of :mod:`.multiple_choice` is fine-tuned from the pretrained weights on the other
folds (fixed epochs, no model selection: the held-out fold must stay unseen) and predicts the
held-out fold. cleanlab's ``find_label_issues`` flags the items whose given label the model
confidently disagrees with, ranked by self-confidence (lowest first). Classes are option
positions; an item with fewer options has probability 0 for the positions it lacks.

The result is **candidate errata** for a maintainer to read, never a change to the data: a
flagged item may be a hard item the model gets wrong. :func:`measure_planted_errors` measures
how well the detector finds errors planted on purpose.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from benchsmith.errors import ConfigError
from benchsmith.validation.baselines.multiple_choice import (
    MCItem,
    MCOptions,
    check_items,
    train_multiple_choice,
)
from benchsmith.validation.baselines.runtime import RunRecord

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


def detect_label_issues(items: Sequence[MCItem], *, folds: int = DEFAULT_FOLDS, seed: int = 0,
                        options: MCOptions | None = None, top: int | None = None,
                        filter_by: str = "prune_by_noise_rate", model_path: str | Path | None = None,
                        device: str = "auto") -> LabelIssueReport:
    """Candidate label errors among ``items``, most suspicious first (at most ``top``); every
    fold trains with ``seed``."""
    from sklearn.model_selection import KFold

    try:
        from cleanlab.filter import find_label_issues
    except ImportError:
        raise ConfigError("label-issue detection needs cleanlab, which is not installed",
                          hint="pip install 'benchsmith[models]' (or pip install cleanlab)") from None
    items = list(items)
    check_items(items, "label-issue items")
    if isinstance(folds, bool) or not isinstance(folds, int) or folds < 2:
        raise ConfigError(f"folds is {folds!r}; expected an integer >= 2", hint="Use 5 (default) or 3 on CPU")
    if len(items) < folds:
        raise ConfigError(f"{len(items)} item(s) cannot be cut into {folds} folds",
                          hint="Pass more items or fewer folds")
    probs = np.zeros((len(items), max(len(it.options) for it in items)))
    fold_of = np.zeros(len(items), dtype=int)
    records = []
    for f, (rest, held) in enumerate(KFold(folds, shuffle=True, random_state=seed).split(items)):
        result = train_multiple_choice([items[i] for i in rest], None, {"heldout": [items[i] for i in held]},
                                       options, model_path=model_path, device=device, seed=seed)
        result.record.hyperparameters.update(fold=f, folds=folds)
        records.append(result.record)
        for i in held:
            p = result.predictions["heldout"][items[i].id].probabilities
            probs[i, :len(p)], fold_of[i] = p, f
    labels = np.asarray([it.label for it in items])
    ranked = find_label_issues(labels, probs, filter_by=filter_by, return_indices_ranked_by="self_confidence",
                               n_jobs=1)
    predicted = probs.argmax(1)
    issues = [LabelIssue(rank=r + 1, id=items[i].id, given_label=int(labels[i]),
                         predicted_label=int(predicted[i]),
                         probabilities=[round(float(p), 6) for p in probs[i, :len(items[i].options)]],
                         self_confidence=round(float(probs[i, labels[i]]), 6), fold=int(fold_of[i]))
              for r, i in enumerate(ranked[:top])]
    accuracy = round(float((predicted == labels).mean()), 6)
    return LabelIssueReport(issues, len(items), folds, accuracy, filter_by, records)


def flip_labels(items: Sequence[MCItem], fraction: float = 0.02,
                seed: int = 0) -> tuple[list[MCItem], list[str]]:
    """Copies of ``items`` with the labels of a seeded random ``fraction`` changed (to the other
    option, or another at random), and the changed ids; at least one when ``fraction > 0``."""
    if not 0 <= fraction <= 1:
        raise ConfigError(f"fraction is {fraction!r}; expected 0 <= fraction <= 1", hint="Typical: 0.02")
    rng = random.Random(seed)
    out = list(items)
    candidates = [i for i, it in enumerate(out) if len(it.options) > 1]
    chosen = sorted(rng.sample(candidates, min(len(candidates), max(1, round(fraction * len(out))))
                               if fraction > 0 else 0))
    for i in chosen:
        others = [k for k in range(len(out[i].options)) if k != out[i].label]
        out[i] = replace(out[i], label=others[0] if len(others) == 1 else rng.choice(others))
    return out, [out[i].id for i in chosen]


def precision_recall(flagged_ids: Iterable[str], flipped_ids: Iterable[str]) -> dict[str, Any]:
    """Precision, recall and F1 of ``flagged_ids`` against the planted ``flipped_ids`` (None: undefined)."""
    flagged, flipped = set(flagged_ids), set(flipped_ids)
    hits = len(flagged & flipped)
    precision = hits / len(flagged) if flagged else None
    recall = hits / len(flipped) if flipped else None
    f1 = (2 * precision * recall / (precision + recall)
          if precision is not None and recall is not None and precision + recall > 0 else None)
    return {"precision": precision, "recall": recall, "f1": f1, "flagged": len(flagged),
            "flipped": len(flipped), "true_positives": hits}


def measure_planted_errors(items: Sequence[MCItem], *, fraction: float = 0.02, seed: int = 0,
                           folds: int = DEFAULT_FOLDS, **kwargs: Any) -> dict[str, Any]:
    """Flip ``fraction`` of the labels, detect issues (``kwargs``: :func:`detect_label_issues`'s) and
    score the detector on the flips."""
    noisy, flipped = flip_labels(items, fraction, seed)
    report = detect_label_issues(noisy, folds=folds, seed=seed, **kwargs)
    return {"fraction": fraction, "seed": seed, **precision_recall([i.id for i in report.issues], flipped),
            "flipped_ids": flipped, "report": report}

