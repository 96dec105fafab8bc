"""publish: gate first, then the local registry or the Hub; a published version is never overwritten."""

from __future__ import annotations

import json
import shutil

import pytest
from conftest import run_cli
from hub_server import LocalHub, go_online
from toy_builder import FIXTURES, RegisteredToyBuilder

from benchsmith.builder import register, unregister
from benchsmith.errors import GateError, PublishError
from benchsmith.publish import publish_hub, publish_local
from benchsmith.release import Release


@pytest.fixture
def toy():
    register(RegisteredToyBuilder)  # publishable: its source's checksum is registered
    yield
    unregister("toy")


cli = run_cli


@pytest.fixture
def built(toy, tmp_path, capsys) -> Release:
    reg = tmp_path / "reg"
    assert cli(capsys, "-q", "build", "toy", "--sources", str(FIXTURES), "--registry", str(reg))[0] == 0
    return Release(reg / "toy" / "1.1.0")


def validate(capsys, release: Release) -> None:
    # the toy's "sentence number 2" / "... 22" pairs are near duplicates at the default 0.8
    code, _, err = cli(capsys, "-q", "validate", str(release.path), "--near-dup-threshold", "0.95",
                       "--baselines", "none", "--json")
    assert code == 0, err


def test_unvalidated_release_is_refused(built, capsys):
    code, out, err = cli(capsys, "publish", str(built.path), "--registry", str(built.path.parent.parent))
    assert code == 1 and out == ""
    assert "has not been validated" in err and "benchsmith validate" in err


def test_publish_locally_then_never_overwrite(built, capsys, tmp_path):
    validate(capsys, built)
    reg = built.path.parent.parent
    code, out, _ = cli(capsys, "publish", "toy", "--registry", str(reg), "--json")
    assert code == 0
    assert json.loads(out)["already_published"] is False
    marker = json.loads((reg / "toy" / ".published" / "1.1.0.json").read_text())
    assert marker["fingerprints"]["plain"]["train"] == built.split_info("plain", "train")["fingerprint"]
    # idempotent
    code, out, _ = cli(capsys, "publish", "toy", "--registry", str(reg), "--json")
    assert code == 0 and json.loads(out)["already_published"] is True
    # a rebuild of the published version is refused, even with --overwrite
    code, _, err = cli(capsys, "build", "toy", "--sources", str(FIXTURES), "--registry", str(reg), "--overwrite")
    assert code == 2 and "is published and is never overwritten" in err and "Bump" in err
    assert Release(built.path).verify() == []


def test_corrupt_published_marker_is_a_publish_error(built, capsys):
    marker = built.path.parent / ".published" / "1.1.0.json"
    marker.parent.mkdir()
    marker.write_text("{not json")
    code, _, err = cli(capsys, "build", "toy", "--sources", str(FIXTURES), "--registry",
                       str(built.path.parent.parent), "--overwrite")
    assert code == 2 and "1.1.0.json: corrupt published marker" in err and "Traceback" not in err


def test_publish_copies_into_another_registry(built, capsys, tmp_path):
    validate(capsys, built)
    other = tmp_path / "other"
    out = publish_local(built, other)
    copied = Release(other / "toy" / "1.1.0")
    assert out["published"] == str(copied.path) and copied.verify() == []
    assert sorted(p.name for p in (other / "toy").iterdir()) == [".published", "1.1.0"]


def test_edited_release_fails_the_gate(built, capsys):
    validate(capsys, built)
    manifest = json.loads((built.path / "release.json").read_text())
    manifest["configs"]["plain"]["splits"]["train"]["fingerprint"] = "0" * 64
    (built.path / "release.json").write_text(json.dumps(manifest))
    with pytest.raises(GateError):
        publish_local(Release(built.path), built.path.parent.parent)


@pytest.fixture
def local_hub(monkeypatch):
    """A local in-memory Hub (tests/hub_server.py) that huggingface_hub may talk to."""
    go_online(monkeypatch)
    with LocalHub() as hub:
        yield hub


