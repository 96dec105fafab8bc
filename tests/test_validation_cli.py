"""`benchsmith validate` / `benchsmith audit`, the report files, the card, the gate and the runner."""

from __future__ import annotations

import dataclasses
import json

import pytest
from conftest import one_json, run_cli
from toy_builder import FIXTURES, ToyBuilder
from validation_helpers import (
    MC_META,
    balanced_text_rows,
    make_builder,
    make_release,
    mc_features,
    mc_rows,
    rewrite_split,
    text_features,
)

from benchsmith.builder import Expectation, Policy, register, unregister
from benchsmith.errors import ConfigError, GateError
from benchsmith.release import Release
from benchsmith.validation import gate
from benchsmith.validation.check import Check, Status
from benchsmith.validation.runner import validate


class AuditToy(ToyBuilder):
    """The core's toy, whose templated sentences ("sentence number 2 about a cat" vs
    "... 22 ...", Jaccard 0.81) are near duplicates at the default 0.8: it declares 0.9."""

    def configs(self):
        return [dataclasses.replace(c, policy=Policy(near_duplicate_threshold=0.9)) for c in super().configs()]


@pytest.fixture
def toy():
    register(AuditToy)
    yield
    unregister("toy")


def run(capsys, *argv: str) -> tuple[int, str, str]:
    return run_cli(capsys, "--quiet", *argv)


@pytest.fixture
def mc_release(tmp_path):
    return make_release(
        tmp_path / "reg", {"train": mc_rows(120, "tr", 1), "test": mc_rows(60, "te", 2)}, mc_features(), MC_META,
        name="mcfx",
    )


# ----------------------------------------------------------------- validate


def test_validate_json_writes_reports_and_card(capsys, mc_release):
    code, out, err = run(capsys, "validate", str(mc_release.path), "--json")
    assert code == 0, err
    res = one_json(out)
    assert res["passed"] is True and res["summary"]["fail"] == 0
    assert {r["check"] for r in res["results"]} >= {
        "schema", "fingerprint", "unique_ids", "empty_fields", "label_balance", "lengths", "exact_duplicates",
        "near_duplicates", "cues", "partial_input", "baselines",
    }
    report = json.loads((mc_release.path / "reports" / "validation.json").read_text())
    assert set(report["summary"]) == {"pass", "warn", "fail", "skip", "stat", "acknowledged"}
    assert all({"check", "config", "status", "summary"} <= set(r) for r in report["results"])
    assert report["fingerprints"]["default"]["train"] == mc_release.split_info("default", "train")["fingerprint"]
    page = (mc_release.path / "reports" / "validation.html").read_text()
    assert page.count("<svg class='chart'") >= 3 and "<img" not in page  # label bars, length histograms, cue bars
    assert "<script" not in page and "src='http" not in page and 'src="http' not in page
    card = (mc_release.path / "README.md").read_text()
    assert "Report: `reports/validation.html` (" in card and "| partial_input | default | pass |" in card


def test_validate_human_table_and_baseline_levels(capsys, mc_release):
    code, out, _ = run(capsys, "validate", str(mc_release.path), "--baselines", "none")
    # a summary by default: counts, verdict, report path; the passing results only with --verbose
    assert code == 0 and "gate passed" in out.splitlines()[0] and "report: " in out and "not shown (--verbose" in out
    assert "near_duplicates" not in out
    code, out, _ = run(capsys, "validate", str(mc_release.path), "--baselines", "none", "--verbose")
    assert code == 0 and "near_duplicates" in out and "partial_input" not in out
    # global flags work after the sub-command, as users type them
    code, out, err = run(capsys, "validate", str(mc_release.path), "--baselines", "none", "--quiet", "--json")
    assert code == 0 and one_json(out)["passed"] is True
    code, _, err = run(capsys, "validate", str(mc_release.path), "--baselines", "fancy")
    assert code == 2 and "'fancy' is not a level" in err


def test_validate_exits_1_on_a_failed_check_after_printing_json(capsys, mc_release):
    rewrite_split(mc_release, "default", "test", lambda rows: rows + [dict(rows[0])])
    code, out, err = run(capsys, "validate", str(mc_release.path), "--json")
    assert code == 1
    res = one_json(out)
    assert res["passed"] is False
    assert {f["check"] for f in res["failures"]} >= {"unique_ids", "fingerprint", "schema"}
    assert err.startswith("error:") and "check(s) failed for mcfx 1.0.0" in err


def test_validate_from_registry_name_finds_drift_against_older_version(capsys, tmp_path):
    reg = tmp_path / "reg"
    make_release(reg, {"train": balanced_text_rows(20, "t")}, text_features(), version="1.0.0")
    make_release(reg, {"train": balanced_text_rows(21, "t")}, text_features(), version="1.1.0")
    code, out, err = run(capsys, "validate", "fx", "--registry", str(reg), "--json")
    res = one_json(out)
    assert code == 0, err
    assert res["version"] == "1.1.0" and res["previous"] == {"name": "fx", "version": "1.0.0"}
    drift = [r for r in res["results"] if r["check"] == "drift"]
    assert drift and "train +1 -0 ~0" in drift[0]["summary"]


