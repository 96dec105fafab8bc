"""Artifacts are either absent or declared (issue 28): a planted options-only cue fails the gate
unless the builder declares it with evidence, and then the gate warns and the card says so."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from validation_helpers import MC_META, make_builder, make_release, mc_features, mc_rows

from benchsmith.errors import ConfigError, GateError
from benchsmith.manifest import ConfigInfo, ReleaseInfo

#: the fine-tuned probe off on CPU (no training budget): these tests are about the declarations, which the
#: cheap probe shows in a second; tests/test_probe_finetuned.py trains the fine-tuned one
META = {**MC_META, "finetuned_probe_cpu_max_train": 0}


def _cued_splits() -> dict[str, list[dict]]:
    # every correct option ends in "never": the options alone give the answer away
    return {"train": mc_rows(160, "tr", seed=1, cue="never"), "test": mc_rows(120, "te", seed=2, cue="never")}


def _builder_with(tmp_path: Path, splits, declaration: str | None, baselines=()):
    folder = tmp_path / "builder"
    folder.mkdir(exist_ok=True)
    if declaration is not None:
        (folder / "known_artifacts.yaml").write_text(declaration, encoding="utf-8")
    b = make_builder(splits, mc_features(), META)
    type(b).data_path = classmethod(lambda cls, name: folder / name)
    type(b).baselines = lambda self: tuple(baselines)
    return b


DECLARED = """\
artifacts:
  - id: ending-cue
    configs: [default]
    probes: [partial_input, partial_input_finetuned, options-only]
    max_gain: {max_gain}
    what: every correct option ends in "never"
    citation: "Doe et al. (2026), Table 3"
    measured: "options-only logistic regression, 100% on test"
