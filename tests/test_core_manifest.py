"""release.json is untrusted: the schema of benchsmith.info.to_dict(), the typed metadata, and what the
command line does with a tampered manifest (issue 22)."""

from __future__ import annotations

import copy
import json
import os
import shutil
from pathlib import Path

import pytest
from conftest import run_cli
from toy_builder import FIXTURES, RegisteredToyBuilder
from xcopa_helpers import build_fixture

from benchsmith.errors import BenchsmithError, ReleaseError
from benchsmith.manifest import ConfigInfo, ReleaseInfo, SplitInfo
from benchsmith.release import Release, ReleaseWriter, find_releases
from benchsmith.source import resolve_sources, sha256_file


@pytest.fixture(scope="module")
def toy(tmp_path_factory) -> Release:
    b = RegisteredToyBuilder()  # registered checksums: publishable (the last step publishes it)
    src = resolve_sources(b.sources, b.checksums(), FIXTURES, allow_missing=False)
    return ReleaseWriter(b, tmp_path_factory.mktemp("toyreg"), src).write()


@pytest.fixture(scope="module")
def xcopa(tmp_path_factory) -> Release:
    return build_fixture(tmp_path_factory.mktemp("xcopareg"), "1.1.0")


def manifest_of(release: Release) -> dict:
    return json.loads((release.path / "release.json").read_text(encoding="utf-8"))


def copy_release(release: Release, dest: Path) -> Path:
    shutil.copytree(release.path, dest)
    return dest


def write_manifest(path: Path, manifest: dict) -> None:
    (path / "release.json").write_text(json.dumps(manifest, indent=2), encoding="utf-8")


def tree(root: Path) -> set[str]:
    return {p.relative_to(root).as_posix() for p in root.rglob("*")}


# ----------------------------------------------------------------- the typed metadata


def test_round_trip_keeps_every_key_and_their_order(toy):
    m = manifest_of(toy)
    m["from_a_newer_benchsmith"] = {"kept": [1, 2]}
    m["configs"]["plain"]["splits"]["train"]["row_groups"] = 1
    info = ReleaseInfo.from_dict(m)
    assert info.to_dict() == m
    assert json.dumps(info.to_dict()) == json.dumps(m)  # key order too
    assert info.extra == {"from_a_newer_benchsmith": {"kept": [1, 2]}}
    split = info.configs["plain"].splits["train"]
    assert isinstance(split, SplitInfo) and split.extra == {"row_groups": 1}
    assert SplitInfo.from_dict(split.to_dict(), "train") == split
    config = info.configs["short"]
    assert isinstance(config, ConfigInfo) and ConfigInfo.from_dict(config.to_dict(), "short") == config


def test_typed_metadata_is_frozen_and_does_not_alias_the_dict(toy):
    m = manifest_of(toy)
    info = ReleaseInfo.from_dict(m)
    with pytest.raises(AttributeError):
        info.name = "other"  # type: ignore[misc]
    with pytest.raises(TypeError):
        info.configs["x"] = info.configs["plain"]  # type: ignore[index]
    m["configs"]["plain"]["languages"].append("fr")
    assert info.configs["plain"].languages == ("en",)


def test_release_accessors_go_through_the_typed_info(toy):
    r = Release(toy.path)
    assert (r.name, r.version) == (r.info.name, r.info.version) == ("toy", "1.1.0")
    info = r.split_info("plain", "train")
    assert info is r.info.configs["plain"].splits["train"]
    assert info.num_examples == r.num_examples("plain", "train") == 20
    # the dict access the older readers use gives the JSON values
    assert info["files"] == ["data/plain/train-00000-of-00001.parquet"] and info.get("nope", 3) == 3
    assert r.fingerprints()["plain"]["test"] == r.info.configs["plain"].splits["test"].fingerprint
    assert r.features("plain") == r.info.configs["plain"].features and r.features("plain") is not r.features("plain")
    assert r.files("short", "train") == [r.path / "data/short/train-00000-of-00001.parquet"]


def _set(path: str, value):
    """A mutation of the manifest dict: set the value at a dotted path (``[i]`` for list items)."""
    def apply(m: dict) -> None:
        keys = path.replace("[", ".[").split(".")
        node = m
        for k in keys[:-1]:
            node = node[int(k[1:-1])] if k.startswith("[") else node[k]
        last = keys[-1]
        if value is _DELETE:
            del node[last]
        elif last.startswith("["):
            node[int(last[1:-1])] = value
        else:
            node[last] = value
    return apply


