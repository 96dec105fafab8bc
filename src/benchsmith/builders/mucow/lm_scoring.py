"""Score a MuCoW scoring suite with a local translation model, and MuCoW's ``lm_scoring`` engine.

MuCoW's suites follow ContraWSD: the model scores each item's reference and every contrastive
translation (the ambiguous word's translation swapped for another sense) given the source; the
item is right when the reference scores better than every contrastive. A sentence's score is the
**sum** of its target tokens' log-probabilities, teacher-forced, end-of-sentence token included
(the suites' scripts' convention, nematus ``score.py``; not a per-token average): the model's own
token cross-entropy kept per token (its ``loss`` is a batch mean; ``compute_transition_scores``
scores ``generate``'s outputs, not given targets). Over flattened tokens it is bit-identical to
the gather of ``log_softmax`` it replaced (over ``(batch, vocab, length)``: 358 of 869 sums
differed in the last bits). Targets are tokenised with ``text_target=`` (Marian's target
vocabulary) and padded on the right whatever the tokenizer's side (decoder positions start at
the first token).

:func:`score_suite` writes what :func:`.metric.read_scores` (``evaluate mucow --scores``) reads:
one number per line, per row the reference then each contrastive, negative log-probabilities
(lower is better). The engine writes ``<out>/<config>.<split>.scores.txt`` per scored config and
hands it to the spec's ``score`` hook; ``--model-path`` may hold ``{config}``, ``{src}``, ``{tgt}``.
"""

from __future__ import annotations

import tempfile
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchsmith import progress
from benchsmith.errors import ConfigError
from benchsmith.registry import write_text_atomic
from benchsmith.validation.baselines import engine, runtime
from benchsmith.validation.baselines.spec import Options

FIELDS = ("source", "reference", "contrastive_translations")
#: tokens kept per sentence: the usual translation models' limit, far above MuCoW's sentences
MAX_LENGTH = 512


def suite_pairs(rows: Iterable[Mapping[str, Any]]) -> list[tuple[str, str]]:
    """(source, target) per line of the score file: each row's reference, then its contrastives."""
    out: list[tuple[str, str]] = []
    for n, row in enumerate(rows):
        if not isinstance(row, Mapping) or not set(FIELDS) <= set(row):
            raise ConfigError(f"suite item {n} is not a row with source, reference, contrastive_translations",
                              hint="Pass the rows of a released MuCoW scoring config")
        out += [(row["source"], t) for t in (row["reference"], *row["contrastive_translations"])]
    return out


def sentence_log_probs(model: Any, tokenizer: Any, pairs: Sequence[tuple[str, str]], *, batch_size: int = 16,
                       device: str = "cpu") -> tuple[list[float], int]:
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
            enc = tokenizer([pairs[j][0] for j in idx], truncation=True, max_length=MAX_LENGTH, padding=True,
                            return_tensors="pt").to(device)
            tgt = tokenizer(text_target=[pairs[j][1] for j in idx], truncation=True, max_length=MAX_LENGTH,
                            padding=True, padding_side="right", return_tensors="pt").to(device)
            labels = tgt["input_ids"].masked_fill(tgt["attention_mask"].eq(0), -100)
            logits = model(**enc, labels=labels).logits.float()
            nll = torch.nn.functional.cross_entropy(logits.flatten(0, 1), labels.flatten(), reduction="none")
            n_tokens += int(labels.ne(-100).sum())
            for j, value in zip(idx, (-nll.view(labels.shape).sum(1)).tolist()):
                out[j] = value
    return out, n_tokens


def score_suite(model_path: str | Path, rows: Iterable[Mapping[str, Any]], out_path: str | Path, *,
                batch_size: int = 16, device: str = "auto", seed: int = 0) -> runtime.RunRecord:
    """Score every sentence of a MuCoW scoring suite into ``out_path`` (see the module docstring)."""
    import torch
    from transformers import AutoModelForSeq2SeqLM, AutoTokenizer

    runtime.quiet_transformers()
    path = runtime.model_folder(model_path, "Pass a local seq2seq translation model")
    out_path = Path(out_path)
    items = list(rows)
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
        tokenizer.pad_token = tokenizer.eos_token  # pads only; padded target positions are masked, not scored
    t0 = time.perf_counter()
    sums, n_tokens = sentence_log_probs(model, tokenizer, pairs, batch_size=batch_size, device=dev)
    if dev.startswith("cuda"):
        torch.cuda.synchronize()
    seconds = time.perf_counter() - t0
    write_text_atomic(out_path, "".join(f"{float(-v)!r}\n" for v in sums))
    record = runtime.RunRecord(
        baseline="mucow-lm-scoring", model=str(path), model_sha256=runtime.model_sha256(path), seed=seed,
        device=dev, hyperparameters={"score": "sum of target log-probabilities, negated", "better": "lower",
                         "batch_size": batch_size, "max_length": MAX_LENGTH, "items": len(items),
                         "sentences": len(pairs), "target_tokens": n_tokens,
                         "score_time_s": round(seconds, 3), "out": out_path.name})
    record.throughput(len(pairs), n_tokens, seconds)
    record.wall_time_s = round(time.perf_counter() - start, 3)
    return record


@dataclass(frozen=True)
class LMScoringOptions(Options):
    """:func:`score_suite`'s batch size (``--set batch_size=N``)."""

    batch_size: int = 16


@engine.register_engine("lm_scoring", options=LMScoringOptions, trains=False, needs_model_path=True,
                        ignores={"max_examples": "a scores file covers the whole suite"})
def lm_scoring_engine(call: engine.EngineCall) -> engine.EngineOutput:
    """Score every evaluated suite into a scores file, then score that file with the spec's hook."""
    spec, release, opts = call.spec, call.release, call.run
    if spec.score is None:
        raise ConfigError(f"baseline {spec.name!r} needs a score hook that reads the suite's scores file")
    out = engine.EngineOutput()
    with tempfile.TemporaryDirectory(prefix="benchsmith-scores-") as tmp:
        for config, split in call.evaluations:
            langs = list(release.config_info(config).languages or [""])
            path = engine.model_path(opts, spec, config=config, src=langs[0], tgt=langs[-1])
            rows = spec.items(release, config, split) if spec.items else release.examples(config, split)
            items = list(rows)
            name = f"{config}.{split}.scores.txt"
            target = engine.out_file(opts, name) or Path(tmp) / name
            record = score_suite(path, items, target, device=opts.device, seed=opts.seed,
                                 batch_size=call.options.batch_size)
            record.hyperparameters.update(spec=spec.name, config=config, split=split)
            out.records.append(record)
            out.rows += engine.score_rows(spec, release, config, split, items, target, out.details)
            if opts.out_dir is not None:
                out.outputs[f"{config}/{split}"] = target
    out.model = out.records[0].model if len({r.model for r in out.records}) == 1 else str(opts.model_path)
    return out
