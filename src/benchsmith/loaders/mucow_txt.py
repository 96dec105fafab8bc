"""MuCoW translation test suite, plain-text files (``txt/<pair>.{text,ref,key,domain}.txt``).

* ``text.txt`` / ``ref.txt``: one source sentence / reference translation per line;
* ``key.txt``: tab-separated ``id  corpus  ambiguous-word  correct-words  incorrect-words``
  (word lists are space-separated; ``id`` is the OPUS sentence id, not unique);
* ``domain.txt``: tab-separated ``ambiguous-word  correct-words  in|out  n_other  n_subtitles``,
  one row per (word, sense): a sense is *out* of domain when more than half of its
  harvested examples came from subtitles (the last two columns are those counts).

The four files are line-aligned where they must be (text, ref, key); every key row
must find its sense in ``domain.txt``. Errors name the file and the line.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from benchsmith.errors import ParseError
from benchsmith.loaders.moses import line_count_error, read_lines
from benchsmith.loaders.rawfile import short

DOMAINS = ("in", "out")
_INT = re.compile(r"-?[0-9]+")


@dataclass(frozen=True)
class KeyRow:
    line: int
    sentence_id: int
    corpus: str
    word: str
    correct: tuple[str, ...]
    incorrect: tuple[str, ...]


@dataclass(frozen=True)
class DomainRow:
    line: int
    word: str
    correct: tuple[str, ...]
    domain: str
    n_other: int
    n_subtitles: int


@dataclass(frozen=True)
class TranslationItem:
    line: int
    sentence_id: int
    corpus: str
    source: str
    reference: str
    word: str
    correct: tuple[str, ...]
    incorrect: tuple[str, ...]
    domain: str


def _fields(line: str, n: int, path: Path, lineno: int, what: str) -> list[str]:
    parts = line.split("\t")
    if len(parts) != n:
        raise ParseError(f"{len(parts)} tab-separated fields; expected {n} ({what})", path=path, line=lineno,
                         hint="Re-download the file; it must be tab-separated")
    return parts


def _words(value: str, path: Path, lineno: int, column: str) -> tuple[str, ...]:
    words = tuple(value.split())
    if not words:
        raise ParseError(f"empty {column} word list", path=path, line=lineno)
    return words


def _int(value: str, path: Path, lineno: int, column: str) -> int:
    """An integer written in ASCII digits that fits in 64 bits (ids and counts are Arrow int64)."""
    if _INT.fullmatch(value) and len(value) <= 20 and -(2**63) <= (number := int(value)) < 2**63:
        return number
    raise ParseError(f"{column} is {short(value)}; expected an integer (ASCII digits, 64 bits)",
                     path=path, line=lineno)


def read_key(path: str | Path) -> list[KeyRow]:
    path = Path(path)
    rows = []
    for lineno, line in enumerate(read_lines(path), start=1):
        if not line.strip():
            raise ParseError("empty line in a key file", path=path, line=lineno)
        sid, corpus, word, good, bad = _fields(line, 5, path, lineno, "id, corpus, word, correct, incorrect")
        rows.append(KeyRow(lineno, _int(sid, path, lineno, "id"), corpus, word,
                           _words(good, path, lineno, "correct"), _words(bad, path, lineno, "incorrect")))
    return rows


def read_domain(path: str | Path) -> dict[tuple[str, tuple[str, ...]], DomainRow]:
    """``{(word, correct words): row}``; a repeated (word, sense) is an error."""
    path = Path(path)
    out: dict[tuple[str, tuple[str, ...]], DomainRow] = {}
    for lineno, line in enumerate(read_lines(path), start=1):
        if not line.strip():
            continue
        word, good, dom, n_other, n_subs = _fields(line, 5, path, lineno, "word, correct, in|out, n_other, n_subs")
        if dom not in DOMAINS:
            raise ParseError(f"domain is {short(dom)}; expected 'in' or 'out'", path=path, line=lineno)
        key = (word, _words(good, path, lineno, "correct"))
        if key in out:
            raise ParseError(f"sense {short(word)} / {short(good)} repeated (first on line {out[key].line})",
                             path=path, line=lineno)
        out[key] = DomainRow(lineno, word, key[1], dom, _int(n_other, path, lineno, "n_other"),
                             _int(n_subs, path, lineno, "n_subtitles"))
    return out


def read_translation_suite(text: str | Path, ref: str | Path, key: str | Path, domain: str | Path) -> list[TranslationItem]:
    """Join the four files of one pair into items (file order).

    Raises:
        ParseError: line counts of text/ref/key differ, a malformed row, or a key
            row whose (word, correct words) has no row in the domain file.
    """
    srcs, refs, keys = read_lines(text), read_lines(ref), read_key(key)
    for other, rows in ((ref, refs), (key, keys)):
        if len(rows) != len(srcs):
            raise line_count_error(text, len(srcs), other, len(rows),
                                   hint="text.txt, ref.txt and key.txt must be line-aligned; re-download the suite")
    domains = read_domain(domain)
    items = []
    for src, tgt, k in zip(srcs, refs, keys):
        d = domains.get((k.word, k.correct))
        if d is None:
            raise ParseError(f"sense {k.word!r} / {' '.join(k.correct)!r} has no row in {domain}",
                             path=key, line=k.line, hint="The key and domain files are from different releases")
        items.append(TranslationItem(k.line, k.sentence_id, k.corpus, src, tgt, k.word, k.correct, k.incorrect, d.domain))
    return items