_DELETE = object()


def _nested(depth: int) -> list:
    value: list = []
    for _ in range(depth):
        value = [value]
    return value

TRAIN = "configs.plain.splits.train"
SHA = "a" * 64

SCHEMA_DEFECTS = [
    # (mutation, what the one-line error must contain)
    (_set("name", "../../../../tmp/x/pwned"), "name: a string '../../../../tmp/x/pwned'; expected a builder name"),
    (_set("name", "Toy"), "name: a string 'Toy'; expected a builder name"),
    (_set("name", ""), "name: a string ''"),
    (_set("name", 3), "name: an integer 3"),
    (_set("version", "../../pwned"), "version: a string '../../pwned'; expected a semantic version"),
    (_set("version", "1.0"), "version: a string '1.0'"),
    (_set("version", "01.0.0"), "version: a string '01.0.0'"),
    (_set("version", "１.0.0"), "version: a string"),  # a full-width digit is a digit to str.isdigit
    (_set(f"{TRAIN}.files[0]", "/abs/evil.parquet"), f"{TRAIN}.files[0]: '/abs/evil.parquet' is an absolute path"),
    (_set(f"{TRAIN}.files[0]", "/etc/passwd"), f"{TRAIN}.files[0]: '/etc/passwd' is an absolute path"),
    (_set(f"{TRAIN}.files[0]", "../../x.parquet"), f"{TRAIN}.files[0]: '../../x.parquet' goes up with '..'"),
    (_set(f"{TRAIN}.files[0]", "data/../../x.parquet"), "goes up with '..'"),
    (_set(f"{TRAIN}.files[0]", "data\\plain\\x.parquet"), "contains a backslash"),
    (_set(f"{TRAIN}.files[0]", "data/plain/x\x00.parquet"), "contains a NUL character"),
    (_set(f"{TRAIN}.files[0]", "README.md"), "'README.md' is not under data/"),
    (_set(f"{TRAIN}.files[0]", "data//x.parquet"), "has an empty or '.' part"),
    (_set(f"{TRAIN}.files[0]", "data/./x.parquet"), "has an empty or '.' part"),
    (_set(f"{TRAIN}.files[0]", 7), f"{TRAIN}.files[0]: an integer 7"),
    (_set(f"{TRAIN}.files", []), f"{TRAIN}.files: a list []; expected a non-empty list"),
    (_set(f"{TRAIN}.files", "data/plain/train-00000-of-00001.parquet"), f"{TRAIN}.files: a string"),
    (_set("configs.short.splits.train.files[0]", "data/plain/train-00000-of-00001.parquet"),
     ("configs.short.splits.train.files[0]: 'data/plain/train-00000-of-00001.parquet' is also listed by "
      "configs.plain.splits.train.files[0]")),
    (_set(f"{TRAIN}.sha256[0]", "A" * 64), f"{TRAIN}.sha256[0]: a string 'AAAA"),
    (_set(f"{TRAIN}.sha256", [SHA, SHA]), f"{TRAIN}.sha256: a list"),
    (_set(f"{TRAIN}.fingerprint", "xyz"), f"{TRAIN}.fingerprint: a string 'xyz'; expected a sha256"),
    (_set(f"{TRAIN}.num_examples", -1), f"{TRAIN}.num_examples: an integer -1; expected an integer >= 0"),
    (_set(f"{TRAIN}.num_examples", True), f"{TRAIN}.num_examples: a boolean True"),
    (_set(f"{TRAIN}.num_examples", 20.0), f"{TRAIN}.num_examples: a number 20.0"),
    (_set(f"{TRAIN}.num_bytes", "2082"), f"{TRAIN}.num_bytes: a string '2082'"),
    (_set(f"{TRAIN}.num_examples", _DELETE), f"{TRAIN}: no num_examples"),
    (_set("configs.plain.splits", {"train/../x": {}}), "configs.plain.splits['train/../x']: a string"),
    (_set("configs", {"../x": {"features": {}, "splits": {}}}), "configs['../x']: a string '../x'; expected a config"),
    (_set("configs", {}), "configs: no configs"),
    (_set("configs.short.splits", {}), "configs.short.splits: no splits; expected at least one split"),
    (_set("configs", [1]), "configs: a list [1]; expected an object of configs"),
    (_set("configs.plain.splits", _DELETE), "config 'plain' has no `splits` mapping"),
    (_set("configs.plain.features.label", "string"), "configs.plain.features.label: a string 'string'; expected a feature"),
    (_set("configs.plain.features.label.names", "ab"), "configs.plain.features.label.names: a string 'ab'; expected a list of label names"),
    (_set("configs.plain.features.label.names", ["no", "no"]), "configs.plain.features.label.names: label 'no' twice"),
    (_set("configs.plain.features.label.names", [0, 1]), "configs.plain.features.label.names: a list [0, 1]"),
    (_set("configs.plain.features.label.num_classes", 3), "configs.plain.features.label.num_classes: 3 classes for 2 names"),
    (_set("configs.plain.features.label", {"_type": "ClassLabel"}), "a ClassLabel with neither 'names' nor 'num_classes'"),
    (_set("configs.plain.features.tokens", {"_type": "List"}), "configs.plain.features.tokens: a List without 'feature'"),
    (_set("configs.plain.features.id._type", 3), "configs.plain.features.id._type: an integer 3"),
    (_set("configs.plain.features.id.dtype", None), "configs.plain.features.id.dtype: null None"),
    (_set("configs.plain.features", {}), "configs.plain.features: no features"),
    (_set("partial", "no"), "partial: a string 'no'; expected true or false"),
    (_set("missing_configs", "short"), "missing_configs: a string 'short'; expected a list of strings"),
    (_set("errata_applied[0].id", None), "errata_applied[0].id: null None; expected a string"),
    (_set("skipped_configs", {"x": {"test": 3}}), "skipped_configs.x.test: an integer 3"),
    (lambda m: m["sources"]["toy"]["files"].__setitem__("items.tsv", 3), "sources.toy.files['items.tsv']: an integer 3"),
    (lambda m: m["sources"]["toy"]["files"]["items.tsv"].pop("status"), "sources.toy.files['items.tsv'].status: null"),
    (lambda m: m["sources"]["toy"]["files"]["items.tsv"].__setitem__("size", -3), "files['items.tsv'].size: an integer -3"),
    (_set("seed", "0"), "seed: a string '0'; expected an integer or null"),
    # what the card and croissant.json read must be there (issue 43: these crashed validate)
    (_set("errata_applied[0]", {"id": "x"}), "errata_applied[0].version: null None; expected a string"),
    (_set("errata_applied[0].items", None), "errata_applied[0].items: null None; expected a list of item ids"),
    (_set("errata_pending", [{"id": "x", "version": "2.0.0", "what": "w"}]), "errata_pending[0].items: null"),
    (_set("tool_versions.benchsmith", _DELETE), "tool_versions.benchsmith: missing; expected the benchsmith version"),
    (_set("tool_versions", _DELETE), "tool_versions: missing; expected {tool: version} with benchsmith"),
    (_set("rai", _nested(900)), "corrupt manifest: nested more than 64 deep"),
]



