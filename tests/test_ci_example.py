"""examples/ci/github-audit.yml, run as GitHub Actions would run its ``run:`` steps.

The ``run:`` steps (all but ``id: install``: the test's environment is the installed checkout)
run in order with ``bash --noprofile --norc -eo pipefail`` (Actions' default shell), with the
workflow's ``env:`` block, where DATASET/SOURCES/PREVIOUS/BENCHSMITH_HOME/AUDIT_ARGS point at
the toy fixture and a local test Hub holding toy 1.0.0 (published by ``publish --hub``), and
GITHUB_OUTPUT/GITHUB_STEP_SUMMARY are temp files. A step's own ``env:`` is filled from the
outputs earlier steps wrote to GITHUB_OUTPUT (``${{ steps.ID.outputs.NAME }}``); the workflow
reads outputs only there, so nothing inside a script needs substituting.

``benchsmith`` on the PATH is a wrapper that registers the toy builder (tests/toy_builder.py),
then runs the real CLI.
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from hub_server import LocalHub, go_online
from toy_builder import FIXTURES, RegisteredToyBuilder

from benchsmith import progress
from benchsmith.builder import register, unregister
from benchsmith.cli import main

ROOT = Path(__file__).resolve().parent.parent
WORKFLOW = ROOT / "examples" / "ci" / "github-audit.yml"
TOKEN = "hf_localCiToken0123456789"
REPO = "org/toy"
WRAPPER = f"""#!{sys.executable}
import sys
sys.path.insert(0, {str(Path(__file__).parent)!r})
from toy_builder import RegisteredToyBuilder
from benchsmith.builder import register
from benchsmith.cli import main
register(RegisteredToyBuilder)
sys.exit(main())
"""
EXPR = re.compile(r"\$\{\{\s*steps\.([\w-]+)\.outputs\.([\w-]+)\s*\}\}")


@pytest.fixture(scope="module")
def hub():
    """A local test Hub with toy 1.0.0 published on it (tag 1.0.0)."""
    from benchsmith.publish import publish_hub
    from benchsmith.release import Release

    with pytest.MonkeyPatch.context() as mp, LocalHub(token=TOKEN, max_seconds=600) as h:
        go_online(mp)
        mp.setenv("HF_TOKEN", TOKEN)
        mp.setenv("BENCHSMITH_HUB_RETRY_DELAYS", "0")
        import tempfile

        with tempfile.TemporaryDirectory() as tmp:
            mp.setenv("BENCHSMITH_HOME", f"{tmp}/home")
            register(RegisteredToyBuilder)
            progress.set_enabled(False)
            try:
                with contextlib.redirect_stdout(io.StringIO()):
                    assert main(["-q", "build", "toy", "--version", "1.0.0", "--sources", str(FIXTURES),
                                 "--registry", f"{tmp}/reg"]) == 0
                    assert main(["-q", "validate", f"{tmp}/reg/toy/1.0.0", "--near-dup-threshold", "0.95",
                                 "--baselines", "none", "--json"]) == 0
                publish_hub(Release(Path(f"{tmp}/reg/toy/1.0.0")), REPO, endpoint=h.url)
            finally:
                unregister("toy")
                progress.set_enabled(None)
            yield h


def outputs(path: Path) -> dict[str, str]:
    return dict(line.split("=", 1) for line in path.read_text().splitlines() if "=" in line)


def run_workflow(tmp: Path, hub: LocalHub, **override: str) -> dict:
    """Run the workflow's steps; returns {step id: exit status}, the outputs and the summary."""
    workflow = yaml.safe_load(WORKFLOW.read_text())
    steps = [s for s in workflow["jobs"]["audit"]["steps"] if "run" in s and s.get("id") != "install"]
    assert [s.get("id") for s in steps] == ["audit", "gate"]
    bin_dir = tmp / "bin"
    bin_dir.mkdir()
    (bin_dir / "benchsmith").write_text(WRAPPER)
    (bin_dir / "benchsmith").chmod(0o755)
    (bin_dir / "python").symlink_to(sys.executable)
    gh_output, gh_summary = tmp / "github_output", tmp / "step_summary.md"
    gh_output.touch()
    env = {k: str(v) for k, v in workflow["env"].items()}
    assert set(env) >= {"DATASET", "SOURCES", "PREVIOUS", "BENCHSMITH_HOME", "AUDIT_ARGS"}
    env |= {
        "DATASET": "toy", "SOURCES": str(FIXTURES), "PREVIOUS": f"hf://datasets/{REPO}@1.0.0",
        "BENCHSMITH_HOME": str(tmp / "runner-home"),  # a fresh runner
        "AUDIT_ARGS": "--baselines none --near-dup-threshold 0.95",
        "HF_TOKEN": TOKEN, "HF_ENDPOINT": hub.url, "HF_HUB_OFFLINE": "0", "HF_HUB_DISABLE_XET": "1",
        "HF_HUB_DISABLE_TELEMETRY": "1", "HF_HOME": str(tmp / "hf"), "BENCHSMITH_HUB_RETRY_DELAYS": "0",
        "GITHUB_OUTPUT": str(gh_output), "GITHUB_STEP_SUMMARY": str(gh_summary),
        "PATH": f"{bin_dir}:{os.environ.get('PATH', '')}", "HOME": str(tmp),
    } | override
    status = {}
    for step in steps:
        step_env = {k: EXPR.sub(lambda m: outputs(gh_output).get(m[2], ""), str(v))
                    for k, v in (step.get("env") or {}).items()}
        assert "${{" not in step["run"], f"step {step['id']} reads an expression inline: use its env:"
        proc = subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", step["run"]],
                              check=False, env=env | step_env, cwd=tmp, capture_output=True, text=True, timeout=300)
        status[step["id"]] = proc.returncode
        if step["id"] == "audit":
            assert proc.returncode == 0, proc.stderr[-3000:]
    return {"status": status, "outputs": outputs(gh_output),
            "summary": gh_summary.read_text() if gh_summary.exists() else ""}


def test_the_workflow_audits_against_the_hub_and_the_gate_follows_audit(hub, tmp_path):
    run = run_workflow(tmp_path, hub)
    audited = run["outputs"]["status"]
    assert audited == "0", (run["summary"], (tmp_path / "audit.json").read_text()[-2000:])
    assert run["status"]["gate"] == 0
    report = Path(run["outputs"]["report"])
    assert report.name == "validation.html" and report.is_file()
    summary = run["summary"]
    assert "audit toy 1.1.0" in summary and f"hf://datasets/{REPO}@1.0.0" in summary
    assert "toy-30" in summary  # the changelog since 1.0.0: 1.1.0 drops toy-30


def test_the_gate_step_fails_with_audits_status(hub, tmp_path):
    # a previous version that is not on the Hub: audit exits 2 (bad input), so does the gate
    run = run_workflow(tmp_path, hub, PREVIOUS=f"hf://datasets/{REPO}@9.9.9")
    assert run["outputs"]["status"] == "2"
    assert run["status"]["gate"] == 2
