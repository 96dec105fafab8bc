"""The language-sample diversity indices of the XCOPA paper (Ponti et al., 2020, Section 2, Table 2).

As Section 2 defines them:

* **typology index**: for each of URIEL's 103 binary syntax features (lang2vec
  ``syntax_knn``, the kNN-imputed set, so no value is missing) the entropy of its
  0/1 distribution over the sample's languages, averaged over the features;
* **family index**: distinct language families / number of languages;
* **geography index**: the entropy of the distribution of the languages over WALS
  macro-areas (footnote 4: Africa, Australia, Eurasia, North America, Papunesia,
  South America).

The paper's values (Table 2: typology 0.41, family 1, geography 1.67) are figures of
``published.yaml``, measured by :func:`diversity_measure` (the builder's
``diversity_index`` measure) with the unit each figure declares (``args.base``).

**Units (measured, 2026-11-22).** Table 2's header gives the ranges as [0, 1] for
typology and [0, ln 6] for geography, but neither printed value is in the unit its
range implies:

* geography 1.67 is the entropy *in bits* of XCOPA's macro-area counts (7 Eurasia,
  1 each Africa, Papunesia, North America, South America: 1.673 bits, 1.160 nats). No
  distribution over 5 areas reaches 1.67 nats (at most ln 5 = 1.609). The other
  columns agree: TyDiQA 0.92 = 10 non-English languages as 8/1/1 (0.922 bits) and
  XNLI 0.37 = 14 as 13/1 (0.371 bits);
* typology 0.41 is in *nats* (0.399 with today's URIEL; in bits it would be 0.576,
  and no syntax feature set of lang2vec gives 0.41 bits); the other columns agree
  within 0.03 in nats (TyDiQA 0.434 vs 0.41, XNLI 0.386 vs 0.39).

So each figure declares its base; :func:`diversity_indices` (the ``xcopa_diversity``
stat) reports both units and, for comparison, the entropy over the United Nations
geoscheme sub-regions that XCOPA's README lists (not the paper's definition).
Families follow XCOPA's README except Quechua, which the README (and Section 2 of the
paper) lists as "Yuman–Cochimí" (an upstream slip: Quechua is Quechuan); the family
index is the same either way (11 distinct families).
"""

from __future__ import annotations

import csv
import importlib
import math
import os
import sys
import warnings
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from benchsmith.loaders.xcopa_jsonl import LANGUAGES

from benchsmith.errors import ConfigError, SourceError, did_you_mean
from benchsmith.expectation import Figure, read_published_yaml

from .audit import languages_in

LANGUAGES_TSV = Path(__file__).with_name("languages.tsv")
PUBLISHED_YAML = Path(__file__).with_name("published.yaml")
URIEL_FEATURE_SET = "syntax_knn"
INDICES = ("typology", "family", "geography")
SCHEMES = ("wals_macroarea", "un_region")


@dataclass(frozen=True)
class Language:
    lang: str
    iso639_3: str
    name: str
    family: str
    wals_macroarea: str
    un_region: str


@lru_cache(maxsize=4)
def language_table(path: Path = LANGUAGES_TSV) -> dict[str, Language]:
    with open(path, encoding="utf-8", newline="") as fh:
        rows = list(csv.DictReader(fh, delimiter="\t"))
    return {r["lang"]: Language(**r) for r in rows}


def languages(codes: Iterable[str]) -> list[Language]:
    table = language_table()
    out = []
    for c in codes:
        if c not in table:
            raise ConfigError(f"no typological record for language {c!r} in {LANGUAGES_TSV.name}",
                              hint=did_you_mean(c, table))
        out.append(table[c])
    return out


def entropy(counts: Iterable[int], base: float = math.e) -> float:
    """Shannon entropy of a distribution given as counts (nats by default; ``base=2``: bits)."""
    counts = [c for c in counts if c > 0]
    total = sum(counts)
    return -sum(c / total * math.log(c / total, base) for c in counts) if total else 0.0


def log_base(value: Any) -> float:
    """``e`` (or ``"e"``) -> math.e, ``2`` -> 2.0; anything else is a ConfigError."""
    if value in ("e", None):
        return math.e
    if value == 2:
        return 2.0
    raise ConfigError(f"unknown log base {value!r} for a diversity index",
                      hint="Use base: e (nats) or base: 2 (bits)")


@lru_cache(maxsize=8)
def uriel_syntax(iso_codes: tuple[str, ...]) -> dict[str, tuple[float, ...]]:
    """URIEL syntax vectors through lang2vec (bundled data, offline); cached per process.

    Raises:
        SourceError: lang2vec is not installed, or has no vector for a language
            (the error names every language that failed).
    """
    try:
        l2v = _import_lang2vec()
    except ImportError as exc:
        raise SourceError(f"lang2vec is not importable ({exc})",
                          hint="pip install 'benchsmith[validation]' (lang2vec needs setuptools<81)") from None
    available = set(l2v.available_languages())
    missing = [c for c in iso_codes if c not in available]
    if missing:
        raise SourceError(f"lang2vec/URIEL has no entry for {missing}",
                          hint=f"Fix iso639_3 in {LANGUAGES_TSV} (URIEL uses ISO 639-3 codes)")
    feats = l2v.get_features(list(iso_codes), URIEL_FEATURE_SET)
    out = {}
    for c in iso_codes:
        vec = feats.get(c)
        if vec is None or any(v == "--" for v in vec):
            raise SourceError(f"lang2vec returned no complete {URIEL_FEATURE_SET} vector for {c!r}",
                              hint="Use another ISO 639-3 code for the language in languages.tsv")
        out[c] = tuple(float(v) for v in vec)
    return out


