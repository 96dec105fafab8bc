"""The partial-input probes on a planted artifact that bag-of-words cannot see (issue 41).

For each strength (the share of items whose correct option negates the unfavourable adjective,
the same words in both options: :mod:`benchsmith.validation.baselines.planted`) and seed, a
release of ``--train`` + ``--test`` items is written and scored by the gate's partial-input
probes as ``validate`` runs them: the bag-of-words regression (``partial_input``), the logistic
regression on frozen MiniLM embeddings (``baselines_model``, ``--baselines model``) and the
fine-tuned MiniLM (``partial_input_finetuned``, with the config's default CPU budget). Strength 0
plants nothing: no probe may fail there. Prints one Markdown table (probe x strength x seed:
accuracy, gain, p-value, verdict, seconds).

    python benchmarks/planted_artifacts.py [--strengths 1.0 0.7 0.4 0.0] [--seeds 0 1 2]
        [--train 500] [--test 300] [--model-path DIR] [--out DIR]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from benchsmith.validation.baselines.model import ModelBaselines
from benchsmith.validation.baselines.planted import planted_release
from benchsmith.validation.baselines.probe import FineTunedProbe
from benchsmith.validation.checks.partial_input import PartialInputCheck


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--strengths", type=float, nargs="+", default=[1.0, 0.7, 0.4, 0.0])
    ap.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    ap.add_argument("--train", type=int, default=500)
    ap.add_argument("--test", type=int, default=300)
    ap.add_argument("--model-path", default=None, help="local encoder (default: MiniLM)")
    ap.add_argument("--out", type=Path, default=None, help="keep the releases here (default: a temporary folder)")
    args = ap.parse_args()

    print("| probe | strength | seed | accuracy | gain | p-value | verdict | seconds |")
    print("|---|---:|---:|---:|---:|---:|---|---:|")
    with tempfile.TemporaryDirectory(prefix="planted-") as tmp:
        root = args.out or Path(tmp)
        for strength in args.strengths:
            for seed in args.seeds:
                release = planted_release(root / f"s{strength}-seed{seed}", strength, seed,
                                          n_train=args.train, n_test=args.test)
                for check in (PartialInputCheck(), ModelBaselines(args.model_path), FineTunedProbe(args.model_path)):
                    start = time.perf_counter()
                    (r,) = check.run(release)
                    m = r.metrics
                    print(f"| {check.name} | {strength:.0%} | {seed} | {m['accuracy']:.1%} | {m['gain']:+.1%} | "
                          f"{m['p_value']:.2g} | {r.status} | {time.perf_counter() - start:.0f} |", flush=True)


if __name__ == "__main__":
    main()
