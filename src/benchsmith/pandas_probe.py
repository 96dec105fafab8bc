"""Keep pandas out of a process that converts only plain Python values to Arrow.

pyarrow imports pandas the first time it converts Python objects (``pa.array``,
``RecordBatch.from_pylist``, ``pa.scalar``, with or without an explicit type): every
conversion first asks whether its input is a pandas object, and the first such question
imports pandas (pandas 3.1: 0.43 s CPU on this 2-core machine, ``python -c "import
pyarrow; import pandas"`` less ``import pyarrow``, median of 5) - more than half the
I/O floor of a small build (ComVE's is 0.7 s CPU). No public pyarrow option skips it.

:func:`skip_pandas_probe` lets pyarrow's lazy pandas shim ask that question once while
an import hook refuses pandas, so the shim records "no pandas" and answers every later
question from that record; the hook is removed at once. What it changes, and why that
is safe where it is used (``benchsmith build``, whose builders yield plain Python values):

* ``pa.array`` / ``from_pylist`` / ``pa.scalar`` of lists, dicts, numbers and strings **with an
  explicit type** (a schema): unchanged (they never were pandas objects; the conversion is the
  same C++ one), and pandas stays out. A conversion whose Arrow type pyarrow infers imports pandas
  all the same (pyarrow 26 asks pandas's string-dtype option while inferring: ``pa.array([1, 2])``,
  ``pa.array(["a"])``, ``pa.scalar(" ")`` and ``from_pylist`` without a schema each did, with the
  probe skipped first, 2026-11-27): code on the build path gives every conversion its type
  (``builders/mucow/suite_columns.py`` says what that cost MuCoW).
* Anything that needs pandas itself (``to_pandas``, ``Table.from_pandas``) asks the shim
  with ``raise_=True``, which imports pandas again and restores the pandas-aware state
  (checked by tests/test_core_cli_startup.py).
* Until then, a pandas Series handed to ``pa.array`` would be read as a plain sequence
  (NaN not turned into null): hence this is called only by the build command, whose
  process never converts pandas objects, never by the library's ``ReleaseWriter``.

A process that already imported pandas (tests, ``validate``) is left alone. Tried first:
``sys.modules["pandas"] = None`` during the probe; pyarrow's Cython import reads that entry
without checking it and fails with AttributeError, so an import hook is used instead.
"""

from __future__ import annotations

import sys

_PROBED = False


class _RefusePandas:
    """A meta path finder that makes ``import pandas`` fail while it is installed (and finds
    nothing else: other names fall through to the next finder)."""

    def find_spec(self, name: str, path=None, target=None):
        if name.partition(".")[0] == "pandas":
            raise ModuleNotFoundError("pandas is refused during pyarrow's probe", name=name)


def skip_pandas_probe() -> bool:
    """Answer pyarrow's "is pandas there?" question with no, without importing pandas.

    Returns whether it did (False when pandas is already imported or it ran before)."""
    global _PROBED
    if _PROBED or "pandas" in sys.modules:
        return False
    import pyarrow as pa

    hook = _RefusePandas()
    sys.meta_path.insert(0, hook)
    try:
        pa.array([], type=pa.null())  # the first conversion asks the shim, which tries the import once
    finally:
        sys.meta_path.remove(hook)
    _PROBED = True
    return True
