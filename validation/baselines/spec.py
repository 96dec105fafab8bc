"""Baseline declarations and the one generic runner: a dataset says *which* baselines apply
to *which* configs; a registered engine (:mod:`~benchsmith.validation.baselines.engine`) knows
*how* to run it.

A builder declares its baselines in ``builders/<name>/baseline.py`` as a module-level
``BASELINES = [BaselineSpec(...), ...]``; :meth:`benchsmith.builder.Builder.baselines`
finds them. ``benchsmith baseline NAME`` runs them on a release
(:func:`run_spec`), ``benchsmith validate --baselines model`` runs the ones marked
``gate=True`` and fails the gate on their thresholds.

What a :class:`BaselineSpec` says:

* ``engine``: the name of a registered engine (:func:`~.engine.get_engine`; an unknown
  name is a ConfigError with suggestions). Generic ones (:mod:`~.engines`):
  ``cross_encoder`` (multiple choice, fine-tuned), ``label_issues`` (out-of-fold
  probabilities + cleanlab), ``generation`` (fine-tune a local LM and generate), ``copy``
  (the source as the output: no model); a dataset's own engines register from its builder
  folder (e.g. ``nmt``, ``lm_scoring``, ``use_zero_shot``), imported by its ``baseline.py``.
* where it trains and what it scores: ``config`` with ``train_split`` and
  ``selection_split`` (model selection); ``eval_configs`` (default: ``config``; shell
  patterns such as ``translation-*`` are matched against the release's configs) times
  ``eval_splits``. A config or split the release lacks is left out and noted.
  ``label_issues`` pools the ``eval_splits`` of ``config``; an engine registered with
  ``trains=False`` (``copy``, ``lm_scoring``) trains nothing.
* ``variant``: ``full``, ``options_only`` (the context hidden, generic) or a dataset's
  own partial input (XCOPA's ``NoP``/``NoQ``), which its ``items`` adapter produces.
* ``items(release, config, split) -> list``: the dataset-specific shaping
  (:class:`~benchsmith.validation.baselines.multiple_choice.MCItem` for multiple-choice
  engines, :class:`Seq2SeqItem` for ``nmt``/``generation``/``copy``, release rows for
  ``lm_scoring``). Without one, multiple-choice items come from the config's typed
  policy (``choices``, ``context``, ``label``) and release rows are passed as they are.
* ``score(release, config, split, items, outputs) -> {metric: value, ...}``: the dataset's
  scorer for output-producing engines: ``items`` are the ones scored (a subsample with
  ``max_examples``), ``outputs`` the hypotheses in their order (the scores file of ``lm_scoring``);
  numbers become score rows, ``signature``/``details`` entries are kept. ``validation/``
  never imports a builder, so a dataset's scorer arrives through this hook.
* ``gate`` with ``max_gain`` (None: the config's ``policy.partial_input_max_gain``,
  default 0.10, the same threshold as the cheap partial-input check) and/or
  ``min_accuracy`` (accuracy at least this), over the ``gate_splits`` (default
  ``eval_splits``). Below ``min_accuracy`` fails. The gain follows the one partial-input
  rule (:func:`~benchsmith.validation.baselines.partial_input.artifact_verdict`): at least
  ``max_gain`` and significant (one-sided binomial test against chance, p < 0.01) fails,
  unless the builder declares it in ``known_artifacts.yaml`` (then it warns, up to the
  declared gain); not significant (a handful of items) or significant within ``max_gain``
  warns. A run on a subsample (``max_examples``, as ``validate`` does on CPU) that passes is
  a warn that says so. Thresholds are fractions; score rows are percentages.
* ``paper``: ids of ``published.yaml`` figures the baseline reproduces, shown beside ours
  (never gated on). A figure matches a score row when its ``config``/``split`` (if set)
  and ``args.metric`` (if set) agree; a mapping value is looked up by the row's metric,
  config, or the config's ``language`` (below), a number is taken as it is. Only rows of ``eval_splits`` get paper figures.
  ``paper_note`` says how the paper's setup differs from ours.
* ``averages``: ``{name: (language, ...)}``: the mean accuracy over those languages (a
  config's ``source_language``, else its name) of each eval split, a row of its own with
  ``name`` as its config, when every one of them was scored (else a note); e.g. a paper's
  "All" column. The languages are the dataset's to name, so they are declared here.
* ``options``: the engine's typed options (its dataclass, or a mapping of its fields, e.g.
  ``{"lr": 2e-5}``), checked when the spec is declared; command-line ``--set KEY=VALUE``
  overrides them; unknown names are a ConfigError with suggestions.
* ``language(release, config) -> str | None``: the name a config goes by in ``averages`` and
  in a paper figure's mapping (default: the config's name); the dataset's to say (XCOPA:
  a ``translation-et`` config is ``et``).
* ``model``/``setup``: short names ``benchsmith baseline --model``/``--setup`` select by.
  Whether ``--model-path`` is required is the engine's (``needs_model_path``).

Comparability: a result is ``comparable`` with the paper only when nothing about the run
departs from the paper's setup as declared: no split cut by ``max_examples``, trained on the
declared ``train_split``, model selection on a split other than the training one, the
``paper`` preset and its steps (nmt). Every departure is a ``caveat`` in the result; the
paper figures are still shown, and the command line, the report and the card label the run
as not comparable. What the spec itself cannot match (another encoder than the paper's) is
its ``paper_note``.
"""

