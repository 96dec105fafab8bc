"""``benchsmith publish``: a validated release into the registry, or onto the Hub with ``--hub``."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from benchsmith.cli.options import JSON_OPTION, REGISTRY_OPTION, EndpointOpt, ReleaseArg
from benchsmith.cli.output import console, emit, next_step
from benchsmith.lookup import registry_path, resolve_release
from benchsmith.publish import publish_hub, publish_local


def publish_cmd(
    release: ReleaseArg,
    registry: Path | None = REGISTRY_OPTION,
    hub: Annotated[
        str | None, typer.Option("--hub", metavar="ORG/NAME",
                                 help="Commit to this Hub dataset repo and tag the version.")
    ] = None,
    endpoint: EndpointOpt = None,
    allow_partial: Annotated[
        bool, typer.Option("--allow-partial", help="Publish a build of some configs / with skipped splits.")
    ] = False,
    json_out: bool = JSON_OPTION,
) -> None:
    """Publish a validated release to the registry or the Hub.

    The gate, the seal and the registered sources are checked first; a published version is
    never overwritten. With --hub the
    publication is recorded in --registry (default: the registry holding the release)."""
    r = resolve_release(release, registry)
    out = (publish_hub(r, hub, endpoint=endpoint, allow_partial=allow_partial, registry_root=registry) if hub
           else publish_local(r, registry_path(registry), allow_partial=allow_partial))
    emit(out, json_out, lambda: console.print(
        f"{'already published' if out.get('already_published') else 'published'} {r.name} {r.version} -> "
        f"{out['published']}" + (f" ({out['note']})" if out.get("note") else ""), markup=False, highlight=False,
    ))
    config = r.configs()[0]
    where = f'"{hub}", "{config}", revision="{r.version}"' if hub else f'"{out["published"]}", "{config}"'
    next_step(f"load it with datasets.load_dataset({where})", json_out)
