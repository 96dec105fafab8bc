"""Multilingual sense inventories: Open Multilingual Wordnet tab files and BabelNet TSV exports.

Both are read into one :class:`Inventory`: for each language, lemma -> synsets and
synset -> lemmas, plus each synset's part of speech (``n``, ``v``, ``a``, ``r``).
Lemmas are compared lower-cased; multi-word lemmas keep their spaces (BabelNet's
``_`` becomes a space) and simply never match a single aligned token.

**OMW tab** (``wn-data-<lang>.tab``, ``wikt-<lang>.tab``)::

    # Wiktionary<TAB>deu<TAB>http://wiktionary.org/<TAB>CC BY-SA
    00004171-a<TAB>deu:lemma<TAB>todgeweiht

The synset id is ``<8-digit offset>-<pos>`` (``s``, satellite adjective, counts as
``a``); rows of other types (``deu:def``, ``deu:exe`` ...) are skipped; the
language is the type's prefix (ISO 639-3).

**BabelNet TSV** (``*.tsv``; what ``benchsmith harvest mucow --inventory`` accepts as
a BabelNet export), one lexicalisation per row, four tab-separated columns::

    synset<TAB>language<TAB>lemma<TAB>pos
    bn:00008364n<TAB>DE<TAB>Bank<TAB>NOUN

an optional header row spelled exactly like the first line above; ``language``
is ISO 639-1 or 639-3 in any case (BabelNet writes ``DE``); ``pos`` is one of
``n v a r`` or ``NOUN VERB ADJ ADV``. BabelNet's own API/dump tools can write
this shape with one line per (synset, language, lemma).

Rows with an empty lemma (OMW-Wiktionary ships 57) are skipped and counted in
``Inventory.skipped_empty``; other malformed rows are :class:`~benchsmith.errors.ParseError`\\ s naming file and line.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from benchsmith.errors import ConfigError, ParseError
from benchsmith.loaders.moses import iter_lines
from benchsmith.loaders.rawfile import open_raw, short, unreadable
from benchsmith.nlp.tokenize import iso3

OMW_SYNSET = re.compile(r"^\d{8}-[nvasr]$")
POS_NAMES = {"n": "n", "v": "v", "a": "a", "s": "a", "r": "r", "noun": "n", "verb": "v", "adj": "a",
             "adjective": "a", "adv": "r", "adverb": "r"}
BABELNET_HEADER = ("synset", "language", "lemma", "pos")


@dataclass(frozen=True)
class SenseEntry:
    synset: str
    lang: str  # ISO 639-3
    lemma: str
    pos: str  # n v a r


@dataclass
class Inventory:
    """Lemmas and synsets per language (lower-cased lemmas)."""

    name: str = ""
    synsets_of: dict[str, dict[str, set[str]]] = field(default_factory=lambda: defaultdict(lambda: defaultdict(set)))
    lemmas_of: dict[str, dict[str, set[str]]] = field(default_factory=lambda: defaultdict(lambda: defaultdict(set)))
    pos_of: dict[str, str] = field(default_factory=dict)
    files: list[Path] = field(default_factory=list)
    #: rows with an empty lemma (skipped; OMW-Wiktionary has a few)
    skipped_empty: int = 0

    def add(self, e: SenseEntry) -> None:
        lemma = e.lemma.lower()
        self.synsets_of[e.lang][lemma].add(e.synset)
        self.lemmas_of[e.lang][e.synset].add(lemma)
        self.pos_of[e.synset] = e.pos

    def languages(self) -> list[str]:
        return sorted(self.synsets_of)

    def senses(self, word: str, src: str, tgt: str) -> dict[str, set[str]]:
        """``{synset: target lemmas}`` for the synsets of source ``word`` that have target lemmas."""
        s3, t3 = iso3(src), iso3(tgt)
        out = {}
        for syn in sorted(self.synsets_of.get(s3, {}).get(word.lower(), ())):
            lemmas = self.lemmas_of.get(t3, {}).get(syn)
            if lemmas:
                out[syn] = set(lemmas)
        return out


def _rows(path: Path) -> Iterator[tuple[int, list[str]]]:
    """``(line, tab-separated fields)`` of the rows of ``path``, streamed; blank and ``#`` lines skipped."""
    for lineno, line in enumerate(iter_lines(path), start=1):
        if line.strip() and not line.startswith("#"):
            yield lineno, line.split("\t")


def _iso3(lang: str, path: Path, line: int) -> str:
    try:
        return iso3(lang)
    except ConfigError:
        raise ParseError(f"language is {short(lang)}; expected an ISO 639-1 or 639-3 code", path=path,
                         line=line) from None


def iter_omw_tab(path: str | Path) -> Iterator[SenseEntry]:
    path = Path(path)
    for lineno, parts in _rows(path):
        if len(parts) < 3:
            raise ParseError(f"{len(parts)} tab-separated fields; expected synset, lang:type, lemma", path=path,
                             line=lineno, hint="OMW tab rows look like '00004171-a<TAB>deu:lemma<TAB>todgeweiht'")
        syn, kind, lemma = parts[0], parts[1], parts[2]
        lang, _, typ = kind.partition(":")
        if typ != "lemma":
            continue
        if not OMW_SYNSET.match(syn):
            raise ParseError(f"synset id {short(syn)}; expected 8 digits, '-', and one of n v a s r", path=path,
                             line=lineno)
        if not lemma.strip():
            # upstream OMW-Wiktionary has a few empty lemma rows (57 in the 2023 files):
            # nothing to look up, so they are skipped (counted by load_inventory)
            yield SenseEntry(syn, "", "", "")
            continue
        yield SenseEntry(syn[:-1] + POS_NAMES[syn[-1]], _iso3(lang, path, lineno), lemma.strip(), POS_NAMES[syn[-1]])


