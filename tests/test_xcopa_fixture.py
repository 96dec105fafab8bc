"""The XCOPA builder, checks, scoring and baselines on the hand-written fixture.

The fixture holds Estonian and Thai (3 validation + 3 test items each, with
back-translations) and five COPA dev / three COPA test items, in COPA's choice order
with COPA's labels; Thai says ``effect`` everywhere, which is wrong for validation
idx 2 (COPA 403) and test idx 0 (COPA 501).
"""

from __future__ import annotations

import dataclasses
import json

import pyarrow as pa
import pytest
import typer
from conftest import one_json, run_cli
from typer.testing import CliRunner
from xcopa_helpers import COPA_FIX, XCOPA_FIX, FixtureXcopa, build_fixture, sources_with

import benchsmith
from benchsmith.builders.xcopa import Xcopa
from benchsmith.builders.xcopa.agreement import fleiss, fleiss_by_language
from benchsmith.builders.xcopa.alignment import (
    RawData,
    derive_question_errata,
    question_errata_rows,
    question_errata_up_to_date,
)
from benchsmith.builders.xcopa.audit import text_lengths
from benchsmith.builders.xcopa.baseline import apply_variant, evaluate, features
from benchsmith.builders.xcopa.checks import (
    XcopaAgreement,
    XcopaBalance,
    XcopaConsistency,
    XcopaDiversity,
    XcopaPartialInput,
)
from benchsmith.builders.xcopa.metric import XcopaAccuracy
from benchsmith.cli.evaluate import evaluate_app
from benchsmith.erratum import read_errata_tsv, write_errata_tsv
from benchsmith.errors import ConfigError, ParseError, PredictionError
from benchsmith.expectation import read_published_yaml
from benchsmith.validation.check import Status
from benchsmith.validation.fidelity import FidelityCheck


@pytest.fixture(scope="module")
def releases(tmp_path_factory):
    reg = tmp_path_factory.mktemp("registry")
    return {v: build_fixture(reg, v) for v in ("1.0.0", "1.1.0")}


def _rows(release, config, split):
    return release.table(config, split).to_pylist()


def test_counts_and_english_split(releases):
    r = releases["1.0.0"]
    assert {c: {s: r.num_examples(c, s) for s in r.splits(c)} for c in r.configs()} == {
        "et": {"validation": 3, "test": 3}, "th": {"validation": 3, "test": 3},
        "translation-et": {"validation": 3, "test": 3}, "translation-th": {"validation": 3, "test": 3},
        "en": {"train": 2, "validation": 3, "test": 3},
    }
    en_val = _rows(r, "en", "validation")
    assert [(e["idx"], e["copa_id"]) for e in en_val] == [(0, 401), (1, 402), (2, 403)]
    assert [(e["idx"], e["copa_id"]) for e in _rows(r, "en", "train")] == [(0, 1), (1, 2)]
    assert [e["copa_id"] for e in _rows(r, "en", "test")] == [501, 502, 503]
    assert en_val[0]["choice1"] == "The toilet filled with water."  # COPA's order, as XCOPA's
    assert [e["label"] for e in en_val] == [_copa_label(401), _copa_label(402), _copa_label(403)]


def _copa_label(item_id: int) -> int:
    """COPA's answer for a fixture item, read from the XML itself (not a constant)."""
    import xml.etree.ElementTree as ET

    root = ET.parse(COPA_FIX / "datasets/copa-dev.xml").getroot()
    (item,) = [i for i in root if i.get("id") == str(item_id)]
    return int(item.get("most-plausible-alternative")) - 1


def test_version_1_0_0_reproduces_upstream(releases):
    """Every field as upstream wrote it, ``question`` included (a string, as in the jsonl)."""
    r = releases["1.0.0"]
    for config, folder in (("th", "data"), ("translation-th", "data-gmt"), ("et", "data")):
        lang = config.split("-")[-1]
        for split, stem in (("validation", "val"), ("test", "test")):
            upstream = [json.loads(x) for x in (XCOPA_FIX / folder / lang / f"{stem}.{lang}.jsonl").read_text("utf-8").splitlines()]
            assert _rows(r, config, split) == upstream
    assert r.info.to_dict()["errata_applied"] == []
    assert [e["id"] for e in r.info.to_dict()["errata_pending"]] == ["xcopa-th-question"]


