"""The builder base class: what a dataset declares.

A builder *declares*; the core does the I/O. A subclass sets class attributes
(name, versions with release notes, citation, licence, homepage, sources) and
implements two hooks:

* ``configs()``: the configs, each with ``datasets.Features`` (``Value``, ``ClassLabel`` for
  labels, ``List``), splits and languages;
* ``examples(config, split, sources)``: yields one dict per example, in a stable
  order, each with a stable string ``id``.

Data beside the builder module, one mechanism each:

* ``checksums.tsv``: the sha256 of every source file (``benchsmith.source``);
* ``published.yaml``: the papers' figures a release must reproduce, read by
  ``expectations()`` (``benchsmith.expectation``); a builder adds dataset-specific
  measurements with ``measures()``;
* ``errata.tsv`` (hand-written) and ``errata.generated.tsv`` (a stage command's output):
  known upstream defects, read by ``errata()`` and applied by the core while writing
  (``benchsmith.erratum``). Building version X applies the errata whose
  ``version`` is <= X (``self.errata_applied``), so 1.0.0 reproduces upstream as released.

Each config carries a typed validation :class:`~benchsmith.policy.Policy`.
"""

from __future__ import annotations

import importlib
import importlib.util
import inspect
import logging
import pkgutil
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from importlib.metadata import entry_points
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from datasets import Features

from benchsmith.erratum import Erratum, read_errata
from benchsmith.errors import ConfigError, did_you_mean, library_fault
from benchsmith.expectation import Expectation, Measure, bind, read_published_yaml
from benchsmith.policy import Policy
from benchsmith.semver import parse_version
from benchsmith.source import Source, Sources, declare_sources, forget_sources, read_checksums

if TYPE_CHECKING:
    from benchsmith.release import Release

__all__ = [
    "Builder", "Config", "Erratum", "Expectation", "Policy", "Source", "Sources", "builders", "get_builder",
    "parse_version", "register",
]

Example = dict[str, Any]


@dataclass(frozen=True)
class Config:
    """One config (a ``load_dataset(path, name)`` name) of a dataset.

    ``policy`` is the typed validation policy (field roles, thresholds); ``metadata``
    holds the builder's own facts about the config (a language pair, a variant), which
    the core stores in ``release.json`` but never interprets.
    """

    name: str
    description: str
    #: the columns (a plain mapping of ``datasets`` feature types is made a ``datasets.Features``)
    features: Features
    splits: tuple[str, ...] = ("train", "validation", "test")
    languages: tuple[str, ...] = ("en",)
    policy: Policy = field(default_factory=Policy)
    metadata: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        hint = "Declare features with datasets.Features (Value, ClassLabel, List)"
        if not isinstance(self.features, Mapping):
            raise ConfigError(f"config {self.name!r}: features must be a datasets.Features mapping, not "
                              f"{type(self.features).__name__}", hint=hint)
        try:
            features = self.features if isinstance(self.features, Features) else Features(self.features)
            _ = features.arrow_schema  # a value that is no feature type fails here, naming the config
        except (TypeError, ValueError, AttributeError) as exc:
            raise ConfigError(f"config {self.name!r}: features are not datasets feature types ({exc})",
                              hint=hint) from None
        object.__setattr__(self, "features", features)
        stray = sorted(set(self.metadata) & set(Policy.keys()))
        if stray:
            raise ConfigError(f"config {self.name!r}: validation settings {stray} belong in policy=Policy(...), "
                              "not metadata")


