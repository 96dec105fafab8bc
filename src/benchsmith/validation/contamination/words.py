"""The words a text is matched on, for a whole batch of texts at once (index and corpus alike).

Normalisation: Unicode NFKC, case folding, then words without punctuation: runs of word
characters (Python's ``\\w``: letters, digits, ``_``) with their combining marks, and one
token per character (with its marks) in scripts written without spaces (CJK, Thai, Lao,
Myanmar, Khmer: :data:`benchsmith.validation.dataview._NO_SPACES`). This is
:func:`benchsmith.validation.dataview.word_pattern` over ``casefold(NFKC(text))``.
"Don't!" and "don t" are the same two words; "我们走吧" is four tokens.

How: :func:`tokenise` works on an Arrow string array. NFKC and lower-casing are Arrow
kernels (C++); the rows holding a character whose case folding differs from Arrow's
lower-casing (``ß``, final sigma, Cherokee ... : a regex finds them) are case-folded by
Python, so the result is ``str.casefold``'s. The words are found by numpy over the UTF-8
bytes: each character's class comes from a table of every code point (built once from
Python's own ``\\w``, the mark categories and the spaceless ranges), token starts follow the
pattern's rules, and the words are gathered into one Arrow string array (with each text's
first word), ready for ``pyarrow.compute.index_in`` against a vocabulary. The regex engine
Arrow bundles (RE2) needs submatches for a find-all rewrite and runs it at ~2 MB/s; the
numpy pass is above 100 MB/s. This module is the one tokeniser: :func:`normalise` is it on
one text.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from benchsmith.validation.dataview import _NO_SPACES, _mark_class

_WORD, _SPACELESS, _MARK = 1, 2, 4


@dataclass(frozen=True)
class Classes:
    """Per code point: word character, spaceless-script character, combining mark (bits);
    and a regex for the characters whose case folding is not Arrow's lower-casing."""

    table: np.ndarray
    fold: str


@lru_cache(maxsize=1)
def classes() -> Classes:
    """Built once per process from Python's definitions (~0.3 CPU s)."""
    cps = np.arange(0x110000, dtype=np.uint32)
    every = cps[(cps < 0xD800) | (cps >= 0xE000)].tobytes().decode("utf-32-le")
    table = np.zeros(0x110000, dtype=np.uint8)
    for pattern, bit in ((r"\w+", _WORD), (f"[{_NO_SPACES}]+", _SPACELESS), (f"[{_mark_class()}]+", _MARK)):
        for m in re.finditer(pattern, every):
            text = m.group()
            table[ord(text[0]) : ord(text[-1]) + 1] |= bit  # a run may span the surrogates: never in UTF-8
    special = [c for c in every if not c.isascii() and c.casefold() != c.lower()] + ["\u0130"]  # İ: full mapping
    return Classes(table, "[" + "".join(re.escape(c) for c in special) + "]")


@dataclass
class Tokens:
    """The words of a batch of texts: ``words[firsts[i]:firsts[i + 1]]`` are text ``i``'s."""

    words: pa.Array
    firsts: np.ndarray

    def __len__(self) -> int:
        return len(self.firsts) - 1

    def row(self, i: int) -> list[str]:
        return self.words[int(self.firsts[i]) : int(self.firsts[i + 1])].to_pylist()  # type: ignore[no-any-return]

    def joined(self) -> list[str]:
        """Each text's words joined by one space."""
        lists = pa.LargeListArray.from_arrays(pa.array(self.firsts, pa.int64()), self.words)
        return pc.binary_join(lists, pa.scalar(" ", pa.large_string())).to_pylist()  # type: ignore[no-any-return]


def folded(texts: pa.Array, table: Classes | None = None) -> pa.Array:
    """``casefold(NFKC(text))`` of every text (nulls as empty texts)."""
    cls = table or classes()
    texts = pc.utf8_normalize(pc.fill_null(texts.cast(pa.large_string()), ""), "NFKC")
    lower = pc.utf8_lower(texts)
    special = pc.match_substring_regex(texts, cls.fold)
    if pc.any(special).as_py():
        fixed = pa.array([t.casefold() for t in texts.filter(special).to_pylist()], pa.large_string())
        lower = pc.replace_with_mask(lower, special, fixed)
    return lower