@pytest.mark.parametrize(("mutate", "message"), SCHEMA_DEFECTS, ids=[m for _, m in SCHEMA_DEFECTS])
def test_schema_defects_are_one_line_release_errors(toy, tmp_path, mutate, message):
    m = manifest_of(toy)
    mutate(m)
    with pytest.raises(ReleaseError) as err:
        ReleaseInfo.from_dict(m, path="rel/release.json")
    assert message in str(err.value)
    assert str(err.value).startswith("rel/release.json: ") and "\n" not in str(err.value)
    # the same defect on disk, through Release
    path = copy_release(toy, tmp_path / "r")
    write_manifest(path, m)
    with pytest.raises(ReleaseError, match="release.json: "):
        Release(path)


@pytest.mark.parametrize("mutate", [_set("errata_applied[0]", {"id": "x"}), _set("tool_versions.benchsmith", _DELETE),
                                    _set("extra", _nested(800))], ids=["erratum", "tool_versions", "nesting"])
def test_validate_refuses_what_the_schema_refuses_and_leaves_the_release_as_it_was(toy, tmp_path, capsys, mutate):
    """Issue 43 row 4: these manifests crashed validate (exit 1, a traceback) after it had
    rewritten the report but not the card."""
    path = copy_release(toy, tmp_path / "reg" / "toy" / "1.1.0")
    assert run_cli(capsys, "-q", "validate", str(path), "--near-dup-threshold", "0.95", "--baselines", "none")[0] == 0
    m = manifest_of(toy)
    mutate(m)
    write_manifest(path, m)
    before = {p: p.read_bytes() for p in sorted(path.rglob("*")) if p.is_file()}
    code, out, err = run_cli(capsys, "validate", str(path), "--baselines", "none")
    assert code == 2 and out == "" and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1 and "release.json" in err
    assert {p: p.read_bytes() for p in sorted(path.rglob("*")) if p.is_file()} == before


