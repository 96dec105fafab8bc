"""The core data path on the toy fixture builder: sources -> builder -> release -> load_dataset."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import datasets
import pyarrow.parquet as pq
import pytest
from toy_builder import FIXTURES, ToyBuilder

from benchsmith.errors import ChecksumError, MissingSourceError, ReleaseError, SchemaError
from benchsmith.fingerprint import fingerprint_table
from benchsmith.release import Release, ReleaseWriter, find_releases
from benchsmith.source import checksum_lines, read_checksums, resolve_sources, verify_source


def build(registry: Path, builder: ToyBuilder | None = None, sources_dir: Path = FIXTURES, **kw) -> Release:
    b = builder or ToyBuilder()
    src = resolve_sources(b.sources, b.checksums(), sources_dir, allow_missing=kw.pop("allow_missing", False))
    return ReleaseWriter(b, registry, src, **kw).write()


def leftovers(registry: Path) -> list[str]:
    return sorted(p.name for p in (registry / "toy").iterdir()) if (registry / "toy").exists() else []


def test_release_loads_with_declared_features(tmp_path):
    release = build(tmp_path)
    assert release.path == tmp_path / "toy" / "1.1.0"
    for config in ToyBuilder().configs():
        ds = datasets.load_dataset(str(release.path), config.name)
        assert set(ds) == set(config.splits)
        for split in config.splits:
            assert ds[split].features == config.features
            assert ds[split].num_rows == release.num_examples(config.name, split)
    train = datasets.load_dataset(str(release.path), "plain", split="train")
    assert train[0] == {
        "id": "toy-01",
        "text": "sentence number 1 about a cat",
        "label": 1,
        "tokens": ["sentence", "number", "1", "about", "a", "cat"],
    }
    assert train.features["label"].int2str(train[2]["label"]) == "no"


def test_release_layout_manifest_and_card(tmp_path):
    release = build(tmp_path)
    files = sorted(p.relative_to(release.path).as_posix() for p in release.path.rglob("*") if p.is_file())
    assert files == [
        "README.md",
        "croissant.json",
        "data/plain/test-00000-of-00001.parquet",
        "data/plain/train-00000-of-00001.parquet",
        "data/plain/validation-00000-of-00001.parquet",
        "data/short/train-00000-of-00001.parquet",
        "release.json",
    ]
    m = release.info.to_dict()
    assert (m["name"], m["version"]) == ("toy", "1.1.0")
    assert m["configs"]["plain"]["splits"]["test"]["num_examples"] == 4  # toy-30 dropped by erratum
    assert m["sources"]["toy"]["files"]["items.tsv"]["status"] == "unregistered"
    assert len(m["sources"]["toy"]["files"]["items.tsv"]["sha256"]) == 64
    assert m["sources"]["toy"]["files"]["extra.tsv"]["status"] == "absent"
    assert [e["id"] for e in m["errata_applied"]] == ["drop-30"]
    assert {"benchsmith", "datasets", "pyarrow", "python"} <= set(m["tool_versions"])
    card = (release.path / "README.md").read_text()
    assert card.startswith("---\n")
    assert "num_examples: 20" in card and "version: 1.1.0" in card and "drop-30" in card
    croissant = json.loads((release.path / "croissant.json").read_text())
    assert {rs["name"] for rs in croissant["recordSet"]} >= {"plain/train/records", "short/train/records"}


def test_version_1_0_0_reproduces_upstream(tmp_path):
    release = build(tmp_path, ToyBuilder("1.0.0"))
    assert release.num_examples("plain", "test") == 5
    assert release.info.to_dict()["errata_applied"] == []
    assert [e["id"] for e in release.info.to_dict()["errata_pending"]] == ["drop-30"]


def test_two_builds_are_byte_identical(tmp_path):
    a, b = build(tmp_path / "a"), build(tmp_path / "b")
    for config in a.configs():
        for split in a.splits(config):
            assert a.split_info(config, split)["fingerprint"] == b.split_info(config, split)["fingerprint"]
            for fa, fb in zip(a.files(config, split), b.files(config, split), strict=True):
                assert fa.read_bytes() == fb.read_bytes()
    assert (a.path / "README.md").read_bytes() == (b.path / "README.md").read_bytes()
    assert a.verify() == []


def test_the_written_release_is_what_reading_it_gives(tmp_path):
    """The writer hands back its release without reading release.json again (Release.written): the same
    typed manifest as a fresh read, also where the changelog rewrote it (a previous version)."""
    first = build(tmp_path, ToyBuilder("1.0.0"))
    second = build(tmp_path)  # 1.1.0: "changes since 1.0.0" recorded in its manifest and card
    assert "changes_since" in second.info.extra and "changes_since" not in first.info.extra
    for release in (first, second):
        assert release.info == Release(release.path).info and release.path == Release(release.path).path
    assert "Changes since" in (second.path / "README.md").read_text(encoding="utf-8")


def test_fingerprint_detects_changed_value(tmp_path):
    release = build(tmp_path)
    table = release.table("plain", "train")
    assert fingerprint_table(table) == release.split_info("plain", "train")["fingerprint"]
    changed = table.set_column(1, "text", [["x"] + table.column("text").to_pylist()[1:]])
    assert fingerprint_table(changed) != release.split_info("plain", "train")["fingerprint"]


def test_streaming_shards_and_batches(tmp_path):
    """Small batches and shard limits: the writer streams, and sharding does not change the data."""
    whole = build(tmp_path / "whole")
    sharded = build(tmp_path / "sharded", batch_rows=3, shard_bytes=1)
    files = sharded.files("plain", "train")
    assert len(files) == 7 and files[0].name == "train-00000-of-00007.parquet"
    assert pq.ParquetFile(files[0]).metadata.num_rows == 3
    assert sharded.split_info("plain", "train")["fingerprint"] == whole.split_info("plain", "train")["fingerprint"]
    ds = datasets.load_dataset(str(sharded.path), "plain", split="train")
    assert ds["id"] == [f"toy-{i:02d}" for i in range(1, 21)]


def test_builder_that_raises_midway_leaves_nothing(tmp_path):
    b = ToyBuilder()
    b.fail_after = 12
    with pytest.raises(RuntimeError, match="blew up"):
        build(tmp_path, b, batch_rows=5)
    assert leftovers(tmp_path) == []


def test_failed_rebuild_keeps_previous_release(tmp_path):
    good = build(tmp_path)
    before = good.split_info("plain", "train")["fingerprint"]
    b = ToyBuilder()
    b.fail_after = 3
    with pytest.raises(RuntimeError):
        build(tmp_path, b, overwrite=True)
    assert leftovers(tmp_path) == ["1.1.0"]
    assert Release(good.path).split_info("plain", "train")["fingerprint"] == before


def test_existing_release_needs_overwrite(tmp_path):
    build(tmp_path)
    with pytest.raises(ReleaseError, match="already exists.*--overwrite"):
        build(tmp_path)
    assert build(tmp_path, overwrite=True).num_examples("plain", "train") == 20
    assert leftovers(tmp_path) == ["1.1.0"]


class _BadLabel(ToyBuilder):
    def examples(self, config, split, sources):
        for ex in super().examples(config, split, sources):
            yield ex | {"label": "maybe"} if ex["id"] == "toy-07" else ex


class _MissingField(ToyBuilder):
    def examples(self, config, split, sources):
        for ex in super().examples(config, split, sources):
            ex.pop("tokens")
            yield ex


class _DuplicateId(ToyBuilder):
    def examples(self, config, split, sources):
        for ex in super().examples(config, split, sources):
            yield ex | {"id": "toy-01"} if ex["id"] == "toy-05" else ex


class _WrongType(ToyBuilder):
    def examples(self, config, split, sources):
        for ex in super().examples(config, split, sources):
            yield ex | {"text": 42} if ex["id"] == "toy-09" else ex


@pytest.mark.parametrize(
    ("cls", "pattern"),
    [
        (_BadLabel, r"example #6 \(id 'toy-07'\): label 'label' is 'maybe'; expected one of \['no', 'yes'\]"),
        (_MissingField, r"missing fields \['tokens'\]"),
        (_DuplicateId, r"duplicate id 'toy-01'"),
        (_WrongType, r"id 'toy-09'.*field 'text' value 42 does not fit"),
    ],
)
def test_schema_errors_name_the_example_and_leave_nothing(tmp_path, cls, pattern):
    with pytest.raises(SchemaError, match=pattern):
        build(tmp_path, cls())
    assert leftovers(tmp_path) == []


class _Repeats(ToyBuilder):
    """``repeat[i] = j``: the example ``toy-i`` gets ``toy-j``'s id."""

    repeat: dict[str, str] = {}  # noqa: RUF012 - set per test

    def examples(self, config, split, sources):
        for ex in super().examples(config, split, sources):
            yield ex | {"id": self.repeat[ex["id"]]} if ex["id"] in self.repeat else ex


