"""XCOPA's cheap partial-input baseline derives each variant's features from one pass over the
examples (``baseline._parts`` / ``_variant_features``): the same floats as ``features`` of
``apply_variant``, and ``evaluate`` the same scores as the per-variant computation it replaces."""

from __future__ import annotations

import random

import numpy as np
import pytest
from sklearn.dummy import DummyClassifier
from sklearn.linear_model import LogisticRegression

from benchsmith.builders.xcopa import baseline
from benchsmith.builders.xcopa.baseline import VARIANTS, apply_variant, evaluate, features
from benchsmith.errors import ConfigError, SchemaError

WORDS = ["water", "the", "man", "spout", "flowed", "toilet", "filled", "ตา", "แดง", "眼睛", "rain", ""]


def _examples(n: int, seed: int) -> list[dict]:
    rng = random.Random(seed)

    def text() -> str:
        return " ".join(rng.choice(WORDS) for _ in range(rng.randint(0, 6)))

    return [{"premise": text(), "choice1": text(), "choice2": text(), "idx": i, "label": rng.randint(0, 1),
             "question": rng.choice(["cause", "effect", 0, 1, None])} for i in range(n)]


def _evaluate_per_variant(train, targets, variants=VARIANTS):
    """``evaluate`` before the features were shared (commit aa8e707): features per variant."""
    out: dict = {}
    labels = [int(ex["label"]) for ex in train]
    for variant in variants:
        x = np.array([features(ex) for ex in apply_variant(train, variant)])
        models = (("majority", DummyClassifier()), ("overlap-length-lr", LogisticRegression(C=1.0)))
        for name, model in models:
            model.fit(x, labels)
            row = out.setdefault(name, {}).setdefault(variant, {})
            for target, exs in targets.items():
                predicted = model.predict(np.array([features(ex) for ex in apply_variant(exs, variant)]))
                row[target] = round(float(np.mean(predicted == [int(ex["label"]) for ex in exs])), 4)
    return out


def test_variant_features_are_the_features_of_the_variant():
    exs = _examples(300, 0)
    parts = [baseline._parts(ex, True) for ex in exs]
    for variant in VARIANTS:
        want = np.array([features(ex) for ex in apply_variant(exs, variant)])
        got = baseline._variant_features(parts, variant)
        assert got.tobytes() == want.tobytes()  # bit for bit, signed zeros included


def test_evaluate_scores_as_the_per_variant_computation():
    train, targets = _examples(200, 1), {"a": _examples(80, 2), "b": _examples(50, 3)}
    assert evaluate(train, targets) == _evaluate_per_variant(train, targets)
    assert evaluate(train, targets, ["NoQ"]) == _evaluate_per_variant(train, targets, ["NoQ"])


def test_evaluate_errors_as_before():
    bad = [{**_examples(1, 4)[0], "question": "why"}]
    with pytest.raises(SchemaError):
        evaluate(bad, {})
    no_question = evaluate(bad + _examples(5, 5), {}, ["NoQ"])  # the question hidden: never read
    assert no_question == {"majority": {"NoQ": {}}, "overlap-length-lr": {"NoQ": {}}}
    with pytest.raises(ConfigError):
        evaluate(_examples(4, 6), {}, ["NoX"])