"""


def _validate(tmp_path: Path, declaration: str | None, name: str):
    from benchsmith.validation.runner import validate

    splits = _cued_splits()
    release = make_release(tmp_path / name, splits, mc_features(), META)
    b = _builder_with(tmp_path / name, splits, declaration)
    return validate(release, builder=b, baselines="cheap", previous=None), release


def _card(release) -> str:
    return (release.path / "README.md").read_text(encoding="utf-8")


def test_an_undeclared_options_only_artifact_fails_the_gate(tmp_path):
    from benchsmith.validation.gate import enforce, require_passed

    v, release = _validate(tmp_path, None, "a")
    [r] = [r for r in v.results if r.check == "partial_input"]
    assert r.status.value == "fail" and r.metrics["gain"] >= 0.4 and r.metrics["n"] == 120
    assert "trained on train, scored on test" in r.summary and "undeclared artifact" in r.summary
    assert not v.passed
    with pytest.raises(GateError, match="partial_input"):
        enforce(v.report)
    with pytest.raises(GateError):
        require_passed(release)  # what publish calls
    assert "## Known artifacts" not in _card(release)


def test_a_declared_artifact_warns_and_the_card_lists_it(tmp_path):
    from benchsmith.validation.gate import require_passed

    v, release = _validate(tmp_path, DECLARED.format(max_gain=0.6), "b")
    [r] = [r for r in v.results if r.check == "partial_input"]
    assert r.status.value == "warn" and "known artifact 'ending-cue'" in r.summary
    assert r.details["known_artifact"]["id"] == "ending-cue"
    assert v.passed and require_passed(release)
    card = _card(release)
    assert "## Known artifacts" in card
    section = card.split("## Known artifacts", 1)[1]
    assert "**ending-cue**" in section and "Doe et al. (2026), Table 3" in section
    assert "*This release:* partial_input on default: 100.0% vs chance 50.0%" in section
    assert "Gate: **passed**" in card


def test_a_declared_artifact_that_grew_past_its_declaration_fails(tmp_path):
    v, _ = _validate(tmp_path, DECLARED.format(max_gain=0.2), "c")
    [r] = [r for r in v.results if r.check == "partial_input"]
    assert r.status.value == "fail" and "the artifact got worse" in r.summary
    assert not v.passed


def test_without_a_train_and_test_split_the_probe_is_cross_validated_and_says_so(tmp_path):
    from benchsmith.validation.checks.partial_input import PartialInputCheck

    release = make_release(tmp_path, {"validation": mc_rows(200, "v", cue="never")}, mc_features(), MC_META)
    [r] = PartialInputCheck().run(release)
    assert r.status.value == "fail" and "5-fold cross-validated over all splits pooled" in r.summary
    assert r.details["folds"] == 5 and r.metrics["n"] == 200


@pytest.mark.parametrize(
    ("accuracy", "n", "declared", "status"),
    [
        (0.62, 500, False, "fail"),   # +12 points, p ~ 1e-8: large and significant
        (0.62, 500, True, "warn"),    # the same, declared
        (0.75, 20, False, "warn"),    # +25 points on 20 items: not significant, cannot fail
        (0.57, 500, False, "warn"),   # +7 points, significant: under the threshold
        (0.57, 500, True, "warn"),    # the same, declared: the declaration is attached at any gain
        (0.52, 500, False, "pass"),
        (0.52, 500, True, "pass"),
    ],
)
def test_the_one_partial_input_rule(accuracy, n, declared, status):
    from benchsmith.validation.checks.partial_input import artifact_verdict
    from benchsmith.validation.known_artifacts import KnownArtifact

    known = [KnownArtifact("k", ("default",), ("probe",), 0.3, "a cue", citation="x")] if declared else []
    v = artifact_verdict(accuracy=accuracy, chance=0.5, n=n, threshold=0.1, probe="probe", config="default",
                         known=known)
    assert v["status"] == status, v
    assert (v["known_artifact"] is not None) == declared
    assert ("known artifact 'k'" in v["why"]) == declared  # the pointer, whatever the gain


def test_declarations_need_evidence_and_known_keys(tmp_path):
    from benchsmith.validation.known_artifacts import read_known_artifacts

    path = tmp_path / "known_artifacts.yaml"
    path.write_text("artifacts:\n  - {id: a, configs: [x], probes: [partial_input], max_gain: 0.3, what: w}\n")
    with pytest.raises(ConfigError, match="artifact #1 \\(a\\) declares no evidence"):
        read_known_artifacts(path)
    path.write_text("artifacts:\n  - {id: a, configs: [x], probes: [p], max_gain: 0.3, what: w, citaton: c}\n")
    with pytest.raises(ConfigError, match="unknown key 'citaton'.*citation"):
        read_known_artifacts(path)
    path.write_text("artifacts:\n  - {id: a, configs: [x], probes: [p], max_gain: 30, what: w, measured: m}\n")
    with pytest.raises(ConfigError, match="not a fraction"):
        read_known_artifacts(path)
    path.write_text("artifacts:\n  - {id: a, configs: x, probes: [p], max_gain: 0.3, what: w, measured: m}\n")
    [k] = read_known_artifacts(path)
    assert k.covers("p", "x") and not k.covers("p", "y") and k.evidence == "measured: m"


def _saved_gated_result(release, accuracy: float, gate_status: str) -> None:
    """A result `benchsmith baseline` saved (its gate computed by an older, laxer rule)."""
    folder = release.reports_dir / "baselines"
    folder.mkdir(parents=True, exist_ok=True)
    row = {"config": "default", "split": "test", "metric": "accuracy", "value": accuracy, "n": 120, "paper": [],
           "chance": 0.5}
    table = [{"baseline": "options-only", "config": "default", "split": "test", "variant": "options_only",
              "model": "m", "metric": "accuracy", "value": accuracy, "n": 120, "paper": [], "comparable": None}]
    data = {"baseline": "options-only", "kind": "cross_encoder", "variant": "options_only", "caveats": [],
            "fingerprints": release.fingerprints(), "table": table, "records": [], "scores": [row],
            "gate": {"status": gate_status, "passed": gate_status != "fail", "checks": []}}
    (folder / "options-only@default.json").write_text(json.dumps(data), encoding="utf-8")


@pytest.mark.parametrize(("declaration", "status"), [(None, "fail"), (DECLARED.format(max_gain=0.6), "warn")])
def test_a_recorded_gated_run_that_fails_fails_the_gate(tmp_path, declaration, status):
    """One verdict: a saved full run's gate is recomputed with today's rule and declarations; its
    status is the check's, so the gate, the report and the card agree."""
    from benchsmith.validation.baselines.spec import BaselineSpec, Gate
    from benchsmith.validation.runner import validate

    spec = BaselineSpec("options-only", "cross_encoder", "default", variant="options_only", gate=Gate())
    splits = {"train": mc_rows(40, "tr", seed=3), "test": mc_rows(40, "te", seed=4)}  # no cue here
    release = make_release(tmp_path / "r", splits, mc_features(), MC_META)
    b = _builder_with(tmp_path, splits, declaration, baselines=[spec])
    _saved_gated_result(release, 90.0, "pass")
    v = validate(release, builder=b, baselines="cheap", previous=None)
    [r] = [r for r in v.results if r.check == "baselines_recorded"]
    assert r.status.value == status, r.summary
    assert v.passed is (status != "fail")
    assert v.report["passed"] is (status != "fail")
    card = _card(release)
    assert ("## Known artifacts" in card) is (declaration is not None)
    assert f"Gate: **{'failed' if status == 'fail' else 'passed'}**" in card  # the card agrees with the gate
    assert "| baselines_recorded |" in card and f"| {status} |" in card


