"""MuCoW scorers as tables of hand-made inputs and expected numbers, and `benchsmith evaluate mucow`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import benchsmith
from benchsmith.builder import get_builder
from benchsmith.builders.mucow.metric import MucowScoringAccuracy, MucowTranslationPRF, read_scores
from benchsmith.cli import main
from benchsmith.errors import ConfigError, PredictionError
from benchsmith.release import ReleaseWriter
from benchsmith.source import resolve_sources

FIX = Path(__file__).parent / "fixtures" / "mucow"


def item(word: str, sense: str, corpus: str, n: int) -> dict:
    return {"ambiguous_word": word, "sense": sense, "corpus": corpus, "contrastive_translations": ["x"] * n}


ITEMS = [item("vazba", "custody", "europarl", 2), item("vazba", "bond", "opensubs", 1), item("vazba", "custody", "opensubs", 0)]

# scores in ContraWSD order: item0 ref, c, c; item1 ref, c; item2 ref
SCORING_TABLE = [
    # scores,                         maximize, correct per item
    ([1.0, 2.0, 3.0, 2.0, 1.0, 9.0], False, [True, False, True]),
    ([1.0, 2.0, 3.0, 2.0, 1.0, 9.0], True, [False, True, True]),
    ([1.0, 1.0, 3.0, 1.0, 1.0, 0.0], False, [False, False, True]),  # ties are wrong both ways
    ([1.0, 1.0, 3.0, 1.0, 1.0, 0.0], True, [False, False, True]),
    ([-5.0, -1.0, -2.0, -3.0, -1.0, 0.0], False, [True, True, True]),  # log-probs the wrong way up
]


@pytest.mark.parametrize("scores, maximize, correct", SCORING_TABLE)
def test_scoring_accuracy_table(scores, maximize, correct):
    out = MucowScoringAccuracy(maximize).score(scores, ITEMS).to_dict()
    assert out["score"] == out["accuracy"]
    assert (out["correct"], out["total"]) == (sum(correct), 3)
    assert out["accuracy"] == pytest.approx(sum(correct) / 3)
    assert out["by_corpus"]["europarl"]["correct"] == correct[0]
    assert out["by_corpus"]["opensubs"]["correct"] == correct[1] + correct[2]
    assert out["by_word_sense"]["vazba:custody"] == {"correct": correct[0] + correct[2], "total": 2,
                                                     "accuracy": (correct[0] + correct[2]) / 2}
    assert out["by_word_sense"]["vazba:bond"]["total"] == 1


def test_scoring_signature_names_the_options():
    sig = MucowScoringAccuracy(True).result_signature(pair="cs-en", items=3)
    assert "better:higher" in sig and "ties:wrong" in sig and "pair:cs-en" in sig and "items:3" in sig


SIGNATURES = [
    # metric, signature() before "|benchsmith:X" (the name, version and options alone)
    (MucowScoringAccuracy(), "mucow-scoring-accuracy:1|better:lower|ties:wrong|order:contrawsd|no-contrastive:correct"),
    (MucowScoringAccuracy(True), "mucow-scoring-accuracy:1|better:higher|ties:wrong|order:contrawsd|no-contrastive:correct"),
    (MucowTranslationPRF("de"), ("mucow-translation-prf:1|tok:moses-de|case:lower|fallback:lemmatized|both-found:wrong|"
                                 "recall:pos/(pos+neg+unk)")),
]


@pytest.mark.parametrize("metric, options", SIGNATURES)
def test_signature_is_the_options_then_the_version(metric, options):
    assert metric.signature() == f"{options}|benchsmith:{benchsmith.__version__}"


def test_signature_does_not_depend_on_the_last_call_and_results_carry_their_facts():
    metric = MucowScoringAccuracy()
    before = metric.signature()
    out = MucowScoringAccuracy(pair="cs-en").score(SCORING_TABLE[0][0], ITEMS)
    assert MucowScoringAccuracy(pair="cs-en").signature() == before  # the pair is a fact of the call
    assert out.signature == f"{before}|pair:cs-en|items:3"
    assert metric.score(SCORING_TABLE[0][0], ITEMS).signature == f"{before}|items:3"  # no pair given
    assert metric.signature() == before
    prf = MucowTranslationPRF("de", pair="en-de")
    assert prf.score(list(zip(TRANSLATIONS, LEMMAS)), T_ITEMS).signature == f"{prf.signature()}|pair:en-de|items:5"
    assert prf.signature() == SIGNATURES[2][0].signature()


@pytest.mark.parametrize("make", [lambda: MucowScoringAccuracy("yes"), lambda: MucowTranslationPRF(""),
                                  lambda: MucowTranslationPRF(3)])
def test_bad_options_are_config_errors(make):
    with pytest.raises(ConfigError):
        make()


def test_translation_prf_takes_its_language_from_the_suite():
    """``lang=None`` (benchsmith evaluate): the suite's config names it (for_release); scoring without one is an error."""
    with pytest.raises(ConfigError, match="needs the target language"):
        MucowTranslationPRF().score(list(zip(TRANSLATIONS, LEMMAS)), T_ITEMS)


