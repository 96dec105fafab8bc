"""Normalised word n-grams of a release's items, and the scan of corpus text against them.

Normalisation (the same on both sides): Unicode NFKC, case folding, then the words of
:func:`benchsmith.validation.dataview.word_pattern`, the length statistics' tokeniser
without punctuation: word runs with their combining marks, and one token per character
in scripts written without spaces (CJK, Thai, ...). "Don't!" and "don t" are the same
two words; "我们走吧" is four tokens.

N-grams (see the package docstring for the choice of n): a matched value with at least
``ngram`` words contributes every ``ngram``-word window; a shorter value with at least
``min_tokens`` words contributes itself whole (it matches when it appears verbatim, as a
contiguous word sequence, inside a corpus line); a value under ``min_tokens`` words is
not matched and is counted as too short.

The index keeps, per n-gram length, a sorted array of 64-bit rolling hashes (random
64-bit values per release word, combined polynomially). A corpus batch is tokenised in
one regular-expression pass over its lines joined by NUL; a word that is not in the
release's vocabulary can be part of no match, so it breaks windows and the vocabulary
(hence memory) is the release's, whatever the corpus. Every hash hit is verified against
the item's words, so a reported match is exact, never a hash collision.
"""

from __future__ import annotations

import itertools
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

import numpy as np
from benchsmith.validation.dataview import word_pattern

DEFAULT_NGRAM = 13  # lm-evaluation-harness' decontamination convention (GPT-3's 13-grams)
DEFAULT_MIN_TOKENS = 5
_SEP = "\x00"
_POLY = np.uint64(0x100000001B3)


@lru_cache(maxsize=1)
def _patterns() -> tuple[Any, Any, Any]:
    """(the word pattern with the separator, its fast form for text without spaceless scripts,
    a search for a spaceless-script character). Without such characters the word pattern's
    tokens are exactly runs of word characters and marks, which one character class (a single
    repeat in the regex engine, ~3x faster than the pattern's alternation per character) finds."""
    import re

    from benchsmith.validation.dataview import _NO_SPACES, _mark_class

    return (re.compile(word_pattern().pattern + "|\x00"),
            re.compile(rf"[\w{_mark_class()}]+|\x00"),
            re.compile(f"[{_NO_SPACES}]"))


#: ASCII fast path: every character that is not a word character becomes a space (NUL stays a token)
_ASCII_TABLE = {c: " " for c in range(128) if not (chr(c).isalnum() or chr(c) == "_")} | {0: " \x00 "}


def normalise(text: str) -> list[str]:
    """The words a text is matched on (see module docstring)."""
    return word_pattern().findall(unicodedata.normalize("NFKC", text).casefold())


def batch_words(texts: Sequence[str]) -> list[str]:
    """:func:`normalise` of every text, in one pass, with a NUL token after each but the last."""
    joined = _SEP.join(texts)
    if joined.count(_SEP) != len(texts) - 1:  # a NUL inside a line: it must not split the line
        joined = _SEP.join(t.replace(_SEP, " ") for t in texts)
    if joined.isascii():  # casefold is lower(); words are [A-Za-z0-9_] runs: no regex needed
        return joined.lower().translate(_ASCII_TABLE).split()
    text = unicodedata.normalize("NFKC", joined).casefold()
    full, fast, spaceless = _patterns()
    return (full if spaceless.search(text) else fast).findall(text)


@dataclass(frozen=True)
class Item:
    """One example of the release: where it is and what it is called."""

    config: str
    split: str
    row: int
    id: Any


@dataclass
class Hit:
    """One verified match: words ``start:start + n`` of value ``value`` of the index are
    words ``word:word + n`` of line ``line`` of a batch."""

    line: int
    word: int
    value: int
    start: int
    n: int


