"""The ``benchsmith`` command line: the typer app and its entry point, :func:`main`.

Conventions, for every command:

* with ``--json`` a command prints exactly one JSON object on stdout; progress bars go to stderr
  and are off with ``--quiet`` or when stderr is not a terminal;
* a user mistake is one line on stderr (what, where, what to do) and exit status 2, a failed
  gate exit 1, an environment fault (disk full, a read-only folder) exit 3, Ctrl-C exit 130;
* ``build``, ``validate`` and ``publish`` end with one line on stderr: what to run next.

One module per command family: :mod:`~benchsmith.cli.build`, :mod:`~benchsmith.cli.validate`
(validate, audit), :mod:`~benchsmith.cli.publish`, :mod:`~benchsmith.cli.evaluate`,
:mod:`~benchsmith.cli.inspect` (list, show, diff), :mod:`~benchsmith.cli.sources`,
:mod:`~benchsmith.cli.baseline`, :mod:`~benchsmith.cli.contamination`, :mod:`~benchsmith.cli.new`;
what they print goes through :mod:`~benchsmith.cli.output`. A dataset package plugs its own
sub-commands into ``harvest`` and ``stage`` (:mod:`benchsmith.cli.options` shows how); builder
discovery imports them before the command line is read.
"""

from __future__ import annotations

import sys
from typing import Annotated, Any

import typer
from typer.core import TyperGroup
from typer.main import get_command

import benchsmith
from benchsmith.builder import discover
from benchsmith.cli import baseline, build, contamination, evaluate, inspect, new, publish, sources, validate
from benchsmith.cli.options import JSON_OPTION, REGISTRY_OPTION, harvest_app, stage_app
from benchsmith.cli.output import configure, console, emit, err_console, error_line, literal, table
from benchsmith.errors import BenchsmithError, EnvironmentFault, library_fault

__all__ = ["JSON_OPTION", "REGISTRY_OPTION", "app", "console", "emit", "err_console", "harvest_app",
           "literal", "main", "stage_app", "table"]

#: ``benchsmith --help`` lists the commands in the order of the release loop, then the tools
COMMAND_ORDER = ("build", "validate", "audit", "publish", "evaluate", "diff", "show", "list", "sources",
                 "baseline", "contamination", "harvest", "stage", "new")
#: global flags accepted anywhere before ``--`` (``benchsmith validate X --quiet``), as users type them
GLOBAL_FLAGS = ("-q", "--quiet", "-v", "--verbose")


class _Commands(TyperGroup):
    """The top-level group: commands listed in :data:`COMMAND_ORDER` (typer lists sub-apps last)."""

    def list_commands(self, ctx: Any) -> list[str]:
        names = super().list_commands(ctx)
        rank = {name: i for i, name in enumerate(COMMAND_ORDER)}
        return sorted(names, key=lambda n: rank.get(n, len(rank)))


app = typer.Typer(
    cls=_Commands,
    help="Build, audit and release NLP challenge sets.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
    rich_markup_mode=None,  # help texts contain [brackets] (NAME[/VERSION]) that are not markup
    context_settings={"help_option_names": ["-h", "--help"]},
)


def _print_version(value: bool) -> None:
    if value:
        console.print(f"benchsmith {benchsmith.__version__}", highlight=False)
        raise typer.Exit(0)


@app.callback()
def _global(
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress bars, warnings only.")] = False,
    verbose: Annotated[
        bool, typer.Option("--verbose", "-v", help="Every result in full, and debug messages.")
    ] = False,
    version: Annotated[
        bool, typer.Option("--version", help="Print benchsmith's version and exit.", is_eager=True,
                           callback=_print_version)
    ] = False,
) -> None:
    configure(quiet, verbose)


app.command("build")(build.build_cmd)
app.command("validate")(validate.validate_cmd)
app.command("audit")(validate.audit_cmd)
app.command("publish")(publish.publish_cmd)
app.add_typer(evaluate.evaluate_app, name="evaluate")
app.command("diff")(inspect.diff_cmd)
app.command("show")(inspect.show_cmd)
app.command("list")(inspect.list_cmd)
app.command("sources")(sources.sources_cmd)
app.command("baseline")(baseline.baseline_cmd)
app.command("contamination")(contamination.contamination_cmd)
app.add_typer(harvest_app, name="harvest")
app.add_typer(stage_app, name="stage")
app.command("new")(new.new_cmd)


def hoist_global_flags(argv: list[str]) -> list[str]:
    """Move the global flags found after the sub-command to the front (never past ``--``):
    click reads a group's options only before the sub-command's name."""
    end = argv.index("--") if "--" in argv else len(argv)
    flags = [a for a in argv[:end] if a in GLOBAL_FLAGS]
    rest = [a for a in argv[:end] if a not in GLOBAL_FLAGS]
    return flags + rest + argv[end:]


def main(argv: list[str] | None = None) -> int:
    """Entry point: runs the command; a BenchsmithError or OSError is one line and an exit status."""
    args = hoist_global_flags(list(sys.argv[1:] if argv is None else argv))
    try:
        discover()  # every builder, and the sub-commands its package plugs into harvest and stage
        # typer's standalone mode prints usage errors and help, and exits (Ctrl-C: 130)
        get_command(app)(args=args, prog_name="benchsmith")
    except SystemExit as exc:
        return exc.code if isinstance(exc.code, int) else int(exc.code is not None)
    except BenchsmithError as exc:
        error_line(str(exc))
        return exc.exit_code
    except (OSError, MemoryError) as exc:  # disk full, EIO, out of memory...: one line, exit 3 (EnvironmentFault.of)
        fault = EnvironmentFault.of(exc)
        error_line(str(fault))
        return fault.exit_code
    except ImportError as exc:  # a compiled library that could not be loaded (a memory limit): exit 3
        library = library_fault(exc)
        if library is None:
            raise
        error_line(str(library))
        return library.exit_code
    return 0  # pragma: no cover - standalone mode always exits


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
