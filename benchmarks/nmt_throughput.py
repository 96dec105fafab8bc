"""Training throughput of CoGnition's NMT baseline: the library version against the hand-written one.

* ``new``: :func:`benchsmith.builders.cognition.seq2seq.train` as it is in this checkout
  (``MarianMTModel`` from scratch, ``Seq2SeqTrainer``);
* ``old``: the same function at git revision ``--old-rev`` (default ``eddf48a``, the last commit with
  the hand-written Transformer, KV cache and training loop): its ``seq2seq.py`` and ``subword.py``
  are read with ``git show`` into a temporary package and imported from there.

Each side runs in its own fresh process (each registers an engine named ``nmt``), the sides
alternating ``--repeats`` times, on the same pairs with the same preset, seed, token batches
(``max_tokens``), optimiser settings and number of steps, no validation (no evaluation), fp32
on CPU and bf16 autocast on CUDA on both sides. Throughput is each record's ``tokens_per_s``:
target tokens (with ``</s>``) per second of training steps (data preparation, model
construction and imports excluded on both sides). ``ratio`` = new / old, medians of the
repeats; the issue's rule is ratio >= 0.9, else the hand-written part stays. Data: synthetic
English-Chinese pairs (fixed word lists, 4-20 words) unless ``--cognition DIR`` names
CoGnition's ``data/`` folder (its ``valid.{en,zh}``). Prints one JSON object.

On a shared CPU machine set ``OMP_WAIT_POLICY=PASSIVE``: spinning OpenMP threads on
oversubscribed cores slow both sides several-fold.

    python benchmarks/nmt_throughput.py [--pairs 4000] [--steps 40] [--repeats 2] [--preset small] [--device cpu]
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OLD_REV = "eddf48a"
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


def old_package(rev: str, into: Path) -> Path:
    """``seq2seq.py`` and ``subword.py`` at ``rev`` as package ``nmt_old`` under ``into``."""
    pkg = into / "nmt_old"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    for name in ("seq2seq.py", "subword.py"):
        text = subprocess.run(["git", "-C", str(ROOT), "show", f"{rev}:builders/cognition/{name}"], check=True,
                              capture_output=True, text=True).stdout
        (pkg / name).write_text(text, encoding="utf-8")
    return into


def side(args: argparse.Namespace) -> None:
    """One run in this process: train, print the record's figures."""
    import resource

    import torch

    if args.side == "old":
        sys.path.insert(0, args.old_dir)
        from nmt_old import seq2seq  # type: ignore[import-not-found]
    else:
        from benchsmith.builders.cognition import seq2seq
    pairs = cognition_pairs(args.cognition, args.pairs) if args.cognition else synthetic_pairs(args.pairs, args.seed)
    overrides = {k: v for k, v in (("max_tokens", args.max_tokens), ("d_model", args.d_model)) if v is not None}
    cpu0 = resource.getrusage(resource.RUSAGE_SELF).ru_utime
    m = seq2seq.train(pairs, [], args.preset, seed=args.seed, device=args.device, max_steps=args.steps,
                      eval_every=args.steps + 1, log_every=args.steps + 1, **overrides)
    hp = m.record.hyperparameters
    print(json.dumps({"tokens_per_s": m.record.tokens_per_s, "train_time_s": hp["train_time_s"],
                      "steps": m.record.steps, "parameters": hp["parameters"], "threads": torch.get_num_threads(),
                      "cpu_s": round(resource.getrusage(resource.RUSAGE_SELF).ru_utime - cpu0, 2),
                      "last_loss": m.history[-1]["train_loss"] if m.history else None}))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--pairs", type=int, default=4000, help="training pairs (default 4000)")
    ap.add_argument("--steps", type=int, default=40, help="training steps per side and repeat (default 40)")
    ap.add_argument("--repeats", type=int, default=2, help="alternating runs per side (default 2)")
    ap.add_argument("--preset", default="small", help="seq2seq preset (default small)")
    ap.add_argument("--max-tokens", type=int, default=None, help="override the preset's tokens per batch")
    ap.add_argument("--d-model", type=int, default=None, help="override the preset's model width")
    ap.add_argument("--cognition", type=Path, default=None, help="CoGnition data/ folder: use valid.{en,zh}")
    ap.add_argument("--device", default="cpu", help="cpu (default) or cuda")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--old-rev", default=OLD_REV, help=f"git revision of the hand-written version (default {OLD_REV})")
    ap.add_argument("--side", choices=("old", "new"), help=argparse.SUPPRESS)
    ap.add_argument("--old-dir", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.side:
        return side(args)

    runs: dict[str, list[dict]] = {"old": [], "new": []}
    with tempfile.TemporaryDirectory(prefix="nmt-old-") as tmp:
        old_dir = old_package(args.old_rev, Path(tmp))
        passed = [a for a in sys.argv[1:]]
        for _ in range(args.repeats):
            for name in ("old", "new"):
                out = subprocess.run([sys.executable, __file__, *passed, "--side", name, "--old-dir", str(old_dir)],
                                     check=True, capture_output=True, text=True).stdout
                runs[name].append(json.loads(out.strip().splitlines()[-1]))
    med = {k: statistics.median(r["tokens_per_s"] for r in v) for k, v in runs.items()}
    print(json.dumps({
        "device": args.device, "preset": args.preset, "pairs": args.pairs, "steps": args.steps,
        "repeats": args.repeats, "old_rev": args.old_rev,
        "data": str(args.cognition) if args.cognition else "synthetic",
        "tokens_per_s": med, "ratio": round(med["new"] / med["old"], 3), "runs": runs,
    }, indent=2))


if __name__ == "__main__":
    main()