# ----------------------------------------------------------------- audit


def test_audit_builds_validates_compares_and_commits(capsys, toy, tmp_path):
    reg = tmp_path / "reg"
    code, out, err = run(capsys, "audit", "toy", "--sources", str(FIXTURES), "--registry", str(reg),
                         "--version", "1.0.0", "--json")
    first = one_json(out)
    assert code == 0, err
    assert first["committed"] is True and first["previous"] is None
    assert (reg / "toy" / "1.0.0" / "reports" / "validation.html").is_file()
    code, out, err = run(capsys, "audit", "toy", "--sources", str(FIXTURES), "--registry", str(reg), "--json")
    second = one_json(out)
    assert code == 0, err
    assert second["previous"] == {"name": "toy", "version": "1.0.0"}
    test_drift = next(d for d in second["drift"] if d["config"] == "plain")
    assert test_drift["status"] == "pass" and "test +0 -1 ~0" in test_drift["summary"]  # toy-30, by erratum
    # the same version again: compared with the release it replaces (--overwrite), identical
    code, out, err = run(capsys, "audit", "toy", "--sources", str(FIXTURES), "--registry", str(reg), "--json",
                         "--overwrite")
    third = one_json(out)
    assert code == 0, err
    assert third["previous"] == {"name": "toy", "version": "1.1.0"}
    assert all("identical" in d["summary"] for d in third["drift"])


def test_failed_audit_exits_1_and_leaves_the_registry_untouched(capsys, tmp_path):
    class BadToy(AuditToy):
        def expectations(self):
            return [Expectation.count("plain", "train", 25, "a wrong paper")]

    reg = tmp_path / "reg"
    register(AuditToy)
    try:
        assert run(capsys, "audit", "toy", "--sources", str(FIXTURES), "--registry", str(reg))[0] == 0
        before = (reg / "toy" / "1.1.0" / "reports" / "validation.json").read_text()
        register(BadToy)
        code, out, _ = run(capsys, "audit", "toy", "--sources", str(FIXTURES), "--registry", str(reg), "--json",
                           "--overwrite")
    finally:
        unregister("toy")
    res = one_json(out)
    assert code == 1 and res["committed"] is False
    assert res["failures"][0]["summary"] == "plain/train/num_examples: published 25, measured 20 (a wrong paper)"
    assert (reg / "toy" / "1.1.0" / "reports" / "validation.json").read_text() == before
    assert res["release"] == str(reg / ".staging" / "toy" / "1.1.0")


def test_audit_never_replaces_a_release_without_overwrite(capsys, toy, tmp_path):
    """It used to rebuild into staging and commit over the existing release silently."""
    reg = tmp_path / "reg"
    assert run(capsys, "build", "toy", "--sources", str(FIXTURES), "--registry", str(reg))[0] == 0
    manifest = reg / "toy" / "1.1.0" / "release.json"
    before = manifest.read_bytes()
    code, out, err = run(capsys, "audit", "toy", "--sources", str(FIXTURES), "--registry", str(reg), "--json")
    assert code == 2 and out == "" and "release toy 1.1.0 already exists" in err and "--overwrite" in err
    assert len(err.strip().splitlines()) == 1
    assert manifest.read_bytes() == before and not (reg / ".staging" / "toy").exists()  # refused before any work
    code, out, err = run(capsys, "audit", "toy", "--sources", str(FIXTURES), "--registry", str(reg), "--json",
                         "--overwrite")
    assert code == 0 and one_json(out)["committed"] is True, err


def _changes(release_dir):
    files = {p.name: p.read_text(encoding="utf-8") for p in sorted((release_dir / "changes").iterdir())}
    card = (release_dir / "README.md").read_text(encoding="utf-8")
    section = card.split("## Changes since", 1)[1].split("\n## ", 1)[0]
    since = json.loads((release_dir / "release.json").read_text(encoding="utf-8"))["changes_since"]
    return files, section, since


def test_audit_commits_the_changelog_that_build_writes(capsys, toy, tmp_path):
    """An audited release has the same changes/ and card "Changes since" as a built one (it had
    neither: it was built into an empty staging registry)."""
    built, audited = tmp_path / "built", tmp_path / "audited"
    for reg in (built, audited):
        assert run(capsys, "build", "toy", "--version", "1.0.0", "--sources", str(FIXTURES),
                   "--registry", str(reg))[0] == 0
    assert run(capsys, "build", "toy", "--sources", str(FIXTURES), "--registry", str(built))[0] == 0
    code, out, err = run(capsys, "audit", "toy", "--sources", str(FIXTURES), "--registry", str(audited), "--json")
    assert code == 0 and one_json(out)["committed"] is True, err
    files, section, since = _changes(audited / "toy" / "1.1.0")
    assert set(files) == {"since-1.0.0.json", "since-1.0.0.md"} and since["version"] == "1.0.0"
    assert "toy-30" in files["since-1.0.0.md"] and "toy-30" in section  # the erratum's removal, item by item
    assert (files, section, since) == _changes(built / "toy" / "1.1.0")