def test_version_1_1_0_fixes_thai_questions_only(releases):
    old, new = releases["1.0.0"], releases["1.1.0"]
    assert [x["question"] for x in _rows(new, "th", "validation")] == ["effect", "effect", "cause"]
    assert [x["question"] for x in _rows(new, "th", "test")] == ["cause", "effect", "effect"]
    assert [x["question"] for x in _rows(new, "translation-th", "test")] == ["cause", "effect", "effect"]
    (erratum,) = new.info.to_dict()["errata_applied"]
    assert erratum["id"] == "xcopa-th-question"
    assert sorted(erratum["items"]) == sorted(
        ["th/validation/2", "th/test/0", "translation-th/validation/2", "translation-th/test/0"]
    )
    for config in ("et", "translation-et", "en"):  # untouched configs keep their fingerprints
        for split in new.splits(config):
            assert new.split_info(config, split)["fingerprint"] == old.split_info(config, split)["fingerprint"]
    for config in ("th", "translation-th"):
        assert new.split_info(config, "test")["fingerprint"] != old.split_info(config, "test")["fingerprint"]


def test_fixture_tables_are_what_the_derivation_finds():
    raw = RawData.read(XCOPA_FIX, COPA_FIX, languages=["et", "th"])
    errata = derive_question_errata(raw)
    assert [(e.lang, e.split, e.idx, e.upstream, e.fixed) for e in errata] == [
        ("th", "validation", 2, "effect", "cause"), ("th", "test", 0, "effect", "cause"),
    ]
    table = XCOPA_FIX / "_tables/errata.generated.tsv"
    assert FixtureXcopa.generated_errata_path() == table  # generated_errata_path() honours tables_dir
    (erratum,) = read_errata_tsv(table)
    assert (erratum.id, erratum.version) == ("xcopa-th-question", "1.1.0")
    assert [(r.key, r.field, r.old, r.new) for r in erratum.rows] == [
        ("th/validation/2", "question", "effect", "cause"), ("th/test/0", "question", "effect", "cause"),
        ("translation-th/validation/2", "question", "effect", "cause"),
        ("translation-th/test/0", "question", "effect", "cause"),
    ]
    assert erratum.rows[0].evidence == (
        "datasets/copa-dev.xml item 403 asks-for=cause; 1/1 other XCOPA languages say cause")
    assert [r.cells() for r in erratum.rows] == [r.cells() for r in question_errata_rows(errata)]
    assert question_errata_up_to_date(table, errata)
    assert not question_errata_up_to_date(table, errata[:1])


def _tables_without(tmp_path, drop_item=None, change=None, copy_to=None):
    """A FixtureXcopa reading a copy of the fixture's errata.tsv without one row, with one cell
    changed, or with a copy of the first row for another item appended."""
    table = read_errata_tsv(XCOPA_FIX / "_tables/errata.generated.tsv")
    rows = [r for e in table for r in e.rows if r.key != drop_item]
    if change:
        key, fld, value = change
        rows = [r if r.key != key else dataclasses.replace(r, **{fld: value}) for r in rows]
    if copy_to:
        rows.append(dataclasses.replace(rows[0], item=copy_to))
    write_errata_tsv(tmp_path / "errata.tsv", rows)
    return type("Tables", (FixtureXcopa,), {"tables_dir": tmp_path})


@pytest.mark.parametrize("version", ["1.0.0", "1.1.0"])
def test_a_disagreement_without_its_row_stops_the_build(tmp_path, version):
    """The join check reads errata.tsv through errata(), per config: data-gmt needs its own rows."""
    builder = _tables_without(tmp_path, drop_item="translation-th/validation/2")
    registry = tmp_path / "registry"
    with pytest.raises(ParseError) as err:
        build_fixture(registry, version, builder=builder)
    assert "errata.tsv has no matching row for translation-th/validation/2" in str(err.value)
    assert f"{XCOPA_FIX / 'data-gmt/th/val.th.jsonl'}:3: " in str(err.value)
    assert not (registry / "xcopa" / version).exists()


def test_an_erratum_whose_fix_is_not_copas_value_stops_the_build(tmp_path):
    builder = _tables_without(tmp_path, change=("th/test/0", "new", "effect"))
    with pytest.raises(ParseError) as err:
        build_fixture(tmp_path / "registry", "1.0.0", builder=builder)
    assert "sets th/test/0 question to 'effect', but COPA item 501 asks for 'cause'" in str(err.value)
    assert f"{tmp_path / 'errata.tsv'}:3: " in str(err.value)  # header on line 1, the row on line 3


def test_an_erratum_for_an_item_that_agrees_with_copa_stops_the_build(tmp_path):
    """A stale row would turn a correct question into a wrong one: the join refuses it."""
    builder = _tables_without(tmp_path, copy_to="1")  # th/validation/1 is COPA 402, which asks for the effect
    with pytest.raises(ParseError) as err:
        build_fixture(tmp_path / "registry", "1.1.0", builder=builder)
    assert "changes the question of th/validation/1, which already agrees with COPA item 402" in str(err.value)
    assert f"{tmp_path / 'errata.tsv'}:6: " in str(err.value)  # header, then four rows, then the copy


