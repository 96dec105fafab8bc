"""Construction stage 4: the paper's compound statistics (Section 5 analysis).

For each compound, against a tokenised reference corpus (one sentence per line,
e.g. CoGnition's train.en, or any lowercased tokenised English text):

* ``frequency``: occurrences of the compound as a contiguous token sequence;
  bucket ``zero-shot`` (0), ``few-shot`` (1..``few_max``, default
  :data:`FEW_SHOT_MAX` = 10) or ``many-shot`` (more): the paper's buckets (Section 6.1:
  "many-shots (frequency higher than 10), fewshots (frequency from 1 to 10) and
  zero-shot"). Before 2026-11 the stage used 5, which is not the paper's definition.
* ``atom_frequency``: occurrences of each atom of the compound (the paper's "frequency
  of candidate atoms", Section 4.3: "from 34 to 73518" on the training set).
* ``length``: number of atoms (2..5: a modifier phrase is one atom).
* ``mean_pmi``: mean over the compound's atom pairs of
  PMI(x, y) = log2( p(x, y) / (p(x) p(y)) ), with p(x) = count(x) / N over the
  N corpus tokens (a multi-word atom counted at its first token) and
  p(x, y) = co-occurrences of x and y within a 5-gram window (both starting
  within ``window`` tokens of each other) / N. Pairs that never co-occur have no
  finite PMI: they are left out of the mean and counted in ``pairs_unseen``;
  ``mean_pmi`` is None when no pair co-occurs.
"""

from __future__ import annotations

import itertools
import math
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence

from benchsmith import progress

from .atoms import Compound

#: the paper's few-shot bucket is 1..10 occurrences (Section 6.1)
FEW_SHOT_MAX = 10


def frequency_bucket(frequency: int, few_max: int = FEW_SHOT_MAX) -> str:
    """``zero-shot`` (0), ``few-shot`` (1..few_max) or ``many-shot`` (more)."""
    return "zero-shot" if frequency == 0 else "few-shot" if frequency <= few_max else "many-shot"


def compound_statistics(compounds: Sequence[Compound], corpus: Iterable[str], window: int = 5,
                        few_max: int = FEW_SHOT_MAX) -> list[dict]:
    atoms = {a.text for c in compounds for a in c.atoms}
    first_words = defaultdict(list)  # first token -> atoms starting with it
    for a in atoms:
        first_words[a.split()[0]].append(a)
    texts = {c.text for c in compounds}
    max_len = max((len(t.split()) for t in texts), default=1)
    unigram: Counter = Counter()
    pair: Counter = Counter()
    freq: Counter = Counter()
    n_tokens = 0
    for line in progress.track(corpus, "counting"):
        toks = line.split()
        n_tokens += len(toks)
        positions: list[tuple[int, str]] = []
        for i, tok in enumerate(toks):
            for a in first_words.get(tok, ()):
                if toks[i:i + len(a.split())] == a.split():
                    positions.append((i, a))
                    unigram[a] += 1
            for n in range(2, max_len + 1):
                seg = " ".join(toks[i:i + n])
                if seg in texts:
                    freq[seg] += 1
        for (i, a), (j, b) in itertools.combinations(positions, 2):
            if a != b and abs(i - j) < window:
                pair[frozenset((a, b))] += 1
    out = []
    for c in compounds:
        pmis, unseen = [], 0
        for x, y in itertools.combinations([a.text for a in c.atoms], 2):
            co = pair[frozenset((x, y))] if x != y else 0
            if co and unigram[x] and unigram[y]:
                pmis.append(math.log2(co * n_tokens / (unigram[x] * unigram[y])))
            else:
                unseen += 1
        f = freq[c.text]
        out.append({
            "compound": c.text, "category": c.category, "pattern": c.pattern, "length": c.length,
            "frequency": f, "bucket": frequency_bucket(f, few_max),
            "atom_frequency": {a.text: unigram[a.text] for a in c.atoms},
            "mean_pmi": round(sum(pmis) / len(pmis), 4) if pmis else None, "pairs_unseen": unseen,
        })
    return out


def summarise(stats: Sequence[dict]) -> dict:
    """Buckets, lengths, mean PMI; ``seen_pct`` (compounds occurring at least once, % of all: the
    paper's "only 0.93% of them appear in the training data") and ``atom_frequency`` (min / max
    over the atoms: the paper's "from 34 to 73518")."""
    buckets = Counter(s["bucket"] for s in stats)
    lengths = Counter(s["length"] for s in stats)
    pmis = [s["mean_pmi"] for s in stats if s["mean_pmi"] is not None]
    seen = sum(1 for s in stats if s["frequency"] > 0)
    atoms = {a: n for s in stats for a, n in s.get("atom_frequency", {}).items()}
    return {"compounds": len(stats), "buckets": dict(sorted(buckets.items())),
            "lengths": {str(k): v for k, v in sorted(lengths.items())},
            "mean_pmi": round(sum(pmis) / len(pmis), 4) if pmis else None, "with_pmi": len(pmis),
            "seen": seen, "seen_pct": round(100 * seen / len(stats), 2) if stats else None,
            "atom_frequency": {"min": min(atoms.values()), "max": max(atoms.values())} if atoms else None}


def corpus_statistics(lines: Iterable[str]) -> dict:
    """The paper's Tables 7 and 8 for one tokenised corpus (tokens = whitespace-separated, as
    released): vocabulary size, tokens, sentences, average sentence length (tokens), average
    token frequency (tokens / vocabulary) and minimum token frequency. The ROC-Filter row is
    CoGnition's English side, all 216,246 sentences (train + validation + random test)."""
    counts: Counter = Counter()
    sents = 0
    for line in progress.track(lines, "counting"):
        counts.update(line.split())
        sents += 1
    tokens = sum(counts.values())
    return {"vocab": len(counts), "tokens": tokens, "sentences": sents,
            "avg_len": round(tokens / sents, 1) if sents else None,
            "avg_freq": round(tokens / len(counts), 1) if counts else None,
            "min_freq": min(counts.values()) if counts else None}


def constituent_shares(trees: Iterable) -> dict:
    """Share of NP, VP and PP among all phrasal constituents of constituency trees (``nltk.Tree``):
    every node above the part-of-speech level counts once (the sentence's ``S`` included; a
    ``ROOT``/``TOP`` wrapper and function tags such as ``NP-SBJ`` are not). The paper: "noun phrases (NP), verb phrases (VP) and positional phrases
    (PP) are three most frequent constituents, accounting for 85.1% of all constituents" (Section
    4.3, Berkeley Parser over the training sentences)."""
    labels: Counter = Counter()

    def walk(node) -> None:
        if isinstance(node, str) or (len(node) == 1 and isinstance(node[0], str)):
            return  # a word or a pre-terminal
        if node.label() not in ("ROOT", "TOP", ""):
            labels[node.label().split("-")[0].split("=")[0]] += 1
        for child in node:
            walk(child)

    for tree in trees:
        walk(tree)
    total = sum(labels.values())
    top3 = labels["NP"] + labels["VP"] + labels["PP"]
    return {"constituents": total, "per_label": dict(labels.most_common()),
            "np_vp_pp": top3, "np_vp_pp_pct": round(100 * top3 / total, 1) if total else None}
