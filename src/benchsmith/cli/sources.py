"""``benchsmith sources NAME``: what a builder needs from the raw data, and its checksums.tsv.

The option that hashes raw files is ``--checksums DIR``, not ``--register``: ``--registry`` is
an option of most other commands, and a slip of one letter (``sources xcopa --registry``) was
suggested ``--register``, which then hashed whatever folder came next.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from benchsmith.builder import get_builder
from benchsmith.cli.options import JSON_OPTION, DatasetArg
from benchsmith.cli.output import console, emit, err_console, literal
from benchsmith.errors import ConfigError
from benchsmith.registry import write_text_atomic
from benchsmith.source import checksum_lines, verify_source


def sources_cmd(
    name: DatasetArg,
    checksums: Annotated[
        Path | None,
        typer.Option("--checksums", metavar="DIR",
                     help="Hash the files under DIR/<source>/ and print checksums.tsv lines."),
    ] = None,
    write: Annotated[
        bool, typer.Option("--write",
                           help="With --checksums: replace the builder's checksums.tsv (atomically).")
    ] = False,
    json_out: bool = JSON_OPTION,
) -> None:
    """List a builder's raw sources and their checksums.

    Each source is listed with the place its files go under `--sources DIR` and their registered
    sha256. `--checksums DIR --write` writes `checksums.tsv` beside the builder through a
    temporary file renamed into place; `--checksums DIR` alone prints the lines. A checksums.tsv
    that is empty (the shell truncated it for `> checksums.tsv`) counts as "nothing registered
    yet" here, since this is the command that regenerates it.
    """
    b = get_builder(name)
    if write and checksums is None:
        raise ConfigError("--write needs --checksums DIR",
                          hint=f"Run `benchsmith sources {name} --checksums DIR --write`")
    dest = b.data_path("checksums.tsv")
    truncated = checksums is not None and dest.is_file() and dest.stat().st_size == 0
    known = {} if truncated else b.checksums()
    if checksums is not None:
        _hash(name, b, Path(checksums), dest, known, write, json_out)
        return
    out: list[dict[str, Any]] = []
    for s in b.sources:
        files = []
        for rel in s.all_files:
            size, sha = known.get((s.name, rel), (None, None))
            files.append({"path": rel, "expected_at": f"DIR/{s.name}/{rel}", "sha256": sha, "size": size,
                          "required": rel in s.files})
        out.append({"name": s.name, "url": s.url, "license": s.license, "description": s.description,
                    "files": files})

    def human() -> None:
        for s in out:
            console.print(f"[bold]{literal(s['name'])}[/]  {literal(s['license'])}  "
                          f"{literal(s['url'] or '(no download url)')}")
            if s["description"]:
                console.print(f"  {s['description']}", markup=False)
            for f in s["files"]:
                sha = f["sha256"] or "(not registered)"
                opt = "" if f["required"] else " [optional]"
                console.print(f"  {f['expected_at']}{opt}\n    sha256 {sha}", markup=False)

    emit({"name": name, "sources": out}, json_out, human)


def _hash(name: str, b: Any, root: Path, dest: Path, known: dict, write: bool, json_out: bool) -> None:
    """``--checksums DIR``: the checksums.tsv lines of the files found under DIR (written with --write)."""
    resolved = [verify_source(s, root / s.name, {}, allow_missing=True) for s in b.sources]
    lines = checksum_lines(resolved)
    changed = [
        f"{rs.source.name}/{r.path}"
        for rs in resolved
        for r in rs.records.values()
        if r.sha256 and (rs.source.name, r.path) in known and known[(rs.source.name, r.path)][1] != r.sha256
    ]
    absent = [f"{rs.source.name}/{r.path}" for rs in resolved for r in rs.records.values()
              if r.status == "absent"]
    if write:
        if len(lines) == 1:
            raise ConfigError(f"no source file of {name} found under {root}: checksums.tsv left as it is",
                              hint=f"Lay the raw files out as `benchsmith sources {name}` shows")
        write_text_atomic(dest, "".join(line + "\n" for line in lines), newline="")
    if json_out:
        emit({"checksums_tsv": dest, "lines": lines, "changed": changed, "absent": absent, "written": write},
             True)
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