def test_an_erratum_whose_old_value_is_not_upstreams_stops_the_build(tmp_path):
    builder = _tables_without(tmp_path, change=("th/validation/2", "old", "cause"))
    with pytest.raises(ParseError) as err:
        build_fixture(tmp_path / "registry", "1.0.0", builder=builder)
    assert ("errata.tsv has no matching row for th/validation/2 (its row, line 2, has old='cause')"
            in str(err.value))
    assert f"{XCOPA_FIX / 'data/th/val.th.jsonl'}:3: " in str(err.value)


class _ReversedEnglish:
    """A release whose ``en/validation`` idx 0 has its alternatives and answer exchanged,
    as the earlier shared copy of copa-dev.xml had on 55 items."""

    def __init__(self, release):
        self._release = release

    def __getattr__(self, name):
        return getattr(self._release, name)

    def table(self, config, split, columns=None):
        import pyarrow as pa

        table = self._release.table(config, split, columns)
        if (config, split) != ("en", "validation"):
            return table
        rows = table.to_pylist()
        r = rows[0]
        r["choice1"], r["choice2"], r["label"] = r["choice2"], r["choice1"], 1 - r["label"]
        return pa.Table.from_pylist(rows, schema=table.schema)


def test_consistency_check_warns_then_passes_then_fails(releases):
    check = XcopaConsistency()
    old = {r.config: r for r in check.run(releases["1.0.0"])}
    assert old["th"].status == Status.WARN and old["th"].metrics["validation_question_differs"] == 1
    assert old["et"].status == Status.PASS
    assert (old["et"].metrics["validation_labels_agree"], old["et"].metrics["test_labels_agree"]) == (3, 3)
    assert old["*/validation"].status == Status.PASS
    assert old["*/validation"].metrics["order_reversed"] == 0 and old["*/validation"].metrics["order_agrees"] == 3
    new = {r.config: r for r in check.run(releases["1.1.0"])}
    assert all(r.status == Status.PASS for r in new.values())
    # the earlier copy's defect: English alternatives and answer exchanged on one item
    bad = {r.config: r for r in check.run(_ReversedEnglish(releases["1.1.0"]))}
    assert bad["*/validation"].status == Status.FAIL
    assert bad["*/validation"].details["order_reversed_idx"] == [0]
    assert bad["et"].status == Status.FAIL and bad["et"].details["validation"]["label_differs_idx"] == [0]
    assert bad["*/test"].status == Status.PASS


MALFORMED = XCOPA_FIX / "_malformed"


@pytest.mark.parametrize(
    "rel, twin, line, fragment",
    [
        ("xcopa/data/et/val.et.jsonl", MALFORMED / "bad-label.val.et.jsonl", 2, "label is 2"),
        ("xcopa/data/et/val.et.jsonl", MALFORMED / "missing-field.val.et.jsonl", 3, "missing fields ['choice2']"),
        ("xcopa/data/et/val.et.jsonl", MALFORMED / "unaligned-idx.val.et.jsonl", 3, "idx 7 does not align"),
        ("xcopa/data/et/val.et.jsonl", MALFORMED / "label-disagrees.val.et.jsonl", 2, "disagrees with COPA item 402"),
        ("xcopa/data/et/val.et.jsonl", MALFORMED / "unlisted-question.val.et.jsonl", 3, "errata.tsv has no matching row"),
        ("copa/datasets/copa-dev.xml", COPA_FIX / "_malformed/copa-dev.bad-asks-for.xml", 19, "asks-for is 'reason'"),
        ("copa/datasets/copa-test.xml", COPA_FIX / "_malformed/copa-test.duplicate-id.xml", 9, "repeats"),
    ],
)
def test_malformed_input_stops_the_build_and_leaves_nothing(tmp_path, rel, twin, line, fragment):
    sources = sources_with(tmp_path, {rel: twin})
    registry = tmp_path / "registry"
    with pytest.raises(ParseError) as err:
        build_fixture(registry, "1.1.0", sources)
    assert fragment in str(err.value)
    assert f"{sources / rel}:{line}: " in str(err.value)
    leftovers = list((registry / "xcopa").iterdir()) if (registry / "xcopa").exists() else []
    assert leftovers == []


# ------------------------------------------------------------------ scoring


def _write_jsonl(path, rows):
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def score(release, path, split: str | None = None) -> dict:
    """What ``benchsmith evaluate xcopa PATH [--split S] --json`` prints for its one metric."""
    from benchsmith.builder import get_builder
    from benchsmith.scoring import evaluate

    return evaluate(get_builder("xcopa"), release, path, split=split)["scores"]["xcopa-accuracy"]


