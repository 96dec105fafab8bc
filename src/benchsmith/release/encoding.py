"""Row encoding: a split's example dicts checked against the config's features and turned into
Arrow record batches, column-wise (:class:`SplitEncoder`), ids checked for repeats."""

from __future__ import annotations

import itertools
import operator
from collections.abc import Sequence
from typing import Any, NoReturn

import pyarrow as pa

from benchsmith.builder import Config
from benchsmith.errors import SchemaError
from benchsmith.features import ClassLabel


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
        self.ids: set[Any] = set()  # the split's ids so far
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
            self.check_ids(list(map(operator.itemgetter(self.id_field), rows)), start)
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

    def check_ids(self, ids: list, start: int) -> None:
        """Record the batch's ids; the first repeat in example order is a SchemaError."""
        batch = set(ids)
        if len(batch) == len(ids) and self.ids.isdisjoint(batch):
            self.ids |= batch
            return
        for i, v in enumerate(ids):  # find the first repeat, for the message
            if v in self.ids:
                raise self.duplicate(start + i, v)
            self.ids.add(v)
        raise AssertionError("unreachable: a batch with a repeat raised above")

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
