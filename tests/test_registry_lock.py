"""The per-version lock (benchsmith.registry.lock): one taker at a time, in this process or another,
and it excludes any other filelock ``FileLock`` on the same file both ways."""

from __future__ import annotations

import os
import time

import pytest
from filelock import FileLock

from benchsmith import registry
from benchsmith.errors import ReleaseError


def _lock_file(target):
    return target.parent.parent / registry.LOCK_DIR / target.parent.name / f"{target.name}.lock"


def test_a_held_lock_refuses_a_second_taker_then_frees(tmp_path):
    target = tmp_path / "reg" / "comve" / "1.0.0"
    with registry.lock(target, timeout=0):
        with pytest.raises(ReleaseError, match="comve 1.0.0 is locked by another build or publish"), \
                registry.lock(target, timeout=0):
            pass
        t = time.monotonic()
        with pytest.raises(ReleaseError), registry.lock(target, timeout=0.2):
            pass
        assert time.monotonic() - t >= 0.2  # it waited for the lock before giving up
    with registry.lock(target, timeout=0):  # released: free again, the file stays
        assert _lock_file(target).is_file()


def test_flock_and_filelock_exclude_each_other(tmp_path):
    target = tmp_path / "reg" / "xcopa" / "1.1.0"
    with registry.lock(target, timeout=0), pytest.raises(Exception, match="Timeout|timeout|could not be acquired"):
        FileLock(str(_lock_file(target))).acquire(timeout=0)
    held = FileLock(str(_lock_file(target)))
    held.acquire(timeout=0)
    try:
        with pytest.raises(ReleaseError, match="locked by another build or publish"), registry.lock(target, timeout=0):
            pass
    finally:
        held.release()


def test_a_lock_held_in_another_process_is_seen(tmp_path):
    target = tmp_path / "reg" / "mucow" / "1.0.0"
    with registry.lock(target, timeout=0):
        pid = os.fork()
        if pid == 0:  # the child: the parent's flock is another open file's
            try:
                with registry.lock(target, timeout=0):
                    os._exit(0)
            except ReleaseError:
                os._exit(7)
        _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 7
