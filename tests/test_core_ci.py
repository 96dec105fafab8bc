"""CI runs every test (issue 26).

* Under ``CI`` the run refuses to start unless every distribution of the ``all`` extra is
  installed (tests/conftest.py), so no ``pytest.importorskip`` can skip there.
* The hypothesis profiles: 500 examples by default, 5,000 when the slow tests are selected.
* ``.ci/run`` runs the README's command and then the slow tests, each even if the other failed,
  and treats pytest's exit 5 (no tests) as a failure unless the checkout marks no test slow
  (run here with a stand-in ``python`` that only records its arguments and exits as told).
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import conftest
import pytest
from hypothesis import settings

ROOT = Path(__file__).resolve().parent.parent


def test_ci_refuses_to_start_without_the_all_extra(tmp_path):
    assert conftest.missing_from_all_extra() == []  # this environment has `.[all]`, as CI's has
    toml = tmp_path / "pyproject.toml"
    toml.write_text('[project]\nname = "benchsmith"\n[project.optional-dependencies]\n'
                    'a = ["jieba", "benchsmith-no-such-dist>=1"]\nb = ["no_such.dist2; python_version >= \'3\'"]\n'
                    'all = ["benchsmith[a,b]", "pytest"]\n', encoding="utf-8")
    assert conftest.missing_from_all_extra(toml) == ["benchsmith-no-such-dist", "no_such.dist2"]


def test_the_missing_distributions_stop_a_ci_run_and_only_a_ci_run(monkeypatch, pytestconfig):
    monkeypatch.setattr(conftest, "missing_from_all_extra", lambda: ["jieba"])
    monkeypatch.delenv("CI", raising=False)
    conftest.pytest_configure(pytestconfig)  # locally the tests of a missing extra skip
    monkeypatch.setenv("CI", "true")
    with pytest.raises(pytest.UsageError, match=r"CI: jieba of the `all` extra not installed.*\.\[all\]"):
        conftest.pytest_configure(pytestconfig)


def test_hypothesis_budgets(monkeypatch, request):
    assert settings.get_profile(conftest.DEFAULT_PROFILE).max_examples >= 500  # issue 26's floor per reader
    assert settings.get_profile(conftest.SLOW_PROFILE).max_examples == conftest.SLOW_EXAMPLES >= 5_000
    # the profile this run loaded: the slow one iff it selected a slow test (or as the variable says)
    slow = any(item.get_closest_marker("slow") for item in request.session.items)
    loaded = settings.get_profile(conftest.hypothesis_profile(slow))
    assert settings.default.max_examples == loaded.max_examples
    monkeypatch.delenv("BENCHSMITH_HYPOTHESIS_PROFILE", raising=False)
    assert conftest.hypothesis_profile(False) == conftest.DEFAULT_PROFILE
    assert conftest.hypothesis_profile(True) == conftest.SLOW_PROFILE
    monkeypatch.setenv("BENCHSMITH_HYPOTHESIS_PROFILE", conftest.SLOW_PROFILE)  # what .ci/run sets
    assert conftest.hypothesis_profile(False) == conftest.SLOW_PROFILE


def _fake_repo(tmp_path: Path, slow_marked: bool) -> Path:
    repo = tmp_path / "repo"
    (repo / ".ci").mkdir(parents=True)
    shutil.copy(ROOT / ".ci" / "run", repo / ".ci" / "run")
    (repo / "tests").mkdir()
    (repo / "tests" / "test_x.py").write_text("@pytest.mark.slow\n" if slow_marked else "def test(): pass\n")
    (tmp_path / "shared" / "raw").mkdir(parents=True)
    (tmp_path / "bin").mkdir()
    fake = tmp_path / "bin" / "python"
    fake.write_text('#!/bin/sh\necho "$*" >> "$CALLS"\n'
                    'case "$*" in *"-m slow"*) exit "$SLOW_STATUS";; *) exit "$DEFAULT_STATUS";; esac\n')
    fake.chmod(0o755)
    return repo


def _ci(tmp_path: Path, default: int, slow: int, slow_marked: bool = True) -> tuple[int, str, list[str]]:
    repo = _fake_repo(tmp_path, slow_marked)
    calls = tmp_path / "calls.txt"
    env = {**os.environ, "PATH": f"{tmp_path / 'bin'}{os.pathsep}{os.environ['PATH']}", "CALLS": str(calls),
           "DEFAULT_STATUS": str(default), "SLOW_STATUS": str(slow), "BENCHSMITH_RAW": str(tmp_path / "shared" / "raw")}
    proc = subprocess.run(["bash", str(repo / ".ci" / "run"), "--no-setup"], capture_output=True, text=True,
                          env=env, check=False, timeout=60)
    return proc.returncode, proc.stderr, calls.read_text().splitlines() if calls.exists() else []


@pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash")
@pytest.mark.parametrize(
    "default, slow, slow_marked, ok",
    [
        (0, 0, True, True),
        (1, 0, True, False),  # a failing default run fails CI ...
        (0, 1, True, False),  # ... and so does a failing slow run
        (5, 0, True, False),  # the README's command collecting nothing is broken
        (0, 5, True, False),  # so is a slow run that selects nothing while tests are marked slow
        (0, 5, False, True),  # a checkout with no slow test: nothing to run is fine
        (2, 0, True, False),  # interrupted (a collection error, e.g. importorskip failing under CI)
    ],
)
def test_ci_run_steps_and_exit_statuses(tmp_path, default, slow, slow_marked, ok):
    code, err, calls = _ci(tmp_path, default, slow, slow_marked)
    assert (code == 0) is ok, err
    assert calls == ["-m pytest -q", "-m pytest -q -m slow"], calls  # both steps ran, in this order
    if not ok:
        assert "CI: failed:" in err