@dataclass
class ItemIndex:
    """The n-grams of every matched value of a release (see module docstring)."""

    ngram: int = DEFAULT_NGRAM
    min_tokens: int = DEFAULT_MIN_TOKENS
    items: list[Item] = field(default_factory=list)
    #: per value: (item number, field name)
    values: list[tuple[int, str]] = field(default_factory=list)
    value_tokens: list[np.ndarray] = field(default_factory=list)
    vocab: dict[str, int] = field(default_factory=dict)
    #: values under min_tokens words, per (config, split)
    too_short: dict[tuple[str, str], int] = field(default_factory=dict)
    #: per n-gram length: (sorted hashes, value number, start word), filled by freeze()
    tables: dict[int, tuple[np.ndarray, np.ndarray, np.ndarray]] = field(default_factory=dict)
    _grams: dict[int, list[tuple[np.ndarray, int, int]]] = field(default_factory=dict, repr=False)
    _random: np.ndarray | None = field(default=None, repr=False)
    _lookup: dict[str, int] | None = field(default=None, repr=False)

    def add_item(self, item: Item, texts: Sequence[tuple[str, str]]) -> None:
        """Add an item with its matched ``(field, text)`` values (list fields: one per element)."""
        number = len(self.items)
        self.items.append(item)
        for name, text in texts:
            words = normalise(text)
            if len(words) < self.min_tokens:
                key = (item.config, item.split)
                self.too_short[key] = self.too_short.get(key, 0) + 1
                continue
            ids = np.fromiter((self.vocab.setdefault(w, len(self.vocab) + 1) for w in words), dtype=np.int64,
                              count=len(words))
            v = len(self.values)
            self.values.append((number, name))
            self.value_tokens.append(ids)
            n = min(self.ngram, len(ids))
            self._grams.setdefault(n, []).append((ids, v, len(ids) - n + 1))

    @property
    def separator(self) -> int:
        return len(self.vocab) + 1

    def freeze(self) -> ItemIndex:
        """Hash every n-gram into the per-length sorted tables (call once, after the items)."""
        # 0: a word not in the release, len(vocab) + 1: the line separator; both break windows
        self._random = self._word_values(len(self.vocab) + 2)
        self.tables = {}
        for n, grams in sorted(self._grams.items()):
            if not grams:
                continue
            ids = np.concatenate([g[0] for g in grams])
            value = np.concatenate([np.full(len(g[0]), g[1], dtype=np.int64) for g in grams])
            start = np.concatenate([np.arange(len(g[0]), dtype=np.int64) for g in grams])
            counts = np.array([g[2] for g in grams])
            hashes = _rolling(self._random[ids], n)
            # keep windows that start inside their own value (the last n - 1 run into the next)
            keep = start[: len(hashes)] < np.repeat(counts, [len(g[0]) for g in grams])[: len(hashes)]
            order = np.argsort(hashes[keep], kind="stable")
            self.tables[n] = (hashes[keep][order], value[: len(hashes)][keep][order],
                              start[: len(hashes)][keep][order])
        self._grams = {}
        return self

    def _word_values(self, size: int) -> np.ndarray:
        """A random 64-bit value per word id (fixed seed; a test forces collisions here)."""
        return np.random.default_rng(0x5EED).integers(1, np.iinfo(np.uint64).max, size=size, dtype=np.uint64)

    # ------------------------------------------------------------------ scanning
    def _encode(self, texts: Sequence[str]) -> np.ndarray:
        toks = batch_words(texts)
        lookup = self._lookup
        if lookup is None:
            lookup = self._lookup = {**self.vocab, _SEP: self.separator}
        return np.fromiter(map(lookup.get, toks, itertools.repeat(0)), dtype=np.int64, count=len(toks))

    def scan(self, texts: Sequence[str]) -> list[Hit]:
        """Every verified match in a batch of corpus lines (line numbers are batch positions)."""
        if not texts or not self.tables or self._random is None:
            return []
        ids = self._encode(texts)
        if not len(ids):
            return []
        sep = ids == self.separator
        bad = sep | (ids == 0)
        cbad = np.concatenate([[0], np.cumsum(bad)])
        # line of each token, and where each line starts (in tokens)
        line_of = np.cumsum(sep) - sep
        starts = np.concatenate([[0], np.flatnonzero(sep) + 1])
        rv = self._random[ids]
        acc = rv.copy()
        hits: list[Hit] = []
        longest = max(self.tables)
        with np.errstate(over="ignore"):
            for n in range(1, longest + 1):
                if n > 1:
                    if len(acc) <= 1:
                        break
                    acc = acc[:-1] * _POLY + rv[n - 1 :]
                table = self.tables.get(n)
                if table is None:
                    continue
                valid = np.flatnonzero(cbad[n:] == cbad[:-n])
                if not len(valid):
                    continue
                hashes, value, start = table
                h = acc[valid]
                lo = np.searchsorted(hashes, h, side="left")
                hi = np.searchsorted(hashes, h, side="right")
                for k in np.flatnonzero(hi > lo).tolist():
                    i = int(valid[k])
                    window = ids[i : i + n]
                    line = int(line_of[i])
                    for j in range(int(lo[k]), int(hi[k])):
                        v, s = int(value[j]), int(start[j])
                        if np.array_equal(self.value_tokens[v][s : s + n], window):
                            hits.append(Hit(line, i - int(starts[line]), v, s, n))
        hits.sort(key=lambda h: (h.line, h.word, h.n, h.value, h.start))  # line order, whatever n found them
        return hits

    # ------------------------------------------------------------------ near duplicates
    def enable_near(self, threshold: float, ngram: int = 5, num_perm: int = 128) -> ItemIndex:
        """Also find corpus lines that are near duplicates of a matched value: Jaccard similarity
        of character ``ngram`` shingles at least ``threshold``, on the values' and lines'
        normalised words joined by spaces. The leakage check's MinHash LSH
        (:mod:`benchsmith.validation.checks.leakage`: datasketch's permutations, its band
        choice tuned for recall) proposes candidates; each is verified on its exact Jaccard."""
        from benchsmith.validation.checks.leakage import band_keys, lsh_bands, signatures

        self.near_threshold, self.near_ngram, self.near_perm = threshold, ngram, num_perm
        texts = [" ".join(self.words(v, 0, len(t)).split()) for v, t in enumerate(self.value_tokens)]
        self.near_texts = texts
        bands, rows = lsh_bands(threshold, num_perm)
        self.near_keys = band_keys(signatures(texts, ngram, num_perm), bands, rows) if texts else None
        return self

    def near(self, texts: Sequence[str]) -> list[tuple[int, int, float]]:
        """(line, value, Jaccard) of every line of a batch that is a near duplicate of a value."""
        from benchsmith.validation.checks.leakage import (
            _candidates,
            band_keys,
            lsh_bands,
            shingles,
            signatures,
        )

        near_keys = getattr(self, "near_keys", None)
        if near_keys is None or not texts:
            return []
        words = batch_words(texts)
        lines: list[str] = []
        cur: list[str] = []
        for w in words:
            if w == _SEP:
                lines.append(" ".join(cur))
                cur = []
            else:
                cur.append(w)
        lines.append(" ".join(cur))
        bands, rows = lsh_bands(self.near_threshold, self.near_perm)
        keys = band_keys(signatures(lines, self.near_ngram, self.near_perm), bands, rows)
        values, found = _candidates(near_keys, keys)
        out = []
        for v, line in zip(values.tolist(), found.tolist()):
            if not lines[line]:
                continue
            a, b = shingles(self.near_texts[v], self.near_ngram), shingles(lines[line], self.near_ngram)
            j = len(a & b) / len(a | b)
            if j >= self.near_threshold:
                out.append((line, v, round(j, 4)))
        return sorted(out)

    def words(self, value: int, start: int, n: int) -> str:
        """The normalised words of a value's n-gram (what the report shows as matched)."""
        inverse = getattr(self, "_inverse", None)
        if inverse is None:
            inverse = {i: w for w, i in self.vocab.items()}
            self._inverse = inverse
        return " ".join(inverse[int(i)] for i in self.value_tokens[value][start : start + n])


def _rolling(r: np.ndarray, n: int) -> np.ndarray:
    """Polynomial hashes of every ``n``-long window of ``r`` (uint64, wrapping)."""
    if len(r) < n:
        return np.zeros(0, dtype=np.uint64)
    acc = r.copy()
    with np.errstate(over="ignore"):
        for k in range(1, n):
            acc = acc[:-1] * _POLY + r[k:]
    return acc
