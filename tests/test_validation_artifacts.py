"""Artifact audit (cues, partial-input baseline), cheap and model baselines, fidelity.

The MiniLM baseline without signal scores 60 rows: enough that its gain over chance stays well
under the 0.15 asserted across seeds.
"""

from __future__ import annotations

import pytest
from validation_helpers import MC_META, balanced_text_rows, make_release, mc_features, mc_rows, text_features

from benchsmith.builder import Expectation
from benchsmith.validation.baselines.cheap import CheapBaselines
from benchsmith.validation.check import Status
from benchsmith.validation.checks.artifacts import CueCheck, cue_table
from benchsmith.validation.checks.partial_input import PartialInputCheck
from benchsmith.validation.fidelity import FidelityCheck


def test_cue_statistics_match_niven_and_kao_definitions():
    # "not" occurs in one option of examples 0, 1, 2 (correct in 0 and 1) and in both options of 3
    options = [["it is not red", "it is red"], ["a b", "not a b"], ["not x", "y"], ["not p", "not q"]]
    labels = [0, 1, 1, 0]
    n, rows = cue_table(options, labels)
    assert n == 4
    cue = {r["cue"]: r for r in rows}["not"]
    assert cue["applicability"] == 3
    assert cue["productivity"] == pytest.approx(2 / 3)
    assert cue["coverage"] == pytest.approx(3 / 4)
    assert cue["chance"] == pytest.approx(0.5)
    assert "is" not in {r["cue"] for r in rows}  # in both options wherever it occurs: never applicable


def test_cue_check_names_the_planted_cue(tmp_path):
    fair = make_release(tmp_path / "a", {"train": mc_rows(300, "t", 3)}, mc_features(), MC_META)
    (r,) = CueCheck().run(fair)
    assert r.status is Status.PASS
    cued = make_release(tmp_path / "b", {"train": mc_rows(300, "t", 3, cue="never")}, mc_features(), MC_META)
    (r,) = CueCheck().run(cued)
    assert r.status is Status.WARN and "'never'" in r.summary
    top = r.details["splits"]["train"]["top"][0]
    assert top["cue"] == "never" and top["productivity"] == 1.0 and top["coverage"] == 1.0
    assert r.figures[0]["kind"] == "barh"


def test_cue_check_skips_configs_without_choices(tmp_path):
    rel = make_release(tmp_path, {"train": balanced_text_rows(20, "t")}, text_features())
    assert [r.status for r in CueCheck().run(rel)] == [Status.SKIP]


def test_partial_input_baseline_fails_the_gate_above_the_builders_threshold(tmp_path):
    cued = make_release(tmp_path / "a", {"train": mc_rows(200, "t", 4, cue="never")}, mc_features(), MC_META)
    (r,) = PartialInputCheck().run(cued)
    assert r.status is Status.FAIL
    assert r.metrics["accuracy"] > 0.95 and r.metrics["chance"] == 0.5 and r.metrics["max_gain"] == 0.1
    # the builder may tolerate more
    lax = make_release(tmp_path / "b", {"train": mc_rows(200, "t", 4, cue="never")}, mc_features(),
                       {**MC_META, "partial_input_max_gain": 0.6})
    (r,) = PartialInputCheck().run(lax)
    assert r.status is Status.WARN and r.metrics["max_gain"] == 0.6


def test_partial_input_baseline_passes_without_cues(tmp_path):
    fair = make_release(tmp_path, {"train": mc_rows(200, "t", 5)}, mc_features(), MC_META)
    (r,) = PartialInputCheck().run(fair)
    assert r.status is Status.PASS
    assert abs(r.metrics["gain"]) < 0.12


def test_options_only_is_not_gated_when_the_options_are_the_whole_input(tmp_path):
    meta = {k: v for k, v in MC_META.items() if k != "context"}
    rel = make_release(tmp_path, {"train": mc_rows(200, "t", 4, cue="never")}, mc_features(), meta)
    (r,) = PartialInputCheck().run(rel)
    assert r.status is Status.WARN and r.metrics["max_gain"] is None and "not gated" in r.summary


