"""The validation report page: verdict first, charts as inline SVG whose labels are text in any
script, a page that keeps its size budget; the summary shared with the terminal and markdown."""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET

import pytest

from benchsmith.manifest import ReleaseInfo
from benchsmith.validation import charts, report, summary

HIST = {"kind": "hist", "title": "et: premise length", "xlabel": "tokens", "ylabel": "share of examples",
        "edges": [3, 4, 5, 6], "series": {"validation": [0.2, 0.5, 0.3], "test": [0.1, 0.6, 0.3]}}
BAR = {"kind": "bar", "title": "zh: label per split", "ylabel": "examples", "categories": ["choice1", "choice2"],
       "series": {"validation": [55, 45], "test": [250, 250]}}
# cue words of Chinese, Thai and Tamil: the PNGs of matplotlib's DejaVu Sans drew them as empty boxes
CUES = ["因为 [12%]", "ที่ [9%]", "அவன் [4%]", "<b>&co [1%]"]
BARH = {"kind": "barh", "title": "cues", "labels": CUES, "values": [0.7, 0.2, 0.55, 1.2], "reference": [0.5] * 4,
        "xlabel": "productivity (line: chance)"}


def texts(svg: str) -> list[str]:
    return ["".join(t.itertext()) for t in ET.fromstring(svg).iter("text")]


@pytest.mark.parametrize("spec", [HIST, BAR, BARH], ids=["hist", "bar", "barh"])
def test_a_chart_is_well_formed_svg_with_its_labels_as_text(spec):
    svg = charts.svg(spec)
    root = ET.fromstring(svg)  # well-formed XML: every label escaped
    assert root.tag == "svg" and root.get("class") == "chart" and svg == charts.svg(spec)  # deterministic
    labels = texts(svg)
    assert spec["title"] in labels
    for key in ("categories", "labels"):
        for label in spec.get(key, []):
            assert label in labels  # the browser's fonts draw it: zh, th, ta, and markup stays text
    for name in spec.get("series", {}) if len(spec.get("series", {})) > 1 else ():
        assert name in labels  # legend
    assert "<b>" not in svg and "image" not in svg


def test_chart_geometry_follows_the_values():
    bars = {r.get("height") for r in ET.fromstring(charts.svg(BAR)).iter("rect") if r.get("width") != "10"}
    assert len(bars) == 3  # 55, 45, 250 (twice): heights proportional, not constant
    widths = [int(r.get("width")) for r in ET.fromstring(charts.svg(BARH)).iter("rect")]
    assert widths[0] > widths[2] > widths[1] and widths[3] >= widths[0]  # 0.7 > 0.55 > 0.2; 1.2 capped at 1
    with pytest.raises(ValueError, match="unknown figure kind 'pie'"):
        charts.svg({"kind": "pie"})


def test_text_width_counts_wide_characters_twice_and_marks_not_at_all():
    assert charts.text_width("因为") > 1.6 * charts.text_width("ab")
    assert charts.text_width("ที่") == charts.text_width("ท")  # base letter + two combining marks
    assert charts.text_width("அவன்") > charts.text_width("abc")  # Tamil letters are wider than Latin


def result(i: int, status: str, config: str | None = "et", details: object = None, **kw) -> dict:
    return {"check": kw.get("check", f"check{i}"), "family": "integrity", "config": config, "status": status,
            "summary": kw.get("summary", f"summary {i} | with a pipe"), "metrics": kw.get("metrics", {}),
            "details": details or {}, "figures": kw.get("figures", []),
            **{k: kw[k] for k in ("why", "todo", "topic", "acknowledged") if k in kw}}


def make_report(results: list[dict], passed: bool | None = None) -> dict:
    counts = {k: sum(r["status"] == k and not r.get("acknowledged") for r in results)
              for k in ("pass", "warn", "fail", "skip", "stat")}
    counts["acknowledged"] = sum(bool(r.get("acknowledged")) for r in results)
    return {"name": "xcopa", "version": "1.1.0", "benchsmith": "0", "baselines": "cheap", "previous": None,
            "notes": ["no previous release of this dataset to compare with"], "summary": counts,
            "passed": counts["fail"] == 0 if passed is None else passed, "results": results}