from __future__ import annotations

import fnmatch
import re
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import TYPE_CHECKING, Any

from benchsmith.validation.baselines.engine import Engine, get_engine

from benchsmith.errors import ConfigError, did_you_mean

if TYPE_CHECKING:
    from benchsmith.validation.baselines.runtime import RunRecord

    from benchsmith.release import Release

GENERIC_VARIANTS = ("full", "options_only")
SIGNIFICANCE = 0.01
_NAME = re.compile(r"^[a-z0-9][a-z0-9_.+-]*$")


@dataclass(frozen=True)
class Seq2SeqItem:
    """One source with its reference outputs (``nmt``, ``generation``, ``copy``)."""

    id: str
    source: str
    references: tuple[str, ...]


ItemsFn = Callable[[Any, str, str], Sequence[Any]]
ScoreFn = Callable[[Any, str, str, Sequence[Any], Any], Mapping[str, Any]]
LanguageFn = Callable[[Any, str], "str | None"]


@dataclass(frozen=True)
class BaselineSpec:
    """One declared baseline (see module docstring). Bad declarations are ConfigErrors."""

    name: str
    engine: str
    config: str
    train_split: str | None = "train"
    selection_split: str | None = "validation"
    eval_splits: tuple[str, ...] = ("test",)
    eval_configs: tuple[str, ...] = ()
    variant: str = "full"
    items: ItemsFn | None = None
    score: ScoreFn | None = None
    gate: bool = False
    max_gain: float | None = None
    min_accuracy: float | None = None
    gate_splits: tuple[str, ...] = ()
    paper: tuple[str, ...] = ()
    paper_note: str = ""
    model: str | None = None
    setup: str | None = None
    #: the engine's options dataclass (a mapping of its fields is turned into it)
    options: Any = None
    averages: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    language: LanguageFn | None = None
    description: str = ""

    def __post_init__(self) -> None:
        for name in ("eval_splits", "eval_configs", "gate_splits", "paper"):
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
        averages = {}
        for avg, langs in dict(self.averages).items():
            langs = (langs,) if isinstance(langs, str) else tuple(langs)
            if not langs:
                raise ConfigError(f"{where}: average {avg!r} names no languages",
                                  hint="averages={'All': ('et', 'ht', ...)}")
            averages[avg] = langs
        object.__setattr__(self, "averages", averages)
        if averages and not engine.accuracy:
            raise ConfigError(f"{where}: averages apply to accuracy engines, not {self.engine!r}")
        if self.variant not in GENERIC_VARIANTS and self.items is None:
            raise ConfigError(f"{where}: variant {self.variant!r} needs an items adapter that produces it",
                              hint=f"Generic variants: {', '.join(GENERIC_VARIANTS)}; pass items=...")
        if self.variant == "options_only" and not engine.multiple_choice:
            raise ConfigError(f"{where}: options_only applies to multiple-choice engines, not {self.engine!r}")
        if self.gate:
            if not engine.accuracy:
                raise ConfigError(f"{where}: only accuracy engines can gate, not {self.engine!r}")
            if self.variant == "full" and self.min_accuracy is None and self.max_gain is None:
                raise ConfigError(f"{where}: a gated full-input baseline needs min_accuracy or max_gain",
                                  hint="Partial-input variants default to policy.partial_input_max_gain")
        for name in ("max_gain", "min_accuracy"):
            value = getattr(self, name)
            if value is not None and not 0 <= value <= 1:
                raise ConfigError(f"{where}: {name}={value!r}; expected a fraction in [0, 1]")
        if not self.eval_splits:
            raise ConfigError(f"{where}: no eval_splits")

    @property
    def partial(self) -> bool:
        """Whether the variant hides part of the input."""
        return self.variant != "full"

    @property
    def engine_info(self) -> Engine:
        """The registered engine this spec names."""
        return get_engine(self.engine)

    @property
    def trains(self) -> bool:
        return self.engine_info.trains

    @property
    def requires_model_path(self) -> bool:
        """Whether the engine needs ``--model-path`` (nothing is downloaded)."""
        return self.engine_info.needs_model_path

    def language_of(self, release: Release, config: str) -> str:
        """What ``config`` is called in ``averages`` and paper mappings (see module docstring)."""
        name = self.language(release, config) if self.language is not None else None
        return str(name) if name else config

    def eval_config_names(self, release: Release) -> list[str]:
        """``eval_configs`` (default ``config``) expanded against the release's configs, in order."""
        names: list[str] = []
        for pattern in self.eval_configs or (self.config,):
            hits = fnmatch.filter(release.configs(), pattern) if any(c in pattern for c in "*?[") \
                else [pattern] if pattern in release.configs() else []
            names += [h for h in hits if h not in names]
        return names

    def evaluations(self, release: Release, restrict: Sequence[str] = ()) -> tuple[list[tuple[str, str]], list[str]]:
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
        """What ``benchsmith baseline NAME --list`` shows of the declaration."""
        out = {f.name: getattr(self, f.name) for f in fields(self)
               if f.name not in ("items", "score", "options", "averages", "language")}
        out["options"] = asdict(self.options)
        out["averages"] = {k: list(v) for k, v in self.averages.items()}
        out["items"] = getattr(self.items, "__qualname__", None) if self.items else None
        out["score"] = getattr(self.score, "__qualname__", None) if self.score else None
        out["language"] = getattr(self.language, "__qualname__", None) if self.language else None
        return out


