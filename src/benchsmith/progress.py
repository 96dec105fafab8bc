"""Rich progress bars that switch themselves off for CI.

Bars show only when stderr is a terminal and ``--quiet`` was not given, so logs in
CI stay clean. Code reports progress through :func:`track` or a :class:`Bar`,
which cost nothing when disabled.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import TypeVar

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    SpinnerColumn,
    TextColumn,
    TimeElapsedColumn,
)

T = TypeVar("T")

_enabled: bool | None = None  # None = decide from the terminal


def set_enabled(enabled: bool | None) -> None:
    """Force bars on/off (``--quiet`` sets False); None restores auto-detection."""
    global _enabled
    _enabled = enabled


def enabled() -> bool:
    """Whether bars show: as forced by :func:`set_enabled`, else when stderr is a terminal."""
    return sys.stderr.isatty() if _enabled is None else _enabled


class Bar:
    """One task on a shared rich Progress (or a no-op)."""

    def __init__(self, progress: Progress | None, description: str, total: float | None):
        self._progress = progress
        self._task = progress.add_task(description, total=total) if progress else None

    def advance(self, n: float = 1) -> None:
        if self._progress is not None and self._task is not None:
            self._progress.advance(self._task, n)

    def update(self, **kw) -> None:
        if self._progress is not None and self._task is not None:
            self._progress.update(self._task, **kw)


@contextmanager
def bar(description: str, total: float | None = None) -> Iterator[Bar]:
    """A transient bar on stderr for the ``with`` block (a no-op :class:`Bar` when disabled)."""
    if not enabled():
        yield Bar(None, description, total)
        return

    progress = Progress(
        SpinnerColumn(),
        TextColumn("{task.description}", markup=False),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=Console(stderr=True, emoji=False),  # a description may hold a path:line:
        transient=True,
    )
    with progress:
        yield Bar(progress, description, total)


def track(items: Iterable[T], description: str, total: float | None = None) -> Iterator[T]:
    """Iterate with a progress bar (when enabled)."""
    if total is None and hasattr(items, "__len__"):
        total = len(items)  # type: ignore[arg-type]
    with bar(description, total) as b:
        for item in items:
            yield item
            b.advance()
