"""COPA in SuperGLUE's layout: the shared builder checks on the fixture, the reader's errors, and
the real data (``$BENCHSMITH_RAW``, e.g. ../shared/raw) built, checksummed and validated."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from benchsmith_superglue_copa import SuperglueCopa
from benchsmith_superglue_copa.copa_xml import read_items

from benchsmith.errors import ParseError
from benchsmith.testing import BuilderTestBase, build_release, fixtures_dir


class TestSuperglueCopa(BuilderTestBase):
    builder = SuperglueCopa
    sources = fixtures_dir(__file__)      # laid out like the raw download: copa/datasets/copa-*.xml
    counts = {"default": {"train": 4, "validation": 2, "test": 3}}  # noqa: RUF012
    features = {"default": ["premise", "choice1", "choice2", "question", "idx", "label"]}  # noqa: RUF012
    ids_repeat_across_splits = True       # SuperGLUE's idx counts from 0 in every split


def test_superglue_fields(tmp_path):
    release = TestSuperglueCopa.build(tmp_path / "registry")
    first = release.table("default", "train").to_pylist()[0]
    assert first == {"premise": "The lamp went dark.", "choice1": "The curtains were open.",
                     "choice2": "Its bulb burned out.", "question": "cause", "idx": 0, "label": 1}
    assert [r["idx"] for r in release.table("default", "validation").to_pylist()] == [0, 1]


@pytest.mark.parametrize(("text", "match"), [
    (("<copa-corpus><item id='1' asks-for='why' most-plausible-alternative='1'><p>a</p><a1>b</a1><a2>c</a2>"
      "</item></copa-corpus>"), "item #1"),
    ("<copa-corpus><item id='1'>", "not well-formed"),
    ("<!DOCTYPE x [<!ENTITY e 'boom'>]><copa-corpus>&e;</copa-corpus>", "refused"),
])
def test_malformed_xml_is_a_parse_error_naming_the_file(tmp_path, text, match):
    path = tmp_path / "copa-dev.xml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ParseError, match=match) as err:
        list(read_items(path))
    assert str(path) in str(err.value)


RAW = Path(os.environ["BENCHSMITH_RAW"]) if os.environ.get("BENCHSMITH_RAW") else None


@pytest.mark.skipif(RAW is None or not (RAW / "copa").is_dir(), reason="needs $BENCHSMITH_RAW/copa")
def test_real_copa_builds_with_registered_checksums_and_validates(tmp_path):
    from benchsmith.validation.runner import validate

    release = build_release(SuperglueCopa, RAW, tmp_path / "registry", checksums=True)
    assert {s: release.num_examples("default", s) for s in release.splits("default")} == {
        "train": 400, "validation": 100, "test": 500}
    v = validate(release, previous=None)
    assert v.passed, [r.summary for r in v.results if r.status.value == "fail"]
    fidelity = {r.summary.split(":")[0]: r.status.value for r in v.results if r.check == "fidelity"}
    assert fidelity == {f"default/{s}/num_examples": "pass" for s in ("train", "validation", "test")}


def test_evaluate_scores_with_the_declared_metric(tmp_path, capsys):
    """``metric.py``'s METRICS is all it takes: the generic ``benchsmith evaluate`` scores a
    SuperGLUE-format file (and refuses a bad line, exit 2, naming file and line)."""
    import json

    from benchsmith.cli import main

    release = TestSuperglueCopa.build(tmp_path / "registry")
    gold = release.table("default", "test").to_pylist()
    good = tmp_path / "test.jsonl"
    good.write_text("".join(json.dumps({"idx": r["idx"], "label": 1 - r["label"] if r["idx"] == 0 else r["label"]})
                            + "\n" for r in gold), encoding="utf-8")
    assert main(["evaluate", "superglue_copa", str(good), "--release", str(release.path), "--allow-unvalidated",
                 "--json"]) == 0
    score = json.loads(capsys.readouterr().out)["scores"]["accuracy"]
    assert score["score"] == pytest.approx(2 / 3) and (score["correct"], score["total"]) == (2, 3)
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"idx": 0, "label": 1}\n{"idx": 0, "label": 0}\n', encoding="utf-8")
    assert main(["evaluate", "superglue_copa", str(bad), "--release", str(release.path), "--allow-unvalidated"]) == 2
    assert f"{bad}:2: idx 0 is predicted twice" in capsys.readouterr().err