def test_scoring_per_language_and_average(releases, tmp_path):
    r = releases["1.1.0"]
    gold = {c: {x["idx"]: x["label"] for x in _rows(r, c, "test")} for c in ("et", "th")}
    rows = [{"lang": c, "idx": i, "label": y} for c in gold for i, y in gold[c].items()]
    rows[0]["label"] = 1 - rows[0]["label"]  # one mistake in et
    result = score(r, _write_jsonl(tmp_path / "p.jsonl", rows))
    assert result["languages"]["et"] == {"accuracy": 2 / 3, "correct": 2, "total": 3}
    assert result["languages"]["th"]["accuracy"] == 1.0
    assert result["average"] == pytest.approx((2 / 3 + 1) / 2)
    assert result["average_over"] == ["et", "th"] and result["complete"] is False
    assert result["signature"] == (
        f"xcopa-accuracy:1|match:exact|average:macro|benchsmith:{benchsmith.__version__}"
        "|dataset:xcopa-1.1.0|split:test|languages:2")
    csv_path = tmp_path / "p.csv"
    csv_path.write_text("lang,idx,label\n" + "".join(f"{x['lang']},{x['idx']},choice{x['label'] + 1}\n" for x in rows))
    assert score(r, csv_path)["languages"] == result["languages"]


@pytest.mark.parametrize(
    "wrong, accuracy",
    [(0, 1.0), (1, 2 / 3), (2, 1 / 3), (3, 0.0)],  # et test has 3 items; th is always right
)
def test_xcopa_accuracy_table(releases, tmp_path, wrong, accuracy):
    r = releases["1.1.0"]
    rows = [{"lang": c, "idx": x["idx"], "label": x["label"]}
            for c in ("et", "th") for x in _rows(r, c, "test")]
    for row in rows[:wrong]:
        row["label"] = 1 - row["label"]
    metric = XcopaAccuracy()
    before = metric.signature()
    assert metric.target(r, None, None) == (None, "test") and metric.target(r, "et", None) == ("et", "test")
    gold = metric.references(r, None, "test")
    result = metric.score(metric.read_predictions(_write_jsonl(tmp_path / "p.jsonl", rows), gold), gold)
    assert result.details["languages"]["et"]["accuracy"] == pytest.approx(accuracy)
    assert result.value == result.details["average"] == pytest.approx((accuracy + 1.0) / 2)
    assert metric.signature() == before
    assert before == f"xcopa-accuracy:1|match:exact|average:macro|benchsmith:{benchsmith.__version__}"
    assert result.signature.startswith(before + "|")
    # in memory: the same figures without a file
    preds = {c: {x["idx"]: x["label"] for x in rows if x["lang"] == c} for c in ("et", "th")}
    assert metric.score(preds, gold) == result


@pytest.mark.parametrize(
    "rows, line, fragment",
    [
        ([{"lang": "xx", "idx": 0, "label": 0}], 1, "unknown language 'xx'"),
        ([{"lang": "et", "idx": 0, "label": 0}, {"lang": "et", "idx": 0, "label": 1}], 2, "predicted twice"),
        ([{"lang": "et", "idx": 0, "label": 3}], 1, "label 3"),
        ([{"lang": "et", "idx": 0}], 1, "missing ['label']"),
        ([{"lang": "et", "idx": i, "label": 0} for i in range(3)] + [{"lang": "et", "idx": 9, "label": 0}], 4, "no idx 9"),
        ([{"lang": "et", "idx": 0, "label": 0}], None, "no prediction for idx 1"),
        ([{"lang": "et", "idx": 0, "label": [0]}], 1, "label [0]"),  # unhashable: was a TypeError
        ([{"lang": "et", "idx": 1.5, "label": 0}], 1, "idx 1.5 is not an integer"),  # was read as idx 1
    ],
)
def test_bad_predictions(releases, tmp_path, rows, line, fragment):
    path = _write_jsonl(tmp_path / "p.jsonl", rows)
    with pytest.raises(PredictionError) as err:
        score(releases["1.1.0"], path)
    assert fragment in str(err.value)
    assert err.value.line == line and str(path) in str(err.value)


@pytest.mark.parametrize("name", ["p.jsonl", "p.csv"])
def test_predictions_that_are_not_utf8_name_the_line(releases, tmp_path, name):
    path = tmp_path / name
    path.write_bytes(b'{"lang": "et", "idx": 0, "label": 0}\n{"lang": "\xff"}\n' if name.endswith(".jsonl")
                     else b"lang,idx,label\net,0,0\net,1,\xff\n")
    with pytest.raises(PredictionError, match="invalid UTF-8") as err:
        score(releases["1.1.0"], path)
    assert err.value.line == (2 if name.endswith(".jsonl") else 3) and str(path) in str(err.value)


