"""Fine-tune a local transformers model on (source, target) pairs and generate: ComVE subtask C.

ComVE subtask C (SemEval-2020 Task 4) asks for the reason why a statement is against
common sense; its baselines fine-tune a pretrained generator on statement -> reason
pairs and are scored with BLEU against the references. This module does that for any
local model folder (never downloaded):

* a **seq2seq** model (``AutoModelForSeq2SeqLM``: BART, T5, Marian...): encoder input the
  statement, labels the reason (with the tokenizer's own special tokens);
* a **causal** LM (``AutoModelForCausalLM``: GPT-2, Llama...): the prompt
  ``"<statement> ->"`` followed by ``" <reason>"`` and the end-of-sequence token; the loss
  covers only the reason and the end token (prompt and padding labels are -100). A
  trailing end token the tokenizer may append to the prompt is removed. At generation the
  prompt is left-padded and the continuation up to the first line break is the output.

``kind="auto"`` reads ``config.json``: ``is_encoder_decoder`` means seq2seq. Several
references per statement are separate training pairs (:func:`pairs_from_references`).

Training runs on ``transformers.Trainer`` (the ecosystem's loop: mixed precision, gradient
clipping, the schedule): AdamW (``adamw_torch``; Trainer's convention leaves biases and
LayerNorm weights out of the weight decay), linear decay of the learning rate to 0 after
``warmup_steps``, gradient clipping at 1.0, shuffled batches of ``batch_size`` pairs (seeded),
``epochs`` passes or ``max_steps`` / ``max_time_s`` (a callback), whichever comes first; bf16
(or fp16 with Trainer's grad scaler) on CUDA, fp32 on CPU; the loss is logged every
``log_every`` steps and at the last one. Nothing is saved during training (a temporary
output folder); ``output_dir`` receives the final model. Trainer replaced a hand-written loop
(the same optimiser, schedule and clipping) after a measurement found it no slower: a
2-layer GPT-2 (d 128), 512 pairs, batch 16, 2 epochs on the shared 2-core CPU
(``OMP_NUM_THREADS=1``), old loop / Trainer, two alternating runs each: 17.3 s and 18.8 s /
18.5 s (a third Trainer run, 30.3 s, overlapped a test run), final loss 5.383 / 5.392 (the
batch order differs: Trainer's seeded sampler).
Decoding: beam search (``beam``) or greedy (``beam=1``), no sampling, one output per source.

The :class:`~benchsmith.validation.baselines.runtime.RunRecord` has the model folder and
its sha256, seed, device, dtype, options, steps, wall time (fine-tuning + decoding),
``tokens_per_s`` (non-padding input + label tokens per second of training steps) and
``examples_per_s`` (pairs per second of training steps); ``hyperparameters`` also holds
the loss at each log point (``train_loss``) and the decoding time.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

from benchsmith.validation.baselines import runtime

from benchsmith import progress
from benchsmith.errors import ConfigError, did_you_mean

KINDS = ("auto", "seq2seq", "causal")
PROMPT_SEPARATOR = " ->"


def pairs_from_references(rows: Iterable[tuple[str, Sequence[str]]]) -> list[tuple[str, str]]:
    """``[(statement, [reason, ...]), ...]`` -> one ``(statement, reason)`` pair per non-empty reference."""
    return [(s, r) for s, refs in rows for r in refs if r and r.strip()]


def load(model_path: str | Path, kind: str = "auto", device: str = "cpu") -> tuple[Any, Any, str]:
    """(model, tokenizer, kind) from a local folder; a missing folder or config is a ConfigError."""
    from transformers import AutoConfig, AutoModelForCausalLM, AutoModelForSeq2SeqLM, AutoTokenizer
    from transformers.utils import logging as hf_logging

    hf_logging.disable_progress_bar()
    hf_logging.set_verbosity_error()
    if kind not in KINDS:
        raise ConfigError(f"model kind {kind!r} is not supported", hint=did_you_mean(kind, KINDS))
    path = Path(model_path)
    if not (path / "config.json").is_file():
        raise ConfigError("not a transformers model folder (no config.json)", path=path,
                          hint="Pass the folder of a local seq2seq or causal LM (save_pretrained output)")
    config = AutoConfig.from_pretrained(path, local_files_only=True)
    if kind == "auto":
        kind = "seq2seq" if getattr(config, "is_encoder_decoder", False) else "causal"
    cls = AutoModelForSeq2SeqLM if kind == "seq2seq" else AutoModelForCausalLM
    try:
        tokenizer = AutoTokenizer.from_pretrained(path, local_files_only=True)
        model = cls.from_pretrained(path, local_files_only=True)
    except (OSError, ValueError) as exc:
        raise ConfigError(f"cannot load a {kind} model and tokenizer ({exc})", path=path,
                          hint="The folder needs the model weights and its tokenizer files") from None
    if tokenizer.pad_token_id is None:
        if tokenizer.eos_token_id is None:
            raise ConfigError("the tokenizer has neither a padding nor an end-of-sequence token", path=path)
        tokenizer.pad_token = tokenizer.eos_token
    return model.to(device), tokenizer, kind


class _Examples:
    """Tokenised training pairs and the batches the model sees."""

    def __init__(self, tokenizer: Any, kind: str, pairs: Sequence[tuple[str, str]], max_source_len: int,
                 max_target_len: int) -> None:
        self.tok, self.kind = tokenizer, kind
        self.tokens = self.examples = 0
        if kind == "seq2seq":
            enc = tokenizer([s for s, _ in pairs], truncation=True, max_length=max_source_len)
            lab = tokenizer(text_target=[t for _, t in pairs], truncation=True, max_length=max_target_len)
            self.rows = [(list(i), list(t)) for i, t in zip(enc["input_ids"], lab["input_ids"])]
        else:
            prompts = [_prompt_ids(tokenizer, s, max_source_len) for s, _ in pairs]
            targets = tokenizer([" " + t.strip() for _, t in pairs], add_special_tokens=False, truncation=True,
                                max_length=max_target_len - 1)["input_ids"]
            self.rows = [(p, [*t, tokenizer.eos_token_id]) for p, t in zip(prompts, targets)]

    def collate(self, idx: Sequence[int]) -> dict[str, Any]:
        """Trainer's data collator: a batch of row indices as padded tensors; counts what it saw
        (the record's tokens/s and examples/s)."""
        import torch

        pad = self.tok.pad_token_id
        rows = [self.rows[i] for i in idx]
        if self.kind == "seq2seq":
            src = [r[0] for r in rows]
            lab = [r[1] for r in rows]
            ids, mask = _right_pad(src, pad), _right_pad([[1] * len(s) for s in src], 0)
            labels = _right_pad(lab, -100)
            tokens = sum(map(len, src)) + sum(map(len, lab))
        else:
            seqs = [p + t for p, t in rows]
            ids, mask = _right_pad(seqs, pad), _right_pad([[1] * len(s) for s in seqs], 0)
            labels = _right_pad([[-100] * len(p) + t for p, t in rows], -100)
            tokens = sum(map(len, seqs))
        self.tokens += tokens
        self.examples += len(idx)
        return {"input_ids": torch.tensor(ids), "attention_mask": torch.tensor(mask), "labels": torch.tensor(labels)}


def _watch_class() -> Any:
    """The callback class (made on first use: transformers is imported lazily)."""
    from transformers import TrainerCallback

    class Watch(TrainerCallback):
        """Progress bar, ``max_time_s`` and the training time (Trainer's own loop does the rest)."""

        def __init__(self, total: int, max_time_s: float | None, bar: Any) -> None:
            self.total, self.max_time_s, self.bar = total, max_time_s, bar
            self.timed_out, self.train_time, self.t0 = False, 0.0, 0.0

        def on_train_begin(self, args: Any, state: Any, control: Any, **kw: Any) -> None:
            self.t0 = time.perf_counter()

        def on_step_end(self, args: Any, state: Any, control: Any, **kw: Any) -> None:
            self.bar.advance()
            if self.max_time_s is not None and time.perf_counter() - self.t0 >= self.max_time_s:
                self.timed_out = True
                control.should_training_stop = True
            if self.timed_out or state.global_step >= self.total:
                control.should_log = True  # the loss since the last log point, at the last step too

        def on_train_end(self, args: Any, state: Any, control: Any, **kw: Any) -> None:
            self.train_time = time.perf_counter() - self.t0

    return Watch


def _right_pad(rows: Sequence[Sequence[int]], value: int) -> list[list[int]]:
    width = max(map(len, rows))
    return [list(r) + [value] * (width - len(r)) for r in rows]


def _prompt_ids(tokenizer: Any, source: str, max_len: int) -> list[int]:
    ids = tokenizer(source.strip() + PROMPT_SEPARATOR, truncation=True, max_length=max_len)["input_ids"]
    if ids and ids[-1] == tokenizer.eos_token_id and len(ids) > 1:
        ids = ids[:-1]  # some tokenizers close every text with </s>: a prompt must stay open
    return list(ids)


@dataclass(frozen=True)
class GenerationOptions:
    """The ``generation`` engine's options (see the module docstring); bad values are ConfigErrors."""

    kind: str = "auto"
    epochs: int = 3
    max_steps: int | None = None
    max_time_s: float | None = None
    batch_size: int = 16
    lr: float = 5e-5
    weight_decay: float = 0.0
    warmup_steps: int = 0
    max_source_len: int = 128
    max_target_len: int = 64
    beam: int = 4
    max_new_tokens: int = 48
    eval_batch_size: int = 32
    log_every: int = 50

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ConfigError(f"model kind {self.kind!r} is not supported", hint=did_you_mean(self.kind, KINDS))
        positive = ["epochs", "batch_size", "beam", "log_every", "max_new_tokens", "eval_batch_size"]
        for name in positive + (["max_steps"] if self.max_steps is not None else []):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise ConfigError(f"{name}={value!r}; expected a positive int")


def finetune_and_generate(
    model_path: str | Path,
    train_pairs: Sequence[tuple[str, str]],
    eval_sources: Sequence[str],
    options: GenerationOptions | None = None,
    *,
    seed: int = 42,
    device: str = "auto",
    output_dir: str | Path | None = None,
    **overrides: Any,
) -> tuple[list[str], runtime.RunRecord]:
    """Fine-tune the model at ``model_path`` on ``train_pairs``; one generated output per eval source.

    ``options`` (default :class:`GenerationOptions`), with ``overrides`` (its field names) on top;
    ``output_dir`` (optional) receives the fine-tuned model and tokenizer (``save_pretrained``).
    See the module docstring for the procedure and the record.
    """
    import torch
    from transformers import Trainer

    o = replace(options or GenerationOptions(), **overrides)
    pairs = [(s, t) for s, t in train_pairs]
    if not pairs or any(not (isinstance(s, str) and s.strip() and isinstance(t, str) and t.strip()) for s, t in pairs):
        raise ConfigError("training pairs must be a non-empty list of (source, target) non-empty strings")
    start = time.perf_counter()
    dev = runtime.pick_device(device)
    dtype = runtime.autocast_dtype(dev)
    model, tokenizer, kind = load(model_path, o.kind, dev)
    sha = runtime.model_sha256(model_path)
    runtime.seed_everything(seed)

    data = _Examples(tokenizer, kind, pairs, o.max_source_len, o.max_target_len)
    per_epoch = -(-len(pairs) // o.batch_size)
    total = min(o.epochs * per_epoch, o.max_steps or o.epochs * per_epoch)
    stopped_by = "epochs" if total == o.epochs * per_epoch else "max_steps"
    with runtime.training_arguments(
            dev, seed, per_device_train_batch_size=o.batch_size, num_train_epochs=o.epochs, max_steps=total,
            learning_rate=o.lr, weight_decay=o.weight_decay, warmup_steps=o.warmup_steps, lr_scheduler_type="linear",
            max_grad_norm=1.0, optim="adamw_torch", logging_strategy="steps", logging_steps=o.log_every,
    ) as args, progress.bar("fine-tune", total=total) as bar:
        watch = _watch_class()(total, o.max_time_s, bar)
        # the training set is the rows' indices: the collator pads the tokenised rows (nothing tokenised twice)
        trainer = runtime.quiet(Trainer(model=model, args=args, train_dataset=list(range(len(data.rows))),
                                        data_collator=data.collate, callbacks=[watch]))
        trainer.train()
    model = trainer.model
    step = trainer.state.global_step
    history = [{"step": h["step"], "loss": round(h["loss"], 5)} for h in trainer.state.log_history if "loss" in h]
    if watch.timed_out:
        stopped_by = "max_time_s"
    tokens, examples = data.tokens, data.examples
    if dev.startswith("cuda"):
        torch.cuda.synchronize()
    train_time = watch.train_time

    t1 = time.perf_counter()
    outputs = generate(model, tokenizer, kind, eval_sources, beam=o.beam, max_new_tokens=o.max_new_tokens,
                       max_source_len=o.max_source_len, batch_size=o.eval_batch_size, device=dev)
    decode_time = time.perf_counter() - t1
    if output_dir is not None:
        model.save_pretrained(output_dir)
        tokenizer.save_pretrained(output_dir)
    record = runtime.RunRecord(
        baseline=f"generation-{kind}", model=str(model_path), model_sha256=sha, seed=seed, device=dev,
        dtype=runtime.dtype_name(dtype), gpu=runtime.gpu_name(dev), steps=step,
        hyperparameters={
            **asdict(o), "kind": kind, "schedule": "linear", "loop": "transformers.Trainer", "clip_norm": 1.0,
            "prompt": f"<source>{PROMPT_SEPARATOR} <target>" if kind == "causal" else None, "train_pairs": len(pairs), "eval_sources": len(eval_sources), "stopped_by": stopped_by,
            "train_time_s": round(train_time, 3), "decode_time_s": round(decode_time, 3), "train_loss": history,
            "parameters": sum(p.numel() for p in model.parameters()),
        },
    )
    if train_time > 0:
        record.tokens_per_s = round(tokens / train_time, 2)
        record.examples_per_s = round(examples / train_time, 2)
    record.wall_time_s = round(time.perf_counter() - start, 3)
    return outputs, record


def generate(model: Any, tokenizer: Any, kind: str, sources: Sequence[str], *, beam: int = 4, max_new_tokens: int = 48,
             max_source_len: int = 128, batch_size: int = 32, device: str = "cpu") -> list[str]:
    """One output per source (beam search, or greedy with ``beam=1``; no sampling), in order."""
    import torch

    dtype = runtime.autocast_dtype(device)
    order = sorted(range(len(sources)), key=lambda i: len(sources[i]))
    outputs: list[str] = [""] * len(sources)
    model.eval()
    pad = tokenizer.pad_token_id
    with torch.inference_mode(), torch.autocast(device.split(":")[0], dtype=dtype, enabled=dtype is not None):
        for i in progress.track(range(0, len(order), batch_size), "generate"):
            idx = order[i : i + batch_size]
            if kind == "seq2seq":
                enc = tokenizer([sources[j] for j in idx], truncation=True, max_length=max_source_len)
                rows = [list(r) for r in enc["input_ids"]]
                ids, mask = _right_pad(rows, pad), _right_pad([[1] * len(r) for r in rows], 0)
            else:  # left padding: every prompt ends where generation starts
                rows = [_prompt_ids(tokenizer, sources[j], max_source_len) for j in idx]
                width = max(map(len, rows))
                ids = [[pad] * (width - len(r)) + r for r in rows]
                mask = [[0] * (width - len(r)) + [1] * len(r) for r in rows]
            ids_t = torch.tensor(ids, device=device)
            out = model.generate(input_ids=ids_t, attention_mask=torch.tensor(mask, device=device),
                                 num_beams=beam, do_sample=False, max_new_tokens=max_new_tokens,
                                 pad_token_id=pad, eos_token_id=tokenizer.eos_token_id)
            if kind == "causal":
                out = out[:, ids_t.size(1):]
            for j, text in zip(idx, tokenizer.batch_decode(out, skip_special_tokens=True)):
                text = text.strip()
                outputs[j] = text.split("\n")[0].strip() if kind == "causal" else text
    return outputs