def tokenise(texts: pa.Array | Sequence[str], table: Classes | None = None) -> Tokens:
    """The normalised words of every text (see module docstring)."""
    cls = table or classes()
    if not isinstance(texts, (pa.Array, pa.ChunkedArray)):
        texts = pa.array(texts, pa.large_string())
    if isinstance(texts, pa.ChunkedArray):
        texts = texts.combine_chunks()
    arr = folded(texts, cls)
    n_rows = len(arr)
    _, off_buf, data_buf = arr.buffers()
    offsets = np.frombuffer(off_buf, dtype=np.int64)[arr.offset : arr.offset + n_rows + 1]
    base = int(offsets[0]) if n_rows else 0
    data = (np.frombuffer(data_buf, dtype=np.uint8)[base : int(offsets[-1])] if data_buf is not None and n_rows
            else np.zeros(0, dtype=np.uint8))
    offsets = offsets - base
    starts, ends, firsts, keep = _spans(data, offsets, cls.table)
    lengths = ends - starts
    word_offsets = np.zeros(len(starts) + 1, dtype=np.int64)
    np.cumsum(lengths, out=word_offsets[1:])
    words = pa.LargeStringArray.from_buffers(len(starts), pa.py_buffer(word_offsets),
                                             pa.py_buffer(np.ascontiguousarray(data[keep])))
    return Tokens(words, firsts)


def _spans(data: np.ndarray, offsets: np.ndarray, table: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(start, end) byte offsets of every word of UTF-8 ``data`` whose texts start at ``offsets``,
    the number of the first word of each text (and the total), and which bytes lie in a word."""
    n_texts = len(offsets) - 1
    if not len(data):
        empty = np.zeros(0, dtype=np.int64)
        return empty, empty, np.zeros(n_texts + 1, dtype=np.int64), np.zeros(0, dtype=bool)
    pos = np.flatnonzero((data & 0xC0) != 0x80)  # where each character starts
    lead = data[pos]
    wide = np.flatnonzero(lead >= 0x80)
    if len(wide):
        cp = lead.astype(np.int32)
        pad = np.concatenate([data, np.zeros(3, dtype=np.uint8)])
        p = pos[wide]
        b0, b1, b2, b3 = (pad[p].astype(np.int32), (pad[p + 1] & 0x3F).astype(np.int32),
                          (pad[p + 2] & 0x3F).astype(np.int32), (pad[p + 3] & 0x3F).astype(np.int32))
        cp[wide] = np.where(b0 < 0xE0, ((b0 & 0x1F) << 6) | b1,
                            np.where(b0 < 0xF0, ((b0 & 0x0F) << 12) | (b1 << 6) | b2,
                                     ((b0 & 0x07) << 18) | (b1 << 12) | (b2 << 6) | b3))
        c = table[cp]
    else:
        c = table[lead]
    tok = c != 0
    mark = (c & _MARK) != 0
    spaceless = ((c & _SPACELESS) != 0) & ~mark
    after = np.empty(len(c), dtype=bool)  # the previous character (of the same text) is in a word
    after[0] = False
    after[1:] = tok[:-1]
    text_starts = np.searchsorted(pos, offsets[:-1])
    after[text_starts[text_starts < len(pos)]] = False
    start = tok & (~after | spaceless)
    start[1:] |= spaceless[:-1] & after[1:] & tok[1:] & ~mark[1:]  # a word character after a spaceless one
    # a word character right after a mark continues that word unless the word is a spaceless
    # character with its marks: the type of a word is that of its last non-mark character (or
    # of the mark that opened it)
    k = np.flatnonzero(((c[1:] & _WORD) != 0) & after[1:] & mark[:-1]) + 1
    if len(k):
        anchor = tok & (~mark | ~after)
        last = np.maximum.accumulate(np.where(anchor, np.arange(len(c)), 0))
        start[k] |= (c[last[k - 1]] & _SPACELESS) != 0
    boundary = np.flatnonzero(start | ~tok)
    ends_char = np.append(boundary, len(c))[np.flatnonzero(start[boundary]) + 1]
    s = np.flatnonzero(start)
    firsts = np.searchsorted(s, np.append(text_starts, len(c)))
    if len(wide):
        pos_end = np.append(pos, len(data))
        keep = np.repeat(tok, np.diff(pos_end))
        return pos[s], pos_end[ends_char], firsts, keep
    return s, ends_char, firsts, tok


def normalise(text: str) -> list[str]:
    """The words of one text (:func:`tokenise` of one text)."""
    return tokenise([text]).row(0)
