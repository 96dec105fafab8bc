"""CoGnition's template slots (builders/cognition/chunks.py): NP / VP / PP chunks read off a
dependency parse (spaCy) or a constituency tree (benepar / stanza)."""

from __future__ import annotations

import pytest

from benchsmith.builders.cognition.chunks import Chunk, Chunker, chunks_from_tree, get_chunker
from benchsmith.errors import ConfigError
from benchsmith.nlp.parse import Parser


def test_spacy_chunks():
    toks = ["she", "asked", "the", "teacher", "about", "the", "small", "red", "car", "."]
    got = {(c.label, c.text(toks)) for c in get_chunker("spacy").chunks(toks)}
    assert {("VP", "asked the teacher"), ("NP", "the teacher"), ("PP", "about the small red car"),
            ("NP", "the small red car")} <= got
    assert ("NP", "she") not in got  # a pronoun is not a slot a compound can fill


def test_tree_chunks():
    from nltk import Tree

    t = Tree.fromstring("(S (NP (PRP he)) (VP (VBD dropped) (NP (PRP$ his) (NN guitar)) "
                        "(PP (IN in) (NP (DT the) (NN park)))) (. .))")
    got = chunks_from_tree(t)
    assert Chunk("NP", 2, 4) in got and Chunk("NP", 5, 7) in got and Chunk("PP", 4, 7) in got
    # the VP has three children (V NP PP): not a V+NP slot
    assert not any(c.label == "VP" for c in got)
    t2 = Tree.fromstring("(S (NP (PRP he)) (VP (VBD ate) (NP (DT the) (NN sandwich))))")
    assert Chunk("VP", 1, 4) in chunks_from_tree(t2)


def test_constituency_backend_uses_the_tree_rules():
    from nltk import Tree

    class FakeTrees(Parser):  # stands in for benepar / stanza, whose models are not installed here
        name = "fake"
        kind = "constituency"

        def parse(self, tokens):
            return Tree.fromstring("(S (NP (PRP he)) (VP (VBD ate) (NP (DT the) (NN sandwich))))")

    chunker = Chunker(FakeTrees())
    toks = ["he", "ate", "the", "sandwich"]
    assert chunker.chunks(toks) == [Chunk("NP", 0, 1), Chunk("VP", 1, 4), Chunk("NP", 2, 4)]
    assert list(chunker.chunks_many([toks, toks])) == [chunker.chunks(toks)] * 2
    assert chunker.describe() == "fake"


def test_get_chunker_passes_backend_errors_on():
    with pytest.raises(ConfigError, match="Did you mean 'spacy'"):
        get_chunker("spcy")
