"""ComVE on the real upstream release (../shared/raw/comve): build, audit, baselines, scoring.

Both versions are built once for the module. Figures the release reports are
checked against counts taken straight from the raw CSV files with the ``csv``
module (an independent path from the loader); errata.tsv is re-derived from the
1.0.0 build, every count that findings.yaml states about upstream is re-derived
here, and so is every discrepancy that published.yaml names.
"""

from __future__ import annotations

import csv
import json
import re
from collections import Counter
from pathlib import Path

import datasets
import pytest
from comve_helpers import build

from benchsmith.builder import get_builder
from benchsmith.builders.comve import ComVE, stats
from benchsmith.builders.comve import baseline as baselines
from benchsmith.builders.comve import errata as comve_errata
from benchsmith.builders.comve.checks import comve_checks
from benchsmith.builders.comve.findings import read_findings
from benchsmith.erratum import read_errata_tsv
from benchsmith.scoring import evaluate
from benchsmith.validation.check import Status


def evaluate_file(release, subtask: str, path: Path) -> dict:
    """The one score of ``benchsmith evaluate comve PATH --subtask S --json``."""
    (score,) = evaluate(get_builder("comve"), release, path, options={"subtask": subtask})["scores"].values()
    return score

SPLIT_DIRS = {"train": "Training  Data", "validation": "Dev Data", "test": "Test Data"}
# BLEU of copying FalseSent as the reason, printed by the official taskC_scorer.py of the task
# repository (run outside this repository on the same files, to 10 decimals).
OFFICIAL_COPY_SOURCE_BLEU = {"train": 14.1094089179, "validation": 16.5345000825, "test": 17.2339922350,
                             "trial": 20.6672709930}


def _rows(path: Path, header: bool) -> list[list[str]]:
    with open(path, encoding="utf-8", newline="") as fh:
        rows = list(csv.reader(fh))
    return rows[1:] if header else rows


@pytest.fixture(scope="module")
def all_data(raw) -> Path:
    return raw / "comve" / "ALL data"


def _gold(all_data: Path, split: str, subtask: str) -> list[list[str]]:
    d = all_data / SPLIT_DIRS[split]
    name = {"train": "subtask{t}_answers_all.csv"}.get(split, "subtask{t}_gold_answers.csv")
    return _rows(d / name.format(t=subtask), header=False)


@pytest.fixture(scope="module")
def releases(real_comve):
    """1.0.0 and 1.1.0 from the real data, registered checksums verified (tests/conftest.py: shared read-only)."""
    return real_comve


@pytest.fixture(scope="module")
def results(releases):
    return {v: [res for check in comve_checks() for res in check.run(r)] for v, r in releases.items()}


def _metrics(results, check: str, config: str | None = None) -> list[dict]:
    return [r.metrics for r in results if r.check == check and (config is None or r.config == config)]


# ------------------------------------------------------------------ release


# published.yaml figures that differ from the release, each with a named discrepancy (re-derived below)
PAPER_DISCREPANCIES = {
    "subtask_a/test/label_counts", "subtask_b/validation/label_counts",
    "tuples/validation/average_length/reference_reason", "tuples/test/average_length/nonsensical_statement",
    "tuples/test/average_length/reference_reason",
    # within 0.01 but not the printed digits (table4-rounding)
    "tuples/train/average_length/sensical_statement", "tuples/validation/average_length/correct_reason",
    "tuples/test/average_length/confusing_reason",
    "tuples/train+validation+test/sentences",  # Section 6's 83,986: 95,973 non-empty of 95,976
    *(f"tuples/validation+test/top_words/{t}" for t in stats.SENTENCE_TYPES),
    "tuples/validation+test/train_repeats/nonsensical_statement", "tuples/validation+test/train_repeats/correct_reason",
}
# ... and those that differ from 1.1.0 on only, by the errata it applies
ERRATA_DISCREPANCIES = {"subtask_a/train/num_examples", "subtask_b/train/num_examples",
                        "subtask_a/train/label_counts", "subtask_b/train/label_counts",
                        "tuples/train/top_words/reference_reason"}


@pytest.fixture(scope="module")
def measured(releases):
    """``{version: {figure id: (agrees, measured, expectation)}}`` for every published.yaml figure."""
    out = {}
    for version, release in releases.items():
        out[version] = {e.key: (*e.check(release), e) for e in get_builder("comve", version).expectations()}
    return out


