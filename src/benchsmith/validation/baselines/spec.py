"""Baseline declarations (``BASELINES = [BaselineSpec(...)]`` in ``builders/<name>/baseline.py``)
and the engine registry (``@register_engine``, lm-eval's style). validation/README.md, "Model
baselines" and "Engines", has the design: why engines register with their flags, where a
dataset's own engine lives, and the one-direction layering spec <- engine <- run. Bad
declarations are one-line ConfigErrors (with suggestions) when the builder's module is imported.
Thresholds are fractions; score rows percentages.
"""

from __future__ import annotations

import fnmatch
import importlib
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field, fields, replace
from typing import TYPE_CHECKING, Any, ClassVar

from benchsmith.errors import ConfigError, did_you_mean

if TYPE_CHECKING:
    from benchsmith.release import Release

GENERIC_VARIANTS = ("full", "options_only")
_NAME = re.compile(r"^[a-z0-9][a-z0-9_.+-]*$")
_GENERIC_ENGINES = "benchsmith.validation.baselines.engine"
Choices = tuple[tuple[str, tuple[str, ...]], ...]


@dataclass(frozen=True)
class Options:
    """Base of an engine's options, checked on creation by their annotations: an ``int`` is a
    positive int (``ZERO``: or 0), a ``float`` a number >= 0 (``POSITIVE``: > 0, ``FRACTIONS``:
    < 1), ``X | None`` may be None; ``CHOICES`` ``((name, allowed), ...)``. Else a ConfigError."""

    ZERO: ClassVar[tuple[str, ...]] = ()
    POSITIVE: ClassVar[tuple[str, ...]] = ()
    FRACTIONS: ClassVar[tuple[str, ...]] = ()
    CHOICES: ClassVar[Choices] = ()

    def __post_init__(self) -> None:
        for f in fields(self):
            name, value, kind = f.name, getattr(self, f.name), str(f.type)
            allowed = dict(self.CHOICES).get(name)
            if value is None and kind.endswith("| None"):
                continue
            if allowed is not None and value not in allowed:
                raise ConfigError(f"{name}={value!r} is not one of {list(allowed)}",
                                  hint=did_you_mean(str(value), allowed))
            least = 0 if name in self.ZERO else 1
            if kind.startswith("int") and (type(value) is not int or value < least):
                raise ConfigError(f"{name}={value!r}; expected a {('non-negative', 'positive')[least]} int")
            upper = 1 if name in self.FRACTIONS else float("inf")
            if kind.startswith("float") and (type(value) not in (int, float) or not 0 <= value < upper
                                             or name in self.POSITIVE and value == 0):
                raise ConfigError(f"{name}={value!r}; expected a number in [0, {upper})"
                                  + (", not 0" if name in self.POSITIVE else ""))


@dataclass(frozen=True)
class Seq2SeqItem:
    """One source with its reference outputs (``nmt``, ``generation``, ``copy``)."""

    id: str
    source: str
    references: tuple[str, ...]


# --------------------------------------------------------------------------- the engine registry


