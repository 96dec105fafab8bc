"""Measurements of a ComVE release: the paper's Tables 2-5, the train-repeat audit, and the
measures ``published.yaml`` names (:data:`MEASURES`, returned by ``ComVE.measures()``).

Everything here reads a :class:`~benchsmith.release.Release` only, so the checks, the
card, the fidelity check and the tests measure the same thing. Conventions (the paper does
not spell them out; they are the ones that reproduce its training-set figures, see
builders/comve/README.md):

* length = whitespace tokens (``str.split()``, what the official BLEU counts); empty
  strings (upstream's missing options/references) are left out of averages;
* top words: lowercased whitespace tokens after removing :data:`UNINFORMATIVE`, the
  seven words the caption of Table 5 names; a word's frequency is its share (in %) of the
  tokens left. This reproduces Table 5(a) (training set) to the last printed digit; the
  table's header says per mille, but its numbers are per hundred;
* the sentence types of Table 4/5: sensical statements, nonsensical statements,
  correct reasons, confusing reasons, reference reasons (all three references).
"""

from __future__ import annotations

import copy
from collections import Counter
from collections.abc import Iterable, Mapping
from functools import lru_cache
from itertools import chain
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from benchsmith.builder import Builder
    from benchsmith.release import Release

#: Sentence types of the paper's Tables 4 and 5, with the tuples fields they come from.
SENTENCE_TYPES: dict[str, tuple[str, ...]] = {
    "sensical_statement": ("sensical_statement",),
    "nonsensical_statement": ("nonsensical_statement",),
    "correct_reason": ("correct_reason",),
    "confusing_reason": ("confusing_reason1", "confusing_reason2"),
    "reference_reason": ("references",),
}

#: The uninformative words of the paper (caption of Table 5): "We skip most uninformative
#: words, including 'a', 'an', 'the', 'to', 'is', 'are' and 'be'". Exactly these seven
#: reproduce Table 5(a); negation words stay, they are the cue the negation baseline measures.
UNINFORMATIVE = frozenset(["a", "an", "the", "to", "is", "are", "be"])


def words(text: str) -> list[str]:
    """Lowercased whitespace tokens (punctuation stays attached, as in the paper's counts)."""
    return text.lower().split()


#: columns read so far, keyed by release path, split fingerprint, config, split and column (at most 64)
_COLUMNS: dict[tuple[str, ...], tuple[Any, ...]] = {}


def _column(release: Release, config: str, split: str, name: str) -> list[Any]:
    # the split's fingerprint names its content: a rebuilt release is never served stale columns
    key = (str(release.path), release.split_info(config, split).fingerprint, config, split, name)
    if key not in _COLUMNS:
        if len(_COLUMNS) >= 64:
            del _COLUMNS[next(iter(_COLUMNS))]
        # read through the caller's Release: a new Release(path) per column re-read and re-checked
        # release.json 26 times in a ComVE card (~0.1 s CPU)
        _COLUMNS[key] = tuple(release.table(config, split, columns=[name]).column(name).to_pylist())
    return list(_COLUMNS[key])


def _texts(release: Release, split: str, fields: Iterable[str]) -> list[str]:
    out: list[str] = []
    for f in fields:
        column = _column(release, "tuples", split, f)
        if isinstance(next((v for v in column if v is not None), None), list):  # references: flattened
            out.extend(chain.from_iterable(v for v in column if v))
        else:
            out.extend(column)
    return [t for t in out if t and t.strip()]


def label_distribution(release: Release, config: str, split: str) -> dict[str, int]:
    """``{label name: count}`` for subtask_a (sent0/sent1) or subtask_b (A/B/C)."""
    names = release.config_info(config).features_dict["label"]["names"]  # the JSON form: no datasets import
    counts = Counter(_column(release, config, split, "label"))
    return {n: counts.get(i, 0) for i, n in enumerate(names)}


def _kernel(name: str, *args: Any) -> Any:
    """Arrow's compute kernel ``name`` on ``args``, without importing ``pyarrow.compute``
    (:func:`benchsmith.loaders.arrow_kernels.kernel`: that import cost as much as the statistics
    it would serve in a ComVE build)."""
    from benchsmith.loaders.arrow_kernels import kernel

    return kernel(name, *args)


#: the code points above ASCII that ``str.isspace`` calls whitespace (tests/test_comve_stats.py
#: holds this equal to Python's), by their UTF-8 lead byte: the 2- and 3-byte sequences
_WIDE_SPACES = ("\x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a"
                "\u2028\u2029\u202f\u205f\u3000")