def test_hypothesis_only_baseline_for_classification(tmp_path):
    rows = balanced_text_rows(200, "h")
    for row in rows:
        row["text"] += " nobody" if row["label"] else " somebody"
    rel = make_release(tmp_path, {"train": rows}, text_features(), {"partial_input": ["text"]})
    (r,) = PartialInputCheck().run(rel)
    assert r.status is Status.FAIL and r.metrics["accuracy"] > 0.95 and r.metrics["chance"] == 0.5


def test_cheap_baselines_numbers(tmp_path):
    train = [dict(r, label=0) for r in balanced_text_rows(30, "tr")]
    test = balanced_text_rows(10, "te")  # alternating labels: majority (0) is right on half
    rel = make_release(tmp_path / "c", {"train": train, "test": test}, text_features())
    (r,) = CheapBaselines().run(rel)
    assert r.details["accuracy"]["test"]["majority"] == 0.5
    assert r.details["accuracy"]["train"]["majority"] == 1.0
    mc = make_release(tmp_path / "m", {"train": mc_rows(100, "t", 6, longer=True)}, mc_features(), MC_META)
    (r,) = CheapBaselines().run(mc)
    assert r.details["accuracy"]["train"]["longest_option"] == 1.0
    assert r.details["accuracy"]["train"]["shortest_option"] == 0.0


def test_fidelity_shows_both_numbers_and_fails_on_mismatch(tmp_path):
    rel = make_release(tmp_path, {"train": balanced_text_rows(20, "t")}, text_features())
    good = Expectation.count("default", "train", 20, "Paper 2020, Table 1")
    bad = Expectation.count("default", "train", 21, "Paper 2020, Table 1")
    skipped = Expectation.count("default", "test", 5, "Paper 2020, Table 1")
    ratio = Expectation("default/train/yes_share", 0.5, "Paper 2020", measure=lambda r: 0.5, tolerance=0.01)
    results = FidelityCheck([good, bad, skipped, ratio]).run(rel)
    assert [r.status for r in results] == [Status.PASS, Status.FAIL, Status.SKIP, Status.PASS]
    assert results[1].summary == "default/train/num_examples: published 21, measured 20 (Paper 2020, Table 1)"
    assert results[1].metrics == {"published": 21, "measured": 20, "difference": -1}
    assert results[0].config == "default"


def test_model_baseline_with_minilm(tmp_path):
    pytest.importorskip("torch")
    from benchsmith.validation.baselines.model import ModelBaselines

    rows = []
    food = ["bread", "soup", "apple", "rice", "cheese", "pasta", "salad", "cake"]
    cars = ["engine", "wheel", "brake", "tyre", "gearbox", "bumper", "clutch", "exhaust"]
    names = ["Ana", "Ben", "Chen", "Dara", "Eli", "Femi", "Gus"]
    for i in range(60):  # 60 distinct examples: the correct option is always about food
        who = names[i % 7]
        right, wrong = f"{who} ate the {food[i % 8]}", f"{who} fixed the {cars[(i * 3 + i // 8) % 8]}"
        label = i % 2
        opts = [wrong, right] if label else [right, wrong]
        rows.append({"id": f"m{i}", "premise": "she was hungry", "choice1": opts[0], "choice2": opts[1],
                     "label": label})
    rel = make_release(tmp_path, {"train": rows}, mc_features(), MC_META)
    (r,) = ModelBaselines().run(rel)
    assert r.status is Status.FAIL  # the options alone give it away
    assert r.metrics["accuracy"] > 0.9 and r.details["device"] in ("cpu", "cuda")
    assert "similarity_accuracy" in r.metrics


