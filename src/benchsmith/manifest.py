"""``release.json`` read against a schema into typed, frozen release metadata.

A release folder is untrusted input (it may come from anyone, or have been edited), so
:func:`read_manifest` parses its ``release.json`` into :class:`ReleaseInfo`,
:class:`ConfigInfo` and :class:`SplitInfo` (the reading side of ``datasets``' ``DatasetInfo``
and ``SplitInfo``) and refuses anything outside the schema below. Every defect is one
:class:`~benchsmith.errors.ReleaseError` (exit 2) naming ``release.json`` and the JSON path of
the offending value, e.g. ``configs.et.splits.test.files[0]``; nothing is read, written or
followed on the strength of a value that did not pass.

Schema (keys not listed are kept as they are, in ``extra``, and written back by ``to_dict``):

==================================  ==============================================================
key                                 rule
==================================  ==============================================================
``name``                            required; a builder name: ``[a-z0-9][a-z0-9_-]*``, at most 100
                                    characters (it becomes a registry folder, so no ``/``, ``..``)
``version``                         required; semver ``MAJOR.MINOR.PATCH``, ASCII digits, no
                                    leading zeros (``benchsmith.semver``)
``configs``                         required; ``{config: ConfigInfo}``, at least one; a config name
                                    is ``[A-Za-z0-9][A-Za-z0-9._-]*`` (no ``/``, not ``..``)
``configs.C.features``              required; ``datasets.Features.to_dict()`` form (see below)
``configs.C.splits``                required; ``{split: SplitInfo}``, at least one; split names as
                                    ``datasets`` allows them (``\\w+(\\.\\w+)*``, ASCII)
``configs.C.splits.S.num_examples`` required; int >= 0 (a bool is not an int)
``configs.C.splits.S.num_bytes``    int >= 0 (0 when absent)
``configs.C.splits.S.fingerprint``  required; 64 lowercase hex digits
``configs.C.splits.S.files``        required; non-empty list of relative POSIX paths under
                                    ``data/``: no absolute path, no ``..`` or ``.`` part, no empty
                                    part, no backslash, no NUL; each file listed once in the release
``configs.C.splits.S.sha256``       list of 64 lowercase hex digits, one per file (absent in
                                    releases written before per-file digests)
``configs.C.description``           string
``configs.C.languages``             list of strings
``configs.C.policy``, ``.metadata`` objects (read by ``Policy.from_dict`` and the builders)
``configs.C.skipped_splits``        ``{split: reason}``
``skipped_configs``                 ``{config: {split: reason}}``
``partial``, ``reproducible``       booleans
``missing_configs``                 list of config names
``errata_applied``, ``_pending``    lists of errata: string ``id``, ``version``, ``what`` (applied
                                    also ``fix``, ``evidence``) and a list ``items``
``sources``                         ``{source: object}``; a source's ``files`` ``{path: {status:
                                    string, sha256: 64 hex or null, size: int >= 0 or null}}``
``tool_versions``                   required; ``{tool: version string}`` naming benchsmith,
                                    datasets and pyarrow
``seed``                            int or null
``pretty_name``, ``description``,   string or null
``license``, ``homepage``,
``citation``, ``release_notes``,
``release_date``, ``builder``,
``paperswithcode_id``,
``fingerprint_definition``
``task_categories``, ``task_ids``,  lists of strings
``multilinguality``,
``source_datasets``
==================================  ==============================================================

Decisions:

* **Files resolve inside the release.** The schema makes a ``files`` entry a plain relative
  path under ``data/``; :meth:`benchsmith.release.Release.files` then checks the filesystem
  before every read: ``lstat`` of each step (``data``, ``data/<config>``, the file) finds no
  symlink, and the last is a regular file, so the path cannot leave the release folder.
* **Features are checked in two steps.** Their shape (objects and lists as
  ``datasets.Features.from_dict`` reads them, a string ``_type``, a ClassLabel's ``names`` a list
  of distinct strings or its ``num_classes`` an int >= 0, a ``Value``'s string ``dtype``, a
  list type's ``feature``) when the manifest is read, so a defect is named by its key path; the
  full parse through ``datasets.Features.from_dict`` (unknown ``_type``, an unknown dtype) on first use of
  :attr:`ConfigInfo.features` (cached), and always by ``Release.check_features``, which
  ``show``, ``evaluate`` and ``publish`` run. Either way a defect is a ``ReleaseError`` naming
  the config and the feature key, never a ``ValueError``/``AttributeError``/``ArrowInvalid``.
* **The JSON itself** must be one UTF-8 object without duplicate keys (the last one would
  silently win) or ``NaN``/``Infinity``, nested at most ``MAX_DEPTH`` deep, in a regular file
  (not a symlink) of at most ``MAX_MANIFEST_BYTES``.
* **What the code reads is required.** An erratum carries every field the card and
  croissant.json print (applied: ``id``, ``version``, ``what``, ``fix``, ``evidence``, ``items``;
  pending: ``id``, ``version``, ``what``, ``items``), and ``tool_versions`` names benchsmith,
  datasets and pyarrow: the schema refuses what a later step could not handle.
* **Round trip.** ``ReleaseInfo.from_dict(d).to_dict() == d`` for every manifest that passes,
  key order included; unknown keys are kept, so a manifest written by a newer benchsmith loses
  nothing when read and written back by this one.
"""

