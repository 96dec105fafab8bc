"""Harvest stage 2: tokenise, word-align with eflomal, keep one-to-one links, count them.

Two units of work:

* an **alignment chunk** (:class:`~benchsmith.builders.mucow.corpora.Chunk`, ``--chunk-size``
  pairs, default 200,000) is what eflomal aligns in one call. eflomal is a statistical aligner
  whose links depend on the whole chunk, so chunks stay large (Tatoeba's 17,565 deu-eng pairs
  are one chunk) and their size is an option of the method, recorded in the release;
* a **piece** (:class:`Piece`) is a slice of a chunk: the unit of everything else
  (tokenisation, symmetrisation, counting, selecting sentences). :func:`pieces_per_chunk`
  cuts a chunk into enough pieces that every Dask worker gets work. No result depends on how a
  chunk is cut: the links come from the chunk's one eflomal call, and the later stages count
  and rank per pair.

Tasks (Dask, in worker processes: sacremoses and the symmetrisation are pure Python and hold
the GIL, so threads would not run them in parallel):

1. :func:`tokenize_piece`: Moses-tokenise both sides (sacremoses, ``benchsmith.nlp.tokenize``);
2. :func:`align_pieces`: the chunk's eflomal call (:mod:`.aligner`: seeded, so reproducible)
   on its pairs with both sides non-empty and at most ``max_tokens`` tokens (longer pairs are
   rare, useless as test items, and slow the sampler);
3. :func:`symmetrise_piece`: grow-diag-final-and of the two directions, then only
   **one-to-one links** (a source token linked to exactly one target token that is linked to
   no other source token): what MuCoW counts, and what the later stages read an
   occurrence's translation from;
4. :func:`count_links` (pass 1) and ``suites.select_candidates`` (pass 2) per aligned piece.

:func:`align_chunk` runs 1-3 on a whole chunk in one call (the sequential path).
"""

from __future__ import annotations

import itertools
import math
from collections import Counter
from dataclasses import dataclass, field

from benchsmith.builders.mucow.aligner import Aligner, EflomalAligner, require_eflomal
from benchsmith.builders.mucow.corpora import Chunk
from benchsmith.nlp.tokenize import get_tokenizer

__all__ = ["AlignParams", "AlignedChunk", "Alignment", "Piece", "TokenisedPiece", "align_chunk", "align_pieces",
           "candidate_words", "count_links", "grow_diag_final_and", "is_deterministic", "one_to_one", "pieces_per_chunk",
           "require_eflomal", "split_chunk", "symmetrise_piece", "tokenize_piece"]

#: pieces smaller than this are not worth a task
MIN_PIECE = 2_000
#: pieces per worker thread: a little slack, so a slow worker does not hold the others up
PIECES_PER_WORKER = 2


@dataclass(frozen=True)
class AlignParams:
    src: str
    tgt: str
    max_tokens: int = 100


@dataclass
class Piece:
    """Pairs ``start .. start + len(lines)`` of chunk ``chunk`` (``corpora[k]``/``lines[k]``: where pair k
    comes from)."""

    chunk: int
    index: int
    corpora: list[str]
    lines: list[int]
    source: list[str]
    target: list[str]


@dataclass
class TokenisedPiece(Piece):
    """A piece with each side's Moses tokens joined by spaces (tokens never contain whitespace), and the
    positions of the pairs that are aligned."""

    src_text: list[str] = field(default_factory=list)
    tgt_text: list[str] = field(default_factory=list)
    kept: list[int] = field(default_factory=list)


@dataclass
class Alignment:
    """eflomal's output for one chunk, cut back into its pieces: ``fwd[p]``/``rev[p]`` hold one line of
    links per kept pair of piece ``p``."""

    chunk: int
    fwd: list[list[str]]
    rev: list[list[str]]
    deterministic: bool