@lru_cache(maxsize=1)
def _space_bytes() -> tuple[Any, Any, dict[int, tuple[bytes, ...]]]:
    """(a 256-entry table of the ASCII bytes ``str.isspace`` calls whitespace, one of the lead bytes
    of the wider whitespace's UTF-8, ``{lead byte: the UTF-8 sequences that start with it}``)."""
    import numpy as np

    space = np.zeros(256, dtype=bool)
    space[[c for c in range(128) if chr(c).isspace()]] = True
    wide: dict[int, tuple[bytes, ...]] = {}
    for c in _WIDE_SPACES:
        code = c.encode("utf-8")
        wide[code[0]] = (*wide.get(code[0], ()), code)
    leads = np.zeros(256, dtype=bool)
    leads[list(wide)] = True
    return space, leads, wide


def _utf8_token_counts(array: Any) -> tuple[int, int]:
    """:func:`token_counts` of one string array without nulls, on its UTF-8 bytes with numpy: a
    byte is whitespace where ``str.isspace`` says so of the ASCII byte or of the 2- or 3-byte
    character it is part of (the :data:`_WIDE_SPACES`, found by their lead bytes, which never
    occur inside another character); a token starts at a byte that is not whitespace after one
    that is, or at its text's first byte. ``len(text.split())`` per text, summed; the texts with
    at least one token counted. ComVE's card (Table 4: 18 columns, 96,000 texts, 3.9 MB; 2026-11-27,
    once in a fresh process as a build does, 3 runs): 0.06-0.09 s CPU on Arrow's kernels
    (``utf8_trim_whitespace``, then ``utf8_split_whitespace``, which makes a list of strings per
    text) against 0.01-0.017 s here (1,000 page faults).
    """
    import numpy as np
    import pyarrow as pa

    n = len(array)
    buffers = array.buffers()
    width = np.dtype(np.int64 if pa.types.is_large_string(array.type) else np.int32)
    offsets = np.frombuffer(buffers[1], dtype=width, count=n + 1, offset=array.offset * width.itemsize)
    begin, end = int(offsets[0]), int(offsets[-1])
    if n == 0 or end == begin:
        return 0, 0
    data = np.frombuffer(buffers[2], dtype=np.uint8, count=end - begin, offset=begin)
    _, lead_table, wide = _space_bytes()
    # str.isspace's ASCII: 9-13 and 28-32 (compared, not looked up: a table index cost twice the
    # CPU). Temporaries are byte-sized and few, written in place: fresh memory costs page faults
    # (a first version with an int64 position per token touched 17 MB, 4,400 faults, in a build)
    shifted = np.subtract(data, 9, dtype=np.uint8)  # wraps below 9
    space = np.less_equal(shifted, 4)
    np.subtract(data, 28, out=shifted)
    space |= np.less_equal(shifted, 4, out=shifted.view(np.bool_))  # in place, element by element
    del shifted
    leads = np.flatnonzero(data >= 0xC2)  # candidates for the wide whitespace's lead bytes
    leads = leads[lead_table[data[leads]]]
    if len(leads):
        padded = np.concatenate([data, np.zeros(2, dtype=np.uint8)])
        for lead, codes in wide.items():
            at = leads[data[leads] == lead]
            for code in codes:
                hit = at[np.all([padded[at + k] == code[k] for k in range(1, len(code))], axis=0)]
                for k in range(len(code)):
                    space[hit + k] = True
    starts = offsets[:-1] - begin
    first = starts[offsets[1:] > offsets[:-1]]  # the first byte of each non-empty text
    token = np.empty_like(space)  # a byte after whitespace or a text's first byte, then: a token's first
    token[0] = True
    token[1:] = space[:-1]
    token[first] = True
    np.logical_not(space, out=space)
    np.logical_and(token, space, out=token)
    # a text holds a token where one starts in it: its bytes or-ed (a segment per non-empty text)
    texts = int(np.count_nonzero(np.logical_or.reduceat(token, first))) if len(first) else 0
    return int(np.count_nonzero(token)), texts