def test_a_card_that_fails_to_render_puts_the_previous_report_back(toy, tmp_path, capsys, monkeypatch):
    from benchsmith.cards import card

    path = copy_release(toy, tmp_path / "reg" / "toy" / "1.1.0")
    assert run_cli(capsys, "-q", "validate", str(path), "--near-dup-threshold", "0.95", "--baselines", "none")[0] == 0
    before = {p: p.read_bytes() for p in sorted(path.rglob("*")) if p.is_file()}

    def broken(*args, **kwargs):
        raise KeyError("evidence")  # what a card missing a field raised

    monkeypatch.setattr(card, "render_files", broken)
    with pytest.raises(KeyError):  # a crash (a bug): still, the release is as it was
        run_cli(capsys, "validate", str(path), "--baselines", "none")
    assert {p: p.read_bytes() for p in sorted(path.rglob("*")) if p.is_file()} == before


def test_a_valid_manifest_passes_the_schema(toy):
    assert ReleaseInfo.from_dict(manifest_of(toy)).name == "toy"  # the other side of every defect above


@pytest.mark.parametrize(("feature", "message"), [
    ({"_type": "NoSuchType"}, ("configs.plain.features.label: datasets cannot read this feature (ValueError: "
                               "Feature type 'NoSuchType' not found")),
    ({"_type": "Features"}, "configs.plain.features.label: datasets cannot read this feature (TypeError"),
    ({"_type": "Value", "dtype": "float128x"}, "configs.plain.features.label: datasets cannot read this feature"),
])
def test_features_datasets_cannot_read_are_release_errors_on_first_use(toy, tmp_path, feature, message):
    path = copy_release(toy, tmp_path / "r")
    m = manifest_of(toy)
    m["configs"]["plain"]["features"]["label"] = feature
    write_manifest(path, m)
    r = Release(path)  # the shape is fine: opening stays cheap (no datasets import needed)
    for use in (lambda: r.features("plain"), lambda: r.table("plain", "train"), r.check_features, r.require_intact,
                r.summary):
        with pytest.raises(ReleaseError, match=message.replace("(", r"\(")):
            use()
    assert r.table("short", "train").num_rows == 20  # the other config still reads


def test_duplicate_keys_nan_and_bad_bytes_are_release_errors(toy, tmp_path):
    path = copy_release(toy, tmp_path / "r")
    text = (path / "release.json").read_text()
    for bad, message in [
        (text.replace('"name": "toy"', '"name": "toy", "name": "../evil"'), "key 'name' appears twice"),
        (text.replace('"seed": 0', '"seed": NaN'), "NaN is not JSON"),
        (b"\xff\xfe{}", "not UTF-8"),
        ("[" * 100_000 + "]" * 100_000, "corrupt manifest"),
    ]:
        if isinstance(bad, bytes):
            (path / "release.json").write_bytes(bad)
        else:
            (path / "release.json").write_text(bad)
        with pytest.raises(ReleaseError, match=message):
            Release(path)


def test_release_json_must_be_a_regular_file(toy, tmp_path):
    path = copy_release(toy, tmp_path / "r")
    outside = tmp_path / "elsewhere.json"
    shutil.move(path / "release.json", outside)
    (path / "release.json").symlink_to(outside)
    with pytest.raises(ReleaseError, match="release.json is a symbolic link"):
        Release(path)


