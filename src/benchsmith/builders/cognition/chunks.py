"""The template slots of CoGnition's construction: NP / VP / PP chunks of a tokenised sentence.

The paper puts each compound into sentences whose NP, VP or PP constituent is replaced by
a placeholder (Section 4.3, "Synthesizing Source Sentences"). A *chunk* is such a slot,
read off a parse of a generic backend (:mod:`benchsmith.nlp.parse`):

* dependency parse (spaCy, the offline default): NP = a base noun chunk
  (``doc.noun_chunks``) whose head is a common noun (pronouns and names are not slots a
  compound can fill); VP = a verb and its direct-object noun chunk (``V NP``, contiguous);
  PP = a preposition and its object noun chunk (``P NP``, contiguous).
* constituency tree (benepar, stanza; the paper used the Berkeley parser): NP = an NP node
  with no NP, clause or PP inside; VP = a VP node whose children are exactly a verb and such
  an NP; PP = a PP node whose children are exactly a preposition and such an NP.

Spans are token offsets ``[start, end)`` over the tokens given.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from benchsmith.nlp.parse import Parser, get_parser

LABELS = ("NP", "VP", "PP")
#: node labels that stop a base NP (a clause, a phrase inside it)
_CLAUSE = {"S", "SBAR", "SBARQ", "SINV", "SQ", "PP", "NP", "VP"}


@dataclass(frozen=True)
class Chunk:
    label: str  # NP | VP | PP
    start: int
    end: int

    def text(self, tokens: Sequence[str]) -> str:
        return " ".join(tokens[self.start:self.end])


def chunks_from_doc(doc: Any) -> list[Chunk]:
    """NP/VP/PP chunks of a spaCy dependency parse (rules in the module docstring)."""
    out: list[Chunk] = []
    nps = {}
    for nc in doc.noun_chunks:
        if nc.root.pos_ == "NOUN":
            nps[nc.root.i] = nc
            out.append(Chunk("NP", nc.start, nc.end))
    for head_i, nc in nps.items():
        head = doc[head_i]
        gov = head.head
        if head.dep_ == "dobj" and gov.pos_ == "VERB" and gov.i + 1 == nc.start:
            out.append(Chunk("VP", gov.i, nc.end))
        elif head.dep_ == "pobj" and gov.dep_ == "prep" and gov.i + 1 == nc.start:
            out.append(Chunk("PP", gov.i, nc.end))
    return sorted(out, key=lambda c: (c.start, c.end, c.label))


def _leaves(tree: Any) -> int:
    return 1 if isinstance(tree, str) else sum(_leaves(c) for c in tree)


def chunks_from_tree(tree: Any) -> list[Chunk]:
    """NP/VP/PP chunks of an ``nltk.Tree``-like constituency tree (label(), children)."""
    out: list[Chunk] = []

    def base_np(node) -> bool:
        if isinstance(node, str) or node.label() != "NP":
            return False
        return all(isinstance(c, str) or c.label() not in _CLAUSE for c in node)

    def walk(node, start: int) -> int:
        if isinstance(node, str):
            return start + 1
        kids = [c for c in node]
        label = node.label()
        width = _leaves(node)
        if base_np(node):
            out.append(Chunk("NP", start, start + width))
        elif label in ("VP", "PP") and len(kids) == 2 and not isinstance(kids[0], str) and base_np(kids[1]):
            head = kids[0].label()
            if (label == "VP" and head.startswith("VB")) or (label == "PP" and head in ("IN", "TO")):
                out.append(Chunk(label, start, start + width))
        pos = start
        for c in kids:
            pos = walk(c, pos)
        return pos

    walk(tree, 0)
    return sorted(out, key=lambda c: (c.start, c.end, c.label))


class Chunker:
    """NP/VP/PP chunks from a parser backend (dependency or constituency rules by its kind)."""

    def __init__(self, parser: Parser):
        self.parser = parser
        self._rules = chunks_from_doc if parser.kind == "dependency" else chunks_from_tree

    def describe(self) -> str:
        return self.parser.describe()

    def chunks(self, tokens: Sequence[str]) -> list[Chunk]:
        return self._rules(self.parser.parse(tokens))

    def chunks_many(self, sentences: Sequence[Sequence[str]], batch_size: int = 256) -> Iterator[list[Chunk]]:
        """Chunks of many sentences, in order (batched where the backend can)."""
        for parse in self.parser.parse_many(sentences, batch_size=batch_size):
            yield self._rules(parse)


def get_chunker(backend: str = "spacy", model: str | None = None) -> Chunker:
    """A chunker over :func:`benchsmith.nlp.parse.get_parser` (same backends, same errors)."""
    return Chunker(get_parser(backend, model))
