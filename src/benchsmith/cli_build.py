"""The body of ``benchsmith build``, without typer: the typer command (``cli_app.build_cmd``)
and the entry point's fast path (:func:`benchsmith.cli.main`) both call :func:`build`, so a
build runs the same code whichever way its command line was read."""

from __future__ import annotations

from pathlib import Path

from benchsmith.builder import get_builder
from benchsmith.commands import emit, plain_table, registry_path


def build(name: str, *, version: str | None = None, sources: Path | None = None, registry: Path | None = None,
          config: list[str] | None = None, skip_missing: bool = False, overwrite: bool = False,
          register_fingerprints: bool = False, json_out: bool = False) -> None:
    """Build a release from raw sources into the registry (``benchsmith build``'s options)."""
    from benchsmith.release import ReleaseWriter
    from benchsmith.source import resolve_sources

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
        print(f"fingerprints {outcome.status}: {outcome.note}")

    emit(summary, json_out, human)


def print_summary(summary: dict, title: str) -> None:
    """A release's summary as plain text (no rich: :func:`benchsmith.commands.plain_table`)."""
    rows = [(c, s, f"{n:,}") for c, splits in summary["configs"].items() for s, n in splits.items()]
    lines = [plain_table(title, ["config", "split", "examples"], rows).rstrip("\n")]
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
    print("\n".join(lines))
