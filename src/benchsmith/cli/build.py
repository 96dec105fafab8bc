"""``benchsmith build``: a release from raw sources into the registry, and the summary that
``build`` and ``show`` print for a release."""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import Annotated, Any

import typer

from benchsmith.builder import get_builder
from benchsmith.cli.options import (
    JSON_OPTION,
    REGISTRY_OPTION,
    ConfigsOpt,
    DatasetArg,
    OverwriteOpt,
    SkipMissingOpt,
    SourcesOpt,
    VersionOpt,
)
from benchsmith.cli.output import console, emit, next_step, table
from benchsmith.lookup import registry_path
from benchsmith.release import ReleaseWriter
from benchsmith.source import resolve_sources


def build_cmd(
    name: DatasetArg,
    version: VersionOpt = None,
    sources: SourcesOpt = None,
    registry: Path | None = REGISTRY_OPTION,
    config: ConfigsOpt = None,
    skip_missing: SkipMissingOpt = False,
    overwrite: OverwriteOpt = False,
    register_fingerprints: Annotated[
        bool, typer.Option("--register-fingerprints",
                           help="Record this build's split fingerprints as the version's in "
                           "builders/NAME/fingerprints.tsv.")
    ] = False,
    json_out: bool = JSON_OPTION,
) -> None:
    """Build a release from raw sources into the registry.

    A build of a version registered in fingerprints.tsv must reproduce it split for split, or
    it fails before anything is committed (see benchsmith/fingerprint_registry.py)."""
    b = get_builder(name, version)
    for c in config or []:
        b.config(c)  # fail on a typo before hashing sources
    resolved = resolve_sources(b.sources, b.checksums(), sources, allow_missing=skip_missing)
    writer = ReleaseWriter(
        b, registry_path(registry), resolved, configs=config, skip_missing=skip_missing, overwrite=overwrite,
        register_fingerprints=register_fingerprints,
    )
    release = writer.write()
    outcome = writer.fingerprint_outcome
    assert outcome is not None  # write() sets it
    summary = release.summary()
    summary["fingerprints"] = release.fingerprints()
    summary["registered_fingerprints"] = outcome.to_dict()

    def human() -> None:
        print_summary(summary, f"built {name} {release.version} -> {release.path}")
        console.print(f"fingerprints {outcome.status}: {outcome.note}", markup=False, highlight=False)

    emit(summary, json_out, human)
    next_step(f"benchsmith validate {release.name}/{release.version}{registry_flag(registry)}", json_out)


def registry_flag(registry: Path | None) -> str:
    """`` --registry DIR`` for a next-step line when the command was given one, else nothing."""
    return f" --registry {shlex.quote(str(registry))}" if registry is not None else ""


def print_summary(summary: dict[str, Any], title: str) -> None:
    """A release's summary: its splits as a table, then one line per fact (status, seal, skips)."""
    rows = [(c, s, f"{n:,}") for c, splits in summary["configs"].items() for s, n in splits.items()]
    console.print(table(title, ["config", "split", "examples"], rows))
    lines = []
    if "status" in summary:
        detail = summary.get("on_fingerprints") or summary.get("report")
        lines.append(f"status: {summary['status']}" + (f" ({detail})" if detail else ""))
    where = summary.get("published_to") or {}
    if where.get("local"):
        lines.append("published: in this registry")
    for hub in where.get("hub", []):
        lines.append(f"published: {hub.get('repo')}@{hub.get('tag')} (commit {str(hub.get('commit'))[:12]}, "
                     f"{hub.get('endpoint')})")
    check = summary.get("seal")
    if check is not None:
        if check["digest"] is None:
            lines.append(f"seal: none ({check['source']})")
        elif check["matches"]:
            lines.append(f"seal: {check['digest'][:12]} ({check['source']}): the bytes match, checked by "
                         f"{check['checked']}")
        else:
            lines.append(f"seal: {check['digest'][:12]} ({check['source']}): the bytes DIFFER, checked by "
                         f"{check['checked']}: {'; '.join(check['problems'][:3])}")
    if summary.get("partial"):
        missing = summary.get("missing_configs") or []
        lines.append("partial build" + (f": {len(missing)} config(s) not built" if missing else ""))
    for c, why in summary.get("skipped", {}).items():
        reasons = "; ".join(f"{s}: {r}" for s, r in why.items()) if isinstance(why, dict) else str(why)
        lines.append(f"skipped {c}: {reasons}")
    if summary.get("errata_applied"):
        lines.append("errata applied: " + ", ".join(summary["errata_applied"]))
    for line in lines:
        console.print(line, markup=False, highlight=False)
