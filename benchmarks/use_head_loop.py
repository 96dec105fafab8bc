"""The USE transfer head's hand-written loop vs the same training on ``transformers.Trainer``.

XCOPA's ``use_zero_shot`` engine (:mod:`benchsmith.builders.xcopa.use_transfer`) trains a
small head (W_o tanh(W_h x + b_h), 512-d) on frozen sentence vectors: Adam, batches of 8,
gradient clipping, an accuracy on the validation items every 10 updates with the best
weights kept and a patience of 10 evaluations, per learning rate. Both sides run exactly
that on the same random vectors (``--items`` training and validation items of two options,
seeded), on one CPU thread, for a fixed ``--updates`` (patience off, so both do the same
work):

* ``ours``: :func:`~benchsmith.builders.xcopa.use_transfer._train_one`;
* ``trainer``: ``Trainer`` with the head wrapped as a module returning ``loss``/``logits``,
  ``eval_steps`` = 10 and a callback that keeps the best weights in memory (``Trainer``'s own
  ``load_best_model_at_end`` would write a checkpoint to disk at every evaluation).

``ratio`` = trainer / ours in updates per second (the brief: keep a hand-written loop only
where the library is more than 10% slower). Prints one JSON object.

    OMP_WAIT_POLICY=PASSIVE python benchmarks/use_head_loop.py [--items 400] [--updates 300] [--repeats 2]
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from typing import Any

import torch

from benchsmith.builders.xcopa.use_transfer import USEZeroShotOptions, _accuracy, _logits, _train_one
from benchsmith.validation.baselines.multiple_choice import score_head


def data(items: int, seed: int) -> tuple[Any, Any, Any]:
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(items, 2, 512, generator=g)
    labels = torch.randint(0, 2, (items,), generator=g)
    x[torch.arange(items), labels] += 0.05  # a weak signal to learn
    return x, torch.ones(items, 2, dtype=torch.bool), labels


class Head(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.head = score_head(512, 0.0)

    def forward(self, x: Any, mask: Any, labels: Any = None) -> dict[str, Any]:
        logits = _logits(self.head, x, mask)
        out = {"logits": logits}
        if labels is not None:
            out["loss"] = torch.nn.functional.cross_entropy(logits, labels)
        return out


def trainer_run(lr: float, train: tuple[Any, Any, Any], validation: tuple[Any, Any, Any], updates: int,
                seed: int) -> float:
    from transformers import PrinterCallback, Trainer, TrainerCallback, TrainingArguments

    class Rows(torch.utils.data.Dataset):
        def __len__(self) -> int:
            return len(train[2])

        def __getitem__(self, i: int) -> dict[str, Any]:
            return {"x": train[0][i], "mask": train[1][i], "labels": train[2][i]}

    class KeepBest(TrainerCallback):
        best = -1.0

        def on_step_end(self, args: Any, state: Any, control: Any, model: Any = None, **kw: Any) -> None:
            if state.global_step % 10 == 0:
                acc = _accuracy(model.head, validation)
                if acc > self.best:
                    self.best = acc
                    self.state = {k: v.detach().clone() for k, v in model.state_dict().items()}

    torch.manual_seed(seed)
    keep = KeepBest()
    with tempfile.TemporaryDirectory() as tmp:
        args = TrainingArguments(output_dir=tmp, per_device_train_batch_size=8, max_steps=updates, learning_rate=lr,
                                 lr_scheduler_type="constant", optim="adamw_torch", weight_decay=0.0,
                                 max_grad_norm=1.0, seed=seed, use_cpu=True, save_strategy="no", report_to="none",
                                 disable_tqdm=True, logging_strategy="no", dataloader_num_workers=0,
                                 dataloader_pin_memory=False, remove_unused_columns=False)
        trainer = Trainer(model=Head(), args=args, train_dataset=Rows(), callbacks=[keep])
        trainer.remove_callback(PrinterCallback)
        trainer.train()
    return keep.best


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--items", type=int, default=400)
    ap.add_argument("--updates", type=int, default=300)
    ap.add_argument("--repeats", type=int, default=2)
    a = ap.parse_args()
    torch.set_num_threads(1)  # as the engine trains the head on CPU
    train, validation = data(a.items, 1), data(a.items, 2)
    opts = USEZeroShotOptions(max_updates=a.updates, patience=10**9)
    times: dict[str, list[float]] = {"ours": [], "trainer": []}
    acc: dict[str, float] = {}
    for _ in range(a.repeats):
        t = time.perf_counter()
        acc["ours"] = _train_one(1e-3, train, validation, opts, "cpu")[0]
        times["ours"].append(time.perf_counter() - t)
        t = time.perf_counter()
        acc["trainer"] = trainer_run(1e-3, train, validation, a.updates, 0)
        times["trainer"].append(time.perf_counter() - t)
    best = {k: min(v) for k, v in times.items()}
    print(json.dumps({"items": a.items, "updates": a.updates, "seconds": {k: [round(x, 3) for x in v]
                                                                          for k, v in times.items()},
                      "updates_per_s": {k: round(a.updates / v, 1) for k, v in best.items()},
                      "ratio": round(best["ours"] / best["trainer"], 3),
                      "best_validation_accuracy": {k: round(v, 4) for k, v in acc.items()}}))


if __name__ == "__main__":
    main()