def _import_lang2vec():
    """Import ``lang2vec.lang2vec``, the package, never the ``bin/lang2vec.py`` script.

    lang2vec installs a console script named ``lang2vec.py`` next to the interpreter;
    when a program runs from that folder (``.venv/bin/pytest``) the folder is first on
    ``sys.path`` and the script shadows the package.
    """
    shadow = sys.modules.get("lang2vec")
    if shadow is not None and not hasattr(shadow, "__path__"):
        del sys.modules["lang2vec"]
    saved = sys.path[:]
    sys.path[:] = [p for p in sys.path if not os.path.isfile(os.path.join(p or ".", "lang2vec.py"))]
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # lang2vec imports the deprecated pkg_resources
            return importlib.import_module("lang2vec.lang2vec")
    finally:
        sys.path[:] = saved


def typology_index(vectors: Sequence[Sequence[float]], base: float = math.e) -> float:
    """Mean over features of the entropy of each binary feature across languages."""
    n_feat = len(vectors[0])
    ents = []
    for j in range(n_feat):
        ones = sum(1 for v in vectors if v[j] >= 0.5)
        ents.append(entropy([ones, len(vectors) - ones], base))
    return sum(ents) / n_feat


def family_index(langs: Sequence[Language]) -> float:
    return len({lg.family for lg in langs}) / len(langs)


def geography_index(langs: Sequence[Language], scheme: str = "wals_macroarea", base: float = math.e) -> float:
    if scheme not in SCHEMES:
        raise ConfigError(f"unknown area scheme {scheme!r}", hint=did_you_mean(scheme, SCHEMES))
    return entropy(Counter(getattr(lg, scheme) for lg in langs).values(), base)


def index_value(codes: Iterable[str], index: str, *, scheme: str = "wals_macroarea",
                base: Any = "e") -> float:
    """One index of a language sample (``et``, ``ht`` ... as in XCOPA)."""
    langs = languages(codes)
    b = log_base(base)
    if index == "typology":
        vectors = uriel_syntax(tuple(lg.iso639_3 for lg in langs))
        return typology_index([vectors[lg.iso639_3] for lg in langs], b)
    if index == "family":
        return family_index(langs)
    if index == "geography":
        return geography_index(langs, scheme, b)
    raise ConfigError(f"unknown diversity index {index!r}", hint=did_you_mean(index, INDICES))


def figure_value(codes: Iterable[str], figure: Figure) -> float:
    """What ``figure`` (a ``diversity_index`` figure of published.yaml) measures on a sample."""
    args = dict(figure.args)
    index = args.pop("index", None)
    unknown = set(args) - {"scheme", "base"}
    if index is None or unknown:
        raise ConfigError(f"figure {figure.id!r}: diversity_index takes args index, scheme, base; "
                          f"got {sorted(figure.args)}")
    return round(index_value(codes, index, **args), 4)


def diversity_measure(release: Any, figure: Figure) -> float:
    """The ``diversity_index`` measure: the figure's index over the release's XCOPA languages.

    Table 2 describes the full 11-language sample; a release built with fewer language
    configs cannot reproduce it (a ConfigError, which the fidelity check reports as a skip).
    """
    langs = languages_in(release)
    if len(langs) != len(LANGUAGES):
        raise ConfigError(f"{figure.id} is a figure of XCOPA's {len(LANGUAGES)}-language sample; "
                          f"this release has {len(langs)} ({', '.join(langs) or 'none'})")
    return figure_value(langs, figure)


def diversity_indices(codes: Iterable[str]) -> dict[str, float]:
    """Every index of a language sample in both units (the ``xcopa_diversity`` stat)."""
    codes = list(codes)
    langs = languages(codes)
    vectors = uriel_syntax(tuple(lg.iso639_3 for lg in langs))
    typ = [vectors[lg.iso639_3] for lg in langs]
    return {
        "typology_nats": round(typology_index(typ), 4),
        "typology_bits": round(typology_index(typ, 2.0), 4),
        "family": round(family_index(langs), 4),
        "geography_bits": round(geography_index(langs, "wals_macroarea", 2.0), 4),
        "geography_nats": round(geography_index(langs, "wals_macroarea"), 4),
        "geography_un_region_nats": round(geography_index(langs, "un_region"), 4),
        "languages": len(langs),
    }


def paper_figures(path: Path = PUBLISHED_YAML) -> list[Figure]:
    """The ``diversity_index`` figures of published.yaml (Table 2's XCOPA column)."""
    return [f for f in read_published_yaml(path) if f.measure == "diversity_index"]


def beside_paper(codes: Iterable[str], figures: Sequence[Figure] | None = None) -> list[dict[str, Any]]:
    """Rows ``figure, args, measured, paper, tolerance, difference, agrees`` for printing."""
    codes = list(codes)
    rows = []
    for f in paper_figures() if figures is None else figures:
        measured = figure_value(codes, f)
        difference = round(measured - f.value, 4)
        rows.append({
            "figure": f.id, "args": dict(f.args), "measured": measured, "paper": f.value,
            "tolerance": f.tolerance, "difference": difference, "agrees": abs(difference) <= f.tolerance,
            "discrepancy": f.discrepancy,
        })
    return rows

