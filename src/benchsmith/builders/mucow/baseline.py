"""MuCoW's model baseline: a local X -> English translation model (``--model-path``, which may hold
``{src}`` for one model per pair) scores every ``scoring-<pair>`` suite with this folder's
``lm_scoring`` engine (:mod:`.lm_scoring`) into a scores file, which :func:`score_scores_file`
reads back with the reader of ``benchsmith evaluate mucow --scores``: the baseline's figure is
exactly what the evaluate command reports for the same file. The paper's per-pair tables have no
body in the copy on file, so no published figure is compared.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from benchsmith.validation.baselines.spec import BaselineSpec, Setup

from .lm_scoring import lm_scoring_engine  # noqa: F401 - registers the lm_scoring engine
from .metric import MucowScoringAccuracy, read_scores

if TYPE_CHECKING:
    from benchsmith.release import Release


def score_scores_file(release: Release, config: str, split: str, items: Sequence[Mapping[str, Any]],
                      scores: Path) -> dict[str, Any]:
    """Accuracy (%) of a suite's scores file, as ``benchsmith evaluate mucow --scores`` computes it."""
    pair = release.config_info(config).metadata.get("pair")
    metric = MucowScoringAccuracy(pair=pair)
    res = metric.score(read_scores(scores, metric.expected_lines(items)), items)
    return {"accuracy": round(100 * (res.value or 0.0), 2), "signature": res.signature,
            "correct_of_total": [res.details["correct"], res.details["total"]], "by_corpus": res.details["by_corpus"]}


BASELINES = [
    BaselineSpec(
        "lm-scoring", "lm_scoring", "scoring-*", score=score_scores_file,
        setup=Setup("ContraWSD", model="seq2seq"),
        description="a local X->en seq2seq model scores reference vs contrastive translations of every "
        "scoring suite (--model-path, {src} for one model per pair); accuracy as evaluate mucow --scores",
    ),
]
