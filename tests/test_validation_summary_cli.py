"""What `validate` and `audit` print: verdict first, at most ~30 lines that fit the terminal
(80 and 120 columns), everything with -v; `--summary markdown` on stdout or $GITHUB_STEP_SUMMARY."""

from __future__ import annotations

import pytest
import rich.console
from conftest import one_json, run_cli
from toy_builder import FIXTURES
from validation_helpers import MC_META, make_release, mc_features, mc_rows

from benchsmith.cli import output
from benchsmith.validation import check
from benchsmith.validation.check import Check, Status


class ManyWarnings(Check):
    """40 warnings with long summaries (a ComVE-like run), and one failure when asked to."""

    name = "many_warnings"
    family = "integrity"
    fail = False

    def run(self, release):
        out = [self.result(Status.WARN, f"finding {n}: " + "a long explanation of what was found " * 6,
                           config="default") for n in range(40)]
        if self.fail:
            out.append(self.result(Status.FAIL, "the one failure: " + "why it failed " * 12))
        return out


@pytest.fixture
def release(tmp_path):
    return make_release(tmp_path / "reg", {"train": mc_rows(60, "tr", 1), "test": mc_rows(30, "te", 2)},
                        mc_features(), MC_META, name="mcfx")


@pytest.fixture
def noisy(monkeypatch):
    monkeypatch.setitem(check._CHECKS, ManyWarnings.name, ManyWarnings)
    return ManyWarnings


@pytest.fixture
def width(monkeypatch):
    def set_width(n: int) -> None:
        monkeypatch.setattr(output.console, "width", n)

    yield set_width


def run(capsys, *argv):
    return run_cli(capsys, "--quiet", *argv)


@pytest.fixture
def terminal(monkeypatch):
    """The console as a terminal (under capsys it is a pipe)."""
    monkeypatch.setattr(rich.console.Console, "is_terminal", property(lambda self: True))


def test_validate_prints_new_findings_first_grouped_and_whole_in_a_pipe(capsys, release, noisy):
    noisy.fail = True
    try:
        code, out, err = run(capsys, "validate", str(release.path), "--baselines", "none")
    finally:
        noisy.fail = False
    lines = out.splitlines()
    assert code == 1 and "check(s) failed" in err
    assert lines[0].startswith("validate mcfx 1.0.0: gate FAILED (1 fail, 40 warn, 0 acknowledged, ")
    assert lines[1] == "fail many_warnings: the one failure: " + " ".join(["why it failed"] * 12)  # whole
    # the 40 warnings of one check: one line with their count
    assert lines[2].startswith("warn many_warnings in 40 findings: finding 0: a long explanation")
    assert "…" not in out and len(lines) <= 12
    assert lines[-1].startswith("report: ") and lines[-1].endswith("validation.html")


@pytest.mark.parametrize("columns", [80, 120])
def test_on_a_terminal_lines_wrap_to_its_width_and_nothing_is_cut(capsys, release, noisy, width, terminal,
                                                                    columns):
    width(columns)
    code, out, _ = run(capsys, "validate", str(release.path), "--baselines", "none")
    lines = out.splitlines()
    assert code == 0 and "…" not in out and len(lines) <= 24
    assert all(len(ln) <= columns for ln in lines if not ln.startswith("report: "))
    assert " ".join(out.split()).count("a long explanation of what was found") == 6  # the first finding, whole


def test_verbose_lists_every_result_with_names_whole(capsys, release, noisy, width):
    width(80)
    code, out, _ = run(capsys, "validate", str(release.path), "--baselines", "none", "--verbose")
    assert code == 0 and out.splitlines()[0].startswith("validate mcfx 1.0.0: gate passed (0 fail, 40 warn")
    assert "near_duplicates" in out and "many_warnings" in out and "finding 39" in out
    assert "…" not in out  # nothing cut: the table wraps its summary column
    assert all(len(ln) <= 80 for ln in out.splitlines() if not ln.startswith("report: "))


def test_summary_markdown_on_stdout_or_in_the_step_summary(capsys, release, noisy, tmp_path, monkeypatch):
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
    code, out, _ = run(capsys, "validate", str(release.path), "--baselines", "none", "--summary", "markdown")
    assert code == 0
    assert out.startswith("### ✅ validate mcfx 1.0.0: gate passed\n")
    assert "| warn | [many_warnings](validation.html#r" in out and "\nreport: " not in out
    assert f"Full report: `{release.path / 'reports' / 'validation.html'}`" in out
    # in a CI job: appended to the step summary file, the text summary on stdout as usual
    step = tmp_path / "step-summary.md"
    step.write_text("earlier step\n")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(step))
    code, out, _ = run(capsys, "validate", str(release.path), "--baselines", "none", "--summary", "markdown")
    assert code == 0 and out.startswith("validate mcfx 1.0.0: gate passed") and "###" not in out
    written = step.read_text()
    assert written.startswith("earlier step\n### ✅ validate mcfx 1.0.0: gate passed")
    # with --json too: stdout is the one JSON object
    code, out, _ = run(capsys, "validate", str(release.path), "--baselines", "none", "--summary", "markdown",
                       "--json")
    assert code == 0 and one_json(out)["passed"] is True and step.read_text().count("###") == 2


def test_summary_option_errors(capsys, release, tmp_path, monkeypatch):
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
    code, out, err = run(capsys, "validate", str(release.path), "--summary", "markdwn")
    assert code == 2 and out == "" and "error: --summary 'markdwn' is not a format" in err and "markdown" in err
    code, out, err = run(capsys, "validate", str(release.path), "--summary", "markdown", "--json")
    assert code == 2 and out == "" and "--summary markdown and --json both write to stdout" in err
    assert not (release.path / "reports").exists()  # refused before any work
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(tmp_path))  # a folder: cannot be appended to
    code, out, err = run(capsys, "validate", str(release.path), "--baselines", "none", "--summary", "markdown")
    assert code == 3 and f"{tmp_path}: cannot write the step summary" in err and len(err.splitlines()) == 1


def test_audit_summary_markdown(capsys, tmp_path, monkeypatch):
    from test_validation_cli import AuditToy

    from benchsmith.builder import register, unregister

    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
    register(AuditToy)
    try:
        code, out, err = run(capsys, "audit", "toy", "--sources", str(FIXTURES), "--registry",
                             str(tmp_path / "reg"), "--summary", "markdown")
    finally:
        unregister("toy")
    assert code == 0, err
    assert out.startswith("### ✅ audit toy 1.1.0: gate passed\n") and "| fail | warn | acknowledged | pass | stat | skip |" in out
    assert f"Full report: `{tmp_path / 'reg' / 'toy' / '1.1.0' / 'reports' / 'validation.html'}`" in out