def test_csv_predictions_with_a_bom(releases, tmp_path):
    rows = [f"et,{x['idx']},{x['label']}\n" for x in _rows(releases["1.1.0"], "et", "test")]
    path = tmp_path / "p.csv"
    path.write_text("\ufefflang,idx,label\n" + "".join(rows), encoding="utf-8")  # as spreadsheets save it
    assert score(releases["1.1.0"], path)["languages"]["et"]["accuracy"] == 1.0


def test_unknown_split_is_a_config_error(releases, tmp_path):
    path = _write_jsonl(tmp_path / "p.jsonl", [{"lang": "et", "idx": 0, "label": 0}])
    with pytest.raises(ConfigError, match="Did you mean 'validation'"):  # not the predictions' fault
        score(releases["1.1.0"], path, split="valdation")


def test_evaluate_command_prints_one_json_object(releases, tmp_path):
    r = releases["1.1.0"]
    rows = [{"lang": "et", "idx": x["idx"], "label": x["label"]} for x in _rows(r, "et", "validation")]
    path = _write_jsonl(tmp_path / "p.jsonl", rows)
    app = typer.Typer()
    app.add_typer(evaluate_app, name="evaluate")

    out = CliRunner().invoke(app, ["evaluate", "xcopa", "--allow-unvalidated", str(path), "--split", "validation",
                                   "--release", str(r.path), "--json"])
    assert out.exit_code == 0, out.output
    result = json.loads(out.stdout)
    assert result["scores"]["xcopa-accuracy"]["languages"] == {"et": {"accuracy": 1.0, "correct": 3, "total": 3}}
    assert result["split"] == "validation" and result["version"] == "1.1.0" and result["config"] is None
    # --config scores one language; a language of the file outside it is an error at its line
    out = CliRunner().invoke(app, ["evaluate", "xcopa", "--allow-unvalidated", str(path), "--split", "validation", "--config", "et",
                                   "--release", str(r.path), "--json"])
    assert out.exit_code == 0 and json.loads(out.stdout)["config"] == "et"


def test_evaluate_warns_about_missing_languages(releases, tmp_path, capsys):
    """A file with 1 of the 11 XCOPA languages scores (exit 0) and says on stderr which are missing."""
    r = releases["1.1.0"]
    rows = [{"lang": "et", "idx": x["idx"], "label": x["label"]} for x in _rows(r, "et", "test")]
    path = _write_jsonl(tmp_path / "p.jsonl", rows)
    code, out, err = run_cli(capsys, "evaluate", "xcopa", "--allow-unvalidated", str(path), "--release", str(r.path), "--json")
    assert code == 0, err
    result = one_json(out)["scores"]["xcopa-accuracy"]  # stdout stays one JSON object
    assert result["complete"] is False and result["average_over"] == ["et"]
    assert result["missing"] == ["ht", "id", "it", "qu", "sw", "ta", "th", "tr", "vi", "zh"]
    (warning,) = [line for line in err.splitlines() if line.startswith("warning:")]
    assert "covers 1 of 11 XCOPA languages; missing: ht, id, it, qu, sw, ta, th, tr, vi, zh" in warning
    code, out, err = run_cli(capsys, "evaluate", "xcopa", "--allow-unvalidated", str(path), "--release", str(r.path))
    assert code == 0 and "│ average_over │ et " in out and "signature: xcopa-accuracy:1|" in out
    every = [{"lang": c, "idx": x["idx"], "label": x["label"]} for c in ("et", "th") for x in _rows(r, c, "test")]
    code, out, err = run_cli(capsys, "evaluate", "xcopa", "--allow-unvalidated", str(_write_jsonl(tmp_path / "q.jsonl", every)),
                             "--release", str(r.path))
    assert code == 0 and "missing: ht, id, it, qu, sw, ta, tr, vi, zh" in err  # th is there now


# ------------------------------------------------------------------ agreement and baselines


@pytest.mark.parametrize(
    "labels, kappa",
    [
        ([[0, 0, 0], [1, 1, 1], [0, 0, 1], [1, 1, 0]], 1 / 3),  # by hand: P=2/3, Pe=1/2
        ([[0, 0], [1, 1]], 1.0),
        ([[0, 1], [1, 0]], -1.0),
    ],
)
def test_fleiss_kappa_table(labels, kappa):
    assert fleiss(labels) == pytest.approx(kappa)


