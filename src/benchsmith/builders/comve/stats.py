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

import pyarrow as pa
import pyarrow.compute as pc

from benchsmith.builders.comve.baseline import copy_source as score
from benchsmith.release import Release

if TYPE_CHECKING:
    from benchsmith.builder import Builder

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
        # read through the caller's Release (a new Release(path) re-reads and re-checks release.json)
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


def token_counts(column: Any) -> tuple[int, int]:
    """``(whitespace tokens, texts)`` of a string or list-of-strings Arrow column: over its texts
    that are neither null nor empty nor whitespace only (as :func:`_texts` keeps them), the sum
    of ``len(text.split())`` and their number."""
    if pa.types.is_list(column.type) or pa.types.is_large_list(column.type):
        column = pc.list_flatten(column)  # the values of the non-null lists, in order
    kept = [t for t in column.to_pylist() if t and not t.isspace()]
    return sum(len(t.split()) for t in kept), len(kept)


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
#: fidelity figures and the card ask for the same (split, field) ~4 times
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
    uninformative words deleted after."""
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
    per split content like :func:`word_counts`: the fidelity figures and the checks ask ~25 times."""
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
    del fingerprints  # cache key only: the splits' content
    release = Release(path)
    fields = ("sensical_statement", "nonsensical_statement", "correct_reason")
    train = {f: _column(release, "tuples", "train", f) for f in fields}
    modes = (("exact", lambda t: t), ("normalised", normalise))
    # train's sets once per mode, not once per split
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
    figure and the ``comve_baselines`` check both score it."""
    path, (fp,) = _content(release, "subtask_c", (split,))
    return copy.deepcopy(_copy_source_of(path, fp, split))


@lru_cache(maxsize=16)
def _copy_source_of(path: str, fingerprint: str, split: str) -> dict[str, Any]:
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
    # text, from the counts Table 4 reads anyway
    return sum(_column_counts(release, s, k)[1] for s in _splits_of(f) for k in fields)


#: ``{name: fn(release, figure)}``: the measures ``published.yaml`` may name besides the core ones.
MEASURES = {
    "average_length": _average_length,  # args: type (a SENTENCE_TYPES key), optional splits
    "top_words": _top_words,  # args: type, optional splits and k
    "train_repeats": _train_repeats,  # args: field (nonsensical_statement | correct_reason), splits
    "copy_source_bleu": _copy_source_bleu,  # subtask_c split: official BLEU of copying false_sent
    "tuple_total": _tuple_total,  # args: what (instances | sentences), splits
}
