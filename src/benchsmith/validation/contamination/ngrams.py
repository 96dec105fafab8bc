"""Normalised word n-grams of a release's items, and the scan of corpus text against them.

Normalisation (the same function on both sides): :func:`.words.tokenise`, NFKC, case
folding, words without punctuation, one token per character in scripts written without
spaces. "Don't!" and "don t" are the same two words; "我们走吧" is four tokens.

N-grams (see the package docstring for the choice of n): a matched value with at least
``ngram`` words contributes every ``ngram``-word window; a shorter value with at least
``min_tokens`` words contributes itself whole (it matches when it appears verbatim, as a
contiguous word sequence, inside a corpus line); a value under ``min_tokens`` words is
not matched and is counted as too short.

The index keeps, per n-gram length, a sorted array of 64-bit polynomial hashes over a 64-bit
value per word computed from the word's UTF-8 bytes alone (:meth:`ItemIndex._word_hashes`), so
a corpus batch needs neither its words as strings nor the release's vocabulary: it is
tokenised by :func:`.words.tokenise` (Arrow and numpy over the whole batch), each word's value
comes straight from its byte range, a window holding a word whose value is no release
word's (a table of their top bits) is skipped, and the hash of every window comes from one
prefix sum (``h(i, n) = P^(i+n-1) (C[i+n] - C[i])`` with ``C`` the running sum of
``value * P^-k``, all mod 2^64), computed only where a window of release words fits in its
line. Every hash hit is verified against the item's words as text, so a reported match is
exact, never a hash collision (of words or of n-grams).
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from benchsmith.validation.contamination.words import Classes, Tokens, classes, normalise, tokenise

DEFAULT_NGRAM = 13  # lm-evaluation-harness' decontamination convention (GPT-3's 13-grams)
DEFAULT_MIN_TOKENS = 5
_POLY = np.uint64(0x100000001B3)
_POLY_INVERSE = np.uint64(pow(0x100000001B3, -1, 1 << 64))
_MASKS = np.array([2 ** (8 * r) - 1 for r in range(9)], dtype=np.uint64)  # the low r bytes of 8
# the release's word values' top bits (a 4 MB table): a foreign word passes with probability words / 4M
_KNOWN_BITS = 22

__all__ = ["DEFAULT_MIN_TOKENS", "DEFAULT_NGRAM", "Hit", "Item", "ItemIndex", "normalise"]


def _mix(h: np.ndarray) -> np.ndarray:
    """murmur3's 64-bit finaliser (a bijection that spreads every input bit over the output)."""
    h ^= h >> np.uint64(33)
    h *= np.uint64(0xFF51AFD7ED558CCD)
    h ^= h >> np.uint64(33)
    h *= np.uint64(0xC4CEB9FE1A85EC53)
    h ^= h >> np.uint64(33)
    return h


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
    #: the release's words (word id = position + 1; 0 is a word not in the release)
    vocab: pa.Array = field(default_factory=lambda: pa.array([], pa.large_string()))
    #: every value's word ids, one after the other, value ``v`` at ``value_starts[v]:value_starts[v + 1]``
    value_ids: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    value_starts: np.ndarray = field(default_factory=lambda: np.zeros(1, dtype=np.int64))
    #: values under min_tokens words, per (config, split)
    too_short: dict[tuple[str, str], int] = field(default_factory=dict)
    #: per n-gram length: (sorted hashes, value number, start word), filled by freeze()
    tables: dict[int, tuple[np.ndarray, np.ndarray, np.ndarray]] = field(default_factory=dict)
    classes: Classes = field(default_factory=classes, repr=False)
    _pending: list[tuple[int, str, str]] = field(default_factory=list, repr=False)
    _known: np.ndarray | None = field(default=None, repr=False)
    _power: tuple[np.ndarray, np.ndarray] | None = field(default=None, repr=False)

    def add_item(self, item: Item, texts: Sequence[tuple[str, str]]) -> None:
        """Add an item with its matched ``(field, text)`` values (list fields: one per element)."""
        number = len(self.items)
        self.items.append(item)
        self._pending += [(number, name, text) for name, text in texts]

    def freeze(self) -> ItemIndex:
        """Tokenise every value at once and hash its n-grams into the per-length sorted tables
        (call once, after the items)."""
        pending, self._pending = self._pending, []
        tokens = tokenise([t for _, _, t in pending], self.classes)
        self.vocab = pc.unique(tokens.words)
        ids = pc.index_in(tokens.words, value_set=self.vocab).to_numpy(zero_copy_only=False).astype(np.int64) + 1
        counts = np.diff(tokens.firsts)
        keep = counts >= self.min_tokens
        for (number, _, _), short in zip(pending, ~keep):
            if short:
                key = (self.items[number].config, self.items[number].split)
                self.too_short[key] = self.too_short.get(key, 0) + 1
        self.values = [(number, name) for (number, name, _), k in zip(pending, keep) if k]
        word_keep = np.repeat(keep, counts)
        self.value_ids = ids[word_keep]
        self.value_starts = np.zeros(int(keep.sum()) + 1, dtype=np.int64)
        np.cumsum(counts[keep], out=self.value_starts[1:])
        word_values = np.zeros(len(self.vocab) + 1, dtype=np.uint64)  # per word id (0: none) its value
        word_values[ids] = self._word_hashes(tokens)
        self._known = np.zeros(1 << _KNOWN_BITS, dtype=bool)
        self._known[word_values[1:] >> np.uint64(64 - _KNOWN_BITS)] = True
        self.tables = {}
        lengths = np.diff(self.value_starts)
        n_of = np.minimum(lengths, self.ngram)
        for n in np.unique(n_of).tolist():
            values = np.flatnonzero(n_of == n)
            # every window of n words that starts inside its value
            per = lengths[values] - n + 1
            value = np.repeat(values, per)
            start = np.arange(len(value)) - np.repeat(np.cumsum(per) - per, per)
            first = self.value_starts[value] + start
            hashes = np.zeros(len(value), dtype=np.uint64)
            with np.errstate(over="ignore"):
                for k in range(n):
                    hashes = hashes * _POLY + word_values[self.value_ids[first + k]]
            order = np.argsort(hashes, kind="stable")
            self.tables[n] = (hashes[order], value[order], start[order])
        return self

    def for_workers(self) -> ItemIndex:
        """What a worker needs to scan: this index without its items (a shallow copy). Hits name
        item numbers; the report maps them to items on the full index. The items are most of the
        time it takes to pickle the index, and a Dask scan sends it to every worker."""
        light = copy.copy(self)
        light.items = []
        return light

    def value_tokens(self, value: int) -> np.ndarray:
        return self.value_ids[self.value_starts[value] : self.value_starts[value + 1]]

    def _word_hashes(self, tokens: Tokens) -> np.ndarray:
        """A 64-bit value per word of ``tokens``, from its UTF-8 bytes alone, so that the index and
        every corpus batch agree without a shared vocabulary (no word strings nor ``index_in`` on
        the corpus side). Each word's bytes are read 8 at a time (a little-endian 64-bit view at
        every byte offset; the bytes past the word's end zeroed: a word holds no NUL) and folded
        into its length by murmur3's finaliser, one round per 8 bytes, for the words still that long.
        A round is a bijection of the value so far, so two words of one length that differ in a
        single block (every pair of words of up to 8 bytes) never collide; other pairs collide as
        under a random 64-bit function, ~2^-64 a pair, ~10^-6 among a few million distinct words.
        A collision can only propose a window, which the scan checks on the text."""
        starts, lengths = tokens.starts, tokens.ends - tokens.starts
        padded = np.zeros(len(tokens.data) + 8, dtype=np.uint8)
        padded[: len(tokens.data)] = tokens.data
        at = np.ndarray((len(tokens.data) + 1,), dtype="<u8", buffer=padded, strides=(1,))  # 8 bytes from each offset
        with np.errstate(over="ignore"):
            h = _mix(lengths.astype(np.uint64) * _POLY + (at[starts] & _MASKS[np.minimum(lengths, 8)]))
            todo = np.flatnonzero(lengths > 8)
            for k in range(8, int(lengths.max(initial=0)), 8):  # the longer words (a fifth in a multilingual corpus)
                todo = todo[lengths[todo] > k]
                chunk = at[starts[todo] + k] & _MASKS[np.minimum(lengths[todo] - k, 8)]
                h[todo] = _mix(h[todo] * _POLY + chunk)
        return h

    # ------------------------------------------------------------------ scanning
    def encode(self, texts: pa.Array | Sequence[str]) -> tuple[Tokens, np.ndarray]:
        """The batch's words and their 64-bit values (:meth:`_word_hashes`)."""
        tokens = tokenise(texts, self.classes)
        return tokens, self._word_hashes(tokens)

    def scan(self, texts: pa.Array | Sequence[str], encoded: tuple[Tokens, np.ndarray] | None = None) -> list[Hit]:
        """Every verified match in a batch of corpus lines (line numbers are batch positions)."""
        if not len(texts) or not self.tables or self._known is None:
            return []
        tokens, values = encoded or self.encode(texts)
        total = len(values)
        if not total:
            return []
        firsts = tokens.firsts
        counts = np.diff(firsts)
        line_end = np.repeat(firsts[1:], counts)
        # a window with a word not in the release matches nothing: skip it (a false "known" only costs a look-up)
        known = self._known[values >> np.uint64(64 - _KNOWN_BITS)]
        unknown = np.zeros(total + 1, dtype=np.int64)
        np.cumsum(~known, out=unknown[1:])
        power, inverse = self._powers(total)
        with np.errstate(over="ignore"):
            prefix = np.zeros(total + 1, dtype=np.uint64)
            np.cumsum(values * inverse, out=prefix[1:])
        hits: list[Hit] = []
        at = np.flatnonzero(known)  # windows start on a known word
        for n in sorted(self.tables):
            fits = at + n <= line_end[at]
            at = at[fits]
            at = at[unknown[at + n] == unknown[at]]
            if not len(at):
                break
            with np.errstate(over="ignore"):
                h = (prefix[at + n] - prefix[at]) * power[at + n - 1]
            hashes, value, start = self.tables[n]
            lo = np.searchsorted(hashes, h, side="left")
            found = np.flatnonzero(hashes[np.minimum(lo, len(hashes) - 1)] == h)
            for k in found.tolist():
                i = int(at[k])
                window = tokens.text(i, n)
                line = int(np.searchsorted(firsts, i, side="right") - 1)
                j = int(lo[k])
                while j < len(hashes) and hashes[j] == h[k]:
                    v, s = int(value[j]), int(start[j])
                    if self.words(v, s, n) == window:  # the text, not its hash
                        hits.append(Hit(line, i - int(firsts[line]), v, s, n))
                    j += 1
        hits.sort(key=lambda h: (h.line, h.word, h.n, h.value, h.start))  # line order, whatever n found them
        return hits

    def _powers(self, size: int) -> tuple[np.ndarray, np.ndarray]:
        """``P^k`` and ``P^-k`` for ``k < size``, kept from batch to batch (grown by doubling)."""
        if self._power is None or len(self._power[0]) < size:
            n = max(size, 2 * len(self._power[0]) if self._power is not None else 1 << 16)
            with np.errstate(over="ignore"):
                power, inverse = (np.cumprod(np.concatenate([[np.uint64(1)], np.full(n - 1, p, dtype=np.uint64)]))
                                  for p in (_POLY, _POLY_INVERSE))
            self._power = (power, inverse)
        power, inverse = self._power
        return power[:size], inverse[:size]

    # ------------------------------------------------------------------ near duplicates
    def enable_near(self, threshold: float, ngram: int = 5, num_perm: int = 128) -> ItemIndex:
        """Also find corpus lines that are near duplicates of a matched value: Jaccard similarity
        of character ``ngram`` shingles at least ``threshold``, on the values' and lines'
        normalised words joined by spaces. The leakage check's MinHash LSH
        (:mod:`benchsmith.validation.checks.leakage`: datasketch's permutations, its band
        choice tuned for recall) proposes candidates; each is verified on its exact Jaccard."""
        from benchsmith.validation.checks.leakage import band_keys, lsh_bands, signatures

        self.near_threshold, self.near_ngram, self.near_perm = threshold, ngram, num_perm
        texts = [self.words(v, 0, len(self.value_tokens(v))) for v in range(len(self.values))]
        self.near_texts = texts
        bands, rows = lsh_bands(threshold, num_perm)
        self.near_keys = band_keys(signatures(texts, ngram, num_perm), bands, rows) if texts else None
        return self

    def near(self, texts: pa.Array | Sequence[str],
             encoded: tuple[Tokens, np.ndarray] | None = None) -> list[tuple[int, int, float]]:
        """(line, value, Jaccard) of every line of a batch that is a near duplicate of a value
        (without :meth:`enable_near`, nothing: and the leakage check's modules stay unimported)."""
        near_keys = getattr(self, "near_keys", None)
        if near_keys is None or not len(texts):
            return []
        from benchsmith.validation.checks.leakage import (
            _candidates,
            band_keys,
            lsh_bands,
            shingles,
            signatures,
        )

        lines = (encoded[0] if encoded else tokenise(texts, self.classes)).joined()
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
        ids = self.value_tokens(value)[start : start + n] - 1
        # word by word (at most n): pa.array() of a numpy array would import pandas on a worker
        return " ".join(self.vocab[int(i)].as_py() for i in ids)