class _RepeatsThenFails(_Repeats):
    """A repeat that plain/train finds only once its last batch is written, then a next split that fails."""

    def examples(self, config, split, sources):
        if (config.name, split) != ("plain", "train"):
            raise RuntimeError("the next split blew up")
        yield from super().examples(config, split, sources)


def test_an_earlier_splits_error_comes_first_while_the_next_split_starts(tmp_path):
    """Splits overlap by one (the writer starts split N+1 while split N's last batch is written);
    split N's own error, found when it finishes, is still the one raised."""
    b = _RepeatsThenFails()
    b.repeat = {"toy-09": "toy-02"}
    with pytest.raises(SchemaError, match=r"plain/train example #8 \(id 'toy-02'\): duplicate id") as exc:
        build(tmp_path, b, batch_rows=3)
    assert isinstance(exc.value.__context__, RuntimeError)  # the next split had started, and failed
    assert leftovers(tmp_path) == []


@pytest.mark.parametrize("batch_rows", [3, 64])  # the earlier copy in another batch, or in the same one
@pytest.mark.parametrize("collide", [False, True])  # every id hashing alike: the check stays exact
def test_duplicate_ids_are_exact_whatever_the_batches_and_hash_collisions(tmp_path, monkeypatch, batch_rows,
                                                                          collide):
    plain = build(tmp_path / "plain", batch_rows=batch_rows)
    if collide:
        monkeypatch.setattr("benchsmith.release.encoding.hash", lambda v: 7, raising=False)
    unique = build(tmp_path / "unique", batch_rows=batch_rows)  # unique ids: no error, the same bytes
    assert unique.fingerprints() == plain.fingerprints()
    for f, g in zip(unique.files("plain", "train"), plain.files("plain", "train")):
        assert f.read_bytes() == g.read_bytes()
    # the first repeat in example order is named: toy-09 repeats toy-02, then toy-12 repeats toy-01
    b = _Repeats()
    b.repeat = {"toy-12": "toy-01", "toy-09": "toy-02"}
    with pytest.raises(SchemaError, match=r"plain/train example #8 \(id 'toy-02'\): duplicate id 'toy-02'"):
        build(tmp_path / "dup", b, batch_rows=batch_rows)
    assert leftovers(tmp_path / "dup") == []


