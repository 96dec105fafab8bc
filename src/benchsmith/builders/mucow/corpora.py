"""Harvest stage 1: find and stream the parallel corpora, each with a corpus label.

``--parallel`` takes a folder, a file, or ``LABEL=PATH`` (repeatable). In a folder:

* **Moses-style pairs**: ``<stem>.<src>`` + ``<stem>.<tgt>`` with the language as
  the file extension in ISO 639-1 or 639-3 (OPUS ``Europarl.de-en.de``, Tatoeba's
  ``tatoeba-test-v2021-08-07.deu``), optionally ``.gz``;
* **TMX**: ``*.tmx`` / ``*.tmx.gz`` holding both languages.

The corpus label (what ``corpus`` says in the suites, and what decides the
translation variant's in/out-of-domain split) is ``LABEL`` when given, else the
first alphanumeric run of the file stem, lower-cased: ``OpenSubtitles.de-en`` ->
``opensubtitles``, ``tatoeba-test-v2021-08-07`` -> ``tatoeba``.

Two files of a pair with different line counts are a :class:`ParseError` raised
before any alignment starts (both files and counts named). Lines are streamed
(:func:`benchsmith.loaders.moses.iter_parallel`: UTF-8, NUL bytes refused, BOM
dropped) in chunks of ``chunk_size`` pairs, so memory does not grow with the corpus.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from benchsmith.errors import ConfigError
from benchsmith.loaders.moses import count_lines, iter_parallel, line_count_error
from benchsmith.loaders.tmx import iter_tmx, iter_tmx_pairs
from benchsmith.nlp.tokenize import iso1, iso3

SUBTITLE_LABELS = ("opensubs", "opensubtitles", "subtitles")


@dataclass(frozen=True)
class Corpus:
    label: str
    kind: str  # "moses" | "tmx"
    paths: tuple[Path, ...]

    def describe(self) -> str:
        return f"{self.label} ({self.kind}: {', '.join(p.name for p in self.paths)})"


@dataclass
class Chunk:
    """Up to ``chunk_size`` consecutive pairs; ``corpora[k]``/``lines[k]`` say where pair k comes from
    (corpus label, 1-based line or TMX unit line). A chunk may span corpora, so a small
    corpus is aligned together with its neighbours rather than on its own statistics."""

    index: int
    corpora: list[str]
    lines: list[int]
    source: list[str]
    target: list[str]


def label_of(stem: str) -> str:
    m = re.search(r"[A-Za-z0-9]+", stem)
    return m.group(0).lower() if m else stem.lower()


def _lang_suffixes(lang: str) -> set[str]:
    out = {lang.lower()}
    for f in (iso1, iso3):
        try:
            out.add(f(lang))
        except ConfigError:
            pass
    return out


def discover_corpora(spec: str | Path, src: str, tgt: str) -> list[Corpus]:
    """The corpora named by one ``--parallel`` value (see module docstring).

    Raises:
        ConfigError: the path does not exist or holds no corpus for the pair.
        ParseError: a Moses pair whose files differ in line count.
    """
    text = str(spec)
    label = None
    if "=" in text and not Path(text).exists():
        label, _, text = text.partition("=")
    path = Path(text)
    if not path.exists():
        raise ConfigError(f"parallel corpus path {path} does not exist",
                          hint="Pass --parallel DIR (Moses pairs or TMX) or --parallel LABEL=DIR")
    src_sfx, tgt_sfx = _lang_suffixes(src), _lang_suffixes(tgt)
    # a single file: a TMX, or the source side of a Moses pair (its partner is looked up beside it)
    files = sorted(path.iterdir()) if path.is_dir() else sorted(path.parent.iterdir())
    out: list[Corpus] = []
    for f in files:
        if not path.is_dir() and f != path:
            continue
        name = f.name.removesuffix(".gz")
        if name.endswith(".tmx"):
            if _tmx_has_pair(f, src, tgt):
                out.append(Corpus(label or label_of(name[:-4]), "tmx", (f,)))
            continue
        stem, dot, ext = name.rpartition(".")
        if not dot or ext.lower() not in src_sfx:
            continue
        partner = next((g for g in files if g != f and (g.name.removesuffix(".gz")).rpartition(".")[0] == stem
                        and (g.name.removesuffix(".gz")).rpartition(".")[2].lower() in tgt_sfx), None)
        if partner is None:
            continue
        n_src, n_tgt = count_lines(f), count_lines(partner)
        if n_src != n_tgt:
            raise line_count_error(f, n_src, partner, n_tgt)
        out.append(Corpus(label or label_of(stem), "moses", (f, partner)))
    if not out:
        raise ConfigError(
            f"no {src}-{tgt} corpus under {path}",
            hint=f"Expected <name>.{iso1(src)}/<name>.{iso1(tgt)} (or .{iso3(src)}/.{iso3(tgt)}) pairs or *.tmx files",
        )
    return out


def _tmx_has_pair(path: Path, src: str, tgt: str, peek: int = 1000) -> bool:
    """Whether one of the first ``peek`` units of a TMX holds both languages."""
    for k, unit in enumerate(iter_tmx(path)):
        if unit.get(src) is not None and unit.get(tgt) is not None:
            return True
        if k >= peek:
            break
    return False


def iter_pairs(corpus: Corpus, src: str, tgt: str) -> Iterator[tuple[int, str, str]]:
    """``(line, source, target)`` for every pair of a corpus, streamed."""
    if corpus.kind == "tmx":
        yield from iter_tmx_pairs(corpus.paths[0], src, tgt)
        return
    for pair in iter_parallel(*corpus.paths):
        yield pair.line, pair.source, pair.target


def iter_chunks(corpora: list[Corpus], src: str, tgt: str, chunk_size: int) -> Iterator[Chunk]:
    """Chunks of ``chunk_size`` consecutive pairs over the corpora in order (stable)."""
    index = 0
    chunk = Chunk(0, [], [], [], [])
    for corpus in corpora:
        for line, a, b in iter_pairs(corpus, src, tgt):
            chunk.corpora.append(corpus.label)
            chunk.lines.append(line)
            chunk.source.append(a)
            chunk.target.append(b)
            if len(chunk.lines) == chunk_size:
                yield chunk
                index += 1
                chunk = Chunk(index, [], [], [], [])
    if chunk.lines:
        yield chunk


def count_nonblank_pairs(corpora: list[Corpus], src: str, tgt: str, enough: int) -> int:
    """Pairs whose two sides both hold a non-space character, counted up to ``enough`` (then it stops:
    this is a check before alignment, not a second pass over a large corpus)."""
    n = 0
    for corpus in corpora:
        for _, a, b in iter_pairs(corpus, src, tgt):
            if a.strip() and b.strip():
                n += 1
                if n >= enough:
                    return n
    return n


def is_subtitles(label: str, subtitle_labels: tuple[str, ...] = SUBTITLE_LABELS) -> bool:
    return label.lower() in {x.lower() for x in subtitle_labels}
