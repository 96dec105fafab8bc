"""`benchsmith diff`: the item-level changelog, and release references (folder, NAME/VERSION, hf://)."""

from __future__ import annotations

import pytest
from conftest import one_json, run_cli
from hub_server import LocalHub, go_online
from validation_helpers import balanced_text_rows, make_release, text_features

from benchsmith.builder import Erratum
from benchsmith.changelog import diff
from benchsmith.erratum import ErratumRow
from benchsmith.errors import EnvironmentFault, ReleaseError
from benchsmith.reference import HubRef, parse_hub_ref, resolve


def _splits(test=None):
    return {"train": balanced_text_rows(30, "tr", 1), "test": test or balanced_text_rows(10, "te", 2)}


@pytest.fixture
def two_versions(tmp_path):
    old = make_release(tmp_path, _splits(), text_features(), version="1.0.0")
    test = balanced_text_rows(10, "te", 2)
    test.append({"id": "te-new", "text": "brand new", "label": 0})
    test[7]["text"] = "an unexplained edit"
    names = ("no", "yes")
    erratum = Erratum("fix", "1.1.0", (
        ErratumRow("fix", "1.1.0", "default", "test", "te-5", "*", "*", "<drop>", "a duplicate, by eye"),
        ErratumRow("fix", "1.1.0", "default", "test", "te-0", "label", names[test[0]["label"]],
                   names[1 - test[0]["label"]], "mislabelled, by eye"),
    ))
    new = make_release(tmp_path, _splits(test=test), text_features(), version="1.1.0", errata=[erratum])
    return old, new


def test_diff_names_every_item_with_fields_before_and_after_and_the_erratum(two_versions):
    old, new = two_versions
    log = diff(old, new)
    by_split = {(s.config, s.split): s for s in log.splits}
    assert by_split[("default", "train")].status == "same"  # same fingerprint: not read
    test = by_split[("default", "test")]
    kinds = {(i.kind, i.id): i for i in test.items}
    assert set(kinds) == {("added", "te-new"), ("removed", "te-5"), ("changed", "te-0"), ("changed", "te-7")}
    label = kinds[("changed", "te-0")]
    assert [f.field for f in label.fields] == ["label"]
    assert label.fields[0].before != label.fields[0].after
    assert label.errata == ("fix",) and kinds[("removed", "te-5")].errata == ("fix",)
    edit = kinds[("changed", "te-7")]
    assert edit.errata == () and edit.fields[0].after == "an unexplained edit"
    assert [i.id for i in test.unexplained] == ["te-7"]
    assert log.totals() == {"added": 1, "removed": 1, "changed": 2, "unexplained": 1, "splits_changed": 1}
    md = log.to_markdown(limit=1)
    assert "1 added, 1 removed, 2 changed" in md and "(erratum fix)" in md
    assert "1 more item(s) not listed" in md  # two changed items, one listed


def test_diff_of_identical_releases_says_so(tmp_path):
    a = make_release(tmp_path / "a", _splits(), text_features())
    b = make_release(tmp_path / "b", _splits(), text_features())
    log = diff(a, b)
    assert log.identical and "No split changed" in log.to_markdown()


def test_diff_command_json_and_markdown(two_versions, capsys):
    old, new = two_versions
    code, out, _ = run_cli(capsys, "diff", str(old.path), str(new.path), "--json")
    assert code == 0
    doc = one_json(out)
    assert doc["totals"]["changed"] == 2
    test = next(s for s in doc["splits"] if s["split"] == "test")
    assert {"field": "text", "before": test["items"][-1]["fields"][0]["before"], "after": "an unexplained edit"} \
        in [f for i in test["items"] if i["kind"] == "changed" for f in i["fields"]]
    code, out, _ = run_cli(capsys, "diff", str(old.path), str(new.path), "--markdown")
    assert code == 0 and out.startswith("## Changes in")


@pytest.mark.parametrize("text,expected", [
    ("hf://datasets/org/xcopa@1.0.0", HubRef("org/xcopa", "1.0.0")),
    ("hf://datasets/org/xcopa", HubRef("org/xcopa", "main")),
    ("hf://datasets/org/x.y-z@refs%2Fpr%2F1", HubRef("org/x.y-z", "refs/pr/1")),
    ("registry/xcopa/1.0.0", None),
])
def test_hub_references_parse(text, expected):
    assert parse_hub_ref(text) == expected


@pytest.mark.parametrize("bad", ["hf://models/org/x@1", "hf://datasets/x@1", "hf://datasets/../../etc@1",
                                 "hf://datasets/org/x@1/../../y"])
def test_malformed_hub_references_are_one_line_errors(bad):
    with pytest.raises(ReleaseError, match="not a Hub dataset reference"):
        parse_hub_ref(bad)