def test_agreement_from_annotations_and_changed_counts(releases, tmp_path):
    ann = tmp_path / "ann.tsv"
    ann.write_text(
        "lang\tsplit\tidx\tannotator\tlabel\n"
        + "".join(f"et\ttest\t{i}\t{a}\t{y}\n" for i, ys in enumerate([[0, 0, 0], [1, 1, 1], [0, 0, 1], [1, 1, 0]])
                  for a, y in zip("ABC", ys)),
        encoding="utf-8",
    )
    assert fleiss_by_language(ann) == {"et": {"kappa": pytest.approx(0.3333, abs=1e-4), "items": 4, "annotators": 3}}
    (res,) = XcopaAgreement(ann).run(releases["1.1.0"])
    assert res.status == Status.WARN and "et 0.333" in res.summary
    agree = tmp_path / "agree.tsv"
    rows = "".join(f"et\ttest\t{i}\t{a}\t{i % 2}\n" for i in range(4) for a in "ABC")
    agree.write_text("lang\tsplit\tidx\tannotator\tlabel\n" + rows, encoding="utf-8")
    (res,) = XcopaAgreement(agree).run(releases["1.1.0"])
    assert res.status == Status.PASS and res.metrics["et"]["kappa"] == 1.0
    bad = tmp_path / "bad.tsv"
    bad.write_text("lang\tsplit\tidx\tannotator\tlabel\net\ttest\t0\tA\t0\nqq\ttest\t0\tB\t0\n", encoding="utf-8")
    with pytest.raises(ParseError, match="unknown language 'qq'") as err:
        fleiss_by_language(bad)
    assert err.value.line == 3
    uneven = tmp_path / "uneven.tsv"
    uneven.write_text("lang\tsplit\tidx\tannotator\tlabel\net\ttest\t0\tA\t0\net\ttest\t0\tB\t0\net\ttest\t1\tA\t1\n")
    with pytest.raises(ParseError, match="same number"):
        fleiss_by_language(uneven)


def test_agreement_over_translators_warns_then_passes(releases):
    """Without annotations the check recovers each translator's label from label and changed."""
    results = {r.config: r for r in XcopaAgreement(None).run(releases["1.1.0"])}
    assert set(results) == {"*/validation", "*/test"}
    val = results["*/validation"]
    assert val.metrics["changed"] == {"et": 1, "th": 0} and results["*/test"].metrics["changed"] == {"et": 0, "th": 1}
    assert val.metrics["majority_agreement"] == {"et": 66.7, "th": 100.0}  # 1 of 3 et labels was overridden
    # by hand: items (et, th) = (0,0), (1,1), (0,1) on labels 0, 1, 1 with et's idx 2 changed
    assert val.metrics["kappa"] == pytest.approx(fleiss([[0, 0], [1, 1], [0, 1]]), abs=1e-4)
    assert val.status == Status.WARN and "below 0.6" in val.summary
    agree = _TableRelease({lang: {"validation": [{"idx": i, "label": i % 2, "changed": False} for i in range(4)]}
                           for lang in ("et", "th")})
    (res,) = XcopaAgreement(None).run(agree)
    assert res.status == Status.PASS and res.metrics["kappa"] == 1.0
    lone = _TableRelease({"et": {"validation": [{"idx": 0, "label": 0, "changed": False}]}})
    assert XcopaAgreement(None).run(lone)[0].status == Status.SKIP


def test_translator_labels_reproduce_table3_cells(releases):
    """The published.yaml measures on the fixture: a Table 3 cell, Table 1's item; the figures about
    all 11 translators cannot be measured on two languages (ConfigError: the fidelity check skips)."""
    r = releases["1.1.0"]
    fig = read_published_yaml(Xcopa.data_path("published.yaml"))
    by_id = {f.id: f for f in fig}
    measures = FixtureXcopa("1.1.0").measures()
    assert measures["majority_agreement"](r, by_id["et/validation/majority_agreement"]) == pytest.approx(200 / 3, abs=1e-3)
    with pytest.raises(ConfigError, match="11 translators"):
        measures["translator_kappa"](r, by_id["translators/validation/fleiss_kappa"])
    from benchsmith.expectation import CORE_MEASURES

    with pytest.raises(ConfigError, match="model baseline"):
        CORE_MEASURES["model_baseline"](r, by_id["table5/CO-ZS/USE"])
    item = dataclasses.replace(by_id["th/validation/table1_example"], args={"idx": 2, "fields": ["question", "label"]})
    assert measures["item"](r, item) == {"question": "cause", "label": "choice2"}  # by name, fixed from 1.1.0
    # the fidelity check: a figure about a language the fixture lacks skips, never fails
    results = {x.details["key"]: x for x in FidelityCheck(Xcopa("1.1.0").expectations()).run(r)}
    assert results["et/validation/majority_agreement"].status == Status.FAIL  # the fixture is not the paper
    assert results["qu/validation/majority_agreement"].status == Status.SKIP
    assert results["translators/validation/fleiss_kappa"].status == Status.SKIP
    assert results["table5/CO-ZS/USE"].status == Status.SKIP and "benchsmith baseline xcopa" in results[
        "table5/CO-ZS/USE"].summary