@dataclass(frozen=True)
class Engine:
    """A registered engine: ``run`` takes an :class:`~.engine.EngineCall`; the flags tell the
    runner what it may do with it."""

    name: str
    run: Callable[[Any], Any]
    options: type
    #: its rows are multiple-choice accuracies: it can gate and average
    accuracy: bool = False
    #: its items are ``MCItem``: ``options_only`` applies
    multiple_choice: bool = False
    #: it trains: the spec's train and selection splits apply (else they are ignored)
    trains: bool = True
    #: it needs ``--model-path`` (nothing is downloaded)
    needs_model_path: bool = False
    #: run options it ignores (noted when given), and why: ``{"epochs": "it trains for --max-steps"}``
    ignores: Mapping[str, str] = field(default_factory=dict)

    @property
    def option_names(self) -> list[str]:
        """What a declaration's ``options`` and ``--set KEY=VALUE`` may name."""
        return [f.name for f in fields(self.options)]

    def make_options(self, base: Any = None, overrides: Mapping[str, Any] | None = None, *, where: str = "") -> Any:
        """``base`` (the options dataclass, a mapping of its fields, or None: the defaults) with
        ``overrides`` on top; an unknown name is a ConfigError with suggestions. Run-level values
        (``--device``, ``--seed``, the model) are not options: engines read them from the call."""
        values = dict(overrides or {})
        if base is None or isinstance(base, Mapping):
            values, base = {**(base or {}), **values}, None
        elif not isinstance(base, self.options):
            raise ConfigError(f"{where}options are a {type(base).__name__}; engine {self.name!r} takes "
                              f"{self.options.__name__} (or a mapping of its fields)")
        for key in values:
            if key not in self.option_names:
                raise ConfigError(f"{where}engine {self.name!r} has no option {key!r}",
                                  hint=did_you_mean(key, self.option_names))
        try:
            return replace(base, **values) if base is not None else self.options(**values)
        except TypeError as exc:  # a wrong type the dataclass itself rejects
            raise ConfigError(f"{where}bad options for engine {self.name!r}: {exc}") from None


_ENGINES: dict[str, Engine] = {}


def register_engine(name: str, *, options: type, **flags: Any) -> Callable[[Any], Any]:
    """Register the decorated function as engine ``name`` with its options dataclass and the
    :class:`Engine` flags; another function under a registered name is a ConfigError."""

    def decorate(fn: Callable[[Any], Any]) -> Callable[[Any], Any]:
        old = _ENGINES.get(name)
        if old is not None and (old.run.__module__, old.run.__qualname__) != (fn.__module__, fn.__qualname__):
            raise ConfigError(f"engine {name!r} is registered twice ({old.run.__module__} and {fn.__module__})",
                              hint="Give the new engine another name")
        _ENGINES[name] = Engine(name, fn, options, **flags)
        return fn

    return decorate


def engine_names() -> list[str]:
    """The registered engines (the generic ones and those of the builders imported so far)."""
    importlib.import_module(_GENERIC_ENGINES)  # registers the generic engines (once)
    return sorted(_ENGINES)


def get_engine(name: str) -> Engine:
    """The registered engine ``name``; unknown: a ConfigError with suggestions and the valid names."""
    if name not in engine_names():
        raise ConfigError(f"unknown engine {name!r}",
                          hint=f"{did_you_mean(name, _ENGINES)} (a dataset's own engine registers when its "
                          "builder's baseline.py imports it)")
    return _ENGINES[name]


# --------------------------------------------------------------------------- the declaration


@dataclass(frozen=True)
class Splits:
    """Where a baseline trains (``train``) and selects its model (``selection``; an engine
    registered with ``trains=False`` ignores both) and the splits it scores (``eval``) in each
    eval config. A split the release lacks is left out and noted."""

    train: str | None = "train"
    selection: str | None = "validation"
    eval: tuple[str, ...] = ("test",)


@dataclass(frozen=True)
class Gate:
    """How a gated baseline passes on its eval splits (accuracy engines only; see
    :func:`~.run.gate_verdict`): ``max_gain`` over chance under the one partial-input rule (None:
    the config's ``policy.partial_input_max_gain``, default 0.10, the cheap partial-input check's
    threshold), and/or ``min_accuracy``."""

    max_gain: float | None = None
    min_accuracy: float | None = None

    def __post_init__(self) -> None:
        for name, value in (("max_gain", self.max_gain), ("min_accuracy", self.min_accuracy)):
            if value is not None and not 0 <= value <= 1:
                raise ConfigError(f"gate {name}={value!r}; expected a fraction in [0, 1]")