def test_class_label_names_map_as_str2int_does():
    """The one-pass name -> index map gives what ``ClassLabel.str2int`` gives row by row;
    anything it does not know (ints, digit strings, bad names) takes the checked path."""
    import datasets

    from benchsmith.release.encoding import SplitEncoder

    feat = datasets.ClassLabel(names=["no", "yes", "maybe so"])
    enc = SplitEncoder.__new__(SplitEncoder)
    names = ["yes", "no", "maybe so", "no"]
    assert enc._labels(feat, "label", names, [{}] * 4, 0) == [feat.str2int(v) for v in names] == [1, 0, 2, 0]
    mixed = ["yes", 0, "2", -1]
    assert enc._labels(feat, "label", mixed, [{}] * 4, 0) == [1, 0, 2, -1]


# ----------------------------------------------------------------------------- sources


def registered_copy(tmp_path: Path) -> tuple[Path, dict]:
    """A copy of the toy sources plus checksums registered from it."""
    src = tmp_path / "src"
    shutil.copytree(FIXTURES, src)
    b = ToyBuilder()
    lines = checksum_lines([verify_source(s, src / s.name, {}, allow_missing=True) for s in b.sources])
    tsv = tmp_path / "checksums.tsv"
    tsv.write_text("\n".join(lines) + "\n")
    return src, read_checksums(tsv)


def test_corrupted_source_fails_with_checksum_error(tmp_path):
    src, checksums = registered_copy(tmp_path)
    resolve_sources(ToyBuilder.sources, checksums, src)  # intact: fine
    with open(src / "toy" / "items.tsv", "a") as fh:
        fh.write("toy-99\tinjected\tyes\ttrain\n")
    with pytest.raises(ChecksumError) as err:
        resolve_sources(ToyBuilder.sources, checksums, src)
    msg = str(err.value)
    assert str(src / "toy" / "items.tsv") in msg
    assert checksums[("toy", "items.tsv")][1] in msg  # expected sha256
    assert "re-download" in msg
    assert isinstance(err.value, OSError)


def test_missing_source_file_is_named(tmp_path):
    (tmp_path / "toy").mkdir()
    with pytest.raises(MissingSourceError, match=r"toy/items.tsv: source 'toy' is missing 'items.tsv'"):
        resolve_sources(ToyBuilder.sources, {}, tmp_path)
    with pytest.raises(MissingSourceError, match="no folder for source 'toy'"):
        resolve_sources(ToyBuilder.sources, {}, tmp_path / "nowhere")


def test_skip_missing_builds_what_sources_provide(tmp_path):
    (tmp_path / "src" / "toy").mkdir(parents=True)
    with pytest.raises(ReleaseError, match="no split could be built"):
        build(tmp_path / "reg", sources_dir=tmp_path / "src", allow_missing=True, skip_missing=True)
    assert leftovers(tmp_path / "reg") == []


