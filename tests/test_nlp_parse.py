"""Parser adapters (benchsmith.nlp.parse): spaCy offline default, tokens kept as given, and
missing local models / unknown backends as ConfigErrors. CoGnition's NP/VP/PP chunk rules
over these parses are tested in tests/test_cognition_chunks.py."""

from __future__ import annotations

import pytest

from benchsmith.errors import ConfigError
from benchsmith.nlp.parse import SpacyParser, get_parser


def test_spacy_parse_keeps_the_tokens_given():
    toks = ["she", "asked", "the", "teacher", "about", "the", "small", "red", "car", "."]
    parser = get_parser("spacy")
    assert isinstance(parser, SpacyParser) and parser.kind == "dependency"
    assert parser.describe().startswith("spacy:en_")
    doc = parser.parse(toks)
    assert [t.text for t in doc] == toks  # never re-tokenised
    assert doc[1].pos_ == "VERB" and doc[3].dep_ == "dobj" and doc[3].head.i == 1


def test_spacy_parse_many_is_in_order_and_equals_parse():
    sents = [["he", "ate", "the", "sandwich", "."], ["the", "dog", "ran", "."], ["hi"]]
    parser = get_parser("spacy")
    many = list(parser.parse_many(sents, batch_size=2))
    assert [[t.text for t in d] for d in many] == sents
    one = [parser.parse(s) for s in sents]
    assert [[(t.dep_, t.head.i) for t in d] for d in many] == [[(t.dep_, t.head.i) for t in d] for d in one]


@pytest.mark.parametrize("backend", ["benepar", "stanza"])
def test_missing_local_model_is_a_config_error(backend, tmp_path, monkeypatch):
    monkeypatch.setenv("STANZA_RESOURCES_DIR", str(tmp_path))
    with pytest.raises(ConfigError, match="not installed locally"):
        get_parser(backend, str(tmp_path) if backend == "stanza" else None)


def test_unknown_backend_and_model():
    with pytest.raises(ConfigError, match="Did you mean 'spacy'"):
        get_parser("spcy")
    with pytest.raises(ConfigError, match="spaCy model 'no_such_model' is not installed"):
        get_parser("spacy", "no_such_model")
