"""Training throughput of the seq2seq baseline's loop vs a plain PyTorch loop.

Both sides train the same model (:class:`~benchsmith.builders.cognition.seq2seq.Seq2SeqTransformer`,
same preset and seed, so the same initial weights) on the same pairs, prepared once by
:func:`~benchsmith.builders.cognition.seq2seq.prepare` (same source vocabulary, same BPE),
with the same optimiser (Adam, inverse-sqrt schedule), label smoothing and number of
steps, in the same process: fp32 on CPU, and on CUDA both sides under the same autocast
(``runtime.autocast_dtype``: bf16, or fp16 with a grad scaler where bf16 is missing), so the
ratio compares the loops, not the precisions:

* ``ours``: :func:`benchsmith.builders.cognition.seq2seq.train` (batches of at most
  ``max_tokens`` padded tokens over length-sorted pairs, loss accumulated on the device);
  its record's ``tokens_per_s`` (target tokens per second of training steps);
* ``plain``: what a hand-written loop does: a seeded random order, batches of a fixed
  number of pairs (ours' mean pairs per batch, so the same batch size), padded to the
  longest in the batch (no bucketing), ``loss.item()`` every step.

Throughput counts real target tokens (with ``</s>``) per second of training steps on both
sides: data preparation and model construction are excluded from both. ``ratio`` = ours
/ plain (target >= 0.9); ``padding`` = padded / real target tokens. Sides alternate
``--repeats`` times; the median of each is reported. Data: synthetic English-Chinese pairs
(fixed word lists, 4-20 words) unless ``--cognition DIR`` names CoGnition's ``data/``
folder (its ``valid.{en,zh}`` are used). Prints one JSON object.

On a shared CPU machine set ``OMP_WAIT_POLICY=PASSIVE``: spinning OpenMP threads on
oversubscribed cores slow both sides several-fold.

    python benchmarks/nmt_throughput.py [--pairs 4000] [--steps 40] [--repeats 2] [--preset small]
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import time
from pathlib import Path

import torch
import torch.nn.functional as F
from benchsmith.builders.cognition import seq2seq
from benchsmith.validation.baselines.runtime import autocast_dtype, pick_device, seed_everything

EN = [
    "the", "a", "dog", "cat", "girl", "boy", "doctor", "farmer", "saw", "liked", "found", "took", "gave", "small",
    "red", "quiet", "house", "car", "park", "under", "near", "with", "to", "from", "and", "then", "he", "she",
    "they", "was", "were", "happy", "sad", "very",
]
ZH = [
    "狗", "猫", "女孩", "男孩", "医生", "农民", "看见", "了", "喜欢", "找到", "拿", "给", "小", "红色", "安静", "房子",
    "汽车", "公园", "下面", "附近", "和", "然后", "他", "她", "他们", "是", "很", "高兴", "难过", "的", "在", "。",
]


def synthetic_pairs(n: int, seed: int = 0) -> list[tuple[str, str]]:
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        k = rng.randint(4, 20)
        out.append((" ".join(rng.choices(EN, k=k)) + " .", "".join(rng.choices(ZH, k=k + rng.randint(-2, 3))) + "。"))
    return out


def cognition_pairs(folder: Path, n: int) -> list[tuple[str, str]]:
    en = (folder / "valid.en").read_text(encoding="utf-8").splitlines()
    zh = (folder / "valid.zh").read_text(encoding="utf-8").splitlines()
    return list(zip(en, zh))[:n]


def ours(pairs, preset: str, steps: int, device: str, seed: int, overrides: dict) -> dict:
    m = seq2seq.train(pairs, [], preset, seed=seed, device=device, max_steps=steps, eval_every=steps + 1,
                      log_every=steps + 1, **overrides)
    hp = m.record.hyperparameters
    return {"tokens_per_s": m.record.tokens_per_s, "train_time_s": hp["train_time_s"],
            "pairs_per_batch": hp["train_pairs"] / hp["batches_per_epoch"]}


def plain(pairs, preset: str, steps: int, device: str, seed: int, overrides: dict, batch_size: int) -> dict:
    hp = seq2seq.Hyperparameters.from_preset(preset, **overrides)
    seed_everything(seed)
    src, tgt, src_vocab, bpe = seq2seq.prepare(pairs, hp)
    net = seq2seq.Seq2SeqTransformer(hp, len(src_vocab), bpe.vocab_size).to(device)
    opt = torch.optim.Adam(net.parameters(), lr=hp.lr, betas=hp.betas, eps=hp.adam_eps)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: seq2seq.inverse_sqrt(s + 1, hp.warmup))
    rng = random.Random(seed)
    order: list[int] = []
    real = padded = 0
    dtype = autocast_dtype(device)  # the same precision as ours
    scaler = torch.amp.GradScaler("cuda") if dtype == torch.float16 else None
    net.train()
    start = time.perf_counter()
    for _ in range(steps):
        if len(order) < batch_size:
            order = list(range(len(src)))
            rng.shuffle(order)
        idx, order = order[:batch_size], order[batch_size:]
        b = seq2seq.make_batch([src[i] for i in idx], [tgt[i] for i in idx]).to(device)
        with torch.autocast(device.split(":")[0], dtype=dtype, enabled=dtype is not None):
            logits = net(b.src, b.tgt_in)
            loss = F.cross_entropy(logits.flatten(0, 1).float(), b.tgt_out.flatten(), ignore_index=seq2seq.PAD_ID,
                                   label_smoothing=hp.label_smoothing, reduction="sum") / b.tgt_tokens
        if scaler is not None:
            scaler.scale(loss).backward()
            scaler.step(opt)
            scaler.update()
        else:
            loss.backward()
            opt.step()
        opt.zero_grad()
        sched.step()
        loss.item()  # the usual per-step logging
        real += b.tgt_tokens
        padded += b.tgt_out.numel()
    if device.startswith("cuda"):
        torch.cuda.synchronize()
    elapsed = time.perf_counter() - start
    return {"tokens_per_s": round(real / elapsed, 2), "train_time_s": round(elapsed, 3),
            "padding": round(padded / real, 3)}


def ours_padding(pairs, preset: str, overrides: dict, seed: int) -> float:
    hp = seq2seq.Hyperparameters.from_preset(preset, **overrides)
    src, tgt, _, _ = seq2seq.prepare(pairs, hp)
    batches = seq2seq.batches_of(src, tgt, hp.max_tokens, seed)
    return round(sum(b.tgt_out.numel() for b in batches) / sum(b.tgt_tokens for b in batches), 3)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--pairs", type=int, default=4000, help="training pairs (default 4000)")
    ap.add_argument("--steps", type=int, default=40, help="training steps per side and repeat (default 40)")
    ap.add_argument("--repeats", type=int, default=2, help="alternating runs per side (default 2)")
    ap.add_argument("--preset", default="small", help="seq2seq preset (default small)")
    ap.add_argument("--max-tokens", type=int, default=None, help="override the preset's tokens per batch")
    ap.add_argument("--d-model", type=int, default=None, help="override the preset's model width")
    ap.add_argument("--cognition", type=Path, default=None, help="CoGnition data/ folder: use valid.{en,zh}")
    ap.add_argument("--device", default="cpu", help="cpu (default), cuda or auto")
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()

    device = pick_device(args.device)
    overrides = {k: v for k, v in (("max_tokens", args.max_tokens), ("d_model", args.d_model)) if v is not None}
    pairs = cognition_pairs(args.cognition, args.pairs) if args.cognition else synthetic_pairs(args.pairs, args.seed)
    runs: dict[str, list[dict]] = {"ours": [], "plain": []}
    for _ in range(args.repeats):
        runs["ours"].append(ours(pairs, args.preset, args.steps, device, args.seed, overrides))
        batch_size = max(1, round(runs["ours"][0]["pairs_per_batch"]))
        runs["plain"].append(plain(pairs, args.preset, args.steps, device, args.seed, overrides, batch_size))
    med = {k: statistics.median(r["tokens_per_s"] for r in v) for k, v in runs.items()}
    print(json.dumps({
        "device": device, "threads": torch.get_num_threads(), "preset": args.preset, "overrides": overrides,
        "pairs": len(pairs), "steps": args.steps, "repeats": args.repeats,
        "data": str(args.cognition) if args.cognition else "synthetic",
        "batch_pairs": batch_size, "tokens_per_s": med, "ratio": round(med["ours"] / med["plain"], 3),
        "padding": {"ours": ours_padding(pairs, args.preset, overrides, args.seed),
                    "plain": statistics.median(r["padding"] for r in runs["plain"])},
        "runs": runs,
    }, indent=2))


if __name__ == "__main__":
    main()