def token_counts(column: Any) -> tuple[int, int]:
    """``(whitespace tokens, texts)`` of a string or list-of-strings Arrow column: over its texts
    that are neither null nor empty nor whitespace only (as :func:`_texts` keeps them), the sum
    of ``len(text.split())`` and their number, counted on the column's UTF-8 bytes
    (:func:`_utf8_token_counts`) without a Python string per text (tests/test_comve_stats.py holds
    it equal to ``str.split`` on random texts and tests/test_comve_real.py on the real release, to
    the bit). ComVE's card: 0.07 s CPU for Table 4's lengths in Python, 0.06-0.09 on Arrow's
    kernels, 0.01-0.017 on the bytes."""
    import pyarrow as pa

    if pa.types.is_list(column.type) or pa.types.is_large_list(column.type):
        column = _kernel("list_flatten", column)  # the values of the non-null lists, in order
    tokens = texts = 0
    for chunk in column.chunks if isinstance(column, pa.ChunkedArray) else [column]:
        # no ``pa.scalar`` or other Python value handed to Arrow: the first one converted makes
        # pyarrow import pandas (benchsmith.pandas_probe), 0.62 s of a warm ComVE validate
        n_tokens, n_texts = _utf8_token_counts(_kernel("drop_null", chunk) if chunk.null_count else chunk)
        tokens += n_tokens
        texts += n_texts
    return tokens, texts


def mean_length(release: Release, splits: Iterable[str], kind: str) -> float:
    """Mean whitespace-token length of one sentence type over ``splits`` (Table 4), unrounded:
    ``sum(len(t.split()) for t in texts) / len(texts)`` over :func:`_texts`, from the same two
    integers counted on the Arrow columns (:func:`token_counts`)."""
    tokens = texts = 0
    for split in splits:
        for f in SENTENCE_TYPES[kind]:
            n_tokens, n_texts = _column_counts(release, split, f)
            tokens += n_tokens
            texts += n_texts
    return tokens / texts if texts else 0.0


#: :func:`token_counts` of tuples columns, keyed like :data:`_COLUMNS` (at most 64): the check, the
#: fidelity figures and the card ask for the same (split, field) ~4 times (~0.1 CPU s of a validate)
_COUNTS: dict[tuple[str, ...], tuple[int, int]] = {}


def _column_counts(release: Release, split: str, field: str) -> tuple[int, int]:
    key = (str(release.path), release.split_info("tuples", split).fingerprint, split, field)
    if key not in _COUNTS:
        if len(_COUNTS) >= 64:
            del _COUNTS[next(iter(_COUNTS))]
        _COUNTS[key] = token_counts(release.table("tuples", split, columns=[field]).column(field))
    return _COUNTS[key]


def average_lengths(release: Release, splits: Iterable[str]) -> dict[str, float]:
    """Mean whitespace-token length per sentence type over ``splits`` (Table 4), 2 decimals."""
    splits = list(splits)
    return {kind: round(mean_length(release, splits, kind), 2) for kind in SENTENCE_TYPES}


def word_counts(release: Release, splits: Iterable[str], kind: str) -> Counter:
    """Informative word counts of one sentence type over ``splits`` (Table 5); a copy of the counts
    kept per split content (the fidelity figures and the card ask for the same ones ~25 times)."""
    splits = tuple(splits)
    return Counter(_word_counts(*_content(release, "tuples", splits), splits, kind))


def _content(release: Release, config: str, splits: Iterable[str]) -> tuple[str, tuple[str, ...]]:
    """(the release's folder, the fingerprints of ``splits`` of ``config``): the key of this module's
    per-content memos, which read only the folder (the fingerprints keep a rebuilt folder from
    hitting an entry of what was there before)."""
    return str(release.path), tuple(release.split_info(config, s).fingerprint for s in splits)


@lru_cache(maxsize=64)
def _word_counts(path: str, fingerprints: tuple[str, ...], splits: tuple[str, ...], kind: str) -> Counter:
    """Several splits: the sum of each split's memoised counts (Table 5 asks for train, dev+test
    and train+dev+test: each text is split once, not twice), in the same key order as one count
    over the splits in turn. One split: counted in C (``Counter`` of a chained iterator), the
    uninformative words deleted after (ComVE's 15 counts, columns read: 0.42 -> 0.26 CPU s)."""
    from benchsmith.release import Release

    if len(splits) != 1:
        out: Counter = Counter()
        for split, fp in zip(splits, fingerprints):
            out.update(_word_counts(path, (fp,), (split,), kind))
        return out
    texts = _texts(Release(path), splits[0], SENTENCE_TYPES[kind])
    counts = Counter(chain.from_iterable(map(words, texts)))
    for w in UNINFORMATIVE:
        counts.pop(w, None)
    return counts


