"""Score a MuCoW scoring suite with a local translation model (``benchsmith evaluate mucow --scores``).

MuCoW's scoring suites follow ContraWSD: for each item, the model scores the reference
translation and every contrastive translation (the ambiguous word's translation swapped
for another sense) given the source sentence; the item is right when the reference scores
better than every contrastive. A sentence's score is the **sum** of its target tokens'
log-probabilities given the source, teacher-forced (no generation), including the
end-of-sentence token the tokenizer appends: the convention of the suites' scripts
(nematus ``score.py``), not a per-token average.

The file :func:`score_suite` writes is what
:func:`benchsmith.builders.mucow.metric.read_scores` (the reader of ``--scores``) reads: UTF-8, one number per line,
for each item in the suite's order the reference first, then each contrastive in order.
By default each number is the *negative* log-probability (lower is better: the reader's
default); ``log_probs=True`` writes the log-probabilities themselves (then evaluate with
``--maximize``). Numbers are written with Python's shortest round-trip ``repr``.

Items are the released suite's rows (``source``, ``reference``,
``contrastive_translations``: ``Release.examples("scoring-<pair>", "test")``) or the
records of :func:`benchsmith.loaders.mucow_json.read_mucow_json` (``source``,
``reference``, ``errors``). The model is any local ``AutoModelForSeq2SeqLM`` with its
``AutoTokenizer`` translating from the suite's source language into English (MuCoW's
scoring suites are X -> en); targets are tokenised with ``text_target=`` so tokenizers
with separate target vocabularies (Marian) are used correctly. Pairs are batched in
length order; CUDA runs under autocast (bf16/fp16), the log-softmax in fp32.

This module also registers MuCoW's ``lm_scoring`` baseline engine (:func:`lm_scoring_engine`,
options :class:`LMScoringOptions`), which ``baseline.py`` declares: for every scored config
it writes ``<out>/<config>.<split>.scores.txt`` with :func:`score_suite` and hands that file to
the spec's ``score`` hook. ``--model-path`` may hold ``{config}``, ``{src}``, ``{tgt}`` (the
config's first and last language), so one command scores every pair with its own model.
"""

from __future__ import annotations

import tempfile
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchsmith.validation.baselines import runtime
from benchsmith.validation.baselines.engine import (
    EngineCall,
    EngineOutput,
    model_path,
    out_file,
    register_engine,
    score_rows,
)

from benchsmith import progress
from benchsmith.errors import ConfigError
from benchsmith.registry import write_text_atomic


def suite_pairs(items: Iterable[Any]) -> list[tuple[str, str]]:
    """(source, target) per line of the score file: each item's reference, then its contrastives."""
    out: list[tuple[str, str]] = []
    for n, item in enumerate(items):
        if isinstance(item, Mapping):
            if not {"source", "reference", "contrastive_translations"} <= set(item):
                raise ConfigError(f"suite item {n} lacks source / reference / contrastive_translations",
                                  hint="Pass the rows of a released MuCoW scoring config")
            source, ref, contrastive = item["source"], item["reference"], list(item["contrastive_translations"])
        elif all(hasattr(item, a) for a in ("source", "reference", "errors")):
            source, ref, contrastive = item.source, item.reference, [e.contrastive for e in item.errors]
        else:
            raise ConfigError(f"suite item {n} is a {type(item).__name__}; expected a release row or a MucowItem")
        out.append((source, ref))
        out.extend((source, c) for c in contrastive)
    return out


def sentence_log_probs(model: Any, tokenizer: Any, pairs: Sequence[tuple[str, str]], *, batch_size: int = 16,
                       device: str = "cpu", max_length: int = 512) -> tuple[list[float], int]:
    """Sum of target-token log-probabilities of each pair, and the number of target tokens scored."""
    import torch

    dtype = runtime.autocast_dtype(device)
    order = sorted(range(len(pairs)), key=lambda i: (len(pairs[i][0]), len(pairs[i][1])))
    out = [0.0] * len(pairs)
    n_tokens = 0
    model.eval()
    with torch.inference_mode(), torch.autocast(device.split(":")[0], dtype=dtype, enabled=dtype is not None):
        for i in progress.track(range(0, len(order), batch_size), "score suite"):
            idx = order[i : i + batch_size]
            enc = tokenizer([pairs[j][0] for j in idx], truncation=True, max_length=max_length, padding=True,
                            return_tensors="pt")
            targets = tokenizer(text_target=[pairs[j][1] for j in idx], truncation=True,
                                max_length=max_length)["input_ids"]
            width = max(map(len, targets))
            labels = torch.tensor([list(t) + [-100] * (width - len(t)) for t in targets], device=device)
            enc = {k: v.to(device) for k, v in enc.items()}
            logits = model(**enc, labels=labels).logits
            logp = torch.log_softmax(logits.float(), dim=-1)
            mask = labels.ne(-100)
            picked = logp.gather(-1, labels.clamp(min=0).unsqueeze(-1)).squeeze(-1)
            sums = (picked * mask).sum(dim=1).tolist()
            n_tokens += int(mask.sum())
            for j, value in zip(idx, sums):
                out[j] = value
    return out, n_tokens


