"""Writing and reading release directories.

Layout of ``<registry>/<name>/<version>/``::

    README.md                               dataset card (YAML + prose)
    data/<config>/<split>-00000-of-0000N.parquet
    release.json                            manifest (sources, counts, fingerprints, tools)
    croissant.json                          Croissant 1.0 metadata
    reports/                                written by `benchsmith validate`

One module per job (the names below are re-exported here, so ``from benchsmith.release import
Release, ReleaseWriter`` keeps working):

* :mod:`.encoding`: row encoding, example dicts checked (ids unique) and turned into Arrow record batches;
* :mod:`.shards`: shard writing, record batches into fingerprinted parquet shards;
* :mod:`.writer`: :class:`ReleaseWriter`, the build of one version and its atomic commit;
* :mod:`.reader`: :class:`Release`, a release on disk read through its typed
  :class:`~benchsmith.manifest.ReleaseInfo`, and :func:`find_releases`.

The metadata is typed end to end: the writer records a :class:`~benchsmith.manifest.ReleaseInfo`
(``release.json`` is its ``to_dict()``) and the reader gives one back (``Release.info``).
"""

from benchsmith.manifest import ConfigInfo, ReleaseInfo, SplitInfo
from benchsmith.registry import CARD, MANIFEST, write_text_atomic
from benchsmith.release.reader import Release, find_releases
from benchsmith.release.shards import DEFAULT_BATCH_ROWS, DEFAULT_SHARD_BYTES, PARQUET_OPTIONS
from benchsmith.release.writer import ReleaseWriter, SkippedSplit

__all__ = ["CARD", "DEFAULT_BATCH_ROWS", "DEFAULT_SHARD_BYTES", "MANIFEST", "PARQUET_OPTIONS", "ConfigInfo",
           "Release", "ReleaseInfo", "ReleaseWriter", "SkippedSplit", "SplitInfo", "find_releases",
           "write_text_atomic"]
