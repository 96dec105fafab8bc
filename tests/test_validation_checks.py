"""Generic checks: for each, a fixture release that trips it and one that passes."""

from __future__ import annotations

import pytest
from validation_helpers import (
    MC_META,
    balanced_text_rows,
    make_release,
    mc_features,
    mc_rows,
    rewrite_split,
    text_features,
)

from benchsmith.validation.check import Status
from benchsmith.validation.checks.distribution import LabelBalanceCheck, LengthCheck
from benchsmith.validation.checks.integrity import (
    EmptyFieldsCheck,
    FingerprintCheck,
    SchemaCheck,
    UniqueIdsCheck,
)
from benchsmith.validation.checks.leakage import ExactDuplicateCheck, NearDuplicateCheck


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


def test_schema_fails_when_the_cards_features_differ_from_the_manifests(clean):
    card = clean.path / "README.md"
    card.write_text(card.read_text().replace("dtype: string", "dtype: large_string", 1))
    (r,) = SchemaCheck().run(clean)
    assert r.status is Status.FAIL and "the card's features differ from the manifest's" in r.summary


def test_schema_fails_when_the_cards_features_do_not_parse(clean):
    card = clean.path / "README.md"
    card.write_text(card.read_text().replace("dtype: string", "dtype: no_such_type", 1))
    (r,) = SchemaCheck().run(clean)
    assert r.status is Status.FAIL and "the card's features for 'default' do not parse" in r.summary


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


def test_duplicate_checks_share_each_splits_content_up_to_a_bound(tmp_path, monkeypatch):
    """exact_duplicates keeps each split's normalised content for near_duplicates (one Check.group),
    which then normalises nothing; past CONTENT_MEMO_BYTES nothing is kept; the results are the same."""
    from benchsmith.validation.checks import leakage
    from benchsmith.validation.dataview import STORE, ConfigView

    rel = _near_dup_release(tmp_path)
    view = ConfigView(rel, "default")
    fresh = {s: [t for b in leakage._normalised_batches(view, s) for t in b] for s in view.splits}
    calls = []
    real = leakage._normalised_batches
    monkeypatch.setattr(leakage, "_normalised_batches", lambda v, s: calls.append(s) or real(v, s))
    STORE.clear()
    (exact,) = ExactDuplicateCheck().run(rel)
    assert sorted(calls) == ["test", "train"]
    assert {s: STORE.peek(leakage._content_key(view, s)).texts for s in view.splits} == fresh
    (near,) = NearDuplicateCheck().run(rel)
    assert sorted(calls) == ["test", "train"] and near.status is Status.FAIL  # nothing normalised again
    monkeypatch.setattr(leakage, "CONTENT_MEMO_BYTES", 1000)  # less than a split: streamed each time
    STORE.clear()
    assert ExactDuplicateCheck().run(rel)[0].to_dict() == exact.to_dict()
    assert NearDuplicateCheck().run(rel)[0].to_dict() == near.to_dict()
    assert STORE.peek(leakage._content_key(view, "train")) is None and len(calls) == 6


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


@pytest.mark.parametrize(
    ("text", "expected"),
    [  # scripts without spaces: a character with its combining marks is a token
        ("แมวนั่งบนเสื่อ", ["แ", "ม", "ว", "นั่", "ง", "บ", "น", "เ", "สื่", "อ"]),  # Thai
        ("ຂ້ອຍກິນເຂົ້າ", ["ຂ້", "ອ", "ຍ", "ກິ", "ນ", "ເ", "ຂົ້", "າ"]),  # Lao
        ("ខ្ញុំញ៉ាំបាយ", ["ខ្", "ញុំ", "ញ៉ាំ", "បា", "យ"]),  # Khmer
        ("ထမင်းစား", ["ထ", "မ", "င်း", "စား"]),  # Myanmar
        ("ภาษาไทย 2 ok.", ["ภ", "า", "ษ", "า", "ไ", "ท", "ย", "2", "ok", "."]),
    ],
)
def test_tokens_count_scripts_without_spaces_per_character(text, expected):
    from benchsmith.validation.dataview import tokens

    assert tokens(text) == expected


