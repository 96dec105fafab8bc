"""The words a text is matched on, for a whole batch of texts at once (index and corpus alike).

Normalisation: Unicode NFKC, case folding, then words without punctuation: runs of word
characters (Python's ``\\w``: letters, digits, ``_``) with their combining marks, and one
token per character (with its marks) in scripts written without spaces (CJK, Thai, Lao,
Myanmar, Khmer: :data:`benchsmith.validation.dataview._NO_SPACES`). This is
:func:`benchsmith.validation.dataview.word_pattern` over ``casefold(NFKC(text))``.
"Don't!" and "don t" are the same two words; "我们走吧" is four tokens.

How: :func:`tokenise` works on an Arrow string array. Lower-casing is an Arrow kernel
(C++); the rows NFKC may change or whose case folding differs from Arrow's lower-casing
(``ß``, ``İ``, Cherokee ...: one regex finds them, none in ASCII) are normalised and folded
by Python, so the result is ``unicodedata.normalize("NFKC", text).casefold()`` (Python's
Unicode tables, whatever Arrow's are). The words are found by numpy over the UTF-8
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
import unicodedata
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from benchsmith.validation.dataview import _NO_SPACES, _mark_class

_WORD, _SPACELESS, _MARK = 1, 2, 4


@dataclass(frozen=True)
class Classes:
    """Per code point its kind (:data:`_KIND`: not in a word, word character, spaceless-script
    character, combining mark, spaceless-script mark); and a
    regex for the texts Arrow's lower-casing alone would not fold: those holding a character
    NFKC may change (a text without one is its own NFKC: characters that normalise to
    something else, the second character of a canonical composition, Hangul vowels and
    finals, and two combining marks in a row, which NFKC may reorder) or one whose case
    folding is not Arrow's lower-casing (``ß``, ``İ``, Cherokee ...)."""

    table: np.ndarray
    special: str


def _class(codes: list[int]) -> str:
    """A regex character class of code points (RE2 syntax)."""
    ranges: list[list[int]] = []
    for x in sorted(set(codes)):
        if ranges and ranges[-1][1] == x - 1:
            ranges[-1][1] = x
        else:
            ranges.append([x, x])
    return "[" + "".join(f"\\x{{{a:x}}}" if a == b else f"\\x{{{a:x}}}-\\x{{{b:x}}}" for a, b in ranges) + "]"


