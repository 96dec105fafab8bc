"""What a builder's tests need, installed with benchsmith (a plugin's tests need no checkout).

* :class:`BuilderTestBase` (``benchsmith.testing.builder``): declare a builder, its fixture
  folder and its split counts; inherit the registration, split-count, ``load_dataset`` round
  trip, id, byte-identical rebuild and failed-build checks. It needs pytest.
* fixture helpers (``benchsmith.testing.fixtures``): :func:`fixtures_dir`, :func:`write_tsv`,
  :func:`registered`, :func:`build_release`.
* :class:`LocalHub` (``benchsmith.testing.hub``): a local, in-memory Hugging Face Hub to
  publish to and ``load_dataset`` from, without the network.

Names are imported on first use, so ``import benchsmith.testing`` costs nothing.
"""

from __future__ import annotations

from typing import Any

_WHERE = {
    "BuilderTestBase": "benchsmith.testing.builder",
    "LocalHub": "benchsmith.testing.hub",
    "fixtures_dir": "benchsmith.testing.fixtures",
    "write_tsv": "benchsmith.testing.fixtures",
    "registered": "benchsmith.testing.fixtures",
    "build_release": "benchsmith.testing.fixtures",
}

__all__ = ["BuilderTestBase", "LocalHub", "build_release", "fixtures_dir", "registered", "write_tsv"]


def __getattr__(name: str) -> Any:
    if name not in _WHERE:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(_WHERE[name]), name)
