"""Declared model baselines inside ``benchsmith validate`` (validation/README.md, "Under
``validate --baselines model``", has the defaults and their overrides):

* :class:`GatedBaselines` (``--baselines model``): every spec the builder marks a ``gate`` runs
  with CPU-friendly defaults (:func:`validate_run_options`); its gate verdict is the check's status.
* :class:`RecordedBaselines` (``cheap`` and ``model``): the results ``benchsmith baseline`` saved
  beside the release, ``stat`` except a gated one, whose verdict is recomputed from its recorded
  scores with today's spec and known artifacts (a recorded full run that failed fails the gate,
  whatever a subsampled run inside ``validate`` says). A result on other data (its fingerprints
  differ) is a ``skip`` naming it.
"""

from __future__ import annotations

import json
import os
from dataclasses import fields
from pathlib import Path
from typing import TYPE_CHECKING, Any

from benchsmith import registry
from benchsmith.builder import builders, get_builder, is_registered
from benchsmith.errors import ConfigError
from benchsmith.validation.baselines.run import ScoreRow, gate_verdict, run_spec
from benchsmith.validation.baselines.runtime import pick_device
from benchsmith.validation.check import Check, CheckResult, Status
from benchsmith.validation.known_artifacts import declared

if TYPE_CHECKING:
    from benchsmith.release import Release

#: 500, not fewer: a gate needs enough training items to learn the artifact it probes and enough test
#: items to tell it from chance. Measured (default MiniLM, 2 epochs, seed 0) on English COPA whose wrong
#: choices were swapped for other items' answers, the NoQ variant scores 80.5% with 200 items per split
#: and 90.6% with 500 (every item: 92.0%); the faithful release 56.0% and 60.0%. At 500, COPA runs whole.
CPU_MAX_EXAMPLES = 500
CPU_EPOCHS = 2
SAVED = "baselines"


def validate_run_options(model_path: str | Path | None = None) -> dict[str, Any]:
    """The run options of gated baselines under ``validate`` (see module docstring)."""

    device = os.environ.get("BENCHSMITH_BASELINE_DEVICE", "auto")
    cpu = pick_device(device) == "cpu"
    out: dict[str, Any] = {"device": device, "model_path": model_path}
    for key, on_cpu in (("max_examples", CPU_MAX_EXAMPLES), ("epochs", CPU_EPOCHS)):
        env = key.upper()
        value = os.environ.get(f"BENCHSMITH_BASELINE_{env}")
        try:
            n = int(value) if value is not None else (on_cpu if cpu else 0)
        except ValueError:
            raise ConfigError(f"BENCHSMITH_BASELINE_{env}={value!r}; expected an integer",
                              hint="0 means every item / the spec's epochs") from None
        out[key] = n if n > 0 else None
    return out


def saved_dir(release: Release) -> Path:
    """Where ``benchsmith baseline`` saves results for ``release`` (the report's folder)."""

    published = registry.published_fingerprints(release.path) is not None
    base = registry.detached_reports_dir(release.path) if published else release.reports_dir
    return Path(base) / SAVED


def builder_of(release: Release, any_version: bool = False) -> Any:
    """The registered builder of the release's name and version, or None (generic releases,
    harvested ones: they declare no baselines); with ``any_version``, when the release's version
    is no longer declared, the builder's current one (its declarations still apply)."""

    if not is_registered(release.name):
        return None
    try:
        return get_builder(release.name, release.version)
    except ConfigError:
        return builders()[release.name]() if any_version else None


def result_to_check(check: Check, data: dict[str, Any]) -> CheckResult:
    """A saved or just-run result (:meth:`~.run.BaselineResult.to_dict`) as a check result."""
    rows, gate = data["table"], data.get("gate")
    shown = ", ".join(f"{r['config']}/{r['split']} {r['metric']} {r['value']}" for r in rows[:4])
    summary = f"{data['baseline']} ({data.get('engine', data.get('kind'))}, {data['variant']}): {shown}" + (
        f" (+{len(rows) - 4} more)" if len(rows) > 4 else "")
    if gate:
        bad = [c for c in gate["checks"] if c["status"] != "pass"]
        summary += f"; gate {gate['status']}" + (f": {bad[0]['config']}/{bad[0]['split']} {bad[0]['why']}"
                                                 if bad else "")
        summary += "; gate verdict on a subsample" if gate.get("subsampled") else ""
    if data.get("caveats"):
        summary += ("; not comparable with the paper: " if data.get("paper") else "; caveats: ") + \
            "; ".join(data["caveats"])
    figures = []
    accuracy = [r for r in rows if r["metric"] == "accuracy" and r["value"] is not None]
    if accuracy:
        paper = all(r["paper"] for r in accuracy)
        title = f"{data['baseline']}: accuracy" + (" (tick: the paper)" if paper else "")
        figures.append({"kind": "barh", "title": title,
                        "labels": [f"{r['config']}/{r['split']}" for r in accuracy],
                        "values": [r["value"] / 100 for r in accuracy]}
                       | ({"reference": [r["paper"][0]["value"] / 100 for r in accuracy]} if paper else {}))
    details = {"table": rows, "records": data["records"], "caveats": data.get("caveats", []),
               "notes": data.get("notes", []), "gate": gate, "paper_note": data.get("paper_note", ""),
               "options": data.get("options", {}), "details": data.get("details", {})}
    status = Status(gate["status"]) if gate else Status.STAT
    configs = {r["config"] for r in rows}
    return check.result(status, summary, config=configs.pop() if len(configs) == 1 else None,
                        metrics={f"{r['config']}/{r['split']}/{r['metric']}": r["value"] for r in rows},
                        details=details, figures=figures)


