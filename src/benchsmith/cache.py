"""Best-effort files under ``$BENCHSMITH_HOME/cache``: what a later run may reuse, never what it needs.

The builder index, MuCoW's POS-probe answers, XCOPA's word counts and URIEL vectors live
here (the validation report's charts are inline SVG now, cheap enough to draw every time). Every one of them is keyed by what decides
its content, so a stale entry never matches; a cache that cannot be read is empty, and
one that cannot be written (read-only, full, or a file where the folder should be) only
costs the next run the work again. The folder is safe to delete.
"""

from __future__ import annotations

import contextlib
import json
import os
from pathlib import Path
from typing import Any


def benchsmith_home() -> Path:
    """``$BENCHSMITH_HOME``, default ``~/.cache/benchsmith`` (download cache and default registry).

    Defined here, not in benchsmith.source (which re-exports it): ``benchsmith list`` reads the
    builder index under it without importing the download stack (http, tar, zip, lzma)."""
    return Path(os.environ.get("BENCHSMITH_HOME", Path.home() / ".cache" / "benchsmith"))


def cache_path(*parts: str) -> Path:
    """``$BENCHSMITH_HOME/cache/<parts...>``."""
    return benchsmith_home().joinpath("cache", *parts)


def read_json(path: Path) -> Any:
    """The JSON value in ``path``, or None when it is missing, unreadable or not JSON."""
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def write_json(path: Path, value: Any) -> bool:
    """:func:`write_bytes` of ``value`` as JSON text."""
    return write_bytes(path, json.dumps(value, ensure_ascii=False).encode("utf-8"))


def write_bytes(path: Path, data: bytes) -> bool:
    """Put ``data`` at ``path`` through a temporary sibling renamed into place (a concurrent
    reader sees the old file or the new one); False, and nothing left behind, when it cannot."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp.write_bytes(data)
        os.replace(tmp, path)
        return True
    except OSError:
        with contextlib.suppress(OSError):  # a file where the folder should be: not even unlink works
            tmp.unlink(missing_ok=True)
        return False
