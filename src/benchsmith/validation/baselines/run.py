"""Run a declared baseline (:func:`run_spec`) into a :class:`BaselineResult`: the engine's
scores with the paper's figures beside them, the declared averages, the gate, caveats and notes.

A result is ``comparable`` with the paper only without caveats: every departure from the paper's
setup as declared (a subsample, another train split, no model selection, another preset or fewer
steps) is one; what the spec itself cannot match (another encoder) is its ``Setup.note``. The
gate (:func:`gate_verdict`) is the one partial-input rule of validation/README.md, "Known
artifacts", plus ``min_accuracy``; a pass on a subsample is a warn that says so.
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from benchsmith.errors import ConfigError
from benchsmith.expectation import read_published_yaml
from benchsmith.semver import parse_version
from benchsmith.validation.baselines.engine import RunOptions, run_engine
from benchsmith.validation.baselines.runtime import RunRecord
from benchsmith.validation.baselines.spec import BaselineSpec
from benchsmith.validation.checks.partial_input import DEFAULT_MAX_GAIN, artifact_verdict
from benchsmith.validation.known_artifacts import declared

if TYPE_CHECKING:
    from benchsmith.release import Release


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

    spec: BaselineSpec
    dataset: str
    version: str
    model: str
    scores: list[ScoreRow]
    records: list[RunRecord]
    caveats: list[str]
    notes: list[str]
    details: dict[str, Any]
    outputs: dict[str, str]
    fingerprints: dict[str, dict[str, str]]
    options: dict[str, Any]
    gate: dict[str, Any] | None = None
    wall_time_s: float = 0.0

    @property
    def comparable(self) -> bool:
        return not self.caveats

    def to_dict(self, relative_to: str | Path | None = None) -> dict[str, Any]:
        """The result as JSON; with ``relative_to`` (the folder it is written into) as
        :func:`portable` makes it: no absolute path of this machine."""
        spec, setup = self.spec, self.spec.setup
        table = [{"baseline": spec.name, "config": r.config, "split": r.split, "variant": spec.variant,
                  "model": short_model(self.model), "metric": r.metric, "value": r.value, "n": r.n,
                  "paper": [{"id": p["id"], "value": p["value"]} for p in r.paper],
                  "comparable": self.comparable if setup.paper else None} for r in self.scores]
        data = {
            "baseline": spec.name, "engine": spec.engine, "dataset": self.dataset, "version": self.version,
            "variant": spec.variant, "setup": setup.name, "model": self.model,
            "description": spec.description,
            "status": self.gate["status"] if self.gate else "stat", "comparable": self.comparable,
            "caveats": list(self.caveats), "paper": list(setup.paper), "paper_note": setup.note,
            "notes": list(self.notes), "gate": self.gate, "scores": [asdict(r) for r in self.scores],
            "records": [r.to_dict() for r in self.records], "options": self.options, "details": self.details,
            "outputs": dict(self.outputs), "fingerprints": self.fingerprints, "wall_time_s": self.wall_time_s,
            "table": table,
        }
        return portable(data, relative_to) if relative_to is not None else data


def portable(data: Any, folder: str | Path) -> Any:
    """``data`` with every absolute path made portable, for what is written into a release: a path
    inside ``folder`` becomes relative to it (``copa-en@en/copa-en.predictions.jsonl``), any other
    (a model folder, ``--out`` elsewhere) its name as :func:`short_model` gives it; the model's
    sha256 in the run record still identifies the weights."""
    if isinstance(data, Mapping):
        return {k: portable(v, folder) for k, v in data.items()}
    if isinstance(data, (list, tuple)):
        return [portable(v, folder) for v in data]
    if isinstance(data, Path):
        data = str(data)
    if isinstance(data, str) and os.path.isabs(data) and "\n" not in data:
        try:
            return Path(data).resolve().relative_to(Path(folder).resolve()).as_posix() or "."
        except (ValueError, OSError):
            return short_model(data)
    return data


def short_model(model: str) -> str:
    """A model's name for a table: a folder's last part (``.../all-MiniLM-L6-v2`` -> its name)."""
    text = str(model)
    if ":" in text and not text.startswith(("/", ".")):
        text = text.split(":", 1)[0]
    if "/" not in text and "\\" not in text:
        return text
    parts = [p for p in re.split(r"[\\/]", text.strip()) if p] or [text]
    return parts[-2] if parts[-1] in ("model", "resources") and len(parts) > 1 else parts[-1]


# --------------------------------------------------------------------------- paper figures


def published_figures(builder: Any, version: str) -> list[Any]:
    """The builder's ``published.yaml`` figures that apply to ``version`` (unbound: the model
    baselines' figures are compared here, not measured by validate)."""

    if builder is None or not hasattr(builder, "data_path"):
        return []
    v = parse_version(version)
    return [f for f in read_published_yaml(builder.data_path("published.yaml"))
            if not (f.since and v < parse_version(f.since) or f.until and v > parse_version(f.until))]


