"""What a builder's tests need, installed with benchsmith (a plugin's tests need no checkout).

* :class:`BuilderTestBase` (``benchsmith.testing.builder``): declare a builder, its fixture
  folder and its split counts; inherit the registration, split-count, ``load_dataset`` round
  trip, id, byte-identical rebuild and failed-build checks.
* fixture helpers (``benchsmith.testing.fixtures``): :func:`fixtures_dir`, :func:`write_tsv`,
  :func:`registered`, :func:`build_release`.
* :class:`LocalHub` (``benchsmith.testing.hub``): a local, in-memory Hugging Face Hub to
  publish to and ``load_dataset`` from, without the network.

The kit needs pytest (the ``dev`` extra).
"""

from benchsmith.testing.builder import BuilderTestBase
from benchsmith.testing.fixtures import build_release, fixtures_dir, registered, write_tsv
from benchsmith.testing.hub import LocalHub

__all__ = ["BuilderTestBase", "LocalHub", "build_release", "fixtures_dir", "registered", "write_tsv"]
