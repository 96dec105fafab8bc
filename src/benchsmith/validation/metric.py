"""The one scoring contract: ``metric.score(predictions, references) -> Score``.

Modelled on sacrebleu: a metric is a small class configured once (its options are
constructor arguments, validated there, a :class:`~benchsmith.errors.ConfigError` for a bad
value), scores in-memory predictions against in-memory references with **one method for
every metric**, :meth:`Metric.score`, and returns a :class:`Score`: the headline value, the
*result signature* and the details. ``signature()`` is the metric's name and version, every
option that moves the number and the benchsmith version; it depends on the options alone,
never on the last call. Facts of one scoring call (the number of references, items, the
split) go into the result signature (:meth:`Metric.result_signature`), so a figure in a
paper can be reproduced from its printout, as with sacrebleu's ``BLEU|nrefs:1|...``.

Generic metrics (accuracy, BLEU) live in ``validation/metrics/``; dataset metrics (CTER,
MuCoW's accuracy and P/R) live in their builder folder as ``metric.py`` and implement the
same base. A builder declares its metrics as ``METRICS`` in that module
(:meth:`benchsmith.builder.Builder.metrics`), and one generic command scores any of them::

    benchsmith evaluate NAME PREDICTIONS [--config C] [--split S] [--metric M] [metric options]

(:mod:`benchsmith.scoring`). For that command a dataset metric also implements three hooks,
called in this order; the scoring method itself never reads a file:

1. :meth:`Metric.target`: which config and split a request (``--config``/``--split`` and the
   metric's own options, e.g. ComVE's ``--subtask``) scores, or ``None`` when this metric does
   not score that config (CoGnition's CTER on the random test set);
2. :meth:`Metric.for_release`: the metric completed with what only the release knows (CTER's
   lexicon, MuCoW's target language); the default is the metric itself;
3. :meth:`Metric.references` (the gold data, from the release) and
   :meth:`Metric.read_predictions`, which reads the file with
   :mod:`benchsmith.validation.predictions` (streamed, checked row by row against the
   references, every defect a PredictionError at ``file:line``).

Options the command line may set are declared as :class:`Option` rows in ``OPTIONS`` (typed,
with help and choices); the command is generated from them (:mod:`benchsmith.scoring`), so a
new metric option needs no CLI code.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Generic, TypeVar

import benchsmith
from benchsmith.errors import ConfigError, did_you_mean

if TYPE_CHECKING:
    from benchsmith.release import Release

P = TypeVar("P")
R = TypeVar("R")


def _fmt(value: Any) -> str:
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, (list, tuple)):
        return ",".join(_fmt(v) for v in value)
    if isinstance(value, Mapping):
        return ",".join(f"{k}={_fmt(v)}" for k, v in value.items())
    return "none" if value is None else str(value)


@dataclass(frozen=True)
class Option:
    """One typed option a metric takes from the command line (a constructor keyword argument).

    Args:
        name: the constructor keyword (``rule``); the flag is ``--rule`` unless ``flag`` says otherwise.
        type: ``str``, ``int``, ``float``, ``bool`` (a flag) or ``Path``.
        help: one sentence for ``--help`` (plain text: no reST markup).
        default: the value when the option is not given (shown in ``--help``).
        choices: the allowed values of a ``str`` option (``--help`` lists them; anything else is exit 2).
        required: the metric cannot score without it (checked once the metric is chosen).
        predictions: the option names the predictions file (an alternative to PREDICTIONS, e.g.
            MuCoW's ``--scores``); giving it chooses this metric. Not passed to the constructor.
    """

    name: str
    type: type = str
    help: str = ""
    default: Any = None
    choices: tuple[str, ...] = ()
    required: bool = False
    predictions: bool = False
    flag: str | None = None

    @property
    def cli_flag(self) -> str:
        return self.flag or "--" + self.name.replace("_", "-")


@dataclass(frozen=True)
class Score:
    """One scoring call's result: the headline ``value``, the result ``signature`` and the details.

    Args:
        metric: the metric's name.
        value: the headline figure (``None`` when there is none, e.g. an XCOPA file without any
            XCOPA language).
        signature: the metric's signature plus the facts of this call.
        details: further figures (per language, per group, sufficient statistics), JSON-ready.
        items: per-item records (``benchsmith evaluate --details FILE`` writes one JSON line each).
        warnings: what a person should know about this figure (printed on stderr, exit 0).
    """

    metric: str
    value: float | None
    signature: str
    details: Mapping[str, Any] = field(default_factory=dict)
    items: Sequence[Mapping[str, Any]] = ()
    warnings: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        """``{"score": value, "signature": ..., **details}`` (and ``warnings`` when there are any)."""
        out = {"score": self.value, "signature": self.signature, **self.details}
        if self.warnings:
            out["warnings"] = list(self.warnings)
        return out

    def __str__(self) -> str:
        return f"{self.metric} = {self.value} ({self.signature})"


class Metric(Generic[P, R]):
    """Base class: set ``name`` (and ``version`` when the algorithm changes), implement
    :meth:`options` and :meth:`score`; a dataset metric also implements the evaluate hooks."""

    name: ClassVar[str]
    #: bumped when the algorithm changes the number for the same options
    version: ClassVar[str] = "1"
    #: what ``benchsmith evaluate NAME --help`` says this metric measures (one sentence)
    description: ClassVar[str] = ""
    #: the options ``benchsmith evaluate`` may set (constructor keyword arguments)
    OPTIONS: ClassVar[tuple[Option, ...]] = ()
    #: the configs this metric scores (``fnmatch`` patterns); ``()``: every config
    CONFIGS: ClassVar[tuple[str, ...]] = ()
    #: what ``--split`` means for this metric beyond "the split to score" (``--help``), if anything
    split_help: ClassVar[str] = ""
    #: whether :attr:`Score.items` holds per-item records (``benchsmith evaluate --details``)
    judges_items: ClassVar[bool] = False

    def options(self) -> dict[str, Any]:
        """Every option that moves the number, in signature order (``{}`` when none)."""
        return {}

    def signature(self) -> str:
        """``name:version|option:value|...|benchsmith:X`` from the options alone."""
        parts = [f"{self.name}:{self.version}", *(f"{k}:{_fmt(v)}" for k, v in self.options().items())]
        parts.append(f"benchsmith:{benchsmith.__version__}")
        return "|".join(parts)

    def result_signature(self, **facts: Any) -> str:
        """The signature plus the facts of one scoring call (``n=1000``, ``nrefs=3``)."""
        return "|".join([self.signature(), *(f"{k}:{_fmt(v)}" for k, v in facts.items())])

    def score(self, predictions: P, references: R) -> Score:
        """Score ``predictions`` against ``references`` (both in memory); the one scoring method."""
        raise NotImplementedError

    # ------------------------------------------------------------ benchsmith evaluate's hooks
    @classmethod
    def scores_config(cls, config: str) -> bool:
        """Whether ``config`` is one this metric scores (:attr:`CONFIGS`)."""
        return not cls.CONFIGS or any(fnmatch.fnmatchcase(config, p) for p in cls.CONFIGS)

    def target(self, release: Release, config: str | None, split: str | None) -> tuple[str | None, str] | None:
        """``(config, split)`` this metric scores for a request, or ``None`` when it scores no such config.

        The default: the requested config (or the one config of the release this metric scores),
        split ``test`` unless given. A config or split the release lacks is a ConfigError.
        """
        configs = [c for c in release.configs() if self.scores_config(c)]
        if config is None:
            if len(configs) != 1:
                raise ConfigError(f"{release.name} has {len(configs)} configs {self.name} scores; say which",
                                  hint=f"Pass --config, one of {', '.join(configs)}")
            config = configs[0]
        elif config not in release.configs():
            raise ConfigError(f"release {release.name} {release.version} has no config {config!r}",
                              hint=did_you_mean(config, release.configs()))
        elif not self.scores_config(config):
            return None
        return config, self.check_split(release, config, split or "test")

    @staticmethod
    def check_split(release: Release, config: str, split: str) -> str:
        """``split`` when ``config`` of ``release`` has it; else a ConfigError naming the splits it has."""
        have = release.splits(config)
        if split not in have:
            raise ConfigError(f"release {release.name} {release.version} has no split {split!r} for {config}",
                              hint=did_you_mean(split, have))
        return split

    def for_release(self, release: Release, config: str | None) -> Metric[P, R]:
        """This metric completed with what only the release knows (default: itself)."""
        return self

    def references(self, release: Release, config: str | None, split: str) -> R:
        """The gold data of ``config``/``split`` that :meth:`score` takes."""
        raise NotImplementedError(f"{type(self).__name__} scores in memory only (no references hook)")

    def read_predictions(self, path: Path, references: R) -> P:
        """Read a predictions file into what :meth:`score` takes (with
        :mod:`benchsmith.validation.predictions`: streamed, checked against ``references``)."""
        raise NotImplementedError(f"{type(self).__name__} scores in memory only (no file reader)")

    def __repr__(self) -> str:
        return f"{type(self).__name__}({', '.join(f'{k}={v!r}' for k, v in self.options().items())})"
