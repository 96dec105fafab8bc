"""Lexical cue statistics over multiple-choice options (Niven & Kao, 2019).

For each cue ``k`` (a lower-cased token unigram or bigram of an option) over the
``n`` labeled examples of a split:

* applicability ``alpha_k``: examples where ``k`` occurs in some options but not
  in all of them (only then can it tell options apart);
* productivity ``pi_k``: share of those examples whose correct option contains
  ``k``. Niven & Kao define it for two options; with more options we also report
  the chance level, the mean over applicable examples of (options containing
  ``k``) / (options), which is 0.5 for two;
* coverage ``xi_k = alpha_k / n``.

A cue with coverage >= ``policy.cue_min_coverage`` (default 0.05) and
productivity above chance by >= ``policy.cue_min_gain`` (default 0.15),
significant at p < 0.001 (one-sided binomial test against the chance level), is
a warning naming the cue. Cues are evidence, not a verdict: the partial-input
baseline (``partial_input`` check) is what fails the gate. Configs that do not
declare ``policy.choices`` are skipped.
"""

from __future__ import annotations

import itertools
from collections import defaultdict
from typing import Any

from benchsmith.validation.check import Check, CheckResult, Status, register_check
from benchsmith.validation.dataview import ConfigView, configs, tokens
from scipy import stats

TOP = 10
ALPHA = 1e-3


def cue_units(text: str) -> set[str]:
    """Lower-cased unigrams and bigrams of a text."""
    toks = [t.casefold() for t in tokens(text)]
    return set(toks) | {f"{a} {b}" for a, b in itertools.pairwise(toks)}


def cue_table(options: list[list[str]], labels: list[int]) -> tuple[int, list[dict[str, Any]]]:
    """Applicability, productivity and coverage of every cue; returns (n, rows)."""
    applicable: dict[str, int] = defaultdict(int)
    productive: dict[str, int] = defaultdict(int)
    chance: dict[str, float] = defaultdict(float)
    n = 0
    for opts, label in zip(options, labels):
        if label < 0 or label >= len(opts) or len(opts) < 2:
            continue
        n += 1
        units = [cue_units(o) for o in opts]
        union = set().union(*units)
        k = len(opts)
        for cue in union:
            present = sum(1 for u in units if cue in u)
            if present == k:
                continue
            applicable[cue] += 1
            chance[cue] += present / k
            if cue in units[label]:
                productive[cue] += 1
    rows = []
    for cue, a in applicable.items():
        rows.append(
            {
                "cue": cue,
                "applicability": a,
                "productivity": productive[cue] / a,
                "chance": chance[cue] / a,
                "coverage": a / n if n else 0.0,
                "productive": productive[cue],
            }
        )
    return n, rows


def top_cues(rows: list[dict[str, Any]], min_applicability: int) -> list[dict[str, Any]]:
    """The strongest cues: coverage times productivity above chance."""
    eligible = [r for r in rows if r["applicability"] >= min_applicability]
    eligible.sort(key=lambda r: (-(r["coverage"] * (r["productivity"] - r["chance"])), r["cue"]))
    return eligible[:TOP]


@register_check
class CueCheck(Check):
    name = "cues"
    family = "artifacts"

    def run(self, release: Any) -> list[CheckResult]:
        out = []
        for view in configs(release):
            if view.multiple_choice is None:
                out.append(self.result(Status.SKIP, "not a multiple-choice config (no policy choices)", config=view.config))
                continue
            out.append(self._config(view))
        return out

    def _config(self, view: ConfigView) -> CheckResult:
        mc = view.multiple_choice
        assert mc is not None  # caller checked
        min_cov = float(view.setting("cue_min_coverage", 0.05))
        min_gain = float(view.setting("cue_min_gain", 0.15))
        per_split: dict[str, Any] = {}
        flagged: list[dict[str, Any]] = []
        figures = []
        for split in view.splits:
            n, rows = cue_table(view.options(split), view.labeled(split, mc.label))
            if n == 0:
                continue
            top = top_cues(rows, max(3, int(0.01 * n)))
            for r in top:
                r["p_value"] = float(
                    stats.binomtest(r["productive"], r["applicability"], min(max(r["chance"], 1e-9), 1.0),
                                    alternative="greater").pvalue
                )
                r["flag"] = bool(
                    r["coverage"] >= min_cov and r["productivity"] - r["chance"] >= min_gain and r["p_value"] < ALPHA
                )
                for key in ("productivity", "chance", "coverage"):
                    r[key] = round(r[key], 4)
                if r["flag"]:
                    flagged.append({"split": split, **r})
            per_split[split] = {"n": n, "cues": len(rows), "top": top}
            if top and len(figures) < 3:
                figures.append(
                    {
                        "kind": "barh",
                        "title": f"{view.config}/{split}: top cues (productivity; coverage in brackets)",
                        "labels": [f"{r['cue']} [{r['coverage']:.0%}]" for r in top],
                        "values": [r["productivity"] for r in top],
                        "reference": [r["chance"] for r in top],
                        "xlabel": "productivity (line: chance)",
                    }
                )
        if not per_split:
            return self.result(Status.SKIP, "no labeled examples", config=view.config)
        metrics = {
            f"{s}/max_cue_strength": round(
                max((r["coverage"] * (r["productivity"] - r["chance"]) for r in d["top"]), default=0.0), 4
            )
            for s, d in per_split.items()
        }
        details = {"min_coverage": min_cov, "min_gain": min_gain, "splits": per_split}
        if flagged:
            f = flagged[0]
            return self.result(
                Status.WARN,
                f"{len(flagged)} lexical cue(s) in the options, e.g. {f['cue']!r} on {f['split']}: productivity "
                f"{f['productivity']:.2f} (chance {f['chance']:.2f}), coverage {f['coverage']:.1%}",
                config=view.config,
                metrics=metrics,
                details=details,
                figures=figures,
            )
        best = {s: d["top"][0]["cue"] for s, d in per_split.items() if d["top"]}
        return self.result(
            Status.PASS,
            f"no option token is a strong cue (top: {', '.join(f'{s} {c!r}' for s, c in best.items()) or 'none'})",
            config=view.config,
            metrics=metrics,
            details=details,
            figures=figures,
        )
