"""A broken third-party builder (entry point group ``benchsmith.builders``) is reported in one
warning line and skipped: ``list`` and ``evaluate`` work for every other builder."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

PROBE = "import sys; from benchsmith.cli import main; sys.exit(main(sys.argv[1:]))"


def install_broken_plugin(site: Path) -> None:
    """A distribution on ``site`` whose builder entry point raises on import, as a plug-in
    built against another benchsmith (or missing a dependency) does."""
    info = site / "broken_builder-0.1.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: broken-builder\nVersion: 0.1\n", encoding="utf-8")
    (info / "entry_points.txt").write_text("[benchsmith.builders]\nbroken = broken_builder_mod\n", encoding="utf-8")
    (site / "broken_builder_mod.py").write_text("raise ImportError('needs benchsmith.old_api')\n", encoding="utf-8")


def run(tmp_path: Path, *argv: str) -> subprocess.CompletedProcess:
    site = tmp_path / "site"
    if not site.exists():
        install_broken_plugin(site)
    env = {**os.environ, "BENCHSMITH_HOME": str(tmp_path / "home"),
           "PYTHONPATH": os.pathsep.join([str(site), os.environ.get("PYTHONPATH", "")])}
    return subprocess.run([sys.executable, "-c", PROBE, *argv], capture_output=True, text=True, env=env,
                          check=False, timeout=300)


def warning_lines(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if "broken_builder_mod" in line]


def test_list_reports_a_broken_plugin_once_and_lists_the_rest(tmp_path):
    proc = run(tmp_path, "list", "--json")
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr
    (line,) = warning_lines(proc.stderr)
    assert "plug-in 'broken'" in line and "is skipped: ImportError: needs benchsmith.old_api" in line
    assert all(name in proc.stdout for name in ("comve", "xcopa", "cognition", "mucow"))


def test_evaluate_goes_on_past_a_broken_plugin(tmp_path):
    proc = run(tmp_path, "evaluate", str(tmp_path / "no-release"), str(tmp_path / "predictions.jsonl"))
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert proc.stderr.strip().splitlines()[-1].startswith("error: ")
