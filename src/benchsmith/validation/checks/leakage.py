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
* ``near_duplicates``: MinHash LSH over character n-gram shingles
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

How it scales (``benchmarks/validate_scaling.py``): both checks stream each split in
record batches and keep a few bytes per row, never the contents.

* Exact duplicates keep one 64-bit hash per row; only rows whose hash occurs twice are
  read again, and grouped on their exact content (a hash collision never merges two
  contents), so the result is the same as grouping every content string.
* Near duplicates keep only each row's 16 LSH band keys (8 bytes each), not its
  shingle set or MinHash. Signatures are datasketch's ``affine32`` MinHash
  (``MinHash(num_perm=128, seed=1).permutations``, the murmur3 pre-mix included),
  computed for a whole batch at once in numpy over a 64-bit polynomial hash of each
  shingle's code points (:func:`shingle_hash`); datasketch's per-set API cost ~90 us a
  row. Bands and rows are datasketch's optimum for the threshold and
  :data:`LSH_WEIGHTS`. Each split is queried only against the earlier compared splits
  (a training row never queries), by sorting band keys; the shingle sets of the
  candidate rows alone are then recomputed from the data to take the exact Jaccard.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator
from functools import lru_cache
from typing import TYPE_CHECKING, Any

import numpy as np

from benchsmith import progress
from benchsmith.validation.check import Check, CheckResult, Status, register_check
from benchsmith.validation.dataview import STORE, ConfigView, as_text, configs, gather_ranges, sorted_unique

if TYPE_CHECKING:
    from benchsmith.release import Release

_SHOW = 10
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
#: MinHash values computed per numpy call (num_perm x this many uint32: 2 MB, so the products
#: stay in the CPU cache between the multiply, the add and the minimum; 32 MB chunks took 2.7x
#: as long on 1.1 M shingles). The same signatures at any size.
_CHUNK_SHINGLES = 1 << 12
#: texts whose shingles are hashed per numpy pass (a few MB of per-shingle arrays)
_SIGNATURE_ROWS = 8_192
#: candidate pairs verified per pass over the data (bounds the shingle sets in memory)
_VERIFY_PAIRS = 50_000

#: hashes exact-duplicate candidates (a name of its own so a test can force collisions)
_content_hash = hash
_MASK64 = (1 << 64) - 1
_POLY = 0x100000001B3  # FNV-64 prime: odd, so the polynomial hash mixes every code point
_PAD = 0x110001  # past the last code point (+1): pads a content shorter than n
_SEP = " \u241f "


def _normalise(row: tuple[str, ...]) -> str:
    # " ".join(split()) is re.sub(r"\s+", " ", .).strip(): both split on str.isspace
    return " ".join(_SEP.join(row).split()).casefold()


class Contents:
    """A split's normalised content strings as :func:`content_batches` yields them (its batches),
    kept in :data:`~benchsmith.validation.dataview.STORE` for the other check of the group."""

    def __init__(self, batches: list[list[str]], nbytes: int) -> None:
        self.batches, self.nbytes = batches, nbytes
        self.texts = [t for b in batches for t in b]


#: a split's content is kept for the other duplicates check (``Check.group``) only up to this many
#: bytes (characters + :data:`_CONTENT_ENTRY_BYTES` a row): ComVE's largest split holds ~4 MB; a
#: split past it is streamed and normalised again, as every split was before (bounded memory)
CONTENT_MEMO_BYTES = 128 << 20
_CONTENT_ENTRY_BYTES = 80


def _content_key(view: ConfigView, split: str) -> tuple:
    return ("content", *view.content_key(split), tuple(view.dedup_fields))


def content_batches(view: ConfigView, split: str) -> Iterator[list[str]]:
    """Normalised content strings of a split, one list per record batch (see module docstring).

    ``exact_duplicates`` and ``near_duplicates`` both read every split's content; they are one
    ``Check.group``, so the second reads what the first kept (:class:`Contents`, up to
    :data:`CONTENT_MEMO_BYTES` a split), the same strings in the same batches."""
    key = _content_key(view, split)
    kept = STORE.peek(key)
    if kept is not None:
        yield from kept.batches
        return
    batches: list[list[str]] | None = []
    size, rows, total = 0, 0, view.num_rows(split)
    for batch in _normalised_batches(view, split):
        if batches is not None:
            size += sum(map(len, batch)) + _CONTENT_ENTRY_BYTES * len(batch)
            rows += len(batch)
            if size <= CONTENT_MEMO_BYTES:
                batches.append(batch)
                if rows == total:  # kept before the last batch is handed out: a reader may stop there
                    STORE.get(key, lambda kept=batches, n=size: Contents(kept, n))
            else:
                batches = None
        yield batch