# --------------------------------------------------------------------------- selection


def select_specs(specs: Sequence[BaselineSpec], *, names: Sequence[str] = (), model: str | None = None,
                 setup: str | None = None, variant: str | None = None, config: str | None = None,
                 release: Release | None = None, dataset: str = "this dataset") -> list[BaselineSpec]:
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
        raise ConfigError(f"no baseline of {dataset} matches the selection",
                          hint=f"Declared: {', '.join(by_name)}")
    return out


# --------------------------------------------------------------------------- run options and results


@dataclass
class RunOptions:
    """How one run departs from the spec's defaults (every field is recorded)."""

    model_path: str | Path | None = None
    device: str = "auto"
    epochs: int | None = None
    max_examples: int | None = None
    max_steps: int | None = None
    seed: int = 0
    preset: str | None = None
    train_split: str | None = None
    configs: tuple[str, ...] = ()
    overrides: Mapping[str, Any] = field(default_factory=dict)
    out_dir: str | Path | None = None
    #: also write trained weights into ``out_dir`` (nmt: ``model/``); off by default, as a release's
    #: reports folder is published with it
    save_model: bool = False
    #: texts -> vectors, replacing USE in ``use_zero_shot`` (tests, other encoders)
    encoder: Any = None

    def __post_init__(self) -> None:
        for name in ("epochs", "max_examples", "max_steps"):
            value = getattr(self, name)
            if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 1):
                raise ConfigError(f"{name}={value!r}; expected a positive integer", hint=f"Fix --{name.replace('_', '-')}")
        self.configs = tuple(self.configs)
        self.overrides = dict(self.overrides)

    @classmethod
    def make(cls, **options: Any) -> RunOptions:
        names = {f.name for f in fields(cls)}
        for key in options:
            if key not in names:
                raise ConfigError(f"unknown baseline run option {key!r}", hint=did_you_mean(key, names))
        return cls(**options)

    def recorded(self) -> dict[str, Any]:
        return {k: (str(v) if isinstance(v, Path) else v) for k, v in asdict(self).items() if k != "encoder"}