def test_tokens_of_spaced_scripts_are_unchanged_by_the_per_character_scripts():
    import re

    from benchsmith.nlp.scripts import mark_class, tokens

    cjk = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af"
    marks = mark_class()
    before = re.compile(rf"[{cjk}]|(?:[^\W{cjk}]|[{marks}])+|[^\w\s{marks}]")  # the tokeniser until 1.x
    texts = ["The man turned on the faucet, so water flowed (didn't it?).",
             "Mees keeras kraani lahti - vesi voolas!", "नमस्ते दुनिया।", "Вода потекла: 12,5 литра",
             "அவன் வீட்டுக்குச் சென்றான்.", "我喜欢猫。"]
    for t in texts:
        assert tokens(t) == before.findall(t)
    thai = "ผู้ชายเปิดก๊อกน้ำ น้ำจึงไหลออกมา"  # two space-separated runs: 2 "tokens" before
    assert len(before.findall(thai)) == 2 and len(tokens(thai)) == 24

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
    assert got["known"].status == Status.WARN and "trial items" in got["known"].details["discrepancy"]
    assert got["absent"].status == Status.SKIP and "absent here" in got["absent"].summary


# ----------------------------------------------------------------- scaling paths: same answers as the definitions


def _random_texts(rng, n, words):
    return [" ".join(rng.choice(words) for _ in range(rng.randint(3, 12))) for _ in range(n)]


def _near_dup_splits(seed: int = 0):
    """Three splits of random sentences with planted near duplicates (Jaccard >= 0.9), pairs just
    under the threshold, exact repeats, short and empty texts."""
    import random

    rng = random.Random(seed)
    words = [f"{a}{b}" for a in "bcdfgk" for b in ("a", "e", "i", "ou")] + ["éé", "漢字", "🙂"]
    texts = {s: _random_texts(rng, n, words) for s, n in (("train", 120), ("validation", 40), ("test", 60))}
    for i in range(8):  # near duplicates of train in later splits, and of validation in test
        texts["test"][i] = texts["train"][i] + " " + rng.choice(words)
        texts["validation"][i] = texts["train"][20 + i] + "!"
        texts["test"][10 + i] = texts["validation"][10 + i].upper()  # case-folded: an exact repeat
    long_ = "ba be bi bou ca ce ci cou da de di dou"
    texts["train"][50], texts["test"][30] = long_, " ".join(long_.split()[:9])  # Jaccard 0.706: under 0.8
    texts["train"][51], texts["test"][31], texts["validation"][31] = "", "", "ab"  # empty and short
    return {s: [{"id": f"{s}-{i}", "text": t, "label": i % 2} for i, t in enumerate(v)] for s, v in texts.items()}


def _brute_force_pairs(splits, threshold, n=5):
    from benchsmith.validation.checks.leakage import content, shingles

    order = list(splits)
    sets = {s: [shingles(t, n) for t in content(*splits[s])] for s in order}
    out = set()
    for a in range(len(order)):
        for b in range(a + 1, len(order)):
            for i, x in enumerate(sets[order[a]]):
                for j, y in enumerate(sets[order[b]]):
                    jac = len(x & y) / len(x | y)
                    if jac >= threshold:
                        out.add((order[a], i, order[b], j, jac))
    return out


@pytest.mark.parametrize("threshold", [0.8, 0.5])
def test_near_duplicates_are_exactly_the_brute_force_all_pairs_jaccard(tmp_path, threshold):
    from benchsmith.validation.dataview import ConfigView

    rel = make_release(tmp_path, _near_dup_splits(), text_features())
    view = ConfigView(rel, "default")
    found = NearDuplicateCheck().pairs(view, threshold)
    expected = _brute_force_pairs({s: (view, s) for s in view.splits}, threshold)
    assert found == expected
    assert len(expected) >= 24  # the planted pairs at least, and none under the threshold
    assert any(p[:4] == ("train", 50, "test", 30) for p in found) == (threshold <= 0.706)
    (r,) = NearDuplicateCheck(threshold=threshold).run(rel)
    assert r.metrics["pairs"] == len(expected)
    shown = sorted(expected, key=lambda p: (-round(p[4], 4), str([f"{p[0]}-{p[1]}", f"{p[2]}-{p[3]}"])))[:10]
    assert [tuple(p["ids"]) for p in r.details["pairs"]] == [(f"{a}-{i}", f"{b}-{j}") for a, i, b, j, _ in shown]


