"""Processes under test: is a pid still running, waiting for a condition, a file-size limit."""

from __future__ import annotations

import resource
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path


@contextmanager
def file_size_limit(nbytes: int) -> Iterator[None]:
    """``ulimit -f`` for this process while the block runs: a write past ``nbytes`` fails with EFBIG."""
    soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
    resource.setrlimit(resource.RLIMIT_FSIZE, (nbytes, hard))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))


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
