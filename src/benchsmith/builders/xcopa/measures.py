"""The measures XCOPA's ``published.yaml`` figures name beyond the core's (``Xcopa.measures()``).

Each is ``fn(release, figure) -> value``; a release that lacks what a figure is about
(a language, the ``en`` config) raises :class:`~benchsmith.errors.ConfigError`, which
the fidelity check reports as a skip.

* ``diversity_index``: Table 2 and Section 1 (``diversity``);
* ``majority_agreement``: a Table 3 cell, 100 x (1 - changed / items) of ``config/split``;
* ``disagreement_pct``: Section 2's average, % of the 11 translators' labels that are off
  the majority label (items with ``changed``, over all languages);
* ``disagreeing_per_item``: footnote 6, ``{translators in disagreement: items}`` (items
  with none left out);
* ``translator_kappa``: Section 2's Fleiss' kappa over the 11 translators, from the
  translators' labels recovered from ``label`` and ``changed`` (``agreement``);
* ``labels_agree_with_copa``: % of ``config/split`` whose label is English COPA's (the
  release's ``en`` config, same idx);
* ``item``: the fields ``args.fields`` of item ``args.idx`` of ``config/split`` (Table 1);
* ``model_baseline`` (a core measure, benchsmith.expectation): a model baseline's accuracies (Tables 5, 6, 8), and ``not_released``:
  what the release cannot hold (the Italian speakers' labels, the authors' reading of the
  translators' feedback). Neither is measured by ``validate``: such figures carry
  ``needs`` and are skipped.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, NoReturn

from benchsmith.errors import ConfigError
from benchsmith.expectation import Figure, Measure
from benchsmith.loaders.xcopa_jsonl import LANGUAGES

from .agreement import changed_counts, fleiss, majority_agreement_pct, translator_matrix
from .audit import languages_in
from .diversity import diversity_measure

if TYPE_CHECKING:
    from benchsmith.release import Release


def _all_languages(release: Release, figure: Figure) -> list[str]:
    langs = languages_in(release)
    if len(langs) != len(LANGUAGES):
        raise ConfigError(f"{figure.id} is about XCOPA's {len(LANGUAGES)} translators; this release has "
                          f"{len(langs)} language configs ({', '.join(langs) or 'none'})")
    return langs


def majority_agreement(release: Release, figure: Figure) -> float:
    return majority_agreement_pct(release, figure.config, figure.split)


def disagreement_pct(release: Release, figure: Figure) -> float:
    counts = [changed_counts(release, lang, figure.split) for lang in _all_languages(release, figure)]
    return round(100 * sum(c for c, _ in counts) / sum(n for _, n in counts), 4)


def disagreeing_per_item(release: Release, figure: Figure) -> dict[int, int]:
    matrix = translator_matrix(release, figure.split, _all_languages(release, figure))
    # the minority on each item (11 translators, two choices): labels off the item's majority label
    off = Counter(min(sum(row), len(row) - sum(row)) for row in matrix)
    del off[0]
    return dict(sorted(off.items()))


def translator_kappa(release: Release, figure: Figure) -> float:
    return round(fleiss(translator_matrix(release, figure.split, _all_languages(release, figure))), 4)


def labels_agree_with_copa(release: Release, figure: Figure) -> float:
    if "en" not in release.configs() or figure.split not in release.splits("en"):
        raise ConfigError(f"{figure.id} compares with English COPA: this release has no en/{figure.split}")
    en = dict(zip(*release.table("en", figure.split, ["idx", "label"]).to_pydict().values()))
    rows = release.table(figure.config, figure.split, ["idx", "label"]).to_pylist()
    agree = sum(1 for r in rows if en.get(r["idx"]) == r["label"])
    return round(100 * agree / len(rows), 4)


def item(release: Release, figure: Figure) -> dict[str, Any]:
    """``{field: value}`` of one item, ClassLabels by name (as a paper prints them)."""
    idx, fields = figure.args.get("idx"), figure.args.get("fields")
    if not isinstance(idx, int) or not isinstance(fields, list) or not fields:
        raise ConfigError(f"figure {figure.id!r}: item takes args idx (an integer) and fields (a list)")
    features = release.config_info(figure.config).features
    rows = [r for r in release.table(figure.config, figure.split, ["idx", *fields]).to_pylist() if r["idx"] == idx]
    if len(rows) != 1:
        raise ConfigError(f"{figure.id}: {figure.config}/{figure.split} has {len(rows)} items with idx {idx}")
    out = {}
    for name in fields:
        value, feature = rows[0][name], features[name]
        out[name] = feature.int2str(value) if hasattr(feature, "int2str") else value
    return out


def not_released(release: Release, figure: Figure) -> NoReturn:
    raise ConfigError(f"{figure.id} needs data XCOPA does not release ({figure.needs or 'not named'})")


MEASURES: Mapping[str, Measure] = {
    "diversity_index": diversity_measure,
    "majority_agreement": majority_agreement,
    "disagreement_pct": disagreement_pct,
    "disagreeing_per_item": disagreeing_per_item,
    "translator_kappa": translator_kappa,
    "labels_agree_with_copa": labels_agree_with_copa,
    "item": item,
    "not_released": not_released,
}
