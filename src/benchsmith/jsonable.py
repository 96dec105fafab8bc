"""Plain JSON values from benchsmith's objects (for ``--json`` output and reports)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any


def to_jsonable(obj: Any) -> Any:
    """Plain JSON values: paths become strings, objects with ``to_dict()`` their dict, tuples and
    sets lists, numpy scalars Python numbers; mapping keys are stringified."""
    if isinstance(obj, Path):
        return str(obj)
    if hasattr(obj, "to_dict"):
        return obj.to_dict()
    if isinstance(obj, Mapping):
        return {str(k): to_jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple, set)):
        return [to_jsonable(v) for v in obj]
    if hasattr(obj, "item"):  # numpy scalars
        return obj.item()
    return obj
