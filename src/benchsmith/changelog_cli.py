"""``benchsmith diff OLD NEW``: the item-level changelog between two releases (mounted by
``benchsmith.cli``; the comparison itself is :mod:`benchsmith.changelog`).

OLD and NEW are release references (:mod:`benchsmith.reference`): a folder, ``NAME/VERSION``
in the registry, or ``hf://datasets/ORG/NAME@REV``. Exit status 0 whatever changed: a diff
reports, the gate (``validate``/``audit`` with ``--previous``) judges.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from benchsmith.commands import JSON_OPTION, REGISTRY_OPTION, console, emit, root_command

ENDPOINT_OPTION = typer.Option("--endpoint", help="Hub endpoint for hf:// references (default: HF_ENDPOINT).")


@root_command("diff")
def diff_cmd(
    old: Annotated[str, typer.Argument(help="Older release: folder, NAME/VERSION, or hf://datasets/ORG/NAME@REV.")],
    new: Annotated[str, typer.Argument(help="Newer release, same forms.")],
    config: Annotated[list[str] | None, typer.Option("--config", help="Only this config (repeatable).")] = None,
    markdown: Annotated[bool, typer.Option("--markdown", help="Print the changelog as markdown.")] = False,
    limit: Annotated[int, typer.Option("--limit", min=0, help="Items of each kind listed per split (markdown and terminal).")] = 10,
    registry: Path | None = REGISTRY_OPTION,
    endpoint: Annotated[str | None, ENDPOINT_OPTION] = None,
    json_out: bool = JSON_OPTION,
) -> None:
    """Item-level changelog between two releases: ids added, removed, changed, with fields before/after."""
    from benchsmith.changelog import diff
    from benchsmith.errors import ReleaseError
    from benchsmith.reference import resolve

    before = resolve(old, registry, endpoint=endpoint)
    after = resolve(new, registry, endpoint=endpoint)
    if before.name != after.name:
        raise ReleaseError(f"{old} is {before.name} and {new} is {after.name}: a diff compares two versions of one dataset",
                           hint="Pass two releases of the same dataset")
    log = diff(before, after, configs=config,
               before_label=f"{before.version} ({getattr(before, 'origin', None) or before.path})",
               after_label=after.version)

    def human() -> None:
        console.print(log.to_markdown(limit), markup=False, highlight=False, emoji=False)

    if markdown and not json_out:
        print(log.to_markdown(limit), end="")
        return
    emit(log, json_out, human)
