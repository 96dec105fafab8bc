"""The fine-tuned partial-input probe (issue 41): a negation-scope cue with the same words in both
options, which bag-of-words cannot see, fails the gate; the same data without the cue passes.
The packaged MiniLM with a small budget (policy fields), on one thread."""

from __future__ import annotations

import pytest
from model_helpers import one_thread  # noqa: F401 - autouse fixture
from validation_helpers import make_release, text_features

from benchsmith.validation.baselines.planted import planted_release, planted_rows
from benchsmith.validation.baselines.probe import FineTunedProbe
from benchsmith.validation.check import Status
from benchsmith.validation.checks.partial_input import PartialInputCheck

SMALL = {"finetuned_probe_epochs": 2, "finetuned_probe_cpu_max_train": 160, "finetuned_probe_cpu_max_test": 120}


def _planted(tmp_path, strength: float, **policy):
    return planted_release(tmp_path / f"s{strength}", strength, seed=0, n_train=170, n_test=130,
                           policy={**SMALL, **policy})


def test_a_cue_bag_of_words_cannot_see_fails_the_gate(tmp_path, monkeypatch):
    """On CPU the probe is in the gate at ``--baselines model`` (on a GPU at every level)."""
    from benchsmith.validation.runner import validate

    monkeypatch.setenv("BENCHSMITH_BASELINE_DEVICE", "cpu")
    v = validate(_planted(tmp_path, 1.0), baselines="model", builder=None, previous=None, write=False, cache=False)
    by = {r.check: r for r in v.results}
    bow, r = by["partial_input"], by["partial_input_finetuned"]
    assert bow.status is Status.PASS and abs(bow.metrics["gain"]) < 0.1  # identical unigrams and bigrams
    assert not v.passed
    assert r.status is Status.FAIL, r.summary
    assert r.metrics["gain"] >= 0.3 and r.metrics["p_value"] < 1e-6 and r.metrics["n"] >= 100
    assert "undeclared artifact" in r.summary and "trained on train, scored on test" in r.summary
    assert r.details["device"] == "cpu" and r.details["n_train"] == 160 and r.details["budget"]["max_train"] == 160


def test_on_cpu_the_default_level_says_how_to_run_the_probe(tmp_path, monkeypatch):
    from benchsmith.validation.runner import validate

    monkeypatch.setenv("BENCHSMITH_BASELINE_DEVICE", "cpu")
    v = validate(_planted(tmp_path, 1.0), builder=None, previous=None, write=False, cache=False)
    (r,) = [r for r in v.results if r.check == "partial_input_finetuned"]
    assert r.status is Status.SKIP and "--baselines model" in r.summary


def test_without_a_cue_the_fine_tuned_probe_does_not_fail(tmp_path):
    (r,) = FineTunedProbe(device="cpu").run(_planted(tmp_path, 0.0))
    assert r.status is not Status.FAIL, r.summary
    assert r.metrics["gain"] < 0.1


@pytest.mark.slow  # one sentence at a time learns slower than the paired options: the default budget
def test_a_hypothesis_only_cue_fails_the_classification_probe(tmp_path):
    # one option of each planted item as the "hypothesis", labelled by whether it carries the cue
    def rows(n, seed, prefix):
        items = planted_rows(n, 1.0, seed, prefix)
        return [{"id": r["id"], "text": r["choice1"], "label": 1 - r["label"]} for r in items]

    release = make_release(tmp_path, {"train": rows(500, 0, "tr"), "test": rows(300, 1, "te")}, text_features(),
                           {"task": "classification", "partial_input": ["text"]})
    (bow,) = PartialInputCheck().run(release)
    (r,) = FineTunedProbe(device="cpu").run(release)
    assert bow.status is not Status.FAIL and r.status is Status.FAIL, (bow.summary, r.summary)
    assert "text-only fine-tuned" in r.summary and r.metrics["gain"] >= 0.3


def test_the_probe_is_off_with_no_training_budget_and_says_why(tmp_path):
    (r,) = FineTunedProbe(device="cpu").run(_planted(tmp_path, 1.0, finetuned_probe_cpu_max_train=0))
    assert r.status is Status.SKIP and "0 training" in r.summary


def test_options_that_are_the_whole_input_are_not_probed(tmp_path):
    release = planted_release(tmp_path, 1.0, seed=0, n_train=170, n_test=130, policy={**SMALL, "context": []})
    (r,) = FineTunedProbe(device="cpu").run(release)
    assert r.status is Status.SKIP and "whole input" in r.summary


@pytest.mark.slow
@pytest.mark.parametrize("strength", [1.0, 0.7, 0.4])
def test_minilm_at_the_default_budget_finds_the_planted_cue_at_every_strength(tmp_path, strength):
    # the default CPU budget (500 training items, 3 epochs): benchmarks/planted_artifacts.py's table
    release = planted_release(tmp_path, strength, seed=1, n_train=500, n_test=300)
    (bow,) = PartialInputCheck().run(release)
    (r,) = FineTunedProbe(device="cpu").run(release)
    assert bow.status is not Status.FAIL and r.status is Status.FAIL, (bow.summary, r.summary)
