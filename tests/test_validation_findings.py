"""Findings people act on: each warning or failure says why it matters and what to do, specific
to its check; repeated findings group into one line; an acknowledgement moves a finding out of
the warning count without hiding it (a changed figure makes it new again, a typo'd check is an
error); the terminal summary is never cut in a pipe; the gate's hint is the failing check's."""

from __future__ import annotations

import re

import pytest
from conftest import run_cli
from validation_helpers import balanced_text_rows, make_release, text_features

from benchsmith.errors import ConfigError, GateError
from benchsmith.validation import acknowledge, gate, summary
from benchsmith.validation.acknowledge import Acknowledgement, read_acknowledged
from benchsmith.validation.check import Check, CheckResult, Status
from benchsmith.validation.checks.integrity import UniqueIdsCheck
from benchsmith.validation.report import build_report

#: what each check's "what to do" must name: the place its findings are fixed or declared
TODO_NAMES = [
    ("fidelity", "published.yaml"),
    ("partial_input", "known_artifacts.yaml"),
    ("baselines_gated", "known_artifacts.yaml"),
    ("baselines_model", "known_artifacts.yaml"),
    ("unique_ids", "acknowledged.yaml"),
    ("label_balance", "balanced_labels"),
    ("empty_fields", "allow_empty"),
    ("exact_duplicates", "exact_duplicate_max_fraction"),
    ("near_duplicates", "near_duplicate_threshold"),
    ("untranslated", "errata.tsv"),
    ("comve_upstream_audit", "errata.tsv"),
    ("fingerprint", "benchsmith build"),
    ("drift", "bump the version"),
    ("contamination", "contamination_max_fraction"),
    ("cues", "known_artifacts.yaml"),
    ("lengths", "known_artifacts.yaml"),
    ("schema", "features"),
]
#: checks that only describe (stat / skip results): nothing to do
DESCRIPTIVE = {"baselines", "baselines_recorded", "comve_label_distribution", "comve_sentence_lengths",
               "comve_top_words", "mucow_suite_statistics", "xcopa_diversity", "cognition_cg_test_profile"}


def check_classes() -> dict[str, type[Check]]:
    import benchsmith.builders.cognition.checks
    import benchsmith.builders.comve.checks
    import benchsmith.builders.mucow.checks
    import benchsmith.builders.xcopa.checks  # noqa: F401

    acknowledge.check_names()  # imports the generic, baseline, fidelity, drift and contamination checks
    out: dict[str, type[Check]] = {}
    todo: list[type[Check]] = [Check]
    while todo:
        cls = todo.pop()
        todo.extend(cls.__subclasses__())
        name = getattr(cls, "name", None)
        if isinstance(name, str) and name not in out and cls.__module__.startswith("benchsmith."):
            out[name] = cls
    return out


@pytest.mark.parametrize(("check", "names"), TODO_NAMES, ids=[c for c, _ in TODO_NAMES])
def test_each_checks_what_to_do_names_where_it_is_fixed(check, names):
    cls = check_classes()[check]
    assert names in cls.todo and cls.why and cls.topic


def test_every_check_that_can_warn_says_why_and_what_to_do_and_no_two_say_the_same():
    classes = {n: c for n, c in check_classes().items() if n not in DESCRIPTIVE}
    lacking = sorted(n for n, c in classes.items() if not (c.why and c.todo and c.topic))
    assert lacking == []
    by_todo: dict[str, list[str]] = {}
    for n, c in classes.items():
        if c.todo is not Check.todo and c.todo not in [getattr(b, "todo", None) for b in c.__mro__[1:]]:
            by_todo.setdefault(c.todo, []).append(n)
    assert all(len(v) == 1 for v in by_todo.values()), [v for v in by_todo.values() if len(v) > 1]


def test_a_real_warning_carries_its_checks_why_todo_and_figure(tmp_path):
    rel = make_release(tmp_path, {"train": balanced_text_rows(10, "x", 1), "test": balanced_text_rows(5, "x", 2)},
                       text_features())
    (r,) = UniqueIdsCheck().run(rel)
    assert r.status is Status.WARN and r.figure == 5 and r.finding_id == "unique_ids/default"
    assert r.todo == UniqueIdsCheck.todo and r.why == UniqueIdsCheck.why
    clean = make_release(tmp_path / "b", {"train": balanced_text_rows(10, "a", 1),
                                          "test": balanced_text_rows(5, "b", 2)}, text_features())
    (ok,) = UniqueIdsCheck().run(clean)
    assert ok.status is Status.PASS and not ok.todo and ok.figure is None


# ------------------------------------------------------------------ acknowledgements