@dataclass
class ScoreRow:
    """One figure of a run: ``value`` in percent for accuracy and error rates, 0-100 for BLEU."""

    config: str
    split: str
    metric: str
    value: float | None
    n: int | None = None
    paper: list[dict[str, Any]] = field(default_factory=list)
    #: mean 1/(options) of the scored items (multiple choice; a gate reads it)
    chance: float | None = None


@dataclass
class BaselineResult:
    """What :func:`run_spec` returns (JSON via :meth:`to_dict`)."""

    spec: str
    engine: str
    dataset: str
    version: str
    variant: str
    setup: str | None
    model: str
    scores: list[ScoreRow]
    records: list[RunRecord]
    comparable: bool
    caveats: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    gate: dict[str, Any] | None = None
    details: dict[str, Any] = field(default_factory=dict)
    outputs: dict[str, str] = field(default_factory=dict)
    fingerprints: dict[str, dict[str, str]] = field(default_factory=dict)
    options: dict[str, Any] = field(default_factory=dict)
    wall_time_s: float = 0.0
    description: str = ""
    paper_note: str = ""
    #: the published.yaml ids the spec declares (found or not)
    paper: list[str] = field(default_factory=list)

    @property
    def record(self) -> RunRecord | None:
        """The (first) run record; ``label_issues`` has one per fold in :attr:`records`."""
        return self.records[0] if self.records else None

    @property
    def status(self) -> str:
        """``pass``/``warn``/``fail`` for a gated spec, ``stat`` otherwise."""
        return self.gate["status"] if self.gate else "stat"

    def score(self, config: str, split: str, metric: str = "accuracy") -> float | None:
        for row in self.scores:
            if (row.config, row.split, row.metric) == (config, split, metric):
                return row.value
        return None

    def table_rows(self) -> list[dict[str, Any]]:
        """Rows of the card's and the report's baselines table."""
        model = short_model(self.model)
        out = []
        for row in self.scores:
            out.append({
                "baseline": self.spec, "config": row.config, "split": row.split, "variant": self.variant,
                "model": model, "metric": row.metric, "value": row.value, "n": row.n,
                "paper": [{"id": p["id"], "value": p["value"]} for p in row.paper],
                "comparable": self.comparable if self.paper else None,
            })
        return out

    def to_dict(self, relative_to: str | Path | None = None) -> dict[str, Any]:
        """The result as JSON; with ``relative_to`` (the folder it is written into) as
        :func:`portable` makes it: no absolute path of this machine."""
        data = self._dict()
        return portable(data, relative_to) if relative_to is not None else data

    def _dict(self) -> dict[str, Any]:
        return {
            "baseline": self.spec, "engine": self.engine, "dataset": self.dataset, "version": self.version,
            "variant": self.variant, "setup": self.setup, "model": self.model, "description": self.description,
            "status": self.status, "comparable": self.comparable, "caveats": list(self.caveats),
            "paper": list(self.paper), "paper_note": self.paper_note, "notes": list(self.notes), "gate": self.gate,
            "scores": [asdict(r) for r in self.scores],
            "records": [r.to_dict() for r in self.records],
            "options": self.options, "details": self.details, "outputs": dict(self.outputs),
            "fingerprints": self.fingerprints, "wall_time_s": self.wall_time_s, "table": self.table_rows(),
        }