def test_download_into_cache_from_url(tmp_path, monkeypatch):
    import tarfile

    from benchsmith.source import Source

    archive = tmp_path / "toy.tar.gz"
    with tarfile.open(archive, "w:gz") as tf:
        tf.add(FIXTURES / "toy" / "items.tsv", arcname="toy-1.0/items.tsv")
    monkeypatch.setenv("BENCHSMITH_HOME", str(tmp_path / "home"))
    src = Source("toy", url=archive.as_uri(), files=("items.tsv",), archive_root="toy-1.0")
    resolved = resolve_sources([src], {}, None)
    assert resolved["toy"].origin == "download-cache"
    assert resolved.path("toy", "items.tsv").read_bytes() == (FIXTURES / "toy" / "items.tsv").read_bytes()
    archive.unlink()  # cached: no second download
    assert resolve_sources([src], {}, None).path("toy", "items.tsv").is_file()


def test_failed_download_leaves_no_cache(tmp_path, monkeypatch):
    from benchsmith.errors import SourceError
    from benchsmith.source import Source

    monkeypatch.setenv("BENCHSMITH_HOME", str(tmp_path / "home"))
    src = Source("gone", url=(tmp_path / "missing.tgz").as_uri(), files=("a.txt",))
    with pytest.raises(SourceError, match="could not download source 'gone'.*--sources DIR"):
        resolve_sources([src], {}, None)
    assert list((tmp_path / "home" / "downloads").iterdir()) == []


def test_malformed_checksums_file(tmp_path):
    from benchsmith.errors import SourceError

    tsv = tmp_path / "checksums.tsv"
    tsv.write_text("source\tpath\tsize\tsha256\ntoy\titems.tsv\t10\tnot-a-hash\n")
    with pytest.raises(SourceError, match=r"checksums.tsv:2: malformed checksum row"):
        read_checksums(tsv)
    tsv.write_text("source\tpath\tsize\tsha256\ntoy\titems.tsv\tten\t" + "a" * 64 + "\n")
    with pytest.raises(SourceError, match=r"checksums.tsv:2: malformed checksum row"):  # was a bare ValueError
        read_checksums(tsv)


def test_find_releases_orders_versions(tmp_path):
    build(tmp_path, ToyBuilder("1.0.0"))
    build(tmp_path, ToyBuilder("1.1.0"))
    assert [r.version for r in find_releases(tmp_path, "toy")] == ["1.0.0", "1.1.0"]


def test_a_json_file_that_is_not_a_manifest_is_a_release_error(tmp_path):
    (tmp_path / "release.json").write_text('{"name": "x"}')
    with pytest.raises(ReleaseError, match=r"release.json: release.json is not a benchsmith manifest \(no version, configs\)"):
        Release(tmp_path)
    (tmp_path / "release.json").write_text("[1, 2]")
    with pytest.raises(ReleaseError, match="not a benchsmith manifest"):
        Release(tmp_path)


def test_write_text_atomic_replaces_and_leaves_no_temporary(tmp_path):
    from benchsmith.release import write_text_atomic

    target = tmp_path / "README.md"
    target.write_text("old")
    write_text_atomic(target, "new\n")
    assert target.read_text() == "new\n"
    assert [p.name for p in tmp_path.iterdir()] == ["README.md"]


def test_fingerprint_does_not_depend_on_how_rows_are_cut():
    """Batches of exactly the canonical size take a shortcut; any cut gives the same hash."""
    import pyarrow as pa

    from benchsmith.fingerprint import CANONICAL_BATCH_ROWS, Fingerprinter

    n = 2 * CANONICAL_BATCH_ROWS + 123
    table = pa.table({"text": [f"row {i}" for i in range(n)], "tags": [[i % 7] * (i % 3) for i in range(n)]})
    want = fingerprint_table(table)
    for cuts in ([CANONICAL_BATCH_ROWS, CANONICAL_BATCH_ROWS, 123], [100, CANONICAL_BATCH_ROWS, CANONICAL_BATCH_ROWS, 23],
                 [n], [CANONICAL_BATCH_ROWS - 1, 1, CANONICAL_BATCH_ROWS, 123]):
        fp, at = Fingerprinter(table.schema), 0
        for k in cuts:
            fp.update(table.slice(at, k).combine_chunks().to_batches()[0])
            at += k
        assert fp.hexdigest() == want, cuts


def test_errata_follow_the_file(tmp_path, monkeypatch):
    table = tmp_path / "errata.tsv"
    shutil.copy(ToyBuilder.errata_path(), table)
    monkeypatch.setattr(ToyBuilder, "errata_path", classmethod(lambda cls: table))
    b = ToyBuilder("1.1.0")
    first = b.errata()
    lines = table.read_text(encoding="utf-8").splitlines(keepends=True)
    table.write_text("".join(line for line in lines if "drop-30" not in line), encoding="utf-8")
    assert [e.id for e in b.errata()] == [e.id for e in first if e.id != "drop-30"]
    table.unlink()
    assert b.errata() == []
