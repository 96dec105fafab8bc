"""The cross-encoder at git revision REF against this tree's, on the tests' tiny BERT (CPU, seeded):
are the per-epoch losses, validation accuracies and every prediction's probabilities identical?
Mixed 2/3-option items, cls and mean pooling, dropout, warm-up and model selection.

    python benchmarks/cross_encoder_identity.py [REF]    # default REF: 8a19564 (before issue 24's slimming)
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def old_module(ref: str):
    source = subprocess.run(["git", "-C", str(ROOT), "show", f"{ref}:validation/baselines/multiple_choice.py"],
                            check=True, capture_output=True, text=True).stdout
    path = Path(tempfile.mkdtemp()) / "old_mc.py"
    path.write_text(source, encoding="utf-8")
    spec = importlib.util.spec_from_file_location("old_mc", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules["old_mc"] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def main() -> None:
    import torch

    sys.path.insert(0, str(ROOT / "tests"))
    from model_helpers import tiny_bert
    from test_baselines_multiple_choice import WORDS, make_items

    from benchsmith.validation.baselines import multiple_choice as new

    torch.set_num_threads(1)
    old = old_module(sys.argv[1] if len(sys.argv) > 1 else "8a19564")
    model = str(tiny_bert(Path(tempfile.mkdtemp()), WORDS))
    train, val, test = make_items(60), make_items(15, 100), make_items(15, 200)

    def as_old(items):
        return [old.MCItem(**vars(it)) for it in items]

    for pooling in ("cls", "mean"):
        kw = {"epochs": 2, "batch_size": 8, "lr": 3e-3, "max_length": 32, "dropout": 0.1, "warmup_ratio": 0.1,
              "pooling": pooling}
        o = old.train_multiple_choice(as_old(train), as_old(val), {"test": as_old(test)},
                                      old.MCOptions(model_path=model, device="cpu", seed=0, **kw))
        n = new.train_multiple_choice(train, val, {"test": test}, new.MCOptions(**kw), model_path=model,
                                      device="cpu", seed=0)
        losses = [h.train_loss for h in o.history], [h["train_loss"] for h in n.history]
        accs = [h.validation_accuracy for h in o.history], [h["validation_accuracy"] for h in n.history]
        preds = [{s: {i: (p.predicted, p.probabilities) for i, p in d.items()} for s, d in r.predictions.items()}
                 for r in (o, n)]
        print(pooling, "losses", *losses, "identical: losses", losses[0] == losses[1], "validation",
              accs[0] == accs[1], "predictions", preds[0] == preds[1], "best epoch", o.best_epoch, n.best_epoch)


if __name__ == "__main__":
    main()