MANIFEST = ReleaseInfo.from_dict({"name": "xcopa", "version": "1.1.0", "tool_versions": {
    "benchsmith": "0", "datasets": "0", "pyarrow": "0"}, "configs": {"et": {"features": {
    "idx": {"_type": "Value", "dtype": "int32"}}, "splits": {"test": {"num_examples": 500, "fingerprint": "ab" * 32,
                                                                      "files": ["data/et/test-00000-of-00001.parquet"]}}}}})


def test_the_first_screen_is_the_verdict_counts_the_new_findings_then_the_acknowledged():
    results = [result(0, "pass"), result(1, "warn", summary="cue 'ที่' on test", why="a shortcut", todo="declare it"),
               result(2, "stat", None), result(3, "fail", "zh", figures=[BARH]), result(4, "warn", None),
               result(5, "skip", details=None),
               result(6, "warn", "th", check="unique_ids", topic="ids repeat across splits",
                      acknowledged={"reason": "upstream numbers each split", "source": "acknowledged.yaml:3"}),
               result(7, "warn", "ta", check="unique_ids", topic="ids repeat across splits",
                      acknowledged={"reason": "upstream numbers each split", "source": "acknowledged.yaml:3"})]
    page = report.render_html(make_report(results), MANIFEST)
    first = page[: page.index("<details class='config'")]
    assert page.index("xcopa 1.1.0") < page.index("gate FAILED") < page.index("New findings (3)")
    assert page.index("New findings (3)") < page.index("Acknowledged findings (2, not counted as warnings)")
    assert "<script" not in page and "<img" not in page and "data:image" not in page
    # failures first, then warnings in the order they ran, each linking to its section
    links = re.findall(r"<li><span class='badge (\w+)'>\w+</span> <a href='#(r\d+)'>", first)
    assert links == [("fail", "r3"), ("warn", "r1"), ("warn", "r4"), ("ack", "r6")]
    for _, anchor in links:
        assert page.count(f"id='{anchor}'") == 1
    assert "cue 'ที่' on test" in first  # the full line, quotes as typed
    assert "why it matters: a shortcut" in first and "<b>what to do:</b> declare it" in first
    # the two acknowledged findings: one line with their count, their configs linked, the reason shown
    assert "unique_ids</a> in 2 configs: ids repeat across splits" in first
    assert "<a href='#r6'>th</a>, <a href='#r7'>ta</a>" in first
    assert "<b>acknowledged</b> (acknowledged.yaml:3): upstream numbers each split" in first
    # each result's own section says what to do, or why it is acknowledged
    assert "<p class='meta'>what to do: declare it</p>" in page[page.index("id='r1'"):]
    assert ("<span class='badge ack'>ack</span> acknowledged.yaml:3: upstream numbers each split"
            in page[page.index("id='r6'"):])
    # one collapsed section per config, release-wide results first; the split table last
    sections = re.findall(r"<details class='config' id='([\w-]+)'>", page)
    assert sections == ["release", "config-et", "config-zh", "config-th", "config-ta"]
    assert page.index("id='splits'") > page.rindex("<details class='config'")
    assert "因为 [12%]" in page  # the chart's cue label is text in the page
    passing = report.render_html(make_report([result(0, "pass")]), MANIFEST)
    assert "gate passed" in passing and "New findings (0)" in passing and "Nothing new" in passing


def test_the_font_stack_names_a_font_for_every_script_and_a_one_bin_histogram_is_not_drawn():
    for font in ("Noto Sans Tamil", "Noto Sans Thai", "WenQuanYi Zen Hei", "Noto Sans CJK SC"):
        assert font in report._CSS
    one_bin = {"kind": "hist", "title": "ambiguous_word length", "edges": [1, 2],
               "series": {"test": [1.0]}}
    assert not charts.informative(one_bin) and charts.informative(HIST) and charts.informative(BARH)
    page = report.render_html(make_report([result(0, "warn", figures=[one_bin]), result(1, "warn", figures=[HIST])]))
    assert page.count("<svg") == 1 and "et: premise length" in page


