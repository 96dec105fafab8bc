"""Distribution checks: label balance and length distributions, per split.

* ``label_balance``: for each label field (ClassLabels, and the declared
  multiple-choice label) and split, a chi-square goodness-of-fit test against the
  uniform distribution over the classes (unlabeled ``-1`` rows are left out).
  A skew at ``p < policy.label_balance_alpha`` (default 0.01) is a warning;
  it is a failure when the builder declares ``policy.balanced_labels = True``
  (COPA-style sets that are balanced by construction).
* ``lengths``: token-length distributions per text field and split (histograms in
  the HTML report), mean length per label, and length as a label cue:
  for multiple-choice configs the accuracy of "pick the longest" and "pick the
  shortest" option against chance (binomial test; ties count as a random pick);
  for classification configs a Kruskal-Wallis test of each field's length across
  labels with its epsilon-squared effect size. A cue with ``p < 0.001`` and an
  effect of at least ``policy.length_cue_min_gain`` (accuracy above chance,
  default 0.05) or ``policy.length_cue_min_effect`` (epsilon-squared,
  default 0.02) is a warning: the report shows it, the gate does not stop on it;
  the partial-input baseline is what gates.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
from scipy import stats

from benchsmith.nlp.scripts import tokens
from benchsmith.validation.check import Check, CheckResult, Status, register_check
from benchsmith.validation.dataview import ConfigView, configs

if TYPE_CHECKING:
    from benchsmith.release import Release

CUE_ALPHA = 1e-3


def _num_classes(view: ConfigView, field: str, values: np.ndarray) -> int:
    names = view.label_names(field)
    if names:
        return len(names)
    mc = view.multiple_choice
    if mc is not None and field == mc.label and mc.list_field:
        return max((int(view.option_tokens(s).counts().max(initial=0)) for s in view.splits), default=0)
    return int(values.max(initial=-1)) + 1


@register_check
class LabelBalanceCheck(Check):
    name = "label_balance"
    cacheable = True  # reads the release's data only (validation/result_cache.py)
    # reads token columns of the probe's fields (sent to the worker: validation/runner.py) or its own
    portable = True
    cost = 0.3  # CPU s on ComVE, roughly
    family = "distribution"
    topic = 'labels are not uniform'
    why = 'a majority-class guess beats 1/k, so an accuracy must be read against the majority share'
    todo = ("if the builder dropped or relabelled items, fix it; if the skew is upstream's, "
        "acknowledge it in acknowledged.yaml citing upstream's counts (the policy's "
        'balanced_labels makes it a failure)')

    def run(self, release: Release) -> list[CheckResult]:
        results = []
        for view in configs(release):
            for field in view.label_fields:
                results.append(self._field(view, field))
        return results

    def _field(self, view: ConfigView, field: str) -> CheckResult:
        alpha = float(view.setting("label_balance_alpha", 0.01))
        strict = bool(view.setting("balanced_labels", False))
        per_split: dict[str, dict[str, Any]] = {}
        all_values = {s: view.label_array(s, field) for s in view.splits}
        k = _num_classes(view, field, np.concatenate([np.zeros(0, dtype=np.int64), *all_values.values()]))
        names = view.label_names(field) or [str(i) for i in range(k)]
        skewed = []
        for split, values in all_values.items():
            labeled = values[values >= 0]
            if not len(labeled) or k < 2:
                per_split[split] = {"labeled": len(labeled), "unlabeled": len(values) - len(labeled)}
                continue
            counts = np.bincount(labeled, minlength=k)[:k]
            chi2, p = stats.chisquare(counts)
            majority = float(counts.max() / counts.sum())
            per_split[split] = {
                "counts": {names[i]: int(c) for i, c in enumerate(counts)},
                "unlabeled": len(values) - len(labeled),
                "chi2": float(chi2),
                "p_value": float(p),
                "majority_share": majority,
            }
            if p < alpha:
                skewed.append(f"{split} (majority {majority:.1%}, p{'<1e-300' if p == 0 else f'={p:.2g}'})")
        tested = [s for s, d in per_split.items() if "p_value" in d]
        figure = {
            "kind": "bar",
            "title": f"{view.config}: {field} per split",
            "ylabel": "examples",
            "categories": names,
            "series": {s: list(d["counts"].values()) for s, d in per_split.items() if "counts" in d},
        }
        if not tested:
            return self.result(
                Status.SKIP,
                f"{field}: no labeled examples to test",
                config=view.config,
                details={"splits": per_split},
            )
        if skewed:
            status = Status.FAIL if strict else Status.WARN
            summary = f"{field} not uniform in {', '.join(skewed)}"
        else:
            status = Status.PASS
            summary = f"{field} consistent with uniform over {k} classes in {', '.join(tested)} (alpha {alpha})"
        metrics = {f"{s}/majority_share": d["majority_share"] for s, d in per_split.items() if "p_value" in d}
        metrics.update({f"{s}/p_value": d["p_value"] for s, d in per_split.items() if "p_value" in d})
        return self.result(
            status,
            summary,
            config=view.config,
            metrics=metrics,
            details={"field": field, "alpha": alpha, "strict": strict, "splits": per_split},
            figures=[figure],
        )


def _histogram(series: dict[str, np.ndarray], title: str) -> dict[str, Any]:
    """Pre-aggregated histograms on shared integer bins (up to the 99th percentile);
    ``{}`` (no figure) when every split is empty."""
    nonempty = [np.asarray(v) for v in series.values() if len(v)]
    if not nonempty:
        return {}
    pooled = np.concatenate(nonempty)
    hi = max(int(np.percentile(pooled, 99)) + 1, int(pooled.min()) + 1)
    lo = int(pooled.min())
    width = max(1, int(np.ceil((hi - lo + 1) / 40)))
    edges = list(range(lo, hi + width + 1, width))
    return {
        "kind": "hist",
        "title": title,
        "xlabel": "tokens",
        "ylabel": "share of examples",
        "edges": edges,
        "series": {
            s: (np.histogram(np.clip(v, lo, edges[-1] - 1), bins=edges)[0] / max(len(v), 1)).round(5).tolist()
            for s, v in series.items()
            if len(v)
        },
    }


def _describe(lengths: np.ndarray) -> dict[str, float]:
    a = np.asarray(lengths)
    if a.size == 0:
        return {"n": 0}
    return {
        "n": int(a.size),
        "mean": round(float(a.mean()), 3),
        "median": float(np.median(a)),
        "p95": float(np.percentile(a, 95)),
        "min": int(a.min()),
        "max": int(a.max()),
    }


def length_rule_arrays(
    option_lengths: np.ndarray, row_offsets: np.ndarray, labels: np.ndarray
) -> tuple[dict[str, np.ndarray], np.ndarray]:
    """Per usable example (a label naming one of at least two options), in row order: the
    expected accuracy of picking the ``longest`` and the ``shortest`` option (ties are a
    random pick among the tied options), and chance ``1 / options``.

    ``option_lengths`` holds the tokens of every option, row after row; row ``r`` owns
    ``row_offsets[r]:row_offsets[r + 1]`` (one vectorised pass, no per-row Python).
    """
    counts = np.diff(row_offsets)
    labels = np.asarray(labels, dtype=np.int64)
    usable = (labels >= 0) & (labels < counts) & (counts >= 2)
    nonempty = np.flatnonzero(counts > 0)
    out: dict[str, np.ndarray] = {}
    if not len(nonempty) or not usable.any():
        return {"longest": np.zeros(0), "shortest": np.zeros(0)}, np.zeros(0)
    starts = row_offsets[nonempty]  # options of the empty rows: none, so the non-empty rows tile them
    lens = np.asarray(option_lengths, dtype=np.int64)
    rows_used = np.flatnonzero(usable)
    at = np.searchsorted(nonempty, rows_used)  # a usable row's place among the non-empty rows
    chosen = lens[row_offsets[rows_used] + labels[rows_used]]
    owner = np.repeat(np.arange(len(nonempty)), counts[nonempty])
    for rule, reduce in (("longest", np.maximum), ("shortest", np.minimum)):
        target = reduce.reduceat(lens, starts)
        tied = np.bincount(owner, weights=lens == target[owner], minlength=len(nonempty))
        out[rule] = (chosen == target[at]) / tied[at]
    return out, 1 / counts[rows_used]


def length_rule_scores(
    options: Sequence[Sequence[str]], labels: Sequence[int]
) -> tuple[dict[str, list[float]], list[float]]:
    """:func:`length_rule_arrays` on option strings (tokenised here), as lists."""
    counts = np.fromiter((len(o) for o in options), dtype=np.int64, count=len(options))
    row_offsets = np.zeros(len(counts) + 1, dtype=np.int64)
    np.cumsum(counts, out=row_offsets[1:])
    lens = np.fromiter((len(tokens(o)) for opts in options for o in opts), dtype=np.int64, count=int(counts.sum()))
    scores, chance = length_rule_arrays(lens, row_offsets, np.asarray(list(labels), dtype=np.int64))
    return {k: v.tolist() for k, v in scores.items()}, chance.tolist()


@register_check
class LengthCheck(Check):
    name = "lengths"
    cacheable = True  # reads the release's data only (validation/result_cache.py)
    # reads token columns of the probe's fields (sent to the worker: validation/runner.py) or its own
    portable = True
    cost = 0.6  # CPU s on ComVE, roughly
    family = "distribution"
    topic = 'option length predicts the label'
    why = ('a model can score above chance by picking the longest or shortest option, without '
        'reading them')
    todo = ("when the cue is upstream's, declare it in known_artifacts.yaml with its evidence or "
        'acknowledge it in acknowledged.yaml; when the builder made it (padding, truncation), fix '
        'the builder')

    def run(self, release: Release) -> list[CheckResult]:
        return [self._config(view) for view in configs(release)]

    def _config(self, view: ConfigView) -> CheckResult:
        min_gain = float(view.setting("length_cue_min_gain", 0.05))
        min_effect = float(view.setting("length_cue_min_effect", 0.02))
        lengths: dict[str, dict[str, np.ndarray]] = {}
        for field in view.text_fields:
            lengths[field] = {s: view.token_lengths(s, field) for s in view.splits}
        stats_ = {f: {s: _describe(v) for s, v in per.items()} for f, per in lengths.items()}
        figures = [h for f, per in lengths.items() if (h := _histogram(per, f"{view.config}: {f} length"))]
        cues: list[dict[str, Any]] = []
        per_label: dict[str, Any] = {}
        mc = view.multiple_choice
        if mc is not None:
            cues = self._mc_cues(view, min_gain)
        elif view.label_field is not None:
            cues, per_label = self._classification_cues(view, lengths, min_effect)
        flagged = [c for c in cues if c["flag"]]
        details = {"lengths": stats_, "label_cues": cues, "mean_length_per_label": per_label}
        metrics = {f"{f}/{s}/mean": d.get("mean") for f, per in stats_.items() for s, d in per.items()}
        if flagged:
            c = flagged[0]
            return self.result(
                Status.WARN,
                f"length is a label cue: {c['describe']}" + (f" (+{len(flagged) - 1} more)" if len(flagged) > 1 else ""),
                config=view.config,
                metrics=metrics,
                details=details,
                figures=figures,
            )
        fields = ", ".join(view.text_fields) or "no text fields"
        tail = "no length cue to the label" if cues else "no label to test length against"
        return self.result(
            Status.PASS,
            f"length distributions of {fields}; {tail}",
            config=view.config,
            metrics=metrics,
            details=details,
            figures=figures,
        )

    def _mc_cues(self, view: ConfigView, min_gain: float) -> list[dict[str, Any]]:
        mc = view.multiple_choice
        assert mc is not None  # caller checked
        cues = []
        for split in view.splits:
            opts = view.option_tokens(split)
            scores, chance = length_rule_arrays(opts.lengths(), opts.row_offsets, view.label_array(split, mc.label))
            n = len(chance)
            if n == 0:
                continue
            c = float(np.mean(chance))
            for rule, s in scores.items():
                acc = float(np.mean(s))
                p = stats.binomtest(round(sum(s.tolist())), n, c, alternative="greater").pvalue
                gain = acc - c
                cues.append(
                    {
                        "split": split,
                        "rule": f"pick the {rule} option",
                        "accuracy": round(acc, 4),
                        "chance": round(c, 4),
                        "p_value": float(p),
                        "n": n,
                        "flag": bool(p < CUE_ALPHA and gain >= min_gain),
                        "describe": f"picking the {rule} option scores {acc:.1%} on {split} (chance {c:.1%})",
                    }
                )
        return cues

    def _classification_cues(
        self, view: ConfigView, lengths: dict[str, dict[str, np.ndarray]], min_effect: float
    ) -> tuple[list[dict[str, Any]], dict[str, Any]]:
        lf = view.label_field
        assert lf is not None  # caller checked
        names = view.label_names(lf)
        cues: list[dict[str, Any]] = []
        per_label: dict[str, dict[str, Any]] = {}
        for split in view.splits:
            labels = view.label_array(split, lf)
            for field, per in lengths.items():
                ln = np.asarray(per[split])
                groups = {int(k): ln[labels == k] for k in np.unique(labels) if k >= 0}
                per_label.setdefault(field, {})[split] = {
                    (names[k] if names and k < len(names) else str(k)): round(float(g.mean()), 3)
                    for k, g in groups.items()
                }
                sizes = [g.size for g in groups.values()]
                if len(groups) < 2 or min(sizes) < 2 or len(np.unique(ln)) < 2:
                    continue
                h, p = stats.kruskal(*groups.values())
                n = int(sum(sizes))
                eps2 = float(h / ((n * n - 1) / (n + 1)))  # epsilon-squared (Tomczak & Tomczak 2014)
                cues.append(
                    {
                        "split": split,
                        "field": field,
                        "kruskal_h": float(h),
                        "p_value": float(p),
                        "epsilon_squared": round(eps2, 4),
                        "flag": bool(p < CUE_ALPHA and eps2 >= min_effect),
                        "describe": f"{field} length differs by label on {split} "
                        f"(epsilon^2={eps2:.3f}, p={p:.2g}; means {per_label[field][split]})",
                    }
                )
        return cues, per_label