def test_wrong_number_of_scores_is_a_prediction_error():
    with pytest.raises(PredictionError, match="5 scores; expected 6"):
        MucowScoringAccuracy().score([0.0] * 5, ITEMS)
    with pytest.raises(PredictionError, match="4 translations for 5 items"):
        MucowTranslationPRF("de").score(list(zip(TRANSLATIONS[:4], LEMMAS)), T_ITEMS)


T_ITEMS = [
    {"ambiguous_word": "accelerator", "correct_words": ["gaspedal"], "incorrect_words": ["teilchenbeschleuniger", "beschleuniger"], "domain": 1},
    {"ambiguous_word": "accelerator", "correct_words": ["teilchenbeschleuniger", "beschleuniger"], "incorrect_words": ["gaspedal"], "domain": 0},
    {"ambiguous_word": "accelerator", "correct_words": ["gaspedal"], "incorrect_words": ["teilchenbeschleuniger", "beschleuniger"], "domain": 1},
    {"ambiguous_word": "accelerator", "correct_words": ["teilchenbeschleuniger", "beschleuniger"], "incorrect_words": ["gaspedal"], "domain": 0},
    {"ambiguous_word": "bank", "correct_words": ["bank"], "incorrect_words": ["ufer"], "domain": 0},
]
TRANSLATIONS = [
    "Sie traten aufs Gaspedal.",                         # correct word, tokenised + lower-cased: pos (out)
    "Der Beschleuniger und das Gaspedal.",               # correct and incorrect: neg (in)
    "Sie gaben Gas.",                                    # nothing in tokens; lemma has the correct word: pos (out)
    "Die Maschine ist riesig.",                          # nothing anywhere: unk (in)
    "Am Ufer.",                                          # incorrect only: neg (in)
]
LEMMAS = [
    "sie treten auf der gaspedal .",
    "der beschleuniger und der gaspedal .",
    "sie geben gas gaspedal .",
    "der maschine sein riesig .",
    "an der ufer .",
]


def test_translation_prf_table():
    out = MucowTranslationPRF("de").score(list(zip(TRANSLATIONS, LEMMAS)), T_ITEMS).to_dict()
    assert out["score"] == out["f"]
    assert (out["positive"], out["negative"], out["unknown"]) == (2, 2, 1)
    assert out["precision"] == pytest.approx(2 / 4)
    assert out["recall"] == pytest.approx(2 / 5)  # the paper's definition: pos / (pos + neg + unk)
    assert out["f"] == pytest.approx(2 * 0.5 * 0.4 / 0.9)
    assert out["recall_tables"] == pytest.approx(2 / 3)  # what the WMT19 tables used: pos / (pos + unk)
    assert out["coverage"] == pytest.approx(4 / 5)
    assert (out["out_of_domain"]["positive"], out["out_of_domain"]["total"]) == (2, 2)
    assert out["out_of_domain"]["precision"] == 1.0 and out["out_of_domain"]["recall"] == 1.0
    assert (out["in_domain"]["positive"], out["in_domain"]["negative"], out["in_domain"]["unknown"]) == (0, 2, 1)
    assert out["in_domain"]["precision"] == 0.0 and out["in_domain"]["f"] == 0.0
    assert out["by_word"]["bank"]["negative"] == 1


def test_read_scores_errors_name_file_and_line(tmp_path):
    f = tmp_path / "s.txt"
    f.write_text("1.0\n2.0\nnope\n", encoding="utf-8")
    with pytest.raises(PredictionError) as exc:
        read_scores(f, 3)
    assert exc.value.path == f and exc.value.line == 3
    f.write_text("1.0\n2.0\n", encoding="utf-8")
    with pytest.raises(PredictionError, match="2 scores; expected 3") as exc:
        read_scores(f, 3)
    assert exc.value.line == 3


# ----------------------------------------------------------------------------- CLI


