"""The feature types builders declare, without importing ``datasets``.

``import datasets`` costs about 0.6 s (pandas, huggingface_hub, ...), more than a small build's
rows; a build only needs three things from a config's features: their Arrow schema, their
JSON form for ``release.json`` and the parquet metadata, and their YAML form for the card. This
module gives those for the types the builders use, under the names ``datasets`` uses, so a
builder reads the same either way::

    from benchsmith.features import ClassLabel, Features, List, Value

    Features({"id": Value("string"), "label": ClassLabel(names=["no", "yes"]),
              "tokens": List(Value("string")), "atoms": List({"role": Value("string")})})

Equal to ``datasets``, by contract (tests/test_core_features.py round-trips every config of
every builder through ``datasets.Features.from_dict`` and compares):

* :meth:`Features.to_dict` is ``datasets.Features(...).to_dict()`` (same keys, same order),
* :attr:`Features.arrow_schema` is ``datasets.Features(...).arrow_schema``, metadata included
  (``{"huggingface": {"info": {"features": ...}}}``: what ``load_dataset`` reads back),
* :meth:`Features.to_yaml_list` is ``datasets.Features(...)._to_yaml_list()`` (the card's
  ``dataset_info.features``).

A type here equals its ``datasets`` twin (``Value("string") == datasets.Value("string")``, both
ways round), so a loaded Dataset's features compare equal to a config's. A builder may still
declare ``datasets.Features``: :func:`as_features` (called by :class:`~benchsmith.builder.Config`)
converts it through its ``to_dict()``. Only ``Value``, ``ClassLabel``, ``List``/``Sequence``,
``LargeList`` and nested dicts exist here; anything else (Image, Audio, Translation, ArrayXD)
raises ``ValueError`` from :func:`as_features`, naming the type.

pyarrow is imported only when a schema is asked for: ``benchsmith list`` imports the builders
(and so this module) and must stay light.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = ["ClassLabel", "Features", "LargeList", "List", "Sequence", "Value", "as_features"]

# datasets' own normalisation of two pyarrow aliases (datasets.Value.__post_init__)
_DTYPE_ALIASES = {"double": "float64", "float": "float32"}


def _dtype_to_arrow(dtype: str) -> Any:
    """The pyarrow type of a ``Value`` dtype, as ``datasets.features.string_to_arrow`` maps it."""
    import pyarrow as pa

    for name in (dtype, dtype + "_"):  # "bool" is pa.bool_
        factory = getattr(pa, name, None)
        if callable(factory) and name not in ("list_", "struct", "large_list"):
            try:
                typ = factory()
            except TypeError:
                break  # a parametrised type (timestamp, decimal): spelled with its parameters
            if isinstance(typ, pa.DataType):
                return typ
    try:
        return pa.type_for_alias(dtype)  # "timestamp[ms]", "date32[day]", ...
    except ValueError:
        raise ValueError(f"Value dtype {dtype!r} is not supported by benchsmith.features") from None


def _same(a: Any, b: Any) -> bool:
    """Equality with a ``datasets`` twin: same feature type name and same serialised form."""
    return type(b).__name__ == type(a).__name__ and _to_dict(a) == _to_dict(b)


@dataclass(eq=False)
class Value:
    """A scalar column: ``dtype`` is a pyarrow type name (``string``, ``int32``, ``bool``...)."""

    dtype: str
    id: str | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        self.dtype = _DTYPE_ALIASES.get(self.dtype, self.dtype)

    @property
    def pa_type(self) -> Any:
        return _dtype_to_arrow(self.dtype)

    def __call__(self) -> Any:
        return self.pa_type

    def __eq__(self, other: object) -> bool:
        return _same(self, other)

    __hash__ = None  # type: ignore[assignment]  # mutable, like datasets.Value

    def __repr__(self) -> str:
        return f"Value('{self.dtype}')"


@dataclass(eq=False)
class ClassLabel:
    """An integer label with names (stored as int64; -1 means unlabeled)."""

    # either may be left out when built; __post_init__ fills in the other, so after it both are set
    names: list[str] = None  # type: ignore[assignment]
    num_classes: int = field(default=None, repr=False)  # type: ignore[assignment]
    id: str | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        if self.names is None:
            if self.num_classes is None:
                raise ValueError("ClassLabel needs names or num_classes")
            self.names = [str(i) for i in range(self.num_classes)]
        elif isinstance(self.names, str) or not isinstance(self.names, Iterable):
            raise TypeError(f"ClassLabel names must be a list, not {type(self.names).__name__}")
        self.names = list(self.names)
        if self.num_classes is None:
            self.num_classes = len(self.names)
        elif self.num_classes != len(self.names):
            raise ValueError(f"ClassLabel has {len(self.names)} names but num_classes={self.num_classes}")
        self._str2int = {str(n): i for i, n in enumerate(self.names)}
        if len(self._str2int) != len(self.names):
            raise ValueError("ClassLabel names must be unique")

    @property
    def pa_type(self) -> Any:
        import pyarrow as pa

        return pa.int64()

    dtype = "int64"

    def __call__(self) -> Any:
        return self.pa_type

    def str2int(self, value: str) -> int:
        """A name's index, read as ``datasets.ClassLabel.str2int`` reads one string: the name,
        the name without surrounding spaces, or an index written as digits (-1 allowed)."""
        text = str(value)
        index = self._str2int.get(text)
        if index is None:
            index = self._str2int.get(text.strip())
        if index is None:
            try:
                index = int(text)
            except ValueError:
                raise ValueError(f"Invalid string class label {text}") from None
            if not -1 <= index < self.num_classes:
                raise ValueError(f"Invalid string class label {text}")
        return index

    def int2str(self, value: int) -> str:
        if not 0 <= value < self.num_classes:
            raise ValueError(f"Invalid integer class label {value:d}")
        return self.names[int(value)]

    def __eq__(self, other: object) -> bool:
        return _same(self, other)

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"ClassLabel(names={self.names!r})"


class Sequence:
    """``datasets.Sequence``: a :class:`List` of ``feature``, except that a dict of features
    becomes a dict of lists (TFDS's convention, kept by ``datasets`` for compatibility)."""

    feature: Any  # set by the List that __new__ makes

    def __new__(cls, feature: Any = None, length: int = -1, **kwargs: Any) -> Any:
        if cls is Sequence and isinstance(feature, dict) and any(
            not isinstance(sub, List) for sub in feature.values()
        ):
            return {key: List(value, length=length, **kwargs) for key, value in feature.items()}
        return super().__new__(List)


@dataclass(eq=False)
class List(Sequence):
    """A list column of ``feature`` (a feature or a dict of them); ``length`` -1 is any length."""

    feature: Any
    length: int = -1
    id: str | None = field(default=None, repr=False)

    def __call__(self) -> Any:
        import pyarrow as pa

        return pa.list_(_arrow_type(self.feature), self.length)

    def __eq__(self, other: object) -> bool:
        return _same(self, other)

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"List({self.feature}" + (f", length={self.length})" if self.length != -1 else ")")


@dataclass(eq=False)
class LargeList:
    """A list column with 64-bit offsets."""

    feature: Any
    id: str | None = field(default=None, repr=False)

    def __call__(self) -> Any:
        import pyarrow as pa

        return pa.large_list(_arrow_type(self.feature))

    def __eq__(self, other: object) -> bool:
        return _same(self, other)

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"LargeList({self.feature})"


_TYPES: dict[str, type] = {"Value": Value, "ClassLabel": ClassLabel, "List": List, "LargeList": LargeList}


def _arrow_type(feature: Any) -> Any:
    import pyarrow as pa

    if isinstance(feature, dict):
        return pa.struct({k: _arrow_type(v) for k, v in feature.items()})
    if isinstance(feature, list | tuple):  # the old [feature] spelling of a list
        return pa.list_(_arrow_type(feature[0]))
    return feature()


def _to_dict(feature: Any) -> Any:
    """The JSON form ``datasets``' ``asdict`` gives: declared fields that differ from their
    default (``names`` always), then ``_type``; dicts key by key."""
    if isinstance(feature, dict):
        return {k: _to_dict(v) for k, v in feature.items()}
    if isinstance(feature, list | tuple):
        return {"feature": _to_dict(feature[0]), "_type": "List"}
    if isinstance(feature, Value):
        out: dict[str, Any] = {"dtype": feature.dtype}
    elif isinstance(feature, ClassLabel):
        out = {"names": list(feature.names or [])}
    elif isinstance(feature, List):
        out = {"feature": _to_dict(feature.feature)}
        if feature.length != -1:
            out["length"] = feature.length
    elif isinstance(feature, LargeList):
        out = {"feature": _to_dict(feature.feature)}
    elif hasattr(feature, "_type") and hasattr(feature, "__dataclass_fields__"):
        return _from_foreign(feature)  # a datasets type: through its own serialised form
    else:
        raise ValueError(f"feature {feature!r} ({type(feature).__name__}) is not one of "
                         f"{', '.join(_TYPES)} or a dict of them")
    if feature.id is not None:
        out["id"] = feature.id
    out["_type"] = type(feature).__name__
    return out


def _from_foreign(feature: Any) -> dict[str, Any]:
    # datasets' asdict of one feature, kept to the types this module has
    from datasets.utils.py_utils import asdict

    out = asdict(feature)
    if out.get("_type") not in _TYPES:
        raise ValueError(f"feature type {out.get('_type')!r} is not supported by benchsmith.features "
                         f"(only {', '.join(_TYPES)} and dicts of them)")
    return out


def _from_dict(obj: Any) -> Any:
    """The inverse of :func:`_to_dict` (``datasets.features.generate_from_dict``)."""
    if isinstance(obj, list):  # the old [feature] spelling
        return List(_from_dict(obj[0]))
    if not isinstance(obj, Mapping):
        raise ValueError(f"a feature must be a mapping, not {type(obj).__name__}: {obj!r}")  # noqa: TRY004 - bad JSON, one error type
    if "_type" not in obj or isinstance(obj["_type"], dict):  # a struct (a field may be named _type)
        return {k: _from_dict(v) for k, v in obj.items()}
    obj = dict(obj)
    kind = obj.pop("_type")
    if kind == "Sequence":  # datasets < 4 wrote list columns as Sequence
        return Sequence(feature=_from_dict(obj.pop("feature")), **obj)
    if kind in ("List", "LargeList"):
        return _TYPES[kind](_from_dict(obj.pop("feature")), **obj)
    if kind not in _TYPES:
        raise ValueError(f"feature type {kind!r} is not supported by benchsmith.features "
                         f"(only {', '.join(_TYPES)} and dicts of them)")
    return _TYPES[kind](**obj)


class Features(dict):
    """A config's columns: name -> feature, in column order (``datasets.Features``' interface
    for what a build needs)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        for name, feature in self.items():
            if isinstance(feature, list | tuple):  # datasets >= 4 reads [feature] as List(feature)
                self[name] = List(feature[0])

    @classmethod
    def from_dict(cls, dic: Mapping[str, Any]) -> Features:
        return cls(_from_dict(dict(dic)))

    def to_dict(self) -> dict[str, Any]:
        return _to_dict(dict(self))

    @property
    def type(self) -> Any:
        return _arrow_type(dict(self))

    @property
    def arrow_schema(self) -> Any:
        """The Arrow schema with the ``huggingface`` metadata ``datasets`` writes and reads back."""
        import pyarrow as pa

        return pa.schema(self.type).with_metadata(
            {"huggingface": json.dumps({"info": {"features": self.to_dict()}})}
        )

    def to_yaml_list(self) -> list[dict[str, Any]]:
        """The card's ``dataset_info.features`` (``datasets.Features._to_yaml_list``)."""
        return _yaml_struct(self.to_dict())

    def __reduce__(self) -> tuple[Any, ...]:
        return Features, (dict(self),)


def _yaml_simplify(feature: dict[str, Any]) -> dict[str, Any]:
    for key in ("large_list", "list", "sequence"):
        inner = feature.get(key)
        if isinstance(inner, dict) and list(inner) == ["dtype"]:
            feature[key] = inner["dtype"]
        elif isinstance(inner, dict) and list(inner) == ["struct"]:
            feature[key] = inner["struct"]
    label = feature.get("class_label")
    if isinstance(label, dict) and isinstance(label.get("names"), list):
        label["names"] = {str(i): n for i, n in enumerate(label["names"])}  # the Hub wants string keys
    return feature


def _yaml_inner(obj: dict[str, Any]) -> dict[str, Any]:
    obj = dict(obj)
    kind = obj.pop("_type", None)
    if kind in ("List", "LargeList"):
        inner = obj.pop("feature")
        return _yaml_simplify({"list" if kind == "List" else "large_list": _yaml_inner(inner), **obj})
    if kind == "Value":
        return obj
    if kind == "ClassLabel":
        return {"dtype": _yaml_simplify({"class_label": obj})}
    return {"struct": [{"name": name, **_yaml_inner(sub)} for name, sub in obj.items()]}


def _yaml_struct(features: dict[str, Any]) -> list[dict[str, Any]]:
    return _yaml_inner(features)["struct"]


def as_features(features: Any) -> Features:
    """``features`` as :class:`Features`: itself, or a ``datasets.Features`` (or a plain dict of
    features) converted through its JSON form (``ValueError`` for a type this module lacks)."""
    if type(features) is Features:
        return features
    if isinstance(features, Mapping):
        return Features.from_dict(_to_dict(dict(features)))
    raise ValueError(f"features must be a Features mapping, not {type(features).__name__}")
