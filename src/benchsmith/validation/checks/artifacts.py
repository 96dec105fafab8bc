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

The check counts on the shared token columns (``ConfigView.option_tokens``) with
numpy, a batch of examples at a time (:func:`cue_arrays`); :func:`cue_table` is the
same definition on option strings, one example at a time, and the tests hold the two
to the same table. Ties in strength are ordered by the cue's text, so the report does
not depend on token ids.
"""

from __future__ import annotations

import itertools
from collections import defaultdict
from typing import TYPE_CHECKING, Any

import numpy as np
from scipy import stats

from benchsmith.validation.check import Check, CheckResult, Status, register_check
from benchsmith.validation.dataview import (
    VOCAB,
    ConfigView,
    OptionTokens,
    configs,
    gather_ranges,
    sorted_unique,
    tokens,
)

if TYPE_CHECKING:
    from benchsmith.release import Release

TOP = 10
ALPHA = 1e-3
#: examples counted per numpy pass (bounds the unit arrays in memory)
BATCH_EXAMPLES = 32_768
_BIGRAM = np.int64(1) << np.int64(62)  # a bigram's unit key: _BIGRAM | first id << 31 | second id


def cue_units(text: str) -> set[str]:
    """Lower-cased unigrams and bigrams of a text."""
    toks = [t.casefold() for t in tokens(text)]
    return set(toks) | {f"{a} {b}" for a, b in itertools.pairwise(toks)}


def chance_sum(present_by_options: dict[int, int]) -> float:
    """Sum over applicable examples of (options containing the cue) / (options), from the
    integer sums per number of options (smallest first)."""
    return sum(s / k for k, s in sorted(present_by_options.items()))


def cue_table(options: list[list[str]], labels: list[int]) -> tuple[int, list[dict[str, Any]]]:
    """Applicability, productivity and coverage of every cue; returns (n, rows)."""
    applicable: dict[str, int] = defaultdict(int)
    productive: dict[str, int] = defaultdict(int)
    # chance as exact integer sums of "options containing the cue" per number of options,
    # divided once at the end: the same float whatever the order or batching of examples
    present_sums: dict[str, dict[int, int]] = defaultdict(lambda: defaultdict(int))
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
            present_sums[cue][k] += present
            if cue in units[label]:
                productive[cue] += 1
    rows = []
    for cue, a in applicable.items():
        rows.append(
            {
                "cue": cue,
                "applicability": a,
                "productivity": productive[cue] / a,
                "chance": chance_sum(present_sums[cue]) / a,
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


class CueArrays:
    """:func:`cue_table` as arrays: per cue (a unit key), its applicability, productive count
    and summed chance over the ``n`` usable examples of a split."""

    def __init__(self, n: int, keys: np.ndarray, applicable: np.ndarray, productive: np.ndarray,
                 chance: np.ndarray) -> None:
        self.n, self.keys, self.applicable, self.productive, self.chance = n, keys, applicable, productive, chance

    def __len__(self) -> int:
        return len(self.keys)

    def name(self, key: int) -> str:
        if key & int(_BIGRAM):
            return f"{VOCAB.names[(key >> 31) & 0x7FFFFFFF]} {VOCAB.names[key & 0x7FFFFFFF]}"
        return VOCAB.names[key]

    def top(self, min_applicability: int) -> list[dict[str, Any]]:
        """:func:`top_cues` of these cues (the same rows, the same order)."""
        a = self.applicable
        eligible = np.flatnonzero(a >= min_applicability)
        if not len(eligible):
            return []
        af = a[eligible].astype(np.float64)
        strength = (af / self.n) * (self.productive[eligible] / af - self.chance[eligible] / af)
        order = np.argsort(-strength, kind="stable")
        cut = strength[order[min(TOP, len(order)) - 1]]
        pick = eligible[strength >= cut]  # every cue that can be among the top, ties included
        rows = []
        for i in pick.tolist():
            ai = int(a[i])
            rows.append({"cue": self.name(int(self.keys[i])), "applicability": ai,
                         "productivity": float(self.productive[i]) / ai, "chance": float(self.chance[i]) / ai,
                         "coverage": ai / self.n if self.n else 0.0, "productive": int(self.productive[i])})
        return top_cues(rows, min_applicability)


def _units(opts: OptionTokens, options: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(unit key, option number in ``options``) of every unigram and bigram occurrence."""
    lens = opts.offsets[options + 1] - opts.offsets[options]
    pos = gather_ranges(opts.offsets[options], lens)
    owner = np.repeat(np.arange(len(options), dtype=np.int64), lens)
    uni = opts.ids[pos].astype(np.int64)
    inner = owner[:-1] == owner[1:]  # the next token is in the same option
    bigrams = _BIGRAM | (uni[:-1][inner] << np.int64(31)) | uni[1:][inner]
    return np.concatenate([uni, bigrams]), np.concatenate([owner, owner[:-1][inner]])