def warn(config: str, figure: float = 100, check: str = "unique_ids") -> CheckResult:
    return CheckResult(check=check, family="integrity", status=Status.WARN, summary=f"{figure} id(s) in two splits",
                       config=config, figure=figure, todo="acknowledge it", topic="ids repeat across splits")


def report_of(results: list[CheckResult]) -> dict:
    from types import SimpleNamespace

    rel = SimpleNamespace(name="xcopa", version="1.2.0", fingerprints=dict)
    return build_report(rel, results, baselines="none")


def test_an_acknowledgement_moves_the_finding_out_of_the_warning_count_and_hides_nothing():
    results = [warn(c) for c in ("et", "ht", "zh")] + [warn("zh", 3, check="cues")]
    ack = Acknowledgement(check="unique_ids", reason="upstream numbers each split from 0", configs=("*",),
                          source="acknowledged.yaml:3")
    done, notes = acknowledge.apply(results, [ack])
    assert notes == []
    assert [bool(r.acknowledged) for r in done] == [True, True, True, False]
    rep = report_of(done)
    assert rep["summary"]["warn"] == 1 and rep["summary"]["acknowledged"] == 3
    assert len(rep["results"]) == 4  # listed, not hidden
    assert [it.check for it in summary.new_items(rep)] == ["cues"]
    (g,) = summary.groups(summary.acknowledged_items(rep))
    assert g.statement() == "unique_ids in 3 configs: ids repeat across splits (100 each)"
    assert g.sources == ["acknowledged.yaml"]


def test_a_changed_figure_makes_the_finding_new_again_and_an_unused_acknowledgement_is_stale():
    ack = Acknowledgement(check="unique_ids", reason="by design", configs=("et",), figure=100,
                          source="acknowledged.yaml:3")
    done, notes = acknowledge.apply([warn("et", 120)], [ack])
    assert done[0].acknowledged is None
    assert notes == [("acknowledged.yaml:3: acknowledged unique_ids et (figure 100), but the figure changed: "
                     "unique_ids/et (120) now; a new finding until it is acknowledged again")]
    done, notes = acknowledge.apply([warn("et", 100)], [ack])
    assert done[0].acknowledged == {"reason": "by design", "source": "acknowledged.yaml:3", "figure": 100}
    _, notes = acknowledge.apply([warn("ht", 100)], [ack])
    assert notes == ["acknowledged.yaml:3: acknowledgement unique_ids et (figure 100) matches no warning: remove it"]


def test_a_failure_is_never_acknowledged():
    fail = CheckResult(check="unique_ids", family="integrity", status=Status.FAIL, summary="dup", config="et")
    done, _ = acknowledge.apply([fail], [Acknowledgement(check="unique_ids", reason="r")])
    assert done[0].acknowledged is None and done[0].is_new


def test_a_declared_discrepancy_or_known_artifact_acknowledges_its_result():
    fid = CheckResult(check="fidelity", family="fidelity", status=Status.WARN, summary="published 500, measured 499",
                      details={"key": "et/test/num_examples", "discrepancy": "upstream dropped one item"})
    art = CheckResult(check="partial_input", family="artifacts", status=Status.WARN, summary="gain +30%",
                      details={"known_artifact": {"id": "neg-cue", "what": "negation", "citation": "Wang 2020"}})
    done, _ = acknowledge.apply([fid, art], [])
    assert done[0].acknowledged == {"reason": "upstream dropped one item",
                                    "source": "published.yaml: discrepancy of et/test/num_examples"}
    assert done[1].acknowledged == {"reason": "negation (Wang 2020)", "source": "known_artifacts.yaml: neg-cue"}


def test_acknowledged_yaml_is_typed_an_unknown_check_is_an_error_with_suggestions(tmp_path):
    path = tmp_path / "acknowledged.yaml"
    path.write_text("acknowledged:\n  - check: unique_ids\n    configs: [et]\n    figure: 100\n"
                    "    reason: >-\n      upstream numbers\n      each split\n")
    (a,) = read_acknowledged(path, {"unique_ids", "cues"})
    assert (a.check, a.configs, a.figure, a.reason, a.source) == (
        "unique_ids", ("et",), 100, "upstream numbers each split", "acknowledged.yaml:2")
    path.write_text("acknowledged:\n  - check: unique_ids\n    reason: ok\n  - check: uniqe_ids\n    reason: x\n")
    with pytest.raises(ConfigError, match=r"acknowledged.yaml:4: 'uniqe_ids' is not a check") as exc:
        read_acknowledged(path, {"unique_ids", "cues"})
    assert "Did you mean 'unique_ids'?" in (exc.value.hint or "")
    path.write_text("acknowledged:\n  - check: cues\n")
    with pytest.raises(ConfigError, match="acknowledging cues needs a reason"):
        read_acknowledged(path, {"cues"})
    path.write_text("acknowledged:\n  - check: cues\n    reason: r\n    config: [et]\n")
    with pytest.raises(ConfigError, match="unknown key 'config'") as exc:
        read_acknowledged(path, {"cues"})
    assert "Did you mean 'configs'" in (exc.value.hint or "")