@dataclass
class AlignedChunk:
    """Pairs with their tokens and one-to-one links (``links[k]`` = [(i, j), ...]): a whole chunk or a piece.

    Tokens are kept joined by spaces (``src_text``), a third of the memory of lists of strings; the
    ``src_tokens`` / ``tgt_tokens`` properties split them again.
    """

    index: int
    corpora: list[str]
    lines: list[int]
    source: list[str]
    target: list[str]
    src_text: list[str]
    tgt_text: list[str]
    links: list[list[tuple[int, int]]] = field(default_factory=list)

    @property
    def src_tokens(self) -> list[list[str]]:
        return [t.split() for t in self.src_text]

    @property
    def tgt_tokens(self) -> list[list[str]]:
        return [t.split() for t in self.tgt_text]


# --------------------------------------------------------------------------- pieces


def pieces_per_chunk(n_pairs: int, workers: int) -> int:
    """How many pieces a chunk of ``n_pairs`` is cut into for ``workers`` worker threads."""
    return max(1, min(PIECES_PER_WORKER * max(1, workers), math.ceil(n_pairs / MIN_PIECE)))


def split_chunk(chunk: Chunk, n: int, first_index: int = 0) -> list[Piece]:
    """``n`` consecutive, near-equal pieces of ``chunk`` (indices ``first_index``, ``first_index + 1``...)."""
    size = len(chunk.lines)
    bounds = [size * k // n for k in range(n + 1)]
    return [Piece(chunk.index, first_index + k, chunk.corpora[a:b], chunk.lines[a:b], chunk.source[a:b],
                  chunk.target[a:b]) for k, (a, b) in enumerate(itertools.pairwise(bounds)) if b > a]


# --------------------------------------------------------------------------- tasks


def tokenize_piece(piece: Piece, params: AlignParams) -> TokenisedPiece:
    """Task 1: both sides Moses-tokenised; which pairs eflomal will align."""
    tok_s, tok_t = get_tokenizer(params.src), get_tokenizer(params.tgt)
    src = [tok_s(s) for s in piece.source]
    tgt = [tok_t(t) for t in piece.target]
    kept = [k for k, (a, b) in enumerate(zip(src, tgt))
            if a and b and len(a) <= params.max_tokens and len(b) <= params.max_tokens]
    return TokenisedPiece(piece.chunk, piece.index, piece.corpora, piece.lines, piece.source, piece.target,
                          [" ".join(a) for a in src], [" ".join(b) for b in tgt], kept)


def align_pieces(pieces: list[TokenisedPiece], aligner: Aligner) -> Alignment:
    """Task 2: one eflomal call over the kept pairs of a chunk's pieces (in order)."""
    src = [p.src_text[k] for p in pieces for k in p.kept]
    tgt = [p.tgt_text[k] for p in pieces for k in p.kept]
    chunk = pieces[0].chunk
    fwd, rev, deterministic = aligner(src, tgt, chunk) if src else ([], [], True)
    out = Alignment(chunk, [], [], deterministic)
    start = 0
    for p in pieces:
        out.fwd.append(fwd[start:start + len(p.kept)])
        out.rev.append(rev[start:start + len(p.kept)])
        start += len(p.kept)
    return out


def is_deterministic(alignment: Alignment) -> bool:
    """Whether a chunk's links are fixed by its input and seed (read on the worker that holds it)."""
    return alignment.deterministic


def symmetrise_piece(piece: TokenisedPiece, alignment: Alignment, position: int) -> AlignedChunk:
    """Task 3: one-to-one links of the grow-diag-final-and symmetrisation, for piece ``position`` of the chunk."""
    links: list[list[tuple[int, int]]] = [[] for _ in piece.lines]
    for k, fl, rl in zip(piece.kept, alignment.fwd[position], alignment.rev[position]):
        links[k] = one_to_one(grow_diag_final_and(_parse_links(fl), _parse_links(rl)))
    return AlignedChunk(piece.index, piece.corpora, piece.lines, piece.source, piece.target,
                        piece.src_text, piece.tgt_text, links)


def align_chunk(chunk: Chunk, params: AlignParams, aligner: Aligner | None = None) -> AlignedChunk:
    """Tasks 1-3 on a whole chunk in one call (default aligner: eflomal seeded with 0)."""
    (piece,) = split_chunk(chunk, 1)
    tokenised = tokenize_piece(piece, params)
    return symmetrise_piece(tokenised, align_pieces([tokenised], aligner or EflomalAligner()), 0)


# --------------------------------------------------------------------------- links


def _parse_links(line: str) -> set[tuple[int, int]]:
    out = set()
    for pair in line.split():
        i, _, j = pair.partition("-")
        out.add((int(i), int(j)))
    return out


_NEIGHBOURS = ((-1, 0), (0, -1), (1, 0), (0, 1), (-1, -1), (-1, 1), (1, -1), (1, 1))


def grow_diag_final_and(fwd: set[tuple[int, int]], rev: set[tuple[int, int]]) -> set[tuple[int, int]]:
    """Koehn et al.'s symmetrisation (as Moses' ``grow-diag-final-and``).

    Start from the intersection; pass over the links in sorted order (a snapshot per pass), adding
    each neighbour (8-neighbourhood) in the union whose source or target token is still unaligned,
    until a pass adds nothing; then add the links of each direction in turn, in sorted order, whose
    source and target tokens are both unaligned. Links outside the intersection (``pending``) are
    the only ones that can be added, so the loops stop as soon as none is left.
    """
    links = fwd & rev
    pending = (fwd | rev) - links
    if not pending:
        return links
    src_done = {i for i, _ in links}
    tgt_done = {j for _, j in links}
    grew = True
    while grew and pending:
        grew = False
        for i, j in sorted(links):
            for di, dj in _NEIGHBOURS:
                p = (i + di, j + dj)
                if p in pending and (p[0] not in src_done or p[1] not in tgt_done):
                    links.add(p)
                    pending.discard(p)
                    src_done.add(p[0])
                    tgt_done.add(p[1])
                    grew = True
    for direction in (fwd, rev):
        for i, j in sorted(direction & pending):
            if i not in src_done and j not in tgt_done:
                links.add((i, j))
                pending.discard((i, j))
                src_done.add(i)
                tgt_done.add(j)
    return links


def one_to_one(links: set[tuple[int, int]]) -> list[tuple[int, int]]:
    """The links whose source and target token each take part in no other link, sorted."""
    src = [i for i, _ in links]
    tgt = [j for _, j in links]
    if len(set(src)) == len(src) and len(set(tgt)) == len(tgt):  # the usual case: every link is one-to-one
        return sorted(links)
    return sorted((i, j) for i, j in links if src.count(i) == 1 and tgt.count(j) == 1)


# --------------------------------------------------------------------------- counting


def count_links(chunk: AlignedChunk) -> Counter:
    """``Counter{(source word, target word): n}`` over one-to-one links, lower-cased."""
    c: Counter = Counter()
    for s, t, ls in zip(chunk.src_tokens, chunk.tgt_tokens, chunk.links):
        for i, j in ls:
            c[(s[i].lower(), t[j].lower())] += 1
    return c


def candidate_words(counts: Counter, min_links: int = 10, min_targets: int = 2) -> dict[str, dict[str, int]]:
    """Source words with at least ``min_targets`` distinct target words each linked ``min_links`` times.

    Returns ``{source word: {target word: links}}`` restricted to those target words.
    Tokens without a letter (numbers, punctuation) are never candidates.
    """
    by_src: dict[str, dict[str, int]] = {}
    for (s, t), n in counts.items():
        if n >= min_links and any(ch.isalpha() for ch in s) and any(ch.isalpha() for ch in t):
            by_src.setdefault(s, {})[t] = n
    return {s: dict(sorted(ts.items())) for s, ts in sorted(by_src.items()) if len(ts) >= min_targets}