@pytest.mark.parametrize("version", ["1.0.0", "1.1.0"])
def test_counts_meet_the_published_expectations(releases, measured, version):
    release = releases[version]
    differ = {k for k, (ok, _, _) in measured[version].items() if not ok}
    assert differ == PAPER_DISCREPANCIES | (ERRATA_DISCREPANCIES if version == "1.1.0" else set())
    assert all(measured[version][k][2].discrepancy for k in differ)  # named: the fidelity check warns
    assert len(measured[version]) == 48
    for config in ("subtask_a", "subtask_b", "subtask_c", "tuples"):
        assert [release.num_examples(config, s) for s in ("validation", "test")] == [997, 1_000]
    counts = {c: (release.num_examples(c, "train"), release.num_examples(c, "trial")) for c in release.configs()}
    if version == "1.0.0":
        assert set(counts.values()) == {(10_000, 2_021)}
    else:  # errata train-degenerate-options (9 train items + trial 1998) and train-identical-statements (5)
        assert counts == {"subtask_a": (9_995, 2_021), "subtask_b": (9_991, 2_020), "subtask_c": (10_000, 2_021),
                          "tuples": (10_000, 2_021)}


def test_ids_order_and_labels_come_from_the_gold_files(releases, all_data):
    release = releases["1.0.0"]
    for split in SPLIT_DIRS:
        a = list(release.examples("subtask_a", split))
        gold_a = _gold(all_data, split, "A")
        assert [e["id"] for e in a] == [g[0] for g in gold_a]  # upstream ids, upstream order
        assert [str(e["label"]) for e in a] == [g[1] for g in gold_a]
        names = release.features("subtask_b")["label"].names
        assert [names[e["label"]] for e in release.examples("subtask_b", split)] == [g[1] for g in
                                                                                   _gold(all_data, split, "B")]
        assert [e["references"] for e in release.examples("subtask_c", split)] == [g[1:] for g in
                                                                                  _gold(all_data, split, "C")]


def test_release_loads_with_datasets(releases):
    ds = datasets.load_dataset(str(releases["1.1.0"].path), "subtask_a", split="validation")
    assert ds.num_rows == 997 and ds.features["label"].names == ["sent0", "sent1"]
    tuples = datasets.load_dataset(str(releases["1.1.0"].path), "tuples", split="test")
    row = tuples[0]
    assert row["correct_reason"] == row["references"][0]  # holds for all instances (below)


def test_tuples_join_is_consistent(releases):
    same = []
    for split in ("train", "validation", "test", "trial"):
        for t in releases["1.1.0"].examples("tuples", split):
            assert t["correct_reason"] == t["references"][0], t["id"]
            if t["nonsensical_statement"] == t["sensical_statement"]:
                same.append(f"{split}/{t['id']}")
    erratum = next(e for e in read_errata_tsv(ComVE.generated_errata_path()) if e.id == "train-identical-statements")
    ids = [r.item for r in erratum.rows]
    assert erratum.items == tuple(f"subtask_a/train/{i}" for i in ids)
    assert same == [f"train/{i}" for i in ids] == ["train/4075", "train/4121", "train/4313", "train/6398",
                                                   "train/7700"]  # exactly the erratum's items, kept in tuples
    a = {e["id"] for e in releases["1.1.0"].examples("subtask_a", "train")}
    assert not set(ids) & a


def test_subtask_statements_agree_but_for_one(releases):
    release, disagree = releases["1.0.0"], []
    for split in ("train", "validation", "test", "trial"):
        a = {e["id"]: (e["sent0"], e["sent1"])[e["label"]] for e in release.examples("subtask_a", split)}
        b = {e["id"]: e["false_sent"] for e in release.examples("subtask_b", split)}
        c = {e["id"]: e["false_sent"] for e in release.examples("subtask_c", split)}
        disagree += [f"{split}/{i}" for i in a if not a[i] == b[i] == c[i]]
    assert disagree == ["test/1698"]  # erratum test-1698-statement


# slow (a third real build, a third of the module's setup): the default run keeps the property in
# tests/test_comve_builder.py (TestComveBuilder.test_rebuild_is_byte_identical, the fixture's 1.1.0
# with its errata, compared byte for byte)
@pytest.mark.slow
def test_rebuild_is_byte_identical(raw, releases, tmp_path):
    again = build(raw, tmp_path / "reg", "1.1.0", checksums=True)
    first = releases["1.1.0"]
    for config in first.configs():
        for split in first.splits(config):
            assert again.split_info(config, split)["fingerprint"] == first.split_info(config, split)["fingerprint"]


