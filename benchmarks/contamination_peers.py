"""benchsmith's contamination scan beside lm-eval's and datatrove's n-gram decontamination.

One corpus, one set of items, each tool with its own semantics, each in a fresh subprocess
(CPU seconds and peak RSS from ``os.wait4``; the child also reports its scan time alone):

* ``ours``: ``benchsmith contamination`` (scan.source_parts + build_index + run, one
  process): every field of every XCOPA item alone, word 13-grams, fields of 5-12 words whole;
  ``ours-near`` adds ``--near-dup 0.7``.
* ``lm-eval``: ``lm_eval.decontamination.janitor``: the 13-grams of each item's
  decontamination query (premise and choices joined, as benchsmith's lm-eval tasks declare),
  ``Janitor.normalize_string`` (ASCII lower-casing, punctuation deleted) and ``word_ngrams``,
  a set lookup per corpus line (its C++ helper is not built: the Python mode).
* ``datatrove``: ``NGramsDecontFilter`` over ``Document`` s, its index written as
  ``NGramsDecontIndexer.compute_hashes`` computes it (12-grams of the gold answer and of the
  query/answer overlap; the indexer's ``run`` needs lighteval's task registry, so the hashes
  are computed with its own code and written in its file format). Its default xxhash
  config fails on xxhash 4 (``Strings must be encoded``): run with ``hash_fc="sha1"``.

The corpus: lines of 5-20 words drawn half from XCOPA's English vocabulary, half made up,
and 50 planted items of the English test split: 20 exact (the item's query inside a line),
20 variants (upper case, punctuation changed), 10 near duplicates (the premise alone on a
line with one word's last letter dropped). Recall is per planted line.

    python benchmarks/contamination_peers.py [--mb 10] [--sides ours ours-near lm-eval datatrove]
        [--release DIR] [--workdir DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve()
sys.path.insert(0, str(HERE.parent))

from contamination_scaling import ensure_release


def items(release: str) -> list[dict]:
    """Every item of every config and split of the release: premise, choices, label."""
    from benchsmith.release import Release
    from benchsmith.validation.dataview import configs

    out = []
    for view in configs(Release(release)):
        for split in view.splits:
            for batch in view.batches(split, ["id", "premise", "choice1", "choice2", "label"]):
                for row in batch.to_pylist():
                    out.append({"config": view.config, "split": split, **row})
    return out


def make_corpus(path: Path, mb: int, release: str) -> list[int]:
    """Write the corpus; return the planted lines (1-based) in order."""
    from benchsmith.validation.contamination.ngrams import normalise

    rng = random.Random(42)
    every = items(release)
    en = [it for it in every if it["config"] == "en"]
    vocab = sorted({w for it in en for f in ("premise", "choice1", "choice2") for w in normalise(it[f])})
    words = [rng.choice(vocab) for _ in range(4000)] + [f"zq{i}x" for i in range(4000)]
    chosen = rng.sample([it for it in en if it["split"] == "test" and len(normalise(it["premise"])) >= 5], 50)
    target = mb * 1_000_000
    n_lines = target // 75
    planted_at = sorted(rng.sample(range(100, n_lines), 50))
    kinds = ["exact"] * 20 + ["variant"] * 20 + ["near"] * 10
    planted = dict(zip(planted_at, zip(chosen, kinds)))
    with open(path, "w", encoding="utf-8") as f:
        for i in range(n_lines):
            if i in planted:
                it, kind = planted[i]
                query = f"{it['premise']} {it['choice1']} {it['choice2']}"
                if kind == "exact":
                    f.write(f"and so {query} then\n")
                elif kind == "variant":
                    f.write(f"AND SO {query.upper().replace('.', '!!').replace(' ', ', ', 1)} THEN\n")
                else:
                    ws = it["premise"].split()
                    j = rng.randrange(len(ws))
                    ws[j] = ws[j][:-1] if len(ws[j]) > 2 else ws[j]
                    f.write(" ".join(ws) + "\n")
            else:
                f.write(" ".join(rng.choice(words) for _ in range(rng.randint(5, 20))) + ".\n")
    return [i + 1 for i in planted_at]


# --------------------------------------------------------------------------- the sides (children)


def run_ours(release: str, corpus: str, near: float | None) -> dict:
    from benchsmith.release import Release
    from benchsmith.validation.contamination import scan

    parts, _ = scan.source_parts([corpus])
    index = scan.build_index(Release(release), near=near)
    c0 = time.process_time()
    _, locations, lines, _, _ = scan.run(index, parts, workers=1)
    scan_cpu = time.process_time() - c0
    found = sorted({loc["line"] for locs in locations.values() for loc in locs})
    return {"scan_cpu_s": scan_cpu, "lines": lines, "flagged": found}


def run_lm_eval(release: str, corpus: str) -> dict:
    from lm_eval.decontamination.janitor import Janitor, word_ngrams

    janitor = Janitor(ngram_n=13)
    dirt = set()
    for it in items(release):
        query = f"{it['premise']} {it['choice1']} {it['choice2']}"
        dirt.update(word_ngrams(janitor.normalize_string(query), 13))
    c0 = time.process_time()
    flagged = []
    lines = 0
    with open(corpus, encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            lines += 1
            if any(g in dirt for g in word_ngrams(janitor.normalize_string(line), 13)):
                flagged.append(number)
    return {"scan_cpu_s": time.process_time() - c0, "lines": lines, "flagged": flagged}


def run_datatrove(release: str, corpus: str) -> dict:
    import types

    import numpy as np
    from datatrove.data import Document
    from datatrove.pipeline.decont.n_grams import NGramsDecontConfig, NGramsDecontFilter, NGramsDecontIndexer
    from datatrove.utils.hashing import HashConfig, create_hash_func
    from datatrove.utils.word_tokenizers import load_word_tokenizer

    config = NGramsDecontConfig(hash_config=HashConfig(hash_fc="sha1"))
    # NGramsDecontIndexer.compute_hashes with the state it reads (its constructor needs lighteval)
    state = types.SimpleNamespace(config=config, tokenizer=load_word_tokenizer("en"),
                                  hash_func=create_hash_func(config.hash_config))
    hashes = set()
    for it in items(release):
        gold = it["choice1"] if it["label"] == 0 else it["choice2"]
        hashes.update(NGramsDecontIndexer.compute_hashes(state, gold, it["premise"]))
    folder = tempfile.mkdtemp(prefix="dt-index-")
    np.array(sorted(hashes), dtype=config.hash_config.np_descr).tofile(os.path.join(folder, "xcopa.index.hashes"))
    filt = NGramsDecontFilter(index_folder=folder, config=config)
    c0 = time.process_time()
    flagged = []
    lines = 0
    with open(corpus, encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            lines += 1
            if filt.filter(Document(text=line, id=str(number))) is not True:
                flagged.append(number)
    return {"scan_cpu_s": time.process_time() - c0, "lines": lines, "flagged": flagged}


def child(side: str, release: str, corpus: str) -> None:
    got = {"ours": lambda: run_ours(release, corpus, None), "ours-near": lambda: run_ours(release, corpus, 0.7),
           "lm-eval": lambda: run_lm_eval(release, corpus), "datatrove": lambda: run_datatrove(release, corpus)}[side]()
    print(json.dumps(got))


def run_child(side: str, release: str, corpus: str) -> dict:
    start = time.perf_counter()
    proc = subprocess.Popen([sys.executable, str(HERE), "--child", side, release, corpus], stdout=subprocess.PIPE,
                            cwd=tempfile.gettempdir())
    out = proc.stdout.read().decode() if proc.stdout else ""
    _, status, usage = os.wait4(proc.pid, 0)
    if status != 0:
        raise SystemExit(f"{side} failed: {status}")
    got = json.loads(out.strip().splitlines()[-1])
    return {**got, "wall_s": time.perf_counter() - start, "cpu_s": usage.ru_utime + usage.ru_stime,
            "peak_rss_mb": usage.ru_maxrss / 1024}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--child", nargs=3)
    ap.add_argument("--mb", type=int, default=10)
    ap.add_argument("--release")
    ap.add_argument("--workdir", type=Path)
    ap.add_argument("--sides", nargs="+", default=["ours", "ours-near", "lm-eval", "datatrove"])
    a = ap.parse_args()
    if a.child:
        child(*a.child)
        return
    workdir = a.workdir or Path(tempfile.mkdtemp(prefix="contam-peers-"))
    workdir.mkdir(parents=True, exist_ok=True)
    release = a.release or ensure_release(workdir)
    corpus = workdir / f"peers-{a.mb}mb.txt"
    planted_file = workdir / f"peers-{a.mb}mb.planted.json"
    if not corpus.is_file() or not planted_file.is_file():
        planted_file.write_text(json.dumps(make_corpus(corpus, a.mb, release)))
    planted = json.loads(planted_file.read_text())
    kinds = ["exact"] * 20 + ["variant"] * 20 + ["near"] * 10
    mb = corpus.stat().st_size / 1e6
    out: dict = {"corpus_mb": round(mb, 1), "planted": len(planted), "sides": {}}
    for side in a.sides:
        r = run_child(side, release, str(corpus))
        flagged = set(r["flagged"])
        recall = {k: sum(1 for line, kind in zip(planted, kinds) if kind == k and line in flagged)
                  for k in ("exact", "variant", "near")}
        out["sides"][side] = {"scan_cpu_s": round(r["scan_cpu_s"], 2), "cpu_s": round(r["cpu_s"], 2),
                              "mb_per_cpu_s_scan": round(mb / r["scan_cpu_s"], 2), "peak_rss_mb": round(r["peak_rss_mb"]),
                              "found": recall, "other_lines_flagged": len(flagged - set(planted)), "lines": r["lines"]}
        print(side, json.dumps(out["sides"][side]), file=sys.stderr)
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