def paper_value(figure: Any, row: ScoreRow, language: str) -> Any:
    """The figure's value for ``row`` (whose config the paper calls ``language``), or None when
    the figure is not about that row."""
    metric = (figure.args or {}).get("metric")
    if any(want and want != got for want, got in ((figure.config, row.config), (figure.split, row.split),
                                                   (metric, row.metric))):
        return None
    value = figure.value
    if isinstance(value, Mapping):
        return next((value[k] for k in (row.metric, row.config, language) if k in value), None)
    return value if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def attach_paper(spec: BaselineSpec, rows: Sequence[ScoreRow], figures: Sequence[Any], release: Release) -> list[str]:
    """Put the paper's figures beside the rows they are about; returns notes on ids not found."""
    by_id = {f.id: f for f in figures}
    notes = []
    for fid in spec.setup.paper:
        figure = by_id.get(fid)
        if figure is None:
            notes.append(f"paper figure {fid!r} is declared by the baseline but not in published.yaml: not shown")
            continue
        for row in rows:
            value = paper_value(figure, row, spec.setup.language_of(release, row.config))
            if row.split in spec.splits.eval and value is not None:
                row.paper.append({"id": fid, "value": value, "source": figure.source})
    return notes


def average_rows(spec: BaselineSpec, release: Release, rows: Sequence[ScoreRow]) -> tuple[list[ScoreRow], list[str]]:
    """The declared averages (:class:`~.spec.Setup`) over the accuracy rows of each eval split."""
    out: list[ScoreRow] = []
    notes: list[str] = []
    for split in spec.splits.eval if spec.setup.averages else ():
        by_language = {spec.setup.language_of(release, r.config): r.value for r in rows
                       if r.split == split and r.metric == "accuracy" and r.value is not None
                       and r.config in release.configs()}
        for name, langs in spec.setup.averages.items() if by_language else ():
            missing = [lang for lang in langs if lang not in by_language]
            if missing:
                notes.append(f"average {name!r} of {split} not computed: {', '.join(missing)} not scored")
            else:
                out.append(ScoreRow(config=name, split=split, metric="accuracy",
                                    value=round(sum(by_language[lang] for lang in langs) / len(langs), 2)))
    return out, notes


# --------------------------------------------------------------------------- gate