def test_the_shipped_acknowledgements_name_real_checks_and_give_reasons():
    from benchsmith.builder import get_builder
    from benchsmith.validation.runner import builder_checks

    for name in ("comve", "xcopa", "mucow", "cognition"):
        b = get_builder(name)
        acks = acknowledge.declared(b, [c.name for c in builder_checks(b)])
        assert acks and all(len(a.reason) > 80 for a in acks), name


# ------------------------------------------------------------------ grouping and the terminal

def test_repeated_findings_group_into_one_line_with_a_count():
    results = [warn(c, 100) for c in ("et", "ht")] + [warn("zh", 500)] + [warn("zh", 3, check="cues")]
    rep = report_of(results)
    lines = [g.statement() for g in summary.groups(summary.new_items(rep))]
    assert lines == ["unique_ids in 3 configs: ids repeat across splits (100 to 500)",
                     "cues zh: 3 id(s) in two splits"]


def long_report(n_new: int = 2, n_ack: int = 30) -> dict:
    long = "a figure " + "and more words " * 20 + "THE-END"
    results = [CheckResult(check=f"check{i}", family="x", status=Status.WARN, summary=long, config="et",
                           todo="fix it " * 12 + "DONE") for i in range(n_new)]
    results += [CheckResult(check=f"known{i}", family="x", status=Status.WARN, summary="by design", config="et",
                            acknowledged={"reason": "r", "source": "acknowledged.yaml:1"}) for i in range(n_ack)]
    return report_of(results)


def test_in_a_pipe_lines_are_whole_and_on_a_terminal_they_wrap_never_cut():
    rep = long_report()
    piped = summary.terminal(rep, width=None, report_path="r.html")
    assert sum("THE-END" in t for t, _ in piped) == 2 and all("…" not in t for t, _ in piped)
    wrapped = summary.terminal(rep, width=80, report_path="r.html")
    assert all(len(t) <= 80 for t, _ in wrapped)
    text = " ".join(" ".join(t.split()) for t, _ in wrapped)
    assert text.count("THE-END") == 2 and text.count("DONE") == 2


def test_nothing_new_fits_one_screen_with_a_count_of_the_acknowledged_not_shown():
    rep = long_report(n_new=0, n_ack=30)
    lines = summary.terminal(rep, width=80, report_path="r.html")
    assert len(lines) <= summary.SCREEN_LINES
    assert ("nothing new", "green") in lines
    assert any(re.match(r"\.\.\. \d+ more acknowledged in \d+ checks", t) for t, _ in lines)


def test_validate_in_a_pipe_prints_whole_lines(capsys, tmp_path):
    """The real command, its output captured (not a terminal): no line is cut, each new finding
    is followed by what to do."""
    rows = balanced_text_rows(30, "x", 1)
    rel = make_release(tmp_path, {"train": rows, "test": balanced_text_rows(20, "x", 2)}, text_features())
    code, out, _ = run_cli(capsys, "--quiet", "validate", str(rel.path), "--baselines", "none")
    lines = out.splitlines()
    assert code == 0 and "…" not in out and lines[0].startswith("validate fx 1.0.0: gate passed (0 fail, 1 warn")
    assert "warn unique_ids default: 20 id(s) appear in two splits (e.g. 'x-0')" in lines
    assert f"     to do: {UniqueIdsCheck.todo}" in lines  # whole, however long


# ------------------------------------------------------------------ the gate

def test_the_gate_hint_is_the_failing_checks_what_to_do():
    fid = CheckResult(check="fidelity", family="fidelity", status=Status.FAIL, summary="published 500, measured 499",
                      todo="add a `discrepancy:` to figure et/test/num_examples in published.yaml")
    art = CheckResult(check="partial_input", family="artifacts", status=Status.FAIL, summary="gain +40%",
                      todo="declare the artifact in known_artifacts.yaml; never raise the threshold")
    for failed, says, not_says in ((fid, "published.yaml", "known_artifacts"), (art, "known_artifacts.yaml",
                                                                                 "published.yaml")):
        rep = report_of([failed])
        with pytest.raises(GateError) as exc:
            gate.enforce(rep)
        assert says in exc.value.hint and not_says not in exc.value.hint
        assert "declare the exception in the config's policy" not in exc.value.hint
    rep = report_of([fid, art])
    with pytest.raises(GateError) as exc:
        gate.enforce(rep)
    assert exc.value.hint.startswith("fidelity: add a `discrepancy:`") and "partial_input: declare" in exc.value.hint