# ------------------------------------------------------------------ errata


def test_errata_tsv_is_re_derived_from_the_raw_files(releases):
    rows = comve_errata.derive_rows(releases["1.0.0"])
    assert comve_errata.same_rows(ComVE.generated_errata_path(), rows)  # `benchsmith stage comve errata` says up to date
    assert [e["id"] for e in releases["1.1.0"].info.to_dict()["errata_applied"]] == list(comve_errata.ERRATA)
    assert [e["id"] for e in releases["1.0.0"].info.to_dict()["errata_pending"]] == list(comve_errata.ERRATA)


def test_errata_change_exactly_their_items(releases):
    old, new = releases["1.0.0"], releases["1.1.0"]
    a_old = {e["id"]: e for e in old.examples("subtask_a", "test")}
    a_new = {e["id"]: e for e in new.examples("subtask_a", "test")}
    assert a_old["1698"]["sent1"] == "he was swimming in Hawaii"
    assert a_new["1698"]["sent1"] == "he was swimming to Hawaii"
    assert [i for i in a_old if a_old[i] != a_new[i]] == ["1698"]
    c_new = {e["id"]: e for e in new.examples("subtask_c", "test")}
    assert c_new["1698"]["false_sent"] == a_new["1698"]["sent1"]  # now consistent across subtasks

    def fffd(release) -> Counter:
        n = Counter()
        for config in ("subtask_a", "subtask_b", "subtask_c"):
            for split in ("train", "test"):
                for e in release.examples(config, split):
                    text = json.dumps(e, ensure_ascii=False)
                    if "\ufffd" in text:
                        n[f"{split}/{e['id']}"] += text.count("\ufffd")
        return n

    assert set(fffd(old)) == {"train/892", "train/1878", "train/4920", "train/8109", "train/8152", "test/1070"}
    assert fffd(new) == Counter()
    b_old = {e["id"] for e in old.examples("subtask_b", "train")}
    b_new = {e["id"] for e in new.examples("subtask_b", "train")}
    degenerate = {e["id"] for e in old.examples("subtask_b", "train")
                  if len({o.strip().lower() for o in (e["option_a"], e["option_b"], e["option_c"]) if o.strip()}) < 3}
    assert b_old - b_new == degenerate == {"5618", "7238", "9941", "1948", "2275", "3936", "4346", "4542", "6960"}
    for split in ("validation", "test", "trial"):  # nothing else is degenerate in 1.1.0
        assert all(len({e["option_a"], e["option_b"], e["option_c"]} - {""}) == 3
                   for e in new.examples("subtask_b", split))
    assert {e["id"] for e in old.examples("subtask_b", "trial")} - {e["id"] for e in new.examples("subtask_b", "trial")} \
        == {"1998"}


# ------------------------------------------------------------------ upstream findings, re-derived


def test_finding_dev_csv_has_three_incomplete_extra_rows(all_data):
    dev = _rows(all_data / "dev.csv", header=True)
    data = _rows(all_data / "Dev Data" / "subtaskA_dev_data.csv", header=True)
    gold = dict(_gold(all_data, "validation", "A"))
    pairs = set()
    for i, s0, s1 in data:
        nons = (s0, s1)[int(gold[i])]
        pairs.add(((s0, s1)[1 - int(gold[i])], nons))
    extra = [(n + 2, r) for n, r in enumerate(dev) if (r[0], r[1]) not in pairs]  # +2: header, 1-based
    assert (len(dev), len(data)) == (1000, 997)
    assert [n for n, _ in extra] == [478, 920, 986]
    assert all(r[4] == "" and r[5] == "" for _, r in extra)  # no second confusing reason: no subtask B item
    assert {"dev.csv:478", "dev.csv:920", "dev.csv:986"} == set(_finding("dev-csv-extra-rows").items)


def _finding(fid: str):
    return next(f for f in read_findings(ComVE.data_path("findings.yaml")) if f.id == fid)