def gate_verdict(spec: BaselineSpec, release: Release, rows: Sequence[ScoreRow], *, known: Sequence[Any] = (),
                 subsampled: bool = False) -> dict[str, Any]:
    """Pass / warn / fail of a gated spec over its eval splits (see module docstring); ``known``:
    the builder's known artifacts; ``subsampled``: the run saw a cut of its splits."""

    max_gain, min_accuracy = (spec.gate.max_gain, spec.gate.min_accuracy) if spec.gate else (None, None)
    checks = []
    for row in rows:
        if row.metric != "accuracy" or row.split not in spec.splits.eval or row.value is None or not row.n \
                or row.config not in release.configs():  # the last: averages
            continue
        threshold = max_gain
        if threshold is None and spec.partial:  # the config's partial-input threshold
            declared = release.config_info(row.config).validation_policy.partial_input_max_gain
            threshold = float(declared) if declared is not None else DEFAULT_MAX_GAIN
        accuracy = row.value / 100
        v = artifact_verdict(accuracy=accuracy, chance=row.chance if row.chance is not None else 0.5, n=row.n,
                             threshold=threshold, probe=spec.name, config=row.config, known=known)
        if not spec.partial and v["status"] == "warn" and (threshold is None or v["gain"] < threshold):
            v["status"], v["why"] = "pass", ""  # a full-input model above chance is no artifact
        status, reasons = v["status"], [v["why"]] if v["why"] else []
        if min_accuracy is not None and accuracy < min_accuracy:
            status = "fail"
            reasons.append(f"accuracy {accuracy:.1%} < min {min_accuracy:.0%}")
        if subsampled and status == "pass":
            status = "warn"
            reasons.append(f"passed on a subsample ({row.n} items scored): run `benchsmith baseline "
                           f"{release.name} --baseline {spec.name}` on every item; its recorded result joins the gate")
        checks.append({"config": row.config, "split": row.split, "accuracy": v["accuracy"], "chance": v["chance"],
                       "gain": v["gain"], "n": row.n, "p_value": v["p_value"], "max_gain": threshold,
                       "min_accuracy": min_accuracy, "status": status, "subsampled": subsampled,
                       "known_artifact": v["known_artifact"], "why": "; ".join(reasons)})
    status = min((c["status"] for c in checks), key=["fail", "warn", "pass"].index, default="pass")
    return {"status": status, "passed": status != "fail", "checks": checks, "subsampled": subsampled,
            "rule": ("partial-input gain over chance: fails when >= max_gain and significant (p < 0.01), "
                     "unless a declared known artifact") if spec.partial else "accuracy >= min_accuracy"}


# --------------------------------------------------------------------------- the runner


def run_spec(spec: BaselineSpec, release: Release, *, builder: Any = None, figures: Sequence[Any] | None = None,
             known: Sequence[Any] | None = None, **options: Any) -> BaselineResult:
    """Run one declared baseline on ``release``. ``builder``: the dataset's builder, whose
    ``published.yaml`` holds the paper's figures (or pass ``figures``) and whose
    ``known_artifacts.yaml`` the gate reads (or pass ``known``); ``options``: the
    :class:`~.engine.RunOptions` fields."""
    opts = RunOptions(**options)
    start = time.perf_counter()
    evaluations, notes = spec.evaluations(release, opts.configs)
    if not evaluations:
        raise ConfigError(f"baseline {spec.name!r} scores nothing in {release.name} {release.version}"
                          + (f" ({'; '.join(notes)})" if notes else ""),
                          hint="Build the configs it needs, or pick another --config/--baseline")
    trains = spec.engine_info.trains and spec.config in release.configs()
    caveats = []
    if opts.max_examples is not None and "max_examples" not in spec.engine_info.ignores:
        used = list(evaluations) + [(spec.config, s) for s in (opts.train_split or spec.splits.train,
                                                               spec.splits.selection)
                                    if trains and s in release.splits(spec.config)]
        cut = [f"{c}/{s}" for c, s in dict.fromkeys(used) if release.num_examples(c, s) > opts.max_examples]
        if cut:
            caveats.append(f"subsampled to {opts.max_examples} items per split (seed {opts.seed}): {', '.join(cut)}")
    out = run_engine(spec, release, opts, evaluations)
    rows = [ScoreRow(**r) for r in out.rows]
    averaged, average_notes = average_rows(spec, release, rows)
    rows += averaged
    if figures is None:
        figures = published_figures(builder, release.version)
    notes += average_notes + out.notes + attach_paper(spec, rows, figures, release)
    used_configs = {c for c, _ in evaluations} | ({spec.config} if trains else set())
    result = BaselineResult(
        spec=spec, dataset=release.name, version=release.version, model=out.model, scores=rows,
        records=out.records, caveats=caveats + out.caveats, notes=notes, details=out.details,
        outputs={k: str(v) for k, v in out.outputs.items()}, options=asdict(opts),
        fingerprints={c: fp for c, fp in release.fingerprints().items() if c in used_configs},
    )
    if spec.gate is not None:

        result.gate = gate_verdict(spec, release, rows, known=declared(builder) if known is None else known,
                                   subsampled=any(c.startswith("subsampled") for c in result.caveats))
    result.wall_time_s = round(time.perf_counter() - start, 3)
    return result

