"""XCOPA partial-input variants and a cheap cross-lingual baseline (the ``xcopa_partial_input`` check).

XCOPA's own baseline declarations live here, beside the builder; the generic baselines
(majority, multiple-choice cross-encoder, ...) are in ``benchsmith.validation.baselines``.

The XCOPA paper probes how much of the input a model needs with two partial-input
variants, available here as data transforms on example dicts:

* ``NoP``: the premise is hidden (empty string): only the question and the choices;
* ``NoQ``: the question is hidden (``None``): the model is not told whether the
  cause or the effect is asked for.

The cheap baseline is language-agnostic so that it can be trained on English COPA
(``en/train``, as the paper trains) and applied to every language without
translation: a logistic regression on four features of an item,

* the difference of character-trigram Jaccard overlap premise/choice1 vs premise/choice2,
* the log length ratio of the two choices,
* both multiplied by the question (+1 effect, -1 cause, 0 hidden),

so hiding the premise zeroes the overlap features and hiding the question zeroes
the interactions. ``MajorityBaseline`` predicts the most frequent training label.
Both are seeded and deterministic.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import numpy as np
from sklearn.linear_model import LogisticRegression

from benchsmith.errors import ConfigError, did_you_mean

Example = Mapping[str, Any]
QUESTION_NAMES = ("cause", "effect")


def no_premise(example: Example) -> dict[str, Any]:
    """NoP: the same item with the premise hidden."""
    return {**example, "premise": ""}


def no_question(example: Example) -> dict[str, Any]:
    """NoQ: the same item with the question hidden."""
    return {**example, "question": None}


VARIANTS: dict[str, Callable[[Example], dict[str, Any]]] = {
    "full": lambda ex: dict(ex),
    "NoP": no_premise,
    "NoQ": no_question,
}


def apply_variant(examples: Iterable[Example], variant: str) -> list[dict[str, Any]]:
    """The examples as ``variant`` (``full``, ``NoP``, ``NoQ``) shows them; an unknown name is a ConfigError."""
    if variant not in VARIANTS:
        raise ConfigError(f"unknown partial-input variant {variant!r}", hint=did_you_mean(variant, VARIANTS))
    return [VARIANTS[variant](ex) for ex in examples]


def _trigrams(text: str) -> set[str]:
    t = f"  {text.casefold()} "
    return {t[i:i + 3] for i in range(len(t) - 2)} if text else set()


def _overlap(a: str, b: str) -> float:
    ta, tb = _trigrams(a), _trigrams(b)
    return len(ta & tb) / len(ta | tb) if ta and tb else 0.0


def _question_sign(q: Any) -> float:
    if q is None:
        return 0.0
    name = QUESTION_NAMES[q] if isinstance(q, int) else q
    return 1.0 if name == "effect" else -1.0


def features(example: Example) -> list[float]:
    ov = _overlap(example["premise"], example["choice1"]) - _overlap(example["premise"], example["choice2"])
    ln = math.log((len(example["choice1"]) + 1) / (len(example["choice2"]) + 1))
    q = _question_sign(example["question"])
    return [ov, ln, q * ov, q * ln]


class MajorityBaseline:
    name = "majority"

    def fit(self, examples: Sequence[Example]) -> MajorityBaseline:
        self.label = Counter(int(ex["label"]) for ex in examples).most_common(1)[0][0]
        return self

    def predict(self, examples: Sequence[Example]) -> list[int]:
        return [self.label] * len(examples)


class FeatureBaseline:
    """Logistic regression over :func:`features` (see module docstring)."""

    name = "overlap-length-lr"

    def __init__(self, seed: int = 0) -> None:
        self.model = LogisticRegression(random_state=seed, C=1.0)

    def fit(self, examples: Sequence[Example]) -> FeatureBaseline:
        self.model.fit(np.array([features(ex) for ex in examples]), [int(ex["label"]) for ex in examples])
        return self

    def predict(self, examples: Sequence[Example]) -> list[int]:
        if not examples:
            return []
        return [int(p) for p in self.model.predict(np.array([features(ex) for ex in examples]))]


def accuracy(predictions: Sequence[int], examples: Sequence[Example]) -> float:
    return sum(int(p == int(ex["label"])) for p, ex in zip(predictions, examples)) / len(examples)


def evaluate(
    train: Sequence[Example], targets: Mapping[str, Sequence[Example]], variants: Iterable[str] = VARIANTS
) -> dict[str, dict[str, dict[str, float]]]:
    """``{baseline: {variant: {target: accuracy}}}``; each variant trains on the same variant of ``train``."""
    out: dict[str, dict[str, dict[str, float]]] = {}
    for variant in variants:
        tr = apply_variant(train, variant)
        for model in (MajorityBaseline(), FeatureBaseline()):
            model.fit(tr)
            row = out.setdefault(model.name, {}).setdefault(variant, {})
            for name, exs in targets.items():
                te = apply_variant(exs, variant)
                row[name] = round(accuracy(model.predict(te), te), 4)
    return out
