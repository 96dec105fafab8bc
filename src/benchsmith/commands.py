"""Shared pieces of the command line that dataset packages plug into.

A dataset package adds its own commands in ``builders/<name>/cli.py`` (imported
by builder discovery) without touching the core CLI::

    from benchsmith.commands import stage_app, emit

    @stage_app.command("errata")
    def stage_errata(sources: Path, json_out: bool = JSON_OPTION) -> None:
        ...
        emit(figures, json_out, human=lambda: print_table(...))

Sub-apps: ``benchsmith harvest <dataset>`` (construction pipelines that write a
release) and ``benchsmith stage <dataset> <stage>`` (single construction stages).
``benchsmith evaluate <dataset>`` is generic: it is generated from the metrics a
dataset declares (:mod:`benchsmith.evaluate_cli`), with no per-dataset CLI code.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from benchsmith import redact
from benchsmith.errors import ConfigError, did_you_mean
from benchsmith.jsonable import to_jsonable

if TYPE_CHECKING:
    import typer
    from rich.console import Console
    from rich.table import Table

    from benchsmith.release import Release

    harvest_app: typer.Typer
    stage_app: typer.Typer
    JSON_OPTION: Any
    REGISTRY_OPTION: Any


def _typer_objects() -> dict[str, Any]:
    """The sub-apps and shared options, made with typer on first use (:func:`__getattr__`): a
    plain ``benchsmith build`` uses this module's output helpers and never imports typer
    (benchsmith/cli.py)."""
    import typer

    return {
        "harvest_app": typer.Typer(help="Run a dataset's construction pipeline end to end into a release.",
                                   no_args_is_help=True, rich_markup_mode=None),
        "stage_app": typer.Typer(help="Run one construction stage of a dataset.", no_args_is_help=True,
                                 rich_markup_mode=None),
        "JSON_OPTION": typer.Option(False, "--json", help="Print exactly one JSON object on stdout."),
        "REGISTRY_OPTION": typer.Option(
            None, "--registry", help="Registry root (default $BENCHSMITH_HOME/registry).", show_default=False
        ),
    }


def __getattr__(name: str) -> Any:
    """``harvest_app``, ``stage_app``, ``JSON_OPTION``, ``REGISTRY_OPTION``: made once, on first use."""
    if name not in ("harvest_app", "stage_app", "JSON_OPTION", "REGISTRY_OPTION"):
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    made = _typer_objects()
    globals().update(made)  # later reads find them without this hook: the same objects every time
    return made[name]

_ROOT_COMMANDS: dict[str, Callable[..., Any]] = {}


def root_command(name: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Register a top-level command (``benchsmith <name>``) from outside cli_app.py.

    Used by ``benchsmith.validation.cli`` for ``validate`` and ``audit``.
    """

    def deco(func: Callable[..., Any]) -> Callable[..., Any]:
        _ROOT_COMMANDS[name] = func
        return func

    return deco


def root_commands() -> dict[str, Callable[..., Any]]:
    return dict(_ROOT_COMMANDS)


# soft_wrap: a signature or an id printed on its own line is never broken by the terminal width,
# so a copied signature reproduces the score (tables still fit their columns).
# emoji=False: rich would turn any ``:name:`` into an emoji, and messages are full of them
# (``file.deu:100:`` lost its line number as ``file.deu💯``). Markup stays on for the few styles we
# write ourselves; data (paths, ids, values, messages) goes in through :func:`literal` or
# :func:`table`, or is printed with ``markup=False``, so ``[bold]`` in a value stays literal.
class _LazyConsole:
    """A rich ``Console`` made on first use: rich (~0.1 s CPU with its tables) is imported
    only by a command that prints through it (a table, a message, an error line), not by
    ``--help`` or ``--json`` output. Attribute reads and writes go to the console."""

    def __init__(self, **options: Any) -> None:
        object.__setattr__(self, "_options", options)
        object.__setattr__(self, "_console", None)

    def _get(self) -> Console:
        if self._console is None:
            from rich.console import Console

            object.__setattr__(self, "_console", Console(**self._options))
        return self._console

    def __getattr__(self, name: str) -> Any:
        return getattr(self._get(), name)

    def __setattr__(self, name: str, value: Any) -> None:
        setattr(self._get(), name, value)

    # a data descriptor, as on Console: monkeypatch.setattr(console, "width", n) restores it on undo
    width = property(lambda self: self._get().width, lambda self, n: setattr(self._get(), "width", n))


