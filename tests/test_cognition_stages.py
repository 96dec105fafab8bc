"""CoGnition construction stages: vocabulary filter, compounds, templates + placement, statistics."""

from __future__ import annotations

import json
import math

import pytest
import typer
from typer.testing import CliRunner

import benchsmith.builders.cognition.cli  # noqa: F401  (registers the stage commands)
from benchsmith.builders.cognition.atoms import enumerate_compounds, parse_compound
from benchsmith.builders.cognition.chunks import get_chunker
from benchsmith.builders.cognition.stats import compound_statistics
from benchsmith.builders.cognition.templates import (
    compare_enumeration,
    extract_templates,
    place_compounds,
    read_templates,
)
from benchsmith.builders.cognition.vocab import vocab_filter
from benchsmith.cli import stage_app
from benchsmith.errors import ConfigError, ParseError


def _app() -> typer.Typer:
    app = typer.Typer()
    app.add_typer(stage_app, name="stage")
    return app


def test_vocab_filter_fixture(fixtures):
    d = fixtures / "rocstories" / "rocstories"
    res = vocab_filter([d / "stories.csv", d / "cloze.csv"], top_n=12, max_words=20)
    vocab = [w for w, _ in res.vocabulary]
    assert vocab[:3] == ["the", "dog", "cat"] and len(vocab) == 12
    # every kept sentence uses only vocabulary words and has <= 20 words
    assert "the dog was happy ." in res.sentences and "the cat was happy ." in res.sentences
    assert all(w in vocab for s in res.sentences for w in s.split() if w.isalnum())
    assert not any("veterinarian" in s for s in res.sentences)  # rare words exclude a sentence
    assert not any(s.startswith("the dog the cat the ball") for s in res.sentences)  # 24 words > 20
    assert res.sentences.count("the dog was happy .") == 1  # duplicates kept once
    assert res.total == 16


def test_vocab_cli_writes_output(fixtures, tmp_path):
    out = tmp_path / "kept.txt"
    d = fixtures / "rocstories" / "rocstories"
    r = CliRunner().invoke(_app(), ["stage", "cognition", "vocab", str(d / "stories.csv"), "--out", str(out),
                                    "--top-n", "12", "--json"])
    assert r.exit_code == 0, r.output
    assert json.loads(r.stdout)["sentences_kept"] == len(out.read_text(encoding="utf-8").splitlines()) > 0


def test_vocab_bad_csv_fails_cleanly(fixtures):
    with pytest.raises(ParseError, match=r"bad_fields\.csv:3"):
        vocab_filter([fixtures / "rocstories" / "rocstories" / "bad_fields.csv"])


def test_vocab_cli_bad_csv_leaves_no_output(fixtures, tmp_path, capsys):
    from conftest import run_cli

    d = fixtures / "rocstories" / "rocstories"
    out, vocab_out = tmp_path / "kept.txt", tmp_path / "vocab.tsv"
    # a good file first: the stage has read (and could have written) sentences when the bad one fails
    code, stdout, err = run_cli(capsys, "stage", "cognition", "vocab", str(d / "stories.csv"),
                                str(d / "bad_fields.csv"), "--out", str(out), "--vocab-out", str(vocab_out))
    assert code == 2 and stdout == ""
    assert "bad_fields.csv:3" in err and len(err.strip().splitlines()) == 1  # one line, no traceback
    assert not out.exists() and not vocab_out.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == []  # no temporary sibling left either


# slow (~2.5 CPU s: 22,452 real stories): the default run has test_vocab_filter_fixture
@pytest.mark.slow
@pytest.mark.realdata
def test_vocab_filter_real_rocstories(raw):
    res = vocab_filter(sorted((raw / "rocstories").glob("*.csv")))
    assert res.total == 22_452 and len(res.vocabulary) == 2_000
    assert 9_000 < len(res.sentences) < 10_000


def test_enumeration_sizes_and_patterns():
    comps = list(enumerate_compounds())
    assert len(comps) == 720 + 19 * 720 + 17 * 720
    assert len({c.text for c in comps}) == len(comps)
    assert all(parse_compound(c.text) == c for c in comps[::97])  # parse inverts build
    assert {c.pattern for c in comps} == {f"{a}.{b}" for a in (1, 2, 3) for b in (1, 2, 3, 4)}


@pytest.mark.realdata
def test_enumeration_reproduces_released_compounds(raw):
    lines = (raw / "cognition" / "data" / "cg-test" / "cg-test.compound").read_text(encoding="utf-8").splitlines()
    res = compare_enumeration(lines)
    assert res["released"] == 2_160 and res["reproduced"] == 2_160 and res["not_enumerated"] == []
    for cat in ("NP", "VP", "PP"):  # every DET/ADJ/N/MOD slot is released exactly once
        assert res["per_category"][cat]["slots_released"] == res["per_category"][cat]["slots_possible"] == 720