from __future__ import annotations

import copy
import json
import os
import re
import stat
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from types import MappingProxyType
from typing import Any

import datasets
import pyarrow as pa

from benchsmith.errors import EnvironmentFault, ReleaseError
from benchsmith.policy import Policy
from benchsmith.registry import MANIFEST

#: a release.json larger than this is refused before it is parsed (MuCoW's, the largest, is ~100 kB)
MAX_MANIFEST_BYTES = 64 << 20
#: how deep objects and lists may nest in release.json (the deepest a build writes: features of
#: nested sequences, ~10); the card, the report and copies recurse, so a limit far below Python's
#: recursion limit keeps every reader clear of it
MAX_DEPTH = 64

NAME_RE = re.compile(r"[a-z0-9][a-z0-9_-]{0,99}", re.ASCII)
VERSION_RE = re.compile(r"(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)", re.ASCII)
CONFIG_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,199}", re.ASCII)
SPLIT_RE = re.compile(r"\w+(\.\w+)*", re.ASCII)
HEX64_RE = re.compile(r"[0-9a-f]{64}", re.ASCII)
DATA_DIR = "data"

_PLAIN_KEY = re.compile(r"[A-Za-z0-9_-]+", re.ASCII)
_HINT = "release.json was edited or damaged; rebuild the release with `benchsmith build` (or restore it)"


class _Where:
    """A JSON path (``configs.et.splits.test.files[0]``) and the file it is in, for messages.

    The path is spelled out only for an error: a manifest has thousands of values to check."""

    __slots__ = ("file", "parent", "part")

    def __init__(self, file: Path | None, part: str | int = "", parent: _Where | None = None) -> None:
        self.file, self.parent, self.part = file, parent, part

    @property
    def path(self) -> str:
        if self.parent is None:
            return str(self.part)
        head = self.parent.path
        if isinstance(self.part, int):
            return f"{head}[{self.part}]"
        if not _PLAIN_KEY.fullmatch(self.part):
            return f"{head}[{self.part!r}]"
        return f"{head}.{self.part}" if head else self.part

    def key(self, key: str) -> _Where:
        return _Where(self.file, key, self)

    def index(self, i: int) -> _Where:
        return _Where(self.file, i, self)

    def error(self, what: str, expected: str, hint: str = _HINT) -> ReleaseError:
        path = self.path
        where = f"{path}: " if path else ""
        return ReleaseError(f"{where}{what}; expected {expected}", path=self.file, hint=hint)


