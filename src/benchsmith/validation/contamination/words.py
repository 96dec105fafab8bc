"""The words a text is matched on, for a whole batch of texts at once (index and corpus alike).

Normalisation: Unicode NFKC, case folding, then words without punctuation: runs of word
characters (Python's ``\\w``: letters, digits, ``_``) with their combining marks, and one
token per character (with its marks) in scripts written without spaces (CJK, Thai, Lao,
Myanmar, Khmer: :data:`benchsmith.nlp.scripts.NO_SPACES`). This is
:func:`benchsmith.nlp.scripts.word_pattern` over ``casefold(NFKC(text))``.
"Don't!" and "don t" are the same two words; "我们走吧" is four tokens.

How: :func:`tokenise` works on an Arrow string array. Lower-casing is an Arrow kernel
(C++); the rows NFKC may change or whose case folding differs from Arrow's lower-casing
(``ß``, ``İ``, Cherokee ...; numpy finds them from tables of every code point, none in
ASCII) are normalised and folded by Python, so the result is ``unicodedata.normalize("NFKC", text).casefold()`` (Python's
Unicode tables, whatever Arrow's are). The words are found by numpy over the UTF-8
bytes: each character's class comes from a table of every code point (built once from
Python's own ``\\w``, the mark categories and the spaceless ranges), token starts follow the
pattern's rules, and each word is a byte range of the folded texts (the scan hashes the
words from their bytes; they are gathered into an Arrow string array only when asked). The regex engine
Arrow bundles (RE2) needs submatches for a find-all rewrite and runs it at ~2 MB/s; the
numpy pass is above 100 MB/s. This module is the one tokeniser: :func:`normalise` is it on
one text.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cached_property, lru_cache

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from benchsmith.nlp.scripts import NO_SPACES, mark_class

_WORD, _SPACELESS, _MARK = 1, 2, 4


@dataclass(frozen=True)
class Classes:
    """Per code point its kind (:data:`_KIND`: not in a word, word character, spaceless-script
    character, combining mark, spaceless-script mark); and what finds the texts Arrow's
    lower-casing alone would not fold (:func:`_unstable`): per code point ``flags`` (:data:`_CHANGES`, :data:`_SECOND`,
    :data:`_MARKS_ONLY`), the canonical class of the first and last character of its
    decomposition (``first_ccc``, ``last_ccc``) and the sorted ``pairs`` (``P << 21 | m``) of a
    character and a second part that NFKC composes or changes."""

    table: np.ndarray
    flags: np.ndarray
    first_ccc: np.ndarray
    last_ccc: np.ndarray
    pairs: np.ndarray


_CHANGES, _SECOND, _MARKS_ONLY = 1, 2, 4


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
    """Built once per process from Python's definitions (about a CPU second; the index carries them to
    Dask workers)."""
    cps = np.arange(0x110000, dtype=np.uint32)
    every = cps[(cps < 0xD800) | (cps >= 0xE000)].tobytes().decode("utf-32-le")
    table = np.zeros(0x110000, dtype=np.uint8)
    for pattern, bit in ((r"\w+", _WORD), (f"[{NO_SPACES}]+", _SPACELESS), (f"[{mark_class()}]+", _MARK)):
        for m in re.finditer(pattern, every):
            text = m.group()
            table[ord(text[0]) : ord(text[-1]) + 1] |= bit  # a run may span the surrogates: never in UTF-8
    # where Arrow's lower-casing (utf8proc's tables) is not Python's case folding
    special = _where(every, lambda t: pc.utf8_lower(pa.scalar(t, pa.large_string())).as_py() != t.casefold())
    return Classes(_KIND[table], *_unstable(every, special))


def _unstable(every: str, special: list[int]) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The tables of :class:`Classes` that find the texts NFKC and case folding change.

    NFKC decomposes every character, sorts each run of combining marks by canonical class
    and composes each second part ``m`` of a composition with the last starter before it,
    unless a character between them blocks it (class 0, or a class at least ``m``'s). So a
    text without a character that case folding or NFKC changes alone is its own NFKC unless
    (1) two neighbours ``x y`` are out of order (the last class of ``x``'s decomposition above
    the first of ``y``'s, that one not 0) or (2) a second part ``m`` composes with what
    precedes it. For (2): a class-0 ``m`` is blocked by anything between, so only the
    character ``P`` just before it counts and ``NFKC(P m) != P m`` decides (``pairs``); a
    marked ``m`` reaches past ``P`` only when ``P`` decomposes to marks alone (flagged
    :data:`_MARKS_ONLY`: such a text goes to Python whatever the starter before), else the
    starter it may compose with lies in ``P`` and ``pairs`` decides again. So the Tamil vowel
    sign aa after its consonant, or two Thai marks in order, no longer send their text to
    Python (a fifth of the lines of a multilingual corpus, none of which NFKC changes)."""
    ccc = unicodedata.combining
    nfkd = {c: unicodedata.normalize("NFKD", chr(c)) for c in _where(every, lambda t: unicodedata.normalize(
        "NFKD", t) != t)}
    changes = [c for c in nfkd if unicodedata.normalize("NFKC", chr(c)) != chr(c)]
    firsts: dict[int, set[int]] = {}  # second part -> the characters it composes with
    for c in _where(every, lambda t: unicodedata.normalize("NFD", t) != t):
        parts = unicodedata.decomposition(chr(c)).split()
        if len(parts) == 2 and not parts[0].startswith("<"):
            firsts.setdefault(int(parts[1], 16), set()).add(int(parts[0], 16))
    for v in range(0x1161, 0x1176):  # Hangul: a leading consonant and a vowel, that syllable and a final
        firsts[v] = set(range(0x1100, 0x1113))
    for t in range(0x11A8, 0x11C3):
        firsts[t] = set(range(0xAC00, 0xD7A4, 28))

    def last_starter(c: int) -> int | None:
        starters = [x for x in nfkd.get(c, chr(c)) if not ccc(x)]
        return ord(starters[-1]) if starters else None

    by_last: dict[int | None, list[int]] = {}  # a starter -> the characters whose decomposition's last starter it is
    for c in nfkd:
        by_last.setdefault(last_starter(c), []).append(c)
    marks = {c: ccc(chr(c)) for c in _where(every, lambda t: any(map(ccc, t)))}
    flags = np.zeros(0x110000, dtype=np.uint8)
    flags[changes + special] |= _CHANGES
    flags[list(firsts)] |= _SECOND
    flags[[*marks, *(c for c, d in nfkd.items() if all(map(ccc, d)))]] |= _MARKS_ONLY
    first_ccc = np.zeros(0x110000, dtype=np.uint8)
    last_ccc = np.zeros(0x110000, dtype=np.uint8)
    for c, k in marks.items():
        first_ccc[c] = last_ccc[c] = k
    for c, d in nfkd.items():
        first_ccc[c], last_ccc[c] = ccc(d[0]), ccc(d[-1])
    pairs = []
    for m, starters in firsts.items():
        near = {p for s in starters for p in (s, last_starter(s), *by_last.get(last_starter(s), [])) if p is not None}
        pairs += [p << 21 | m for p in near if unicodedata.normalize("NFKC", chr(p) + chr(m)) != chr(p) + chr(m)]
    return flags, first_ccc, last_ccc, np.unique(np.array(pairs, dtype=np.uint64))