def test_the_page_keeps_its_budget_by_leaving_out_passing_details_first(monkeypatch):
    big = {"rows": ["x" * 80] * 200}  # ~17 KB of JSON each
    results = [result(i, "pass", details=big) for i in range(2000)] + [result(2000, "warn", details=big)]
    page = report.render_html(make_report(results))
    assert len(page.encode()) <= report.PAGE_BUDGET_BYTES
    warn_section = page[page.index("id='r2000'"):]
    assert "<pre>" in warn_section[: warn_section.index("</div>")]  # the warning keeps its details
    assert "more characters: the whole object is this result's \"details\" in validation.json" in page
    assert "The details of 2000 results are left out of this page" in page
    # fewer results share the budget: each passing one shows a cut of its details
    some = report.render_html(make_report(results[:300]))
    assert some.count("<pre>") == 300 and len(some.encode()) <= report.PAGE_BUDGET_BYTES
    # a small report shows every detail whole
    small = report.render_html(make_report([result(0, "pass", details={"a": 1}), result(1, "warn", details={"b": 2})]))
    assert small.count("<pre>") == 2 and "left out" not in small and "more characters" not in small
    monkeypatch.setattr(report, "PAGE_BUDGET_BYTES", 10)  # results alone over budget: no details at all
    assert "<pre>" not in report.render_html(make_report(results[:3]))


def test_the_summary_lines_and_markdown():
    results = [result(0, "warn", summary="a\n  long   line", todo="fix | it"), result(1, "fail", None, summary="bad | pipe"),
               result(2, "pass"),
               result(3, "warn", "th", acknowledged={"reason": "by design", "source": "acknowledged.yaml:2"})]
    rep = make_report(results)
    its = summary.items(rep)
    assert [(i.status, i.where, i.summary, i.anchor) for i in its] == [
        ("fail", "check1", "bad | pipe", "r1"), ("warn", "check0 et", "a long line", "r0"),
        ("warn", "check3 th", "summary 3 | with a pipe", "r3")]
    assert summary.headline(rep) == "xcopa 1.1.0: gate FAILED (1 fail, 1 warn, 1 acknowledged, 1 pass, 0 stat, 0 skip)"
    md = summary.markdown(rep, html_path="/runner/reports/validation.html")
    lines = md.splitlines()
    assert lines[0] == "### ❌ xcopa 1.1.0: gate FAILED"
    assert "| 1 | 1 | 1 | 1 | 0 | 0 |" in lines
    fail = "| fail | [check1](validation.html#r1) | check1: bad \\| pipe |  |"
    warn = "| warn | [check0](validation.html#r0) | check0 et: a long line | fix \\| it |"
    assert lines.index(fail) < lines.index(warn)
    assert lines.index(warn) < lines.index("Acknowledged (1, not counted as warnings):")
    assert "- check3 th: summary 3 \\| with a pipe (acknowledged.yaml)" in lines
    assert "Full report: `/runner/reports/validation.html`" in md
    many = summary.markdown(make_report([result(i, "warn", check=f"c{i}") for i in range(60)]), max_items=50)
    assert many.count("\n| warn |") == 50 and "10 more new findings" in many
    assert "Nothing new: no failures and no unacknowledged warnings." in summary.markdown(
        make_report([result(0, "pass")]))


def test_the_json_report_is_unchanged_by_the_page_budget(tmp_path):
    """The page cuts details; validation.json never does (what the gate and publish read)."""
    from types import SimpleNamespace

    big = {"rows": ["y" * 80] * 200}
    rep = make_report([result(i, "pass", details=big) for i in range(300)])
    rel = SimpleNamespace(reports_dir=tmp_path, info=None)
    jpath, hpath = report.write_report(rel, rep)
    assert json.loads(jpath.read_text())["results"][0]["details"] == big
    assert hpath.stat().st_size <= report.PAGE_BUDGET_BYTES