def test_find_releases_refuses_a_folder_holding_another_release(toy, tmp_path):
    reg = tmp_path / "reg"
    path = copy_release(toy, reg / "toy" / "1.1.0")
    assert [r.version for r in find_releases(reg, "toy")] == ["1.1.0"]
    m = manifest_of(toy)
    m["version"] = "9.9.9"
    write_manifest(path, m)
    with pytest.raises(ReleaseError, match=r"release.json names toy 9.9.9, but the folder is toy/1.1.0"):
        find_releases(reg, "toy")


# ----------------------------------------------------------------- data files on disk


def test_files_refuses_symlinks_missing_files_and_folders(toy, tmp_path):
    path = copy_release(toy, tmp_path / "r")
    shard = path / "data/plain/train-00000-of-00001.parquet"
    assert Release(path).table("plain", "train").num_rows == 20
    # a symlink to a copy outside, with the same bytes: would read fine if followed
    outside = tmp_path / "outside.parquet"
    shutil.move(shard, outside)
    shard.symlink_to(outside)
    with pytest.raises(ReleaseError, match=r"configs.plain.splits.train.files\[0\] .* is a symbolic link"):
        Release(path).files("plain", "train")
    shard.unlink()
    with pytest.raises(ReleaseError, match=r"files\[0\] 'data/plain/train-00000-of-00001.parquet' is missing"):
        Release(path).table("plain", "train")
    shard.mkdir()
    with pytest.raises(ReleaseError, match="is not a regular file"):
        Release(path).files("plain", "train")
    shard.rmdir()
    # a folder on the way that is a symlink to a copy outside
    shutil.move(outside, shard)
    shutil.move(path / "data" / "plain", tmp_path / "plain")
    (path / "data" / "plain").symlink_to(tmp_path / "plain")
    with pytest.raises(ReleaseError, match="reached through a symbolic link to a folder"):
        Release(path).files("plain", "train")
    assert any("symbolic link" in p for p in Release(path).verify_files())
    with pytest.raises(ReleaseError, match="changed on disk"):
        Release(path).require_intact()


def test_a_release_reached_through_a_symlink_still_reads(toy, tmp_path):
    link = tmp_path / "link"
    link.symlink_to(toy.path)
    assert Release(link).table("plain", "train").num_rows == 20  # only what is inside the release counts


def test_unreadable_data_is_a_release_error(toy, tmp_path):
    path = copy_release(toy, tmp_path / "r")
    (path / "data/plain/train-00000-of-00001.parquet").write_bytes(b"not parquet")
    with pytest.raises(ReleaseError, match=r"plain/train: the data files do not read as the features"):
        Release(path).table("plain", "train")
    with pytest.raises(ReleaseError, match=r"plain/train: the data files do not read"):
        list(Release(path).examples("plain", "train"))


# ----------------------------------------------------------------- through the command line


def _evil_file_entries(release: Release, tmp_path: Path) -> list[tuple[str, str | None]]:
    """(files entry, its sha256) as an attacker would write them: real parquet outside the release
    with the matching digest, so only the path check stands in the way."""
    shard = release.files("et", "test")[0]
    evil = tmp_path / "abs" / "evil.parquet"
    evil.parent.mkdir(parents=True)
    shutil.copy(shard, evil)
    up = tmp_path / "work" / "x.parquet"  # ../../x.parquet from <work>/xcopa/1.1.0
    up.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy(shard, up)
    return [(str(evil), sha256_file(evil)), ("../../x.parquet", sha256_file(up)), ("/etc/passwd", None)]


def _commands(path: Path, tmp_path: Path) -> dict[str, list[str]]:
    preds = tmp_path / "preds.jsonl"
    preds.write_text("".join(json.dumps({"lang": "et", "idx": i, "label": 0}) + "\n" for i in range(3)))
    reg = str(tmp_path / "reg")
    return {
        "evaluate": ["evaluate", "xcopa", str(preds), "--release", str(path), "--registry", reg, "--allow-unvalidated"],
        "validate": ["validate", str(path), "--baselines", "none", "--registry", reg],
        "publish": ["publish", str(path), "--registry", reg],
        "show": ["show", str(path), "--registry", reg],
    }