def _normalised_batches(view: ConfigView, split: str) -> Iterator[list[str]]:
    fields = view.dedup_fields
    if not fields:
        n = view.num_rows(split)
        for start in range(0, n, 65_536):
            yield [""] * min(65_536, n - start)
        return
    for batch in view.batches(split, fields):
        cols = [[as_text(v) for v in batch.column(f).to_pylist()] for f in fields]
        yield list(map(_normalise, zip(*cols)))


def content(view: ConfigView, split: str) -> list[str]:
    """Normalised content strings of a split (see module docstring)."""
    return [t for batch in content_batches(view, split) for t in batch]


def content_of(view: ConfigView, split: str, rows: np.ndarray) -> list[str]:
    """Normalised content of some rows, in the given order (one streamed pass, or the kept content)."""
    fields = view.dedup_fields
    if not fields:
        return [""] * len(rows)
    kept = STORE.peek(_content_key(view, split))
    if kept is not None:
        return [kept.texts[r] for r in np.asarray(rows, dtype=np.int64).tolist()]
    got = view.take(split, fields, rows)
    cols = [[as_text(v) for v in got[f]] for f in fields]
    return list(map(_normalise, zip(*cols)))


def compared_splits(view: ConfigView) -> tuple[list[str], list[str]]:
    """(splits compared for leakage, splits exempted by the policy)."""
    exempt = [s for s in view.policy.leakage_exempt_splits if s in view.splits]
    return [s for s in view.splits if s not in exempt], exempt


def _snippet(text: str, n: int = 90) -> str:
    return text if len(text) <= n else text[: n - 1] + "\u2026"


@register_check
class ExactDuplicateCheck(Check):
    name = "exact_duplicates"
    cacheable = True  # reads the release's data only (validation/result_cache.py)
    portable = True  # either process may run it (validation/runner.py), with near_duplicates:
    group = "content"  # they share each split's normalised content (content_batches)
    cost = 0.45  # CPU s on ComVE, roughly
    family = "leakage"
    topic = "identical examples within or across splits"
    why = ("a test item also in train is memorised, not solved; a repeat within a split weighs one "
        "item twice")
    todo = ("drop or merge them with an erratum in errata.tsv (name the upstream ids); when upstream "
        "repeats them by design, acknowledge it in acknowledged.yaml (the policy's "
        "exact_duplicate_max_fraction sets when it fails)")

    def run(self, release: Release) -> list[CheckResult]:
        return [self._config(view) for view in configs(release)]

    @staticmethod
    def _repeated_rows(view: ConfigView) -> dict[str, np.ndarray]:
        """Per split, the rows whose content hash occurs more than once in the config
        (every row that can be a duplicate, and a few hash collisions)."""
        hashes = {s: np.fromiter((h for b in content_batches(view, s) for h in map(_content_hash, b)),
                                 dtype=np.int64, count=view.num_rows(s)) for s in view.splits}
        pooled = np.concatenate(list(hashes.values())) if hashes else np.zeros(0, dtype=np.int64)
        values, counts = np.unique(pooled, return_counts=True)
        repeated = values[counts > 1]
        return {s: np.flatnonzero(np.isin(h, repeated)) for s, h in hashes.items()}

    def _config(self, view: ConfigView) -> CheckResult:
        if not view.dedup_fields:
            return self.result(Status.SKIP, "no text fields to compare", config=view.config)
        compared, exempt = compared_splits(view)
        max_fraction = float(view.setting("exact_duplicate_max_fraction", 0.0))
        seen: dict[str, tuple[str, Any]] = {}  # content -> first (split, id)
        within: dict[str, list[list[Any]]] = defaultdict(list)
        across: list[dict[str, Any]] = []
        groups: dict[tuple[str, str], list[Any]] = defaultdict(list)
        # Only rows sharing a hash can repeat; the others would each open a group of one and
        # change nothing below, so the loop over them (in split and row order) is skipped.
        for split, rows in self._repeated_rows(view).items():
            if not len(rows):
                continue
            for text, ident in zip(content_of(view, split, rows), view.ids_of(split, rows)):
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


