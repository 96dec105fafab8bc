"""What a check needs to know about a config, read from the release alone.

Checks never need the builder: the field roles come from the config's features
and from its typed validation policy (``benchsmith.policy.Policy``) as stored in
``release.json``.

Data is read per record batch (``ConfigView.batches``, ``ConfigView.take``), never a
whole split as Python objects, so validation memory does not grow with a split's
size beyond compact numpy arrays. What several checks share is computed once per
split content and kept in a byte-bounded cache (:data:`STORE`), keyed by the split's
fingerprint plus its shards' sizes and mtimes (a rebuilt release or a shard edited in
place is never served stale data):

* token columns (``ConfigView.token_column``): one tokenisation pass per text field
  (:func:`tokens`, then case-folded), stored as int32 ids into the process-wide
  :data:`VOCAB` with offsets; ``lengths``, ``cues``, the cheap baselines and the
  partial-input baseline all read them;
* label arrays (``ConfigView.label_array``).

``ConfigView.column`` (whole columns as Python values) remains for checks that need
every value of a small split (drift, the model baselines).
"""

from __future__ import annotations

import hashlib
import itertools
import threading
from collections import OrderedDict
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
from datasets import Features

from benchsmith.errors import ConfigError, did_you_mean
from benchsmith.nlp.scripts import token_pattern, tokens
from benchsmith.policy import AUTO, Policy

if TYPE_CHECKING:
    from benchsmith.release import Release

#: ASCII bytes by class for :func:`_count`: w = word character (``\w``), space (``\s``: also
#: 0x1c-0x1f, which ``str.isspace`` counts), p = anything else (a token of its own)
_ASCII_CLASS = bytes(ord("w") if chr(c).isalnum() or chr(c) == "_" else ord(" ") if chr(c).isspace() else ord("p")
                     for c in range(128)) + b"p" * 128


def _count(text: str) -> int:
    """``len(tokens(text))``. An ASCII string is counted without a regex: its tokens are the
    runs of word characters and each other non-space character, so their number is the count
    of ``p`` plus the run starts (`` w`` and ``pw``) in its byte classes (``bytes.count``, C).
    Kept for speed: 1M distinct ASCII values, 1.2 CPU s against 5.1 for ``len(tokens(text))``."""
    if not text.isascii():
        return len(token_pattern().findall(text))
    classes = b" " + text.encode("ascii").translate(_ASCII_CLASS)
    return classes.count(b"p") + classes.count(b" w") + classes.count(b"pw")


def as_text(value: Any) -> str:
    """A field value as one string (lists of strings joined by spaces; None -> '')."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, (list, tuple)):
        return " ".join(as_text(v) for v in value)
    return str(value)


def features_of(release: Release, config: str) -> Features:
    """The config's features (parsed once per release: shared, do not change them)."""
    return release.config_info(config).features


def _kind(f: Any) -> str:
    """A feature's type name: ``Value``, ``ClassLabel``... (benchsmith's or datasets' twin)."""
    return type(f).__name__


def _is_text_feature(f: Any) -> bool:
    if _kind(f) == "Value":
        return f.dtype in ("string", "large_string")
    inner = getattr(f, "feature", None)
    return inner is not None and _is_text_feature(inner)


@lru_cache(maxsize=32)
def _read_column(files: tuple[str, ...], stamp: tuple, column: str) -> tuple[Any, ...]:
    del stamp  # part of the cache key only
    out: list[Any] = []
    for f in files:
        out.extend(pq.ParquetFile(f).read(columns=[column]).column(column).to_pylist())
    return tuple(out)


BATCH_ROWS = 65_536
#: bytes of derived arrays (token columns, labels) kept between checks
STORE_BUDGET = 1 << 30


def stable_hash(text: str) -> int:
    """A 64-bit hash of a string that is the same in every process (unlike ``hash``)."""
    return int.from_bytes(hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=8).digest(), "little")