def test_files_outside_the_release_are_refused_by_every_command(xcopa, tmp_path, capsys):
    path = copy_release(xcopa, tmp_path / "work" / "xcopa" / "1.1.0")
    # the untampered copy scores: the other side of each refusal below
    commands = _commands(path, tmp_path)
    code, out, err = run_cli(capsys, *commands["evaluate"], "--json")
    assert code == 0, err
    for entry, digest in _evil_file_entries(xcopa, tmp_path):
        m = manifest_of(xcopa)
        m["configs"]["et"]["splits"]["test"]["files"][0] = entry
        if digest is not None:
            m["configs"]["et"]["splits"]["test"]["sha256"][0] = digest
        write_manifest(path, m)
        before = tree(tmp_path)
        for name, argv in commands.items():
            code, out, err = run_cli(capsys, *argv)
            assert code == 2, (entry, name, out, err)
            lines = err.strip().splitlines()
            assert len(lines) == 1 and lines[0].startswith("error: "), (entry, name, err)
            assert "release.json: configs.et.splits.test.files[0]: " in lines[0], (entry, name, err)
            assert "Traceback" not in err and out == ""
        assert tree(tmp_path) == before  # no report, marker, lock or copy written anywhere


@pytest.mark.parametrize("feature", [{"_type": "NoSuchType"}, "string", {"_type": "ClassLabel", "names": "ab"}])
def test_unreadable_features_are_exit_2_on_evaluate(xcopa, tmp_path, capsys, feature):
    path = copy_release(xcopa, tmp_path / "work" / "xcopa" / "1.1.0")
    m = manifest_of(xcopa)
    m["configs"]["et"]["features"]["label"] = feature
    write_manifest(path, m)
    code, out, err = run_cli(capsys, *_commands(path, tmp_path)["evaluate"])
    assert code == 2 and out == "" and "Traceback" not in err
    assert "release.json: configs.et.features.label" in err


def test_a_name_or_version_never_writes_outside_the_registry(toy, tmp_path, capsys):
    pwned = Path("/tmp/x/pwned")
    existed = pwned.exists()
    reg = tmp_path / "a" / "b" / "reg"
    reg.mkdir(parents=True)
    path = copy_release(toy, tmp_path / "work" / "toy" / "1.1.0")
    validate = ["validate", str(path), "--baselines", "none", "--near-dup-threshold", "0.95"]
    assert run_cli(capsys, *validate)[0] == 0  # validated as built
    good = manifest_of(toy)
    sealed_bytes = (path / "release.json").read_bytes()
    for key, value in [("name", "../../../../tmp/x/pwned"),
                       ("name", "../../outside/pwned"),  # lands inside tmp_path if followed: the snapshot sees it
                       ("version", "../../pwned")]:
        m = copy.deepcopy(good)
        m[key] = value
        write_manifest(path, m)
        before = tree(tmp_path)
        for argv in (validate + ["--registry", str(reg)], ["publish", str(path), "--registry", str(reg)],
                     ["publish", str(path), "--registry", str(reg), "--allow-partial"]):
            code, out, err = run_cli(capsys, *argv)
            assert code == 2 and out == "", err
            assert f"release.json: {key}: a string {value!r}" in err
        assert tree(tmp_path) == before  # no release copy, marker, report or lock file anywhere
        assert list(reg.iterdir()) == []
        assert pwned.exists() == existed
    # the other side: the manifest as built publishes into the registry
    (path / "release.json").write_bytes(sealed_bytes)  # the validated bytes: the seal covers release.json
    code, out, err = run_cli(capsys, "publish", str(path), "--registry", str(reg))
    assert code == 0, err
    assert (reg / "toy" / "1.1.0" / "release.json").is_file() and (reg / ".locks").is_dir()


def test_every_error_of_opening_a_release_is_a_benchsmith_error(tmp_path):
    (tmp_path / "release.json").mkdir()
    with pytest.raises(BenchsmithError, match="not a regular file"):
        Release(tmp_path)
    os.rmdir(tmp_path / "release.json")
    with pytest.raises(BenchsmithError, match="no release.json"):
        Release(tmp_path)
    (tmp_path / "a.parquet").write_bytes(b"x")
    with pytest.raises(BenchsmithError, match="no release.json"):
        Release(tmp_path / "a.parquet")


def test_summary_reads_the_typed_info(toy):
    s = Release(toy.path).summary()
    assert s["errata_applied"] == ["drop-30"] and s["configs"]["plain"] == {"train": 20, "validation": 5, "test": 4}
    assert s["sources"] == {"toy": {"items.tsv": "verified", "extra.tsv": "absent"}}
    assert copy.deepcopy(s) == s
