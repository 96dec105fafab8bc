"""What every command prints, and how: the consoles, ``--json``, tables, the global options' effect.

Conventions (every command keeps them): with ``--json`` a command prints exactly one JSON object
on stdout; progress bars and messages go to stderr (bars are off with ``--quiet`` or when stderr
is not a terminal); a user mistake is one line on stderr (``error: what, where. What to do``).
"""

from __future__ import annotations

import json
import logging
import sys
from collections.abc import Callable, Sequence
from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from benchsmith import progress, redact
from benchsmith.jsonable import to_jsonable

# soft_wrap: a signature or an id printed on its own line is never broken by the terminal width,
# so a copied signature reproduces the score (tables still fit their columns).
# emoji=False: rich would turn any ``:name:`` into an emoji, and messages are full of them
# (``file.deu:100:`` lost its line number as ``file.deu💯``). Markup stays on for the few styles we
# write ourselves; data (paths, ids, values, messages) goes in through :func:`literal` or
# :func:`table`, or is printed with ``markup=False``, so ``[bold]`` in a value stays literal.
console = Console(soft_wrap=True, emoji=False)
err_console = Console(stderr=True, soft_wrap=True, emoji=False)

_VERBOSE = False


def literal(value: Any) -> str:
    """``value`` as text to put inside a markup string: its ``[...]`` are printed, not applied."""
    return escape(str(value))


def verbose() -> bool:
    """``--verbose``: commands print every result instead of a summary."""
    return _VERBOSE


def configure(quiet: bool, verbose: bool) -> None:
    """The global options' effect: progress bars, verbosity, logging."""
    global _VERBOSE
    progress.set_enabled(False if quiet else None)
    _VERBOSE = verbose
    logging.basicConfig(
        level=logging.DEBUG if verbose else logging.WARNING,
        format="%(levelname)s %(name)s: %(message)s",
        stream=sys.stderr,
        force=True,
    )
    redact.install()  # no handler ever prints a token (httpx/httpcore debug logs under -v included)


def emit(obj: Any, as_json: bool, human: Callable[[], None] | None = None) -> None:
    """Print ``obj`` as one JSON object (``--json``) or call ``human`` to print it for people."""
    if as_json:
        sys.stdout.write(json.dumps(to_jsonable(obj), ensure_ascii=False, sort_keys=False) + "\n")
        sys.stdout.flush()
    elif human is not None:
        human()
    else:
        console.print_json(json.dumps(to_jsonable(obj), ensure_ascii=False))


def next_step(text: str, as_json: bool) -> None:
    """The last line of a command in the release loop, on stderr: what to run next (not with --json)."""
    if not as_json:
        err_console.print(f"next: {text}", markup=False, highlight=False)


def error_line(message: str) -> None:
    """A user mistake or an environment fault, as one line on stderr."""
    err_console.print(f"error: {message}", markup=False, highlight=False, soft_wrap=True)


def table(title: str, columns: Sequence[str], rows: Sequence[Sequence[Any]]) -> Table:
    """A table whose title, headers and cells are literal text (never markup: they hold data)."""
    t = Table(title=Text(title), show_lines=False)
    for c in columns:
        t.add_column(Text(c))
    for r in rows:
        t.add_row(*[v if isinstance(v, Text) else Text(str(v)) for v in r])
    return t
