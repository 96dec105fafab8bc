"""Generic checks: for each, a fixture release that trips it and one that passes."""

from __future__ import annotations

import pytest
from benchsmith.validation.check import Status
from benchsmith.validation.checks.distribution import LabelBalanceCheck, LengthCheck
from benchsmith.validation.checks.integrity import (
    EmptyFieldsCheck,
    FingerprintCheck,
    SchemaCheck,
    UniqueIdsCheck,
)
from benchsmith.validation.checks.leakage import ExactDuplicateCheck, NearDuplicateCheck
from validation_helpers import (
    MC_META,
    balanced_text_rows,
    make_release,
    mc_features,
    mc_rows,
    rewrite_split,
    text_features,
)


def statuses(results):
    return [r.status for r in results]


@pytest.fixture
def clean(tmp_path):
    return make_release(
        tmp_path, {"train": balanced_text_rows(60, "tr", 1), "test": balanced_text_rows(40, "te", 2)}, text_features()
    )


# ----------------------------------------------------------------- integrity


def test_schema_passes_on_a_fresh_release(clean):
    (r,) = SchemaCheck().run(clean)
    assert r.status is Status.PASS and r.config == "default"


def test_schema_fails_when_the_card_disagrees_with_the_manifest(clean):
    card = clean.path / "README.md"
    text = card.read_text()
    assert "num_examples: 40" in text
    card.write_text(text.replace("num_examples: 40", "num_examples: 41"))
    (r,) = SchemaCheck().run(clean)
    assert r.status is Status.FAIL
    assert "card says test has 41 examples; the manifest says 40" in r.summary


def test_schema_fails_when_a_shard_has_another_schema(clean):
    import pyarrow as pa
    import pyarrow.parquet as pq

    path = clean.files("default", "test")[0]
    t = pq.read_table(path)
    pq.write_table(t.set_column(2, "label", pa.array([str(v) for v in t.column("label").to_pylist()])), path)
    (r,) = SchemaCheck().run(clean)
    assert r.status is Status.FAIL
    assert "column 'label' is string; the card declares int64" in r.summary


def test_schema_reports_a_garbled_shard_a_short_split_and_a_broken_card(clean):
    # these used to crash the check (or hide the second split's count behind the first's problem)
    clean.files("default", "train")[0].write_bytes(b"not parquet")
    rewrite_split(clean, "default", "test", lambda rows: rows[:-1])
    card = clean.path / "README.md"
    card.write_text(card.read_text().replace("dataset_info:", "dataset_info: [", 1))
    (r,) = SchemaCheck().run(clean)
    assert r.status is Status.FAIL
    problems = r.details["problems"]
    assert problems[0].startswith("data/default/train-00000-of-00001.parquet is not a readable parquet file")
    assert "test has 39 rows in its files; the manifest says 40" in problems
    assert problems[-1].startswith("README.md's YAML front matter does not parse")


def test_fingerprint_trips_on_edited_data_and_passes_otherwise(clean):
    assert statuses(FingerprintCheck().run(clean)) == [Status.PASS]
    rewrite_split(clean, "default", "train", lambda rows: [{**rows[0], "text": "edited"}] + rows[1:])
    (r,) = FingerprintCheck().run(clean)
    assert r.status is Status.FAIL and "train" in r.summary


def test_unique_ids_fails_on_duplicate_and_empty_ids(clean):
    assert statuses(UniqueIdsCheck().run(clean)) == [Status.PASS]
    rewrite_split(clean, "default", "train", lambda rows: rows + [dict(rows[0])] + [{**rows[1], "id": " "}])
    (r,) = UniqueIdsCheck().run(clean)
    assert r.status is Status.FAIL
    assert r.metrics["duplicate_ids"] == 1 and r.metrics["empty_ids"] == 1
    assert r.details["duplicates"] == {"train": ["tr-0"]}


def test_unique_ids_warns_on_an_id_shared_by_two_splits(tmp_path):
    rel = make_release(
        tmp_path, {"train": balanced_text_rows(10, "x", 1), "test": balanced_text_rows(5, "x", 2)}, text_features()
    )
    (r,) = UniqueIdsCheck().run(rel)
    assert r.status is Status.WARN and r.metrics["ids_in_two_splits"] == 5