# ----------------------------------------------------------------------------- near duplicates


def shingles(text: str, n: int) -> set[str]:
    """Character n-grams of a normalised string (the whole string when shorter)."""
    if len(text) <= n:
        return {text}
    return {text[i : i + n] for i in range(len(text) - n + 1)}


def shingle_hash(shingle: str, n: int) -> int:
    """The 32-bit hash a shingle enters MinHash with (a scalar reference of the batched
    computation in :func:`signatures`): a polynomial hash mod 2^64 of its code points
    (+1, padded to ``n`` with a value past the last code point), high half xor low half."""
    h = 0
    for c in shingle:
        h = (h * _POLY + ord(c) + 1) & _MASK64
    for _ in range(n - len(shingle)):
        h = (h * _POLY + _PAD) & _MASK64
    return (h >> 32) ^ (h & 0xFFFFFFFF)


@lru_cache(maxsize=8)
def _permutations(num_perm: int) -> tuple[np.ndarray, np.ndarray]:
    """``datasketch.MinHash(num_perm, seed=1).permutations`` (its affine32 scheme) as uint32 arrays."""
    from datasketch import MinHash

    a, b = MinHash(num_perm=num_perm, seed=1).permutations
    return np.ascontiguousarray(a, dtype=np.uint32), np.ascontiguousarray(b, dtype=np.uint32)


@lru_cache(maxsize=16)
def lsh_bands(threshold: float, num_perm: int) -> tuple[int, int]:
    """(bands, rows per band): datasketch's optimum for the threshold and :data:`LSH_WEIGHTS`."""
    # datasketch cannot band for thresholds near 1; a lower LSH threshold only adds
    # candidates, and every candidate is verified on its exact Jaccard
    threshold = min(threshold, LSH_MAX_THRESHOLD)
    from datasketch import MinHashLSH

    lsh = MinHashLSH(threshold=threshold, num_perm=num_perm, weights=LSH_WEIGHTS)
    return lsh.b, lsh.r


def _fmix32(h: np.ndarray) -> np.ndarray:
    """MurmurHash3's 32-bit finalizer, as datasketch's affine32 scheme pre-mixes its input."""
    h = h ^ (h >> np.uint32(16))
    h = h * np.uint32(0x85EBCA6B)
    h = h ^ (h >> np.uint32(13))
    h = h * np.uint32(0xC2B2AE35)
    return h ^ (h >> np.uint32(16))


def _shingle_hashes(texts: list[str], n: int) -> tuple[np.ndarray, np.ndarray]:
    """(32-bit shingle hashes of every text in order, start of each text's run): each
    text's shingles as :func:`shingles` cuts them, hashed as :func:`shingle_hash` does."""
    lens = np.fromiter(map(len, texts), dtype=np.int64, count=len(texts))
    cps = np.frombuffer("".join(texts).encode("utf-32-le", "surrogatepass"), dtype=np.uint32).astype(np.uint64) + 1
    windows = np.maximum(lens - n + 1, 1)
    run = np.cumsum(windows) - windows
    long_ = lens >= n
    m = max(len(cps) - n + 1, 0)
    with np.errstate(over="ignore"):
        rolling = cps[:m].copy()
        for k in range(1, n):
            rolling *= np.uint64(_POLY)
            rolling += cps[k : k + m]
    # a window is a shingle when it lies inside one text: drop the n - 1 that start in a
    # text's last n - 1 characters (they run into the next text)
    valid = np.ones(m, dtype=bool)
    ends = np.cumsum(lens)
    tail = gather_ranges(np.maximum(ends - n + 1, ends - lens), np.minimum(lens, n - 1))
    valid[tail[tail < m]] = False
    if long_.all():
        h64 = rolling[valid]
    else:
        h64 = np.empty(int(windows.sum()), dtype=np.uint64)
        h64[gather_ranges(run[long_], windows[long_])] = rolling[valid]
    h32 = ((h64 >> np.uint64(32)) ^ (h64 & np.uint64(0xFFFFFFFF))).astype(np.uint32)
    for r in np.flatnonzero(~long_):  # shorter than n: the whole text is the one shingle
        h32[run[r]] = shingle_hash(texts[r], n)
    return h32, run