def _brief(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def _kind(value: Any) -> str:
    return {dict: "an object", list: "a list", str: "a string", bool: "a boolean", int: "an integer",
            float: "a number", type(None): "null"}.get(type(value), type(value).__name__)


# --------------------------------------------------------------------------- value checks


def _obj(value: Any, where: _Where, what: str = "an object") -> dict[str, Any]:
    if not isinstance(value, dict):
        raise where.error(f"{_kind(value)} {_brief(value)}", what)
    return value


def _str(value: Any, where: _Where) -> str:
    if not isinstance(value, str):
        raise where.error(f"{_kind(value)} {_brief(value)}", "a string")
    return value


def _opt_str(value: Any, where: _Where) -> str | None:
    return None if value is None else _str(value, where)


def _bool(value: Any, where: _Where) -> bool:
    if not isinstance(value, bool):
        raise where.error(f"{_kind(value)} {_brief(value)}", "true or false")
    return value


def _count(value: Any, where: _Where) -> int:
    if type(value) is not int or value < 0:  # bool is an int subclass, and never a count
        raise where.error(f"{_kind(value)} {_brief(value)}", "an integer >= 0")
    return value


def _opt_int(value: Any, where: _Where) -> int | None:
    if value is not None and type(value) is not int:
        raise where.error(f"{_kind(value)} {_brief(value)}", "an integer or null")
    return value


def _str_list(value: Any, where: _Where) -> tuple[str, ...]:
    if not isinstance(value, list):
        raise where.error(f"{_kind(value)} {_brief(value)}", "a list of strings")
    return tuple(_str(v, where.index(i)) for i, v in enumerate(value))


def _str_map(value: Any, where: _Where) -> Mapping[str, str]:
    return MappingProxyType({k: _str(v, where.key(k)) for k, v in _obj(value, where).items()})


def _hex64(value: Any, where: _Where) -> str:
    if not isinstance(value, str) or not HEX64_RE.fullmatch(value):
        raise where.error(f"{_kind(value)} {_brief(value)}", "a sha256: 64 lowercase hex digits")
    return value


def _name(value: Any, where: _Where, pattern: re.Pattern[str], expected: str) -> str:
    if not isinstance(value, str) or not pattern.fullmatch(value) or value in (".", ".."):
        raise where.error(f"{_kind(value)} {_brief(value)}", expected)
    return value


def check_name(value: Any, where: _Where) -> str:
    return _name(value, where, NAME_RE, "a builder name: lowercase letters, digits, '-' and '_' "
                 "(starting with a letter or digit, at most 100 characters)")


def check_version(value: Any, where: _Where) -> str:
    return _name(value, where, VERSION_RE, "a semantic version MAJOR.MINOR.PATCH such as 1.0.0")


def check_config_name(value: Any, where: _Where) -> str:
    return _name(value, where, CONFIG_RE, "a config name: letters, digits, '.', '_' and '-', "
                 "starting with a letter or digit")


def check_split_name(value: Any, where: _Where) -> str:
    return _name(value, where, SPLIT_RE, "a split name: letters, digits and '_', parts joined by '.'")


def check_data_path(value: Any, where: _Where) -> str:
    """A ``files`` entry: a plain relative POSIX path under ``data/`` (see the module docstring)."""
    expected = "a relative path under data/ such as 'data/<config>/<split>-00000-of-00001.parquet'"
    if not isinstance(value, str):
        raise where.error(f"{_kind(value)} {_brief(value)}", expected)
    problem = None
    if "\x00" in value:
        problem = "contains a NUL character"
    elif "\\" in value:
        problem = "contains a backslash"
    elif value.startswith("/"):
        problem = "is an absolute path"
    else:
        parts = value.split("/")
        if ".." in parts:
            problem = "goes up with '..'"
        elif any(p in ("", ".") for p in parts):
            problem = "has an empty or '.' part"
        elif parts[0] != DATA_DIR or len(parts) < 2:
            problem = "is not under data/"
    if problem:
        raise where.error(f"{_brief(value)} {problem}", expected)
    return value


# --------------------------------------------------------------------------- features


_LIST_TYPES = ("List", "LargeList", "Sequence")


def _check_feature(node: Any, where: _Where) -> None:
    """The shape ``datasets.features.generate_from_dict`` reads, checked key by key (an error names
    the key)."""
    if isinstance(node, list):
        if len(node) != 1:
            raise where.error(f"a list of {len(node)} features", "a list of exactly one feature (the item type)")
        _check_feature(node[0], where.index(0))
        return
    if not isinstance(node, dict):
        raise where.error(f"{_kind(node)} {_brief(node)}", "a feature: an object with a '_type', or an object "
                          "of named features")
    if "_type" not in node:  # a struct of named features
        for k, v in node.items():
            _check_feature(v, where.key(k))
        return
    kind = node["_type"]
    if not isinstance(kind, str):
        raise where.key("_type").error(f"{_kind(kind)} {_brief(kind)}", "a feature type name such as 'Value'")
    if kind == "Value" and not isinstance(node.get("dtype"), str):
        raise where.key("dtype").error(f"{_kind(node.get('dtype'))} {_brief(node.get('dtype'))}",
                                       "a dtype name such as 'string' or 'int32'")
    if kind == "ClassLabel":
        names, n = node.get("names"), node.get("num_classes")
        if names is not None:
            if not isinstance(names, list) or not all(isinstance(x, str) for x in names):
                raise where.key("names").error(f"{_kind(names)} {_brief(names)}", "a list of label names (strings)")
            if len(set(names)) != len(names):
                dup = next(x for i, x in enumerate(names) if x in names[:i])
                raise where.key("names").error(f"label {dup!r} twice", "distinct label names")
        if n is not None and (type(n) is not int or n < 0):
            raise where.key("num_classes").error(f"{_kind(n)} {_brief(n)}", "an integer >= 0")
        if names is None and n is None:
            raise where.error("a ClassLabel with neither 'names' nor 'num_classes'", "one of them")
        if names is not None and n is not None and n != len(names):
            raise where.key("num_classes").error(f"{n} classes for {len(names)} names", "as many classes as names")
    if kind in _LIST_TYPES:
        if "feature" not in node:
            raise where.error(f"a {kind} without 'feature'", "the item type in 'feature'")
        _check_feature(node["feature"], where.key("feature"))
        length = node.get("length", -1)
        if type(length) is not int or length < -1:
            raise where.key("length").error(f"{_kind(length)} {_brief(length)}", "an integer >= -1")


def check_features(value: Any, where: _Where) -> Mapping[str, Any]:
    """A config's ``features``: an object of named features, each of a shape datasets reads."""
    feats = _obj(value, where, "an object of named features")
    if not feats:
        raise where.error("no features", "at least one named feature")
    if "_type" in feats and isinstance(feats["_type"], str):
        raise where.error("a single feature", "an object of named features")
    for k, v in feats.items():
        _check_feature(v, where.key(k))
    return feats


def parse_features(value: Mapping[str, Any], where: _Where) -> datasets.Features:
    """``datasets.Features.from_dict`` with one typed error naming the feature at fault."""
    failures = (ValueError, TypeError, AttributeError, KeyError, IndexError, RecursionError, pa.ArrowException)

    def parse(d: Mapping[str, Any]) -> datasets.Features:
        feats = datasets.Features.from_dict(dict(d))  # generate_from_dict copies what it changes
        _ = feats.arrow_schema  # a dtype pyarrow does not know fails here, not at the first read
        return feats

    try:
        return parse(value)
    except failures as exc:
        error: BaseException = exc
    for k, v in value.items():  # name the first feature that fails on its own
        try:
            parse({k: v})
        except failures as exc:
            error, where = exc, where.key(k)
            break
    what = str(error).split("\n")[0][:200] or type(error).__name__
    raise where.error(f"datasets cannot read this feature ({type(error).__name__}: {what})",
                      "a feature as datasets.Features.to_dict() writes it") from None


# --------------------------------------------------------------------------- typed metadata


def _frozen(mapping: Mapping[str, Any]) -> Mapping[str, Any]:
    return MappingProxyType(dict(mapping))


def _extra(data: Mapping[str, Any], known: Mapping[str, Any]) -> Mapping[str, Any]:
    return _frozen({k: v for k, v in data.items() if k not in known})


def _ordered(out: dict[str, Any], order: tuple[str, ...]) -> dict[str, Any]:
    """``out`` in the key order the manifest had (keys it did not have last, as written)."""
    if not order:
        return out
    rank = {k: i for i, k in enumerate(order)}
    return dict(sorted(out.items(), key=lambda kv: rank.get(kv[0], len(rank))))


def _thaw(value: Any) -> Any:
    """A plain JSON copy of a value this module froze (mappings -> dict, tuples -> list)."""
    if isinstance(value, Mapping):
        return {k: _thaw(v) for k, v in value.items()}
    if isinstance(value, tuple | list):
        return [_thaw(v) for v in value]
    return copy.deepcopy(value)


@dataclass(frozen=True)
class SplitInfo:
    """One split as ``release.json`` records it.

    For the readers written against the manifest dict, ``info["fingerprint"]`` and
    ``info.get("sha256")`` give the JSON values (lists, not tuples); new code uses the attributes.
    """

    name: str
    num_examples: int
    fingerprint: str
    files: tuple[str, ...]
    num_bytes: int = 0
    #: sha256 of each file, in ``files`` order; None for releases written before per-file digests
    sha256: tuple[str, ...] | None = None
    extra: Mapping[str, Any] = field(default_factory=dict)
    _order: tuple[str, ...] = field(default=(), repr=False, compare=False)

    KNOWN = ("num_examples", "num_bytes", "fingerprint", "files", "sha256")

    @classmethod
    def from_dict(cls, data: Any, name: str = "", *, where: _Where | None = None) -> SplitInfo:
        where = where or _Where(None)
        d = _obj(data, where)
        missing = [k for k in ("num_examples", "fingerprint", "files") if k not in d]
        if missing:
            raise where.error(f"no {', '.join(missing)}", "num_examples, fingerprint and files")
        files_where = where.key("files")
        if not isinstance(d["files"], list) or not d["files"]:
            raise files_where.error(f"{_kind(d['files'])} {_brief(d['files'])}", "a non-empty list of paths")
        files = tuple(check_data_path(f, files_where.index(i)) for i, f in enumerate(d["files"]))
        dup = next((i for i, f in enumerate(files) if f in files[:i]), None)
        if dup is not None:
            raise files_where.index(dup).error(f"{files[dup]!r} listed twice", "each file once")
        sha = None
        if "sha256" in d:
            sha_where = where.key("sha256")
            if not isinstance(d["sha256"], list) or len(d["sha256"]) != len(files):
                raise sha_where.error(f"{_kind(d['sha256'])} {_brief(d['sha256'])}",
                                      f"a list of {len(files)} sha256 digests, one per file")
            sha = tuple(_hex64(s, sha_where.index(i)) for i, s in enumerate(d["sha256"]))
        return cls(
            name=name,
            num_examples=_count(d["num_examples"], where.key("num_examples")),
            fingerprint=_hex64(d["fingerprint"], where.key("fingerprint")),
            files=files,
            num_bytes=_count(d.get("num_bytes", 0), where.key("num_bytes")),
            sha256=sha,
            extra=_extra(d, dict.fromkeys(cls.KNOWN)),
            _order=tuple(d),
        )

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"num_examples": self.num_examples, "num_bytes": self.num_bytes,
                               "fingerprint": self.fingerprint, "files": list(self.files)}
        if self.sha256 is not None:
            out["sha256"] = list(self.sha256)
        if self._order and "num_bytes" not in self._order and self.num_bytes == 0:
            del out["num_bytes"]  # absent in the manifest read: stays absent
        out.update(_thaw(self.extra))
        return _ordered(out, self._order)

    # read-only dict access for the readers written against the manifest dict
    def __getitem__(self, key: str) -> Any:
        data = self.to_dict()
        if key not in data:
            raise KeyError(key)
        return data[key]

    def get(self, key: str, default: Any = None) -> Any:
        return self.to_dict().get(key, default)


