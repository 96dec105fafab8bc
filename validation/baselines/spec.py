"""Baseline declarations and the engine registry: a dataset says *which* baselines apply to
*which* configs; a registered engine knows *how* to run one.

A builder declares its baselines in ``builders/<name>/baseline.py`` as a module-level
``BASELINES = [BaselineSpec(...), ...]``; :meth:`benchsmith.builder.Builder.baselines` finds
them. ``benchsmith baseline NAME`` runs them (:func:`~.run.run_spec`), ``benchsmith validate
--baselines model`` runs the gated ones. Layering, with no import cycle: this module (what a
declaration is) <- :mod:`~.engine` (what an engine receives and the helpers engines share) <-
:mod:`~.run` (a declared baseline run into a result: paper figures, averages, the gate).

**Engines** register themselves, in the style of lm-eval's registry: adding one is one module
with a typed options dataclass and ``@register_engine(name, options=..., accuracy=...)`` on a
function ``EngineCall -> EngineOutput``. Generic ones (:mod:`~.engines`: ``cross_encoder``,
``label_issues``, ``generation``, ``copy``) load on the first lookup; a dataset's own engine
lives in its builder folder and registers when its ``baseline.py`` imports it (``nmt``,
``lm_scoring``, ``use_zero_shot``). What the runner needs to know of an engine is declared with
it, never looked up in a list of names: ``accuracy`` (its rows are multiple-choice accuracies:
it can gate and average), ``multiple_choice`` (its items are ``MCItem``: ``options_only``
applies), ``trains`` (it has train/selection splits), ``needs_model_path`` (nothing is
downloaded), ``subsamples`` (``--max-examples`` cuts what it scores), and ``run_fields``: fields
of its options dataclass the run supplies (``--device``, ``--seed``), which a declaration or
``--set`` may not name. An unknown engine or option name is a ConfigError with suggestions.

**A declaration** (:class:`BaselineSpec`) holds what every baseline has, plus the engine's options:

* ``engine`` and ``options``: the engine's options dataclass (or a mapping of its fields),
  checked when the spec is declared; ``--set KEY=VALUE`` overrides them at run time.
* where it trains and what it scores: ``config`` with ``train_split`` and ``selection_split``
  (model selection; an engine registered with ``trains=False`` ignores both); ``eval_configs``
  (default ``config``; shell patterns such as ``translation-*`` match the release's configs)
  times ``eval_splits``. A config or split the release lacks is left out and noted.
* ``variant``: ``full``, ``options_only`` (the context hidden, generic) or a dataset's own partial
  input (XCOPA's ``NoP``/``NoQ``), which its ``items`` adapter produces.
* ``items(release, config, split) -> list``: the dataset's shaping (``MCItem`` for
  multiple-choice engines, :class:`Seq2SeqItem` for output engines, release rows for
  ``lm_scoring``). Without one, multiple-choice items come from the config's typed policy.
* ``score(release, config, split, items, outputs) -> {metric: value, ...}``: the dataset's scorer
  for output engines (``validation/`` never imports a builder, so it arrives through this hook);
  numbers become score rows, other entries details. Default: sacreBLEU.
* ``gate``: a :class:`Gate` (accuracy engines only; see :func:`~.run.gate_verdict`): ``max_gain``
  over chance (None: the config's ``policy.partial_input_max_gain``, default 0.10, the cheap
  partial-input check's threshold) under the one partial-input rule, and/or ``min_accuracy``,
  over ``splits`` (default ``eval_splits``). Thresholds are fractions; score rows percentages.
* ``paper``: ids of ``published.yaml`` figures shown beside ours (never gated on), with
  ``paper_note`` saying how the paper's setup differs; ``averages`` ``{name: (language, ...)}``:
  a mean accuracy row per eval split (e.g. a paper's "All"); ``language(release, config)``: what
  a config is called there (default its name; XCOPA's ``translation-et`` is ``et``).
* ``model``/``setup``: short names ``--model``/``--setup`` select by; ``description``.
"""

from __future__ import annotations

import fnmatch
import importlib
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field, fields, is_dataclass, replace
from typing import Any

from benchsmith.errors import ConfigError, did_you_mean

GENERIC_VARIANTS = ("full", "options_only")
_NAME = re.compile(r"^[a-z0-9][a-z0-9_.+-]*$")
_GENERIC_ENGINES = "benchsmith.validation.baselines.engines"


@dataclass(frozen=True)
class Seq2SeqItem:
    """One source with its reference outputs (``nmt``, ``generation``, ``copy``)."""

    id: str
    source: str
    references: tuple[str, ...]


@dataclass(frozen=True)
class Gate:
    """How a gated baseline passes (see the module docstring and :func:`~.run.gate_verdict`)."""

    max_gain: float | None = None
    min_accuracy: float | None = None
    #: the splits gated on (default: the spec's ``eval_splits``)
    splits: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        for name in ("max_gain", "min_accuracy"):
            value = getattr(self, name)
            if value is not None and not 0 <= value <= 1:
                raise ConfigError(f"gate {name}={value!r}; expected a fraction in [0, 1]")
        object.__setattr__(self, "splits", (self.splits,) if isinstance(self.splits, str) else tuple(self.splits))