def iter_babelnet_tsv(path: str | Path) -> Iterator[SenseEntry]:
    path = Path(path)
    for lineno, parts in _rows(path):
        if lineno == 1 and tuple(p.strip().lower() for p in parts) == BABELNET_HEADER:
            continue
        if len(parts) != 4:
            raise ParseError(f"{len(parts)} tab-separated fields; expected synset, language, lemma, pos",
                             path=path, line=lineno,
                             hint="See loaders/sense_inventory.py for the accepted BabelNet TSV shape")
        syn, lang, lemma, pos = (p.strip() for p in parts)
        if not syn or not lemma:
            raise ParseError("empty synset or lemma", path=path, line=lineno)
        p = POS_NAMES.get(pos.lower())
        if p is None:
            raise ParseError(f"pos is {short(pos)}; expected one of n v a r / NOUN VERB ADJ ADV", path=path,
                             line=lineno)
        yield SenseEntry(syn, _iso3(lang, path, lineno), lemma.replace("_", " "), p)


def _tab_language(path: Path) -> tuple[str, int] | None:
    """The language of an OMW tab file and the line it was read from (its header or first lemma row)."""
    try:
        with open_raw(path, "r", encoding="utf-8", errors="replace") as fh:
            for lineno, line in enumerate(fh, start=1):
                parts = line.rstrip("\r\n").split("\t")
                if line.startswith("#"):
                    if len(parts) >= 2 and parts[1].strip():
                        return parts[1].strip(), lineno
                    continue
                if len(parts) >= 2 and ":" in parts[1]:
                    return parts[1].split(":")[0], lineno
    except OSError as exc:
        raise unreadable(path, exc) from None
    return None


def inventory_files(directory: str | Path, languages: Iterable[str]) -> list[Path]:
    """The OMW ``*.tab`` files for ``languages`` plus every BabelNet ``*.tsv`` in ``directory``."""
    directory = Path(directory)
    if not directory.is_dir():
        what = "is a file, not a folder" if directory.exists() else "does not exist"
        raise ConfigError(f"sense inventory folder {what}", path=directory,
                          hint="Pass --inventory DIR: the folder holding OMW *.tab files or BabelNet *.tsv exports")
    wanted = {iso3(lang) for lang in languages}
    out = []
    for p in sorted(directory.glob("*.tab")):
        found = _tab_language(p)
        if found is not None:
            lang, line = found
            if _iso3(lang, p, line) in wanted:
                out.append(p)
    out += sorted(directory.glob("*.tsv"))
    return out


def check_languages(directory: str | Path, languages: Iterable[str]) -> list[Path]:
    """:func:`inventory_files`, and a ConfigError unless every language has a file or a row: the quick
    test a harvest runs before alignment (OMW files by their header; BabelNet TSVs read until every
    language is seen). A language :func:`load_inventory` then finds no lemma for is still its error."""
    order = [iso3(lang) for lang in languages]
    wanted = set(order)
    files = inventory_files(directory, order)
    seen: set[str] = set()
    for path in files:
        if path.suffix == ".tab":
            found = _tab_language(path)
            if found is not None:
                seen.add(_iso3(found[0], path, found[1]))
            continue
        for lineno, parts in _rows(path):
            if len(parts) == 4 and not (lineno == 1 and tuple(p.strip().lower() for p in parts) == BABELNET_HEADER):
                seen.add(_iso3(parts[1].strip(), path, lineno))
            if wanted <= seen:
                break
    for lang in sorted(wanted - seen, key=order.index):
        raise ConfigError(
            f"sense inventory has no entries for language {lang!r}", path=Path(directory),
            hint="Add wikt-<lang>.tab / wn-data-<lang>.tab (OMW) or BabelNet TSV rows for it",
        )
    return files


def load_inventory(directory: str | Path, languages: Iterable[str]) -> Inventory:
    """Load the entries of ``languages`` from a folder of OMW tab files and/or BabelNet TSVs.

    Raises:
        ConfigError: the folder is missing, or it has no entries for one of the languages.
        ParseError: a malformed row, invalid UTF-8 or a NUL byte (file and line named).
        SourceError: a file cannot be read (e.g. a folder named ``*.tab``).
    """
    languages = [iso3(lang) for lang in languages]
    inv = Inventory(name=Path(directory).name)
    for path in inventory_files(directory, languages):
        entries = iter_omw_tab(path) if path.suffix == ".tab" else iter_babelnet_tsv(path)
        for e in entries:
            if not e.lemma:
                inv.skipped_empty += 1
            elif e.lang in languages:
                inv.add(e)
        inv.files.append(path)
    for lang in languages:
        if not inv.synsets_of.get(lang):
            raise ConfigError(
                f"sense inventory has no entries for language {lang!r}", path=directory,
                hint="Add wikt-<lang>.tab / wn-data-<lang>.tab (OMW) or BabelNet TSV rows for it",
            )
    return inv
