"""Harvest stages 4 and 5: pick test sentences and build both suite variants.

Pass 2 over the aligned chunks (:func:`select_candidates`, one Dask task per chunk)
finds **occurrences**: a sentence pair in which an ambiguous source word occurs
exactly once, is linked one-to-one to a target token that belongs to one of its
senses, and that target word occurs once in the target sentence (so the
contrastive replaces an unambiguous position). Candidates are ranked by a hash of
(seed, corpus, line, word), so the choice is random-looking, stable, and the same
whatever the chunking; each chunk keeps only its best ``pool`` per (word, sense)
and pools merge by rank.

**Scoring variant** (stage 4): source sentences longer than ``min_words`` words
(tokens with a letter or digit; default 10), up to ``max_per_sense`` (20) per
sense. Each item has one contrastive translation per target word of every *other*
sense: the reference with the aligned target token replaced by that word
(capitalisation copied from the replaced token).

**Translation variant** (stage 5): the ambiguous word must be a noun in the
sentence (POS tagger of the source language; where none is installed, the sense's
inventory POS must include ``n``), and a sense needs at least ``min_per_sense`` (4)
examples, keeping at most ``max_per_sense`` (10); a word needs two such senses.
Correct words are the sense's target words, incorrect words those of every other
sense. A sense is **out of domain** when more than half of its kept examples
come from a subtitles corpus.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from benchsmith.builders.mucow.align import AlignedChunk
from benchsmith.builders.mucow.corpora import SUBTITLE_LABELS, is_subtitles
from benchsmith.builders.mucow.senses import AmbiguousWord, Sense


@dataclass(frozen=True)
class Occurrence:
    rank: str
    corpus: str
    line: int
    word: str
    sense: str
    source: str
    target: str
    src_tokens: tuple[str, ...]
    tgt_tokens: tuple[str, ...]
    i: int
    j: int
    span: tuple[int, int]

    @property
    def target_word(self) -> str:
        return self.target[self.span[0]:self.span[1]]

    @property
    def id(self) -> str:
        return f"{self.corpus}-{self.line}-{self.word}"


Pools = dict[tuple[str, str], list[Occurrence]]


def rank(seed: int, corpus: str, line: int, word: str) -> str:
    return hashlib.sha1(f"{seed}\t{corpus}\t{line}\t{word}".encode()).hexdigest()


def token_span(text: str, tokens: Sequence[str], j: int) -> tuple[int, int] | None:
    """Character span of token ``j`` in ``text`` (None when tokenisation changed characters before it)."""
    pos = 0
    for k, tok in enumerate(tokens):
        idx = text.find(tok, pos)
        if idx < 0:
            return None
        if k == j:
            return idx, idx + len(tok)
        pos = idx + len(tok)
    return None


def n_words(tokens: Iterable[str]) -> int:
    return sum(1 for t in tokens if any(ch.isalnum() for ch in t))


def _keep(pools: Pools, key: tuple[str, str], occ: Occurrence, size: int) -> None:
    pool = pools.setdefault(key, [])
    pool.append(occ)
    if len(pool) > 2 * size:  # amortised trim
        pool.sort(key=lambda o: o.rank)
        del pool[size:]


def select_candidates(
    chunk: AlignedChunk, words: dict[str, AmbiguousWord], seed: int, min_words: int, scoring_pool: int,
    translation_pool: int,
) -> tuple[Pools, Pools]:
    """Occurrences of one chunk: (scoring pool, translation pool), each best-ranked first."""
    scoring: Pools = {}
    translation: Pools = {}
    for corpus, line, s, t, st, tt, links in zip(chunk.corpora, chunk.lines, chunk.source, chunk.target,
                                                 chunk.src_tokens, chunk.tgt_tokens, chunk.links):
        if not links:
            continue
        lower_s = [x.lower() for x in st]
        hits = [(i, w) for i, w in enumerate(lower_s) if w in words]
        if not hits:  # most pairs hold no ambiguous word: nothing more to compute for them
            continue
        lower_t = [x.lower() for x in tt]
        link_of = dict(links)
        long_enough = n_words(st) > min_words
        for i, w in hits:
            amb = words[w]
            if lower_s.count(w) != 1 or i not in link_of:
                continue
            j = link_of[i]
            sense = amb.sense_of(lower_t[j])
            if sense is None or lower_t.count(lower_t[j]) != 1:
                continue
            span = token_span(t, tt, j)
            if span is None:
                continue
            occ = Occurrence(rank(seed, corpus, line, w), corpus, line, w, sense.id, s, t,
                             tuple(st), tuple(tt), i, j, span)
            _keep(translation, (w, sense.id), occ, translation_pool)
            if long_enough:
                _keep(scoring, (w, sense.id), occ, scoring_pool)
    for pools, size in ((scoring, scoring_pool), (translation, translation_pool)):
        for key in pools:
            pools[key] = sorted(pools[key], key=lambda o: o.rank)[:size]
    return scoring, translation


def merge_pools(parts: Iterable[Pools], size: int) -> Pools:
    out: Pools = {}
    for part in parts:
        for key, occs in part.items():
            out.setdefault(key, []).extend(occs)
    return {k: sorted(v, key=lambda o: o.rank)[:size] for k, v in sorted(out.items())}


def match_case(replacement: str, original: str) -> str:
    if len(original) > 1 and original.isupper():
        return replacement.upper()
    if original[:1].isupper():
        return replacement[:1].upper() + replacement[1:]
    return replacement


def _sense(words: dict[str, AmbiguousWord], occ: Occurrence) -> tuple[AmbiguousWord, Sense]:
    amb = words[occ.word]
    return amb, amb.sense(occ.sense)


def scoring_items(pools: Pools, words: dict[str, AmbiguousWord], max_per_sense: int = 20) -> list[dict]:
    """Stage 4: the scoring suite, ordered by word, sense, rank."""
    items = []
    for (_, _), occs in sorted(pools.items()):
        for occ in occs[:max_per_sense]:
            amb, sense = _sense(words, occ)
            a, b = occ.span
            original = occ.target_word
            replacements = amb.other_words(sense)
            items.append({
                "id": occ.id,
                "source": occ.source,
                "reference": occ.target,
                "ambiguous_word": occ.word,
                "original_translation": original,
                "sense": sense.id,
                "corpus": occ.corpus,
                "contrastive_translations": [occ.target[:a] + match_case(r, original) + occ.target[b:] for r in replacements],
                "replacements": replacements,
            })
    return items


NounTest = Callable[[list[Occurrence]], list[bool]]


def translation_items(
    pools: Pools,
    words: dict[str, AmbiguousWord],
    is_noun: NounTest,
    *,
    min_per_sense: int = 4,
    max_per_sense: int = 10,
    subtitle_labels: tuple[str, ...] = SUBTITLE_LABELS,
) -> list[dict]:
    """Stage 5: the translation suite, ordered by word, sense, rank."""
    kept: dict[str, dict[str, list[Occurrence]]] = {}
    for (w, sid), occs in sorted(pools.items()):
        nouns = [o for o, ok in zip(occs, is_noun(occs)) if ok][:max_per_sense]
        if len(nouns) >= min_per_sense:
            kept.setdefault(w, {})[sid] = nouns
    items = []
    for w, senses in sorted(kept.items()):
        if len(senses) < 2:
            continue
        for sid, occs in sorted(senses.items()):
            amb, sense = _sense(words, occs[0])
            subs = sum(is_subtitles(o.corpus, subtitle_labels) for o in occs)
            domain = "out" if subs * 2 > len(occs) else "in"
            for occ in occs:
                items.append({
                    "id": occ.id,
                    "sentence_id": occ.line,
                    "source": occ.source,
                    "reference": occ.target,
                    "ambiguous_word": w,
                    "sense": sid,
                    "correct_words": list(sense.words),
                    "incorrect_words": amb.other_words(sense),
                    "domain": domain,
                    "corpus": occ.corpus,
                })
    return items