class Vocabulary:
    """Case-folded token <-> int id, shared by every token column of the process.

    Ids depend on the order tokens were first seen, so nothing reported may depend on
    an id's value: cue names come from :attr:`names`, hashed features from
    :meth:`hashes` (a stable hash of each token's string).
    """

    def __init__(self) -> None:
        self._raw: dict[str, int] = {}  # token as written -> id of its case-folded form
        self._folded: dict[str, int] = {}
        self.names: list[str] = []
        self._hash_array = np.zeros(0, dtype=np.uint64)  # of names[:len(...)]: see hashes()
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self.names)

    def ids(self, toks: Sequence[str]) -> np.ndarray:
        """int32 ids of ``toks`` (new tokens are added).

        A long list is dictionary-encoded by Arrow first (hashing in C), and only its distinct
        tokens are looked up here; new tokens get their ids in the same order either way (sorted).
        Kept for speed: 5 M known tokens, 1.4 CPU s against 3.2 looked up one by one."""
        if len(toks) > _ARROW_IDS_MIN:
            encoded = pc.dictionary_encode(pa.array(toks, type=pa.large_string()))
            return self._ids(encoded.dictionary.to_pylist())[as_int64(encoded.indices)]
        return self._ids(toks)

    def _ids(self, toks: Sequence[str]) -> np.ndarray:
        raw = self._raw
        missing = set(toks).difference(raw)
        if missing:
            with self._lock:
                for t in sorted(missing):  # sorted: ids do not depend on set order
                    folded = t.casefold()
                    i = self._folded.get(folded)
                    if i is None:
                        i = self._folded[folded] = len(self.names)
                        self.names.append(folded)
                    raw[t] = i
        return np.fromiter(map(raw.__getitem__, toks), dtype=np.int32, count=len(toks))

    def hashes(self) -> np.ndarray:
        """uint64 :func:`stable_hash` of each id's case-folded string, indexed by id.

        Computed on first use, for the tokens added since (only the hashed features of
        ``partial_input`` read them)."""
        with self._lock:
            done, names = len(self._hash_array), self.names[len(self._hash_array):]
            if names:
                fresh = np.fromiter(map(stable_hash, names), dtype=np.uint64, count=len(names))
                self._hash_array = np.concatenate([self._hash_array[:done], fresh])
            return self._hash_array

    def state(self) -> tuple[dict[str, int], dict[str, int], list[str]]:
        """The ids given so far (copies), for a process forked before they were (:func:`export_tokens`)."""
        with self._lock:
            return dict(self._raw), dict(self._folded), list(self.names)

    def adopt(self, state: tuple[dict[str, int], dict[str, int], list[str]]) -> bool:
        """Take the ids of :meth:`state` from the process this one was forked from; only when
        this one's are a prefix of them (it gave no id since the fork), else nothing (False)."""
        raw, folded, names = state
        with self._lock:
            if self.names != names[: len(self.names)]:
                return False
            self._raw, self._folded, self.names = raw, folded, names
        return True


#: token lists longer than this go through Arrow's dictionary encoding (:meth:`Vocabulary.ids`)
_ARROW_IDS_MIN = 2_048
VOCAB = Vocabulary()


class TokenColumn:
    """Every token of one field of one split, case-folded, as ids into :data:`VOCAB`.

    ``offsets[i]:offsets[i + 1]`` are the tokens of value ``i``. A string field has one
    value per row; a list field has ``value_offsets[r]:value_offsets[r + 1]`` values in
    row ``r`` (its items, each tokenised alone: the tokens of the items joined by spaces
    are the same). ``row_offsets`` gives each row's tokens whatever the field's type.
    """

    def __init__(self, ids: np.ndarray, offsets: np.ndarray, value_offsets: np.ndarray | None) -> None:
        self.ids, self.offsets, self.value_offsets = ids, offsets, value_offsets
        self.row_offsets = offsets if value_offsets is None else offsets[value_offsets]

    @property
    def num_rows(self) -> int:
        return len(self.row_offsets) - 1

    def lengths(self) -> np.ndarray:
        """Tokens per row (``len(tokens(as_text(value)))``), int64."""
        return np.diff(self.row_offsets)

    @property
    def nbytes(self) -> int:
        extra = 0 if self.value_offsets is None else self.value_offsets.nbytes + self.row_offsets.nbytes
        return self.ids.nbytes + self.offsets.nbytes + extra