@dataclass(frozen=True)
class ConfigInfo:
    """One config (a ``load_dataset(path, name)`` name) as ``release.json`` records it."""

    name: str
    features_dict: Mapping[str, Any]
    splits: Mapping[str, SplitInfo]
    description: str = ""
    languages: tuple[str, ...] = ()
    policy: Mapping[str, Any] = field(default_factory=dict)
    metadata: Mapping[str, Any] = field(default_factory=dict)
    skipped_splits: Mapping[str, str] = field(default_factory=dict)
    extra: Mapping[str, Any] = field(default_factory=dict)
    _order: tuple[str, ...] = field(default=(), repr=False, compare=False)
    _where: _Where | None = field(default=None, repr=False, compare=False)

    KNOWN = ("description", "languages", "features", "policy", "metadata", "splits", "skipped_splits")

    @classmethod
    def from_dict(cls, data: Any, name: str = "", *, where: _Where | None = None) -> ConfigInfo:
        where = where or _Where(None)
        d = _obj(data, where)
        if not isinstance(d.get("splits"), dict) or "features" not in d:
            # the wording older tests and users know
            raise ReleaseError(f"{where.path + ': ' if where.path else ''}config {name!r} has no `splits` mapping "
                               "or no `features`", path=where.file, hint=_HINT)
        features = check_features(d["features"], where.key("features"))
        splits_where = where.key("splits")
        if not d["splits"]:  # the writer records a config without a built split in skipped_configs
            raise splits_where.error("no splits", "at least one split")
        splits = {s: SplitInfo.from_dict(v, check_split_name(s, splits_where.key(s)), where=splits_where.key(s))
                  for s, v in d["splits"].items()}
        return cls(
            name=name,
            features_dict=_frozen(features),
            splits=MappingProxyType(splits),
            description=_opt_str(d.get("description", ""), where.key("description")) or "",
            languages=_str_list(d.get("languages", []), where.key("languages")),
            policy=_frozen(_obj(d.get("policy", {}), where.key("policy"))),
            metadata=_frozen(_obj(d.get("metadata", {}), where.key("metadata"))),
            skipped_splits=_str_map(d.get("skipped_splits", {}), where.key("skipped_splits")),
            extra=_extra(d, dict.fromkeys(cls.KNOWN)),
            _order=tuple(d),
            _where=where,
        )

    @cached_property
    def features(self) -> datasets.Features:
        """The features through ``datasets.Features.from_dict`` (parsed once; a ReleaseError
        naming the config and the feature when datasets cannot read them). ``Release.features``
        hands out copies of it."""
        return parse_features(self.features_dict, (self._where or _Where(None)).key("features"))

    @cached_property
    def arrow_schema(self) -> pa.Schema:
        """The features' Arrow schema (computed once)."""
        return self.features.arrow_schema

    @cached_property
    def validation_policy(self) -> Policy:
        """The config's typed validation policy (``policy`` read by ``Policy.from_dict``; an unknown
        key is a ConfigError naming ``release.json configs.C.policy``)."""
        return Policy.from_dict(self.policy, where=f"release.json configs.{self.name}.policy")

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "description": self.description,
            "languages": list(self.languages),
            "features": _thaw(self.features_dict),
            "policy": _thaw(self.policy),
            "metadata": _thaw(self.metadata),
            "splits": {s: i.to_dict() for s, i in self.splits.items()},
            "skipped_splits": dict(self.skipped_splits),
        }
        if self._order:  # optional keys the manifest did not have stay absent
            out = {k: v for k, v in out.items() if k in self._order or k in ("features", "splits")}
        out.update(_thaw(self.extra))
        return _ordered(out, self._order)