def signatures(texts: list[str], n: int, num_perm: int = DEFAULT_NUM_PERM) -> np.ndarray:
    """MinHash signatures (uint32, ``len(texts) x num_perm``) of the texts' shingle sets:
    the values ``datasketch.MinHash(num_perm, seed=1, hashfunc=lambda s: shingle_hash(s, n))``
    gives after ``update_batch(shingles(text, n))``."""
    a, b = _permutations(num_perm)
    sig = np.empty((len(texts), num_perm), dtype=np.uint32)
    if not texts:
        return sig
    hv, run = _shingle_hashes(texts, n)
    hv = _fmix32(hv)
    total = len(hv)
    bounds = np.append(run, total)
    lo = 0
    with np.errstate(over="ignore"):
        while lo < len(texts):
            # as many texts as fit in one chunk of shingles (at least one)
            hi = max(int(np.searchsorted(bounds, bounds[lo] + _CHUNK_SHINGLES, side="right")) - 1, lo + 1)
            s, e = int(bounds[lo]), int(bounds[hi])
            ph = a[:, None] * hv[None, s:e]
            ph += b[:, None]
            sig[lo:hi] = np.minimum.reduceat(ph, bounds[lo:hi] - s, axis=1).T
            lo = hi
    return sig


def band_keys(sig: np.ndarray, bands: int, rows: int) -> np.ndarray:
    """One 64-bit key per band and text (``len(sig) x bands``): equal band values give equal
    keys; a rare key collision only adds a candidate, which verification removes."""
    keys = np.empty((len(sig), bands), dtype=np.uint64)
    with np.errstate(over="ignore"):
        for j in range(bands):
            k = np.zeros(len(sig), dtype=np.uint64)
            for c in range(j * rows, (j + 1) * rows):
                k = (k ^ sig[:, c].astype(np.uint64)) * np.uint64(_POLY)
            keys[:, j] = k ^ (k >> np.uint64(29))
    return keys