@dataclass(frozen=True)
class OptionTokens:
    """The options of a multiple-choice split as token ranges: option ``j`` is
    ``ids[offsets[j]:offsets[j + 1]]``; row ``r`` owns options ``row_offsets[r]:row_offsets[r + 1]``."""

    ids: np.ndarray
    offsets: np.ndarray
    row_offsets: np.ndarray

    def counts(self) -> np.ndarray:
        """Options per row."""
        return np.diff(self.row_offsets)

    def lengths(self) -> np.ndarray:
        """Tokens per option."""
        return np.diff(self.offsets)


def gather_ranges(starts: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """Indices of the concatenated ranges ``starts[i] : starts[i] + lengths[i]`` (C speed)."""
    total = int(lengths.sum())
    if total == 0:
        return np.zeros(0, dtype=np.int64)
    out_starts = np.cumsum(lengths) - lengths
    return np.repeat(starts - out_starts, lengths) + np.arange(total, dtype=np.int64)


def take_ranges(values: np.ndarray, starts: np.ndarray, lengths: np.ndarray, chunk: int = 1 << 20) -> np.ndarray:
    """``values`` at the concatenated ranges ``starts[i] : starts[i] + lengths[i]``, built
    ``chunk`` elements at a time (the index arrays of :func:`gather_ranges` for a whole
    split would cost 24 bytes an element)."""
    lengths = np.asarray(lengths, dtype=np.int64)
    out = np.empty(int(lengths.sum()), dtype=values.dtype)
    ends = np.cumsum(lengths)
    lo, at = 0, 0
    while lo < len(lengths):
        hi = max(int(np.searchsorted(ends, at + chunk, side="right")), lo + 1)
        part = values[gather_ranges(starts[lo:hi], lengths[lo:hi])]
        out[at : at + len(part)] = part
        at += len(part)
        lo = hi
    return out


def sorted_unique(values: np.ndarray) -> np.ndarray:
    """``np.unique(values)`` by one sort (numpy 2's hash-based unique is several times slower
    on millions of distinct integers)."""
    if not len(values):
        return values
    out = np.sort(values)
    return out[np.concatenate(([True], out[1:] != out[:-1]))]


class _Store:
    """Derived arrays by key, least recently used evicted past a byte budget."""

    def __init__(self, budget: int) -> None:
        self.budget = budget
        self._items: OrderedDict[tuple, tuple[Any, int]] = OrderedDict()
        self._bytes = 0

    def get(self, key: tuple, compute: Any) -> Any:
        hit = self._items.get(key)
        if hit is not None:
            self._items.move_to_end(key)
            return hit[0]
        value = compute()
        size = int(getattr(value, "nbytes", 0))
        self._items[key] = (value, size)
        self._bytes += size
        while self._bytes > self.budget and len(self._items) > 1:
            _, (_, freed) = self._items.popitem(last=False)
            self._bytes -= freed
        return value

    def peek(self, key: tuple) -> Any:
        """The value stored under ``key``, or None (nothing is computed)."""
        hit = self._items.get(key)
        return None if hit is None else hit[0]

    def clear(self) -> None:
        self._items.clear()
        self._bytes = 0


STORE = _Store(STORE_BUDGET)


def export_tokens() -> dict[str, Any]:
    """This process's token columns and the vocabulary their ids index (copies of the vocabulary's
    tables: the state as it is now, for a thread to send while checks go on), for a worker process
    forked before they were made (``validation/runner.py``: the worker imports scikit-learn while
    this process tokenises what the probe reads, then takes the columns instead of tokenising)."""
    columns = {key: value for key, (value, _) in list(STORE._items.items()) if key[0] == "tokens"}
    return {"vocab": VOCAB.state(), "columns": columns}


def import_tokens(state: dict[str, Any]) -> bool:
    """Adopt :func:`export_tokens`' columns and ids (see :meth:`Vocabulary.adopt`); False (nothing
    taken) when this process gave token ids of its own since the fork."""
    if not VOCAB.adopt(state["vocab"]):
        return False
    for key, column in state["columns"].items():
        STORE.get(key, lambda column=column: column)
    return True


def as_int64(values: pa.Array | pa.ChunkedArray) -> np.ndarray:
    """An Arrow integer array without nulls (or a float one, truncated) as int64 numpy."""
    return values.to_numpy().astype(np.int64, copy=False)


def _is_list_type(t: pa.DataType) -> bool:
    return pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_fixed_size_list(t)


def _tokenise(files: tuple[str, ...], field: str) -> TokenColumn:
    id_parts: list[np.ndarray] = []
    count_parts: list[np.ndarray] = []
    per_row: list[np.ndarray] = []
    is_list = False
    for f in files:
        for batch in pq.ParquetFile(f).iter_batches(batch_size=BATCH_ROWS, columns=[field]):
            col = batch.column(0)
            if _is_list_type(col.type):
                is_list = True
                per_row.append(as_int64(pc.fill_null(pc.list_value_length(col), 0)))
                col = pc.list_flatten(col)  # a null item stays (as "": no tokens), a null row has none
            ids, counts = _tokenise_values(col)
            count_parts.append(counts)
            id_parts.append(ids)
    counts = np.concatenate(count_parts) if count_parts else np.zeros(0, dtype=np.int64)
    offsets = np.zeros(len(counts) + 1, dtype=np.int64)
    np.cumsum(counts, out=offsets[1:])
    ids = np.concatenate(id_parts) if id_parts else np.zeros(0, dtype=np.int32)
    value_offsets = None
    if is_list:
        n_values = np.concatenate(per_row)
        value_offsets = np.zeros(len(n_values) + 1, dtype=np.int64)
        np.cumsum(n_values, out=value_offsets[1:])
    return TokenColumn(ids, offsets, value_offsets)


def _tokenise_values(col: pa.Array) -> tuple[np.ndarray, np.ndarray]:
    """(token ids, tokens per value) of one batch of values.

    A string column is tokenised once per *distinct* value (``dictionary_encode``, in C;
    MuCoW's 352,000 text values hold 148,000 distinct ones); the ids of each value are
    then gathered from its distinct value's. Other types go value by value through
    :func:`as_text` (the same tokens)."""
    if not (pa.types.is_string(col.type) or pa.types.is_large_string(col.type)):
        toks = list(map(tokens, map(as_text, col.to_pylist())))
        return (VOCAB.ids(list(itertools.chain.from_iterable(toks))),
                np.fromiter(map(len, toks), dtype=np.int64, count=len(toks)))
    encoded = pc.dictionary_encode(col)
    distinct = encoded.dictionary.to_pylist()
    codes = as_int64(pc.fill_null(encoded.indices, len(distinct)))  # null: "" (no tokens)
    per_value = TOKEN_MEMO.ids_of(distinct)
    per_value.append(np.zeros(0, dtype=np.int32))
    lens = np.fromiter(map(len, per_value), dtype=np.int64, count=len(per_value))
    starts = np.cumsum(lens) - lens
    ids = np.concatenate(per_value)
    counts = lens[codes]
    return take_ranges(ids, starts[codes], counts), counts


def _count_tokens(files: tuple[str, ...], field: str) -> np.ndarray:
    """Tokens per row of a field (what ``_tokenise(files, field).lengths()`` gives, without ids)."""
    parts: list[np.ndarray] = []
    for f in files:
        for batch in pq.ParquetFile(f).iter_batches(batch_size=BATCH_ROWS, columns=[field]):
            col = batch.column(0)
            per_row = None
            if _is_list_type(col.type):
                per_row = as_int64(pc.fill_null(pc.list_value_length(col), 0))
                col = pc.list_flatten(col)
            if pa.types.is_string(col.type) or pa.types.is_large_string(col.type):
                encoded = pc.dictionary_encode(col)
                distinct = encoded.dictionary.to_pylist()
                lens = np.append(TOKEN_MEMO.counts_of(distinct), 0)  # null: "" (no tokens)
                counts = lens[as_int64(pc.fill_null(encoded.indices, len(distinct)))]
            else:
                values = map(as_text, col.to_pylist())
                counts = np.fromiter((len(tokens(v)) for v in values), dtype=np.int64, count=len(col))
            if per_row is not None:  # a row's tokens are its items' tokens
                ends = np.cumsum(per_row)
                sums = np.concatenate(([0], np.cumsum(counts)))
                counts = sums[ends] - sums[ends - per_row]
            parts.append(counts)
    return np.concatenate(parts) if parts else np.zeros(0, dtype=np.int64)


class TokenMemo:
    """Token ids of each text value tokenised so far in this process, up to a byte budget.

    The same text recurs in many columns: ComVE's configs repeat the same sentences (its 16
    splits' text columns hold 250,935 distinct values per column, 10.3 M characters, but
    88,458 distinct values, 3.6 M characters, in all), so a value is tokenised once per
    process instead of once per column. Past the budget new values are tokenised and not
    kept (bounded memory on large releases); a value's ids are the same either way
    (:data:`VOCAB` ids never change within a process)."""

    def __init__(self, budget: int) -> None:
        self.budget = budget
        self.nbytes = 0
        self._ids: dict[str, np.ndarray] = {}
        self._counts: dict[str, int] = {}  # values only counted (:meth:`counts_of`)

    def ids_of(self, values: list[str]) -> list[np.ndarray]:
        """The int32 token ids of each value (a fresh list; the arrays are shared: read only)."""
        memo = self._ids
        missing = list(dict.fromkeys(v for v in values if v not in memo))
        fresh: dict[str, np.ndarray] = {}
        if missing:
            toks = list(map(tokens, missing))
            lens = np.fromiter(map(len, toks), dtype=np.int64, count=len(toks))
            ids = VOCAB.ids(list(itertools.chain.from_iterable(toks)))
            ids.flags.writeable = False
            bounds = np.concatenate(([0], np.cumsum(lens))).tolist()
            fresh = {v: ids[bounds[i] : bounds[i + 1]] for i, v in enumerate(missing)}
            cost = ids.nbytes + sum(map(len, missing)) + _MEMO_ENTRY_BYTES * len(missing)
            if self.nbytes + cost <= self.budget:
                memo.update(fresh)
                self.nbytes += cost
        return [fresh[v] if v in fresh else memo[v] for v in values]

    def counts_of(self, values: list[str]) -> np.ndarray:
        """``len(tokens(v))`` of each value, int64 (kept as counts: no ids are made)."""
        memo, counted = self._ids, self._counts
        missing = [v for v in values if v not in memo and v not in counted]
        fresh = dict(zip(missing, map(_count, missing)))
        cost = sum(map(len, missing)) + _MEMO_ENTRY_BYTES * len(missing)
        if fresh and self.nbytes + cost <= self.budget:
            counted.update(fresh)
            self.nbytes += cost

        def count(v: str) -> int:
            if v in fresh:
                return fresh[v]
            ids = memo.get(v)
            return len(ids) if ids is not None else counted[v]

        return np.fromiter(map(count, values), dtype=np.int64, count=len(values))

    def clear(self) -> None:
        self._ids.clear()
        self._counts.clear()
        self.nbytes = 0


#: bytes a memo entry costs besides its characters and ids (dict slot, str and array headers)
_MEMO_ENTRY_BYTES = 200
#: 128 MB: ComVE's whole memo is ~40 MB; the 1M-row scaling run stays under its 2 GB goal
TOKEN_MEMO = TokenMemo(128 << 20)


def _labels(files: tuple[str, ...], field: str) -> np.ndarray:
    parts = []
    for f in files:
        col = pq.ParquetFile(f).read(columns=[field]).column(field)
        try:
            parts.append(as_int64(pc.fill_null(col, -1)))
        except (pa.ArrowException, TypeError, ValueError):  # not an integer column: as ``int(v)`` reads it
            parts.append(np.asarray([-1 if v is None else int(v) for v in col.to_pylist()], dtype=np.int64))
    return np.concatenate(parts) if parts else np.zeros(0, dtype=np.int64)


@dataclass(frozen=True)
class MultipleChoice:
    """How a multiple-choice config lays out its options.

    ``choices`` is either several fields (one option each) or one list-valued field;
    the label's int value ``i`` selects option ``i``.
    """

    choices: tuple[str, ...]
    list_field: str | None
    label: str
    context: tuple[str, ...]


class ConfigView:
    """One config of a release, with the roles of its fields."""

    def __init__(self, release: Release, config: str) -> None:
        self.release = release
        self.config = config
        self.features: Features = features_of(release, config)
        entry = release.config_info(config)
        self.metadata: Mapping[str, Any] = entry.metadata
        self.policy: Policy = entry.validation_policy
        self.id_field: str | None = self.policy.id_field
        if self.id_field not in self.features:
            self.id_field = None
        self.splits: list[str] = release.splits(config)

    # ------------------------------------------------------------ field roles
    @property
    def text_fields(self) -> list[str]:
        declared = self.policy.text_fields
        if declared:
            return [f for f in declared if f in self.features]
        return [n for n, f in self.features.items() if n != self.id_field and _is_text_feature(f)]

    @property
    def label_field(self) -> str | None:
        """``policy.label``; ``"auto"``: the only ClassLabel; ``None`` declares that the config
        has no label (its ClassLabels are attributes, e.g. a domain)."""
        declared = self.policy.label
        if declared is None:
            return None
        if declared != AUTO and declared in self.features:
            return declared
        labels = [n for n, f in self.features.items() if _kind(f) == "ClassLabel"]
        return labels[0] if len(labels) == 1 else None

    @property
    def label_fields(self) -> list[str]:
        """ClassLabel fields plus the declared (int) label field."""
        out = [n for n, f in self.features.items() if _kind(f) == "ClassLabel"]
        lf = self.label_field
        if lf and lf not in out:
            out.append(lf)
        return out

    def label_names(self, field: str) -> list[str] | None:
        f = self.features[field]
        if _kind(f) == "ClassLabel":
            return list(f.names)
        mc = self.multiple_choice
        if mc is not None and field == mc.label and not mc.list_field:
            return list(mc.choices)
        return None

    @property
    def multiple_choice(self) -> MultipleChoice | None:
        choices = self.policy.choices
        label = self.label_field
        if not choices or label is None:
            return None
        context = tuple(c for c in self.policy.context if c in self.features)
        if isinstance(choices, str):
            return MultipleChoice((), choices, label, context) if choices in self.features else None
        fields = tuple(c for c in choices if c in self.features)
        return MultipleChoice(fields, None, label, context) if len(fields) >= 2 else None

    @property
    def dedup_fields(self) -> list[str]:
        """Fields whose joint content defines a duplicate (default: the text fields)."""
        declared = self.policy.dedup_fields
        if declared:
            return [f for f in declared if f in self.features]
        return self.text_fields

    def setting(self, key: str, default: Any) -> Any:
        """``policy.<key>``, or ``default`` when it is None (an unknown key is an error)."""
        if key not in Policy.keys():  # noqa: SIM118 - Policy.keys() is a classmethod, not a dict
            raise ConfigError(f"unknown validation policy key {key!r}", hint=did_you_mean(key, Policy.keys()))
        v = getattr(self.policy, key)
        return default if v is None else v

    # ------------------------------------------------------------ data
    def num_rows(self, split: str) -> int:
        return self.release.num_examples(self.config, split)

    def files(self, split: str) -> tuple[str, ...]:
        return tuple(str(Path(p)) for p in self.release.files(self.config, split))

    def content_key(self, split: str) -> tuple:
        """What names a split's content: its files, fingerprint, and the shards' sizes and mtimes."""
        files = self.files(split)
        # the fingerprint names the content; size and mtime catch a shard edited in place
        fp = self.release.split_info(self.config, split).fingerprint
        return (files, fp, *((st.st_size, st.st_mtime_ns) for st in (Path(f).stat() for f in files)))

    def column(self, split: str, name: str) -> Sequence[Any]:
        """Every value of a column as Python objects (cached; for small splits and the
        checks that need them all: prefer :meth:`batches` and the derived arrays)."""
        key = self.content_key(split)
        return _read_column(key[0], key[1:], name)

    def batches(self, split: str, columns: Sequence[str], batch_size: int = BATCH_ROWS) -> Iterator[pa.RecordBatch]:
        """The split's rows in record batches of ``columns`` (streamed, bounded memory)."""
        for f in self.files(split):
            yield from pq.ParquetFile(f).iter_batches(batch_size=batch_size, columns=list(columns))

    def take(self, split: str, columns: Sequence[str], rows: Sequence[int] | np.ndarray) -> dict[str, list[Any]]:
        """``{column: values}`` of the given row numbers, in the given order (one streamed pass)."""
        rows = np.asarray(rows, dtype=np.int64)
        out: dict[str, list[Any]] = {c: [None] * len(rows) for c in columns}
        if not len(rows):
            return out
        order = np.argsort(rows, kind="stable")
        wanted = rows[order]
        start, i = 0, 0
        for batch in self.batches(split, columns):
            end = start + batch.num_rows
            j = int(np.searchsorted(wanted, end, side="left"))
            if j > i:
                local = batch.take(pa.array(wanted[i:j] - start))
                for c in columns:
                    for pos, v in zip(order[i:j].tolist(), local.column(c).to_pylist()):
                        out[c][pos] = v
            i, start = j, end
            if i == len(wanted):
                break
        return out

    def texts(self, split: str, name: str) -> list[str]:
        return [as_text(v) for v in self.column(split, name)]

    def token_column(self, split: str, field: str) -> TokenColumn:
        """The field's tokens (one pass per split content, shared by every check)."""
        key = self.content_key(split)
        return STORE.get(("tokens", *key, field), lambda: _tokenise(key[0], field))

    def token_lengths(self, split: str, field: str) -> np.ndarray:
        """Tokens per row of a field (``len(tokens(as_text(value)))``).

        A config with neither a label nor options feeds no check that reads token ids (cues,
        the partial-input probe and the cheap baselines need one or the other), so its lengths
        are counted without mapping tokens to ids (:func:`_count`); the counts are the same
        either way (tests/test_validation_tokens.py)."""
        key = self.content_key(split)
        if self.label_field is not None or self.multiple_choice is not None:
            return self.token_column(split, field).lengths()
        done = STORE.peek(("tokens", *key, field))
        if done is not None:
            return done.lengths()
        return STORE.get(("lengths", *key, field), lambda: _count_tokens(key[0], field))

    def option_tokens(self, split: str) -> OptionTokens:
        """The options of a multiple-choice split as token ranges (see :class:`OptionTokens`)."""
        mc = self.multiple_choice
        if mc is None:
            raise ValueError(f"{self.config} is not a multiple-choice config")
        if mc.list_field:
            col = self.token_column(split, mc.list_field)
            # a string field (not a list) holds one option per row
            row_offsets = col.value_offsets if col.value_offsets is not None else np.arange(col.num_rows + 1)
            return OptionTokens(col.ids, col.offsets, row_offsets)
        cols = [self.token_column(split, c) for c in mc.choices]
        n, k = cols[0].num_rows, len(cols)
        base = np.cumsum([0] + [len(c.ids) for c in cols[:-1]])
        starts = np.stack([b + c.row_offsets[:-1] for b, c in zip(base, cols)], axis=1).ravel()
        lengths = np.stack([c.lengths() for c in cols], axis=1).ravel()
        ids = take_ranges(np.concatenate([c.ids for c in cols]), starts, lengths)
        offsets = np.zeros(n * k + 1, dtype=np.int64)
        np.cumsum(lengths, out=offsets[1:])
        return OptionTokens(ids, offsets, np.arange(0, n * k + 1, k, dtype=np.int64))

    def options(self, split: str) -> list[list[str]]:
        mc = self.multiple_choice
        if mc is None:
            raise ValueError(f"{self.config} is not a multiple-choice config")
        if mc.list_field:
            return [[as_text(o) for o in (row or [])] for row in self.column(split, mc.list_field)]
        cols = [self.texts(split, c) for c in mc.choices]
        return [list(row) for row in zip(*cols)]

    def label_array(self, split: str, field: str) -> np.ndarray:
        """Label values of a split as int64 (None = unlabeled becomes -1; -1 stays)."""
        key = self.content_key(split)
        return STORE.get(("labels", *key, field), lambda: _labels(key[0], field))

    def labeled(self, split: str, field: str) -> list[int]:
        """Label values of a split (-1 and None = unlabeled are kept as -1)."""
        return self.label_array(split, field).tolist()

    def ids(self, split: str) -> list[Any]:
        """The split's ids, or row numbers when the config has no id field."""
        if self.id_field is None:
            return list(range(self.num_rows(split)))
        return list(self.column(split, self.id_field))

    def ids_of(self, split: str, rows: Sequence[int] | np.ndarray) -> list[Any]:
        """The ids of some rows (row numbers when the config has no id field)."""
        if self.id_field is None:
            return [int(r) for r in rows]
        return self.take(split, [self.id_field], rows)[self.id_field]


def configs(release: Release) -> list[ConfigView]:
    """A view of every config of a release, in manifest order."""
    return [ConfigView(release, c) for c in release.configs()]