def test_lengths_are_characters_and_segmented_words():
    """Thai and Chinese have no spaces between words: characters for all, words only with a segmenter."""
    rows = {
        "zh": [{"premise": "我想节约能源。", "choice1": "学生拼错了这个词。", "choice2": "我关了灯。"}],
        "th": [{"premise": "ตาของฉันแดงและบวม", "choice1": "ฉันร้องไห้", "choice2": "ฉันหัวเราะ"}],
        "en": [{"premise": "My eyes became red and puffy.", "choice1": "I was sobbing.", "choice2": "I was laughing."}],
    }
    lengths = text_lengths(_TableRelease({c: {"test": r} for c, r in rows.items()}))
    assert lengths["th"] == {"premise_chars": 17, "choice_chars": 10.0, "premise_words": None, "choice_words": None,
                             "words_by": None}
    assert lengths["zh"]["words_by"] == "jieba" and lengths["zh"]["premise_words"] >= 3  # 我 / 想 / 节约 / 能源
    assert lengths["zh"]["premise_chars"] == 7
    assert lengths["en"] == {"premise_chars": 29, "choice_chars": 14.5, "premise_words": 6, "choice_words": 3,
                             "words_by": "whitespace"}
    assert len(["ตาของฉันแดงและบวม"]) == 1  # what a whitespace count would say


def test_partial_input_variants_hide_what_they_say():
    ex = {"premise": "The man turned on the faucet.", "choice1": "Water flowed from the spout.",
          "choice2": "The toilet filled with water.", "question": 1, "label": 0, "idx": 0}
    nop, noq = apply_variant([ex], "NoP")[0], apply_variant([ex], "NoQ")[0]
    assert nop["premise"] == "" and nop["choice1"] == ex["choice1"] and ex["premise"]  # input untouched
    assert noq["question"] is None and noq["premise"] == ex["premise"]
    assert features(nop)[0] == 0.0 and features(nop)[2] == 0.0  # no premise, no overlap signal
    assert features(noq)[2:] == [0.0, 0.0]  # no question, no interaction
    assert features(ex)[0] > 0  # "water" overlaps choice1 more than choice2
    scores = evaluate([ex, {**ex, "choice1": ex["choice2"], "choice2": ex["choice1"], "label": 1}], {"t": [ex]})
    assert set(scores) == {"majority", "overlap-length-lr"} and set(scores["majority"]) == {"full", "NoP", "NoQ"}


def test_balance_check_warns_then_passes(releases):
    old = {r.config: r for r in XcopaBalance().run(releases["1.0.0"])}
    assert old["th"].status == Status.WARN  # Thai says effect where COPA 403 asks for the cause
    assert old["th"].details["question_vs_english"]["validation"] == {
        "here": {"effect": 3}, "english": {"cause": 1, "effect": 2}}
    assert old["et"].status == Status.PASS
    new = XcopaBalance().run(releases["1.1.0"])
    assert {r.status for r in new} == {Status.PASS}


class _TableRelease:
    """A stand-in release: ``{config: {split: rows}}``."""

    def __init__(self, data):
        self.data = data

    def configs(self):
        return list(self.data)

    def splits(self, config):
        return list(self.data[config])

    def table(self, config, split, columns=None):
        table = pa.Table.from_pylist(self.data[config][split])
        return table.select(columns) if columns else table


def _items(n, cue):
    """``n`` items with alternating labels; with ``cue`` the right choice is always the longer one."""
    out = []
    for i in range(n):
        # with the cue the right choice is longer; without it both have 3 characters
        right, wrong = ("it went on for a long while afterwards", "no") if cue else ("yes", "nah")
        c1, c2 = (right, wrong) if i % 2 == 0 else (wrong, right)
        out.append({"premise": "", "choice1": c1, "choice2": c2, "question": i % 2, "label": i % 2, "idx": i})
    return out


@pytest.mark.parametrize("cue, status", [(True, Status.WARN), (False, Status.PASS)])
def test_partial_input_check_warns_on_a_cue_and_passes_without(cue, status):
    release = _TableRelease({"et": {"test": _items(20, cue)},
                             "en": {"train": _items(40, cue), "test": _items(20, cue)}})
    (res,) = XcopaPartialInput().run(release)
    assert res.status == status, res.summary
    nop = res.metrics["overlap-length-lr"]["NoP"]["et"]
    assert nop == (1.0 if cue else 0.5)  # choices alone give the answer away only with the length cue


def test_diversity_is_a_stat(releases):
    (res,) = XcopaDiversity().run(releases["1.1.0"])
    assert res.status == Status.STAT
    assert res.metrics["languages"] == 2 and res.metrics["family"] == 1.0  # Uralic, Kra-Dai
    assert res.metrics["geography_bits"] == 0.0  # both Eurasia
    assert XcopaDiversity().run(_TableRelease({"en": {"test": []}}))[0].status == Status.SKIP