class Builder:
    """Base class of every dataset builder: a subclass declares, the core does the I/O.

    A builder sets class attributes (``name``, ``release_notes``, ``citation``, ``license``,
    ``homepage``, ``sources`` ...), implements :meth:`configs` and :meth:`examples`, and is made
    known with :func:`register`. A builder package outside benchsmith also names its module in
    the ``benchsmith.builders`` entry-point group (``docs/plugins.md``)::

        import datasets

        from benchsmith.builder import Builder, Config, Policy, register
        from benchsmith.source import Source


        @register
        class MyBench(Builder):
            name = "my_bench"
            release_notes = {"1.0.0": "upstream as released", "1.1.0": "fixes item 17's label"}
            license = "CC0-1.0"
            sources = (Source("my_bench", url="https://example.org/items.tsv", files=("items.tsv",)),)

            def configs(self):
                features = datasets.Features({"id": datasets.Value("string"), "text": datasets.Value("string"),
                                              "label": datasets.ClassLabel(names=["no", "yes"])})
                return [Config("default", "every item", features, policy=Policy(task="classification"))]

            def examples(self, config, split, sources):
                for row in read_items(sources.path("my_bench", "items.tsv")):
                    if row["split"] == split:
                        yield {"id": row["id"], "text": row["text"], "label": row["label"]}

    Data files beside the builder's module (:meth:`data_path`), each read by one mechanism:
    ``checksums.tsv`` (:meth:`checksums`), ``published.yaml`` (:meth:`expectations`, with the
    builder's :meth:`measures`), ``errata.tsv`` and ``errata.generated.tsv`` (:meth:`errata`),
    ``known_artifacts.yaml`` and ``fingerprints.tsv``. Optional modules beside it:
    ``metric.py`` (``METRICS``, :meth:`metrics`) and ``baseline.py`` (``BASELINES``).

    An instance is one version: ``Builder(version)`` (default: the last of ``release_notes``).
    """

    name: ClassVar[str]
    pretty_name: ClassVar[str] = ""
    description: ClassVar[str] = ""
    #: every releasable version with its release notes; the last one is the default.
    release_notes: ClassVar[dict[str, str]] = {}
    #: version -> ISO date the version was first released (Croissant's datePublished); optional
    release_dates: ClassVar[dict[str, str]] = {}
    citation: ClassVar[str] = ""
    license: ClassVar[str] = ""
    homepage: ClassVar[str] = ""
    task_categories: ClassVar[tuple[str, ...]] = ()
    #: Hub discovery metadata for the card (huggingface_hub DatasetCardData fields)
    task_ids: ClassVar[tuple[str, ...]] = ()
    multilinguality: ClassVar[tuple[str, ...]] = ()
    source_datasets: ClassVar[tuple[str, ...]] = ()
    paperswithcode_id: ClassVar[str | None] = None
    #: the Hub dataset repo (``ORG/NAME``) this dataset is published to, if any: ``audit`` on a
    #: runner whose registry has no older version compares with its newest tag up to ``version``
    hub_repo: ClassVar[str | None] = None
    #: Croissant Responsible-AI fields only the builder knows (annotation protocol, biases...),
    #: keyed as the ``rai:`` vocabulary without its prefix; the rest is computed (cards/croissant.py)
    rai: ClassVar[dict[str, Any]] = {}
    sources: ClassVar[tuple[Source, ...]] = ()
    #: seed for anything random in examples() (recorded in release.json).
    seed: ClassVar[int] = 0
    #: False when a rebuild from the same inputs may give other files (e.g. an aligner that seeds
    #: itself): recorded as ``reproducible`` in release.json, and drift then warns, not fails, on a
    #: same-version difference in content (a lost config or split still fails).
    reproducible: ClassVar[bool] = True

    def __init__(self, version: str | None = None):
        versions = self.versions()
        if not versions:
            raise ConfigError(f"builder {self.name!r} declares no versions in release_notes")
        if version is None:
            version = versions[-1]
        if version not in versions:
            raise ConfigError(
                f"builder {self.name!r} has no version {version!r}",
                hint=did_you_mean(version, versions),
            )
        self.version = version

    # ---------------------------------------------------------------- declared
    @classmethod
    def versions(cls) -> list[str]:
        """Versions declared in ``release_notes``, oldest first by semver (the last is the default)."""
        return sorted(cls.release_notes, key=parse_version)

    def configs(self) -> Sequence[Config]:
        """The configs of this version, each a :class:`Config` with its ``datasets.Features``.

        Required. May depend on ``self.version`` (a config added in 1.1.0).
        """
        raise NotImplementedError

    def examples(self, config: Config, split: str, sources: Sources) -> Iterator[Example]:
        """Yield the examples of ``config``/``split``: one dict per example, with every feature.

        Required. The order is stable and every example has a stable ``id`` (the config's
        ``policy.id_field``) across versions: errata, the changelog and ``diff`` name items by it.
        ``sources`` holds the verified raw files: ``sources.path("my_bench", "items.tsv")``. A
        ``ClassLabel`` value may be given by name or index. Do not apply errata here: the writer
        applies ``errata.tsv`` to what this yields.
        """
        raise NotImplementedError

    def measures(self) -> Mapping[str, Measure]:
        """Dataset-specific measurements that ``published.yaml`` figures may name.

        ``{name: fn}``, where a figure's ``measure: name`` calls ``fn(release, figure)`` with the
        :class:`~benchsmith.release.Release` being validated and the
        :class:`~benchsmith.expectation.Figure` (its ``config``, ``split``, ``args``), and the
        fidelity check compares the value returned with the figure's ``value`` (numbers within
        its ``tolerance``, anything else equal). The core measures (``count``, ``label_counts``,
        ``value_count``) need no entry here. Example::

            def measures(self):
                def mean_words(release, figure):
                    texts = release.table(figure.config, figure.split, ["text"]).column("text").to_pylist()
                    return round(sum(len(t.split()) for t in texts) / len(texts), 2)

                return {"mean_words": mean_words}

        A measure that raises fails its figure with the error's message; a ``ConfigError`` (a
        config or split this build skipped) skips it.
        """
        return {}

    def expectations(self) -> Sequence[Expectation]:
        """The figures of ``published.yaml`` that apply to this version, bound to their measures."""
        return bind(read_published_yaml(self.data_path("published.yaml")), self.measures(), self.version)

    def errata(self) -> Sequence[Erratum]:
        """Every erratum of ``errata.generated.tsv`` and ``errata.tsv`` beside the builder (applied
        or not in this version; ``benchsmith.erratum`` says which table is for what)."""
        return read_errata(self.errata_paths())

    @classmethod
    def errata_path(cls) -> Path:
        """The hand-written errata table (``errata.tsv``): where a maintainer adds an erratum."""
        return cls.data_path("errata.tsv")

    @classmethod
    def generated_errata_path(cls) -> Path:
        """The errata table a stage command derives from the raw files (``errata.generated.tsv``)."""
        return cls.data_path("errata.generated.tsv")

    @classmethod
    def errata_paths(cls) -> tuple[Path, ...]:
        """Both errata tables, in the order they apply: generated, then hand-written."""
        return (cls.generated_errata_path(), cls.errata_path())

    def checks(self) -> Sequence[Any]:
        """Dataset-specific validation checks (``benchsmith.validation.check.Check``)."""
        return ()

    def card_sections(self, release: Release) -> Mapping[str, str]:
        """Extra Markdown sections for the card, ``{heading: body}``, computed from the release."""
        return {}

    def baselines(self) -> Sequence[Any]:
        """The model baselines this dataset declares (``BaselineSpec`` of
        ``benchsmith.validation.baselines.spec``), in declaration order.

        The default reads the module-level ``BASELINES`` list of ``baseline.py`` beside the
        builder (``<builder package>.baseline``), so a dataset declares its baselines without
        touching its ``__init__``; a subclass defined elsewhere (a test's fixture builder)
        inherits its parent's. No ``baseline.py`` (or none with ``BASELINES``): ``()``.
        """
        specs = self._declared("baseline", "BASELINES")
        return () if specs is None else tuple(specs)

    def metrics(self, config: str | None = None) -> dict[str, type[Any]]:
        """The metrics ``benchsmith evaluate NAME`` scores with (``Metric`` subclasses of
        ``benchsmith.validation.metric``), by name, in declaration order.

        Declared as the module-level ``METRICS`` tuple of ``metric.py`` beside the builder (read
        like ``BASELINES`` of ``baseline.py``: the first class in the MRO whose package has one),
        so importing a builder never imports its scorers. With ``config``, only the metrics that
        score it (each metric's ``CONFIGS`` patterns): per config where they differ (ComVE's
        subtask C is BLEU, A and B accuracy).
        """
        metrics = self._declared("metric", "METRICS")
        if metrics is None:
            return {}
        return {m.name: m for m in metrics if config is None or m.scores_config(config)}

    def _declared(self, module_name: str, attribute: str) -> Any:
        """``attribute`` of the module ``module_name`` beside the first class in the MRO whose package
        has one (``baseline.BASELINES``, ``metric.METRICS``), or None. A module that exists but imports
        something missing raises: the declaration is broken, not absent."""
        for klass in type(self).__mro__:
            if klass in (Builder, object) or not isinstance(getattr(klass, "name", None), str):
                continue
            module = importlib.import_module(klass.__module__)
            package = klass.__module__ if hasattr(module, "__path__") else klass.__module__.rpartition(".")[0]
            if not package:
                continue
            try:
                declared = importlib.import_module(f"{package}.{module_name}")
            except ModuleNotFoundError as exc:
                if exc.name != f"{package}.{module_name}":
                    raise
                continue
            found = getattr(declared, attribute, None)
            if found is not None:
                return found
        return None

    @classmethod
    def for_validation(cls, release: Release) -> Builder:
        """The builder whose checks and figures validate ``release`` (a release of this class).

        The default builds ``cls(release.version)``; a builder that cannot be re-created from
        a release alone (MuCoW's harvest, which holds its pipeline's result) overrides it to
        return an instance that only declares checks and figures.
        """
        return cls(release.version)

    # ---------------------------------------------------------------- derived
    @cached_property
    def errata_applied(self) -> list[Erratum]:
        v = parse_version(self.version)
        return [e for e in self.errata() if parse_version(e.version) <= v]

    def erratum_applies(self, erratum_id: str) -> bool:
        """Whether this build's version applies ``erratum_id``; an unknown id is a ConfigError
        (a typo must not silently read as "not applied")."""
        known = {e.id for e in self.errata()}
        if erratum_id not in known:
            raise ConfigError(f"{self.name}: unknown erratum {erratum_id!r}", hint=did_you_mean(erratum_id, known))
        return any(e.id == erratum_id for e in self.errata_applied)

    def config(self, name: str) -> Config:
        by_name = {c.name: c for c in self.configs()}
        if name not in by_name:
            raise ConfigError(f"{self.name} has no config {name!r}", hint=did_you_mean(name, by_name))
        return by_name[name]

    @classmethod
    def module_dir(cls) -> Path:
        return Path(inspect.getfile(cls)).parent

    @classmethod
    def data_path(cls, filename: str) -> Path:
        """A data file shipped beside the builder (checksums.tsv, errata.tsv, published.yaml)."""
        return cls.module_dir() / filename

    @classmethod
    def checksums(cls) -> dict[tuple[str, str], tuple[int | None, str]]:
        """The registered ``checksums.tsv`` beside the builder (``{}`` when there is none yet)."""
        return read_checksums(cls.data_path("checksums.tsv"), dataset=cls.name)