@dataclass
class Tokens:
    """The words of a batch of texts: word ``k`` is ``data[starts[k]:ends[k]]`` (the folded texts'
    UTF-8 bytes; ``keep`` marks the bytes inside words), and ``words[firsts[i]:firsts[i + 1]]``
    are text ``i``'s. The scan hashes the words from their bytes and never needs them as strings:
    :attr:`words` is gathered only when asked for (the index, near duplicates, a hit's check)."""

    data: np.ndarray
    starts: np.ndarray
    ends: np.ndarray
    keep: np.ndarray
    firsts: np.ndarray

    def __len__(self) -> int:
        return len(self.firsts) - 1

    @cached_property
    def words(self) -> pa.Array:
        """Every word, one Arrow string array (32-bit offsets where they fit)."""
        word_offsets = np.zeros(len(self.starts) + 1, dtype=np.int64)
        np.cumsum(self.ends - self.starts, out=word_offsets[1:])
        small = word_offsets[-1] < 2**31
        return (pa.StringArray if small else pa.LargeStringArray).from_buffers(
            len(self.starts), pa.py_buffer(word_offsets.astype(np.int32) if small else word_offsets),
            pa.py_buffer(np.ascontiguousarray(self.data[self.keep])))

    def text(self, first: int, n: int) -> str:
        """Words ``first:first + n`` joined by one space."""
        return " ".join(self.data[s:e].tobytes().decode() for s, e in zip(self.starts[first : first + n].tolist(),
                                                                           self.ends[first : first + n].tolist()))

    def row(self, i: int) -> list[str]:
        return self.words[int(self.firsts[i]) : int(self.firsts[i + 1])].to_pylist()  # type: ignore[no-any-return]

    def joined(self) -> list[str]:
        """Each text's words joined by one space."""
        lists = pa.LargeListArray.from_arrays(pa.array(self.firsts, pa.int64()), self.words)
        return pc.binary_join(lists, pa.scalar(" ", self.words.type)).to_pylist()  # type: ignore[no-any-return]


