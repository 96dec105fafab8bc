"""validate's shared tokenisation: the ASCII fast path and the per-process memo change no token.

``dataview._findall`` uses a short pattern for ASCII strings and ``TokenMemo`` keeps each
value's ids; both must give what ``dataview.tokens`` (the full pattern) gives, value by value.
"""

from __future__ import annotations

import csv
import functools

import numpy as np
import pyarrow as pa
import pytest
from benchsmith.validation import dataview
from benchsmith.validation.dataview import TokenMemo, _findall, _tokenise_values, tokens


@functools.lru_cache(maxsize=1)
def _real_texts(raw) -> list[str]:
    """Every cell of ComVE's raw CSVs and XCOPA's raw JSON lines (English and 11 languages)."""
    out: list[str] = []
    for f in sorted((raw / "comve").rglob("*.csv")):
        with open(f, encoding="utf-8", newline="") as fh:
            out.extend(cell for row in csv.reader(fh) for cell in row)
    for f in sorted((raw / "xcopa").rglob("*.jsonl")):
        out.extend(f.read_text(encoding="utf-8").splitlines())
    return out


@pytest.mark.realdata
@pytest.mark.parametrize("stride", [pytest.param(1, marks=pytest.mark.slow), 16])
def test_the_ascii_pattern_gives_the_full_patterns_tokens_on_real_text(raw, stride):
    """Every distinct ASCII value (slow run) or every 16th (default run: ~0.3 s)."""
    texts = _real_texts(raw)
    ascii_ = sorted({t for t in texts if t.isascii()})[::stride]  # the others take the full pattern itself
    assert len(ascii_) > 5_000 and len(texts) - sum(t.isascii() for t in texts) > 1_000
    assert list(map(_findall, ascii_)) == list(map(tokens, ascii_))


@pytest.mark.parametrize("text", ["don't stop_now 3.5%", "a\tb\nc  d", "", "x" * 50, "__init__ (1)", "¿Qué?",
                                  "na\u0301ive", "中文 words", "ที่นี่", "தமிழ்", "e\u0301t\u00e9"])
def test_findall_is_tokens(text):
    assert _findall(text) == tokens(text)


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
    from benchsmith.validation.dataview import STORE, ConfigView, _count_tokens, _tokenise
    from validation_helpers import make_release

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


@pytest.mark.realdata
def test_counting_without_a_regex_gives_the_token_counts(raw):
    """dataview._count (byte classes for ASCII strings) is len(tokens(.)) on the raw data's ASCII
    values (every 16th; the others take the regex itself) and on random ASCII strings."""
    import random

    from benchsmith.validation.dataview import _count

    texts = sorted({t for t in _real_texts(raw) if t.isascii()})[::16]
    rng = random.Random(0)
    texts += ["".join(chr(rng.randrange(128)) for _ in range(rng.randrange(0, 40))) for _ in range(5000)]
    texts += ["", " ", "a", "_", "\x1c", "a\x1fb", "..", "a.b", "  x  ", "x" * 100, "中文 x", "ü-ber"]
    assert [_count(t) for t in texts] == [len(tokens(t)) for t in texts]


def test_as_int64_reads_what_to_numpy_gives_without_importing_pandas():
    from benchsmith.validation.dataview import as_int64

    arr = pa.array([5, -3, 0, 2**40, 7], type=pa.int64())
    cases = [arr, arr.slice(1, 3), pa.array([1, 2, 3], type=pa.int8()), pa.array([4, 200], type=pa.uint8()),
             pa.array([], type=pa.int32()),
             pa.chunked_array([pa.array([1, 2], pa.int32()), pa.array([3], pa.int32())]),
             pa.chunked_array([], type=pa.int64()), pa.array([1.9, -2.5])]
    for a in cases:
        got = as_int64(a)
        assert got.dtype == np.int64 and got.tolist() == a.to_numpy().astype(np.int64).tolist(), a
    with pytest.raises((pa.ArrowException, ValueError)):  # nulls: to_numpy's zero-copy refusal, as before
        as_int64(pa.array([1, None]))
