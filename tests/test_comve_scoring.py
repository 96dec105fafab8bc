"""`benchsmith evaluate comve` on the fixture release: figures, and every bad submission."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from comve_helpers import GOOD, build

from benchsmith.builder import get_builder
from benchsmith.builders.comve.metric import ComVEAccuracy, ComVEBLEU, comve_metric
from benchsmith.errors import ConfigError, PredictionError
from benchsmith.scoring import evaluate
from benchsmith.validation.metric import Metric
from benchsmith.validation.metrics.accuracy import Accuracy
from benchsmith.validation.metrics.bleu import CorpusBLEU

# the fixture's test split: id -> (subtask A label, subtask B label, first reference)
TEST_GOLD = {
    "1175": ("1", "A", "A bed is too heavy to carry when strolling"),
    "452": ("1", "B", "An inverter cannot power an entire continent."),
    "275": ("1", "C", "Lemons are not a pizza topping."),
}


@pytest.fixture(scope="module")
def release(tmp_path_factory):
    return build(GOOD, tmp_path_factory.mktemp("comve-scoring") / "reg")


def evaluate_file(release, subtask: str, path: Path, split: str | None = None) -> dict:
    """What ``benchsmith evaluate comve PATH --subtask S [--split SPLIT] --json`` prints."""
    return evaluate(get_builder("comve"), release, path, split=split, options={"subtask": subtask})


def figure(out: dict) -> float:
    (score,) = out["scores"].values()
    return score["score"]


def _write(tmp_path: Path, text: str | bytes, name: str = "pred.csv") -> Path:
    p = tmp_path / name
    p.write_bytes(text if isinstance(text, bytes) else text.encode("utf-8"))
    return p


# (subtask, gold, predictions, metric, expected figure): the scorer as a table
METRIC_TABLE = [
    ("a", {"1": "0", "2": "1"}, {"1": "0", "2": "0"}, "accuracy", 0.5),
    ("B", {"1": "A", "2": "C", "3": "B"}, {"1": "A", "2": "C", "3": "B"}, "accuracy", 1.0),
    ("subtask_b", {"1": "A"}, {"1": "a"}, "accuracy", 0.0),  # exact match, as the official scorer
    ("c", {"1": ["the cat sat on the mat"]}, {"1": "the cat sat on the mat"}, "bleu", 100.0),
    ("c", {"1": ["a b c d", ""]}, {"1": "a b c"}, "bleu", 0.0),  # no 4-gram, no smoothing; "" skipped
]


@pytest.mark.parametrize(("subtask", "gold", "predictions", "metric", "expected"), METRIC_TABLE)
def test_metric_table(subtask, gold, predictions, metric, expected):
    score = comve_metric(subtask).score(predictions, gold)
    assert score.metric == metric and score.value == pytest.approx(expected)


def test_metric_signature_is_the_generic_metrics():
    a, c = comve_metric("a"), comve_metric("C")
    assert isinstance(a, ComVEAccuracy) and isinstance(c, ComVEBLEU) and isinstance(a, Metric)
    assert a.signature() == Accuracy().signature() and a.options() == {"match": "exact"}
    assert c.signature() == CorpusBLEU().signature() and "reflen:shortest" in c.signature()
    # per-call facts live in the result's signature only
    assert a.score({"1": "0", "2": "1"}, {"1": "0", "2": "1"}).signature == a.result_signature(n=2)
    assert c.score({"1": "x y"}, {"1": ["x y", "x z"]}).signature == f"nrefs:2|{c.signature()}"
    assert a.signature() == comve_metric("a").signature()  # scoring never changes it
    with pytest.raises(ConfigError, match="Valid names: a, b, c"):
        comve_metric("d")
    # the builder declares them: A and B accuracy, C BLEU
    builder = get_builder("comve")
    assert list(builder.metrics()) == ["accuracy", "bleu"]
    assert builder.metrics("subtask_b") == {"accuracy": ComVEAccuracy}
    assert builder.metrics("subtask_c") == {"bleu": ComVEBLEU}


def test_subtask_a_and_b_accuracy(release, tmp_path):
    a = _write(tmp_path, "".join(f"{i},{g[0]}\n" for i, g in TEST_GOLD.items()))
    assert figure(evaluate_file(release, "a", a)) == 1.0
    wrong = _write(tmp_path, "1175,0\n452,1\n275,0\n", "a2.csv")
    assert figure(evaluate_file(release, "a", wrong)) == pytest.approx(1 / 3)
    b = _write(tmp_path, "id,answer\n1175,A\n452,C\n275,C\n", "b.csv")  # a header row is skipped
    res = evaluate_file(release, "B", b)
    acc = res["scores"]["accuracy"]
    assert (acc["score"], acc["correct"], acc["total"], res["split"], res["config"]) == (
        pytest.approx(2 / 3), 2, 3, "test", "subtask_b")


def test_subtask_c_official_bleu(release, tmp_path):
    refs = _write(tmp_path, "".join(f'{i},"{g[2]}"\n' for i, g in TEST_GOLD.items()))
    res = evaluate_file(release, "c", refs)["scores"]["bleu"]
    assert res["score"] == pytest.approx(100.0)
    assert "reflen:shortest" in res["signature"] and "tok:whitespace" in res["signature"]
    # validation split, predictions that share nothing with the references
    other = _write(tmp_path, "1363,zzz\n392,zzz\n540,zzz\n", "c2.csv")
    assert figure(evaluate_file(release, "c", other, split="validation")) == 0.0


# bad submission (subtask A, test split) -> text the error must contain, line it names (None = file only)
BAD = {
    "missing": ("1175,1\n452,1\n", "no prediction for id '275'", None),
    "extra": ("1175,1\n452,1\n275,1\n9999,0\n", "id '9999', which is not in the test split", 4),
    "duplicate": ("1175,1\n452,1\n1175,0\n275,1\n", "duplicate prediction for id '1175'", 3),
    "bad_label": ("1175,1\n452,B\n275,1\n", "id '452' has answer 'B'", 2),
    "malformed_row": ("1175,1\n452,1,extra\n275,1\n", "row for id '452' has 3 column(s)", 2),
    "empty_id": ("1175,1\n,1\n275,1\n", "empty id", 2),
    "encoding": (b"1175,1\n452,\xff\n275,1\n", "invalid UTF-8", 2),
    "empty_file": ("", "no predictions", None),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_bad_predictions_name_the_id_and_line(case, release, tmp_path):
    text, needle, line = BAD[case]
    p = _write(tmp_path, text)
    with pytest.raises(PredictionError) as exc:
        evaluate_file(release, "a", p)
    assert needle in str(exc.value)
    assert exc.value.path == p and exc.value.line == line


def test_unknown_subtask_and_split(release, tmp_path):
    p = _write(tmp_path, "1175,1\n")
    with pytest.raises(ConfigError, match="Valid names: a, b, c"):
        evaluate_file(release, "d", p)
    with pytest.raises(ConfigError, match="'validation'"):
        evaluate_file(release, "a", p, split="valdation")
    with pytest.raises(ConfigError, match="say which ComVE subtask"):
        evaluate(get_builder("comve"), release, p)
    with pytest.raises(ConfigError, match="different subtasks"):
        evaluate(get_builder("comve"), release, p, config="subtask_b", options={"subtask": "a"})


def test_cli_json_is_one_object_and_errors_are_one_line(release, tmp_path, capsys):
    from benchsmith.cli import main

    p = _write(tmp_path, "".join(f"{i},{g[1]}\n" for i, g in TEST_GOLD.items()))
    assert main(["evaluate", "comve", "--allow-unvalidated", "--subtask", "b", str(p), "--release", str(release.path), "--json"]) == 0
    out = capsys.readouterr().out
    assert len(out.strip().splitlines()) == 1
    figures = json.loads(out)
    assert figures["scores"]["accuracy"]["score"] == 1.0 and figures["config"] == "subtask_b"
    assert figures["version"] == "1.1.0"
    # --config is the generic spelling of --subtask
    assert main(["evaluate", "comve", "--allow-unvalidated", str(p), "--config", "subtask_b", "--release", str(release.path), "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == figures

    bad = _write(tmp_path, "1175,A\n452,B\n", "bad.csv")
    code = main(["evaluate", "comve", "--allow-unvalidated", "--subtask", "b", str(bad), "--release", str(release.path), "--json"])
    captured = capsys.readouterr()
    assert code == 2 and captured.out == ""
    assert "no prediction for id '275'" in captured.err and "Traceback" not in captured.err