def test_uriel_vectors_come_from_the_cache_without_importing_lang2vec(tmp_path, monkeypatch):
    from benchsmith.builders.xcopa import diversity

    def imported():
        raise AssertionError("lang2vec imported")

    monkeypatch.setenv("BENCHSMITH_HOME", str(tmp_path))
    monkeypatch.setattr(diversity, "URIEL_SNAPSHOT", tmp_path / "no-snapshot.json")  # the cache alone
    diversity.uriel_syntax.cache_clear()  # the per-process cache would hide the disk one
    try:
        fresh = diversity.uriel_syntax(("est", "tha"))
        assert len(fresh["est"]) == 103 and (tmp_path / "cache" / diversity.URIEL_CACHE).is_file()
        diversity.uriel_syntax.cache_clear()
        with monkeypatch.context() as m:
            m.setattr(diversity, "_import_lang2vec", imported)
            assert diversity.uriel_syntax(("est", "tha")) == fresh  # the same floats, from the file
            assert diversity.uriel_syntax(("tha",)) == {"tha": fresh["tha"]}
            with pytest.raises(AssertionError, match="lang2vec imported"):  # a language not read yet
                diversity.uriel_syntax(("est", "ita"))
            with pytest.raises(AssertionError, match="lang2vec imported"):  # a feature set not read yet
                diversity.uriel_syntax(("est",), "syntax_wals")
            m.setattr(diversity, "_lang2vec_version", lambda: "0.0-other")
            diversity.uriel_syntax.cache_clear()
            with pytest.raises(AssertionError, match="lang2vec imported"):  # another lang2vec
                diversity.uriel_syntax(("est", "tha"))
        diversity.uriel_syntax.cache_clear()
        assert diversity.uriel_syntax(("est", "ita"))["est"] == fresh["est"]  # lang2vec again, added to the file
    finally:
        diversity.uriel_syntax.cache_clear()


def test_uriel_snapshot_is_what_lang2vec_gives_and_spares_its_import(tmp_path, monkeypatch):
    import json

    from benchsmith.builders.xcopa import diversity

    snapshot = json.loads(diversity.URIEL_SNAPSHOT.read_text(encoding="utf-8"))
    langs = tuple(snapshot["sets"][diversity.URIEL_FEATURE_SET])
    monkeypatch.setenv("BENCHSMITH_HOME", str(tmp_path))
    diversity.uriel_syntax.cache_clear()
    try:
        with monkeypatch.context() as m:  # a fresh home: the snapshot alone, lang2vec not imported
            m.setattr(diversity, "_import_lang2vec", lambda: pytest.fail("lang2vec imported"))
            shipped = diversity.uriel_syntax(langs)
        monkeypatch.setattr(diversity, "URIEL_SNAPSHOT", tmp_path / "no-snapshot.json")
        diversity.uriel_syntax.cache_clear()
        assert diversity.uriel_syntax(langs) == shipped  # lang2vec's own vectors, recomputed
        assert snapshot["lang2vec"] == diversity._lang2vec_version()
    finally:
        diversity.uriel_syntax.cache_clear()


@pytest.mark.parametrize("text, fragment", [
    ('{"lang": "et", "idx": ' + "9" * 5000 + ', "label": 0}\n', "more than 4300 digits"),
    ("[" * 50_000 + "\n", "nested too deeply"),  # under the 64 KiB line bound
])
def test_hostile_json_predictions_are_one_line_errors(releases, tmp_path, text, fragment):
    path = tmp_path / "p.jsonl"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(PredictionError, match=fragment) as err:
        score(releases["1.1.0"], path)
    assert err.value.line == 1 and str(path) in str(err.value)


def test_evaluate_refuses_gold_data_changed_on_disk(releases, tmp_path, capsys):
    import shutil

    from conftest import run_cli

    copy = tmp_path / "xcopa" / "1.1.0"
    shutil.copytree(releases["1.1.0"].path, copy)
    shard = next((copy / "data" / "et").glob("test-*.parquet"))
    data = bytearray(shard.read_bytes())
    data[len(data) // 2] ^= 0xFF  # a flipped byte: the manifest still has the old sha256
    shard.write_bytes(bytes(data))
    preds = _write_jsonl(tmp_path / "p.jsonl", [{"lang": "et", "idx": i, "label": 0} for i in range(3)])
    code, out, err = run_cli(capsys, "evaluate", "xcopa", "--allow-unvalidated", str(preds), "--release", str(copy))
    assert code == 2 and out == "" and "changed on disk" in err and "sha256 differs" in err