#: the fields the card and croissant.json read of an erratum (``Erratum.to_dict`` writes them all)
_ERRATUM_APPLIED = ("id", "version", "what", "fix", "evidence")
_ERRATUM_PENDING = ("id", "version", "what")


def _errata(value: Any, where: _Where, fields: tuple[str, ...]) -> tuple[Mapping[str, Any], ...]:
    if not isinstance(value, list):
        raise where.error(f"{_kind(value)} {_brief(value)}", "a list of errata")
    out = []
    for i, e in enumerate(value):
        e = _obj(e, where.index(i), f"an erratum: an object with {', '.join(fields)} and items")
        for key in fields:
            _str(e.get(key), where.index(i).key(key))
        if not isinstance(e.get("items"), list):
            raise where.index(i).key("items").error(f"{_kind(e.get('items'))} {_brief(e.get('items'))}",
                                                    "a list of item ids")
        out.append(_frozen(e))
    return tuple(out)


#: the tools the card names (``Built by: benchsmith X, datasets Y, pyarrow Z``)
_TOOLS = ("benchsmith", "datasets", "pyarrow")


def _tool_versions(value: Any, where: _Where) -> Mapping[str, str]:
    tools = _str_map(value, where)
    for tool in _TOOLS:
        if tool not in tools:
            raise where.key(tool).error("missing", f"the {tool} version that built the release")
    return tools