def _combined_vs_subtasks(all_data: Path, split: str) -> Counter:
    rows = _rows(all_data / {"train": "train.csv", "validation": "dev.csv", "test": "test.csv"}[split], header=True)
    comb = {(r[0], r[1]): r for r in rows}  # dev/test have no repeated statement pair and no ids
    d = all_data / SPLIT_DIRS[split]
    stem = "subtask{t}_data_all.csv" if split == "train" else f"subtask{{t}}_{'dev' if split == 'validation' else 'test'}_data.csv"
    a = _rows(d / stem.format(t="A"), True)
    b = {r[0]: r for r in _rows(d / stem.format(t="B"), True)}
    ga, gb = dict(_gold(all_data, split, "A")), dict(_gold(all_data, split, "B"))
    gc = {r[0]: r[1:] for r in _gold(all_data, split, "C")}
    c = Counter()
    for i, s0, s1 in a:
        lab = int(ga[i])
        # train.csv has no ids but row i is instance i (and repeats some statement pairs)
        row = rows[int(i)] if split == "train" else comb[((s0, s1)[1 - lab], (s0, s1)[lab])]
        k = "ABC".index(gb[i])
        conf = [o for j, o in enumerate(b[i][2:]) if j != k]
        c["rows"] += 1
        c["rr1_is_correct"] += row[2] == b[i][2 + k]
        c["confusing_equal"] += row[3:5] == conf
        c["rr2_is_cr2"] += row[5] == row[4]
        c["rr3_is_ref2"] += row[6] == gc[i][1]
        c["all_equal"] += row == [(s0, s1)[1 - lab], (s0, s1)[lab], b[i][2 + k], *conf, gc[i][1], gc[i][2]]
    return c


def test_finding_combined_csv_reason_columns(all_data):
    dev, test = _combined_vs_subtasks(all_data, "validation"), _combined_vs_subtasks(all_data, "test")
    assert (dev["rows"], dev["rr2_is_cr2"], dev["rr3_is_ref2"], dev["rr1_is_correct"]) == (997, 997, 991, 997)
    assert (test["rows"], test["rr2_is_cr2"], test["rr3_is_ref2"], test["confusing_equal"]) == (1000, 1000, 992, 998)
    train = _combined_vs_subtasks(all_data, "train")
    assert train["all_equal"] == train["rows"] == 10_000  # train.csv is the subtask files, field for field


def test_finding_trial_overlaps_train_and_has_empty_references(all_data):
    def nonsensical(d: Path, data: str, answers: str) -> tuple[list[str], list[tuple[str, str]]]:
        gold = dict(_rows(d / answers, False))
        rows = _rows(d / data, True)
        return [(r[1], r[2])[int(gold[r[0]])] for r in rows], [(r[1], r[2]) for r in rows]

    tr_ns, tr_pairs = nonsensical(all_data / "Training  Data", "subtaskA_data_all.csv", "subtaskA_answers_all.csv")
    ti_ns, ti_pairs = nonsensical(all_data / "Trial Data", "taskA_trial_data.csv", "taskA_trial_answer.csv")
    assert len(ti_ns) == 2021
    train_ns, train_pairs = set(tr_ns), set(tr_pairs)
    assert sum(s in train_ns for s in ti_ns) == 1219
    assert sum(p in train_pairs for p in ti_pairs) == 634
    refs = _rows(all_data / "Trial Data" / "taskC_trial_references.csv", False)
    assert sum(any(x == "" for x in r[1:]) for r in refs) == 27
    assert sum(x == "" for r in refs for x in r[1:]) == 33
    dup_pairs = Counter(tr_pairs)
    dup_ns = Counter(tr_ns)
    assert sum(v - 1 for v in dup_pairs.values()) == 8 and sum(v - 1 for v in dup_ns.values()) == 34


# ------------------------------------------------------------------ audit checks


def test_checks_are_json_and_cover_every_family(results):
    for rs in results.values():
        json.dumps([r.to_dict() for r in rs])
        assert {r.family for r in rs} == {"distribution", "leakage", "artifacts", "fidelity"}
    errata, *findings = [r for r in results["1.1.0"] if r.check == "comve_upstream_audit"]
    assert errata.status == Status.PASS and errata.metrics["pending"] == []  # all errata applied in 1.1.0
    assert len(findings) == 7 and {r.status for r in findings} == {Status.STAT}
    pending = [r for r in results["1.0.0"] if r.check == "comve_upstream_audit" and r.metrics.get("pending")]
    assert pending and pending[0].status == Status.WARN