def _top(c: Counter, k: int) -> list[tuple[str, int]]:
    return sorted(c.items(), key=lambda x: (-x[1], x[0]))[:k]  # ties alphabetically: deterministic


def _top_and_total(release: Release, splits: Iterable[str], kind: str, k: int) -> tuple[list[tuple[str, int]], int]:
    """(the ``k`` most frequent informative words with their counts, the informative tokens), kept
    per split content like :func:`word_counts`: the fidelity figures and the checks ask ~25 times,
    and copying and sorting the counts each time cost ~1 CPU s of a first ``validate``."""
    splits = tuple(splits)
    top, total = _top_counts(*_content(release, "tuples", splits), splits, kind, k)
    return list(top), total


@lru_cache(maxsize=64)
def _top_counts(path: str, fingerprints: tuple[str, ...], splits: tuple[str, ...], kind: str, k: int
                ) -> tuple[tuple[tuple[str, int], ...], int]:
    c = _word_counts(path, fingerprints, splits, kind)  # read only: never handed out
    return tuple(_top(c, k)), sum(c.values())


def top_words(release: Release, splits: Iterable[str], k: int = 5) -> dict[str, list[list[Any]]]:
    """The ``k`` most frequent informative words per sentence type (Table 5), ``[[word, count], ...]``."""
    splits = list(splits)
    return {kind: [[w, n] for w, n in _top_and_total(release, splits, kind, k)[0]] for kind in SENTENCE_TYPES}


def top_word_shares(release: Release, splits: Iterable[str], kind: str, k: int = 5) -> list[list[Any]]:
    """Table 5's figures: ``[[word, % of the informative tokens], ...]`` for one sentence type."""
    top, total = _top_and_total(release, splits, kind, k)
    return [[w, 100 * n / total] for w, n in top] if total else []


def normalise(text: str) -> str:
    """Case, inner whitespace and final punctuation folded: what a near-verbatim repeat ignores."""
    return " ".join(text.lower().split()).rstrip(" .!?")


def train_repeats(release: Release, splits: Iterable[str] = ("validation", "test")) -> dict[str, Any]:
    """Instances of ``splits`` that repeat training material.

    Per split and per mode (``exact``; ``normalised`` by :func:`normalise`): the ids
    whose nonsensical statement, whose correct reason, or either, occurs in train
    (the issue's definition), and the ids whose whole statement pair (sensical and
    nonsensical) is a training pair.
    """
    present = tuple(s for s in splits if s in release.splits("tuples"))
    # kept per split content (the fidelity figures ask once per field and split); a deep copy out
    return copy.deepcopy(_train_repeats_of(*_content(release, "tuples", ("train", *present)), present))


@lru_cache(maxsize=16)
def _train_repeats_of(path: str, fingerprints: tuple[str, ...], splits: tuple[str, ...]) -> dict[str, Any]:
    from benchsmith.release import Release

    del fingerprints  # cache key only: the splits' content
    release = Release(path)
    fields = ("sensical_statement", "nonsensical_statement", "correct_reason")
    train = {f: _column(release, "tuples", "train", f) for f in fields}
    modes = (("exact", lambda t: t), ("normalised", normalise))
    # train's sets once per mode, not once per split (~0.1 CPU s)
    seen_of = {mode: {k: {f(t) for t in train[k]} for k in ("nonsensical_statement", "correct_reason")}
               for mode, f in modes}
    statements = list(zip(train["sensical_statement"], train["nonsensical_statement"]))
    pairs_of = {mode: {(f(a), f(b)) for a, b in statements} for mode, f in modes}
    out: dict[str, Any] = {}
    for split in splits:
        ids = _column(release, "tuples", split, "id")
        cols = {f: _column(release, "tuples", split, f) for f in fields}
        res: dict[str, Any] = {"n": len(ids)}
        for mode, f in modes:
            seen, pairs = seen_of[mode], pairs_of[mode]
            per = {k: sorted((i for i, t in zip(ids, cols[k]) if f(t) in seen[k]), key=_id_key) for k in seen}
            per["either"] = sorted(set(per["nonsensical_statement"]) | set(per["correct_reason"]), key=_id_key)
            per["statement_pair"] = sorted(
                (i for i, a, b in zip(ids, cols["sensical_statement"], cols["nonsensical_statement"])
                 if (f(a), f(b)) in pairs), key=_id_key)
            res[mode] = per
        out[split] = res
    return out


def _id_key(i: str) -> tuple[int, str]:
    return (int(i), i) if i.isdigit() else (1 << 62, i)