def test_empty_fields_trip_and_declared_exception(tmp_path):
    rows = balanced_text_rows(20, "tr")
    rows[3]["text"] = "  \t"
    rel = make_release(tmp_path / "a", {"train": rows}, text_features())
    (r,) = EmptyFieldsCheck().run(rel)
    assert r.status is Status.FAIL and r.details["examples"] == {"text": ["tr-3"]}
    rel = make_release(tmp_path / "b", {"train": rows}, text_features(), {"allow_empty": ["text"]})
    (r,) = EmptyFieldsCheck().run(rel)
    assert r.status is Status.PASS and r.details["allowed_empty"] == {"text": {"train": 1}}


# ----------------------------------------------------------------- distribution


def test_label_balance_passes_uniform_and_flags_skew(tmp_path, clean):
    (r,) = LabelBalanceCheck().run(clean)
    assert r.status is Status.PASS
    skewed = [dict(row, label=0 if i % 10 else 1) for i, row in enumerate(balanced_text_rows(100, "s"))]
    rel = make_release(tmp_path / "w", {"train": skewed}, text_features())
    (r,) = LabelBalanceCheck().run(rel)
    assert r.status is Status.WARN
    assert r.details["splits"]["train"]["counts"] == {"no": 90, "yes": 10}
    assert r.details["splits"]["train"]["p_value"] < 1e-10
    assert r.figures and r.figures[0]["series"] == {"train": [90, 10]}
    strict = make_release(tmp_path / "f", {"train": skewed}, text_features(), {"balanced_labels": True})
    assert statuses(LabelBalanceCheck().run(strict)) == [Status.FAIL]


def test_length_as_label_cue_in_classification(tmp_path, clean):
    (r,) = LengthCheck().run(clean)
    assert r.status is Status.PASS
    assert r.details["lengths"]["text"]["train"]["n"] == 60
    assert r.figures[0]["kind"] == "hist"
    rows = balanced_text_rows(200, "c")
    for row in rows:
        if row["label"] == 1:
            row["text"] += " and some more words here"
    rel = make_release(tmp_path / "c", {"train": rows}, text_features())
    (r,) = LengthCheck().run(rel)
    assert r.status is Status.WARN and "text length differs by label" in r.summary
    # a ClassLabel that is an attribute, not a label (MuCoW's domain): declared with "label": None
    rel = make_release(tmp_path / "d", {"train": rows}, text_features(), {"label": None})
    (r,) = LengthCheck().run(rel)
    assert r.status is Status.PASS and "no label to test length against" in r.summary


def test_length_as_label_cue_in_multiple_choice(tmp_path):
    fair = make_release(tmp_path / "a", {"train": mc_rows(200, "t", 1)}, mc_features(), MC_META)
    (r,) = LengthCheck().run(fair)
    assert r.status is Status.PASS
    cued = make_release(tmp_path / "b", {"train": mc_rows(200, "t", 1, longer=True)}, mc_features(), MC_META)
    (r,) = LengthCheck().run(cued)
    assert r.status is Status.WARN
    longest = next(c for c in r.details["label_cues"] if c["rule"] == "pick the longest option")
    assert longest["accuracy"] == 1.0 and longest["chance"] == 0.5


def test_lengths_of_a_config_whose_splits_are_all_empty(tmp_path):
    # an empty split is a legal build (a schema-only file); it used to crash the histogram
    empty = make_release(tmp_path, {"train": [], "test": []}, mc_features(), MC_META)
    (r,) = LengthCheck().run(empty)
    assert r.status is Status.PASS and r.figures == []


# ----------------------------------------------------------------- leakage


def test_exact_duplicates_across_splits_fail_within_warn(tmp_path, clean):
    assert statuses(ExactDuplicateCheck().run(clean)) == [Status.PASS]
    train = balanced_text_rows(30, "tr", 1)
    test = balanced_text_rows(10, "te", 2)
    test[4] = {**train[7], "id": "te-4", "label": 1 - train[7]["label"]}  # same text, other id and label
    rel = make_release(tmp_path / "x", {"train": train, "test": test}, text_features())
    (r,) = ExactDuplicateCheck().run(rel)
    assert r.status is Status.FAIL and r.details["across"][0]["ids"] == ["tr-7", "te-4"]
    train2 = train + [{**train[0], "id": "tr-dup", "text": train[0]["text"].upper() + "  "}]
    rel = make_release(tmp_path / "w", {"train": train2, "test": balanced_text_rows(10, "te", 2)}, text_features())
    (r,) = ExactDuplicateCheck().run(rel)
    assert r.status is Status.WARN and r.details["within"] == {"train": [["tr-0", "tr-dup"]]}


