"""The ``benchsmith`` commands as a typer app: every command, option and help text is defined here.

:mod:`benchsmith.cli` is the entry point (``main``): it runs a plain ``benchsmith build`` without
importing typer (its module docstring says how it reads that line from this module's
definition), and every other command line through :func:`run_app`. Conventions (output, errors,
exit statuses) are in :mod:`benchsmith.cli`'s docstring.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated, Any

import typer

try:  # typer >= 0.25 vendors click and raises its own exception classes
    from typer._click.exceptions import ClickException as _ClickException
except ImportError:  # pragma: no cover - older typer raises click's
    from click import ClickException as _ClickException  # type: ignore[assignment]

from benchsmith import cli_coercion
from benchsmith.builder import discover, get_builder
from benchsmith.cli_build import print_summary
from benchsmith.commands import (
    JSON_OPTION,
    REGISTRY_OPTION,
    configure,
    console,
    emit,
    err_console,
    harvest_app,
    literal,
    plain_table,
    registry_path,
    resolve_release,
    root_commands,
    stage_app,
)
from benchsmith.errors import EnvironmentFault
from benchsmith.evaluate_cli import evaluate_app

cli_coercion.install()  # plain strings and paths without pydantic (see benchsmith/cli_coercion.py)

app = typer.Typer(
    help="Build, audit and release NLP challenge sets.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
    rich_markup_mode=None,  # help texts contain [brackets] (NAME[/VERSION]) that are not markup
)
app.add_typer(evaluate_app, name="evaluate")
app.add_typer(harvest_app, name="harvest")
app.add_typer(stage_app, name="stage")


def _print_version(value: bool) -> None:
    if value:
        import benchsmith

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


@app.command("list")
def list_cmd(json_out: bool = JSON_OPTION) -> None:
    """Every dataset builder with its versions and configs."""
    from benchsmith.builder_index import summaries

    out = summaries()  # cached between runs: see benchsmith/builder_index.py

    def human() -> None:
        rows = [(n, ", ".join(v["versions"]), ", ".join(v["configs"][:8]) + (" ..." * bool(v["configs"][8:])))
                for n, v in out.items()]
        sys.stdout.write(plain_table("benchsmith datasets", ["name", "versions", "configs"], rows))

    emit({"builders": out}, json_out, human)


@app.command("sources")
def sources_cmd(
    name: Annotated[str, typer.Argument(help="Dataset name (see `benchsmith list`).")],
    register: Annotated[
        Path | None,
        typer.Option("--register", help="Hash the files under DIR/<source>/ and print checksums.tsv lines."),
    ] = None,
    write: Annotated[
        bool, typer.Option("--write", help="With --register: replace the builder's checksums.tsv (atomically).")
    ] = False,
    json_out: bool = JSON_OPTION,
) -> None:
    """What a builder needs: each source, where it goes under --sources DIR, and its checksums.

    `--register DIR --write` writes `checksums.tsv` beside the builder through a temporary
    file renamed into place; `--register DIR` alone prints the lines. A checksums.tsv that is
    empty (the shell truncated it for `> checksums.tsv`) counts as "nothing registered yet"
    here, since this is the command that regenerates it.
    """
    from benchsmith.errors import ConfigError
    from benchsmith.source import checksum_lines, verify_source

    b = get_builder(name)
    if write and register is None:
        raise ConfigError("--write needs --register DIR", hint=f"Run `benchsmith sources {name} --register DIR --write`")
    dest = b.data_path("checksums.tsv")
    truncated = register is not None and dest.is_file() and dest.stat().st_size == 0
    known = {} if truncated else b.checksums()
    if register is not None:
        resolved = [verify_source(s, Path(register) / s.name, {}, allow_missing=True) for s in b.sources]
        lines = checksum_lines(resolved)
        changed = [
            f"{rs.source.name}/{r.path}"
            for rs in resolved
            for r in rs.records.values()
            if r.sha256 and (rs.source.name, r.path) in known and known[(rs.source.name, r.path)][1] != r.sha256
        ]
        absent = [f"{rs.source.name}/{r.path}" for rs in resolved for r in rs.records.values() if r.status == "absent"]
        if write:
            if len(lines) == 1:
                raise ConfigError(f"no source file of {name} found under {register}: checksums.tsv left as it is",
                                  hint=f"Lay the raw files out as `benchsmith sources {name}` shows")
            _write_atomically(dest, "".join(line + "\n" for line in lines))
        if json_out:
            emit({"checksums_tsv": dest, "lines": lines, "changed": changed, "absent": absent, "written": write}, True)
            return
        if write:
            err_console.print(f"wrote {len(lines) - 1} checksum(s) to {dest}", markup=False, highlight=False)
        else:
            err_console.print(f"# paste into {dest} (or run again with --write)", markup=False)
            for line in lines:
                print(line)
        for c in changed:
            err_console.print(f"[yellow]changed from the registered sha256:[/] {literal(c)}")
        for a in absent:
            err_console.print(f"[yellow]absent:[/] {literal(a)}")
        return
    out: list[dict[str, Any]] = []
    for s in b.sources:
        files = []
        for rel in s.all_files:
            size, sha = known.get((s.name, rel), (None, None))
            files.append({"path": rel, "expected_at": f"DIR/{s.name}/{rel}", "sha256": sha, "size": size,
                          "required": rel in s.files})
        out.append({"name": s.name, "url": s.url, "license": s.license, "description": s.description, "files": files})

    def human() -> None:
        for s in out:
            console.print(f"[bold]{literal(s['name'])}[/]  {literal(s['license'])}  {literal(s['url'] or '(no download url)')}")
            if s["description"]:
                console.print(f"  {s['description']}", markup=False)
            for f in s["files"]:
                sha = f["sha256"] or "(not registered)"
                opt = "" if f["required"] else " [optional]"
                console.print(f"  {f['expected_at']}{opt}\n    sha256 {sha}", markup=False)

    emit({"name": name, "sources": out}, json_out, human)


def _write_atomically(dest: Path, text: str) -> None:
    """``text`` into ``dest`` through a temporary sibling renamed into place: a failed write
    leaves the old file whole (EnvironmentFault: disk full, read-only folder)."""
    import os
    import tempfile

    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{dest.name}.", suffix=".tmp", dir=dest.parent)
    except OSError as exc:
        raise EnvironmentFault(f"cannot write beside {dest}: {exc.strerror}", path=dest,
                               hint="Make the builder's folder writable") from None
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as fh:
            fh.write(text)
        os.replace(tmp, dest)
    except OSError as exc:
        Path(tmp).unlink(missing_ok=True)
        raise EnvironmentFault(f"cannot write {dest}: {exc.strerror}", path=dest,
                               hint="Free space or make the folder writable, then run again") from None


@app.command("build")
def build_cmd(
    name: Annotated[str, typer.Argument(help="Dataset name (see `benchsmith list`).")],
    version: Annotated[str | None, typer.Option("--version", help="Release version (default: newest).")] = None,
    sources: Annotated[
        Path | None, typer.Option("--sources", help="Folder with one sub-folder per source (e.g. ../shared/raw).")
    ] = None,
    registry: Path | None = REGISTRY_OPTION,
    config: Annotated[list[str] | None, typer.Option("--config", help="Build only this config (repeatable).")] = None,
    skip_missing: Annotated[
        bool, typer.Option("--skip-missing", help="Build the splits whose sources are present; record the rest.")
    ] = False,
    overwrite: Annotated[bool, typer.Option("--overwrite", help="Replace an existing release of this version.")] = False,
    register_fingerprints: Annotated[
        bool, typer.Option("--register-fingerprints",
                           help="Record this build's split fingerprints as the version's in builders/NAME/fingerprints.tsv.")
    ] = False,
    json_out: bool = JSON_OPTION,
) -> None:
    """Build a release from raw sources into the registry.

    A build of a version registered in fingerprints.tsv must reproduce it split for split, or
    it fails before anything is committed (see benchsmith/fingerprint_registry.py)."""
    from benchsmith.cli_build import build

    build(name, version=version, sources=sources, registry=registry, config=config, skip_missing=skip_missing,
          overwrite=overwrite, register_fingerprints=register_fingerprints, json_out=json_out)


@app.command("show")
def show_cmd(
    release: Annotated[str, typer.Argument(help="Release directory, or NAME[/VERSION] in the registry.")],
    registry: Path | None = REGISTRY_OPTION,
    verify: Annotated[
        bool, typer.Option("--verify", help="Hash every file against the seal (default: compare sizes only).")
    ] = False,
    json_out: bool = JSON_OPTION,
) -> None:
    """Summarise a release: configs, split sizes, errata, source status, and whether its bytes
    still match the seal (sizes by default, every sha256 with --verify); exit 2 when they do not."""
    from benchsmith import seal
    from benchsmith.errors import ReleaseError

    r = resolve_release(release, registry)
    summary = r.summary()
    summary["seal"] = check = _seal_summary(r, verify)
    emit(summary, json_out, lambda: print_summary(summary, f"{r.name} {r.version} ({r.path})"))
    if check["matches"] is False:
        raise ReleaseError(
            f"{r.name} {r.version} is not the release that was {check['sealed_when']}: "
            f"{seal.describe(check['problems'])}",
            path=r.path,
            hint=("Restore the published files: a published version never changes (bump the version for new data)"
                  if check["sealed_when"] == "published" else
                  f"Restore the validated files, or validate again (`benchsmith validate {r.path}`) if the change "
                  "is intended"),
        )


def _seal_summary(r, full: bool) -> dict:
    """What ``show`` says about the seal: which one, how it was checked, and the differences."""
    from benchsmith import seal
    from benchsmith.errors import ReleaseError

    sealed, source = seal.recorded(r.path)
    how = "sha256 of every file" if full else "sizes only (--verify hashes every file)"
    if sealed is None:
        return {"digest": None, "source": source, "checked": None, "matches": None, "problems": [],
                "sealed_when": None}
    try:
        problems = seal.differences(r.path, sealed, full=full)
        if full and not problems and source == seal.FROM_REPORT:  # only the folder vouches for itself
            from benchsmith.fingerprint_registry import registered_differences

            problems = registered_differences(r)[0]
    except ReleaseError as exc:  # a link or special file inside
        problems = [exc.message]
    return {"digest": sealed.digest, "source": source, "checked": how, "matches": not problems,
            "problems": problems, "sealed_when": "published" if source == "the published marker" else "validated"}


@app.command("publish")
def publish_cmd(
    release: Annotated[str, typer.Argument(help="Release directory, or NAME[/VERSION] in the registry.")],
    registry: Path | None = REGISTRY_OPTION,
    hub: Annotated[
        str | None, typer.Option("--hub", help="Commit to this Hub dataset repo (ORG/NAME) and tag the version.")
    ] = None,
    endpoint: Annotated[str | None, typer.Option("--endpoint", help="Hub endpoint (default huggingface.co).")] = None,
    allow_partial: Annotated[
        bool, typer.Option("--allow-partial", help="Publish a build of some configs / with skipped splits.")
    ] = False,
    json_out: bool = JSON_OPTION,
) -> None:
    """Publish a validated release (gate, seal and registered sources first); a published version is never
    overwritten. With --hub the publication is recorded in --registry (default: the registry holding the release)."""
    from benchsmith.publish import publish_hub, publish_local

    r = resolve_release(release, registry)
    out = (publish_hub(r, hub, endpoint=endpoint, allow_partial=allow_partial, registry_root=registry) if hub
           else publish_local(r, registry_path(registry), allow_partial=allow_partial))
    emit(out, json_out, lambda: console.print(
        f"{'already published' if out.get('already_published') else 'published'} {r.name} {r.version} -> {out['published']}"
        + (f" ({out['note']})" if out.get("note") else ""),
        markup=False,
    ))


@app.command("new")
def new_cmd(
    name: Annotated[str, typer.Argument(help="Dataset name: lower-case letters, digits, - and _.")],
    dest: Annotated[
        Path | None, typer.Option("--dir", help="Folder to create (default ./benchsmith-NAME); must be new or empty.")
    ] = None,
    json_out: bool = JSON_OPTION,
) -> None:
    """Scaffold an out-of-tree builder package (entry point, builder, checksums, figures, fixture, tests)."""
    from benchsmith.scaffold import render, scaffold

    out = scaffold(name, dest)
    files = sorted(render(name))
    emit({"name": name, "path": out, "files": files}, json_out, lambda: console.print(
        f"created {out} ({len(files)} files)\nnext: cd {out} && pip install -e '.[test]' && python -m pytest -q",
        highlight=False, markup=False))


_PLUGINS_LOADED = False
#: plug-in modules whose ``root_command``s become top-level commands
PLUGIN_MODULES = ("benchsmith.validation.cli", "benchsmith.validation.baselines.cli", "benchsmith.changelog_cli",
                  "benchsmith.validation.contamination.cli")
#: the plug-in module that defines each root command, so that ``benchsmith validate ...`` imports
#: that module alone (tests/test_core_cli.py derives the same table from the modules' source)
PLUGIN_COMMANDS = {"validate": "benchsmith.validation.cli", "audit": "benchsmith.validation.cli",
                   "baseline": "benchsmith.validation.baselines.cli", "diff": "benchsmith.changelog_cli",
                   "contamination": "benchsmith.validation.contamination.cli"}
#: commands that need no plug-in: they run without importing every builder, its CLI and the
#: validation stack (``build``/``sources`` import the one builder they name)
CORE_COMMANDS = ("list", "sources", "build", "show", "publish", "new")


def _load_plugins() -> None:
    """Import builders (and their cli modules) and validation commands, then mount them."""
    global _PLUGINS_LOADED
    if _PLUGINS_LOADED:
        return
    discover()
    _mount_plugins(PLUGIN_MODULES)
    _PLUGINS_LOADED = True


def _mount_plugins(modules: tuple[str, ...]) -> None:
    """Import plug-in modules and mount every root command registered so far, in the order a
    full load gives them (:data:`PLUGIN_COMMANDS`' order, then any other), so that help reads
    the same whichever command line mounted them first.

    A root command named on the command line mounts its own module only (:func:`_root_group`):
    ``validate`` needs neither the other plug-ins nor every builder and its CLI (``discover``),
    ~0.25 CPU s of its start-up; the builder it validates is imported by name
    (:func:`benchsmith.builder.is_registered`)."""
    import importlib

    for module in modules:
        try:
            importlib.import_module(module)
        except ModuleNotFoundError as exc:
            if exc.name != module:
                raise
    mounted = {info.name for info in app.registered_commands}
    for name, func in root_commands().items():
        if name not in mounted:
            app.command(name)(func)
    order = {name: i for i, name in enumerate(PLUGIN_COMMANDS)}
    plugins = set(root_commands())
    # stable: the core commands first as defined, then the plug-ins' in the canonical order
    app.registered_commands.sort(key=lambda info: (info.name in plugins, order.get(info.name or "", len(order))))


def _command_name(argv: list[str]) -> str | None:
    """The sub-command named on a (hoisted) command line, or None (help, --version)."""
    for a in argv:
        if a == "--":
            return None
        if not a.startswith("-"):
            return a
    return None


def _plugin_help_stubs() -> list[tuple[str, str]]:
    """(name, help) of the plug-in modules' ``@root_command``s, read from their source
    without importing them (the validation stack imports datasets, pyarrow, numpy):
    what the top-level help lists before any plug-in is loaded."""
    import ast
    import importlib.util

    out = []
    for module in PLUGIN_MODULES:
        try:
            spec = importlib.util.find_spec(module)
        except (ImportError, ValueError):
            continue
        if spec is None or not spec.origin:
            continue
        tree = ast.parse(Path(spec.origin).read_text(encoding="utf-8"))
        for node in tree.body:
            if not isinstance(node, ast.FunctionDef):
                continue
            for deco in node.decorator_list:
                if (isinstance(deco, ast.Call) and getattr(deco.func, "id", None) == "root_command" and deco.args
                        and isinstance(deco.args[0], ast.Constant)):
                    out.append((str(deco.args[0].value), ast.get_docstring(node) or ""))
    return out


def _commands_of(typer_app: typer.Typer) -> tuple:
    """What typer builds a click group from: the registered commands and sub-apps, recursively."""
    return (tuple(map(id, typer_app.registered_commands)), id(typer_app.registered_callback),
            tuple((id(g), _commands_of(g.typer_instance)) for g in typer_app.registered_groups
                  if g.typer_instance is not None))


_GROUP: tuple[tuple, Any] | None = None


def _app_group():
    """``typer.main.get_command(app)``, kept while the app's commands stay the same: typer builds
    it in ~0.05-0.07 s CPU, once in a ``benchsmith`` process, but ~370 times in the default test
    run's two worker processes (``benchsmith.cli.main`` in-process: ~20 CPU s, 2026-11-27). A click
    group keeps no state between invocations (each makes its own context)."""
    import typer.main

    global _GROUP
    key = _commands_of(app)
    if _GROUP is None or _GROUP[0] != key:
        _GROUP = (key, typer.main.get_command(app))
    return _GROUP[1]


def _root_group(argv: list[str]):
    """The click group to run: plug-ins are mounted unless the command line needs none of
    them (a core command, or the top-level help, which lists them from their source)."""
    import typer.main

    name = _command_name(argv)
    if name in PLUGIN_COMMANDS and not _PLUGINS_LOADED:  # one plug-in module (see _mount_plugins)
        _mount_plugins((PLUGIN_COMMANDS[name],))
        return _app_group()
    if name is None or name not in CORE_COMMANDS:
        if name is not None or _PLUGINS_LOADED:
            _load_plugins()
            return _app_group()
        from typer.core import TyperCommand, TyperGroup

        group = typer.main.get_command(app)
        assert isinstance(group, TyperGroup)  # the app has commands: typer makes it a group

        # as typer orders a mounted app: commands, then the plug-ins' root commands, then sub-apps
        commands = dict(group.commands)
        group.commands = {n: c for n, c in commands.items() if not isinstance(c, TyperGroup)}
        for stub, doc in _plugin_help_stubs():
            group.commands.setdefault(stub, TyperCommand(name=stub, help=doc, callback=None))
        group.commands.update({n: c for n, c in commands.items() if isinstance(c, TyperGroup)})
        return group  # a group of its own (its commands replaced): not the kept one
    return _app_group()


def run_app(argv: list[str]) -> int:
    """Run the typer app on ``argv`` (global flags hoisted): typer's own exits as exit statuses;
    BenchsmithError and OSError go up to :func:`benchsmith.cli.main`, which prints them."""
    try:
        group = _root_group(argv)
        group(args=argv, prog_name="benchsmith", standalone_mode=False)
    except typer.Exit as exc:
        return exc.exit_code
    except _ClickException as exc:
        exc.show()
        return exc.exit_code
    except typer.Abort:
        err_console.print("aborted")
        return 130
    return 0