def _where(text: str, differs: Callable[[str], bool]) -> list[int]:
    """The characters ``c`` of ``text`` with ``differs(c)``, found by halving the stretches for
    which ``differs`` holds (a few thousand calls instead of one per code point)."""
    out, stack = [], [text]
    while stack:
        t = stack.pop()
        if not differs(t):
            continue
        if len(t) == 1:
            out.append(ord(t))
            continue
        stack += [t[: len(t) // 2], t[len(t) // 2 :]]
    return out


@lru_cache(maxsize=1)
def classes() -> Classes:
    """Built once per process from Python's definitions (~0.3 CPU s; the index carries them to
    Dask workers)."""
    cps = np.arange(0x110000, dtype=np.uint32)
    every = cps[(cps < 0xD800) | (cps >= 0xE000)].tobytes().decode("utf-32-le")
    table = np.zeros(0x110000, dtype=np.uint8)
    for pattern, bit in ((r"\w+", _WORD), (f"[{_NO_SPACES}]+", _SPACELESS), (f"[{_mark_class()}]+", _MARK)):
        for m in re.finditer(pattern, every):
            text = m.group()
            table[ord(text[0]) : ord(text[-1]) + 1] |= bit  # a run may span the surrogates: never in UTF-8
    changes = [c for c in _where(every, lambda t: unicodedata.normalize("NFKD", t) != t)
               if unicodedata.normalize("NFKC", chr(c)) != chr(c)]
    for c in _where(every, lambda t: unicodedata.normalize("NFD", t) != t):
        parts = unicodedata.decomposition(chr(c)).split()
        if len(parts) == 2 and not parts[0].startswith("<"):
            changes.append(int(parts[1], 16))  # it composes with the character before it
    changes += [*range(0x1161, 0x1176), *range(0x11A8, 0x11C3)]  # Hangul vowels and finals compose
    combining = [ord(c) for c in every if unicodedata.combining(c)]
    # where Arrow's lower-casing (utf8proc's tables) is not Python's case folding
    special = _where(every, lambda t: pc.utf8_lower(pa.scalar(t, pa.large_string())).as_py() != t.casefold())
    return Classes(_KIND[table], f"{_class(changes + special)}|{_class(combining)}{{2}}")


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
    """``casefold(NFKC(text))`` of every text (nulls as empty texts): Arrow's lower-casing, except
    for the rows holding a character NFKC may change or whose case folding is not Arrow's
    lower-casing (:attr:`Classes.special`), which Python normalises and folds."""
    cls = table or classes()
    texts = pc.fill_null(texts.cast(pa.large_string()), "")
    lower = pc.utf8_lower(texts)
    _, off_buf, data_buf = texts.buffers()
    offsets = np.frombuffer(off_buf, dtype=np.int64)[texts.offset : texts.offset + len(texts) + 1]
    if data_buf is None or not len(texts) or np.frombuffer(data_buf, dtype=np.uint8)[offsets[0] : offsets[-1]].max(
            initial=0) < 0x80:
        return lower  # ASCII: nothing to normalise
    special = pc.match_substring_regex(texts, cls.special)
    if pc.any(special).as_py():
        fixed = [unicodedata.normalize("NFKC", t).casefold() for t in texts.filter(special).to_pylist()]
        lower = pc.replace_with_mask(lower, special, pa.array(fixed, pa.large_string()))
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


# what a byte is, for the start rule: not in a word, a word character, a spaceless-script
# character, a combining mark, a spaceless-script combining mark (+ 8: not a character's first byte)
_NONE, _WORDCH, _SPL, _MK, _SPLMK, _CONT = 0, 1, 2, 3, 4, 8
_KIND = np.array([_NONE if c == 0 else _SPLMK if c & _MARK and c & _SPACELESS else _MK if c & _MARK
                  else _SPL if c & _SPACELESS else _WORDCH for c in range(8)], dtype=np.uint8)


def _start_rule() -> np.ndarray:
    """Per (previous byte's kind << 4 | this byte's kind): 1 a word starts here, 2 it depends on
    the word the previous mark belongs to (a word character after a mark), 0 it does not."""
    rule = np.zeros(256, dtype=np.uint8)
    for prev in range(16):
        for cur in (_WORDCH, _SPL, _MK, _SPLMK):
            before = prev & 7
            rule[prev << 4 | cur] = (1 if before == _NONE or cur == _SPL or (cur == _WORDCH and before == _SPL)
                                     else 2 if cur == _WORDCH and before in (_MK, _SPLMK) else 0)
    return rule


_RULE = _start_rule()


def _spans(data: np.ndarray, offsets: np.ndarray, table: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(start, end) byte offsets of every word of UTF-8 ``data`` whose texts start at ``offsets``,
    the number of the first word of each text (and the total), and which bytes lie in a word.

    Works on bytes: a character's class is given to each of its bytes, a word starts only on
    a character's first byte, and whether it starts there is looked up from the kinds of the
    byte and the one before it (:func:`_start_rule`)."""
    if not len(data):
        empty = np.zeros(0, dtype=np.int64)
        return empty, empty, np.zeros(len(offsets), dtype=np.int64), np.zeros(0, dtype=bool)
    kind = table[data]  # right for ASCII; the bytes of a wider character are fixed below
    wide = np.flatnonzero(data >= 0xC0)
    if len(wide):
        last = len(data) - 1
        b0 = data[wide].astype(np.int32)
        b1, b2, b3 = ((data[np.minimum(wide + k, last)] & 0x3F).astype(np.int32) for k in (1, 2, 3))
        cp = np.where(b0 < 0xE0, ((b0 & 0x1F) << 6) | b1,
                      np.where(b0 < 0xF0, ((b0 & 0x0F) << 12) | (b1 << 6) | b2,
                               ((b0 & 0x07) << 18) | (b1 << 12) | (b2 << 6) | b3))
        kind[wide] = table[cp]
        for k in (1, 2, 3):  # the bytes after a first byte take its kind, as followers
            at = wide[(b0 >= (0xC0, 0xE0, 0xF0)[k - 1])] + k
            lead = kind[at - k]
            kind[at] = np.where(lead != _NONE, lead | _CONT, _NONE)
    pair = np.empty(len(kind), dtype=np.uint8)
    pair[0] = 0
    np.left_shift(kind[:-1], 4, out=pair[1:])
    text_starts = offsets[:-1]
    pair[text_starts[text_starts < len(pair)]] = 0  # a text's first byte follows nothing
    pair |= kind
    rule = _RULE[pair]
    start = rule == 1
    depends = np.flatnonzero(rule == 2)
    if len(depends):
        # a word character after a mark continues that mark's word unless the word is a
        # spaceless character with its marks: the word's type is that of its last non-mark
        # character, or of the mark that opened it (walk back over the marks)
        at = depends - 1
        while True:
            k = kind[at]
            back = (((k & 7) == _MK) | ((k & 7) == _SPLMK)) & (pair[at] >> 4 != _NONE) | (k >= _CONT)
            if not back.any():
                break
            at = np.where(back, at - 1, at)
        k = kind[at] & 7
        start[depends] = (k == _SPL) | (k == _SPLMK)
    tok = kind != _NONE
    boundary = np.flatnonzero(start | ~tok)
    s = np.flatnonzero(start)
    ends = np.append(boundary, len(kind))[np.flatnonzero(start[boundary]) + 1]
    return s, ends, np.searchsorted(s, offsets), tok


def normalise(text: str) -> list[str]:
    """The words of one text (:func:`tokenise` of one text)."""
    return tokenise([text]).row(0)