@dataclass(frozen=True)
class Setup:
    """The experiment a baseline stands for: ``name`` (a paper's name for it, ``CO-ZS``, ``TrTe``:
    ``--setup`` selects by it), ``model`` (the model's short name: ``--model``), ``paper`` (ids of
    ``published.yaml`` figures shown beside ours, never gated on) with ``note`` (how the paper's
    setup differs), ``averages`` ``{name: (language, ...)}`` (accuracy engines: a mean row per eval
    split, e.g. a paper's "All") and ``language(release, config)``: what a config is called in
    ``averages`` and the paper's figures (default its name)."""

    name: str | None = None
    model: str | None = None
    paper: tuple[str, ...] = ()
    note: str = ""
    averages: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    language: Callable[[Release, str], str | None] | None = None

    def language_of(self, release: Release, config: str) -> str:
        return (self.language(release, config) if self.language else None) or config


@dataclass(frozen=True)
class BaselineSpec:
    """One declared baseline (every field: validation/README.md, "Model baselines"). ``items``
    returns ``MCItem`` (default: from the config's typed policy) or :class:`Seq2SeqItem`; ``score``
    returns ``{metric: value}`` (numbers become score rows, other entries details; default
    sacreBLEU)."""

    name: str
    engine: str
    config: str
    options: Any = None
    splits: Splits = Splits()
    eval_configs: tuple[str, ...] = ()
    variant: str = "full"
    items: Callable[[Any, str, str], Sequence[Any]] | None = None
    score: Callable[[Any, str, str, Sequence[Any], Any], Mapping[str, Any]] | None = None
    gate: Gate | None = None
    setup: Setup = Setup()
    description: str = ""

    def __post_init__(self) -> None:
        where = f"baseline {self.name!r}"
        if not _NAME.match(self.name):
            raise ConfigError(f"baseline name {self.name!r} is not a lower-case slug",
                              hint="Use letters, digits and - _ . + (e.g. 'Full-Input' -> 'full-input')")
        try:
            engine = get_engine(self.engine)
        except ConfigError as exc:
            raise ConfigError(f"{where}: {exc.message}", hint=exc.hint) from None
        object.__setattr__(self, "options", engine.make_options(self.options, where=f"{where}: "))
        averages = self.setup.averages
        names = (self.eval_configs, self.splits.eval, self.setup.paper, *averages.values())
        problems = [  # (wrong, what, hint); the first that holds is the error
            (any(isinstance(n, str) for n in names), "a tuple of names is a string",
             "Write ('test',) with its comma: eval_configs, splits.eval, setup.paper, averages"),
            (not self.splits.eval, "no eval splits", "Splits(eval=('test',))"),
            (self.variant not in GENERIC_VARIANTS and self.items is None,
             f"variant {self.variant!r} needs an items adapter that produces it",
             f"Generic variants: {', '.join(GENERIC_VARIANTS)}; pass items=..."),
            (self.variant == "options_only" and not engine.multiple_choice,
             f"options_only applies to multiple-choice engines, not {self.engine!r}", None),
            (self.gate is not None and not engine.accuracy,
             f"only accuracy engines can gate, not {self.engine!r}", None),
            (self.gate == Gate() and not self.partial,
             "a gated full-input baseline needs Gate(min_accuracy=...) or Gate(max_gain=...)",
             "Partial-input variants default to policy.partial_input_max_gain"),
            (bool(averages) and not engine.accuracy,
             f"averages apply to accuracy engines, not {self.engine!r}", None),
            (not all(averages.values()), "an average names no languages",
             "averages={'All': ('et', 'ht', ...)}"),
        ]
        for wrong, what, hint in problems:
            if wrong:
                raise ConfigError(f"{where}: {what}", hint=hint)

    @property
    def partial(self) -> bool:
        """Whether the variant hides part of the input."""
        return self.variant != "full"

    @property
    def engine_info(self) -> Engine:
        return get_engine(self.engine)

    def eval_config_names(self, release: Release) -> list[str]:
        """``eval_configs`` (default ``config``) expanded against the release's configs, in order."""
        names: list[str] = []
        for pattern in self.eval_configs or (self.config,):
            names += [c for c in fnmatch.filter(release.configs(), pattern) if c not in names]
        return names

    def evaluations(self, release: Release, restrict: Sequence[str] = ()) -> tuple[list[tuple[str, str]], list[str]]:
        """``([(config, split), ...], notes)``: what this spec scores in ``release`` (within
        ``restrict`` configs when given) and what it leaves out."""
        pairs, notes = [], []
        for config in self.eval_config_names(release):
            for split in self.splits.eval if not restrict or config in restrict else ():
                if split in release.splits(config):
                    pairs.append((config, split))
                else:
                    notes.append(f"{config}/{split} is not in this release: not scored")
        for config in self.eval_configs or (self.config,):
            if not any(x in config for x in "*?[") and config not in release.configs() \
                    and (not restrict or config in restrict):
                notes.append(f"config {config} is not in this release: not scored")
        return pairs, notes

    def summary(self) -> dict[str, Any]:
        """What ``benchsmith baseline NAME --list`` shows of the declaration (flat; hooks by name)."""
        s = self.setup
        return {"name": self.name, "engine": self.engine, "config": self.config,
                "options": asdict(self.options),
                "train_split": self.splits.train, "selection_split": self.splits.selection,
                "eval_splits": self.splits.eval, "eval_configs": self.eval_configs, "variant": self.variant,
                "items": _named(self.items), "score": _named(self.score),
                "gate": asdict(self.gate) if self.gate else None, "paper": s.paper, "paper_note": s.note,
                "averages": s.averages, "language": _named(s.language), "model": s.model, "setup": s.name,
                "description": self.description}


