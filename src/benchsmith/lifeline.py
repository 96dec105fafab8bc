"""Child processes that die with their parent.

A forked worker (validate's :class:`~benchsmith.validation.runner._Worker`, a harvest's Dask
worker) or a spawned tool (eflomal) must not outlive the command that started it: orphaned to
PID 1, it would keep the command's stdout/stderr open (a pipeline reading them blocks) and its
CPU. On Linux the kernel does it: ``prctl(PR_SET_PDEATHSIG, SIGKILL)``; elsewhere nothing is
asked (no such call), and each user keeps its own pipe-EOF check.
"""

from __future__ import annotations

import ctypes
import os
import signal
import sys
from collections.abc import Callable

_PR_SET_PDEATHSIG = 1


def die_with_parent(parent: int) -> None:
    """Ask the kernel to SIGKILL this process when its parent dies, and exit now if ``parent`` (the pid
    the caller knows as its parent) is gone already: the request covers only deaths after it. No-op
    where ``PR_SET_PDEATHSIG`` does not exist (not Linux). ``PR_SET_PDEATHSIG`` fires when the
    *thread* that forked this process ends, so fork from a thread that lives as long as the parent."""
    hook = pdeathsig_hook()
    if hook is not None:
        hook()
    if os.getppid() != parent:
        os._exit(1)


def pdeathsig_hook() -> Callable[[], None] | None:
    """A ``preexec_fn`` that asks the kernel to SIGKILL the child when its parent dies (Linux), or None.
    Resolved here, in the parent: between fork and exec the child must not import anything."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        prctl = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None
    sigkill = int(signal.SIGKILL)

    def set_pdeathsig() -> None:  # pragma: no cover - runs in the child
        prctl(_PR_SET_PDEATHSIG, sigkill)

    return set_pdeathsig
