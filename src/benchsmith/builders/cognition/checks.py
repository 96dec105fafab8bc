"""CoGnition's dataset checks (returned by ``CognitionBuilder.checks()``).

* :class:`CGTestStructure` is a *check* (it can fail): every CG-test compound fills
  contexts 0-4, occurs in its sentences, and its stored category / pattern / atoms are
  what the atom inventory parses it into. Pass or fail; skip without a ``cg_test`` config.
* :class:`CGTestProfile` is a *statistic* (status ``stat``, never a verdict): lines per
  category and pattern, and the known upstream issues that 1.0.0 keeps as released
  (identical contexts of one compound; sentences that continue the compound with a
  modifier phrase it lacks). The card's CG-test sections are rendered from the same
  :func:`profile`, so report and card cannot disagree.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass
from typing import TYPE_CHECKING

from benchsmith.validation.check import Check, CheckResult, Status

from .atoms import CATEGORIES, MODIFIERS, PATTERNS, parse_compound, pattern_roles

if TYPE_CHECKING:
    from benchsmith.release import Release


class CGTestStructure(Check):
    """Every CG-test compound fills contexts 0-4, occurs in its sentences, and its
    stored category / pattern / atoms are what the atom inventory parses it into."""

    name = "cognition_cg_test_structure"
    cacheable = True  # reads the release's data only (validation/result_cache.py)
    family = "integrity"
    topic = "the CG test set's structure differs from the paper's"
    why = ('the compositional-generalisation test no longer isolates the novel compounds the paper '
        'evaluates')
    todo = ("fix the builder (atoms, templates) so the CG test matches Li et al. (2023)'s "
        'construction')

    def run(self, release: Release) -> list[CheckResult]:
        if "cg_test" not in release.configs():
            return [self.result(Status.SKIP, "no cg_test config in this release", config="cg_test")]
        contexts: dict[str, list[int]] = defaultdict(list)
        bad: list[dict] = []
        for row in release.examples("cg_test", "test"):
            contexts[row["compound"]].append(row["context"])
            cat, pat = CATEGORIES[row["category"]], PATTERNS[row["pattern"]]
            problems = []
            if f" {row['compound']} " not in f" {row['en']} ":
                problems.append("compound not in sentence")
            try:
                comp = parse_compound(row["compound"], cat)
                if comp.pattern != pat or [a.to_dict() for a in comp.atoms] != row["atoms"]:
                    problems.append(f"stored pattern/atoms differ from the parse ({comp.pattern})")
            except ValueError as exc:
                problems.append(str(exc))
            if tuple(a["role"] for a in row["atoms"]) != pattern_roles(pat):
                problems.append(f"atom roles do not follow pattern {pat}")
            if problems:
                bad.append({"id": row["id"], "problems": problems})
        wrong_ctx = sorted(c for c, ks in contexts.items() if sorted(ks) != [0, 1, 2, 3, 4])
        metrics = {"compounds": len(contexts), "bad_rows": len(bad), "bad_context_sets": len(wrong_ctx)}
        if bad or wrong_ctx:
            summary = f"{len(bad)} rows and {len(wrong_ctx)} compounds are inconsistent"
            return [self.result(Status.FAIL, summary,
                                metrics=metrics, details={"rows": bad[:50], "compounds": wrong_ctx[:50]},
                                config="cg_test")]
        return [self.result(Status.PASS, f"{len(contexts)} compounds x 5 contexts, all parsed consistently",
                            metrics=metrics, config="cg_test")]


@dataclass(frozen=True)
class Profile:
    """What :func:`profile` measures on a release's CG-test (see module docstring)."""

    lines_per_category: dict[str, int]
    lines_per_pattern: dict[str, int]
    compounds: int
    #: ``"<first id> = <repeat id>"`` for lines repeating an earlier line's sentence, reference and compound
    identical_contexts: list[str]
    #: ids of lines whose sentence continues the compound with a modifier phrase the compound lacks
    longer_compound_lines: list[str]


def profile(release: Release) -> Profile:
    """Lines per category / pattern and the upstream issues of ``release``'s CG-test."""
    rows = list(release.examples("cg_test", "test"))
    cats = Counter(r["category"] for r in rows)
    pats = Counter(r["pattern"] for r in rows)
    seen: dict[tuple[str, str, str], str] = {}
    dups = []
    for r in rows:
        key = (r["en"], r["zh"], r["compound"])
        if key in seen:
            dups.append(f"{seen[key]} = {r['id']}")
        seen.setdefault(key, r["id"])
    longer = [r["id"] for r in rows if any(
        m not in r["compound"] and f" {r['compound']} {m} " in f" {r['en']} " for m in MODIFIERS)]
    return Profile(
        lines_per_category={c: cats[i] for i, c in enumerate(CATEGORIES)},
        lines_per_pattern={p: pats[i] for i, p in enumerate(PATTERNS)},
        compounds=len({r["compound"] for r in rows}),
        identical_contexts=dups,
        longer_compound_lines=longer,
    )


class CGTestProfile(Check):
    """CG-test lines per category and pattern, and the upstream issues kept as released (a stat)."""

    name = "cognition_cg_test_profile"
    cacheable = True  # reads the release's data only (validation/result_cache.py)
    family = "distribution"

    def run(self, release: Release) -> list[CheckResult]:
        if "cg_test" not in release.configs():
            return [self.result(Status.SKIP, "no cg_test config in this release", config="cg_test")]
        p = profile(release)
        per_cat = ", ".join(f"{c} {n:,}" for c, n in p.lines_per_category.items())
        return [self.stat(
            f"{p.compounds:,} compounds; lines per category: {per_cat}; upstream issues kept as "
            f"released: {len(p.identical_contexts)} identical contexts, "
            f"{len(p.longer_compound_lines)} lines continuing the compound with a modifier it lacks",
            config="cg_test",
            metrics={"compounds": p.compounds, **{f"lines_{c}": n for c, n in p.lines_per_category.items()},
                     "identical_contexts": len(p.identical_contexts),
                     "longer_compound_lines": len(p.longer_compound_lines)},
            details={"lines_per_pattern": p.lines_per_pattern, "identical_contexts": p.identical_contexts,
                     "longer_compound_lines": p.longer_compound_lines},
        )]