def _sources(value: Any, where: _Where) -> Mapping[str, Any]:
    """``{source: {url, license, origin, files: {path: {sha256, size, status}}}}``: what the card
    and ``show`` read of it (the paths are names of raw files, never opened here)."""
    sources = _obj(value, where)
    for n, s in sources.items():
        s = _obj(s, where.key(n))
        files_where = where.key(n).key("files")
        for f, r in _obj(s.get("files", {}), files_where).items():
            rec = _obj(r, files_where.key(f), "an object with sha256, size and status")
            _str(rec.get("status"), files_where.key(f).key("status"))
            if rec.get("sha256") is not None:
                _hex64(rec["sha256"], files_where.key(f).key("sha256"))
            if rec.get("size") is not None:
                _count(rec["size"], files_where.key(f).key("size"))
    return _frozen(sources)


#: top-level keys read into typed fields: (key, checker, default when absent)
_TOP: tuple[tuple[str, Callable[[Any, _Where], Any], Any], ...] = (
    ("pretty_name", _opt_str, None),
    ("description", _opt_str, None),
    ("license", _opt_str, None),
    ("homepage", _opt_str, None),
    ("citation", _opt_str, None),
    ("task_categories", _str_list, ()),
    ("task_ids", _str_list, ()),
    ("multilinguality", _str_list, ()),
    ("source_datasets", _str_list, ()),
    ("paperswithcode_id", _opt_str, None),
    ("release_notes", _opt_str, None),
    ("release_date", _opt_str, None),
    ("builder", _opt_str, None),
    ("sources", _sources, MappingProxyType({})),
    ("skipped_configs", lambda v, w: MappingProxyType({c: _str_map(s, w.key(c)) for c, s in _obj(v, w).items()}),
     MappingProxyType({})),
    ("partial", _bool, False),
    ("missing_configs", _str_list, ()),
    ("errata_applied", lambda v, w: _errata(v, w, _ERRATUM_APPLIED), ()),
    ("errata_pending", lambda v, w: _errata(v, w, _ERRATUM_PENDING), ()),
    ("seed", _opt_int, None),
    ("reproducible", _bool, True),
    ("tool_versions", _tool_versions, MappingProxyType({})),
    ("fingerprint_definition", _opt_str, None),
)