def portable(data: Any, folder: str | Path) -> Any:
    """``data`` with every absolute path made portable, for what is written into a release: a path
    inside ``folder`` becomes relative to it (``copa-en@en/copa-en.predictions.jsonl``), any other
    (a model folder, ``--out`` elsewhere) its name as :func:`short_model` gives it; the model's
    sha256 in the run record still identifies the weights. Relative paths and model names stay
    as given."""
    import os

    if isinstance(data, Mapping):
        return {k: portable(v, folder) for k, v in data.items()}
    if isinstance(data, (list, tuple)):
        return [portable(v, folder) for v in data]
    if isinstance(data, Path):
        data = str(data)
    if isinstance(data, str) and os.path.isabs(data) and "\n" not in data:
        path, base = Path(data), Path(folder).resolve()
        try:
            return path.resolve().relative_to(base).as_posix() or "."
        except (ValueError, OSError):
            return short_model(data)
    return data


def short_model(model: str) -> str:
    """A model's name for a table: a folder's last part (``.../all-MiniLM-L6-v2`` -> its name)."""
    text = str(model)
    if ":" in text and not text.startswith(("/", ".")):
        text = text.split(":", 1)[0]
    if "/" in text or "\\" in text:
        parts = [p for p in re.split(r"[\\/]", text.strip()) if p]
        tail = parts[-1] if parts else text
        if tail in ("model", "resources") and len(parts) > 1:
            tail = parts[-2]
        return tail
    return text


# --------------------------------------------------------------------------- paper figures


def published_figures(builder: Any, version: str | None = None) -> list[Any]:
    """The builder's ``published.yaml`` figures that apply to ``version`` (unbound: the model
    baselines' figures are compared here, not measured by validate)."""
    from benchsmith.expectation import read_published_yaml
    from benchsmith.semver import parse_version

    if builder is None or not hasattr(builder, "data_path"):
        return []
    figures = read_published_yaml(builder.data_path("published.yaml"))
    if version is None:
        return figures
    v = parse_version(version)
    return [f for f in figures
            if not (f.since and v < parse_version(f.since) or f.until and v > parse_version(f.until))]


def paper_value(figure: Any, row: ScoreRow, language: str | None = None) -> Any:
    """The figure's value for ``row`` (whose config goes by ``language`` in a mapping), or None
    when the figure is not about that row."""
    if figure.config and figure.config != row.config:
        return None
    if figure.split and figure.split != row.split:
        return None
    args = figure.args or {}
    if args.get("metric") and args["metric"] != row.metric:
        return None
    value = figure.value
    if isinstance(value, Mapping):
        for key in (row.metric, row.config, language):
            if key is not None and key in value:
                return value[key]
        return None
    return value if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def attach_paper(spec: BaselineSpec, rows: Sequence[ScoreRow], figures: Sequence[Any], release: Release) -> list[str]:
    """Put the paper's figures beside the rows they are about; returns notes on ids not found."""
    by_id = {f.id: f for f in figures}
    notes = []
    for fid in spec.paper:
        figure = by_id.get(fid)
        if figure is None:
            notes.append(f"paper figure {fid!r} is declared by the baseline but not in published.yaml: not shown")
            continue
        for row in rows:
            if row.split not in spec.eval_splits:
                continue
            value = paper_value(figure, row, spec.language_of(release, row.config))
            if value is not None:
                row.paper.append({"id": fid, "value": value, "source": figure.source})
    return notes