def test_model_baseline_passes_when_options_carry_no_signal(tmp_path):
    pytest.importorskip("torch")
    from benchsmith.validation.baselines.model import ModelBaselines

    rel = make_release(tmp_path, {"train": mc_rows(60, "t", 8)}, mc_features(), MC_META)
    (r,) = ModelBaselines().run(rel)
    assert r.status is not Status.FAIL and abs(r.metrics["gain"]) < 0.15
    assert r.metrics["n"] == 60 and r.metrics["max_gain"] == 0.1


class _BagOfWordsEncoder:
    """A stand-in for MiniLM: normalised word-count vectors (cosine = word overlap)."""

    path, device = "bag-of-words", "cpu"

    def __init__(self) -> None:
        self.vocab: dict[str, int] = {}

    def encode(self, texts, description="encode"):
        import numpy as np

        for t in texts:
            for w in t.split():
                self.vocab.setdefault(w, len(self.vocab))
        out = np.zeros((len(texts), 512))
        for i, t in enumerate(texts):
            for w in t.split():
                out[i, self.vocab[w]] += 1
        return out / np.maximum(np.linalg.norm(out, axis=1, keepdims=True), 1e-9)


def test_model_similarity_pairs_each_context_with_its_own_options(tmp_path, monkeypatch):
    # mc_examples drops an example whose options repeat an earlier one's; the contexts
    # must be dropped with it, or every later example is compared with its neighbour's premise
    from benchsmith.validation.baselines import model

    monkeypatch.setattr(model, "load_encoder", lambda path: _BagOfWordsEncoder())
    rows = []
    for i in range(30):
        label = i % 2
        right, wrong = f"right{i} thing", f"wrong{i} thing"
        opts = [wrong, right] if label else [right, wrong]
        rows.append({"id": f"m{i}", "premise": f"about right{i}", "choice1": opts[0], "choice2": opts[1],
                     "label": label})
        if i == 0:  # an exact repeat of the first example's options, under another premise
            rows.append({**rows[0], "id": "m0-copy", "premise": "something else"})
    rel = make_release(tmp_path, {"train": rows}, mc_features(), MC_META)
    (r,) = model.ModelBaselines().run(rel)
    assert r.metrics["n"] == 30
    assert r.metrics["similarity_accuracy"] == 1.0


# ----------------------------------------------------------------- scaling paths: same answers as the definitions


def _in_memory_accuracy(view):
    """The earlier partial-input baseline, kept as the reference: an exact CountVectorizer
    vocabulary (min_df=2) and one in-memory SGD fit per fold."""
    import numpy as np
    from sklearn.feature_extraction.text import CountVectorizer

    from benchsmith.validation.checks.partial_input import mc_examples, option_level_cv
    from benchsmith.validation.dataview import tokens

    options, labels, _ = mc_examples(view)
    texts = [o for opts in options for o in opts]
    vec = CountVectorizer(tokenizer=lambda t: [w.casefold() for w in tokens(t)], lowercase=False, token_pattern=None,
                          ngram_range=(1, 2), binary=True, min_df=2 if len(texts) >= 50 else 1)
    n_options = np.asarray([len(o) for o in options])
    pred = option_level_cv(vec.fit_transform(texts).tocsr(), np.repeat(np.arange(len(options)), n_options), labels,
                           n_options)
    return float(np.mean(pred == labels))


@pytest.mark.parametrize(("rows", "status"), [
    ({"cue": "never"}, Status.FAIL), ({}, Status.PASS), ({"longer": True}, None), ({"cue": "often"}, Status.FAIL),
])
def test_partial_input_out_of_core_agrees_with_the_in_memory_fit(tmp_path, rows, status):
    from benchsmith.validation.checks.partial_input import agreement_tolerance
    from benchsmith.validation.dataview import ConfigView

    data = {"train": mc_rows(300, "t", 4, **rows), "test": mc_rows(100, "s", 9, **rows)}
    rel = make_release(tmp_path, data, mc_features(), MC_META)
    (r,) = PartialInputCheck().run(rel)
    reference = _in_memory_accuracy(ConfigView(rel, "default"))
    assert abs(r.metrics["accuracy"] - reference) <= agreement_tolerance(reference, r.metrics["n"])
    if status is not None:
        assert r.status is status


