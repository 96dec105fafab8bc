"""Accuracy over id-keyed predictions, as the SemEval-style task scorers compute it.

The official ComVE subtask A/B scorers (and the Aristo leaderboard evaluator they
copy) compare each gold answer with the prediction for the same id as strings,
so ``"0"`` and ``" 0"`` differ; callers normalise the submission first.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from benchsmith.validation.metric import Metric

from benchsmith.errors import ConfigError


@dataclass(frozen=True)
class AccuracyResult:
    accuracy: float
    correct: int
    total: int
    signature: str

    def to_dict(self) -> dict:
        return {"accuracy": self.accuracy, "correct": self.correct, "total": self.total, "signature": self.signature}


class Accuracy(Metric):
    """Fraction of gold ids whose prediction equals the gold answer (0-1)."""

    name = "accuracy"

    def options(self) -> dict[str, str]:
        return {"match": "exact"}

    def corpus_score(self, gold: Mapping[str, str], predictions: Mapping[str, str]) -> AccuracyResult:
        """Score every gold id; a gold id without a prediction is an error, extra predictions are ignored."""
        missing = [i for i in gold if i not in predictions]
        if missing:
            raise ConfigError(f"no prediction for id {missing[0]!r} ({len(missing)} missing)")
        if not gold:
            raise ConfigError("no gold answers to score against")
        correct = sum(predictions[i] == a for i, a in gold.items())
        return AccuracyResult(correct / len(gold), correct, len(gold), self.result_signature(n=len(gold)))
