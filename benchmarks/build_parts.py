"""CPU seconds of each part of one ``benchsmith build NAME``, measured in one process.

Imports what ``build_real.py``'s ``build_startup`` imports, then runs the ``build`` command with
each part wrapped. A part is timed in the CPU time of the thread that runs it
(``time.thread_time``), so the writer thread's parquet encoding is its own part, not counted inside
whatever the main thread does meanwhile. ``process_cpu`` is the whole process (rusage, every
thread), ``imports`` the start-up's share, ``command`` the command's. Parts nest: ``builder
columns`` includes ``read+parse``, ``card files`` the builder's card sections. Prints one JSON
object; on a busy machine take the minimum of a few runs.

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
import contextlib
import io
import json
import sys
import tempfile
import threading
from pathlib import Path
from typing import Any

SKIP_MISSING = {"cognition"}  # ../shared/raw has no CoGnition train files


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

    builder = get_builder(args.name)
    imports = _cpu() - START
    parts: dict[str, float] = {}
    lock = threading.Lock()

    def wrap(owner: Any, attr: str, label: str) -> None:
        orig = getattr(owner, attr)

        def timed(*a: Any, **k: Any) -> Any:
            t = time.thread_time()
            try:
                return orig(*a, **k)
            finally:
                with lock:
                    parts[label] = parts.get(label, 0.0) + time.thread_time() - t

        setattr(owner, attr, timed)

    import pyarrow.parquet as pq

    import benchsmith.release.encoding as enc
    from benchsmith.release import shards, writer

    kind = type(builder)
    if "split_columns" in vars(kind):
        wrap(kind, "split_columns", "read+parse")
    wrap(kind, "columns", "builder columns")
    wrap(writer, "_errata_on_columns", "errata")
    wrap(enc.SplitEncoder, "encode_columns", "encode to Arrow")
    wrap(enc.SplitEncoder, "encode", "encode to Arrow")
    wrap(pq.ParquetWriter, "write_batch", "parquet encoding")
    wrap(shards.ShardSink, "finish", "fingerprint + sha256")
    wrap(benchsmith.cards.card, "write_card_files", "card files")
    wrap(kind, "card_sections", "card: builder sections")
    sys.argv = ["benchsmith", "--quiet", "build", args.name, "--sources", str(args.raw.resolve()),
                "--registry", tempfile.mkdtemp(), *(["--skip-missing"] if args.name in SKIP_MISSING else [])]
    before = _cpu()
    with contextlib.redirect_stdout(io.StringIO()):
        try:
            code = benchsmith.cli.main()
        except SystemExit as exc:
            code = exc.code
    if code:
        raise SystemExit(f"the build failed ({code})")
    out = {"process_cpu": _cpu() - START, "imports": imports, "command": _cpu() - before, **parts}
    print(json.dumps({k: round(v, 3) for k, v in out.items()}))


if __name__ == "__main__":
    main()
