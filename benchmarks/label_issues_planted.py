"""Label-issue detection measured on planted errors (issue 13).

ComVE subtask A's labelled items (train + validation; ids keyed by split, as they repeat across
ComVE's splits) get ``--fraction`` of their labels flipped at random (seeded); the cross-encoder's
out-of-fold probabilities (``--folds`` folds x ``--epochs`` epochs) go to cleanlab's
``find_label_issues``; precision and recall of the flipped items among the flagged ones are
printed as one JSON object (:func:`benchsmith.validation.baselines.label_issues.measure_planted_errors`).

    python benchmarks/label_issues_planted.py [--registry DIR] [--model-path DIR] [--device auto]
        [--folds 5] [--epochs 2] [--fraction 0.02] [--seed 0] [--max-examples N]

Measured on an H100 (every item, 5 folds x 2 epochs): precision 0.190, recall 0.745 (268 s).
"""

from __future__ import annotations

import argparse
import json
import time
from dataclasses import replace
from pathlib import Path

from benchsmith.cli.baseline import _resolve
from benchsmith.validation.baselines.engine import mc_items, subsample
from benchsmith.validation.baselines.label_issues import measure_planted_errors
from benchsmith.validation.baselines.multiple_choice import MCOptions


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--registry", type=Path, default=None, help="registry holding a comve release")
    ap.add_argument("--model-path", default=None, help="local encoder (default: MiniLM)")
    ap.add_argument("--device", default="auto", choices=("auto", "cpu", "cuda"))
    ap.add_argument("--folds", type=int, default=5)
    ap.add_argument("--epochs", type=int, default=2)
    ap.add_argument("--fraction", type=float, default=0.02)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--max-examples", type=int, default=None, help="seeded subsample (not comparable)")
    args = ap.parse_args()

    builder, release = _resolve("comve", args.registry)
    spec = next(s for s in builder.baselines() if s.name == "subtask-a")
    items = [replace(it, id=f"{split}:{it.id}") for split in ("train", "validation")
             for it in mc_items(spec, release, "subtask_a", split)]
    items = subsample(items, args.max_examples, args.seed)
    start = time.perf_counter()
    res = measure_planted_errors(items, fraction=args.fraction, seed=args.seed, folds=args.folds,
                                 options=MCOptions(epochs=args.epochs), model_path=args.model_path,
                                 device=args.device)
    res.pop("report")
    res.pop("flipped_ids")
    res.update(items=len(items), folds=args.folds, epochs=args.epochs, release=str(release.path),
               wall_s=round(time.perf_counter() - start, 1))
    print(json.dumps(res, indent=2))


if __name__ == "__main__":
    main()
