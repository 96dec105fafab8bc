"""validate's shared tokenisation: tokens, token counts and the per-process memo.

``TokenMemo`` keeps each value's ids; a value's ids and counts are the same whether kept or not.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

from benchsmith.nlp.scripts import tokens
from benchsmith.validation import dataview
from benchsmith.validation.dataview import TokenMemo, _count, _tokenise_values


@pytest.mark.parametrize(("text", "expected"), [
    ("don't stop_now 3.5%", ["don", "'", "t", "stop_now", "3", ".", "5", "%"]),
    ("a\tb\nc  d", ["a", "b", "c", "d"]), ("", []), ("__init__ (1)", ["__init__", "(", "1", ")"]),
    ("¿Qué?", ["¿", "Qué", "?"]), ("na\u0301ive", ["na\u0301ive"]), ("中文 words", ["中", "文", "words"]),
    ("ที่นี่", ["ที่", "นี่"]), ("தமிழ்", ["தமிழ்"]),
])
def test_tokens(text, expected):
    """Word runs keep their combining marks; scripts written without spaces give one token per
    character (with its marks); punctuation marks are tokens of their own."""
    assert tokens(text) == expected


@pytest.mark.parametrize(("text", "expected"), [
    ("", 0), (" ", 0), ("a", 1), ("_", 1), ("\x1c", 0), ("a\x1fb", 2), ("..", 2), ("a.b", 3), ("  x  ", 1),
    ("x" * 100, 1), ("don't stop_now 3.5%", 8), ("中文 x", 3), ("ü-ber", 3),
])
def test_token_counts(text, expected):
    """dataview._count counts ASCII strings without a regex (0x1c-0x1f are spaces, as in ``\\s``)."""
    assert _count(text) == expected


def test_the_memo_gives_the_same_ids_kept_or_not():
    values = ["The cat sat.", "the CAT sat!", "", "Über 3 Häuser", "中文", "The cat sat."]
    col = pa.array(values + [None])
    fresh_ids, fresh_counts = _tokenise_values(col)
    again_ids, again_counts = _tokenise_values(col)  # served from the memo
    np.testing.assert_array_equal(fresh_ids, again_ids)
    np.testing.assert_array_equal(fresh_counts, again_counts)
    assert fresh_counts.tolist() == [len(tokens(v)) for v in values] + [0]
    names = [dataview.VOCAB.names[i] for i in fresh_ids]
    assert names == [t.casefold() for v in values for t in tokens(v)]


def test_a_full_memo_keeps_nothing_new_and_still_answers():
    memo = TokenMemo(budget=0)
    got = memo.ids_of(["one two", "three"])
    assert [len(a) for a in got] == [2, 1] and memo.nbytes == 0
    assert [dataview.VOCAB.names[i] for a in got for i in a] == ["one", "two", "three"]


def test_long_token_lists_get_the_ids_the_plain_lookup_gives():
    """Vocabulary.ids dictionary-encodes a long list with Arrow first: same ids, same new-id order."""
    rng = np.random.default_rng(4)
    words = ["Bank", "bank", "BANK", "Über", "über", "中", ",", "straße", "STRASSE", "ǅ"] + [f"w{i}" for i in range(3000)]
    toks = [words[i] for i in rng.integers(0, len(words), size=3 * dataview._ARROW_IDS_MIN)]
    arrow, plain = dataview.Vocabulary(), dataview.Vocabulary()
    plain.ids(["bank"])
    arrow.ids(["bank"])  # a known token before the long list, on both
    np.testing.assert_array_equal(arrow.ids(toks), plain._ids(toks))
    assert arrow.names == plain.names and len(toks) > dataview._ARROW_IDS_MIN


def test_lengths_without_ids_are_the_token_columns_lengths(tmp_path):
    """A config with no label and no options counts its tokens without ids; the counts are the
    token column's, for string and list fields, nulls and empty items included."""
    import datasets
    from validation_helpers import make_release

    from benchsmith.validation.dataview import STORE, ConfigView, _count_tokens, _tokenise

    rows = [{"id": f"r{i}", "text": t, "items": items} for i, (t, items) in enumerate([
        ("The cat sat.", ["a b", "", "c"]), ("", []), (None, None), ("中文 words!", ["x", None, "y z ."]),
        ("The cat sat.", ["a b"])])]
    features = datasets.Features({"id": datasets.Value("string"), "text": datasets.Value("string"),
                                  "items": datasets.Sequence(datasets.Value("string"))})
    release = make_release(tmp_path, {"train": rows}, features)
    (config,) = release.configs()
    view = ConfigView(release, config)
    assert view.label_field is None and view.multiple_choice is None
    STORE.clear()
    for field in ("text", "items"):
        files = view.files("train")
        np.testing.assert_array_equal(_count_tokens(files, field), _tokenise(files, field).lengths())
        np.testing.assert_array_equal(view.token_lengths("train", field), _tokenise(files, field).lengths())
    assert view.token_lengths("train", "items").tolist() == [3, 0, 0, 4, 2]
    assert STORE.peek(("tokens", *view.content_key("train"), "text")) is None  # no ids were made