def _candidates(earlier: np.ndarray, later: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(earlier rows, later rows) whose keys agree in at least one band, each pair once."""
    n_later = len(later)
    codes = []
    for j in range(earlier.shape[1]):
        order = np.argsort(earlier[:, j], kind="stable")
        sorted_keys = earlier[order, j]
        lo = np.searchsorted(sorted_keys, later[:, j], side="left")
        hi = np.searchsorted(sorted_keys, later[:, j], side="right")
        count = hi - lo
        if not count.any():
            continue
        later_rows = np.repeat(np.arange(n_later, dtype=np.int64), count)
        earlier_rows = order[gather_ranges(lo, count)].astype(np.int64)
        codes.append(earlier_rows * n_later + later_rows)
    if not codes:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    pairs = sorted_unique(np.concatenate(codes))
    return pairs // n_later, pairs % n_later


#: per later split: (its index among the compared splits, earlier rows in the pooled numbering,
#: its own rows, exact Jaccard), one entry per pair at or above the threshold
Found = tuple[int, np.ndarray, np.ndarray, np.ndarray]


@register_check
class NearDuplicateCheck(Check):
    name = "near_duplicates"
    cacheable = True  # reads the release's data only (validation/result_cache.py)
    portable = True  # either process may run it (validation/runner.py), with exact_duplicates:
    group = "content"  # they share each split's normalised content (content_batches)
    cost = 1.3  # CPU s on ComVE, roughly
    family = "leakage"
    topic = "near-duplicate examples across splits"
    why = ("a test item that nearly repeats a training one is partly memorised: scores overstate "
        "generalisation")
    todo = ("read the pairs in the report: fix true duplicates with an erratum in errata.tsv; "
        "acknowledge template-made pairs in acknowledged.yaml saying why they differ (the "
        "policy's near_duplicate_threshold sets what counts)")

    def __init__(self, threshold: float | None = None, num_perm: int = DEFAULT_NUM_PERM) -> None:
        self.threshold = threshold
        self.num_perm = num_perm

    def run(self, release: Release) -> list[CheckResult]:
        out = []
        for view in configs(release):
            if len(compared_splits(view)[0]) < 2 or not view.dedup_fields:
                out.append(self.result(Status.SKIP, "fewer than two splits or no text fields", config=view.config))
                continue
            out.append(self._config(view))
        return out

    def _keys(self, view: ConfigView, split: str, n: int, bands: int, rows: int) -> np.ndarray:
        parts = [np.zeros((0, bands), dtype=np.uint64)]
        for batch in progress.track(content_batches(view, split), f"minhash {view.config}/{split}"):
            for lo in range(0, len(batch), _SIGNATURE_ROWS):  # bounds the per-shingle arrays
                parts.append(band_keys(signatures(batch[lo : lo + _SIGNATURE_ROWS], n, self.num_perm), bands, rows))
        return np.concatenate(parts)

    def _verify(
        self, view: ConfigView, splits: list[str], bases: np.ndarray, si: int, earlier: np.ndarray,
        later: np.ndarray, n: int, threshold: float,
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The candidate pairs at or above the threshold, with their exact Jaccard (the shingle
        sets of the candidate rows only, recomputed from the data, a bounded number at a time)."""
        keep_e, keep_l, keep_j = [], [], []
        for lo in range(0, len(later), _VERIFY_PAIRS):
            e, lat = earlier[lo : lo + _VERIFY_PAIRS], later[lo : lo + _VERIFY_PAIRS]
            owner = np.searchsorted(bases, e, side="right") - 1
            local = e - bases[owner]
            sets: dict[tuple[int, int], set[str]] = {}
            for oi in np.unique(owner).tolist():
                rows = np.unique(local[owner == oi])
                for r, text in zip(rows.tolist(), content_of(view, splits[oi], rows)):
                    sets[(oi, r)] = shingles(text, n)
            rows = np.unique(lat)
            for r, text in zip(rows.tolist(), content_of(view, splits[si], rows)):
                sets[(si, r)] = shingles(text, n)
            jac = np.empty(len(e))
            for k, (oi, a_row, b_row) in enumerate(zip(owner.tolist(), local.tolist(), lat.tolist())):
                a, b = sets[(oi, a_row)], sets[(si, b_row)]
                jac[k] = len(a & b) / len(a | b)
            ok = jac >= threshold
            keep_e.append(e[ok])
            keep_l.append(lat[ok])
            keep_j.append(jac[ok])
        if not keep_e:
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64), np.zeros(0)
        return np.concatenate(keep_e), np.concatenate(keep_l), np.concatenate(keep_j)

    def find(self, view: ConfigView, threshold: float, n: int) -> tuple[list[str], np.ndarray, list[Found]]:
        """Every cross-split pair at Jaccard >= ``threshold``: (compared splits, the row offset of
        each split in the pooled numbering, per later split the :data:`Found` arrays)."""
        bands, rows = lsh_bands(threshold, self.num_perm)
        splits, _ = compared_splits(view)
        keys: list[np.ndarray] = []
        found: list[Found] = []
        for si, split in enumerate(splits):
            current = self._keys(view, split, n, bands, rows)
            if keys:  # each split queries the earlier ones only: a pair is counted once, by its later row
                bases = np.cumsum([0] + [len(k) for k in keys])
                earlier, later = _candidates(np.concatenate(keys), current)
                found.append((si, *self._verify(view, splits, bases, si, earlier, later, n, threshold)))
            keys.append(current)
        return splits, np.cumsum([0] + [len(k) for k in keys]), found

    def pairs(self, view: ConfigView, threshold: float | None = None) -> set[tuple[str, int, str, int, float]]:
        """Every pair as ``(earlier split, row, later split, row, jaccard)`` (for tests and tools)."""
        threshold = float(view.setting("near_duplicate_threshold", DEFAULT_THRESHOLD) if threshold is None
                          else threshold)
        splits, bases, found = self.find(view, threshold, int(view.setting("near_duplicate_ngram", DEFAULT_NGRAM)))
        out = set()
        for si, e, lat, jac in found:
            owner = np.searchsorted(bases, e, side="right") - 1
            for oi, g, r, j in zip(owner.tolist(), e.tolist(), lat.tolist(), jac.tolist()):
                out.add((splits[oi], g - int(bases[oi]), splits[si], r, j))
        return out

    def _config(self, view: ConfigView) -> CheckResult:
        threshold = float(self.threshold if self.threshold is not None else view.setting(
            "near_duplicate_threshold", DEFAULT_THRESHOLD))
        max_fraction = float(view.setting("near_duplicate_max_fraction", DEFAULT_MAX_FRACTION))
        n = int(view.setting("near_duplicate_ngram", DEFAULT_NGRAM))
        exempt = compared_splits(view)[1]
        splits, bases, found = self.find(view, threshold, n)
        contaminated: dict[tuple[int, int], int] = {}
        for si, e, lat, _ in found:
            owner = np.searchsorted(bases, e, side="right") - 1
            for oi in np.unique(owner).tolist():
                contaminated[(oi, si)] = len(np.unique(lat[owner == oi]))
        n_pairs = sum(len(f[1]) for f in found)
        pairs = self._shown_pairs(view, splits, bases, found)
        fractions = {
            f"{splits[a]}->{splits[b]}": k / max(view.num_rows(splits[b]), 1)
            for (a, b), k in sorted(contaminated.items())
        }
        metrics = {"pairs": n_pairs, "threshold": threshold, **{f"fraction/{k}": round(v, 5) for k, v in fractions.items()}}
        details = {
            "threshold": threshold,
            "ngram": n,
            "num_perm": self.num_perm,
            "max_fraction": max_fraction,
            "exempt_splits": exempt,
            "fractions": fractions,
            "pairs": pairs,
        }
        if not n_pairs:
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
            f"{n_pairs} near-duplicate pair(s) at Jaccard >= {threshold}; {frac:.1%} of {worst.split('->')[1]} "
            f"has one in {worst.split('->')[0]} (max {max_fraction:.0%}); e.g. {p['ids'][1]!r} ~ {p['ids'][0]!r} "
            f"({p['jaccard']})",
            config=view.config,
            metrics=metrics,
            details=details,
        )

    @staticmethod
    def _shown_pairs(
        view: ConfigView, splits: list[str], bases: np.ndarray, found: list[Found]
    ) -> list[dict[str, Any]]:
        """The pairs the report lists: highest Jaccard first (4 decimals), then by ids, :data:`_SHOW` of them.
        Ids and texts are read for the rows that can be among them only."""
        if not any(len(f[1]) for f in found):
            return []
        rounded = np.round(np.concatenate([f[3] for f in found]), 4)
        cut = np.sort(rounded)[::-1][min(_SHOW, len(rounded)) - 1]
        pool: list[tuple[float, int, int, int, int]] = []  # (jaccard, earlier split, row, later split, row)
        for si, e, lat, jac in found:
            sel = np.round(jac, 4) >= cut
            owner = np.searchsorted(bases, e[sel], side="right") - 1
            for oi, g, r, j in zip(owner.tolist(), e[sel].tolist(), lat[sel].tolist(), np.round(jac[sel], 4).tolist()):
                pool.append((j, oi, g - int(bases[oi]), si, r))
        wanted: dict[int, set[int]] = defaultdict(set)
        for _, oi, a, si, b in pool:
            wanted[oi].add(a)
            wanted[si].add(b)
        ids: dict[tuple[int, int], Any] = {}
        for s, rows in wanted.items():
            ordered = sorted(rows)
            ids.update(zip(((s, r) for r in ordered), view.ids_of(splits[s], ordered)))
        pool.sort(key=lambda p: (-p[0], str([ids[(p[1], p[2])], ids[(p[3], p[4])]])))
        shown = pool[:_SHOW]
        texts: dict[tuple[int, int], str] = {}
        for s in {p[1] for p in shown} | {p[3] for p in shown}:
            shown_rows = sorted({p[2] for p in shown if p[1] == s} | {p[4] for p in shown if p[3] == s})
            texts.update(zip(((s, r) for r in shown_rows), content_of(view, splits[s], np.asarray(shown_rows))))
        return [
            {
                "splits": [splits[oi], splits[si]],
                "ids": [ids[(oi, a)], ids[(si, b)]],
                "jaccard": j,
                "texts": [_snippet(texts[(oi, a)]), _snippet(texts[(si, b)])],
            }
            for j, oi, a, si, b in shown
        ]