# ------------------------------------------------------------------- registry

_REGISTRY: dict[str, type[Builder]] = {}
_DISCOVERED = False


def register(cls: type[Builder]) -> type[Builder]:
    """Class decorator: make a builder known to ``benchsmith list`` / ``build``."""
    if not getattr(cls, "name", None):
        raise TypeError(f"{cls.__qualname__} needs a class attribute `name`")
    _REGISTRY[cls.name] = cls
    declare_sources(cls.name, getattr(cls, "sources", ()))
    return cls


def unregister(name: str) -> None:
    _REGISTRY.pop(name, None)
    forget_sources(name)


def discover() -> None:
    """Import every module under ``benchsmith.builders`` (and its ``cli`` submodules)
    plus third-party builders from the ``benchsmith.builders`` entry-point group."""
    global _DISCOVERED
    if _DISCOVERED:
        return
    _DISCOVERED = True
    import benchsmith.builders as pkg  # a package whose modules import this one

    for info in pkgutil.iter_modules(pkg.__path__, pkg.__name__ + "."):
        mod = importlib.import_module(info.name)
        if info.ispkg:
            for sub in ("cli",):
                try:
                    importlib.import_module(f"{info.name}.{sub}")
                except ModuleNotFoundError as exc:
                    if exc.name != f"{info.name}.{sub}":
                        raise
        del mod
    for ep in entry_points(group="benchsmith.builders"):
        try:
            ep.load()
        except Exception as exc:  # one broken plug-in must not take every command down
            if isinstance(exc, ImportError) and library_fault(exc) is not None:
                raise  # the machine (a memory limit), not the plug-in: exit 3 like any other fault
            # a warning line, then the other builders: `list` and `evaluate` still work
            logging.getLogger(__name__).warning(
                "plug-in %r (%s, entry point group benchsmith.builders) cannot be loaded and is skipped: %s: %s. "
                "Fix or uninstall its package", ep.name, ep.value, type(exc).__name__,
                " ".join(str(exc).split())[:200])


def builders() -> dict[str, type[Builder]]:
    discover()
    return dict(sorted(_REGISTRY.items()))


def _import_one(name: str) -> None:
    """Import ``benchsmith.builders.<name>`` alone when it exists (it registers itself), so
    building or describing one dataset does not import every builder and its CLI."""
    if _DISCOVERED or name in _REGISTRY or not name.isidentifier():
        return
    module = f"benchsmith.builders.{name}"
    try:
        found = importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        found = False
    if found:
        importlib.import_module(module)


def is_registered(name: str) -> bool:
    """``name in builders()``, importing only the package named like the dataset when it registers
    that name (as :func:`get_builder` does)."""
    _import_one(name)
    return name in _REGISTRY or name in builders()


def get_builder(name: str, version: str | None = None) -> Builder:
    """Instantiate a registered builder; unknown names get suggestions.

    The package named like the dataset is imported first; only a name it does not
    register (another module's builder, an entry point, a typo) discovers them all.
    """
    _import_one(name)
    known = _REGISTRY if name in _REGISTRY else builders()
    if name not in known:
        raise ConfigError(f"unknown dataset {name!r}", hint=did_you_mean(name, known))
    return known[name](version)
