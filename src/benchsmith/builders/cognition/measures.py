"""CoGnition's measures for ``published.yaml`` (the builder's ``measures()``).

* ``distinct``: distinct values of ``args.field`` in ``config/split``;
* ``compound_extent``: ``{"compounds", "max_atoms", "max_words"}`` of the CG-test (Section 1:
  "2,160 novel compounds, with up to 5 atoms and 7 words"); a modifier phrase is one atom;
* ``atom_inventory``: ``{role: sorted atoms}`` found in the slots of the CG-test's compounds
  (Table 4; roles DET, N, ADJ, MOD, V, P);
* ``frequency_buckets``: the compound-frequency buckets the ``stats`` stage uses, read off
  :func:`.stats.frequency_bucket` (Section 6.1: few-shot = 1 to 10 occurrences);
* ``needs_train_split``, ``needs_parser`` (and the core ``model_baseline``): figures that this release cannot
  measure; they raise :class:`ConfigError` (the figure's ``needs:`` says what computes them).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping
from typing import TYPE_CHECKING, NoReturn

from benchsmith.errors import ConfigError
from benchsmith.expectation import Figure, Measure

from .stats import frequency_bucket

if TYPE_CHECKING:
    from benchsmith.release import Release


def distinct(release: Release, figure: Figure) -> int:
    field = figure.args["field"]
    return len(set(release.table(figure.config, figure.split, [field]).column(field).to_pylist()))


def compound_extent(release: Release, figure: Figure) -> dict[str, int]:
    t = release.table(figure.config, figure.split, ["compound", "atoms"])
    compounds = t.column("compound").to_pylist()
    return {"compounds": len(set(compounds)),
            "max_atoms": max(len(a) for a in t.column("atoms").to_pylist()),
            "max_words": max(len(c.split()) for c in compounds)}


def atom_inventory(release: Release, figure: Figure) -> dict[str, list[str]]:
    found: dict[str, set[str]] = defaultdict(set)
    for atoms in release.table(figure.config, figure.split, ["atoms"]).column("atoms").to_pylist():
        for a in atoms:
            found[a["role"]].add(a["text"])
    return {role: sorted(found[role]) for role in sorted(found)}


def frequency_buckets(release: Release, figure: Figure) -> dict[str, int]:
    few = [f for f in range(1001) if frequency_bucket(f) == "few-shot"]
    many = [f for f in range(1001) if frequency_bucket(f) == "many-shot"]
    return {"few_shot_min": min(few), "few_shot_max": max(few), "many_shot_min": min(many)}


def needs_train_split(release: Release, figure: Figure) -> NoReturn:
    raise ConfigError(f"{figure.id} needs the train split ({figure.needs or 'not named'})")


def needs_parser(release: Release, figure: Figure) -> NoReturn:
    raise ConfigError(f"{figure.id} needs a constituency parser and the train split ({figure.needs or 'not named'})")


def needs_external(release: Release, figure: Figure) -> NoReturn:
    """A figure about data the release does not hold (the full ROCStories, the paper's annotations)."""
    raise ConfigError(f"{figure.id} needs data outside the release ({figure.needs or 'not named'})")


MEASURES: Mapping[str, Measure] = {
    "distinct": distinct,
    "compound_extent": compound_extent,
    "atom_inventory": atom_inventory,
    "frequency_buckets": frequency_buckets,
    "needs_train_split": needs_train_split,
    "needs_parser": needs_parser,
    "needs_external": needs_external,
}
