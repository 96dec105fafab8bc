"""Arrow compute kernels without ``pyarrow.compute``, and arrays laid out as ``pa.array`` lays them.

``pyarrow._compute.call_function`` is what ``pyarrow.compute``'s wrappers call; importing that
module (which builds a Python wrapper and docstring per kernel) cost 0.05-0.09 s CPU of a build
against ~0.01 s for the kernels a ComVE build runs (README "Benchmarks", fifth pass).
"""

from __future__ import annotations

from typing import Any

import pyarrow as pa


def kernel(name: str, *args: Any, options: Any = None) -> Any:
    """Arrow's compute function ``name`` on ``args`` (arrays or scalars), with ``options``."""
    try:
        from pyarrow._compute import call_function
    except ImportError:  # pragma: no cover - a pyarrow that moved it: the public name
        from pyarrow.compute import call_function
    return call_function(name, list(args), options)


def without_validity(array: pa.Array) -> pa.Array:
    """``array`` with no validity bitmap when it holds no null (string, int and bool arrays).

    ``take``, ``if_else`` and ``choose`` allocate a bitmap even where every value is valid, and
    ``RecordBatch.nbytes`` (release.json's ``num_bytes``) counts it, where ``pa.array`` of the same
    Python values allocates none: dropping it keeps the release's bytes those of the list path.
    """
    buffers = array.buffers()
    if array.null_count or buffers[0] is None:
        return array
    return pa.Array.from_buffers(array.type, len(array), [None, *buffers[1:]], offset=array.offset)


def int_array(values: Any) -> pa.Array:
    """A 1-d numpy array of int8, int32 or int64 as an Arrow array of that type, its buffer shared.

    Not ``pa.array(values)``: converting a numpy array imports ``numpy.ma`` (its masked arrays),
    ~0.017 s CPU of a ComVE build that imports nothing else of it (``python -X importtime``).
    """
    types = {"int8": pa.int8(), "int32": pa.int32(), "int64": pa.int64()}
    if values.ndim != 1 or str(values.dtype) not in types or not values.flags.c_contiguous:
        raise TypeError(f"expected a contiguous 1-d int8, int32 or int64 array, got {values.dtype}")
    return pa.Array.from_buffers(types[str(values.dtype)], len(values), [None, pa.py_buffer(values)])