console = _LazyConsole(soft_wrap=True, emoji=False)
err_console = _LazyConsole(stderr=True, soft_wrap=True, emoji=False)


def literal(value: Any) -> str:
    """``value`` as text to put inside a markup string: its ``[...]`` are printed, not applied."""
    from rich.markup import escape

    return escape(str(value))

_VERBOSE = False


def set_verbose(flag: bool) -> None:
    """``--verbose``: commands print every result instead of a summary."""
    global _VERBOSE
    _VERBOSE = flag


def verbose() -> bool:
    return _VERBOSE


def configure(quiet: bool, verbose: bool) -> None:
    """The global options' effect: progress bars, verbosity, logging (the typer app's callback
    and the entry point's typer-free ``build``, benchsmith/cli.py, both call this)."""
    import logging

    from benchsmith import progress

    progress.set_enabled(False if quiet else None)
    set_verbose(verbose)
    logging.basicConfig(
        level=logging.DEBUG if verbose else logging.WARNING,
        format="%(levelname)s %(name)s: %(message)s",
        stream=sys.stderr,
        force=True,
    )
    redact.install()  # no handler ever prints a token (httpx/httpcore debug logs under -v included)



def default_registry() -> Path:
    from benchsmith.cache import benchsmith_home

    return benchsmith_home() / "registry"


def registry_path(registry: Path | None) -> Path:
    """``--registry`` when given, else :func:`default_registry`."""
    return Path(registry) if registry is not None else default_registry()


def emit(obj: Any, as_json: bool, human: Callable[[], None] | None = None) -> None:
    """Print ``obj`` as one JSON object (``--json``) or call ``human`` to print it for people."""
    if as_json:
        sys.stdout.write(json.dumps(to_jsonable(obj), ensure_ascii=False, sort_keys=False) + "\n")
        sys.stdout.flush()
    elif human is not None:
        human()
    else:
        console.print_json(json.dumps(to_jsonable(obj), ensure_ascii=False))


#: rich's default table box (a heavy head), and a plain-ASCII one for a stdout that cannot encode it
_BOX = "┏┳┓━┃┡╇┩━│└┴┘─"
_ASCII_BOX = "+++-|+++-|+++-"