def test_minhash_signatures_are_datasketchs_over_the_documented_shingle_hash():
    import random

    from datasketch import MinHash

    from benchsmith.validation.checks.leakage import shingle_hash, shingles, signatures

    rng = random.Random(3)
    texts = ["", "a", "abcd", "abcde", "我喜欢猫", "🙂🙂🙂🙂🙂🙂"] + _random_texts(rng, 60, ["ab", "cde", "ü", "漢"])
    for n in (3, 5):
        sig = signatures(texts, n)
        for text, row in zip(texts, sig):
            m = MinHash(num_perm=128, seed=1, hashfunc=lambda s, n=n: shingle_hash(s, n))
            m.update_batch(list(shingles(text, n)))
            assert (m.hashvalues == row).all(), text


def test_lsh_bands_are_datasketchs_optimum():
    """The default threshold bands as the LSH_WEIGHTS comment says; another threshold bands otherwise."""
    from benchsmith.validation.checks import leakage

    assert leakage.lsh_bands(0.8, 128) == (16, 8)
    assert leakage.lsh_bands(0.5, 128) != leakage.lsh_bands(0.8, 128)


def test_exact_duplicates_are_exact_under_forced_hash_collisions(tmp_path, monkeypatch):
    splits = _near_dup_splits(1)
    splits["train"][5] = {**splits["train"][5], "text": splits["train"][4]["text"]}  # a repeat within train
    rel = make_release(tmp_path, splits, text_features())
    (plain,) = ExactDuplicateCheck().run(rel)
    monkeypatch.setattr("benchsmith.validation.checks.leakage._content_hash", lambda text: len(text) % 3)
    (collided,) = ExactDuplicateCheck().run(rel)
    assert collided.to_dict() == plain.to_dict()
    assert plain.status is Status.FAIL and plain.details["within"] == {"train": [["train-4", "train-5"]]}
    assert plain.metrics["across_split_pairs"] == 9  # test repeats validation 10-17 (case folded), and ""


def test_token_columns_count_what_tokens_counts(tmp_path):
    import datasets

    from benchsmith.validation.dataview import VOCAB, ConfigView, as_text, tokens

    feats = datasets.Features({"id": datasets.Value("string"), "text": datasets.Value("string"),
                               "items": datasets.List(datasets.Value("string"))})
    rows = [{"id": "a", "text": "The cat, 12 dogs!", "items": ["我喜欢猫", "x y"]},
            {"id": "b", "text": "அவன் வீட்டுக்குச் சென்றான்.", "items": []},
            {"id": "c", "text": "", "items": None}]
    rel = make_release(tmp_path, {"train": rows}, feats, {"label": None})
    view = ConfigView(rel, "default")
    for field in ("text", "items"):
        col = view.token_column("train", field)
        assert col.lengths().tolist() == [len(tokens(as_text(r[field]))) for r in rows]
        folded = [[t.casefold() for t in tokens(as_text(r[field]))] for r in rows]
        got = [[VOCAB.names[i] for i in col.ids[col.row_offsets[k]:col.row_offsets[k + 1]]] for k in range(3)]
        assert got == folded


def test_length_rules_on_token_lengths_match_the_string_version():
    import random

    import numpy as np

    from benchsmith.validation.checks.distribution import length_rule_arrays, length_rule_scores
    from benchsmith.validation.dataview import tokens

    rng = random.Random(5)
    options = [[" ".join("w" for _ in range(rng.randint(0, 4))) for _ in range(rng.randint(0, 4))] for _ in range(300)]
    labels = [rng.randint(-1, 4) for _ in options]
    scores, chance = length_rule_scores(options, labels)
    counts = np.array([len(o) for o in options])
    lens = np.array([len(tokens(o)) for opts in options for o in opts])
    arrays, chance2 = length_rule_arrays(lens, np.concatenate([[0], np.cumsum(counts)]), np.array(labels))
    assert chance2.tolist() == chance and {k: v.tolist() for k, v in arrays.items()} == scores
    usable = [(o, y) for o, y in zip(options, labels) if 0 <= y < len(o) and len(o) >= 2]
    for (opts, y), s in zip(usable, scores["longest"]):  # the definition, one example at a time
        lengths = [len(tokens(o)) for o in opts]
        tied = [k for k, n in enumerate(lengths) if n == max(lengths)]
        assert s == (1 / len(tied) if y in tied else 0.0)