def test_hub_commit_then_tag(built, capsys, local_hub):
    validate(capsys, built)
    out = publish_hub(built, "org/toy", endpoint=local_hub.url)
    repo = local_hub.repo("org/toy")
    sealed = json.loads((built.path / "reports" / "validation.json").read_text())["seal"]["digest"]
    marker = built.path.parent / ".published" / "1.1.0.json"
    assert out == {"published": "org/toy@1.1.0", "commit": repo.branches["main"], "tag": "1.1.0", "name": "toy",
                   "version": "1.1.0", "repo_created": True, "removed": [], "seal": sealed, "already_published": False,
                   "recorded_in": str(marker)}
    # recorded like a local publish, with where it went
    recorded = json.loads(marker.read_text())
    assert recorded["seal"]["digest"] == sealed and recorded["local"] is False
    assert recorded["hub"] == [{"repo": "org/toy", "tag": "1.1.0", "commit": out["commit"], "endpoint": local_hub.url}]
    assert repo.tags == {"1.1.0": out["commit"]}
    assert {"README.md", "release.json", "reports/validation.json"} <= set(repo.files("1.1.0"))
    calls = [" ".join(r.split()[:2]) for r in local_hub.requests]
    assert calls[:3] == ["GET /api/datasets/org/toy", "POST /api/repos/create", "GET /api/datasets/org/toy/refs"]
    assert [c for c in calls if "/commit/" in c or "/tag/" in c] == [
        "POST /api/datasets/org/toy/commit/main", f"POST /api/datasets/org/toy/tag/{out['commit']}"]


def test_hub_existing_tag_with_the_same_files_is_already_published(built, capsys, local_hub):
    # (a tag with other files is a PublishError: tests/test_core_publish_hub.py)
    validate(capsys, built)
    first = publish_hub(built, "org/toy", endpoint=local_hub.url)
    repo = local_hub.repo("org/toy")
    commits, seen = dict(repo.commits), len(local_hub.requests)
    again = publish_hub(built, "org/toy", endpoint=local_hub.url)
    assert again["already_published"] is True and again["commit"] == first["commit"]
    recorded = json.loads((built.path.parent / ".published" / "1.1.0.json").read_text())
    assert len(recorded["hub"]) == 1  # recorded once
    assert repo.commits == commits and repo.tags == {"1.1.0": repo.branches["main"]}
    assert not any("/commit/" in r or "/tag/" in r for r in local_hub.requests[seen:])


def test_hub_refuses_unvalidated(built, local_hub):
    with pytest.raises(GateError):
        publish_hub(built, "org/toy", endpoint=local_hub.url)
    assert local_hub.requests == []


def test_hub_token_argument_is_sent_and_never_shown(built, capsys, monkeypatch):
    validate(capsys, built)
    go_online(monkeypatch)  # HF_TOKEN holds another (fake) token: the argument wins
    with LocalHub(token="hf_right0123456789") as hub:
        with pytest.raises(PublishError) as info:
            publish_hub(built, "org/toy", endpoint=hub.url, token="hf_wrong0123456789")
        assert "refused the token" in str(info.value) and "hf_wrong0123456789" not in str(info.value)
        assert hub.repos == {}
        assert publish_hub(built, "org/toy", endpoint=hub.url, token="hf_right0123456789")["tag"] == "1.1.0"


def test_audit_leaves_a_published_version_alone(toy, tmp_path, capsys):
    reg = tmp_path / "reg"
    src = tmp_path / "src"
    shutil.copytree(FIXTURES, src)
    args = ["-q", "audit", "toy", "--sources", str(src), "--registry", str(reg), "--near-dup-threshold", "0.95",
            "--baselines", "none", "--json"]
    assert cli(capsys, *args)[0] == 0
    release = Release(reg / "toy" / "1.1.0")
    publish_local(release, reg)
    code, out, err = cli(capsys, *args)  # identical rebuild: passes, nothing replaced
    assert code == 0, err
    assert json.loads(out)["passed"] is True
    assert not (reg / ".staging" / "toy" / "1.1.0").exists()