def plain_table(title: str, columns: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    """The text of :func:`table`'s table as rich draws it by default, drawn without rich.

    For the commands whose output is a table and a few plain lines (``list``, ``build``,
    ``show``): importing rich and laying out a one-row table took 0.17 s CPU against 0.04 s for
    a bare interpreter (``python -c``, medians of 3), a third of ``list``. What rich does and
    this does not: wrap cells to the terminal's width (a long cell widens its column) and
    count East Asian wide characters as two columns (names and ids here are ASCII). Cells are
    literal text, as in :func:`table`.
    """
    import shutil
    import textwrap

    cells = [[str(c) for c in columns], *[[str(v) for v in r] for r in rows]]
    widths = [max(len(r[i]) for r in cells) for i in range(len(columns))]
    # as rich: fit the terminal (80 columns when stdout is not one), wrapping the widest column
    room = shutil.get_terminal_size((80, 24)).columns - 3 * len(widths) - 1
    while sum(widths) > room and max(widths) > 8:
        widest = widths.index(max(widths))
        widths[widest] = max(8, widths[widest] - (sum(widths) - room))
    encoding = getattr(sys.stdout, "encoding", None) or "utf-8"
    try:
        _BOX.encode(encoding)
        box = _BOX
    except (UnicodeEncodeError, LookupError):
        box = _ASCII_BOX

    def rule(left: str, mid: str, right: str, fill: str) -> str:
        return left + mid.join(fill * (w + 2) for w in widths) + right

    def row(values: list[str], bar: str) -> str:
        wrapped = [textwrap.wrap(v, w) or [""] for v, w in zip(values, widths)]
        return "\n".join(
            bar + bar.join(f" {(c[k] if k < len(c) else '').ljust(w)} " for c, w in zip(wrapped, widths))
            + bar
            for k in range(max(map(len, wrapped))))

    lines = [title, rule(box[0], box[1], box[2], box[3]), row(cells[0], box[4]),
             rule(box[5], box[6], box[7], box[8]), *[row(r, box[9]) for r in cells[1:]],
             rule(box[10], box[11], box[12], box[13])]
    return "\n".join(lines) + "\n"


def table(title: str, columns: Sequence[str], rows: Sequence[Sequence[Any]]) -> Table:
    """A table whose title, headers and cells are literal text (never markup: they hold data)."""
    from rich.table import Table
    from rich.text import Text

    t = Table(title=Text(title), show_lines=False)
    for c in columns:
        t.add_column(Text(c))
    for r in rows:
        t.add_row(*[v if isinstance(v, Text) else Text(str(v)) for v in r])
    return t


def gold_release(arg: str, registry: Path | None = None) -> Release:
    """:func:`resolve_release` for scoring: the release's bytes must be the sealed ones (every
    file hashed against the published marker's seal, else the one ``validate`` recorded), so
    ``evaluate`` never scores against edited gold data, whatever release.json now says.

    A release that was never validated has no seal: it is scored after the manifest's per-file
    check (the only record there is), with a warning that the gold data is not certified."""
    import logging

    from benchsmith import seal

    release = resolve_release(arg, registry)
    sealed, source = seal.recorded(release.path)
    if sealed is None:
        logging.getLogger(__name__).warning(
            "%s %s has no seal (%s): scoring against gold data nobody validated; "
            "`benchsmith validate %s` certifies it", release.name, release.version, source, release.path)
        release.require_intact()
    else:
        seal.require(release, sealed, source=source, published=source == "the published marker")
    return release


def _how_to_get(name: str) -> str:
    """What to do about a release not in the registry: build it when ``name`` is a dataset
    (never "build nothing" for a name no builder has)."""
    from benchsmith.builder_index import summaries

    if name in summaries():
        return f"Build it with `benchsmith build {name}` or pass a release directory."
    return f"No dataset is named {name!r} either (`benchsmith list` shows them): pass a release directory."


def resolve_release(arg: str, registry: Path | None = None) -> Release:
    """A release from a path, or from ``NAME`` / ``NAME/VERSION`` in the registry (newest version)."""
    from benchsmith.registry import recover
    from benchsmith.release import Release, find_releases

    p = Path(arg)
    if p.exists():
        if (p / "release.json").is_file():
            recover(p.resolve().parent)  # leftovers of an interrupted commit beside it go first
        return Release(p)
    reg = registry_path(registry)
    name, _, version = arg.partition("/")
    if not name or "/" in version or arg.startswith(("~", ".")) or p.is_absolute():
        # a path, not NAME[/VERSION]: never "no release of ''" (`show /nonexistent`)
        raise ConfigError(f"no release directory {arg!r}",
                          hint="Pass a folder that holds release.json, or NAME[/VERSION] of a release in the "
                          "registry (`benchsmith list` shows the datasets)")
    recover(reg / name)
    releases = find_releases(reg, name)
    if not releases:
        names = [d.name for d in reg.iterdir() if d.is_dir() and not d.name.startswith(".")] if reg.is_dir() else []
        raise ConfigError(
            f"no release directory {arg!r} and no release of {name!r} in registry {reg}",
            hint=f"{_how_to_get(name)} {did_you_mean(name, names)}",
        )
    if not version:
        return releases[-1]
    for r in releases:
        if r.version == version:
            return r
    raise ConfigError(
        f"no version {version!r} of {name!r} in registry {reg}",
        hint=did_you_mean(version, [r.version for r in releases]),
    )