@dataclass(frozen=True)
class ReleaseInfo:
    """A whole ``release.json``: name, version, configs and the release's metadata.

    ``from_dict`` checks everything against the schema of this module's docstring; ``to_dict``
    gives back the same dict (unknown keys and key order kept).
    """

    name: str
    version: str
    configs: Mapping[str, ConfigInfo]
    pretty_name: str | None = None
    description: str | None = None
    license: str | None = None
    homepage: str | None = None
    citation: str | None = None
    task_categories: tuple[str, ...] = ()
    task_ids: tuple[str, ...] = ()
    multilinguality: tuple[str, ...] = ()
    source_datasets: tuple[str, ...] = ()
    paperswithcode_id: str | None = None
    release_notes: str | None = None
    release_date: str | None = None
    builder: str | None = None
    sources: Mapping[str, Any] = field(default_factory=dict)
    skipped_configs: Mapping[str, Mapping[str, str]] = field(default_factory=dict)
    partial: bool = False
    missing_configs: tuple[str, ...] = ()
    errata_applied: tuple[Mapping[str, Any], ...] = ()
    errata_pending: tuple[Mapping[str, Any], ...] = ()
    seed: int | None = None
    reproducible: bool = True
    tool_versions: Mapping[str, str] = field(default_factory=dict)
    fingerprint_definition: str | None = None
    extra: Mapping[str, Any] = field(default_factory=dict)
    _order: tuple[str, ...] = field(default=(), repr=False, compare=False)

    @classmethod
    def from_dict(cls, data: Any, *, path: str | Path | None = None) -> ReleaseInfo:
        """Check ``data`` (a parsed release.json; ``path`` names it in errors) and type it."""
        if _depth(data) > MAX_DEPTH:  # before deepcopy, which recurses
            raise ReleaseError(f"corrupt manifest: nested more than {MAX_DEPTH} deep",
                               path=Path(path) if path is not None else None, hint=_HINT)
        return cls._from_owned(copy.deepcopy(data), path)  # nothing typed here aliases the caller's dict

    @classmethod
    def _from_owned(cls, data: Any, path: str | Path | None) -> ReleaseInfo:
        """:meth:`from_dict` of a dict no one else holds (so no copy is needed)."""
        where = _Where(Path(path) if path is not None else None)
        missing = [k for k in ("name", "version", "configs") if not isinstance(data, dict) or k not in data]
        if missing:
            raise ReleaseError(f"release.json is not a benchsmith manifest (no {', '.join(missing)})",
                               path=where.file, hint="Pass a release directory that `benchsmith build` wrote")
        name = check_name(data["name"], where.key("name"))
        version = check_version(data["version"], where.key("version"))
        configs_where = where.key("configs")
        raw_configs = data["configs"]
        if not isinstance(raw_configs, dict):
            raise configs_where.error(f"{_kind(raw_configs)} {_brief(raw_configs)}", "an object of configs")
        if not raw_configs:
            raise configs_where.error("no configs", "at least one config")
        configs = {c: ConfigInfo.from_dict(v, check_config_name(c, configs_where.key(c)), where=configs_where.key(c))
                   for c, v in raw_configs.items()}
        seen: dict[str, _Where] = {}
        for c, info in configs.items():  # a file shared by two splits would be counted, read, published twice
            for s, split in info.splits.items():
                for i, f in enumerate(split.files):
                    here = configs_where.key(c).key("splits").key(s).key("files").index(i)
                    if f in seen:
                        raise here.error(f"{f!r} is also listed by {seen[f].path}", "each file once")
                    seen[f] = here
        if "tool_versions" not in data:  # the card names them
            raise where.key("tool_versions").error("missing", f"{{tool: version}} with {', '.join(_TOOLS)}")
        typed = {key: check(data[key], where.key(key)) if key in data else default for key, check, default in _TOP}
        known = {"name", "version", "configs", *(k for k, _, _ in _TOP)}
        return cls(name=name, version=version, configs=MappingProxyType(configs), **typed,
                   extra=_frozen({k: v for k, v in data.items() if k not in known}), _order=tuple(data))

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"name": self.name, "version": self.version}
        for key, _, _ in _TOP:
            if not self._order or key in self._order:  # an optional key the manifest lacked stays absent
                out[key] = _thaw(getattr(self, key))
        out["configs"] = {c: i.to_dict() for c, i in self.configs.items()}
        out.update(_thaw(self.extra))
        return _ordered(out, self._order)

    def split(self, config: str, split: str) -> SplitInfo:
        return self.configs[config].splits[split]

    def iter_splits(self) -> Iterator[tuple[str, str, SplitInfo]]:
        for c, info in self.configs.items():
            for s, split in info.splits.items():
                yield c, s, split