def test_compound_outside_inventory():
    with pytest.raises(ParseError, match="'the purple dog' matches no pattern"):
        parse_compound("the purple dog")


SENTENCES = [
    "suddenly he dropped his guitar in the park .",
    "she asked the teacher about the small red car .",
    "he ate the sandwich .",
    "they walked to the store after the game .",
    "i watched the movie with my friend .",
    "we found a ball near the old house .",
]


@pytest.fixture(scope="module")
def templates():
    return extract_templates(SENTENCES, get_chunker("spacy"))


def test_templates_have_one_placeholder(templates):
    cats = {t.category for t in templates}
    assert cats == {"NP", "VP", "PP"}
    assert all(sum(tok in ("<NP>", "<VP>", "<PP>") for tok in t.text.split()) == 1 for t in templates)
    assert any(t.text == "suddenly he <VP> in the park ." and t.filler == "dropped his guitar" for t in templates)
    assert any(t.text == "suddenly he dropped his guitar <PP> ." for t in templates)
    assert not any(t.filler == "he" for t in templates)  # pronouns are not NP slots


def test_place_is_seeded_and_reproducible(templates, tmp_path):
    comps = [parse_compound(c) for c in ("the small dog", "found every car on the floor", "behind the chair")]
    a = place_compounds(comps, templates, contexts=2, seed=7)
    b = place_compounds(comps, list(reversed(templates)), contexts=2, seed=7)
    assert [p.sentence for p in a] == [p.sentence for p in b]
    assert len(a) == 6 and all(p.compound.text in p.sentence for p in a)
    assert len({p.sentence for p in a[:2]}) == 2  # distinct contexts per compound
    with pytest.raises(ConfigError, match="templates for 99 contexts"):
        place_compounds(comps, templates, contexts=99)


def test_templates_and_place_cli(tmp_path):
    sents = tmp_path / "sents.txt"
    sents.write_text("\n".join(SENTENCES) + "\n", encoding="utf-8")
    tsv = tmp_path / "templates.tsv"
    r = CliRunner().invoke(_app(), ["stage", "cognition", "templates", str(sents), "--out", str(tsv), "--json"])
    assert r.exit_code == 0, r.output
    assert json.loads(r.stdout)["templates"] == len(read_templates(tsv))
    comp = tmp_path / "c.compound"
    comp.write_text("the small dog\nthe small dog\nasked every girl\n", encoding="utf-8")
    r = CliRunner().invoke(_app(), ["stage", "cognition", "place", str(comp), str(tsv), "--out",
                                    str(tmp_path / "out"), "--contexts", "1", "--json"])
    assert r.exit_code == 0, r.output
    assert (tmp_path / "out.compound").read_text(encoding="utf-8").splitlines() == ["the small dog", "asked every girl"]


def test_read_templates_rejects_bad_row(tmp_path):
    p = tmp_path / "t.tsv"
    p.write_text("category\ttemplate\tfiller\tline\nNP\tno placeholder here\tx\t1\n", encoding="utf-8")
    with pytest.raises(ParseError, match=r"t\.tsv:2"):
        read_templates(p)


def test_statistics_hand_computed():
    corpus = ["the dog ran .", "the small dog ran .", "a dog he liked ran .", "the dog sat ."]
    comps = [parse_compound("the small dog"), parse_compound("the dog he liked"), parse_compound("the dog")]
    st = {s["compound"]: s for s in compound_statistics(comps, corpus, window=5, few_max=1)}
    assert st["the small dog"]["frequency"] == 1 and st["the small dog"]["bucket"] == "few-shot"
    assert st["the dog"]["frequency"] == 2 and st["the dog"]["bucket"] == "many-shot"
    assert st["the dog he liked"]["frequency"] == 0 and st["the dog he liked"]["bucket"] == "zero-shot"
    assert st["the small dog"]["length"] == 3
    n = 4 + 5 + 6 + 4  # tokens
    # counts: the=3, dog=4, small=1, "he liked"=1; pairs in a 5-window: the-dog 3, the-small 1, small-dog 1
    expect = [math.log2(3 * n / (3 * 4)), math.log2(1 * n / (3 * 1)), math.log2(1 * n / (1 * 4))]
    assert st["the small dog"]["mean_pmi"] == round(sum(expect) / 3, 4)
    # the-"he liked" never co-occur: left out of the mean and counted
    assert st["the dog he liked"]["pairs_unseen"] == 1


def test_stage_missing_input_is_a_usage_error(tmp_path):
    # wide, so that typer's usage-error box does not wrap the message (a long tmp path would)
    r = CliRunner().invoke(_app(), ["stage", "cognition", "stats", str(tmp_path / "none.compound"), str(tmp_path)],
                           env={"COLUMNS": "400"})
    assert r.exit_code == 2 and "does not exist" in r.output
