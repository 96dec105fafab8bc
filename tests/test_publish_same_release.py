"""publish --hub of a version whose tag exists: the same release (same data and declared metadata,
another runner's validation report) is a no-op success that says so; other data or other declared
metadata under the tag stays refused. Also: the item-level changelog (``changes/`` and the card's
"Changes since") reaches the Hub with the release. Against the local test Hub (tests/hub_server.py)."""

from __future__ import annotations

import contextlib
import io
import json

import pytest
from conftest import one_json
from hub_server import LocalHub, go_online
from test_core_publish_hub import REPO, TOKEN, _writes, one_line, publish, snapshot
from toy_builder import FIXTURES, RegisteredToyBuilder

from benchsmith import progress
from benchsmith.builder import register, unregister
from benchsmith.cli import main
from benchsmith.release import Release
from benchsmith.testing.hub import File


@pytest.fixture(scope="module")
def runners(tmp_path_factory) -> dict[str, Release]:
    """toy 1.1.0 built after 1.0.0 (so it carries ``changes/since-1.0.0``), validated with
    ``--baselines none`` (runner a), and the same builds in another registry validated with
    ``--baselines cheap`` (runner b): the same data, another report and card."""
    a, b = tmp_path_factory.mktemp("runner-a"), tmp_path_factory.mktemp("runner-b")
    register(RegisteredToyBuilder)
    progress.set_enabled(False)
    try:
        with pytest.MonkeyPatch.context() as mp, contextlib.redirect_stdout(io.StringIO()):
            mp.setenv("BENCHSMITH_HOME", str(tmp_path_factory.mktemp("bshome")))
            for registry in (a, b):  # each runner builds in its own registry
                for version in ("1.0.0", "1.1.0"):
                    assert main(["-q", "build", "toy", "--version", version, "--sources", str(FIXTURES),
                                 "--registry", str(registry)]) == 0
            for folder, baselines in ((a / "toy" / "1.1.0", "none"), (b / "toy" / "1.1.0", "cheap")):
                assert main(["-q", "validate", str(folder), "--near-dup-threshold", "0.95",
                             "--baselines", baselines, "--json"]) == 0
        yield {"a": Release(a / "toy" / "1.1.0"), "b": Release(b / "toy" / "1.1.0")}
    finally:
        unregister("toy")
        progress.set_enabled(None)


@pytest.fixture
def hub(monkeypatch):
    """The local test Hub, with our test token (as test_core_publish_hub's fixture)."""
    go_online(monkeypatch)
    monkeypatch.setenv("HF_TOKEN", TOKEN)
    monkeypatch.setenv("BENCHSMITH_HUB_RETRY_DELAYS", "0,0,0")
    with LocalHub(token=TOKEN) as h:
        yield h


def test_the_item_level_changelog_reaches_the_hub(runners, hub, capsys):
    release = runners["a"]
    assert publish(capsys, release, hub.url)[0] == 0
    files = hub.repo(REPO).files("1.1.0")
    assert files["changes/since-1.0.0.md"] == (release.path / "changes/since-1.0.0.md").read_bytes()
    assert json.loads(files["changes/since-1.0.0.json"]) == json.loads(
        (release.path / "changes/since-1.0.0.json").read_text())
    card = files["README.md"].decode()
    section = card.split("## Changes since 1.0.0", 1)[1].split("\n## ", 1)[0]
    assert "removed `toy-30`" in section and "(erratum drop-30)" in section  # names the item and its erratum


def test_the_same_release_from_a_second_runner_is_a_no_op_that_says_so(runners, hub, capsys):
    first, second = runners["a"], runners["b"]
    assert (first.path / "README.md").read_bytes() != (second.path / "README.md").read_bytes()
    assert publish(capsys, first, hub.url)[0] == 0
    before, seen = snapshot(hub), len(hub.requests)
    code, out, err = publish(capsys, second, hub.url)
    assert code == 0, err
    assert out.startswith("already published toy 1.1.0 -> org/toy@1.1.0 (the same release: same data and "
                          "declared metadata; the tag keeps its own README.md"), out
    assert snapshot(hub) == before and _writes(hub.requests[seen:]) == []
    result = one_json(publish(capsys, second, hub.url, "--json")[1])
    assert result["already_published"] is True and result["same_release"] is True
    assert {"README.md", "reports/validation.json", "seal.json"} <= set(result["kept_on_hub"])
    assert not any(p.startswith("data/") for p in result["kept_on_hub"])


def _tag_files(local_hub):
    repo = local_hub.repo(REPO)
    return repo.commits[repo.tags["1.1.0"]]


def test_other_data_under_the_tag_stays_refused(runners, hub, capsys):
    assert publish(capsys, runners["a"], hub.url)[0] == 0
    files = _tag_files(hub)
    shard = next(p for p in files if p.startswith("data/") and p.endswith(".parquet"))
    files[shard] = File(files[shard].data + b"\0", lfs=files[shard].lfs)
    before = snapshot(hub)
    code, out, err = publish(capsys, runners["b"], hub.url)
    assert code == 2 and out == ""
    assert f"{REPO} already has a tag 1.1.0 with other content ({shard}: " in one_line(err)
    assert snapshot(hub) == before


@pytest.mark.parametrize(("key", "value", "same"), [
    ("tool_versions", {"benchsmith": "0.0.1"}, True),  # the runner's library versions: the same release
    ("license", "MIT", False),  # declared metadata (the toy is CC0-1.0): another release
])
def test_release_json_counts_by_its_declared_fields(runners, hub, capsys, key, value, same):
    assert publish(capsys, runners["a"], hub.url)[0] == 0
    files = _tag_files(hub)
    manifest = json.loads(files["release.json"].data)
    files["release.json"] = File(json.dumps({**manifest, key: value}, indent=2).encode())
    code, out, err = publish(capsys, runners["b"], hub.url)
    if same:
        assert code == 0 and "the same release" in out and "release.json" in out, err
    else:
        assert code == 2 and "already has a tag 1.1.0 with other content (release.json: declares other license" in one_line(err)