def test_audit_against_a_previous_folder_records_changes_since_it(capsys, toy, tmp_path):
    old, reg = tmp_path / "old", tmp_path / "reg"
    assert run(capsys, "build", "toy", "--version", "1.0.0", "--sources", str(FIXTURES), "--registry", str(old))[0] == 0
    code, out, err = run(capsys, "audit", "toy", "--sources", str(FIXTURES), "--registry", str(reg),
                         "--previous", str(old / "toy" / "1.0.0"), "--json")
    assert code == 0, err
    assert one_json(out)["previous_from"].startswith("--previous ")
    _, section, since = _changes(reg / "toy" / "1.1.0")
    assert since["version"] == "1.0.0" and "toy-30" in section


def test_validate_json_carries_every_finding_with_its_figures(capsys, mc_release):
    """A script reads the figures from stdout, not from reports/validation.json."""
    code, out, err = run(capsys, "validate", str(mc_release.path), "--json")
    assert code == 0, err
    res = one_json(out)
    report = json.loads((mc_release.path / "reports" / "validation.json").read_text(encoding="utf-8"))
    assert [r["metrics"] for r in res["results"]] == [r["metrics"] for r in report["results"]]
    by = {(r["check"], r["config"]): r for r in res["results"]}
    assert by["label_balance", "default"]["metrics"]  # a finding's figures, e.g. its label counts
    assert all(set(r) == {"check", "family", "config", "status", "summary", "metrics"} for r in res["results"])


# ----------------------------------------------------------------- gate and runner


def test_gate_requires_a_current_passing_report(tmp_path):
    rel = make_release(tmp_path, {"train": balanced_text_rows(20, "t")}, text_features())
    with pytest.raises(GateError, match="has not been validated"):
        gate.require_passed(rel)
    validate(rel, builder=None)
    assert gate.require_passed(rel)["passed"] is True
    manifest = json.loads((rel.path / "release.json").read_text())
    manifest["configs"]["default"]["splits"]["train"]["fingerprint"] = "0" * 64
    (rel.path / "release.json").write_text(json.dumps(manifest))
    with pytest.raises(GateError, match="stale"):
        gate.require_passed(Release(rel.path))
    (rel.path / "reports" / "validation.json").write_text('{"fingerprints": {}}')  # was a bare KeyError
    with pytest.raises(GateError, match="validation.json: corrupt validation report: no list of results"):
        gate.require_passed(Release(rel.path))


class Crashes(Check):
    name = "crashes"
    family = "consistency"

    def run(self, release):
        raise KeyError("boom")


class AlwaysWarns(Check):
    name = "always_warns"
    family = "consistency"

    def run(self, release):
        return [self.result(Status.WARN, "dataset-specific finding", config="default")]


def test_runner_runs_builder_checks_and_reports_a_crash_as_failure(tmp_path):
    b = make_builder({"train": balanced_text_rows(20, "t")}, text_features(), checks=[Crashes(), AlwaysWarns])
    from benchsmith.release import ReleaseWriter
    from benchsmith.source import Sources

    rel = ReleaseWriter(b, tmp_path, Sources({})).write()
    v = validate(rel, builder=b, baselines="none")
    by = {r.check: r for r in v.results}
    assert by["crashes"].status is Status.FAIL and "KeyError: 'boom'" in by["crashes"].summary
    assert by["always_warns"].status is Status.WARN
    assert v.passed is False
    with pytest.raises(GateError, match="crashes"):
        gate.enforce(v.report)


def test_runner_without_a_registered_builder_notes_it(tmp_path):
    rel = make_release(tmp_path, {"train": balanced_text_rows(20, "t")}, text_features(), name="nobuilder")
    v = validate(rel, write=False)
    assert any("no registered builder for 'nobuilder'" in n for n in v.notes)
    assert not (rel.path / "reports").exists()
    with pytest.raises(ConfigError):
        validate(rel, baselines="everything", write=False)


def test_a_builder_whose_expectations_hook_raises_fails_the_gate(tmp_path):
    b = make_builder({"train": balanced_text_rows(20, "t")}, text_features())
    from benchsmith.release import ReleaseWriter
    from benchsmith.source import Sources

    rel = ReleaseWriter(b, tmp_path, Sources({})).write()

    def broken():
        raise ValueError("no such table")

    b.expectations = broken
    v = validate(rel, builder=b, baselines="none", write=False)
    assert v.results[0].check == "builder_checks" and v.results[0].status is Status.FAIL
    assert "ValueError: no such table" in v.results[0].summary and not v.passed
