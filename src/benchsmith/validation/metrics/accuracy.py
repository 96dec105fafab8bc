"""Accuracy over id-keyed predictions, as the SemEval-style task scorers compute it.

The official ComVE subtask A/B scorers (and the Aristo leaderboard evaluator they
copy) compare each gold answer with the prediction for the same id as strings,
so ``"0"`` and ``" 0"`` differ; callers normalise the submission first.
"""

from __future__ import annotations

from collections.abc import Mapping

from benchsmith.errors import ConfigError
from benchsmith.validation.metric import Metric, Score


class Accuracy(Metric[Mapping[str, str], Mapping[str, str]]):
    """Fraction of gold ids whose prediction equals the gold answer (0-1).

    ``score(predictions, references)``: both ``{id: answer}``; the details are ``correct`` and
    ``total``, the result signature adds ``n`` (the number of gold ids).
    """

    name = "accuracy"
    description = "share of items whose prediction equals the gold answer (0-1)"

    def options(self) -> dict[str, str]:
        return {"match": "exact"}

    def score(self, predictions: Mapping[str, str], references: Mapping[str, str]) -> Score:
        """Score every gold id; a gold id without a prediction is an error, extra predictions are ignored."""
        missing = [i for i in references if i not in predictions]
        if missing:
            raise ConfigError(f"no prediction for id {missing[0]!r} ({len(missing)} missing)")
        if not references:
            raise ConfigError("no gold answers to score against")
        correct = sum(predictions[i] == a for i, a in references.items())
        total = len(references)
        return Score(self.name, correct / total, self.result_signature(n=total), {"correct": correct, "total": total})
