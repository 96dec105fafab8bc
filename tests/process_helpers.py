"""Watching processes from a kill test: is a pid still running, and waiting for a condition."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path


def running(pid: int) -> bool:
    """The process exists and is not a zombie (Linux: /proc)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rpartition(")")[2].split()[0] != "Z"


def wait_until(cond: Callable[[], bool], timeout: float = 10.0) -> bool:
    """Poll ``cond`` until it holds or ``timeout`` seconds pass; its last value."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if cond():
            return True
        time.sleep(0.05)
    return cond()
