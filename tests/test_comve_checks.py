"""ComVE's checks, measures, findings and published figures on the fixture.

Descriptive results are ``stat`` and never a verdict; every result that can warn is shown
here both warning and passing. The real-data figures are in test_comve_real.py.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from comve_helpers import GOOD, build, sources_with

from benchsmith.builders.comve import ComVE
from benchsmith.builders.comve.checks import (
    Baselines,
    LabelDistribution,
    SentenceLengths,
    TopWords,
    TrainRepeats,
    UpstreamAudit,
    comve_checks,
)
from benchsmith.builders.comve.findings import Finding, read_findings
from benchsmith.errors import ParseError
from benchsmith.expectation import bind, read_published_yaml
from benchsmith.validation.check import Status
from benchsmith.validation.fidelity import FidelityCheck


@pytest.fixture(scope="module")
def releases(tmp_path_factory):
    reg = tmp_path_factory.mktemp("comve-checks") / "reg"
    return {v: build(GOOD, reg, v) for v in ("1.0.0", "1.1.0")}


def _by(results, check: str) -> list:
    return [r for r in results if r.check == check]


# ------------------------------------------------------------------ stat results


@pytest.mark.parametrize("check", [LabelDistribution(), SentenceLengths(), TopWords()])
def test_descriptive_results_are_stats(releases, check):
    results = check.run(releases["1.1.0"])
    assert results and all(r.status == Status.STAT for r in results)


def test_label_distribution_and_lengths(releases):
    (a, b) = LabelDistribution().run(releases["1.1.0"])
    assert a.metrics["counts"]["test"] == {"sent0": 0, "sent1": 3}
    assert b.metrics["counts"]["trial"] == {"A": 1, "B": 0, "C": 0}  # trial 2 left out (erratum)
    (lengths,) = SentenceLengths().run(releases["1.1.0"])
    # dev sensical statements: 8 + 8 + 6 whitespace tokens
    assert lengths.metrics["per_split"]["validation"]["sensical_statement"] == round(22 / 3, 2)


def test_word_counts_of_several_splits_are_one_count_over_them_in_turn(releases):
    """The per-split memo summed (stats._word_counts) is the plain count: same counts, same key order."""
    from collections import Counter

    from benchsmith.builders.comve import stats

    release = releases["1.1.0"]
    for splits in (("train",), ("validation", "test"), ("train", "validation", "test")):
        for kind in stats.SENTENCE_TYPES:
            plain = Counter(w for s in splits for t in stats._texts(release, s, stats.SENTENCE_TYPES[kind])
                            for w in stats.words(t) if w not in stats.UNINFORMATIVE)
            assert list(stats.word_counts(release, splits, kind).items()) == list(plain.items())
    assert sum(stats.word_counts(release, ("train",), "correct_reason").values()) > 0


def test_top_words_use_the_papers_uninformative_words(releases):
    (top,) = TopWords().run(releases["1.1.0"])
    assert top.details["uninformative_words"] == ["a", "an", "are", "be", "is", "the", "to"]
    assert set(top.metrics["shares_percent"]) == {"train", "validation+test"}


def test_every_result_of_every_check_is_json(releases):
    import json

    for release in releases.values():
        results = [r for c in comve_checks() for r in c.run(release)]
        json.dumps([r.to_dict() for r in results])
        assert {r.check for r in results} == {"comve_label_distribution", "comve_sentence_lengths", "comve_top_words",
                                              "comve_train_repeats", "comve_baselines", "comve_upstream_audit"}


# ------------------------------------------------------------------ checks: both outcomes


def test_train_repeats_pass_without_repeats_and_warn_with_one(releases, tmp_path):
    results = {r.summary.split(":")[0]: r for r in TrainRepeats().run(releases["1.1.0"])}
    assert results["validation"].status == results["test"].status == Status.PASS
    assert results["trial"].status == Status.STAT  # trial is not held out: measured, never a verdict
    # test 275's correct reason (option C) becomes train 3's correct reason, verbatim
    data = (GOOD / "comve" / "ALL data" / "Test Data" / "subtaskB_test_data.csv").read_text(encoding="utf-8")
    sources = sources_with(tmp_path, {"Test Data/subtaskB_test_data.csv":
                                      data.replace("Lemons are not a pizza topping.", "A human has no stinger")})
    repeated = {r.summary.split(":")[0]: r for r in TrainRepeats().run(build(sources, tmp_path / "reg"))}
    assert repeated["test"].status == Status.WARN and repeated["test"].metrics["exact_correct_reason"] == 1
    assert repeated["test"].details["exact"]["correct_reason"] == ["275"]
    assert repeated["validation"].status == Status.PASS


def test_baselines_copy_source_is_a_stat_and_the_negation_cue_warns_above_the_margin(releases):
    release = releases["1.1.0"]
    results = Baselines().run(release)
    copy = [r for r in results if r.config == "subtask_c"]
    assert len(copy) == 3 and all(r.status == Status.STAT for r in copy)
    # no train: COPY_SOURCE_SKIPS
    assert {r.metrics["split"] for r in copy} == {"validation", "test", "trial"}
    strict = [r for r in Baselines(cue_margin=-1.0).run(release) if r.config == "subtask_b"]
    lenient = [r for r in Baselines(cue_margin=1.0).run(release) if r.config == "subtask_b"]
    assert len(strict) == len(lenient) == 4
    assert {r.status for r in strict} == {Status.WARN} and {r.status for r in lenient} == {Status.PASS}
    # fixture test split: the negated option is the gold one for 452 and 275, not for 1175 (none negated: A)
    test = next(r for r in lenient if r.metrics["split"] == "test")
    assert test.metrics["accuracy"] == pytest.approx(1.0)


@pytest.mark.parametrize(("text", "negated"), [
    ("He is not here.", True), ("I can\u2019t go", True), ("NEVER again", True), ("nobody came", True),
    ("without a doubt", True), ("I know the north", False), ("a snow day", False), ("isn", False),
    ("", False),
])
def test_negation(text, negated):
    """A negation word or a token ending in "n't" (any case, typographic apostrophe too); words that
    merely contain "no" are not negations."""
    from benchsmith.builders.comve import baseline

    assert baseline.has_negation(text) is negated


def test_upstream_audit_warns_on_pending_errata_and_passes_when_all_are_applied(releases):
    old, new = UpstreamAudit().run(releases["1.0.0"]), UpstreamAudit().run(releases["1.1.0"])
    assert old[0].status == Status.WARN and old[0].metrics["applied"] == []
    assert new[0].status == Status.PASS and new[0].metrics["pending"] == []
    findings = read_findings(ComVE.data_path("findings.yaml"))
    assert [r.metrics["finding"] for r in new[1:]] == [f.id for f in findings]
    assert all(r.status == Status.STAT for r in new[1:])


# ------------------------------------------------------------------ findings.yaml


def test_findings_file_reads():
    findings = read_findings(ComVE.data_path("findings.yaml"))
    assert [f.id for f in findings] == ["dev-csv-extra-rows", "combined-csv-reason-columns",
                                        "combined-csv-older-wording", "eval-items-in-train", "trial-overlaps-train",
                                        "trial-empty-references", "train-duplicates"]
    assert all(isinstance(f, Finding) and f.what and f.evidence and f.decision for f in findings)
    assert "\n" not in findings[0].evidence  # folded to one line


@pytest.mark.parametrize(("text", "line", "needle"), [
    ("findings:\n  - id: a\n    what: w\n    evidence: e\n    decison: d\n", 2, "unknown key 'decison'"),
    ("findings:\n  - id: a\n    what: w\n    evidence: e\n", 2, "lacks decision"),
    ("findings:\n  - {id: a, what: w, evidence: e, decision: d}\n  - {id: a, what: w, evidence: e, decision: d}\n",
     3, "appears twice"),
    ("findngs: []\n", 1, "exactly one key"),
    ("findings:\n  - id: a\n\twhat: w\n", 3, "not valid YAML"),
])
def test_findings_errors_name_the_file_and_line(tmp_path: Path, text, line, needle):
    p = tmp_path / "findings.yaml"
    p.write_text(text, encoding="utf-8")
    with pytest.raises(ParseError) as exc:
        read_findings(p)
    assert exc.value.path == p and exc.value.line == line and needle in str(exc.value)


# ------------------------------------------------------------------ published.yaml and the measures


@pytest.mark.parametrize("version", ["1.0.0", "1.1.0"])
def test_published_yaml_binds_every_figure(version):
    exps = ComVE(version).expectations()
    assert len(exps) == 48 and len({e.key for e in exps}) == 48
    assert all(e.reference.startswith("Wang et al. (2020)") for e in exps)


FIXTURE_FIGURES = """\
figures:
  - {id: subtask_a/test/label_counts, value: {sent1: 3}, source: fixture, measure: label_counts,
     config: subtask_a, split: test, args: {field: label}}
  - {id: tuples/validation/average_length/sensical_statement, value: 7.3333, source: fixture,
     measure: average_length, config: tuples, split: validation, args: {type: sensical_statement}, tolerance: 0.0001}
  - id: tuples/trial/top_words/correct_reason
    value: [["bigger", 11.1111], ["eats", 11.1111], ["elephant", 11.1111], ["fridge", 11.1111], ["much", 11.1111]]
    source: fixture
    measure: top_words
    config: tuples
    split: trial
    args: {type: correct_reason}
    tolerance: 0.0001
  - {id: tuples/validation+test/train_repeats/correct_reason, value: 0, source: fixture, measure: train_repeats,
     config: tuples, args: {field: correct_reason, splits: [validation, test]}}
  - {id: subtask_c/validation/copy_source_bleu, value: 0.0, source: fixture, measure: copy_source_bleu,
     config: subtask_c, split: validation}
  - {id: tuples/validation/num_examples, value: 1000, source: "dev.csv rows", measure: count, config: tuples,
     split: validation}
"""


def test_measures_on_the_fixture_and_an_unnamed_mismatch_fails(releases, tmp_path):
    p = tmp_path / "published.yaml"
    p.write_text(FIXTURE_FIGURES, encoding="utf-8")
    exps = bind(read_published_yaml(p), ComVE().measures(), "1.1.0")
    release = releases["1.1.0"]
    checked = {e.key: e.check(release) for e in exps}
    # trial correct reasons: "an elephant is much bigger than a fridge", "no one eats stones": 9 informative
    # tokens ('an', 'is', 'a' are uninformative), each 1/9 = 11.11%, ties alphabetical
    assert all(ok for k, (ok, _) in checked.items() if k != "tuples/validation/num_examples"), checked
    assert checked["tuples/validation/num_examples"] == (False, 3)
    results = {r.details["key"]: r for r in FidelityCheck(exps).run(release)}
    bad = results["tuples/validation/num_examples"]
    assert bad.status == Status.FAIL and "published 1,000" in bad.summary and "measured 3" in bad.summary
    assert results["subtask_a/test/label_counts"].status == Status.PASS