# --------------------------------------------------------------------------- the engine registry


@dataclass(frozen=True)
class Engine:
    """A registered engine (see module docstring); ``run`` takes an :class:`~.engine.EngineCall`."""

    name: str
    run: Callable[[Any], Any]
    options: type
    accuracy: bool = False
    multiple_choice: bool = False
    trains: bool = True
    needs_model_path: bool = False
    subsamples: bool = True
    run_fields: frozenset[str] = frozenset()

    @property
    def option_names(self) -> list[str]:
        """What a declaration's ``options`` and ``--set KEY=VALUE`` may name."""
        return [f.name for f in fields(self.options) if f.name not in self.run_fields]

    def make_options(self, base: Any = None, overrides: Mapping[str, Any] | None = None, *, where: str = "") -> Any:
        """``base`` (this engine's options, a mapping of their fields, or None: the defaults) with
        ``overrides`` on top; an unknown or run-supplied name is a ConfigError with suggestions."""
        values = dict(overrides or {})
        if base is None or isinstance(base, Mapping):
            values = {**(base or {}), **values}
            base = None
        elif not isinstance(base, self.options):
            raise ConfigError(f"{where}options are a {type(base).__name__}; engine {self.name!r} takes "
                              f"{self.options.__name__} (or a mapping of its fields)")
        else:
            default = self.options()
            taken = sorted(n for n in self.run_fields if getattr(base, n) != getattr(default, n))
            if taken:
                raise ConfigError(f"{where}{self.options.__name__} sets {taken[0]!r}, which the run supplies",
                                  hint="Leave it at its default: the command line sets it")
        for key in values:
            if key not in self.option_names:
                why = " (set by the run: use the command-line option)" if key in self.run_fields else ""
                raise ConfigError(f"{where}engine {self.name!r} has no option {key!r}{why}",
                                  hint=did_you_mean(key, self.option_names))
        try:
            return replace(base, **values) if base is not None else self.options(**values)
        except TypeError as exc:  # a wrong type the dataclass itself rejects
            raise ConfigError(f"{where}bad options for engine {self.name!r}: {exc}") from None


_ENGINES: dict[str, Engine] = {}