def test_a_hub_revision_is_downloaded_once_checked_and_diffed(two_versions, monkeypatch, capsys):
    from huggingface_hub import HfApi, constants

    old, new = two_versions
    go_online(monkeypatch)
    with LocalHub() as hub:
        api = HfApi(endpoint=hub.url)
        api.create_repo("org/toy", repo_type="dataset")
        api.upload_folder(repo_id="org/toy", repo_type="dataset", folder_path=str(old.path))
        api.create_tag("org/toy", tag="1.0.0", repo_type="dataset")
        ref = "hf://datasets/org/toy@1.0.0"
        first = resolve(ref, endpoint=hub.url)
        assert first.version == "1.0.0" and first.fingerprints() == old.fingerprints()
        assert not any(p.is_symlink() for p in first.path.rglob("*"))  # regular files, not cache links
        code, out, _ = run_cli(capsys, "diff", ref, str(new.path), "--endpoint", hub.url, "--json")
        assert code == 0 and one_json(out)["totals"]["added"] == 1
        served = len(hub.requests)
        # offline afterwards: the tag's last commit and its snapshot come from the cache
        monkeypatch.setattr(constants, "HF_HUB_OFFLINE", True)
        again = resolve(ref, endpoint=hub.url)
        assert again.path == first.path and len(hub.requests) == served
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", True)
    with pytest.raises(ReleaseError, match="not in the cache and HF_HUB_OFFLINE"):
        resolve("hf://datasets/org/toy@2.0.0")


def test_a_tampered_hub_snapshot_is_refused(two_versions, monkeypatch, tmp_path):
    from huggingface_hub import HfApi

    old, _ = two_versions
    go_online(monkeypatch)
    with LocalHub() as hub:
        api = HfApi(endpoint=hub.url)
        api.create_repo("org/toy", repo_type="dataset")
        api.upload_folder(repo_id="org/toy", repo_type="dataset", folder_path=str(old.path))
        parquet = next(p for p in old.path.rglob("test-*.parquet"))
        other = next(p for p in old.path.rglob("train-*.parquet"))
        api.upload_file(path_or_fileobj=other.read_bytes(), path_in_repo=parquet.relative_to(old.path).as_posix(),
                        repo_id="org/toy", repo_type="dataset")
        with pytest.raises(ReleaseError, match="does not match its own manifest"):
            resolve("hf://datasets/org/toy@main", endpoint=hub.url)


def test_an_unreachable_hub_is_one_line(monkeypatch):
    from hub_server import closed_port

    go_online(monkeypatch)
    with pytest.raises(EnvironmentFault, match="cannot read hf://datasets/org/toy@1.0.0") as info:
        resolve("hf://datasets/org/toy@1.0.0", endpoint=f"http://127.0.0.1:{closed_port()}")
    assert info.value.exit_code == 3  # the network, not the input


def test_a_build_with_an_older_version_records_its_changes_in_the_release_and_card(two_versions):
    old, new = two_versions  # make_release builds both into one registry: 1.1.0 knows 1.0.0
    record = new.info.to_dict()["changes_since"]
    assert record["version"] == "1.0.0" and record["totals"]["changed"] == 2
    full = (new.path / record["json"]).read_text(encoding="utf-8")
    assert '"te-new"' in full and '"an unexplained edit"' in full
    card = (new.path / "README.md").read_text(encoding="utf-8")
    section = card.split("## Changes since 1.0.0", 1)[1].split("\n## ", 1)[0]
    assert "1 added, 1 removed, 2 changed" in section and "(erratum fix)" in section
    assert "changes_since" not in old.info.to_dict()  # the first version has nothing to compare with
    assert "## Changes since" not in (old.path / "README.md").read_text(encoding="utf-8")


def test_a_build_of_a_version_tagged_on_the_builders_hub_repo_with_other_content_is_refused(tmp_path, monkeypatch):
    """Builder.hub_repo: a version published there is that content; a build that differs fails
    before the commit (online), the same content builds, and offline nothing is compared."""
    from huggingface_hub import HfApi, constants
    from validation_helpers import make_builder

    from benchsmith.errors import PublishError
    from benchsmith.release import ReleaseWriter
    from benchsmith.source import Sources

    published = make_release(tmp_path / "hub", _splits(), text_features(), version="1.0.0")
    go_online(monkeypatch)
    with LocalHub() as hub:
        monkeypatch.setattr(constants, "ENDPOINT", hub.url)
        monkeypatch.setattr(constants, "HUGGINGFACE_CO_URL_TEMPLATE", hub.url + "/{repo_id}/resolve/{revision}/{filename}")
        api = HfApi(endpoint=hub.url)
        api.create_repo("org/toy", repo_type="dataset")
        api.upload_folder(repo_id="org/toy", repo_type="dataset", folder_path=str(published.path))
        api.create_tag("org/toy", tag="1.0.0", repo_type="dataset")

        def build(registry, splits):
            b = make_builder(splits, text_features(), version="1.0.0")
            type(b).hub_repo = "org/toy"
            return ReleaseWriter(b, registry, Sources({})).write()

        same = build(tmp_path / "a", _splits())
        assert same.fingerprints() == published.fingerprints()
        changed = balanced_text_rows(10, "te", 2)
        changed[1]["text"] = "edited after publishing"
        with pytest.raises(PublishError, match=r"published on the Hub .* with other content: default/test differ"):
            build(tmp_path / "b", _splits(test=changed))
        assert not (tmp_path / "b" / published.name / "1.0.0").exists()  # nothing committed
        monkeypatch.setattr(constants, "HF_HUB_OFFLINE", True)
        assert build(tmp_path / "c", _splits(test=changed)).version == "1.0.0"  # offline: not compared