def score_suite(model_path: str | Path, suite_items: Iterable[Any], out_path: str | Path, *, batch_size: int = 16,
                device: str = "auto", log_probs: bool = False, max_length: int = 512, seed: int = 0
                ) -> runtime.RunRecord:
    """Score every sentence of a MuCoW scoring suite into ``out_path`` (see the module docstring)."""
    import torch
    from transformers import AutoModelForSeq2SeqLM, AutoTokenizer
    from transformers.utils import logging as hf_logging

    hf_logging.disable_progress_bar()
    hf_logging.set_verbosity_error()
    path = Path(model_path)
    if not (path / "config.json").is_file():
        raise ConfigError("not a transformers model folder (no config.json)", path=path,
                          hint="Pass a local seq2seq translation model folder (save_pretrained output)")
    if not isinstance(batch_size, int) or batch_size < 1:
        raise ConfigError(f"batch_size={batch_size!r}; expected a positive int")
    out_path = Path(out_path)
    if not out_path.parent.is_dir():
        raise ConfigError("the folder of the scores file does not exist", path=out_path.parent,
                          hint="Create it or pass another --out path")
    items = list(suite_items)
    pairs = suite_pairs(items)
    start = time.perf_counter()
    dev = runtime.pick_device(device)
    runtime.seed_everything(seed)
    try:
        tokenizer = AutoTokenizer.from_pretrained(path, local_files_only=True)
        model = AutoModelForSeq2SeqLM.from_pretrained(path, local_files_only=True).to(dev)
    except (OSError, ValueError) as exc:
        raise ConfigError(f"cannot load a seq2seq model and tokenizer ({exc})", path=path,
                          hint="Pass a local AutoModelForSeq2SeqLM folder with its tokenizer files") from None
    if tokenizer.pad_token_id is None and tokenizer.eos_token_id is not None:
        tokenizer.pad_token = tokenizer.eos_token  # only pads sources; targets are padded with -100
    t0 = time.perf_counter()
    sums, n_tokens = sentence_log_probs(model, tokenizer, pairs, batch_size=batch_size, device=dev,
                                        max_length=max_length)
    if dev.startswith("cuda"):
        torch.cuda.synchronize()
    score_time = time.perf_counter() - t0
    values = sums if log_probs else [-v for v in sums]
    write_text_atomic(out_path, "".join(f"{float(v)!r}\n" for v in values))
    dtype = runtime.autocast_dtype(dev)
    record = runtime.RunRecord(
        baseline="mucow-lm-scoring", model=str(path), model_sha256=runtime.model_sha256(path), seed=seed,
        device=dev, dtype=runtime.dtype_name(dtype), gpu=runtime.gpu_name(dev),
        hyperparameters={"score": "sum of target log-probabilities" + ("" if log_probs else ", negated"),
                         "better": "higher" if log_probs else "lower", "batch_size": batch_size,
                         "max_length": max_length, "items": len(items), "sentences": len(pairs),
                         "target_tokens": n_tokens, "score_time_s": round(score_time, 3), "out": Path(out_path).name},
    )
    if score_time > 0:
        record.examples_per_s = round(len(pairs) / score_time, 2)
        record.tokens_per_s = round(n_tokens / score_time, 2)
    record.wall_time_s = round(time.perf_counter() - start, 3)
    return record


@dataclass(frozen=True)
class LMScoringOptions:
    """:func:`score_suite`'s options (same defaults)."""

    batch_size: int = 16
    log_probs: bool = False
    max_length: int = 512


@register_engine("lm_scoring", options=LMScoringOptions, trains=False, needs_model_path=True, subsamples=False)
def lm_scoring_engine(call: EngineCall) -> EngineOutput:
    """Score every evaluated suite into a scores file, then score that file with the spec's hook."""
    spec, release, opts, o = call.spec, call.release, call.run, call.options
    if spec.score is None:
        raise ConfigError(f"baseline {spec.name!r} needs a score hook that reads the suite's scores file")
    out = EngineOutput()
    if opts.max_examples:
        out.notes.append("--max-examples does not apply to lm_scoring (a scores file covers the whole suite): ignored")
    with tempfile.TemporaryDirectory(prefix="benchsmith-scores-") as tmp:
        for config, split in call.evaluations:
            langs = list(release.config_info(config).languages or [""])
            path = model_path(opts, spec, config=config, src=langs[0], tgt=langs[-1])
            items = list(spec.items(release, config, split)) if spec.items else list(release.examples(config, split))
            target = out_file(opts, f"{config}.{split}.scores.txt") or Path(tmp) / f"{config}.{split}.scores.txt"
            record = score_suite(path, items, target, device=opts.device, seed=opts.seed, batch_size=o.batch_size,
                                 log_probs=o.log_probs, max_length=o.max_length)
            record.hyperparameters.update(spec=spec.name, config=config, split=split)
            out.records.append(record)
            out.rows += score_rows(spec, release, config, split, items, target, out.details)
            if opts.out_dir is not None:
                out.outputs[f"{config}/{split}"] = target
    out.model = out.records[0].model if len({r.model for r in out.records}) == 1 else str(opts.model_path)
    return out
