"""Row encoding: a split's example dicts checked against the config's features and turned into
Arrow record batches, column-wise (:class:`SplitEncoder`); ids are checked for repeats once the
split is written (:meth:`SplitEncoder.first_duplicate`)."""

from __future__ import annotations

import itertools
import operator
from collections.abc import Sequence
from pathlib import Path
from typing import Any, NoReturn

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
from datasets import ClassLabel

from benchsmith.builder import Config
from benchsmith.errors import SchemaError


class SplitEncoder:
    """Turns example dicts into record batches, column-wise."""

    def __init__(self, config: Config, split: str, id_field: str | None):
        self.config = config
        self.split = split
        self.features = config.features
        self.schema = self.features.arrow_schema
        self.names = list(self.features)
        self.name_set = set(self.names)
        self.id_field = id_field if id_field in self.name_set else None
        self.class_labels = {
            n: f for n, f in self.features.items() if isinstance(f, ClassLabel)
        }
        self.id_hashes: list[np.ndarray] = []  # hash() of each batch's ids (first_duplicate)
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
            ids = map(operator.itemgetter(self.id_field), rows)
            self.id_hashes.append(np.fromiter(map(hash, ids), dtype=np.int64, count=len(rows)))
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

    def first_duplicate(self, shards: Sequence[Path]) -> SchemaError | None:
        """The error naming the split's first repeated id in example order, or None.

        The split's ids are held as 64-bit hashes, 8 bytes a row (a ``set`` of the ids grew a
        build's peak RSS by ~130 MB a million rows): only ids whose hash repeats are read back from
        the written ``shards`` and compared, so a hash collision is never taken for a repeat."""
        if not self.id_hashes:
            return None
        hashes = np.sort(np.concatenate(self.id_hashes))
        suspects = set(hashes[1:][hashes[1:] == hashes[:-1]].tolist())
        if not suspects:
            return None
        seen: set[Any] = set()
        index = 0
        for shard in shards:
            for batch in pq.ParquetFile(shard).iter_batches(columns=[self.id_field]):
                for value in batch.column(0).to_pylist():
                    if hash(value) in suspects:
                        if value in seen:
                            return self.duplicate(index, value)
                        seen.add(value)
                    index += 1
        return None

    def duplicate(self, index: int, value: Any) -> SchemaError:
        return SchemaError(
            f"{self.where(index, {self.id_field: value})}: duplicate {self.id_field} {value!r}",
            hint="Example ids must be unique within a split",
        )

    def _raise_bad_value(self, rows: list[dict], start: int, exc: Exception) -> NoReturn:
        for n in self.plain_schema.names:
            values = [ex[n] for ex in rows]
            typ = self.schema.field(n).type
            try:
                pa.array(values, type=typ)
            except (pa.ArrowInvalid, pa.ArrowTypeError, TypeError, OverflowError) as col_exc:
                raise self._bad_value(n, values, typ, rows, start, col_exc) from None
        raise SchemaError(f"{self.config.name}/{self.split}: examples do not fit the features ({exc})")

    def _bad_value(self, name: str, values: list, typ: pa.DataType, rows: Sequence[dict],
                   start: int, exc: Exception) -> SchemaError:
        """The error naming the first value of column ``name`` that does not fit ``typ``."""
        bad = self._find_bad(values, typ)
        return SchemaError(
            f"{self.where(start + bad, rows[bad])}: field {name!r} value {values[bad]!r} "
            f"does not fit feature {self.features[name]!r} ({exc})",
            hint="Fix the builder or the declared features",
        )

    def _labels(self, feat: ClassLabel, name: str, values: list, rows: Sequence[dict],
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