def average_rows(spec: BaselineSpec, release: Release, rows: Sequence[ScoreRow]) -> tuple[list[ScoreRow], list[str]]:
    """The spec's declared ``averages`` over the accuracy rows of each eval split (see module docstring)."""
    out: list[ScoreRow] = []
    notes: list[str] = []
    if not spec.averages:
        return out, notes
    for split in spec.eval_splits:
        by_language = {}
        for row in rows:
            if row.split == split and row.metric == "accuracy" and row.value is not None \
                    and row.config in release.configs():
                by_language[spec.language_of(release, row.config)] = row.value
        if not by_language:
            continue
        for name, langs in spec.averages.items():
            missing = [lang for lang in langs if lang not in by_language]
            if missing:
                notes.append(f"average {name!r} of {split} not computed: {', '.join(missing)} not scored")
                continue
            out.append(ScoreRow(config=name, split=split, metric="accuracy",
                                value=round(sum(by_language[lang] for lang in langs) / len(langs), 2)))
    return out, notes


# --------------------------------------------------------------------------- gate


def gate_threshold(spec: BaselineSpec, release: Release, config: str) -> float | None:
    """``spec.max_gain``, else (a partial-input variant) the config's partial-input threshold
    (``policy.partial_input_max_gain``, default 0.10: the cheap check's)."""
    if spec.max_gain is not None:
        return spec.max_gain
    if not spec.partial:
        return None
    from benchsmith.validation.baselines.partial_input import DEFAULT_MAX_GAIN

    declared = release.config_info(config).validation_policy.partial_input_max_gain
    return float(declared) if declared is not None else DEFAULT_MAX_GAIN


def gate_verdict(spec: BaselineSpec, release: Release, rows: Sequence[ScoreRow], *, known: Sequence[Any] = (),
                 subsampled: bool = False) -> dict[str, Any]:
    """Pass / warn / fail of a gated spec over its gate splits (see module docstring).

    The gain over chance follows the one partial-input rule
    (:func:`~benchsmith.validation.baselines.partial_input.artifact_verdict`, with the
    builder's ``known`` artifacts); ``min_accuracy`` fails below it. ``subsampled``: the run saw
    a cut of its splits, so a pass is only a warn that says so (a verdict on a subsample is
    never a silent pass); a fail stays a fail.
    """
    from benchsmith.validation.baselines.partial_input import artifact_verdict

    splits = spec.gate_splits or spec.eval_splits
    checks = []
    for row in rows:
        if row.metric != "accuracy" or row.split not in splits or row.value is None or not row.n:
            continue
        if row.config not in release.configs():  # averages
            continue
        accuracy = row.value / 100
        chance = row.chance if row.chance is not None else 0.5
        threshold = gate_threshold(spec, release, row.config)
        v = artifact_verdict(accuracy=accuracy, chance=chance, n=row.n, threshold=threshold, probe=spec.name,
                             config=row.config, known=known)
        if not spec.partial and v["status"] == "warn" and (threshold is None or v["gain"] < threshold):
            v["status"], v["why"] = "pass", ""  # a full-input model above chance is no artifact
        reasons = [v["why"]] if v["why"] else []
        status = v["status"]
        if spec.min_accuracy is not None and accuracy < spec.min_accuracy:
            status = "fail"
            reasons.append(f"accuracy {accuracy:.1%} < min {spec.min_accuracy:.0%}")
        if subsampled and status == "pass":
            status = "warn"
            reasons.append(f"passed on a subsample ({row.n} items scored): run `benchsmith baseline "
                           f"{release.name} --baseline {spec.name}` on every item; its recorded result joins the gate")
        checks.append({"config": row.config, "split": row.split, "accuracy": v["accuracy"], "chance": v["chance"],
                       "gain": v["gain"], "n": row.n, "p_value": v["p_value"], "max_gain": threshold,
                       "min_accuracy": spec.min_accuracy, "status": status, "subsampled": subsampled,
                       "known_artifact": v["known_artifact"], "why": "; ".join(reasons)})
    order = {"fail": 0, "warn": 1, "pass": 2}
    status = min((c["status"] for c in checks), key=order.__getitem__, default="pass")
    return {"status": status, "passed": status != "fail", "checks": checks, "subsampled": subsampled,
            "rule": ("partial-input gain over chance: fails when >= max_gain and significant (p < 0.01), "
                     "unless a declared known artifact") if spec.partial else "accuracy >= min_accuracy"}