def register_engine(name: str, *, options: type, run_fields: Sequence[str] = (), **flags: bool) -> Callable[[Any], Any]:
    """Register the decorated function as engine ``name`` with its options dataclass and the
    :class:`Engine` flags. Another function under a registered name is a ConfigError."""
    if not is_dataclass(options):
        raise ConfigError(f"engine {name!r}: options must be a dataclass, not {options!r}")

    def decorate(fn: Callable[[Any], Any]) -> Callable[[Any], Any]:
        old = _ENGINES.get(name)
        if old is not None and (old.run.__module__, old.run.__qualname__) != (fn.__module__, fn.__qualname__):
            raise ConfigError(f"engine {name!r} is registered twice ({old.run.__module__} and {fn.__module__})",
                              hint="Give the new engine another name")
        _ENGINES[name] = Engine(name, fn, options, run_fields=frozenset(run_fields), **flags)
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
class BaselineSpec:
    """One declared baseline (see module docstring). Bad declarations are ConfigErrors."""

    name: str
    engine: str
    config: str
    #: the engine's options dataclass (a mapping of its fields is turned into it)
    options: Any = None
    train_split: str | None = "train"
    selection_split: str | None = "validation"
    eval_splits: tuple[str, ...] = ("test",)
    eval_configs: tuple[str, ...] = ()
    variant: str = "full"
    items: Callable[[Any, str, str], Sequence[Any]] | None = None
    score: Callable[[Any, str, str, Sequence[Any], Any], Mapping[str, Any]] | None = None
    gate: Gate | None = None
    paper: tuple[str, ...] = ()
    paper_note: str = ""
    averages: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    language: Callable[[Any, str], str | None] | None = None
    model: str | None = None
    setup: str | None = None
    description: str = ""

    def __post_init__(self) -> None:
        for name in ("eval_splits", "eval_configs", "paper"):
            value = getattr(self, name)
            object.__setattr__(self, name, (value,) if isinstance(value, str) else tuple(value))
        where = f"baseline {self.name!r}"
        if not isinstance(self.name, str) or not _NAME.match(self.name):
            raise ConfigError(f"baseline name {self.name!r} is not a lower-case slug",
                              hint="Use letters, digits and - _ . + (e.g. 'Full-Input' -> 'full-input')")
        try:
            engine = get_engine(self.engine)
        except ConfigError as exc:
            raise ConfigError(f"{where}: {exc.message}", hint=exc.hint) from None
        object.__setattr__(self, "options", engine.make_options(self.options, where=f"{where}: "))
        averages = {k: (v,) if isinstance(v, str) else tuple(v) for k, v in dict(self.averages).items()}
        object.__setattr__(self, "averages", averages)
        for avg, langs in averages.items():
            if not langs:
                raise ConfigError(f"{where}: average {avg!r} names no languages",
                                  hint="averages={'All': ('et', 'ht', ...)}")
        if averages and not engine.accuracy:
            raise ConfigError(f"{where}: averages apply to accuracy engines, not {self.engine!r}")
        if self.variant not in GENERIC_VARIANTS and self.items is None:
            raise ConfigError(f"{where}: variant {self.variant!r} needs an items adapter that produces it",
                              hint=f"Generic variants: {', '.join(GENERIC_VARIANTS)}; pass items=...")
        if self.variant == "options_only" and not engine.multiple_choice:
            raise ConfigError(f"{where}: options_only applies to multiple-choice engines, not {self.engine!r}")
        if self.gate is not None:
            if not engine.accuracy:
                raise ConfigError(f"{where}: only accuracy engines can gate, not {self.engine!r}")
            if not self.partial and self.gate.min_accuracy is None and self.gate.max_gain is None:
                raise ConfigError(f"{where}: a gated full-input baseline needs Gate(min_accuracy=...) or "
                                  "Gate(max_gain=...)", hint="Partial-input variants default to "
                                  "policy.partial_input_max_gain")
        if not self.eval_splits:
            raise ConfigError(f"{where}: no eval_splits")

    @property
    def partial(self) -> bool:
        """Whether the variant hides part of the input."""
        return self.variant != "full"

    @property
    def engine_info(self) -> Engine:
        return get_engine(self.engine)

    @property
    def trains(self) -> bool:
        return self.engine_info.trains

    @property
    def requires_model_path(self) -> bool:
        """Whether the engine needs ``--model-path`` (nothing is downloaded)."""
        return self.engine_info.needs_model_path

    def language_of(self, release: Any, config: str) -> str:
        """What ``config`` is called in ``averages`` and paper mappings (see module docstring)."""
        name = self.language(release, config) if self.language is not None else None
        return str(name) if name else config

    def eval_config_names(self, release: Any) -> list[str]:
        """``eval_configs`` (default ``config``) expanded against the release's configs, in order."""
        names: list[str] = []
        for pattern in self.eval_configs or (self.config,):
            hits = fnmatch.filter(release.configs(), pattern) if any(c in pattern for c in "*?[") \
                else [pattern] if pattern in release.configs() else []
            names += [h for h in hits if h not in names]
        return names

    def evaluations(self, release: Any, restrict: Sequence[str] = ()) -> tuple[list[tuple[str, str]], list[str]]:
        """``([(config, split), ...], notes)``: what this spec scores in ``release`` (within
        ``restrict`` configs when given) and what it leaves out."""
        notes = []
        pairs = []
        for config in self.eval_config_names(release):
            if restrict and config not in restrict:
                continue
            for split in self.eval_splits:
                if split in release.splits(config):
                    pairs.append((config, split))
                else:
                    notes.append(f"{config}/{split} is not in this release: not scored")
        declared = [p for p in (self.eval_configs or (self.config,)) if not any(c in p for c in "*?[")]
        for config in declared:
            if config not in release.configs() and (not restrict or config in restrict):
                notes.append(f"config {config} is not in this release: not scored")
        return pairs, notes

    def summary(self) -> dict[str, Any]:
        """What ``benchsmith baseline NAME --list`` shows of the declaration (hooks by name)."""
        out = {f.name: getattr(self, f.name) for f in fields(self)}
        out.update(options=asdict(self.options), averages={k: list(v) for k, v in self.averages.items()},
                   gate=asdict(self.gate) if self.gate else None)
        for hook in ("items", "score", "language"):
            out[hook] = getattr(getattr(self, hook), "__qualname__", None)
        return out


def select_specs(specs: Sequence[BaselineSpec], *, names: Sequence[str] = (), model: str | None = None,
                 setup: str | None = None, variant: str | None = None, config: str | None = None,
                 release: Any = None, dataset: str = "this dataset") -> list[BaselineSpec]:
    """The specs a command line asks for; an unknown name (spec, model, setup, variant,
    config) is a ConfigError with suggestions and the valid names."""
    specs = list(specs)
    if not specs:
        raise ConfigError(f"{dataset} declares no model baselines",
                          hint="Declare BASELINES = [BaselineSpec(...)] in its builders/<name>/baseline.py")
    by_name = {s.name: s for s in specs}
    for n in names:
        if n not in by_name:
            raise ConfigError(f"{dataset} has no baseline {n!r}", hint=did_you_mean(n, by_name))
    out = [by_name[n] for n in dict.fromkeys(names)] if names else specs
    for attr, wanted in (("model", model), ("setup", setup), ("variant", variant)):
        if wanted is None:
            continue
        known = sorted({getattr(s, attr) for s in specs if getattr(s, attr)})
        low = wanted.lower()
        if low not in {k.lower() for k in known}:
            raise ConfigError(f"{dataset} has no baseline with {attr} {wanted!r}", hint=did_you_mean(wanted, known))
        out = [s for s in out if (getattr(s, attr) or "").lower() == low]
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


__all__ = ["BaselineSpec", "Engine", "Gate", "Seq2SeqItem", "engine_names", "get_engine", "register_engine",
           "select_specs"]
