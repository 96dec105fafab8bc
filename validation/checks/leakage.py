"""Leakage checks: the same (or nearly the same) example in two places.

An example's *content* is its ``dedup_fields`` (default: every text field; a
builder narrows it with ``policy.dedup_fields``), joined with a separator,
whitespace-collapsed and case-folded. Ids and labels are not content: the same
premise and options under another id, or with another label, is still a leak.

* ``exact_duplicates``: identical content twice within a split is a warning
  (upstream repeats happen and are worth listing); the same content in two splits
  is a failure (an evaluation item seen in training) when the share of the later
  split that repeats an earlier one exceeds ``policy.exact_duplicate_max_fraction``
  (default 0: any), a warning otherwise (a builder that keeps a known upstream
  overlap declares its size).
* ``near_duplicates``: MinHash LSH (datasketch) over character n-gram shingles
  (``policy.near_duplicate_ngram``, default 5) finds candidate pairs across
  splits in near-linear time, tuned for recall (95% of pairs at the threshold,
  99.4% at +0.05); each candidate's true Jaccard similarity is then computed on
  the shingle sets, so no reported pair is an LSH false positive.
  A pair at or above the threshold (``--near-dup-threshold`` >
  ``policy.near_duplicate_threshold`` > 0.8) is a near duplicate. Any pair
  is a warning; it fails when the share of a later split's examples that have a
  near duplicate in an earlier split exceeds ``policy.near_duplicate_max_fraction``
  (default 0.05). Splits are ordered as the config declares them (train first).

Splits listed in ``policy.leakage_exempt_splits`` (e.g. ComVE's ``trial``,
which upstream drew from the training data and which is not held out) are left out
of cross-split comparisons; the report names them.
"""

from __future__ import annotations

import re
import zlib
from collections import defaultdict
from typing import Any

from benchsmith.validation.check import Check, CheckResult, Status, register_check
from benchsmith.validation.dataview import ConfigView, configs
from datasketch import MinHash, MinHashLSH

from benchsmith import progress

_SHOW = 10
_WS = re.compile(r"\s+")
DEFAULT_THRESHOLD = 0.8
DEFAULT_MAX_FRACTION = 0.05
DEFAULT_NGRAM = 5
DEFAULT_NUM_PERM = 128
LSH_MAX_THRESHOLD = 0.9
#: (false-positive, false-negative) weights for datasketch's choice of bands. The
#: default (0.5, 0.5) finds only 40% of pairs *at* a 0.8 threshold (b=9, r=13); a
#: missed leak is what matters and false positives are verified away, so we buy
#: recall: b=16, r=8 finds 95% at 0.8, 99.4% at 0.85, ~100% from 0.9.
LSH_WEIGHTS = (0.05, 0.95)


def content(view: ConfigView, split: str) -> list[str]:
    """Normalised content strings of a split (see module docstring)."""
    cols = [view.texts(split, f) for f in view.dedup_fields]
    if not cols:
        return [""] * view.num_rows(split)
    return [_WS.sub(" ", " \u241f ".join(row)).strip().casefold() for row in zip(*cols)]


def compared_splits(view: ConfigView) -> tuple[list[str], list[str]]:
    """(splits compared for leakage, splits exempted by the policy)."""
    exempt = [s for s in view.policy.leakage_exempt_splits if s in view.splits]
    return [s for s in view.splits if s not in exempt], exempt


def _snippet(text: str, n: int = 90) -> str:
    return text if len(text) <= n else text[: n - 1] + "\u2026"


@register_check
class ExactDuplicateCheck(Check):
    name = "exact_duplicates"
    family = "leakage"

    def run(self, release: Any) -> list[CheckResult]:
        return [self._config(view) for view in configs(release)]

    def _config(self, view: ConfigView) -> CheckResult:
        if not view.dedup_fields:
            return self.result(Status.SKIP, "no text fields to compare", config=view.config)
        compared, exempt = compared_splits(view)
        max_fraction = float(view.setting("exact_duplicate_max_fraction", 0.0))
        seen: dict[str, tuple[str, Any]] = {}  # content -> first (split, id)
        within: dict[str, list[list[Any]]] = defaultdict(list)
        across: list[dict[str, Any]] = []
        groups: dict[tuple[str, str], list[Any]] = defaultdict(list)
        for split in view.splits:
            for text, ident in zip(content(view, split), view.ids(split)):
                groups[(split, text)].append(ident)
                if split not in compared:
                    continue
                first = seen.get(text)
                if first is None:
                    seen[text] = (split, ident)
                elif first[0] != split and len(groups[(split, text)]) == 1:
                    across.append({"splits": [first[0], split], "ids": [first[1], ident], "text": _snippet(text)})
        for (split, _text), ids in groups.items():
            if len(ids) > 1:
                within[split].append(ids)
        per_split: dict[str, int] = defaultdict(int)
        for a in across:
            per_split[a["splits"][1]] += 1
        fractions = {s: n / max(view.num_rows(s), 1) for s, n in per_split.items()}
        metrics = {
            "within_split_groups": sum(len(v) for v in within.values()),
            "across_split_pairs": len(across),
            **{f"fraction/{s}": round(f, 5) for s, f in fractions.items()},
        }
        details = {
            "fields": view.dedup_fields,
            "exempt_splits": exempt,
            "max_fraction": max_fraction,
            "repeating_earlier_splits": dict(per_split),
            "within": {s: v[:_SHOW] for s, v in within.items()},
            "across": across[:_SHOW],
        }
        if across:
            a = across[0]
            worst = max(fractions.values())
            status = Status.FAIL if worst > max_fraction else Status.WARN
            summary = (
                f"{len(across)} example(s) of a later split repeat an earlier split "
                f"({', '.join(f'{s} {n} = {fractions[s]:.1%}' for s, n in per_split.items())}; max "
                f"{max_fraction:.1%}; e.g. {a['ids'][1]!r} in {a['splits'][1]} = {a['ids'][0]!r} in {a['splits'][0]})"
            )
        elif within:
            status = Status.WARN
            s, groups_ = next(iter(within.items()))
            summary = f"{metrics['within_split_groups']} group(s) of identical examples within a split (e.g. {groups_[0]} in {s})"
        else:
            status = Status.PASS
            summary = f"no exact duplicates over {', '.join(view.dedup_fields)}"
        if exempt:
            summary += f" ({', '.join(exempt)} exempt from cross-split comparison)"
        return self.result(status, summary, config=view.config, metrics=metrics, details=details)


