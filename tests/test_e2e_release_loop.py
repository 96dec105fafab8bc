"""Issue 23 "Show it": the maintainer's release loop on the real XCOPA, across two runners and
the local test Hub, as one scripted test (slow: two real builds and validations, ~1 min).

1. Runner A builds XCOPA 1.0.0 from $BENCHSMITH_RAW, validates it, publishes it to the Hub.
2. Runner B (a fresh $BENCHSMITH_HOME and registry) audits 1.1.0 against
   ``hf://datasets/org/xcopa@1.0.0`` with ``--summary markdown`` into a $GITHUB_STEP_SUMMARY
   file: the changelog lists the question errata (``xcopa-<lang>-question``).
3. Runner B publishes 1.1.0, then publishes it again: exit 0, "already published", no new commit.
4. A build of 1.0.0 with other content is refused by the registered fingerprints.

With ``BENCHSMITH_E2E_SUMMARY=PATH`` the markdown summary of step 2 is also written to PATH.
Its quicker representatives in the default run, on fixture data: tests/test_ci_example.py
(audit of a fresh runner against a Hub tag, changelog in the markdown summary) and
tests/test_core_publish_hub.py (re-publishing, retries, read-back, snapshot checks).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from conftest import one_json, run_cli
from hub_server import LocalHub, go_online

from benchsmith import progress

TOKEN = "hf_localE2eToken0123456789"
REPO = "org/xcopa"


@pytest.mark.slow
@pytest.mark.realdata
def test_publish_audit_from_the_hub_republish_and_refuse_other_content(raw, tmp_path, capsys, monkeypatch):
    from huggingface_hub import constants

    go_online(monkeypatch)
    monkeypatch.setenv("HF_TOKEN", TOKEN)
    monkeypatch.setenv("BENCHSMITH_HUB_RETRY_DELAYS", "0,0")
    progress.set_enabled(False)
    try:
        with LocalHub(token=TOKEN, max_seconds=900) as hub:
            # as HF_ENDPOINT sets them at import (audit has no --endpoint: it reads the environment's)
            monkeypatch.setattr(constants, "ENDPOINT", hub.url)
            monkeypatch.setattr(constants, "HUGGINGFACE_CO_URL_TEMPLATE",
                                hub.url + "/{repo_id}/resolve/{revision}/{filename}")
            # 1. runner A: build, validate, publish 1.0.0
            monkeypatch.setenv("BENCHSMITH_HOME", str(tmp_path / "runner-a"))
            reg_a = tmp_path / "runner-a" / "registry"
            code, _, err = run_cli(capsys, "-q", "build", "xcopa", "--version", "1.0.0", "--sources", str(raw),
                                   "--registry", str(reg_a))
            assert code == 0, err
            code, _, err = run_cli(capsys, "-q", "validate", str(reg_a / "xcopa" / "1.0.0"), "--baselines", "none",
                                   "--json")
            assert code == 0, err
            code, out, err = run_cli(capsys, "publish", str(reg_a / "xcopa" / "1.0.0"), "--hub", REPO,
                                     "--endpoint", hub.url, "--json")
            assert code == 0, err
            assert hub.repo(REPO).tags == {"1.0.0": one_json(out)["commit"]}

            # 2. runner B: audit 1.1.0 against the Hub's 1.0.0, summary for the pull request
            monkeypatch.setenv("BENCHSMITH_HOME", str(tmp_path / "runner-b"))
            reg_b = tmp_path / "runner-b" / "registry"
            step_summary = tmp_path / "step_summary.md"
            monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(step_summary))
            previous = f"hf://datasets/{REPO}@1.0.0"
            code, out, err = run_cli(capsys, "-q", "audit", "xcopa", "--version", "1.1.0", "--sources", str(raw),
                                     "--registry", str(reg_b), "--previous", previous, "--baselines", "none",
                                     "--summary", "markdown", "--json")
            assert code == 0, err
            outcome = one_json(out)
            assert outcome["previous_from"] and previous in json.dumps(outcome)
            summary = step_summary.read_text(encoding="utf-8")
            if os.environ.get("BENCHSMITH_E2E_SUMMARY"):
                Path(os.environ["BENCHSMITH_E2E_SUMMARY"]).write_text(summary, encoding="utf-8")
            assert "audit xcopa 1.1.0" in summary and previous in summary
            assert "(erratum xcopa-" in summary and "-question): `question`:" in summary, summary
            # the full changelog names each language's question erratum (the summary shows the first items)
            code, out, err = run_cli(capsys, "diff", previous, str(reg_b / "xcopa" / "1.1.0"), "--json")
            assert code == 0, err
            for lang in ("id", "it", "sw", "th", "tr"):
                assert f"xcopa-{lang}-question" in out, lang
            assert (reg_b / "xcopa" / "1.1.0" / "release.json").is_file()

            # 3. runner B publishes 1.1.0, then again: already published, no new commit
            code, out, err = run_cli(capsys, "publish", str(reg_b / "xcopa" / "1.1.0"), "--hub", REPO,
                                     "--endpoint", hub.url, "--json")
            assert code == 0, err
            repo = hub.repo(REPO)
            commits, tags = len(repo.commits), dict(repo.tags)
            assert tags["1.1.0"] == one_json(out)["commit"] == repo.branches["main"]
            code, out, err = run_cli(capsys, "publish", str(reg_b / "xcopa" / "1.1.0"), "--hub", REPO,
                                     "--endpoint", hub.url)
            assert code == 0, err
            assert out.startswith(f"already published xcopa 1.1.0 -> {REPO}@1.1.0"), out
            assert len(repo.commits) == commits and repo.tags == tags

            # 4. a build of 1.0.0 with other content: refused by fingerprints.tsv, nothing committed
            from benchsmith.builders.xcopa import Xcopa

            real = Xcopa.examples

            def edited(self, config, split, sources):
                for n, example in enumerate(real(self, config, split, sources)):
                    if n == 0 and config.name == "et" and split == "test":
                        example = dict(example, premise=example["premise"] + " (edited)")
                    yield example

            monkeypatch.setattr(Xcopa, "examples", edited)
            reg_c = tmp_path / "runner-c"
            code, out, err = run_cli(capsys, "-q", "build", "xcopa", "--version", "1.0.0", "--sources", str(raw),
                                     "--registry", str(reg_c))
            assert code == 2 and out == "", err
            assert "xcopa 1.0.0" in err and "config 'et' split 'test'" in err and "bump the version" in err
            assert not (reg_c / "xcopa" / "1.0.0").exists()
    finally:
        progress.set_enabled(None)
