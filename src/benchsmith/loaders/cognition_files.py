"""Readers for CoGnition's released files (Li et al., ACL 2021).

* ``data/cg-test/cg-test.{en,zh,compound}`` (and the per-category copies under
  ``NP/``, ``VP/``, ``PP/``): three line-aligned files. Line *i* is a test
  sentence, its reference translation and the novel compound it contains. Each
  compound fills 5 consecutive lines (its 5 contexts), so the context index of a
  line is ``(line - 1) % 5``; :func:`read_cg_test` checks the blocks.
* ``eval/lexicon``: the paper's atom lexicon, ``atom<TAB>zh1/zh2/...`` per line.
  Modifier phrases are keyed ``mod0`` ("he liked"), ``mod1`` ("at the store"),
  ``mod2`` ("on the floor"). An empty alternative (``the\\t/``, ``liked\\t喜欢/``)
  means the atom may be left untranslated. A key listed twice (``building``)
  gets the union of its alternatives, in first-seen order.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from benchsmith.errors import ParseError
from benchsmith.loaders.moses import read_lines
from benchsmith.loaders.rawfile import short

CONTEXTS_PER_COMPOUND = 5


@dataclass(frozen=True)
class CGLine:
    """One CG-test line: the sentence, its reference, its compound and context index."""

    line: int
    en: str
    zh: str
    compound: str
    context: int


@dataclass(frozen=True)
class LexiconEntry:
    """Chinese renderings of one atom; ``optional`` when the lexicon allows none."""

    key: str
    translations: tuple[str, ...]
    optional: bool
    line: int


def read_cg_test(en: str | Path, zh: str | Path, compound: str | Path) -> list[CGLine]:
    """Read a CG-test triple and check its 5-context blocks.

    Raises:
        ParseError: the files are empty, line counts differ (all three files and
            counts named), a line is empty, a block of 5 lines does not share one
            compound, or the compound does not occur (as whole words) in its English
            sentence; invalid UTF-8 or a NUL byte.
        SourceError: a path cannot be read (missing, a directory).
    """
    files = {"en": Path(en), "zh": Path(zh), "compound": Path(compound)}
    lines = {k: read_lines(p) for k, p in files.items()}
    counts = {k: len(v) for k, v in lines.items()}
    if len(set(counts.values())) != 1:
        desc = ", ".join(f"{files[k]} has {n}" for k, n in counts.items())
        shortest = min(counts, key=counts.__getitem__)
        raise ParseError(
            f"CG-test files are not line-aligned: {desc} lines",
            path=files[shortest],
            line=counts[shortest] + 1,
            hint="Use the three files of one release (cg-test.en / .zh / .compound) unmodified",
        )
    n = counts["en"]
    if n == 0:
        raise ParseError("CG-test files are empty; expected 5 lines per compound", path=files["en"], line=1,
                         hint="Use the three files of one release (cg-test.en / .zh / .compound) unmodified")
    if n % CONTEXTS_PER_COMPOUND:
        raise ParseError(
            f"{n} lines is not a multiple of {CONTEXTS_PER_COMPOUND} (each compound has 5 contexts)",
            path=files["compound"],
            line=n,
            hint="The file is truncated; re-download it",
        )
    out: list[CGLine] = []
    for i in range(n):
        lineno = i + 1
        e, z, c = lines["en"][i].strip(), lines["zh"][i].strip(), lines["compound"][i].strip()
        for key, text in (("en", e), ("zh", z), ("compound", c)):
            if not text:
                raise ParseError(f"empty {key} line", path=files[key], line=lineno,
                                 hint="Every CG-test line needs a sentence, a reference and a compound")
        head = lines["compound"][i - i % CONTEXTS_PER_COMPOUND].strip()
        if c != head:
            raise ParseError(
                f"compound {short(c)} breaks the block of 5 contexts of {short(head)} "
                f"(lines {i - i % 5 + 1}-{i - i % 5 + 5})",
                path=files["compound"],
                line=lineno,
                hint="Each compound must fill 5 consecutive lines; the file is reordered or corrupt",
            )
        if f" {c} " not in f" {e} ":
            raise ParseError(
                f"compound {short(c)} does not occur in its sentence {short(e)}",
                path=files["en"],
                line=lineno,
                hint="The .en and .compound files are misaligned",
            )
        out.append(CGLine(lineno, e, z, c, i % CONTEXTS_PER_COMPOUND))
    return out


def read_lexicon(path: str | Path) -> dict[str, LexiconEntry]:
    """Read ``eval/lexicon`` into ``{atom: LexiconEntry}``.

    Raises:
        ParseError: a line without exactly one tab, an empty key, no entry at all
            (an empty lexicon would score every translation as wrong), invalid UTF-8
            or a NUL byte.
        SourceError: the path cannot be read (missing, a directory).
    """
    path = Path(path)
    out: dict[str, LexiconEntry] = {}
    for lineno, text in enumerate(read_lines(path), start=1):
        if not text.strip():
            continue
        parts = text.split("\t")
        if len(parts) != 2 or not parts[0].strip():
            raise ParseError(
                f"lexicon line {short(text)} is not `atom<TAB>zh1/zh2/...`",
                path=path,
                line=lineno,
                hint="Separate the atom from its slash-separated translations with one tab",
            )
        key = parts[0].strip()
        alts = [a.strip() for a in parts[1].split("/")]
        trans = tuple(a for a in alts if a)
        optional = any(not a for a in alts)
        if key in out:  # `building` is listed twice upstream: keep every rendering
            prev = out[key]
            trans = prev.translations + tuple(t for t in trans if t not in prev.translations)
            optional = optional or prev.optional
            lineno = prev.line
        out[key] = LexiconEntry(key, trans, optional, lineno)
    if not out:
        raise ParseError("lexicon has no entries; expected `atom<TAB>zh1/zh2/...` lines", path=path, line=1,
                         hint="Use eval/lexicon of the CoGnition release unmodified")
    return out
