"""CPU seconds of each part of one ``benchsmith build NAME``, measured in one process.

Imports what ``build_real.py``'s ``build_startup`` imports, then runs the ``build`` command with
each part wrapped. Main-thread parts are **exclusive** (a part's time less the wrapped parts it
calls), in the CPU time of the main thread (``time.thread_time``), so they add up: ``command
(main thread)`` is their sum plus ``rest of the command`` (what no part covers); imports the command
does on the way (``pyarrow.csv``, the builder's modules, jinja2 for the card...) are the part
``imports in the command``. The writer thread's parquet encoding is timed in that thread
(``writer thread: parquet encoding``), not inside whatever the main thread does meanwhile.
``process_cpu`` is the whole process (rusage, every thread), ``imports`` the start-up's share.
Prints one JSON object; on a busy machine take the minimum of a few runs.

    python benchmarks/build_parts.py NAME [--raw ../shared/raw]
"""

from __future__ import annotations

import resource
import time


def _cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


START = _cpu()

import argparse
import builtins
import contextlib
import importlib
import io
import json
import sys
import tempfile
import threading
from pathlib import Path
from typing import Any

SKIP_MISSING = {"cognition"}  # ../shared/raw has no CoGnition train files


class Parts:
    """Exclusive main-thread CPU per part (a stack of the parts in progress)."""

    def __init__(self) -> None:
        self.parts: dict[str, float] = {}
        self.stack: list[float] = []

    def timed(self, label: str, fn: Any) -> Any:
        def run(*a: Any, **k: Any) -> Any:
            if threading.current_thread() is not threading.main_thread():
                t = time.thread_time()
                try:
                    return fn(*a, **k)
                finally:
                    key = f"writer thread: {label}"
                    self.parts[key] = self.parts.get(key, 0.0) + time.thread_time() - t
            t = time.thread_time()
            self.stack.append(0.0)
            try:
                return fn(*a, **k)
            finally:
                spent, inner = time.thread_time() - t, self.stack.pop()
                self.parts[label] = self.parts.get(label, 0.0) + spent - inner
                if self.stack:
                    self.stack[-1] += spent

        return run

    def wrap(self, owner: Any, attr: str, label: str) -> None:
        if isinstance(owner, str):
            owner = importlib.import_module(owner)
        if hasattr(owner, attr):  # an older tree (PYTHONPATH) may lack it: that part stays in the rest
            setattr(owner, attr, self.timed(label, getattr(owner, attr)))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("name")
    raw = Path(__file__).resolve().parent.parent.parent / "shared" / "raw"
    ap.add_argument("--raw", type=Path, default=raw)
    args = ap.parse_args()
    import benchsmith.cards.card

    import benchsmith.cli
    import benchsmith.release
    from benchsmith.builder import get_builder

    kind = type(get_builder(args.name))
    imports = _cpu() - START
    p = Parts()
    import pyarrow.parquet as pq

    from benchsmith.release import shards, writer

    if "split_columns" in vars(kind):
        p.wrap(kind, "split_columns", "read+parse")
    p.wrap(kind, "columns", "builder columns")
    p.wrap(kind, "card_sections", "card: builder sections")
    for owner, attr, label in [
        (writer, "_errata_on_columns", "errata"),
        ("benchsmith.release.encoding", "SplitEncoder", None),
        (pq.ParquetWriter, "write_batch", "parquet encoding"),
        (shards.ShardSink, "finish", "fingerprint + sha256"),
        (shards.ShardSink, "__init__", "split set-up"),
        (benchsmith.cards.card, "write_card_files", "card files"),
        (benchsmith.cards.card, "render_card", "card files"),
        ("benchsmith.source", "resolve_sources", "resolve sources (sha256 of the raw files)"),
        ("benchsmith.builder", "get_builder", "get_builder"),
        ("benchsmith.cli.output", "configure", "global options (logging)"),
        ("benchsmith.registry", "lock", "registry lock"),
        ("benchsmith.registry", "commit", "commit"),
        ("benchsmith.changelog", "record_changes", "changelog"),
        (writer.ReleaseWriter, "_manifest", "release.json"),
        (benchsmith.release.Release, "__init__", "release.json"),
        (benchsmith.release.Release, "summary", "summary"),
        ("benchsmith.cli.build", "emit", "summary"),
    ]:
        if label is None:  # the encoder's two entry points
            enc = importlib.import_module(owner).SplitEncoder  # type: ignore[arg-type]
            p.wrap(enc, "encode_columns", "encode to Arrow")
            p.wrap(enc, "encode", "encode to Arrow")
            p.wrap(enc, "__init__", "split set-up")
            continue
        p.wrap(owner, attr, label)
    importer = builtins.__import__
    builtins.__import__ = p.timed("imports in the command", importer)
    sys.argv = ["benchsmith", "--quiet", "build", args.name, "--sources", str(args.raw.resolve()),
                "--registry", tempfile.mkdtemp(), *(["--skip-missing"] if args.name in SKIP_MISSING else [])]
    before, main_before = _cpu(), time.thread_time()
    with contextlib.redirect_stdout(io.StringIO()):
        try:
            code = benchsmith.cli.main()
        except SystemExit as exc:
            code = exc.code
    main_thread = time.thread_time() - main_before
    builtins.__import__ = importer
    if code:
        raise SystemExit(f"the build failed ({code})")
    command = _cpu() - before
    in_parts = sum(v for k, v in p.parts.items() if not k.startswith("writer thread"))
    out = {"process_cpu": _cpu() - START, "imports": imports, "command": command, "command (main thread)": main_thread,
           **dict(sorted(p.parts.items(), key=lambda kv: -kv[1])), "rest of the command": main_thread - in_parts}
    print(json.dumps({k: round(v, 3) for k, v in out.items()}))


if __name__ == "__main__":
    main()
