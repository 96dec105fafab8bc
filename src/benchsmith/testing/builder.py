"""The builder test base, like TFDS's ``DatasetBuilderTestCase`` (installed with benchsmith,
so a builder package outside this repository tests with it too; it needs pytest).

A dataset's test declares what it expects and inherits the checks::

    from benchsmith.testing import BuilderTestBase, fixtures_dir

    class TestXcopaBuilder(BuilderTestBase):
        builder = FixtureXcopa                 # the builder class (a fixture subclass is fine)
        sources = fixtures_dir(__file__)       # the --sources folder of the fixture
        configs = ["et", "en"]                 # optional subset (default: every config)
        counts = {"et": {"validation": 3, "test": 3}, "en": {...}}   # REQUIRED: every built config
        features = {"et": ["premise", ...]}    # optional: feature names per config
        ids_repeat_across_splits = True        # upstream ids are per split

``counts`` is required and covers every config the test builds, each with every split: a
test that forgot it (or a config that appeared since) fails and prints what was built, to
paste after checking it against the fixture.

The base then checks: the builder is registered under its name; split counts; every
config loads with ``datasets.load_dataset`` offline with the declared features and sizes;
no id is in two splits (or, where ids are per split by design, ids are unique within
each split); a rebuild is byte-identical; and a build that fails midway leaves nothing
behind in the registry (no release, no hidden temporary folder).
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any, ClassVar

import datasets
import pytest

from benchsmith.builder import Builder, builders
from benchsmith.release import Release, ReleaseWriter
from benchsmith.source import resolve_sources


class BuilderTestBase:
    """The shared checks of a builder on its fixture: subclass it in a pytest module, declare.

    Class attributes (the test's declarations):

    * ``builder``: the builder class (required; a fixture subclass is fine);
    * ``sources``: the fixture folder, laid out like ``--sources DIR`` (required;
      :func:`~benchsmith.testing.fixtures.fixtures_dir` gives ``tests/fixtures/``);
    * ``counts``: ``{config: {split: examples}}`` for every built config and split (required:
      without it, or with a built config left out, the split-count test fails and prints what
      was built);
    * ``version``: the version to build (default: the builder's last);
    * ``configs``: the configs to build (default: all); ``features``: ``{config: [names]}``
      to check; ``ids_repeat_across_splits``: ids are per split by design (unique within
      each split); ``skip_missing``: build what the fixture has (default True).

    Inherited tests: ``test_registered``, ``test_split_counts``, ``test_load_dataset_round_trip``
    (offline, with the declared features), ``test_ids_and_splits``,
    ``test_rebuild_is_byte_identical`` and ``test_failed_build_leaves_nothing``. The fixture
    release is built once per class (the ``release`` fixture); :meth:`build` builds another,
    e.g. to validate it::

        class TestMyBench(BuilderTestBase):
            builder = MyBench
            sources = fixtures_dir(__file__)
            counts = {"default": {"train": 12, "validation": 4, "test": 4}}
    """

    builder: ClassVar[type[Builder]]
    sources: ClassVar[Path]
    version: ClassVar[str | None] = None
    configs: ClassVar[list[str] | None] = None
    #: REQUIRED: {config: {split: examples}} for every config the test builds
    counts: ClassVar[dict[str, dict[str, int]] | None] = None
    features: ClassVar[dict[str, list[str]] | None] = None
    ids_repeat_across_splits: ClassVar[bool] = False
    skip_missing: ClassVar[bool] = True

    # ------------------------------------------------------------- helpers
    @classmethod
    def build(cls, registry: Path, builder: Builder | None = None) -> Release:
        """Build the declared version of the fixture into ``registry`` and return the release
        (fixture files are unregistered: their checksum warnings are silenced)."""
        logging.getLogger("benchsmith.source").setLevel(logging.ERROR)  # fixture files are unregistered
        b = builder or cls.builder(cls.version)
        srcs = resolve_sources(b.sources, {}, cls.sources, allow_missing=cls.skip_missing)
        return ReleaseWriter(b, registry, srcs, configs=cls.configs, skip_missing=cls.skip_missing).write()

    @pytest.fixture(scope="class")
    @classmethod
    def release(cls, tmp_path_factory) -> Release:
        return cls.build(tmp_path_factory.mktemp("registry"))

    # ------------------------------------------------------------- the checks
    def test_registered(self) -> None:
        name = self.builder.name
        registered = builders()
        assert name in registered, f"{name!r} is not registered (decorate the builder with @register)"
        assert issubclass(self.builder, registered[name])

    def test_split_counts(self, release: Release) -> None:
        built = {c: {s: release.num_examples(c, s) for s in release.splits(c)} for c in release.configs()}
        expected = self.counts
        if not expected:
            pytest.fail(f"{type(self).__name__} declares no split counts: set `counts = {built!r}` "
                        "(after checking them against the fixture)")
        missing = sorted(set(built) - set(expected))
        if missing:
            pytest.fail(f"{type(self).__name__}.counts does not declare config(s) {missing}; built: "
                        f"{ {c: built[c] for c in missing}!r}")
        assert built == expected

    def test_load_dataset_round_trip(self, release: Release) -> None:
        for config in release.configs():
            ds = datasets.load_dataset(str(release.path), config)
            assert sorted(ds) == sorted(release.splits(config)), config
            declared = release.features(config)
            for split, part in ds.items():
                assert part.num_rows == release.num_examples(config, split), (config, split)
                assert part.features == declared, (config, split)
            if self.features and config in self.features:
                assert list(declared) == self.features[config], config

    def test_ids_and_splits(self, release: Release) -> None:
        for config in release.configs():
            id_field = release.config_info(config).validation_policy.id_field
            if id_field is None or id_field not in release.features(config):
                continue
            owner: dict[Any, str] = {}
            for split in release.splits(config):
                ids = release.table(config, split, [id_field]).column(id_field).to_pylist()
                assert len(ids) == len(set(ids)), f"{config}/{split}: an id repeats within the split"
                if self.ids_repeat_across_splits:
                    continue
                for i in ids:
                    assert i not in owner, f"{config}: id {i!r} is in {owner[i]} and {split}"
                    owner[i] = split

    def test_rebuild_is_byte_identical(self, release: Release, tmp_path: Path) -> None:
        again = self.build(tmp_path / "registry")
        assert again.fingerprints() == release.fingerprints()
        for config in release.configs():
            for split in release.splits(config):
                for a, b in zip(release.files(config, split), again.files(config, split), strict=True):
                    assert Path(a).read_bytes() == Path(b).read_bytes(), (config, split)

    def test_failed_build_leaves_nothing(self, tmp_path: Path) -> None:
        class Exploding(self.builder):  # type: ignore[misc, valid-type, name-defined]
            def examples(self, config, split, sources):
                yield from _take(super().examples(config, split, sources), 1)
                raise RuntimeError("builder blew up midway")

        Exploding.__module__ = self.builder.__module__  # data files stay beside the real builder
        registry = tmp_path / "registry"
        with pytest.raises(RuntimeError, match="blew up"):
            self.build(registry, Exploding(self.version))
        # the registry's lock files (<registry>/.locks/) stay by design; nothing else may
        leftovers = [p for p in registry.rglob("*") if ".locks" not in p.relative_to(registry).parts]
        assert [p for p in leftovers if p.is_file() or p.name.startswith(".")] == []
        assert not (registry / self.builder.name / Exploding(self.version).version).exists()


def _take(iterable, n):
    for i, x in enumerate(iterable):
        if i >= n:
            return
        yield x