def _named(hook: Any) -> str | None:
    return getattr(hook, "__qualname__", None)


def select_specs(specs: Sequence[BaselineSpec], *, names: Sequence[str] = (), model: str | None = None,
                 setup: str | None = None, variant: str | None = None, config: str | None = None,
                 release: Release | None = None, dataset: str = "this dataset") -> list[BaselineSpec]:
    """The specs a command line asks for; an unknown name (spec, model, setup, variant, config)
    is a ConfigError with suggestions."""
    if not specs:
        raise ConfigError(f"{dataset} declares no model baselines",
                          hint="Declare BASELINES = [BaselineSpec(...)] in its builders/<name>/baseline.py")
    by_name = {s.name: s for s in specs}
    for n in names:
        if n not in by_name:
            raise ConfigError(f"{dataset} has no baseline {n!r}", hint=did_you_mean(n, by_name))
    out = [by_name[n] for n in dict.fromkeys(names)] if names else list(specs)
    labels: dict[str, tuple[str | None, Callable[[BaselineSpec], str | None]]] = {
        "model": (model, lambda s: s.setup.model), "setup": (setup, lambda s: s.setup.name),
        "variant": (variant, lambda s: s.variant)}
    for attr, (wanted, label_of) in labels.items():
        known = sorted({label for s in specs if (label := label_of(s))})
        if wanted is not None and wanted.lower() not in {k.lower() for k in known}:
            raise ConfigError(f"{dataset} has no baseline with {attr} {wanted!r}", hint=did_you_mean(wanted, known))
        out = [s for s in out if wanted is None or (label_of(s) or "").lower() == wanted.lower()]
    if config is not None and release is not None:
        if config not in release.configs():
            raise ConfigError(f"release {release.name} {release.version} has no config {config!r}",
                              hint=did_you_mean(config, release.configs()))
        out = [s for s in out if config in s.eval_config_names(release)]
        if not out:
            covered = sorted({c for s in specs for c in s.eval_config_names(release)})
            raise ConfigError(f"no selected baseline of {dataset} scores config {config!r}",
                              hint=f"Configs with baselines: {', '.join(covered) or 'none'}")
    if not out:
        raise ConfigError(f"no baseline of {dataset} matches the selection", hint=f"Declared: {', '.join(by_name)}")
    return out