def folded(texts: pa.Array, table: Classes | None = None) -> pa.Array:
    """``casefold(NFKC(text))`` of every text (nulls as empty texts): Arrow's lower-casing, except
    for the rows NFKC may change or holding a character whose case folding is not Arrow's
    lower-casing (:func:`_changing`), which Python normalises and folds."""
    cls = table or classes()
    texts = texts.cast(pa.large_string())
    if texts.null_count:
        texts = pc.fill_null(texts, "")
    lower = pc.utf8_lower(texts)
    _, off_buf, data_buf = texts.buffers()
    offsets = np.frombuffer(off_buf, dtype=np.int64)[texts.offset : texts.offset + len(texts) + 1]
    if data_buf is None or not len(texts) or np.frombuffer(data_buf, dtype=np.uint8)[offsets[0] : offsets[-1]].max(
            initial=0) < 0x80:
        return lower  # ASCII: nothing to normalise
    special = _changing(texts, cls)
    if special.any():
        fixed = [unicodedata.normalize("NFKC", t).casefold() for t in texts.filter(special).to_pylist()]
        lower = pc.replace_with_mask(lower, pa.array(special), pa.array(fixed, pa.large_string()))
    return lower


def _changing(texts: pa.Array, cls: Classes) -> np.ndarray:
    """Which texts NFKC or case folding may change (:func:`_unstable`'s rules, looked up at
    each non-ASCII character: none of them concerns an ASCII character alone)."""
    _, off_buf, data_buf = texts.buffers()
    offsets = np.frombuffer(off_buf, dtype=np.int64)[texts.offset : texts.offset + len(texts) + 1]
    data = np.frombuffer(data_buf, dtype=np.uint8)[offsets[0] : offsets[-1]]
    offsets = offsets - offsets[0]
    at = np.flatnonzero(data >= 0xC0)  # the first byte of each non-ASCII character
    cp = _code_point(data, at)
    flags = cls.flags[cp]
    first = cls.first_ccc[cp]
    look = np.flatnonzero((flags != 0) | (first > 0))
    at, cp, flags, first = at[look], cp[look], flags[look], first[look]
    row_start = np.zeros(len(data) + 1, dtype=bool)
    row_start[offsets] = True
    after = ~row_start[at]  # a character with one before it in its text
    back = np.maximum(at - 1, 0)
    for _ in range(3):  # back to the first byte of the character before
        back -= (data[back] & 0xC0) == 0x80
    prev = np.where(after, _code_point(data, back), 0)
    bad = (flags & _CHANGES) != 0
    bad |= after & (first > 0) & (cls.last_ccc[prev] > first)
    second = np.flatnonzero(after & ((flags & _SECOND) != 0))
    if len(second):
        key = prev[second].astype(np.uint64) << np.uint64(21) | cp[second].astype(np.uint64)
        found = np.minimum(np.searchsorted(cls.pairs, key), len(cls.pairs) - 1)
        bad[second] |= (cls.pairs[found] == key) | ((first[second] > 0)
                                                    & ((cls.flags[prev[second]] & _MARKS_ONLY) != 0))
    out = np.zeros(len(texts), dtype=bool)
    out[np.searchsorted(offsets, at[bad], side="right") - 1] = True
    return out


def _code_point(data: np.ndarray, at: np.ndarray) -> np.ndarray:
    """The code point of the UTF-8 character of ``data`` starting at each of ``at``."""
    last = len(data) - 1
    b0 = data[at].astype(np.int32)
    b1, b2, b3 = ((data[np.minimum(at + k, last)] & 0x3F).astype(np.int32) for k in (1, 2, 3))
    return np.where(b0 < 0x80, b0, np.where(b0 < 0xE0, ((b0 & 0x1F) << 6) | b1,
                                            np.where(b0 < 0xF0, ((b0 & 0x0F) << 12) | (b1 << 6) | b2,
                                                     ((b0 & 0x07) << 18) | (b1 << 12) | (b2 << 6) | b3)))


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
    return Tokens(data, starts, ends, keep, firsts)


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
    # a byte-to-byte look-up is bytes.translate (C, ~4x numpy's gather, which widens every byte to an index)
    kind = np.frombuffer(bytearray(data).translate(table[:256].tobytes()), dtype=np.uint8)  # ASCII; wider below
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
    rule = np.frombuffer(pair.tobytes().translate(_RULE.tobytes()), dtype=np.uint8)
    start = rule == 1
    depends = np.flatnonzero(rule == 2)
    if len(depends):
        # a word character after a mark continues that mark's word unless the word is a
        # spaceless character with its marks: the word's type is that of its last non-mark
        # character, or of the mark that opened it (walk back over the marks)
        at = depends - 1
        while True:
            was = kind[at]
            back = (((was & 7) == _MK) | ((was & 7) == _SPLMK)) & (pair[at] >> 4 != _NONE) | (was >= _CONT)
            if not back.any():
                break
            at = np.where(back, at - 1, at)
        opened = kind[at] & 7
        start[depends] = (opened == _SPL) | (opened == _SPLMK)
    tok = kind != _NONE
    final = np.empty(len(kind), dtype=bool)  # a word's last byte: the next one starts a word or is none's
    final[-1] = True
    np.logical_or(start[1:], ~tok[1:], out=final[:-1])
    final &= tok
    s = np.flatnonzero(start)
    return s, np.flatnonzero(final) + 1, np.searchsorted(s, offsets), tok


def normalise(text: str) -> list[str]:
    """The words of one text (:func:`tokenise` of one text)."""
    return tokenise([text]).row(0)