def _near_dup_release(tmp_path, metadata=None):
    train = balanced_text_rows(200, "tr", 1)
    test = balanced_text_rows(100, "te", 2)
    for i in range(10):  # 10% of test: a train sentence with a final "!"
        test[i] = {"id": f"te-{i}", "text": train[i]["text"] + "!", "label": 0}
    return make_release(tmp_path, {"train": train, "test": test}, text_features(), metadata)


def test_near_duplicates_found_with_lsh_and_threshold_is_configurable(tmp_path, clean):
    assert statuses(NearDuplicateCheck().run(clean)) == [Status.PASS]
    rel = _near_dup_release(tmp_path / "a")
    (r,) = NearDuplicateCheck().run(rel)
    assert r.status is Status.FAIL  # 10% > default max 5%
    assert r.details["fractions"] == {"train->test": 0.1}
    assert {tuple(p["ids"]) for p in r.details["pairs"]} == {(f"tr-{i}", f"te-{i}") for i in range(10)}
    assert all(0.8 <= p["jaccard"] < 1 for p in r.details["pairs"])
    # a stricter threshold (CLI option) finds none; a looser max fraction (metadata) only warns
    assert statuses(NearDuplicateCheck(threshold=0.99).run(rel)) == [Status.PASS]
    rel = _near_dup_release(tmp_path / "b", {"near_duplicate_max_fraction": 0.2, "near_duplicate_threshold": 0.5})
    (r,) = NearDuplicateCheck().run(rel)
    assert r.status is Status.WARN and r.metrics["threshold"] == 0.5


def test_leakage_tolerances_and_exempt_splits(tmp_path):
    train = balanced_text_rows(50, "tr", 1)
    trial = [{**r, "id": f"trial-{i}"} for i, r in enumerate(train[:20])]  # drawn from train, like ComVE's trial
    test = balanced_text_rows(50, "te", 2)
    test[0] = {**train[0], "id": "te-0"}  # 2% of test repeats train
    splits = {"train": train, "trial": trial, "test": test}
    rel = make_release(tmp_path / "a", splits, text_features())
    (exact,) = ExactDuplicateCheck().run(rel)
    assert exact.status is Status.FAIL and exact.details["repeating_earlier_splits"] == {"trial": 20, "test": 1}
    (near,) = NearDuplicateCheck().run(rel)
    assert near.status is Status.FAIL and near.details["fractions"]["train->trial"] == 1.0
    meta = {"leakage_exempt_splits": ["trial"], "exact_duplicate_max_fraction": 0.05}
    rel = make_release(tmp_path / "b", splits, text_features(), meta)
    (exact,) = ExactDuplicateCheck().run(rel)
    assert exact.status is Status.WARN and exact.details["repeating_earlier_splits"] == {"test": 1}
    (near,) = NearDuplicateCheck().run(rel)
    assert near.status is Status.WARN and near.details["fractions"] == {"train->test": 0.02}
    assert near.details["exempt_splits"] == ["trial"]


def test_tokens_keep_combining_marks_and_split_cjk():
    from benchsmith.validation.dataview import tokens

    assert tokens("அவன் வீட்டுக்குச் சென்றான்.") == ["அவன்", "வீட்டுக்குச்", "சென்றான்", "."]
    assert tokens("我喜欢猫") == ["我", "喜", "欢", "猫"]
    assert tokens("The cat, 12 dogs!") == ["The", "cat", ",", "12", "dogs", "!"]


def test_fidelity_passes_warns_on_a_named_discrepancy_fails_otherwise_and_skips_what_it_needs(tmp_path):
    from benchsmith.expectation import Expectation
    from benchsmith.validation.fidelity import FidelityCheck

    release = make_release(tmp_path, {"train": balanced_text_rows(12, "tr")}, text_features())

    def n(rel):
        return rel.num_examples("default", "train")

    figures = [
        Expectation("ok", 12, "Table 1", n),
        Expectation("off", 13, "Table 1", n),
        Expectation("known", 13, "Table 1", n, discrepancy="the paper counts the trial items too"),
        Expectation("absent", 196246, "Table 5", n, needs="the train split, absent here"),
    ]
    got = {r.details["key"]: r for r in FidelityCheck(figures).run(release)}
    assert got["ok"].status == Status.PASS and got["ok"].metrics == {"published": 12, "measured": 12, "difference": 0}
    assert got["off"].status == Status.FAIL
    assert got["known"].status == Status.WARN and "trial items" in got["known"].summary
    assert got["absent"].status == Status.SKIP and "absent here" in got["absent"].summary
