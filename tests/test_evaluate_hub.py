"""``benchsmith evaluate NAME PREDICTIONS --release hf://datasets/ORG/NAME@VERSION``: a researcher
with no registry scores against the published revision itself. The snapshot is certified by the
``seal.json`` its publish uploaded; a changed Hub copy, or one benchsmith did not publish, is
refused (the latter scored only with ``--allow-unvalidated``). The maintainer publishes a validated
copy that lies outside any registry (the publication is recorded in the default registry)."""

from __future__ import annotations

import json
import shutil

import pytest
from conftest import run_cli
from hub_server import LocalHub, go_online
from huggingface_hub import constants

from benchsmith.release import Release
from benchsmith.testing.hub import File

TOKEN = "hf_localEvalToken0123456789"
REPO = "org/xcopa"



@pytest.fixture
def hub(real_xcopa, tmp_path, capsys, monkeypatch):
    go_online(monkeypatch)
    monkeypatch.setenv("HF_TOKEN", TOKEN)
    monkeypatch.setenv("BENCHSMITH_HUB_RETRY_DELAYS", "0")
    monkeypatch.setenv("BENCHSMITH_HOME", str(tmp_path / "maintainer"))
    release = Release(shutil.copytree(real_xcopa.path, tmp_path / "reg" / "xcopa" / real_xcopa.version))
    assert run_cli(capsys, "-q", "validate", str(release.path), "--baselines", "none", "--json")[0] == 0
    with LocalHub(token=TOKEN) as hub:
        code, _, err = run_cli(capsys, "publish", str(release.path), "--hub", REPO, "--endpoint", hub.url)
        assert code == 0, err
        assert sorted(p.name for p in (tmp_path / "reg").iterdir()) == ["xcopa"]  # a copy: nothing beside it
        monkeypatch.setattr(constants, "ENDPOINT", hub.url)  # what HF_ENDPOINT sets at import
        monkeypatch.setattr(constants, "HUGGINGFACE_CO_URL_TEMPLATE", hub.url + "/{repo_id}/resolve/{revision}/{filename}")
        monkeypatch.setenv("BENCHSMITH_HOME", str(tmp_path / "researcher"))  # no registry, no cache
        lines = [{"lang": "et", "idx": r["idx"], "label": 0} for r in release.examples("et", "test")]
        (tmp_path / "predictions.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
        hub.version = release.version
        yield hub


def evaluate(capsys, tmp_path, version, *extra):
    return run_cli(capsys, "evaluate", "xcopa", str(tmp_path / "predictions.jsonl"), "--config", "et",
                   "--release", f"hf://datasets/{REPO}@{version}", "--json", *extra)


@pytest.mark.realdata
def test_a_published_revision_is_scored_without_a_registry_and_a_changed_or_foreign_copy_is_refused(
        hub, capsys, tmp_path, monkeypatch):
    """One published release (a real validate and publish): scored, then changed on the Hub, then
    stripped of its seal.json."""
    code, out, err = evaluate(capsys, tmp_path, hub.version)
    assert code == 0, err
    score = json.loads(out)
    assert (score["dataset"], score["version"], score["config"]) == ("xcopa", hub.version, "et")
    assert 0 <= score["scores"]["xcopa-accuracy"]["score"] <= 1

    files = hub.repo(REPO).commits[hub.repo(REPO).tags[hub.version]]
    gold = next(p for p in files if p.endswith(".parquet") and "test" in p)
    intact = files[gold]
    files[gold] = File(intact.data[:-8] + b"\0" * 8)  # gold bytes changed on the Hub
    monkeypatch.setenv("BENCHSMITH_HOME", str(tmp_path / "researcher1"))  # a new machine: downloads again
    code, _, err = evaluate(capsys, tmp_path, hub.version)
    assert code == 2 and gold in err and "changed after publishing" in err, err

    files[gold] = intact
    del files["seal.json"]  # a copy benchsmith did not publish: nothing certifies its gold
    monkeypatch.setenv("BENCHSMITH_HOME", str(tmp_path / "researcher2"))
    code, _, err = evaluate(capsys, tmp_path, hub.version)
    assert code == 1 and "has no seal.json" in err and "--allow-unvalidated" in err, err
    code, out, err = evaluate(capsys, tmp_path, hub.version, "--allow-unvalidated")
    assert code == 0 and "nobody certified" in err and json.loads(out)["version"] == hub.version, err
