"""Arguments and options that several commands share, defined once, and the sub-apps a dataset
package plugs its own commands into.

A builder adds its commands in ``builders/<name>/cli.py`` (imported by builder discovery, so
every ``benchsmith`` process mounts them) without touching the core CLI::

    from benchsmith.cli import JSON_OPTION, emit, stage_app

    xcopa_stage = typer.Typer(help="XCOPA construction stages.", no_args_is_help=True)
    stage_app.add_typer(xcopa_stage, name="xcopa")

    @xcopa_stage.command("tables")
    def stage_tables(sources: Annotated[Path, typer.Option("--sources", metavar="DIR")],
                     json_out: bool = JSON_OPTION) -> None:
        ...
        emit(figures, json_out)

``benchsmith harvest NAME`` runs a construction pipeline that writes a release;
``benchsmith stage NAME STAGE`` runs one construction stage.

Metavars are words (``NAME``, ``DIR``, ``N``): typer's defaults (``<str>``, ``<list[str]>``)
say what Python type a value has, not what to type.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

JSON_OPTION = typer.Option(False, "--json", help="Print exactly one JSON object on stdout.")
REGISTRY_OPTION = typer.Option(None, "--registry", metavar="DIR", show_default=False,
                               help="Registry root (default $BENCHSMITH_HOME/registry).")

DatasetArg = Annotated[str, typer.Argument(metavar="NAME", help="Dataset name (see `benchsmith list`).")]
ReleaseArg = Annotated[str, typer.Argument(metavar="RELEASE",
                                           help="Release directory, or NAME[/VERSION] in the registry.")]
VersionOpt = Annotated[str | None, typer.Option("--version", metavar="VERSION",
                                                help="Release version (default: newest).")]
SourcesOpt = Annotated[Path | None, typer.Option(
    "--sources", metavar="DIR", help="Folder with one sub-folder per source (e.g. ../shared/raw).")]
ConfigsOpt = Annotated[list[str] | None, typer.Option("--config", metavar="NAME",
                                                      help="Build only this config (repeatable).")]
SkipMissingOpt = Annotated[bool, typer.Option(
    "--skip-missing", help="Build the splits whose sources are present; record the rest.")]
OverwriteOpt = Annotated[bool, typer.Option("--overwrite",
                                            help="Replace an existing release of this version.")]
EndpointOpt = Annotated[str | None, typer.Option(
    "--endpoint", metavar="URL", help="Hub endpoint (default: $HF_ENDPOINT, else huggingface.co).")]

#: help texts print [brackets] (NAME[/VERSION]) that are not rich markup
harvest_app = typer.Typer(help="Run a dataset's construction pipeline into a release.", no_args_is_help=True,
                          rich_markup_mode=None)
stage_app = typer.Typer(help="Run one construction stage of a dataset.", no_args_is_help=True,
                        rich_markup_mode=None)
