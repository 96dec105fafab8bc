"""ComVE's Table 4 lengths counted on Arrow (builders/comve/stats.token_counts) against their
Python definition: ``len(text.split())`` over the texts that are neither null nor blank."""

from __future__ import annotations

import pyarrow as pa
from benchsmith.builders.comve.stats import _WIDE_SPACES, _kernel, token_counts
from hypothesis import given, settings
from hypothesis import strategies as st

#: every code point str.isspace calls whitespace, the first 0x3100 code points and a few look-alikes
#: (zero-width space and joiners, BOM, Mongolian vowel separator): where Arrow and Python could part
_CODE_POINTS = sorted({*(c for c in range(0x3100) if not 0xD800 <= c <= 0xDFFF),
                       *(c for c in range(0x110000) if chr(c).isspace()),
                       0x180E, 0x200B, 0x200C, 0x200D, 0x2060, 0xFEFF, 0xFFA0, 0x3164})


def _python(texts: list) -> tuple[int, int]:
    kept = [t for t in texts if t and t.strip()]
    return sum(len(t.split()) for t in kept), len(kept)


def test_arrow_whitespace_is_str_isspace():
    """Text by text, what token_counts relies on: a trimmed text splits into len(text.split()) pieces,
    and a blank one trims to ''."""
    texts = [t for c in map(chr, _CODE_POINTS) for t in (f"a{c}b", c, f"{c}{c}x{c}y{c}{c}")]
    trimmed = _kernel("utf8_trim_whitespace", pa.array(texts, pa.string()))
    pieces = _kernel("list_value_length", _kernel("utf8_split_whitespace", trimmed)).to_pylist()
    got = [n - (t == "") for n, t in zip(pieces, trimmed.to_pylist())]
    want = [len(t.split()) for t in texts]
    assert [(hex(ord(t[-1])), g) for t, g, w in zip(texts, got, want) if g != w] == []
    assert token_counts(pa.array(texts, pa.string())) == _python(texts)


_TEXT = st.one_of(st.none(), st.text(st.sampled_from(list(" \t\n\x0b\x0c\r\x1c\x1f\x85\xa0\u2000\u3000\u200b"
                                                          "ab.éİ，"))), st.text())


@settings(max_examples=100, deadline=None)
@given(st.lists(_TEXT, max_size=12), st.integers(0, 3))
def test_token_counts_are_pythons_split(texts, chunks):
    column = pa.chunked_array([pa.array(texts[i::chunks + 1], pa.string()) for i in range(chunks + 1)],
                              pa.string())
    assert token_counts(column) == _python(texts)
    assert token_counts(pa.array(texts, pa.large_string())) == _python(texts)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.one_of(st.none(), st.lists(_TEXT, max_size=4)), max_size=8))
def test_lists_of_texts_count_their_values(lists):
    flat = [t for v in lists if v for t in v]
    assert token_counts(pa.array(lists, pa.list_(pa.string()))) == _python(flat)


def test_the_wide_whitespace_is_str_isspace_above_ascii():
    """token_counts reads whitespace off the UTF-8 bytes: ASCII by str.isspace, the rest from this list."""
    assert sorted(_WIDE_SPACES) == [c for c in map(chr, range(0x80, 0x110000)) if c.isspace()]


def test_a_count_that_is_wrong_is_caught():
    """The comparison can fail: a text of spaces is not a token, and 'a\\u200bb' is one."""
    assert token_counts(pa.array(["   ", "a\u200bb", None, ""])) == (1, 1)
    assert _python(["   ", "a b"]) != token_counts(pa.array(["   ", "a\u200bb"]))


def test_counting_converts_no_python_value(tmp_path):
    """token_counts hands Arrow no Python value: the first one converted makes pyarrow import pandas
    (benchsmith.pandas_probe), 0.62 s of a warm ComVE validate whose card was the only converter."""
    import subprocess
    import sys

    import pyarrow.parquet as pq

    pq.write_table(pa.table({"s": ["a b", "  ", "", None, "c"], "l": [["x y"], [" "], None, [], ["z"]]}),
                   tmp_path / "t.parquet")
    code = ("import sys, pyarrow.parquet as pq; from benchsmith.builders.comve.stats import token_counts; "
            f"t = pq.ParquetFile({str(tmp_path / 't.parquet')!r}).read(); "
            "print(token_counts(t.column('s')), token_counts(t.column('l')), 'pandas' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["(3,", "2)", "(3,", "2)", "False"]
