"""The ``benchsmith`` command line: its entry point, :func:`main`.

Conventions: every command that reports figures takes ``--json`` and then prints
exactly one JSON object on stdout; progress bars go to stderr and are off with
``--quiet`` or when stderr is not a terminal; a user mistake is one line on
stderr (what, where, what to do) and exit status 2; a failed gate exits 1.

The commands, their options and their help are defined once, as a typer app, in
:mod:`benchsmith.cli_app`. This module is what the ``benchsmith`` script imports, and it
imports neither typer nor click: a plain ``benchsmith build NAME ...`` (the command that
users and CI run most, and whose whole process issue 26 holds to 1.3x the pyarrow I/O
floor) is read by :func:`build_arguments` and run without them. typer, click and the app's
other commands cost ~0.06-0.08 s CPU of a build's start-up (``python -X importtime``), a
tenth of ComVE's whole build. Decisions:

* **One definition.** :data:`BUILD_OPTIONS` is not a second definition of ``build``: it
  names, for each option of ``cli_app.build_cmd``, the parameter it fills and whether it is a
  flag, a value or a repeatable value; tests/test_cli_fast.py derives the same table from the
  typer command (click's parameters) and fails when they differ, and checks that every
  command line the fast path reads gives the same arguments typer gives.
* **Anything else goes to typer.** The fast path reads only what it is sure of: the global
  ``-q/--quiet/-v/--verbose`` (hoisted, as for every command), ``build``, one NAME, and the
  options of :data:`BUILD_OPTIONS` each as a separate word with a non-empty value that does
  not start with ``-``, single-value options at most once. ``--help``, ``--version`` before
  ``build``, ``--opt=value``, ``--``, an unknown or misspelt option, a missing value, a
  second NAME: typer reads the line, so help texts, usage errors and their exit statuses
  are typer's, word for word.
* **Same run.** Both ways call :func:`benchsmith.commands.configure` (the global options) and
  :func:`benchsmith.cli_build.build` (the command's body), and errors go through the same
  handlers below; Ctrl-C is "aborted", exit 130, as typer's ``Abort`` gives it.
"""

from __future__ import annotations

import sys
from typing import Any

from benchsmith.errors import BenchsmithError, EnvironmentFault

#: global flags accepted anywhere on the line (``benchsmith validate X --quiet``), as users type them
GLOBAL_FLAGS = ("-q", "--quiet", "-v", "--verbose")

#: ``build``'s options as :func:`build_arguments` reads them: ``{option: (parameter, kind)}``, kind
#: ``flag`` (no value), ``value`` (one value, a string), ``path`` (one value, a ``Path``) or
#: ``values`` (repeatable, a list of strings). Derived from ``cli_app.build_cmd`` in
#: tests/test_cli_fast.py, which fails when the two differ.
BUILD_OPTIONS: dict[str, tuple[str, str]] = {
    "--version": ("version", "value"),
    "--sources": ("sources", "path"),
    "--registry": ("registry", "path"),
    "--config": ("config", "values"),
    "--skip-missing": ("skip_missing", "flag"),
    "--overwrite": ("overwrite", "flag"),
    "--register-fingerprints": ("register_fingerprints", "flag"),
    "--json": ("json_out", "flag"),
}


def hoist_global_flags(argv: list[str]) -> list[str]:
    """Move the global flags found after the sub-command to the front (never past ``--``)."""
    end = argv.index("--") if "--" in argv else len(argv)
    flags = [a for a in argv[:end] if a in GLOBAL_FLAGS]
    rest = [a for a in argv[:end] if a not in GLOBAL_FLAGS]
    return flags + rest + argv[end:]


def build_arguments(argv: list[str]) -> tuple[bool, bool, dict[str, Any]] | None:
    """``(quiet, verbose, keyword arguments of cli_build.build)`` for a plain ``build`` line
    (global flags already hoisted), or None: the line goes to typer (module docstring)."""
    from pathlib import Path

    globals_ = []
    for i, a in enumerate(argv):
        if a not in GLOBAL_FLAGS:
            break
        globals_.append(a)
    else:
        return None
    if argv[i] != "build":
        return None
    kwargs: dict[str, Any] = {param: False for param, kind in BUILD_OPTIONS.values() if kind == "flag"}
    kwargs.update({param: None for param, kind in BUILD_OPTIONS.values() if kind != "flag"})
    name = None
    rest = iter(argv[i + 1:])
    for a in rest:
        if not a.startswith("-"):
            if name is not None:  # a second NAME: typer's usage error
                return None
            name = a
            continue
        param, kind = BUILD_OPTIONS.get(a, (None, None))
        if param is None:  # --help, --opt=value, --, a typo: typer's
            return None
        if kind == "flag":
            kwargs[param] = True
            continue
        value = next(rest, None)
        if not value or value.startswith("-") or (kind != "values" and kwargs[param] is not None):
            return None
        if kind == "values":
            kwargs[param] = [*(kwargs[param] or []), value]
        else:
            kwargs[param] = Path(value) if kind == "path" else value
    if name is None:
        return None
    quiet = any(a in ("-q", "--quiet") for a in globals_)
    verbose = any(a in ("-v", "--verbose") for a in globals_)
    return quiet, verbose, {"name": name, **kwargs}


def _build(quiet: bool, verbose: bool, kwargs: dict[str, Any]) -> int:
    from benchsmith.cli_build import build
    from benchsmith.commands import configure

    try:
        configure(quiet, verbose)
        build(**kwargs)
    except (KeyboardInterrupt, EOFError):  # as click: a new line, then typer's Abort below
        sys.stderr.write("\n")
        from benchsmith.commands import err_console

        err_console.print("aborted")
        return 130
    return 0


def main(argv: list[str] | None = None) -> int:
    """Entry point: runs the command and turns BenchsmithError into one line + exit status."""
    argv = hoist_global_flags(list(sys.argv[1:] if argv is None else argv))
    fast = build_arguments(argv)
    try:
        if fast is not None:
            return _build(*fast)
        from benchsmith.cli_app import run_app

        return run_app(argv)  # typer's own exits (help, usage errors, Abort) are exit statuses there
    except BenchsmithError as exc:
        from benchsmith.commands import err_console

        err_console.print(f"error: {exc}", markup=False, highlight=False, soft_wrap=True)
        return exc.exit_code
    except (OSError, MemoryError) as exc:  # disk full, EIO, out of memory...: one line, exit 3 (EnvironmentFault.of)
        from benchsmith.commands import err_console

        fault = EnvironmentFault.of(exc)
        err_console.print(f"error: {fault}", markup=False, highlight=False, soft_wrap=True)
        return fault.exit_code


def __getattr__(name: str) -> Any:
    """The typer app's names (``app``, ``_root_group``, ``_load_plugins``...), from
    :mod:`benchsmith.cli_app`, imported on first use: this module stays typer-free."""
    if name.startswith("__"):
        raise AttributeError(name)
    from benchsmith import cli_app

    try:
        return getattr(cli_app, name)
    except AttributeError:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}") from None


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
