"""Commands that read releases and builders and change nothing: ``list``, ``show``, ``diff``."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from benchsmith import seal
from benchsmith.builder import builders
from benchsmith.changelog import diff
from benchsmith.cli.build import print_summary
from benchsmith.cli.options import JSON_OPTION, REGISTRY_OPTION, EndpointOpt, ReleaseArg
from benchsmith.cli.output import console, emit, table
from benchsmith.errors import ReleaseError
from benchsmith.fingerprint_registry import registered_differences
from benchsmith.lookup import resolve_release
from benchsmith.reference import resolve
from benchsmith.release import Release

#: configs ``list`` shows per builder before "..." (``--json`` has them all)
LIST_CONFIGS = 8


def list_cmd(json_out: bool = JSON_OPTION) -> None:
    """Every dataset builder with its versions and configs."""
    out = {name: _summary(name, cls) for name, cls in builders().items()}

    def human() -> None:
        rows = [(n, ", ".join(v["versions"]),
                 ", ".join(v["configs"][:LIST_CONFIGS]) + (" ..." if v["configs"][LIST_CONFIGS:] else ""))
                for n, v in out.items()]
        console.print(table("benchsmith datasets", ["name", "versions", "configs"], rows))

    emit({"builders": out}, json_out, human)


def _summary(name: str, cls: Any) -> dict[str, Any]:
    """One builder as ``list`` shows it."""
    b = cls()
    return {
        "pretty_name": cls.pretty_name or name,
        "versions": cls.versions(),
        "default_version": b.version,
        "configs": [c.name for c in b.configs()],
        "license": cls.license,
    }


def show_cmd(
    release: ReleaseArg,
    registry: Path | None = REGISTRY_OPTION,
    verify: Annotated[
        bool, typer.Option("--verify", help="Hash every file against the seal (default: compare sizes only).")
    ] = False,
    json_out: bool = JSON_OPTION,
) -> None:
    """Summarise a release and check it against its seal.

    Configs, split sizes, errata, source status, and whether its bytes still match the seal
    (sizes by default, every sha256 with --verify); exit 2 when they do not."""
    r = resolve_release(release, registry)
    summary = r.summary()
    summary["seal"] = check = _seal_summary(r, verify)
    emit(summary, json_out, lambda: print_summary(summary, f"{r.name} {r.version} ({r.path})"))
    if check["matches"] is False:
        raise ReleaseError(
            f"{r.name} {r.version} is not the release that was {check['sealed_when']}: "
            f"{seal.describe(check['problems'])}",
            path=r.path,
            hint=("Restore the published files: a published version never changes (bump the version for new "
                  "data)" if check["sealed_when"] == "published" else
                  f"Restore the validated files, or validate again (`benchsmith validate {r.path}`) if the "
                  "change is intended"),
        )


def _seal_summary(r: Release, full: bool) -> dict[str, Any]:
    """What ``show`` says about the seal: which one, how it was checked, and the differences."""
    sealed, source = seal.recorded(r.path)
    how = "sha256 of every file" if full else "sizes only (--verify hashes every file)"
    if sealed is None:
        return {"digest": None, "source": source, "checked": None, "matches": None, "problems": [],
                "sealed_when": None}
    try:
        problems = seal.differences(r.path, sealed, full=full)
        if full and not problems:  # as publish and evaluate check it (seal.require)
            problems = seal.manifest_differences(r, sealed)
        if full and not problems and source == seal.FROM_REPORT:  # only the folder vouches for itself
            problems = registered_differences(r)[0]
    except ReleaseError as exc:  # a link or special file inside
        problems = [exc.message]
    when = "published" if source == "the published marker" else "validated"
    return {"digest": sealed.digest, "source": source, "checked": how, "matches": not problems,
            "problems": problems, "sealed_when": when}


def diff_cmd(
    old: Annotated[str, typer.Argument(metavar="OLD", help="Older release: folder, NAME/VERSION, or "
                                       "hf://datasets/ORG/NAME@REV.")],
    new: Annotated[str, typer.Argument(metavar="NEW", help="Newer release, same forms.")],
    config: Annotated[list[str] | None, typer.Option("--config", metavar="NAME",
                                                     help="Only this config (repeatable).")] = None,
    markdown: Annotated[bool, typer.Option("--markdown", help="Print the changelog as markdown.")] = False,
    limit: Annotated[int, typer.Option("--limit", metavar="N", min=0,
                                       help="Items of each kind per split (markdown, terminal).")] = 10,
    registry: Path | None = REGISTRY_OPTION,
    endpoint: EndpointOpt = None,
    json_out: bool = JSON_OPTION,
) -> None:
    """Item-level changelog between two releases.

    Ids added, removed and changed, with the fields before and after. OLD and NEW are a
    folder, NAME/VERSION in the registry, or hf://datasets/ORG/NAME@REV. Exit status 0
    whatever changed: a diff reports, the gate (validate or audit with --previous) judges."""
    before = resolve(old, registry, endpoint=endpoint)
    after = resolve(new, registry, endpoint=endpoint)
    if before.name != after.name:
        raise ReleaseError(f"{old} is {before.name} and {new} is {after.name}: a diff compares two "
                           "versions of one dataset", hint="Pass two releases of the same dataset")
    log = diff(before, after, configs=config,
               before_label=f"{before.version} ({getattr(before, 'origin', None) or before.path})",
               after_label=after.version)
    if markdown and not json_out:
        print(log.to_markdown(limit), end="")
        return
    emit(log, json_out, lambda: console.print(log.to_markdown(limit), markup=False, highlight=False))
