"""Cheap baselines: majority and length, reported per split (``--baselines cheap``).

They are reference points for the card, not gates: a majority baseline far above
chance is the ``label_balance`` check's business, a length rule above chance the
``lengths`` check's. Training data is the split named ``train`` when there is
one, else the config's first split (XCOPA has only validation and test).

* majority: the most frequent label (multiple choice: the most frequent correct
  position) of the training split, applied to every split;
* longest / shortest option (multiple choice): no training, ties count as a
  random pick (expected accuracy).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from benchsmith.validation.check import Check, CheckResult, Status
from benchsmith.validation.checks.distribution import length_rule_arrays
from benchsmith.validation.dataview import ConfigView, configs

if TYPE_CHECKING:
    from benchsmith.release import Release


def train_split(view: ConfigView) -> str:
    """``train`` when the config has it, else its first split (see module docstring)."""
    return "train" if "train" in view.splits else view.splits[0]


class CheapBaselines(Check):
    name = "baselines"
    family = "baselines"
    cacheable = True  # reads the release's data only (validation/result_cache.py)

    def run(self, release: Release) -> list[CheckResult]:
        out = []
        for view in configs(release):
            lf = view.label_field
            if lf is None:
                out.append(self.result(Status.SKIP, "no label field", config=view.config))
                continue
            out.append(self._config(view, lf))
        return out

    def _config(self, view: ConfigView, lf: str) -> CheckResult:
        source = train_split(view)
        train_labels = view.label_array(source, lf)
        train_labels = train_labels[train_labels >= 0]
        if not len(train_labels):
            return self.result(Status.SKIP, f"no labeled examples in {source}", config=view.config)
        # the most frequent label; a tie goes to the label seen first (as Counter.most_common)
        values, first, counts = np.unique(train_labels, return_index=True, return_counts=True)
        best = np.flatnonzero(counts == counts.max())
        majority = int(values[best[np.argmin(first[best])]])
        table: dict[str, dict[str, float | None]] = {}
        mc = view.multiple_choice
        for split in view.splits:
            labels = view.label_array(split, lf)
            labeled = labels[labels >= 0]
            if not len(labeled):
                continue
            row: dict[str, float | None] = {"majority": float(np.mean(labeled == majority))}
            if mc is not None:
                opts = view.option_tokens(split)
                # the token lengths every check shares: no option is tokenised again
                scores, _ = length_rule_arrays(opts.lengths(), opts.row_offsets, labels)
                for rule in ("longest", "shortest"):
                    row[f"{rule}_option"] = float(np.mean(scores[rule])) if len(scores[rule]) else None
                k = opts.counts()
                row["chance"] = float(np.mean(1 / k[(labels >= 0) & (k > 0)]))
            else:
                row["chance"] = 1 / max(len(view.label_names(lf) or set(labeled.tolist())), 1)
            table[split] = {k: (round(v, 4) if v is not None else None) for k, v in row.items()}
        if not table:
            return self.result(Status.SKIP, "no labeled examples", config=view.config)
        # the summary quotes the evaluation split: test, else the last other split
        shown = "test" if "test" in table else ([s for s in table if s != source] or [source])[-1]
        parts = ", ".join(f"{k.replace('_', ' ')} {v:.1%}" for k, v in table[shown].items() if v is not None)
        metrics = {f"{s}/{k}": v for s, row in table.items() for k, v in row.items()}
        return self.stat(
            f"on {shown}: {parts} (majority from {source})",
            config=view.config,
            metrics=metrics,
            details={"trained_on": source, "majority_label": majority, "accuracy": table},
        )
