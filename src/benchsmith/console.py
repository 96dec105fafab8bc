"""The ``benchsmith`` console script.

The CLI imports its libraries (pyarrow, datasets, scipy, scikit-learn, torch) at import time. When
the process cannot load one of them (a memory limit such as ``ulimit -v`` or a container's, or a
damaged install), that happens before :func:`benchsmith.cli.main` can report anything; this module
imports only the standard library and :mod:`benchsmith.errors`, so such a failure is still one
line and exit 3 (:func:`benchsmith.errors.library_fault`), as every other fault of the machine.
"""

from __future__ import annotations

import sys

from benchsmith.errors import EnvironmentFault, library_fault


def run(argv: list[str] | None = None) -> int:
    """Import the CLI and run it with ``argv`` (default ``sys.argv[1:]``); the exit status."""
    try:
        from benchsmith.cli import main  # the whole CLI and its libraries: the import this guards
    except MemoryError as exc:
        return _report(EnvironmentFault.of(exc))
    except ImportError as exc:
        fault = library_fault(exc)
        if fault is None:  # a missing module is a broken install or a bug: its traceback says which
            raise
        return _report(fault)
    return main(argv)


def _report(fault: EnvironmentFault) -> int:
    print(f"error: {fault}", file=sys.stderr)
    return fault.exit_code


if __name__ == "__main__":  # pragma: no cover
    sys.exit(run())
