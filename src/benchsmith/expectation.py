"""Published figures a release must reproduce: ``published.yaml`` beside each builder.

One file per builder, read by :meth:`benchsmith.builder.Builder.expectations` and
checked by the fidelity check (``benchsmith.validation.fidelity``)::

    reference: "Ponti et al. (2020), XCOPA, EMNLP"    # optional prefix for every source
    figures:
      - id: "{config}/test/num_examples"   # stable figure id ({config} expands, see configs)
        value: 500                         # the paper's value (number, string, list or mapping)
        source: "Section 3"                # where in the paper: table, section, footnote
        measure: count                     # a core measure or one of the builder's measures()
        configs: [et, ht]                  # or `config: et`; a list makes one figure per config
        split: test                        # optional, passed to the measure
        args: {field: question}            # optional keyword arguments of the measure
        tolerance: 0                       # absolute, for numbers (default 0)
        what: "examples in the test split" # what is measured, in words
        since: 1.1.0                       # optional: only versions >= since (or `until`)
        discrepancy: "..."                 # optional: a known, named mismatch (warn, not fail)
        needs: "the train split"           # optional: not measurable from this release (skip)
        reference: "Other et al. (2021)"   # optional: this figure's paper instead of the top-level one
                                           # ("" : no prefix), for a file quoting two papers

Unknown keys are an error (a misspelt ``tolerence`` must not silently mean 0). Core measures:

* ``count``: examples in ``config/split``;
* ``label_counts``: ``{name: count}`` of ``args.field`` (ClassLabel names) in ``config/split``;
* ``value_count``: rows of ``config/split`` whose ``args.field`` equals ``args.value`` (a
  ClassLabel by name);
* ``model_baseline``: a model's published score, never measured by ``validate`` (it lists the
  figure as skipped with its ``needs``, the command that measures it); a ``BaselineSpec`` names
  it in ``paper=(...)`` and ``benchsmith baseline`` shows it beside our score.

A builder adds its own with ``measures()`` (``{name: fn(release, figure) -> value}``).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import TYPE_CHECKING, Any

from benchsmith.errors import ConfigError, ParseError, did_you_mean
from benchsmith.semver import parse_version

if TYPE_CHECKING:
    from benchsmith.release import Release

Measure = Callable[["Release", "Figure"], Any]


@dataclass(frozen=True)
class Figure:
    """One row of ``published.yaml`` (after ``configs`` expansion)."""

    id: str
    value: Any
    source: str
    measure: str
    config: str | None = None
    split: str | None = None
    args: Mapping[str, Any] = field(default_factory=dict)
    tolerance: float = 0.0
    what: str = ""
    since: str | None = None
    until: str | None = None
    discrepancy: str | None = None
    needs: str | None = None


_KEYS = {f.name for f in fields(Figure)} | {"configs", "reference"}


@dataclass(frozen=True)
class Expectation:
    """A published figure bound to the function that measures it on a release."""

    key: str
    published: Any
    reference: str
    measure: Callable[[Release], Any]
    tolerance: float = 0.0
    description: str = ""
    discrepancy: str | None = None
    needs: str | None = None

    @classmethod
    def count(cls, config: str, split: str, n: int, reference: str) -> Expectation:
        return cls(
            key=f"{config}/{split}/num_examples", published=n, reference=reference,
            measure=lambda release: release.num_examples(config, split),
            description=f"number of examples in {config}/{split}",
        )

    def check(self, release: Release) -> tuple[bool, Any]:
        """``(ok, measured)``: numbers agree within ``tolerance`` (absolute), anything else must be equal."""
        measured = self.measure(release)
        return agrees(self.published, measured, self.tolerance), measured


def agrees(published: Any, measured: Any, tolerance: float = 0.0) -> bool:
    """Numbers within ``tolerance``; mappings and lists element-wise; anything else equal."""
    if isinstance(published, bool) or isinstance(measured, bool):
        return published == measured
    if isinstance(published, (int, float)) and isinstance(measured, (int, float)):
        return abs(measured - published) <= tolerance
    if isinstance(published, Mapping) and isinstance(measured, Mapping):
        return set(published) == set(measured) and all(agrees(published[k], measured[k], tolerance) for k in published)
    if isinstance(published, (list, tuple)) and isinstance(measured, (list, tuple)):
        return len(published) == len(measured) and all(agrees(a, b, tolerance) for a, b in zip(published, measured))
    return published == measured


# ----------------------------------------------------------------- core measures


def _bound(fn: Measure, f: Figure) -> Callable[[Release], Any]:
    """``fn`` measuring ``f`` (one closure per figure, not over a loop variable)."""
    return lambda release: fn(release, f)


def _split(f: Figure) -> tuple[str, str]:
    """The ``config/split`` a core measure reads (a ConfigError when the figure names none)."""
    if f.config is None or f.split is None:
        raise ConfigError(f"figure {f.id!r}: measure {f.measure!r} needs a config/split key",
                          hint="Name the split the figure is measured on, e.g. `key: test/label_counts`")
    return f.config, f.split


def _count(release: Release, f: Figure) -> int:
    return release.num_examples(*_split(f))


def _labels(release: Release, f: Figure) -> list[Any]:
    name = f.args["field"]
    config, split = _split(f)
    # benchsmith's own feature types (no ``datasets`` import in ``validate``); ``int2str`` is theirs
    feature = release.config_info(config).feature_types[name]
    values = release.table(config, split, [name]).column(name).to_pylist()
    int2str = getattr(feature, "int2str", None)
    return [int2str(v) if int2str and isinstance(v, int) and v >= 0 else v for v in values]


def _label_counts(release: Release, f: Figure) -> dict[str, int]:
    return dict(sorted(Counter(_labels(release, f)).items()))


def _value_count(release: Release, f: Figure) -> int:
    return sum(1 for v in _labels(release, f) if v == f.args["value"])


def _model_baseline(release: Release, f: Figure) -> Any:
    """A figure that a model baseline reproduces (``benchsmith baseline``, shown beside its scores),
    never ``validate``: listed as skipped with its ``needs``."""
    raise ConfigError(f"{f.id} is measured by a model baseline, not by validate ({f.needs or 'no run'})")


CORE_MEASURES: dict[str, Measure] = {"count": _count, "label_counts": _label_counts, "value_count": _value_count,
                                     "model_baseline": _model_baseline}


# ----------------------------------------------------------------- reading


def read_yaml(path: str | Path) -> Any:
    """A data file's YAML (``{}`` when empty, None when the file does not exist); invalid YAML is
    a ParseError naming the file and line. Shared by published.yaml and known_artifacts.yaml.

    Read with libyaml's safe loader where PyYAML has it (the same values as ``yaml.safe_load``:
    ComVE's published.yaml 0.080 -> 0.009 CPU s, XCOPA's 0.116 -> 0.013; every validate reads
    them)."""
    import yaml

    path = Path(path)
    if not path.is_file():
        return None
    try:
        loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
        return yaml.load(path.read_text(encoding="utf-8"), Loader=loader) or {}
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        raise ParseError(f"not valid YAML ({getattr(exc, 'problem', exc)})", path=path,
                         line=mark.line + 1 if mark else None) from None


def read_published_yaml(path: str | Path) -> list[Figure]:
    """The figures of ``path`` with ``configs`` expanded (``[]`` when the file does not exist)."""
    path = Path(path)
    doc = read_yaml(path)
    if doc is None:
        return []
    if not isinstance(doc, dict) or not isinstance(doc.get("figures", []), list):
        raise ParseError("expected a mapping with a `figures:` list", path=path, line=1)
    unknown_top = set(doc) - {"reference", "figures"}
    if unknown_top:
        raise ParseError(f"unknown top-level keys {sorted(unknown_top)}", path=path,
                         hint="Allowed: reference, figures")
    prefix = doc.get("reference") or ""
    out: list[Figure] = []
    seen: set[str] = set()
    for n, row in enumerate(doc.get("figures") or [], start=1):
        where = f"figure #{n}" + (f" ({row.get('id')})" if isinstance(row, dict) and row.get("id") else "")
        if not isinstance(row, dict):
            raise ParseError(f"{where} is not a mapping", path=path)
        unknown = set(row) - _KEYS
        if unknown:
            bad = min(unknown)
            raise ConfigError(f"{path}: {where} has unknown key {bad!r}", hint=did_you_mean(bad, _KEYS))
        for required in ("id", "value", "source", "measure"):
            if required not in row:
                raise ConfigError(f"{path}: {where} lacks {required!r}",
                                  hint="Every figure needs id, value, source and measure")
        configs = row.get("configs")
        if configs is not None and "config" in row:
            raise ConfigError(f"{path}: {where} has both config and configs")
        base = {k: v for k, v in row.items() if k not in ("configs", "reference")}
        ref = row.get("reference", prefix) or ""  # a figure's own paper wins over the file's
        base["source"] = f"{ref}, {row['source']}" if ref else row["source"]
        base["tolerance"] = float(row.get("tolerance", 0) or 0)
        for config in configs if configs is not None else [row.get("config")]:
            one = {**base, "config": config, "id": str(row["id"]).replace("{config}", str(config))}
            if one["id"] in seen:
                raise ConfigError(f"{path}: figure id {one['id']!r} appears twice")
            seen.add(one["id"])
            out.append(Figure(**one))
    return out


def bind(figures: list[Figure], measures: Mapping[str, Measure], version: str | None = None) -> list[Expectation]:
    """Expectations for ``version`` (figures outside their since/until are left out)."""
    all_measures = {**CORE_MEASURES, **measures}
    out = []
    for f in figures:
        if version is not None:
            v = parse_version(version)
            if f.since and v < parse_version(f.since) or f.until and v > parse_version(f.until):
                continue
        fn = all_measures.get(f.measure)
        if fn is None:
            raise ConfigError(f"figure {f.id!r}: unknown measure {f.measure!r}",
                              hint=did_you_mean(f.measure, all_measures))
        out.append(Expectation(
            key=f.id, published=f.value, reference=f.source, tolerance=f.tolerance,
            description=f.what, discrepancy=f.discrepancy, needs=f.needs,
            measure=_bound(fn, f),
        ))
    return out