def test_label_distributions_match_the_gold_files(results, all_data):
    (a,) = _metrics(results["1.0.0"], "comve_label_distribution", "subtask_a")
    (b,) = _metrics(results["1.0.0"], "comve_label_distribution", "subtask_b")
    for split in SPLIT_DIRS:
        ga = Counter(g[1] for g in _gold(all_data, split, "A"))
        gb = Counter(g[1] for g in _gold(all_data, split, "B"))
        assert a["counts"][split] == {"sent0": ga["0"], "sent1": ga["1"]}
        assert b["counts"][split] == {k: gb[k] for k in "ABC"}
    assert a["counts"]["train"] == {"sent0": 4979, "sent1": 5021}
    assert b["counts"]["test"] == {"A": 320, "B": 355, "C": 325}
    # 1.1.0 drops nine train items from subtask B (erratum): the counts fall by their gold labels
    (b11,) = _metrics(results["1.1.0"], "comve_label_distribution", "subtask_b")
    dropped = Counter(dict(_gold(all_data, "train", "B"))[i] for i in
                      ("5618", "7238", "9941", "1948", "2275", "3936", "4346", "4542", "6960"))
    assert {k: b["counts"]["train"][k] - b11["counts"]["train"][k] for k in "ABC"} == {k: dropped[k] for k in "ABC"}


def test_lengths_and_top_words(results, all_data):
    (lengths,) = _metrics(results["1.0.0"], "comve_sentence_lengths")
    # independent: mean whitespace tokens of the nonsensical statements (FalseSent of subtask C) over 3 splits
    texts = []
    for split, d in SPLIT_DIRS.items():
        stem = "subtaskC_data_all.csv" if split == "train" else f"subtaskC_{'dev' if split == 'validation' else 'test'}_data.csv"
        texts += [r[1] for r in _rows(all_data / d / stem, True)]
    assert lengths["overall"]["nonsensical_statement"] == round(sum(len(t.split()) for t in texts) / len(texts), 2)
    assert set(lengths["overall"]) == {"sensical_statement", "nonsensical_statement", "correct_reason",
                                       "confusing_reason", "reference_reason"}
    (top,) = _metrics(results["1.0.0"], "comve_top_words")
    words = {k: [w for w, _ in v] for k, v in top["top_words"].items()}
    assert all(len(v) == 5 for v in words.values())
    assert not ({"the", "a", "is", "to"} & {w for v in words.values() for w in v})  # uninformative words removed
    assert "not" in words["correct_reason"]  # negation is the reasons' signature word


def test_lengths_counted_on_arrow_are_pythons_split(releases):
    """stats.mean_length (Arrow kernels, stats.token_counts) is Table 4's definition in Python, to the bit."""
    from benchsmith.builders.comve import stats

    release = releases["1.1.0"]
    for splits in (("train",), ("validation", "test"), ("train", "validation", "test"), ("trial",)):
        for kind, fields in stats.SENTENCE_TYPES.items():
            texts = [t for s in splits for t in stats._texts(release, s, fields)]
            assert stats.mean_length(release, splits, kind) == sum(len(t.split()) for t in texts) / len(texts)


def test_train_repeats(results, releases):
    by_split = {r.details and r.summary.split(":")[0]: r for r in results["1.1.0"] if r.check == "comve_train_repeats"}
    train = releases["1.1.0"].table("tuples", "train")
    ns, cr = set(train.column("nonsensical_statement").to_pylist()), set(train.column("correct_reason").to_pylist())
    for split in ("validation", "test"):
        t = releases["1.1.0"].table("tuples", split)
        expected = sorted((i for i, n, c in zip(t.column("id").to_pylist(), t.column("nonsensical_statement").to_pylist(),
                                                t.column("correct_reason").to_pylist()) if n in ns or c in cr), key=int)
        res = by_split[split]
        assert res.metrics["exact_either"] == len(expected) > 0
        assert res.details["exact"]["either"] == expected[:20]
        assert res.status == Status.WARN
    assert by_split["validation"].metrics["exact_either"] == 10 and by_split["test"].metrics["exact_either"] == 6
    # whole statement pairs (case-folded), as findings.yaml's finding eval-items-in-train lists them
    finding = _finding("eval-items-in-train").items
    pairs = [f"{s}/{i}" for s, key in (("dev", "validation"), ("test", "test"))
             for i in by_split[key].details["normalised"]["statement_pair"]]
    assert sorted(pairs) == sorted(finding)
    # trial is not held out: its repeats are measured (a stat), never a verdict
    assert by_split["trial"].status == Status.STAT and by_split["trial"].metrics["exact_either"] > 1000