class GatedBaselines(Check):
    """The builder's gated model baselines (see module docstring)."""

    name = "baselines_gated"
    family = "baselines"
    topic = 'a gated partial-input baseline beats chance'
    why = 'a model that sees only part of the input scores above chance: an annotation artifact'
    todo = ("declare the artifact with its evidence in known_artifacts.yaml (the baseline's spec name "
        'as its probe), or remove the cue in the builder; never raise the gate')
    figure_metric = 'gain'

    def __init__(self, model_path: str | Path | None = None, specs: Any = None, builder: Any = None,
                 **run_options: Any) -> None:
        self.model_path = model_path
        self.specs = specs
        self.builder = builder
        self.run_options = run_options
        #: set by the runner: the builder validate resolved (None: look it up by name)
        self.known_artifacts: list[Any] | None = None

    def run(self, release: Release) -> list[CheckResult]:

        builder = self.builder if self.builder is not None else builder_of(release)
        specs = self.specs if self.specs is not None else (builder.baselines() if builder is not None else ())
        gated = [s for s in specs if s.gate is not None]
        if not gated:
            return []
        options = {**validate_run_options(self.model_path), **self.run_options}
        out = []
        for spec in gated:
            evaluations, notes = spec.evaluations(release)
            if not evaluations:
                out.append(self.result(Status.SKIP, f"{spec.name}: nothing to score in this build ({'; '.join(notes)})"))
                continue
            result = run_spec(spec, release, builder=builder, known=self.known_artifacts, **options)
            out.append(result_to_check(self, result.to_dict(relative_to=release.path)))  # the report is published
        return out


class RecordedBaselines(Check):
    """Results saved by ``benchsmith baseline`` for this release (see module docstring)."""

    name = "baselines_recorded"
    family = "baselines"

    def __init__(self, builder: Any = None) -> None:
        self.builder = builder
        #: set by the runner (None: the builder's own declarations)
        self.known_artifacts: list[Any] | None = None

    def run(self, release: Release) -> list[CheckResult]:

        folder = saved_dir(release)
        if not folder.is_dir():
            return []
        builder = self.builder if self.builder is not None else builder_of(release)
        specs = builder.baselines() if builder is not None else ()
        gated = {s.name: s for s in specs if s.gate is not None}
        fingerprints = release.fingerprints()
        out = []
        for path in sorted(folder.glob("*.json")):
            try:
                data = json.loads(path.read_text(encoding="utf-8"))
                recorded = data["fingerprints"]
                data["table"], data["records"], data["baseline"]
            except (OSError, ValueError, KeyError, TypeError) as exc:
                out.append(self.result(Status.SKIP, f"{path.name}: not a saved baseline result ({exc})"))
                continue
            stale = [f"{c}/{s}" for c, splits in recorded.items() for s, fp in splits.items()
                     if fingerprints.get(c, {}).get(s) != fp]
            if stale:
                out.append(self.result(Status.SKIP, f"{data['baseline']}: recorded on other data "
                                       f"({', '.join(stale[:3])} changed since); rerun `benchsmith baseline`",
                                       details={"file": path.name}))
                continue
            spec = gated.get(data["baseline"])
            if data.get("gate") and spec is not None:  # recomputed with today's rule, spec and declarations
                names = {f.name for f in fields(ScoreRow)}
                rows = [ScoreRow(**{k: v for k, v in r.items() if k in names})
                        for r in data.get("scores") or []]
                known = declared(builder) if self.known_artifacts is None else self.known_artifacts
                gate = gate_verdict(spec, release, rows, known=known, subsampled=any(
                    str(c).startswith("subsampled") for c in data.get("caveats") or []))
                data = {**data, "gate": gate, "status": gate["status"]}
            out.append(result_to_check(self, data))
        return out