# --------------------------------------------------------------------------- reading


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for k, v in pairs:
        if k in out:
            raise _DuplicateKey(k)
        out[k] = v
    return out


class _DuplicateKey(ValueError):
    pass


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def load_json(mpath: Path) -> str:
    """The text of release.json: a regular file (not a symlink) of UTF-8."""
    try:
        st = os.lstat(mpath)
    except (FileNotFoundError, NotADirectoryError):
        raise ReleaseError("not a benchsmith release (no release.json)", path=mpath.parent,
                           hint="Pass a release directory such as <registry>/<name>/<version>") from None
    except OSError as exc:
        raise EnvironmentFault.from_os_error(exc) or ReleaseError(f"cannot read release.json ({exc.strerror})",
                                                                  path=mpath) from None
    if stat.S_ISLNK(st.st_mode):
        raise ReleaseError("release.json is a symbolic link; expected a regular file inside the release",
                           path=mpath, hint="A release holds regular files only: copy the real file in its place")
    if not stat.S_ISREG(st.st_mode):
        raise ReleaseError("not a benchsmith release (release.json is not a regular file)", path=mpath.parent,
                           hint="Pass a release directory such as <registry>/<name>/<version>")
    if st.st_size > MAX_MANIFEST_BYTES:
        raise ReleaseError(f"release.json is {st.st_size:,} bytes; expected at most {MAX_MANIFEST_BYTES:,}",
                           path=mpath, hint=_HINT)
    try:
        fd = os.open(mpath, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
        with os.fdopen(fd, "rb") as fh:
            raw = fh.read(MAX_MANIFEST_BYTES + 1)
    except OSError as exc:
        raise EnvironmentFault.from_os_error(exc) or ReleaseError(f"cannot read release.json ({exc.strerror})",
                                                                  path=mpath) from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ReleaseError(f"corrupt manifest: not UTF-8 (byte {exc.start})", path=mpath, hint=_HINT) from None
    return text


def _parse(text: str, mpath: Path) -> Any:
    """Strict JSON: no duplicate keys, no NaN/Infinity, nested at most :data:`MAX_DEPTH` deep; a
    ReleaseError otherwise."""
    try:
        data = json.loads(text, object_pairs_hook=_no_duplicates, parse_constant=_no_constant)
    except json.JSONDecodeError as exc:
        raise ReleaseError(f"corrupt manifest: {exc.msg}", path=mpath, line=exc.lineno, hint=_HINT) from None
    except _DuplicateKey as exc:
        raise ReleaseError(f"corrupt manifest: key {exc.args[0]!r} appears twice in one object", path=mpath,
                           hint=_HINT) from None
    except ValueError as exc:
        raise ReleaseError(f"corrupt manifest: {exc}", path=mpath, hint=_HINT) from None
    except RecursionError:
        raise ReleaseError(f"corrupt manifest: nested more than {MAX_DEPTH} deep", path=mpath, hint=_HINT) from None
    if _depth(data) > MAX_DEPTH:
        raise ReleaseError(f"corrupt manifest: nested more than {MAX_DEPTH} deep", path=mpath, hint=_HINT)
    return data


def _depth(value: Any) -> int:
    """How deep objects and lists nest in ``value`` (a scalar: 0), without recursion."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        v, d = stack.pop()
        if isinstance(v, dict | list):
            deepest = max(deepest, d)
            stack.extend((c, d + 1) for c in (v.values() if isinstance(v, dict) else v))
    return deepest


def read_manifest(release_dir: str | Path) -> ReleaseInfo:
    """The :class:`ReleaseInfo` of ``<release_dir>/release.json`` (the only form a reader gets: the
    parsed dict is owned here and never handed out, so nothing reads metadata around the schema)."""
    mpath = Path(release_dir) / MANIFEST
    text = load_json(mpath)
    try:
        return ReleaseInfo._from_owned(_parse(text, mpath), mpath)
    except RecursionError:
        raise ReleaseError("features nested too deeply", path=mpath, hint=_HINT) from None


__all__ = ["MANIFEST", "ConfigInfo", "ReleaseInfo", "SplitInfo", "load_json", "parse_features", "read_manifest"]
