"""Row encoding: a split's example dicts checked against the config's features and turned into
Arrow record batches, column-wise (:class:`SplitEncoder`); ids are checked for repeats through
:class:`~benchsmith.release.id_index.IdIndex`."""

from __future__ import annotations

import itertools
import operator
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, NoReturn

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
from datasets import ClassLabel

from benchsmith.builder import Config
from benchsmith.errors import SchemaError
from benchsmith.loaders.arrow_kernels import without_validity
from benchsmith.release.id_index import IdIndex, mixed, mixed_batch


class Repeat(Exception):
    # control flow inside the writer, never seen by a user
    """A repeated id found inside a batch while suspects wait for confirmation."""

    def __init__(self, pending: list[tuple[int, Any]]) -> None:
        super().__init__()
        self.pending = pending  # (example number, id) of the batch up to and with the repeat


class SplitEncoder:
    """Turns example dicts into record batches, column-wise (the fast path)."""

    def __init__(self, config: Config, split: str, id_field: str | None, batch_rows: int = 65_536,
                 spill_dir: Path | None = None):
        self.config = config
        self.batch_rows = batch_rows
        self.split = split
        self.features = config.features
        self.schema = self.features.arrow_schema
        self.names = list(self.features)
        self.name_set = set(self.names)
        self.id_field = id_field if id_field in self.name_set else None
        self.class_labels = {
            n: f for n, f in self.features.items() if isinstance(f, ClassLabel)
        }
        self.ids = IdIndex(spill_dir)  # spills to the staging folder's disk, not /tmp (maybe RAM)
        # Non-label columns convert in one C++ pass; ClassLabel columns also accept names.
        self.plain_schema = pa.schema([f for f in self.schema if f.name not in self.class_labels])

    def where(self, index: int, example: dict | None = None) -> str:
        ident = f" (id {example.get(self.id_field)!r})" if example and self.id_field else ""
        return f"{self.config.name}/{self.split} example #{index}{ident}"

    def encode(self, rows: list[dict], start: int) -> pa.RecordBatch:
        """Validate and convert one batch of examples.

        The checks run in bulk at C speed (``map`` over builtins, one
        ``RecordBatch.from_pylist`` pass); only when one fails does a per-row pass
        locate the offending example for the message.
        """
        name_set = self.name_set
        if not all(map(operator.eq, map(dict.keys, rows), itertools.repeat(name_set))):
            i, ex = next((i, ex) for i, ex in enumerate(rows) if ex.keys() != name_set)
            raise SchemaError(
                f"{self.where(start + i, ex)} has missing fields {sorted(name_set - ex.keys())} "
                f"and extra fields {sorted(ex.keys() - name_set)}",
                hint="Make the builder yield exactly the config's features",
            )
        if self.id_field:
            self.check_ids(list(map(operator.itemgetter(self.id_field), rows)), rows, start)
        labels = {
            n: self._labels(feat, n, list(map(operator.itemgetter(n), rows)), rows, start)
            for n, feat in self.class_labels.items()
        }
        try:
            plain = pa.RecordBatch.from_pylist(rows, schema=self.plain_schema)
        except (pa.ArrowInvalid, pa.ArrowTypeError, TypeError, OverflowError) as exc:
            self._raise_bad_value(rows, start, exc)
        arrays = [
            pa.array(labels[n], type=typ) if n in labels else plain.column(n)
            for n, typ in zip(self.names, self.schema.types)
        ]
        return pa.RecordBatch.from_arrays(arrays, schema=self.schema)

    def encode_columns(self, columns: dict[str, list], start: int) -> pa.RecordBatch:
        """Validate and convert one batch given as columns (``Builder.columns``): the same
        checks as :meth:`encode`, each column converted in one ``pa.array`` call."""
        if columns.keys() != self.name_set:
            raise SchemaError(
                f"{self.config.name}/{self.split} columns: missing fields "
                f"{sorted(self.name_set - columns.keys())} and extra fields "
                f"{sorted(columns.keys() - self.name_set)}",
                hint="Make the builder give exactly the config's features",
            )
        lengths = {n: len(v) for n, v in columns.items()}
        if len(set(lengths.values())) > 1:
            raise SchemaError(f"{self.config.name}/{self.split} columns differ in length: {lengths}",
                              hint="Make the builder give one value per example in every column")
        if any(isinstance(v, pa.Array) for v in columns.values()):
            columns = self._arrow_columns(columns)
        rows = _Rows(columns)
        if self.id_field:
            self.check_ids(columns[self.id_field], rows, start)
        arrays = []
        for n, typ in zip(self.names, self.schema.types):
            values = columns[n]
            if isinstance(values, pa.Array):  # of the feature's type (_arrow_columns)
                arrays.append(values)
                continue
            if n in self.class_labels:
                values = self._labels(self.class_labels[n], n, values, rows, start)
            try:
                arrays.append(pa.array(values, type=typ))
            except (pa.ArrowInvalid, pa.ArrowTypeError, TypeError, OverflowError) as exc:
                raise self._bad_value(n, values, typ, rows, start, exc) from None
        return pa.RecordBatch.from_arrays(arrays, schema=self.schema)

    def _arrow_columns(self, columns: dict[str, Any]) -> dict[str, Any]:
        """``columns`` where an Arrow array (``Builder.columns`` may give one) is kept only where it
        is a plain column of exactly the feature's Arrow type: then it is written as it is, with
        no value a Python object (ComVE's texts, README "Benchmarks", sixth pass). The id column
        and ClassLabel columns, and any array of another type, are read as Python values and take
        the list path's checks and conversion, so an array never skips a check a list gets. A kept
        array loses a validity bitmap that marks no null, as ``pa.array`` allocates none (its bytes
        count in release.json's ``num_bytes``)."""
        types = dict(zip(self.names, self.schema.types))
        out = {}
        for n, v in columns.items():
            keep = (isinstance(v, pa.Array) and n != self.id_field and n not in self.class_labels
                    and v.type == types[n])
            out[n] = without_validity(v) if keep else v.to_pylist() if isinstance(v, pa.Array) else v
        return out

    def check_ids(self, ids: list, rows: Any, start: int) -> None:
        """Record the batch's ids; a repeat raises SchemaError (see :class:`IdIndex`)."""
        ordered = mixed_batch(ids)
        if len(ordered) > 1 and bool((ordered[1:] == ordered[:-1]).any()):
            here: set = set()
            for i, v in enumerate(ids):  # equal hashes in the batch: compare the ids themselves
                if v in here:
                    if len(self.ids):  # an earlier batch may hold an earlier repeat: settle that first
                        raise Repeat([(start + k, ids[k]) for k in range(i + 1)])
                    raise self.duplicate(start + i, v)
                here.add(v)
            ordered = np.unique(ordered)  # a hash collision inside the batch: one entry
        self.ids.add(ordered)

    def duplicate(self, index: int, value: Any) -> SchemaError:
        return SchemaError(
            f"{self.where(index, {self.id_field: value})}: duplicate {self.id_field} {value!r}",
            hint="Example ids must be unique within a split",
        )

    def first_duplicate(self, shards: Sequence[Path], pending: Sequence[tuple[int, Any]] = ()) -> SchemaError | None:
        """The first repeated id among the written shards followed by ``pending`` (example number,
        id) pairs not yet written, reading back only the ids whose hash is a suspect."""
        wanted = self.ids.repeated() | {mixed(v) for _, v in pending}
        if not wanted:
            return None
        first: dict[Any, int] = {}

        def written() -> Iterator[tuple[int, Any]]:
            n = 0
            for shard in shards:
                for batch in pq.ParquetFile(shard).iter_batches(batch_size=self.batch_rows, columns=[self.id_field]):
                    for i, v in enumerate(batch.column(0).to_pylist()):
                        yield n + i, v
                    n += batch.num_rows

        for index, v in itertools.chain(written(), pending):
            if mixed(v) not in wanted:
                continue
            if v in first:
                return self.duplicate(index, v)
            first[v] = index
        return None

    def _raise_bad_value(self, rows: list[dict], start: int, exc: Exception) -> NoReturn:
        for n in self.plain_schema.names:
            values = [ex[n] for ex in rows]
            typ = self.schema.field(n).type
            try:
                pa.array(values, type=typ)
            except (pa.ArrowInvalid, pa.ArrowTypeError, TypeError, OverflowError) as col_exc:
                raise self._bad_value(n, values, typ, rows, start, col_exc) from None
        raise SchemaError(f"{self.config.name}/{self.split}: examples do not fit the features ({exc})")

    def _bad_value(self, name: str, values: list, typ: pa.DataType, rows: Sequence[dict] | _Rows,
                   start: int, exc: Exception) -> SchemaError:
        """The error naming the first value of column ``name`` that does not fit ``typ``."""
        bad = self._find_bad(values, typ)
        return SchemaError(
            f"{self.where(start + bad, rows[bad])}: field {name!r} value {values[bad]!r} "
            f"does not fit feature {self.features[name]!r} ({exc})",
            hint="Fix the builder or the declared features",
        )

    def _labels(self, feat: ClassLabel, name: str, values: list, rows: Sequence[dict] | _Rows,
                start: int) -> list:
        types = set(map(type, values))  # C-level maps and sets: no Python frame a row
        if types <= {int}:
            lo, hi = (min(values), max(values)) if values else (0, 0)
            if -1 <= lo and hi < feat.num_classes:
                return values
        # names as the ClassLabel spells them map in one pass; anything else (an int, a name
        # with spaces or digits that str2int reads, a bad value) takes the row-by-row path
        index = {n: i for i, n in enumerate(feat.names)}
        if types <= {str} and set(values) <= index.keys():
            return list(map(index.__getitem__, values))
        return [self._label(feat, name, v, start + i, rows[i]) for i, v in enumerate(values)]

    @staticmethod
    def _find_bad(values: list, typ: pa.DataType) -> int:
        for i, v in enumerate(values):
            try:
                pa.array([v], type=typ)
            except (pa.ArrowInvalid, pa.ArrowTypeError, TypeError, OverflowError):
                return i
        return 0

    def _label(self, feat: ClassLabel, name: str, value: Any, index: int, ex: dict) -> int:
        if isinstance(value, str):
            try:
                return feat.str2int(value)
            except ValueError:
                raise SchemaError(
                    f"{self.where(index, ex)}: label {name!r} is {value!r}; expected one of {feat.names}",
                    hint="Fix the builder or the ClassLabel names",
                ) from None
        if isinstance(value, bool) or not isinstance(value, int) or not -1 <= value < feat.num_classes:
            raise SchemaError(
                f"{self.where(index, ex)}: label {name!r} is {value!r}; expected an int in "
                f"[0, {feat.num_classes}) or -1 for unlabeled, or one of {feat.names}",
                hint="Fix the builder or the ClassLabel names",
            )
        return value



class _Rows:
    """Columns read as rows, built only for an error message (``rows[i]`` is example i's dict)."""

    def __init__(self, columns: dict[str, list]) -> None:
        self.columns = columns

    def __getitem__(self, i: int) -> dict:
        return {n: v[i] for n, v in self.columns.items()}
