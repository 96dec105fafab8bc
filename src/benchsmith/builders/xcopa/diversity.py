"""The language-sample diversity indices of the XCOPA paper (Ponti et al., 2020, Section 2, Table 2).

As Section 2 defines them:

* **typology index**: for each of URIEL's 103 binary syntax features the entropy of
  its 0/1 distribution over the sample's languages, averaged over the features. We
  use lang2vec ``syntax_knn`` (the kNN-imputed set, so no value is missing); the
  other syntax sets can be measured (``feature_set``; a feature's missing values
  are left out of its entropy);
* **family index**: distinct language families / number of languages;
* **geography index**: the entropy of the distribution of the languages over WALS
  macro-areas (footnote 4: Africa, Australia, Eurasia, North America, Papunesia,
  South America; "the standard variety" where a language spans several).

Table 2 prints the three indices for six datasets (XCOPA, TyDiQA, XNLI, XQuAD, MLQA,
PAWS-X). All 18 values are figures of ``published.yaml``, measured by
:func:`diversity_measure` (the builder's ``diversity_index`` measure). A figure with
``args.languages`` is about that language sample, whatever the release holds (the
other datasets' columns); without it, about the release's XCOPA languages.

**Samples (measured).** Table 2's samples are each dataset's target languages,
*without English*: the family column only matches that way (TyDiQA 9/10 = 0.9, not
9/11; XNLI 7/14 = 0.5; XQuAD 6/10 = 0.6; MLQA 4/6 = 0.66(7); PAWS-X 4/6), and so does
geography (TyDiQA 0.92 bits with 8 Eurasia / 1 / 1; with English 0.87).

**Units (measured).** Table 2's header gives the ranges as [0, 1] for typology and
[0, ln 6] for geography, but neither printed value is in the unit its range implies:

* geography is in *bits*: XCOPA 1.67 (7 Eurasia, 1 each Africa, Papunesia, North
  America, South America: 1.673 bits, 1.160 nats; no distribution over 5 areas reaches
  1.67 nats, ln 5 = 1.609), TyDiQA 0.92 (8/1/1: 0.922 bits, 0.639 nats), XNLI 0.37
  (13/1: 0.371 bits, 0.257 nats); XQuAD, MLQA and PAWS-X are all Eurasian (0 in any unit);
* typology is in *nats*: in bits every column would be about 1.44 times larger (XCOPA
  0.576), and no lang2vec syntax set gives Table 2's values in bits.

So each figure declares its base. Which URIEL data the authors used is not said:
lang2vec 1.1.2 (2019) predates the paper, so the difference is one of method (feature
set, language codes, missing values), not of a later URIEL release. ``syntax_knn`` in
nats is the best single setting over the six columns (:func:`typology_alternatives`
measures the others); it leaves TyDiQA, MLQA and PAWS-X 0.021-0.024 above the paper,
which published.yaml names as discrepancies.

:func:`diversity_indices` (the ``xcopa_diversity`` stat) reports both units and, for
comparison, the entropy over the United Nations geoscheme sub-regions (not the paper's
definition). ``languages.tsv`` holds one row per language of any Table 2 sample, with
its ``source``. Families follow the paper's Section 2 list for XCOPA except Quechua,
which Section 2 gives as "Yuman–Cochimí" (an upstream slip: Quechua is Quechuan); the
family index is the same either way (11 distinct families).
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
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import TYPE_CHECKING, Any

from benchsmith.cache import cache_path, read_json, write_json
from benchsmith.errors import ConfigError, SourceError, did_you_mean
from benchsmith.expectation import Figure, read_published_yaml
from benchsmith.loaders.xcopa_jsonl import LANGUAGES

from .audit import languages_in

if TYPE_CHECKING:
    from benchsmith.release import Release

LANGUAGES_TSV = Path(__file__).with_name("languages.tsv")
PUBLISHED_YAML = Path(__file__).with_name("published.yaml")
#: the feature set the paper's typology index is measured with (see the module docstring)
URIEL_FEATURE_SET = "syntax_knn"
#: lang2vec's syntax feature sets (103 features each), for :func:`typology_alternatives`
SYNTAX_SETS = ("syntax_knn", "syntax_wals", "syntax_sswl", "syntax_ethnologue", "syntax_average")
INDICES = ("typology", "family", "geography", "areas")
SCHEMES = ("wals_macroarea", "un_region")
_ARGS = {"index", "scheme", "base", "languages", "feature_set"}


@dataclass(frozen=True)
class Language:
    lang: str
    iso639_3: str
    name: str
    family: str
    wals_macroarea: str
    un_region: str
    source: str = ""


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
    return 0.0 - sum(c / total * math.log(c / total, base) for c in counts) if total else 0.0  # 0.0, not -0.0


def log_base(value: Any) -> float:
    """``e`` (or ``"e"``) -> math.e, ``2`` -> 2.0; anything else is a ConfigError."""
    if value in ("e", None):
        return math.e
    if value == 2:
        return 2.0
    raise ConfigError(f"unknown log base {value!r} for a diversity index",
                      hint="Use base: e (nats) or base: 2 (bits)")


#: file under ``$BENCHSMITH_HOME/cache`` that keeps the URIEL vectors read so far
URIEL_CACHE = "uriel-syntax.json"
#: the vectors of the languages XCOPA's figures read, as lang2vec 1.1.2 gives them (same format as
#: the cache; tests/test_xcopa_fixture.py recomputes it): a first ``validate`` on a fresh
#: ``$BENCHSMITH_HOME`` need not import lang2vec (~3.5 s, as much as the whole build). Another
#: lang2vec version ignores it.
URIEL_SNAPSHOT = Path(__file__).with_name("uriel-syntax.json")


@lru_cache(maxsize=32)
def uriel_syntax(iso_codes: tuple[str, ...], feature_set: str = URIEL_FEATURE_SET
                 ) -> dict[str, tuple[float | None, ...]]:
    """URIEL syntax vectors through lang2vec (bundled data, offline); cached per process and on disk.

    Importing lang2vec costs ~3.5 s (it lists its languages at import by re-reading a zipped
    array per language), so the vectors read are kept in ``$BENCHSMITH_HOME/cache/``
    :data:`URIEL_CACHE`, keyed by lang2vec's installed version: a later validation of the
    same languages does not import it; XCOPA's own languages ship in :data:`URIEL_SNAPSHOT`.

    ``syntax_knn`` must be complete for every language; in the other sets a missing
    value (lang2vec's ``--``) is ``None``.

    Raises:
        SourceError: lang2vec is not installed, or has no vector for a language
            (the error names every language that failed).
    """
    if feature_set not in SYNTAX_SETS:
        raise ConfigError(f"unknown URIEL syntax feature set {feature_set!r}", hint=did_you_mean(feature_set, SYNTAX_SETS))
    version = _lang2vec_version()
    cache = _read_uriel_cache(version)
    known = cache.get(feature_set, {})
    if version is not None and all(c in known for c in iso_codes):
        return {c: tuple(known[c]) for c in iso_codes}
    try:
        l2v = _import_lang2vec()
    except ImportError as exc:
        raise SourceError(f"lang2vec is not importable ({exc})",
                          hint="pip install 'benchsmith[validation]' (lang2vec needs setuptools<81)") from None
    # lang2vec computes this set once at import; its available_languages() rebuilds it by
    # re-reading a zipped array per language (~1.7 s a call)
    available = l2v.LANGUAGES
    missing = [c for c in iso_codes if c not in available]
    if missing:
        raise SourceError(f"lang2vec/URIEL has no entry for {missing}",
                          hint=f"Fix iso639_3 in {LANGUAGES_TSV} (URIEL uses ISO 639-3 codes)")
    feats = l2v.get_features(list(iso_codes), feature_set)
    out = {}
    for c in iso_codes:
        vec = feats.get(c)
        if vec is None or (feature_set == URIEL_FEATURE_SET and any(v == "--" for v in vec)):
            raise SourceError(f"lang2vec returned no complete {feature_set} vector for {c!r}",
                              hint="Use another ISO 639-3 code for the language in languages.tsv")
        out[c] = tuple(None if v == "--" else float(v) for v in vec)
    if version is not None:
        cache.setdefault(feature_set, {}).update({c: list(v) for c, v in out.items()})
        _write_uriel_cache(version, cache)
    return out


def _lang2vec_version() -> str | None:
    try:
        return version("lang2vec")
    except PackageNotFoundError:
        return None


def _read_uriel_cache(version: str | None) -> dict[str, dict[str, list[float | None]]]:
    """``{feature_set: {iso639_3: vector}}`` read with lang2vec ``version`` from :data:`URIEL_SNAPSHOT`
    and the cache (the cache wins); {} if neither is of that version."""
    sets: dict[str, dict[str, list[float | None]]] = {}
    for data in (read_json(URIEL_SNAPSHOT), read_json(cache_path(URIEL_CACHE))):
        if isinstance(data, dict) and data.get("lang2vec") == version and isinstance(data.get("sets"), dict):
            for name, vectors in data["sets"].items():
                sets.setdefault(name, {}).update(vectors)
    return sets


def _write_uriel_cache(version: str, sets: dict[str, dict[str, list[float | None]]]) -> None:
    write_json(cache_path(URIEL_CACHE), {"lang2vec": version, "sets": sets})


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


def typology_index(vectors: Sequence[Sequence[float | None]], base: float = math.e) -> float:
    """Mean over features of the entropy of each binary feature across languages.

    A value is 1 at >= 0.5 (``syntax_average`` mixes sources); a missing value (None)
    is left out of its feature's distribution, and a feature no language has is skipped.
    """
    ents = []
    for j in range(len(vectors[0])):
        known = [v[j] for v in vectors if v[j] is not None]
        if not known:
            continue
        ones = sum(1 for x in known if x >= 0.5)
        ents.append(entropy([ones, len(known) - ones], base))
    return sum(ents) / len(ents) if ents else 0.0


def family_index(langs: Sequence[Language]) -> float:
    return len({lg.family for lg in langs}) / len(langs)


def geography_index(langs: Sequence[Language], scheme: str = "wals_macroarea", base: float = math.e) -> float:
    return entropy(Counter(_areas(langs, scheme)).values(), base)


def _areas(langs: Sequence[Language], scheme: str) -> list[str]:
    if scheme not in SCHEMES:
        raise ConfigError(f"unknown area scheme {scheme!r}", hint=did_you_mean(scheme, SCHEMES))
    return [getattr(lg, scheme) for lg in langs]


def index_value(codes: Iterable[str], index: str, *, scheme: str = "wals_macroarea",
                base: Any = "e", feature_set: str = URIEL_FEATURE_SET) -> float:
    """One index of a language sample (``et``, ``ht`` ... as in languages.tsv).

    ``areas`` is the number of distinct areas (Section 1: "5 geographical macro-areas").
    """
    langs = languages(codes)
    b = log_base(base)
    if index == "typology":
        vectors = uriel_syntax(tuple(lg.iso639_3 for lg in langs), feature_set)
        return typology_index([vectors[lg.iso639_3] for lg in langs], b)
    if index == "family":
        return family_index(langs)
    if index == "geography":
        return geography_index(langs, scheme, b)
    if index == "areas":
        return len(set(_areas(langs, scheme)))
    raise ConfigError(f"unknown diversity index {index!r}", hint=did_you_mean(index, INDICES))


def figure_sample(figure: Figure, default: Iterable[str] = LANGUAGES) -> list[str]:
    """The language sample a figure is about: ``args.languages``, else ``default``."""
    sample = figure.args.get("languages")
    if sample is None:
        return list(default)
    if not isinstance(sample, (list, tuple)) or not sample:
        raise ConfigError(f"figure {figure.id!r}: args.languages must be a non-empty list of language codes")
    return [str(c) for c in sample]


def figure_value(codes: Iterable[str], figure: Figure) -> float:
    """What ``figure`` (a ``diversity_index`` figure of published.yaml) measures.

    ``codes`` is the sample unless the figure names its own (``args.languages``).
    """
    args = dict(figure.args)
    index = args.pop("index", None)
    unknown = set(figure.args) - _ARGS
    if index is None or unknown:
        raise ConfigError(f"figure {figure.id!r}: diversity_index takes args {sorted(_ARGS)}; "
                          f"got {sorted(figure.args)}")
    sample = figure_sample(figure, codes)
    args.pop("languages", None)
    return round(index_value(sample, index, **args), 4)


def diversity_measure(release: Release, figure: Figure) -> float:
    """The ``diversity_index`` measure.

    A figure with ``args.languages`` (another dataset's column of Table 2) is measured on
    that sample and ignores the release. Otherwise it is about the release's XCOPA
    languages: Table 2 describes the full 11-language sample, and a release built with
    fewer language configs cannot reproduce it (a ConfigError, which the fidelity check
    reports as a skip).
    """
    if "languages" in figure.args:
        return figure_value(figure_sample(figure), figure)
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
        "macro_areas": len(set(_areas(langs, "wals_macroarea"))),
        "languages": len(langs),
    }


def paper_figures(path: Path = PUBLISHED_YAML) -> list[Figure]:
    """The ``diversity_index`` figures of published.yaml (Table 2, Section 1)."""
    return [f for f in read_published_yaml(path) if f.measure == "diversity_index"]


def beside_paper(codes: Iterable[str] = LANGUAGES, figures: Sequence[Figure] | None = None) -> list[dict[str, Any]]:
    """Rows ``figure, args, measured, paper, tolerance, difference, agrees`` for printing."""
    codes = list(codes)
    rows = []
    for f in paper_figures() if figures is None else figures:
        measured = figure_value(codes, f)
        difference = round(measured - f.value, 4)
        rows.append({
            "figure": f.id, "args": {k: v for k, v in f.args.items() if k != "languages"},
            "languages": figure_sample(f, codes), "measured": measured, "paper": f.value,
            "tolerance": f.tolerance, "difference": difference, "agrees": abs(difference) <= f.tolerance,
            "discrepancy": f.discrepancy,
        })
    return rows


def typology_alternatives(figures: Sequence[Figure] | None = None, add: Sequence[str] = ()
                          ) -> dict[str, dict[str, Any]]:
    """Table 2's typology row measured with every lang2vec syntax set, in nats and bits.

    ``{setting: {figure id: value, ..., "mean_abs_error": e, "max_abs_error": m}}`` over
    the typology figures of published.yaml; ``add`` puts languages into every sample
    (``["en"]``: the samples with English, which the family column rules out).
    """
    typ = [f for f in (paper_figures() if figures is None else figures) if f.args.get("index") == "typology"]
    out: dict[str, dict[str, Any]] = {}
    for feature_set in SYNTAX_SETS:
        for unit, base in (("nats", "e"), ("bits", 2)):
            row: dict[str, Any] = {}
            for f in typ:
                sample = [*figure_sample(f), *(c for c in add if c not in figure_sample(f))]
                row[f.id] = round(index_value(sample, "typology", base=base, feature_set=feature_set), 4)
            errors = [abs(row[f.id] - f.value) for f in typ]
            row["mean_abs_error"] = round(sum(errors) / len(errors), 4) if errors else None
            row["max_abs_error"] = round(max(errors), 4) if errors else None
            out[f"{feature_set}/{unit}"] = row
    return out