def shingles(text: str, n: int) -> set[str]:
    """Character n-grams of a normalised string (the whole string when shorter)."""
    if len(text) <= n:
        return {text}
    return {text[i : i + n] for i in range(len(text) - n + 1)}


@register_check
class NearDuplicateCheck(Check):
    name = "near_duplicates"
    family = "leakage"

    def __init__(self, threshold: float | None = None, num_perm: int = DEFAULT_NUM_PERM) -> None:
        self.threshold = threshold
        self.num_perm = num_perm

    def run(self, release: Any) -> list[CheckResult]:
        out = []
        for view in configs(release):
            if len(compared_splits(view)[0]) < 2 or not view.dedup_fields:
                out.append(self.result(Status.SKIP, "fewer than two splits or no text fields", config=view.config))
                continue
            out.append(self._config(view))
        return out

    def _config(self, view: ConfigView) -> CheckResult:
        threshold = float(self.threshold if self.threshold is not None else view.setting(
            "near_duplicate_threshold", DEFAULT_THRESHOLD))
        max_fraction = float(view.setting("near_duplicate_max_fraction", DEFAULT_MAX_FRACTION))
        n = int(view.setting("near_duplicate_ngram", DEFAULT_NGRAM))
        # datasketch cannot band for thresholds near 1; a lower LSH threshold only adds
        # candidates, and every candidate is verified on its exact Jaccard below
        lsh = MinHashLSH(threshold=min(threshold, LSH_MAX_THRESHOLD), num_perm=self.num_perm, weights=LSH_WEIGHTS)
        sets: dict[tuple[int, int], set[str]] = {}
        texts: dict[tuple[int, int], str] = {}
        splits, exempt = compared_splits(view)
        ids = {i: view.ids(s) for i, s in enumerate(splits)}
        hashes: dict[tuple[int, int], MinHash] = {}
        for si, split in enumerate(splits):
            rows = content(view, split)
            split_sets = [shingles(t, n) for t in rows]
            mhs = MinHash.bulk(
                ([s.encode("utf-8") for s in ss] for ss in split_sets), num_perm=self.num_perm, seed=1,
                hashfunc=zlib.crc32,  # C-speed and stable across runs; datasketch permutes it num_perm ways
            )
            with lsh.insertion_session() as session:
                for ri, (t, ss, mh) in enumerate(
                    progress.track(zip(rows, split_sets, mhs), f"minhash {view.config}/{split}", total=len(rows))
                ):
                    key = (si, ri)
                    sets[key], texts[key], hashes[key] = ss, t, mh
                    session.insert(key, mh, check_duplication=False)
        pairs: list[dict[str, Any]] = []
        contaminated: dict[tuple[int, int], set[int]] = defaultdict(set)  # (earlier, later) -> later rows
        for key, mh in hashes.items():
            si, ri = key
            for other in lsh.query(mh):
                oi, orow = other
                if oi >= si:  # each cross-split pair once: the later split queries the earlier
                    continue
                a, b = sets[other], sets[key]
                jac = len(a & b) / len(a | b)
                if jac < threshold:
                    continue
                contaminated[(oi, si)].add(ri)
                pairs.append(
                    {
                        "splits": [splits[oi], splits[si]],
                        "ids": [ids[oi][orow], ids[si][ri]],
                        "jaccard": round(jac, 4),
                        "texts": [_snippet(texts[other]), _snippet(texts[key])],
                    }
                )
        pairs.sort(key=lambda p: (-p["jaccard"], str(p["ids"])))
        fractions = {
            f"{splits[a]}->{splits[b]}": len(rows) / max(view.num_rows(splits[b]), 1)
            for (a, b), rows in sorted(contaminated.items())
        }
        metrics = {"pairs": len(pairs), "threshold": threshold, **{f"fraction/{k}": round(v, 5) for k, v in fractions.items()}}
        details = {
            "threshold": threshold,
            "ngram": n,
            "num_perm": self.num_perm,
            "max_fraction": max_fraction,
            "exempt_splits": exempt,
            "fractions": fractions,
            "pairs": pairs[:_SHOW],
        }
        if not pairs:
            return self.result(
                Status.PASS,
                f"no near duplicates across splits at Jaccard >= {threshold}"
                + (f" ({', '.join(exempt)} exempt)" if exempt else ""),
                config=view.config,
                metrics=metrics,
                details=details,
            )
        worst, frac = max(fractions.items(), key=lambda kv: kv[1])
        status = Status.FAIL if frac > max_fraction else Status.WARN
        p = pairs[0]
        return self.result(
            status,
            f"{len(pairs)} near-duplicate pair(s) at Jaccard >= {threshold}; {frac:.1%} of {worst.split('->')[1]} "
            f"has one in {worst.split('->')[0]} (max {max_fraction:.0%}); e.g. {p['ids'][1]!r} ~ {p['ids'][0]!r} "
            f"({p['jaccard']})",
            config=view.config,
            metrics=metrics,
            details=details,
        )