def card_sections(release: Release, builder: Builder) -> Mapping[str, str]:
    """Card prose computed from the release: label distributions, lengths, errata and findings."""
    rows = []
    for config in ("subtask_a", "subtask_b"):
        if config not in release.configs():
            continue
        for split in release.splits(config):
            d = label_distribution(release, config, split)
            rows.append(f"| {config} | {split} | " + ", ".join(f"{k}: {v:,}" for k, v in d.items()) + " |")
    sections: dict[str, str] = {}
    if rows:
        sections["Label distributions"] = "| config | split | counts |\n|---|---|---|\n" + "\n".join(rows)
    if "tuples" in release.configs():
        main = [s for s in ("train", "validation", "test") if s in release.splits("tuples")]
        lens = average_lengths(release, main)
        sections["Average length (whitespace tokens, train+validation+test)"] = "\n".join(
            f"- {k.replace('_', ' ')}: {v}" for k, v in lens.items()
        )
    findings = builder.findings() if hasattr(builder, "findings") else []
    if findings:
        sections["Upstream audit findings"] = "\n".join(
            f"- **{f.id}**: {f.what} *Decision:* {f.decision}" for f in findings
        )
    return sections


# ------------------------------------------------------------------ measures of published.yaml


def _splits_of(f: Any) -> list[str]:
    """A figure's splits: ``args.splits`` (e.g. dev+test) or its one ``split``."""
    return list(f.args.get("splits") or [f.split])


def _average_length(release: Release, f: Any) -> float:
    return round(mean_length(release, _splits_of(f), f.args["type"]), 6)  # 6 places: readable, no tolerance effect


def _top_words(release: Release, f: Any) -> list[list[Any]]:
    return [[w, round(p, 6)] for w, p in top_word_shares(release, _splits_of(f), f.args["type"], f.args.get("k", 5))]


def _train_repeats(release: Release, f: Any) -> int:
    """Instances of the figure's splits whose ``args.field`` occurs verbatim in train."""
    for split in ["train", *_splits_of(f)]:
        release.split_info("tuples", split)  # a split this build skipped: ConfigError, the check skips
    rep = train_repeats(release, _splits_of(f))
    return sum(len(rep[s]["exact"][f.args["field"]]) for s in _splits_of(f))


def _copy_source_bleu(release: Release, f: Any) -> float:
    return round(copy_source(release, f.split)["bleu"], 6)


def copy_source(release: Release, split: str) -> dict[str, Any]:
    """``baseline.copy_source(release, split)``, computed once per split content: the fidelity
    figure and the ``comve_baselines`` check both score it (~0.3 CPU s a split)."""
    path, (fp,) = _content(release, "subtask_c", (split,))
    return copy.deepcopy(_copy_source_of(path, fp, split))


@lru_cache(maxsize=16)
def _copy_source_of(path: str, fingerprint: str, split: str) -> dict[str, Any]:
    from benchsmith.builders.comve.baseline import copy_source as score

    from benchsmith.release import Release

    del fingerprint  # cache key only: the split's content
    return score(Release(path), split)


def _tuple_total(release: Release, f: Any) -> int:
    """Over the figure's splits of the tuples config: ``args.what`` instances (tuples) or sentences
    (the non-empty ones of each tuple's 8: two statements, three candidate reasons, three references)."""
    if f.args["what"] == "instances":
        return sum(release.num_examples("tuples", s) for s in _splits_of(f))
    fields = ("sensical_statement", "nonsensical_statement", "correct_reason", "confusing_reason1",
              "confusing_reason2", "references")
    # a sentence is a text neither null nor blank (``x and x.strip()``): what token_counts counts as a
    # text, from the counts Table 4 reads anyway (0.08-0.17 -> ~0 CPU s: no row as Python dicts)
    return sum(_column_counts(release, s, k)[1] for s in _splits_of(f) for k in fields)


#: ``{name: fn(release, figure)}``: the measures ``published.yaml`` may name besides the core ones.
MEASURES = {
    "average_length": _average_length,  # args: type (a SENTENCE_TYPES key), optional splits
    "top_words": _top_words,  # args: type, optional splits and k
    "train_repeats": _train_repeats,  # args: field (nonsensical_statement | correct_reason), splits
    "copy_source_bleu": _copy_source_bleu,  # subtask_c split: official BLEU of copying false_sent
    "tuple_total": _tuple_total,  # args: what (instances | sentences), splits
}