@pytest.fixture(scope="module")
def release(tmp_path_factory):
    b = get_builder("mucow")
    sources = resolve_sources(b.sources, {}, FIX, allow_missing=True)
    return ReleaseWriter(b, tmp_path_factory.mktemp("ereg"), sources, skip_missing=True).write()


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_cli_scoring(release, tmp_path, capsys):
    scores = tmp_path / "scores.txt"
    scores.write_text("\n".join(map(str, SCORING_TABLE[0][0])) + "\n", encoding="utf-8")
    code, out, _ = run(capsys, "evaluate", "mucow", "--allow-unvalidated", "--pair", "cs-en", "--release", str(release.path),
                       "--scores", str(scores), "--json")
    assert code == 0
    whole = json.loads(out)
    res = whole["scores"]["mucow-scoring-accuracy"]
    assert (res["correct"], res["total"], whole["config"]) == (2, 3, "scoring-cs-en")
    assert res["by_word_sense"]["vazba:detention_custody"]["correct"] == 2
    assert res["signature"].startswith("mucow-scoring-accuracy:1|")
    assert res["signature"] == f"{MucowScoringAccuracy().signature()}|pair:cs-en|items:3"
    code, out, _ = run(capsys, "evaluate", "mucow", "--allow-unvalidated", "--pair", "cs-en", "--release", str(release.path),
                       "--scores", str(scores), "--maximize", "--json")
    res = json.loads(out)["scores"]["mucow-scoring-accuracy"]
    assert res["correct"] == 2 and "better:higher" in res["signature"]
    # the generic spellings: PREDICTIONS (the scoring suite is the only suite of cs-en), and --config
    for argv in ([str(scores), "--pair", "cs-en"], [str(scores), "--config", "scoring-cs-en"],
                 [str(scores), "--pair", "cs-en", "--metric", "mucow-scoring-accuracy"]):
        code, out, err = run(capsys, "evaluate", "mucow", "--allow-unvalidated", *argv, "--release", str(release.path), "--json")
        assert code == 0, err
        assert json.loads(out)["scores"]["mucow-scoring-accuracy"] == whole["scores"]["mucow-scoring-accuracy"]


def test_cli_translation(release, tmp_path, capsys):
    hyp, lem = tmp_path / "hyp.txt", tmp_path / "lem.txt"
    hyp.write_text("\n".join(TRANSLATIONS[:4]) + "\n", encoding="utf-8")
    lem.write_text("\n".join(LEMMAS[:4]) + "\n", encoding="utf-8")
    code, out, _ = run(capsys, "evaluate", "mucow", "--allow-unvalidated", "--pair", "en-de", "--release", str(release.path),
                       "--translations", str(hyp), "--lemmatized", str(lem), "--json")
    assert code == 0
    res = json.loads(out)["scores"]["mucow-translation-prf"]
    # the fixture's en-de keys are T_ITEMS[:4]: pos, neg, pos, unk
    assert (res["positive"], res["negative"], res["unknown"]) == (2, 1, 1)
    assert res["precision"] == pytest.approx(2 / 3) and res["recall"] == pytest.approx(2 / 4)
    assert "tok:moses-de" in res["signature"]
    assert res["signature"] == f"{MucowTranslationPRF('de').signature()}|pair:en-de|items:4"


@pytest.mark.parametrize(
    "args, words",
    [
        (["--pair", "cs-en"], "no predictions file. Pass PREDICTIONS or --scores FILE"),
        (["--pair", "en-de", "--translations", "X"], "mucow-translation-prf needs --lemmatized"),
        (["--pair", "en-de", "--translations", "X", "--lemmatized", "X", "--maximize"],
         "--maximize is an option of mucow-scoring-accuracy, not of mucow-translation-prf"),
        (["--pair", "cs-en", "--scores", "S", "--translations", "X"], "--scores and --translations both name"),
        (["S", "--pair", "cs-en", "--scores", "S"], "PREDICTIONS and --scores both name"),
        (["S", "--pair", "cs-en", "--metric", "accuracy"], "mucow has no metric 'accuracy'"),
        (["--pair", "en-de", "--lemmatized", "X"], "no predictions file"),
        (["--pair", "ro-en", "--scores", "S"], "its upstream file was absent"),
        (["--pair", "xx-en", "--scores", "S"], "no scoring suite for pair 'xx-en'"),
    ],
)
def test_cli_usage_errors(release, tmp_path, capsys, args, words):
    (tmp_path / "S").write_text("1\n", encoding="utf-8")
    argv = [a if a not in ("S", "X") else str(tmp_path / a) for a in args]
    code, out, err = run(capsys, "evaluate", "mucow", "--allow-unvalidated", "--release", str(release.path), *argv)
    assert code == 2 and words in err and out == ""


def test_cli_wrong_line_count_names_the_file(release, tmp_path, capsys):
    scores = tmp_path / "scores.txt"
    scores.write_text("1\n2\n3\n", encoding="utf-8")
    code, _, err = run(capsys, "evaluate", "mucow", "--allow-unvalidated", "--pair", "cs-en", "--release", str(release.path),
                       "--scores", str(scores))
    assert code == 2 and f"{scores}:4: 3 scores; expected 6" in err