@pytest.mark.slow  # trains the MiniLM probe (~20 s); the cheap probe's tests above are its stand-in
def test_the_model_probe_follows_the_same_split_and_declarations(tmp_path):
    pytest.importorskip("torch")
    from benchsmith.validation.baselines.model import ModelBaselines
    from benchsmith.validation.known_artifacts import KnownArtifact

    release = make_release(tmp_path, _cued_splits(), mc_features(), MC_META)
    check = ModelBaselines()
    [r] = check.run(release)
    assert "trained on train, scored on test" in r.summary and r.metrics["n"] == 120
    assert r.status.value == "fail" and r.metrics["gain"] >= 0.3
    check.known_artifacts = [KnownArtifact("ending-cue", ("default",), ("baselines_model",), 0.6, "a cue",
                                           measured="100%")]
    [r] = check.run(release)
    assert r.status.value == "warn" and r.details["known_artifact"]["id"] == "ending-cue"


def test_a_pass_on_a_subsample_is_a_warn_that_says_so():
    from types import SimpleNamespace

    from benchsmith.validation.baselines.run import ScoreRow, gate_verdict
    from benchsmith.validation.baselines.spec import BaselineSpec, Gate

    spec = BaselineSpec("options-only", "cross_encoder", "default", variant="options_only", gate=Gate())
    info = ReleaseInfo(name="fx", version="1.0.0", configs={"default": ConfigInfo(name="default", features_dict={},
                                                                                  splits={})})
    release = SimpleNamespace(name="fx", configs=lambda: ["default"], info=info, config_info=info.configs.__getitem__)
    row = ScoreRow(config="default", split="test", metric="accuracy", value=52.0, n=500, chance=0.5)
    assert gate_verdict(spec, release, [row])["status"] == "pass"
    cut = gate_verdict(spec, release, [row], subsampled=True)
    assert cut["status"] == "warn" and cut["subsampled"]
    assert "passed on a subsample (500 items scored)" in cut["checks"][0]["why"]
    assert "benchsmith baseline fx --baseline options-only" in cut["checks"][0]["why"]
    bad = ScoreRow(config="default", split="test", metric="accuracy", value=80.0, n=500, chance=0.5)
    assert gate_verdict(spec, release, [bad], subsampled=True)["status"] == "fail"  # a fail stays a fail