def test_baselines_use_the_official_bleu(results, releases, tmp_path):
    copy = {m["split"]: m for m in _metrics(results["1.0.0"], "comve_baselines", "subtask_c")}
    assert "train" not in copy  # not scored at validate time (checks.COPY_SOURCE_SKIPS)
    for split, official in OFFICIAL_COPY_SOURCE_BLEU.items():
        if split != "train":
            assert copy[split]["bleu"] == pytest.approx(official, abs=1e-9)
    neg = {m["split"]: m for m in _metrics(results["1.1.0"], "comve_baselines", "subtask_b")}
    assert neg["test"]["accuracy"] > 1 / 3 + 0.1  # the cue is productive: a WARN in the report
    # the same heuristic written out as a submission scores the same through `evaluate`
    release = releases["1.1.0"]
    t = release.table("subtask_b", "test")
    opts = zip(*(t.column(c).to_pylist() for c in ("option_a", "option_b", "option_c")))
    pred = tmp_path / "neg.csv"
    pred.write_text("".join(f"{i},{baselines.negation_choice(list(o))[0]}\n"
                            for i, o in zip(t.column("id").to_pylist(), opts)), encoding="utf-8")
    assert evaluate_file(release, "b", pred)["score"] == pytest.approx(neg["test"]["accuracy"])


def _top(texts: list[str], k: int = 5) -> list[list]:
    """Table 5's measure, written out: lowercased whitespace tokens without the caption's words."""
    c = Counter(w for t in texts for w in t.lower().split() if w not in {"a", "an", "the", "to", "is", "are", "be"})
    total = sum(c.values())
    return [[w, 100 * n / total] for w, n in sorted(c.items(), key=lambda x: (-x[1], x[0]))[:k]]


def _close(a: list[list], b: list[list], tol: float = 0.0005) -> bool:
    return [w for w, _ in a] == [w for w, _ in b] and all(abs(x - y) <= tol for (_, x), (_, y) in zip(a, b))


def test_paper_discrepancies_are_what_they_say(measured, all_data):
    m = {k: v[1] for k, v in measured["1.0.0"].items()}
    pub = {k: v[2].published for k, v in measured["1.0.0"].items()}
    # Table 2, test: the gold file has 508 zeros (first statement nonsensical), the paper 492
    assert Counter(g[1] for g in _gold(all_data, "test", "A")) == {"0": 508, "1": 492}
    assert m["subtask_a/test/label_counts"] == {"sent0": 508, "sent1": 492}
    # Table 3, dev: the paper's row sums to 1,007; the gold file has 326 C
    assert sum(pub["subtask_b/validation/label_counts"].values()) == 1007
    assert Counter(g[1] for g in _gold(all_data, "validation", "B"))["C"] == 326
    # Table 4: dev/test reference lengths are those of dev.csv/test.csv's shifted reason columns
    for split, name, paper, ours in (("validation", "dev.csv", 7.921, 8.383), ("test", "test.csv", 8.058, 8.493)):
        rows = _rows(all_data / name, header=True)
        refs = [t for r in rows for t in (r[2], r[5], r[6]) if t.strip()]
        assert round(sum(len(t.split()) for t in refs) / len(refs), 3) == paper
        assert round(m[f"tuples/{split}/average_length/reference_reason"], 3) == ours
        assert abs(paper - pub[f"tuples/{split}/average_length/reference_reason"]) < 0.005
    test_ns = [r[1] for r in _rows(all_data / "Test Data" / "subtaskC_test_data.csv", True)]
    test_csv_ns = [r[1] for r in _rows(all_data / "test.csv", True)]
    for texts in (test_ns, test_csv_ns):
        assert round(sum(len(t.split()) for t in texts) / len(texts), 3) == 7.335
    assert round(sum(len(re.findall(r"[A-Za-z0-9']+", t)) for t in test_ns) / len(test_ns), 3) == 7.355
    # Table 5, dev+test: dev.csv + test.csv give the paper's statements, correct and confusing reasons
    rows = _rows(all_data / "dev.csv", True) + _rows(all_data / "test.csv", True)
    columns = {"sensical_statement": (0,), "nonsensical_statement": (1,), "correct_reason": (2,),
               "confusing_reason": (3, 4), "reference_reason": (2, 5, 6)}
    for kind, cols in columns.items():
        key = f"tuples/validation+test/top_words/{kind}"
        from_csv = _top([r[c] for r in rows for c in cols])
        assert _close(from_csv, pub[key]) == (kind != "reference_reason"), kind
        assert not _close(m[key], pub[key]), kind
    ref_words = [w for w, _ in m["tuples/validation+test/top_words/reference_reason"]]
    assert ref_words == [w for w, _ in pub["tuples/validation+test/top_words/reference_reason"]]
    assert [round(x, 3) for _, x in m["tuples/validation+test/top_words/reference_reason"]] == [
        3.823, 2.391, 2.195, 1.489, 1.279]
    # Table 5(a) is reproduced to the last printed digit on 1.0.0 ...
    for kind in stats.SENTENCE_TYPES:
        key = f"tuples/train/top_words/{kind}"
        assert [[w, round(x, 3)] for w, x in m[key]] == [[w, x] for w, x in pub[key]], kind
    # ... and the repetition counts are not (verbatim: 6 + 4 and 8 + 4; folded: 19 and 21)
    assert (m["tuples/validation+test/train_repeats/nonsensical_statement"],
            m["tuples/validation+test/train_repeats/correct_reason"]) == (10, 12)