@pytest.mark.parametrize("seed", [0, 3])
def test_hypothesis_only_out_of_core_agrees_with_the_in_memory_fit(tmp_path, seed):
    import numpy as np
    from sklearn.feature_extraction.text import CountVectorizer

    from benchsmith.validation.checks.partial_input import (
        agreement_tolerance,
        classification_cv,
        partial_input_examples,
    )
    from benchsmith.validation.dataview import ConfigView, tokens

    rows = balanced_text_rows(400, "h", seed)
    for row in rows[:200]:  # half the examples carry a cue word
        row["text"] += " nobody" if row["label"] else " somebody"
    rel = make_release(tmp_path, {"train": rows}, text_features(), {"partial_input": ["text"]})
    (r,) = PartialInputCheck().run(rel)
    _, texts, labels = partial_input_examples(ConfigView(rel, "default"))
    vec = CountVectorizer(tokenizer=lambda t: [w.casefold() for w in tokens(t)], lowercase=False, token_pattern=None,
                          ngram_range=(1, 2), binary=True, min_df=2)
    reference = float(np.mean(classification_cv(vec.fit_transform(texts).tocsr(), labels) == labels))
    assert abs(r.metrics["accuracy"] - reference) <= agreement_tolerance(reference, len(labels))
    assert r.status is Status.FAIL  # 0.70-0.80 against chance 0.5


def test_distinct_examples_are_exact_under_forced_hash_collisions(tmp_path, monkeypatch):
    import numpy as np

    from benchsmith.validation.checks.partial_input import distinct_mc_rows, mc_examples
    from benchsmith.validation.dataview import ConfigView

    train, test = mc_rows(60, "t", 1), mc_rows(30, "s", 2)
    test[:5] = [{**r, "id": f"copy-{i}", "choice1": r["choice1"].upper() + "  "} for i, r in enumerate(train[:5])]
    train[7]["label"] = -1  # unlabeled: left out
    view = ConfigView(make_release(tmp_path, {"train": train, "test": test}, mc_features(), MC_META), "default")
    options, labels, _ = mc_examples(view)
    for collide in (False, True):
        if collide:
            monkeypatch.setattr("benchsmith.validation.checks.partial_input._key_hash", lambda key: len(key[0]) % 2)
        kept = distinct_mc_rows(view)
        got = [view.options(s)[r] for s, rows in kept for r in rows.tolist()]
        assert got == options and len(got) == 60 + 30 - 5 - 1
        assert np.concatenate([view.label_array(s, "label")[r] for s, r in kept]).tolist() == labels.tolist()


def test_cue_check_counts_on_token_columns_as_cue_table_does(tmp_path):
    import random

    from benchsmith.validation.checks.artifacts import cue_table, top_cues
    from benchsmith.validation.dataview import ConfigView

    rng = random.Random(2)
    rows = mc_rows(400, "t", 3, cue="never")
    for r in rows[::7]:
        r["choice2"] = r["choice1"]  # a cue in every option is not applicable
    rows[3]["label"] = -1
    rel = make_release(tmp_path, {"train": rows, "test": mc_rows(80, "s", rng.randint(0, 99))}, mc_features(), MC_META)
    (r,) = CueCheck().run(rel)
    view = ConfigView(rel, "default")
    for split in ("train", "test"):
        n, table = cue_table(view.options(split), view.labeled(split, "label"))
        expected = top_cues(table, max(3, int(0.01 * n)))
        got = r.details["splits"][split]
        assert got["n"] == n and got["cues"] == len(table)
        assert [c["cue"] for c in got["top"]] == [c["cue"] for c in expected]
        for c, e in zip(got["top"], expected):
            assert c["applicability"] == e["applicability"] and c["productive"] == e["productive"]
            assert c["productivity"] == round(e["productivity"], 4) and c["chance"] == round(e["chance"], 4)
