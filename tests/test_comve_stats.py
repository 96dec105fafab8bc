"""ComVE's Table 4 lengths (builders/comve/stats.token_counts): ``len(text.split())`` over the texts
that are neither null nor blank."""

from __future__ import annotations

import pyarrow as pa

from benchsmith.builders.comve.stats import token_counts


def test_blank_and_null_texts_are_not_counted_and_wide_spaces_split():
    """A text of spaces is not a text, 'a\u200bb' is one token (no space), 'a\u3000b' two."""
    assert token_counts(pa.array(["   ", "a\u200bb", None, "", "a\u3000b c"])) == (4, 2)
    chunked = pa.chunked_array([pa.array(["a b", None]), pa.array(["\t", "c"])])
    assert token_counts(chunked) == (3, 2)


def test_lists_of_texts_count_their_values():
    lists = pa.array([["a b", " "], None, [], ["c\xa0d e"]], pa.list_(pa.string()))
    assert token_counts(lists) == (5, 2)