def cue_arrays(opts: OptionTokens, labels: np.ndarray, batch: int = BATCH_EXAMPLES) -> CueArrays:
    """:func:`cue_table` over token columns (see module docstring)."""
    counts = opts.counts()
    labels = np.asarray(labels, dtype=np.int64)
    usable = np.flatnonzero((labels >= 0) & (labels < counts) & (counts >= 2))
    option_counts = np.unique(counts[usable]).tolist()
    parts: list[tuple[np.ndarray, ...]] = []
    for lo in range(0, len(usable), batch):
        rows = usable[lo : lo + batch]
        k = counts[rows]
        options = gather_ranges(opts.row_offsets[rows], k)
        opt_row = np.repeat(np.arange(len(rows), dtype=np.int64), k)
        is_label = (options - np.repeat(opts.row_offsets[rows], k)) == labels[rows][opt_row]
        keys, owner = _units(opts, options)
        ukeys, kid = np.unique(keys, return_inverse=True)
        u = np.int64(len(ukeys))
        pairs = sorted_unique(owner * u + kid)  # each unit once per option
        opt, kid = pairs // u, pairs % u
        per_row, inv, present = np.unique(opt_row[opt] * u + kid, return_inverse=True, return_counts=True)
        with_label = np.bincount(inv, weights=is_label[opt], minlength=len(per_row)) > 0
        row, kid = per_row // u, per_row % u
        kk = k[row]
        app = present < kk  # in some options but not all: the cue can tell them apart
        kid, kk, present, n_u = kid[app], kk[app], present[app], len(ukeys)
        applicable = np.bincount(kid, minlength=n_u)
        keep = applicable > 0
        # integer sums of `present` per number of options (see chance_sum), one column per option count
        sums = [np.bincount(kid[kk == c], weights=present[kk == c], minlength=n_u)[keep] for c in option_counts]
        parts.append((ukeys[keep], applicable[keep], np.bincount(kid, weights=with_label[app], minlength=n_u)[keep],
                      *sums))
    if not parts:
        empty = np.zeros(0, dtype=np.int64)
        return CueArrays(0, empty, empty, np.zeros(0), np.zeros(0))
    keys = np.concatenate([p[0] for p in parts])
    ukeys, inv = np.unique(keys, return_inverse=True)
    total = [np.bincount(inv, weights=np.concatenate([p[i] for p in parts]), minlength=len(ukeys))
             for i in range(1, 3 + len(option_counts))]
    chance = np.zeros(len(ukeys))
    for c, s in zip(option_counts, total[2:]):  # smallest option count first, as chance_sum adds
        chance += s / c
    return CueArrays(len(usable), ukeys, total[0].astype(np.int64), total[1], chance)


@register_check
class CueCheck(Check):
    name = "cues"
    cacheable = True  # reads the release's data only (validation/result_cache.py)
    # reads token columns of the probe's fields (sent to the worker: validation/runner.py) or its own
    portable = True
    cost = 0.4  # CPU s on ComVE, roughly
    family = "artifacts"
    topic = 'lexical cues in the options predict the label'
    why = ('a model can pick the answer from a word of the options without the premise, so scores '
        'overstate what it understood')
    todo = ('rebalance the cue words in the builder; when upstream wrote the data that way, declare '
        'the artifact with its evidence in known_artifacts.yaml or acknowledge it in '
        'acknowledged.yaml quoting the paper')

    def run(self, release: Release) -> list[CheckResult]:
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
        figures: list[dict[str, Any]] = []
        for split in view.splits:
            table = cue_arrays(view.option_tokens(split), view.label_array(split, mc.label))
            n = table.n
            if n == 0:
                continue
            top = table.top(max(3, int(0.01 * n)))
            # binomtest(k, n, p, alternative="greater").pvalue is binom.sf(k - 1, n, p): one call for every
            # cue (a 1M-example split has 10,000: 1.8 s as binomtest calls, 0.02 s in one call)
            p_values = stats.binom.sf([r["productive"] - 1 for r in top], [r["applicability"] for r in top],
                                      [min(max(r["chance"], 1e-9), 1.0) for r in top])
            for r, p in zip(top, p_values, strict=True):
                r["p_value"] = float(p)
                r["flag"] = bool(
                    r["coverage"] >= min_cov and r["productivity"] - r["chance"] >= min_gain and r["p_value"] < ALPHA
                )
                for key in ("productivity", "chance", "coverage"):
                    r[key] = round(r[key], 4)
                if r["flag"]:
                    flagged.append({"split": split, **r})
            per_split[split] = {"n": n, "cues": len(table), "top": top}
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
