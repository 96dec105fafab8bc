"""Construction stages 2-3: compounds and templates.

* :func:`compare_enumeration` enumerates atoms x the 12 patterns
  (:func:`atoms.enumerate_compounds`) and reports how many released compounds
  it reproduces, per category, and why the rest of the enumeration is absent.
* :func:`extract_templates` turns tokenised sentences into templates with one
  NP / VP / PP placeholder (``<NP>``...), one template per chunk found by the
  chunker (:mod:`.chunks`, over a parser backend of :mod:`benchsmith.nlp.parse`); a
  template keeps the source line.
* :func:`place_compounds` puts each compound into ``contexts`` (5) templates of
  its category, drawn without replacement by ``random.Random(seed)`` from the
  templates sorted by (line, start): the same inputs and seed give the same
  output, whatever the parser's internal order.
"""

from __future__ import annotations

import random
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from benchsmith import progress
from benchsmith.errors import ConfigError, ParseError
from benchsmith.loaders.moses import read_lines

from .atoms import CATEGORIES, INVENTORY, Compound, enumerate_compounds, parse_compound
from .chunks import Chunker

PLACEHOLDER = {c: f"<{c}>" for c in CATEGORIES}


def compare_enumeration(released: Iterable[str]) -> dict:
    """How many released compounds the enumeration reproduces, and why the rest differ."""
    released = list(dict.fromkeys(c.strip() for c in released if c.strip()))
    enum = {c.text: c for c in enumerate_compounds()}
    out: dict = {"released": len(released), "enumerated": len(enum), "reproduced": 0, "per_category": {}}
    by_cat_enum = Counter(c.category for c in enum.values())
    not_enumerated = [c for c in released if c not in enum]
    for cat in CATEGORIES:
        rel = [c for c in released if c in enum and enum[c].category == cat]
        inv = INVENTORY[cat]
        slots = {(a.atom("DET").text, getattr(a.atom("ADJ"), "text", None), a.atom("N").text,
                  getattr(a.atom("MOD"), "text", None)) for a in (enum[c] for c in rel)}
        out["per_category"][cat] = {
            "enumerated": by_cat_enum[cat], "released": len(rel),
            "slots_released": len(slots),
            "slots_possible": len(inv.determiners) * (len(inv.adjectives) + 1) * len(inv.nouns)
            * (len(inv.modifiers) + 1),
            "heads": len(inv.head) or None,
        }
        out["reproduced"] += len(rel)
    out["not_enumerated"] = not_enumerated
    out["why"] = (
        "Every released compound is in the enumeration. NP compounds are the full product "
        "DET x (ADJ|none) x N x (MOD|none). VP and PP compounds fill the same 720 DET/ADJ/N/MOD slots, but "
        "with one verb (of 19) / preposition (of 17) drawn per slot, so the enumeration has 19x / 17x "
        "more VP / PP compounds than were released; the draw itself is not published and cannot be "
        "reproduced."
    )
    return out


@dataclass(frozen=True)
class Template:
    category: str
    text: str  # tokens with one placeholder
    filler: str  # the phrase the placeholder replaced
    line: int  # 1-based line of the source sentence


def extract_templates(sentences: Sequence[str], chunker: Chunker,
                      max_words: int | None = None) -> list[Template]:
    """One template per NP/VP/PP chunk of each tokenised sentence (see module docstring)."""
    toks = [s.split() for s in sentences]
    all_chunks = progress.track(chunker.chunks_many(toks), f"parsing ({chunker.describe()})", total=len(toks))
    out: list[Template] = []
    for lineno, (t, chunks) in enumerate(zip(toks, all_chunks), start=1):
        if not t or (max_words and len(t) > max_words):
            continue
        for ch in chunks:
            text = " ".join([*t[: ch.start], PLACEHOLDER[ch.label], *t[ch.end:]])
            out.append(Template(ch.label, text, ch.text(t), lineno))
    return out


def read_templates(path: Path) -> list[Template]:
    """Read a templates TSV (category, template, filler, line) written by the stage."""
    out = []
    for lineno, text in enumerate(read_lines(path), start=1):
        if lineno == 1 and text.startswith("category\t"):
            continue
        parts = text.split("\t")
        if len(parts) != 4 or parts[0] not in CATEGORIES or PLACEHOLDER.get(parts[0], "") not in parts[1] \
                or not parts[3].isdigit():
            raise ParseError(f"template row {text!r} is not category<TAB>template<TAB>filler<TAB>line",
                             path=path, line=lineno, hint="Write templates with `benchsmith stage cognition templates`")
        out.append(Template(parts[0], parts[1], parts[2], int(parts[3])))
    return out


@dataclass(frozen=True)
class Placed:
    compound: Compound
    context: int
    sentence: str
    template_line: int


def place_compounds(compounds: Sequence[Compound], templates: Sequence[Template], contexts: int = 5,
                    seed: int = 0) -> list[Placed]:
    """Put each compound into ``contexts`` distinct templates of its category (seeded)."""
    pools: dict[str, list[Template]] = defaultdict(list)
    for t in sorted(set(templates), key=lambda t: (t.line, t.text)):
        pools[t.category].append(t)
    rng = random.Random(seed)
    out: list[Placed] = []
    for comp in compounds:
        pool = pools.get(comp.category, [])
        if len(pool) < contexts:
            raise ConfigError(
                f"only {len(pool)} {comp.category} templates for {contexts} contexts of {comp.text!r}",
                hint="Give more sentences to the templates stage or lower --contexts",
            )
        for k, t in enumerate(rng.sample(pool, contexts)):
            out.append(Placed(comp, k, t.text.replace(PLACEHOLDER[comp.category], comp.text, 1), t.line))
    return out


def parse_compound_lines(lines: Sequence[str], path: Path | None = None) -> list[Compound]:
    """Distinct compounds of a compound file, parsed, in first-seen order."""
    out, seen = [], set()
    for i, text in enumerate(lines, start=1):
        text = text.strip()
        if text and text not in seen:
            seen.add(text)
            out.append(parse_compound(text, path=path, line=i))
    return out