def test_errata_discrepancies_are_what_they_say(measured):
    new = {k: v[1] for k, v in measured["1.1.0"].items()}
    assert (new["subtask_a/train/num_examples"], new["subtask_b/train/num_examples"]) == (9_995, 9_991)
    assert new["subtask_a/train/label_counts"] == {"sent0": 4_976, "sent1": 5_019}
    assert new["subtask_b/train/label_counts"] == {"A": 3_190, "B": 3_359, "C": 3_442}
    top = new["tuples/train/top_words/reference_reason"]
    assert top[0][0] == "not" and round(top[0][1], 5) == 5.16451 and round(top[0][1], 3) == 5.165
    for key in ERRATA_DISCREPANCIES:
        assert measured["1.0.0"][key][0], key  # 1.0.0 (upstream as released) has the paper's figure


def test_copy_source_bleu_is_the_papers(measured):
    for version in ("1.0.0", "1.1.0"):
        ok, value, exp = measured[version]["subtask_c/test/copy_source_bleu"]
        assert ok and exp.published == 17.23 and value == pytest.approx(OFFICIAL_COPY_SOURCE_BLEU["test"], abs=1e-6)


def test_card_carries_measured_sections(releases):
    card = (releases["1.1.0"].path / "README.md").read_text(encoding="utf-8")
    d = stats.label_distribution(releases["1.1.0"], "subtask_a", "train")
    assert "Label distributions" in card and f"| subtask_a | train | sent0: {d['sent0']:,}, sent1: {d['sent1']:,} |" in card
    assert "dev-csv-extra-rows" in card


# ------------------------------------------------------------------ scoring on the real test split


def test_evaluate_gold_and_copy_source_on_test(releases, all_data, tmp_path):
    release = releases["1.0.0"]
    gold_a = tmp_path / "a.csv"
    gold_a.write_text((all_data / "Test Data" / "subtaskA_gold_answers.csv").read_text(encoding="utf-8"),
                      encoding="utf-8")
    assert evaluate_file(release, "a", gold_a)["score"] == 1.0
    # the task's own subtask C data file, minus its header, is a valid copy-source submission
    rows = _rows(all_data / "Test Data" / "subtaskC_test_data.csv", True)
    copy = tmp_path / "c.csv"
    with open(copy, "w", encoding="utf-8", newline="") as fh:
        csv.writer(fh).writerows(rows)
    res = evaluate_file(release, "c", copy)
    assert res["score"] == pytest.approx(OFFICIAL_COPY_SOURCE_BLEU["test"], abs=1e-9)
    assert res["sys_len"] > 0 and res["signature"].startswith("nrefs:3|")


def test_evaluate_cli_on_real_release(releases, all_data, tmp_path, capsys):
    from benchsmith.cli import main

    pred = tmp_path / "b.csv"
    pred.write_text((all_data / "Test Data" / "subtaskB_gold_answers.csv").read_text(encoding="utf-8"),
                    encoding="utf-8")
    code = main(["evaluate", "comve", "--allow-unvalidated", "--subtask", "b", str(pred), "--split", "test",
                 "--release", str(releases["1.1.0"].path), "--json"])
    out = json.loads(capsys.readouterr().out)
    assert code == 0 and out["scores"]["accuracy"]["score"] == 1.0 and out["scores"]["accuracy"]["total"] == 1000