# --------------------------------------------------------------------------- the runner


def run_spec(spec: BaselineSpec, release: Release, *, builder: Any = None, figures: Sequence[Any] | None = None,
             **options: Any) -> BaselineResult:
    """Run one declared baseline on ``release``.

    Args:
        spec: the declaration.
        release: a :class:`~benchsmith.release.Release`.
        builder: the dataset's builder, whose ``published.yaml`` holds the paper's figures
            (or pass ``figures``).
        options: :class:`RunOptions` fields: ``model_path``, ``device`` (auto|cpu|cuda),
            ``epochs``, ``max_examples`` (per split, seeded), ``max_steps``, ``seed``,
            ``preset`` (nmt), ``train_split`` (override), ``configs`` (evaluate only these),
            ``overrides`` (engine options), ``out_dir`` (predictions and score files),
            ``save_model`` (trained weights into ``out_dir``), ``encoder``.

    Returns:
        :class:`BaselineResult`: scores per config/split (the paper's figures beside them),
        run record(s), the gate verdict when ``spec.gate``, caveats and notes.
    """
    from benchsmith.validation.baselines.engine import run_engine

    opts = RunOptions.make(**options)
    start = time.perf_counter()
    evaluations, notes = spec.evaluations(release, opts.configs)
    if not evaluations:
        raise ConfigError(f"baseline {spec.name!r} scores nothing in {release.name} {release.version}"
                          + (f" ({'; '.join(notes)})" if notes else ""),
                          hint="Build the configs it needs, or pick another --config/--baseline")
    caveats = []
    if opts.max_examples is not None and spec.engine_info.subsamples:
        used_splits = list(evaluations)
        if spec.trains and spec.config in release.configs():
            used_splits += [(spec.config, s) for s in (opts.train_split or spec.train_split, spec.selection_split)
                            if s in release.splits(spec.config)]
        cut = [f"{c}/{s}" for c, s in dict.fromkeys(used_splits) if release.num_examples(c, s) > opts.max_examples]
        if cut:
            caveats.append(f"subsampled to {opts.max_examples} items per split (seed {opts.seed}): {', '.join(cut)}")
    out = run_engine(spec, release, opts, evaluations)
    rows = [ScoreRow(**r) for r in out.rows]
    averaged, average_notes = average_rows(spec, release, rows)
    rows += averaged
    notes += average_notes
    if figures is None:
        figures = published_figures(builder, release.version)
    notes += out.notes + attach_paper(spec, rows, figures, release)
    caveats += out.caveats
    used = {c for c, _ in evaluations} | ({spec.config} if spec.trains and spec.config in release.configs() else set())
    fingerprints = {c: fp for c, fp in release.fingerprints().items() if c in used}
    result = BaselineResult(
        spec=spec.name, engine=spec.engine, dataset=release.name, version=release.version, variant=spec.variant,
        setup=spec.setup, model=out.model, scores=rows, records=out.records, comparable=not caveats,
        caveats=caveats, notes=notes, details=out.details, outputs={k: str(v) for k, v in out.outputs.items()},
        fingerprints=fingerprints, options=opts.recorded(), description=spec.description, paper_note=spec.paper_note,
        paper=list(spec.paper),
    )
    if spec.gate:
        from benchsmith.validation.known_artifacts import declared

        result.gate = gate_verdict(spec, release, rows, known=declared(builder),
                                   subsampled=any(c.startswith("subsampled") for c in caveats))
    result.wall_time_s = round(time.perf_counter() - start, 3)
    return result


__all__ = [
    "BaselineResult",
    "BaselineSpec",
    "RunOptions",
    "ScoreRow",
    "Seq2SeqItem",
    "attach_paper",
    "average_rows",
    "gate_verdict",
    "paper_value",
    "portable",
    "published_figures",
    "run_spec",
    "select_specs",
    "short_model",
]
