"""CI runs every test (issue 26).

* Under ``CI``, ``pytest.importorskip`` of a module of the ``all`` extra fails instead of
  skipping (tests/conftest.py); without ``CI``, or for a module outside the extra, it skips.
* Every module the tests importorskip is either in the ``all`` extra or named here as optional.
* The hypothesis profiles: 500 examples by default, 5,000 when the slow tests are selected.
* The collector skips what was alive after collection (``gc.freeze``, tests/conftest.py).
* ``.ci/run`` runs the README's command and then the slow tests, each even if the other failed,
  and treats pytest's exit 5 (no tests) as a failure unless the checkout marks no test slow
  (run here with a stand-in ``python`` that only records its arguments and exits as told).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import conftest
import pytest
from hypothesis import settings

ROOT = Path(__file__).resolve().parent.parent
#: importorskip'd modules that are deliberately outside the `all` extra (they may skip in CI)
OPTIONAL_OUTSIDE_ALL = {"hf_xet"}  # huggingface_hub's optional xet transport


def test_importorskip_fails_under_ci_for_a_module_of_the_all_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "jieba", None)  # `import jieba` now raises ImportError
    monkeypatch.setenv("CI", "true")
    with pytest.raises(pytest.fail.Exception, match="jieba.*`all` extra"):
        pytest.importorskip("jieba")
    with pytest.raises(pytest.skip.Exception):  # not in the extra: still a skip
        pytest.importorskip("benchsmith_no_such_module")
    monkeypatch.delenv("CI")
    with pytest.raises(pytest.skip.Exception):  # locally a missing extra skips, as before
        pytest.importorskip("jieba")


def test_importorskip_returns_the_module_when_it_imports(monkeypatch):
    monkeypatch.setenv("CI", "true")
    assert pytest.importorskip("json") is __import__("json")


def test_every_importorskip_module_is_in_the_all_extra():
    names = set()
    for path in sorted(set((ROOT / "tests").glob("*.py")) - {Path(__file__).resolve()}):
        names.update(re.findall(r"importorskip\(\s*[\"']([\w.]+)[\"']", path.read_text(encoding="utf-8")))
    assert {"torch", "mlcroissant", "lm_eval", "eflomal"} <= names
    stray = sorted(n for n in names if conftest.in_all_extra(n) is None and n not in OPTIONAL_OUTSIDE_ALL)
    assert not stray, f"add these to an extra of `all` in pyproject.toml or to OPTIONAL_OUTSIDE_ALL: {stray}"
    assert conftest.in_all_extra("sklearn") == "scikit-learn"
    assert conftest.in_all_extra("statsmodels.stats.inter_rater") == "statsmodels"


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


def test_long_lived_objects_are_frozen_and_a_tests_garbage_is_still_collected():
    """tests/conftest.py froze what survived collection (``freeze_long_lived``): the collector does not
    walk the imported libraries at every full collection. Cyclic garbage made after the freeze is
    still collected; a test that imports 100 more modules freezes again at its teardown."""
    import gc
    import weakref

    assert gc.get_freeze_count() > 0

    class Node:
        pass

    a, b = Node(), Node()
    a.other, b.other = b, a
    gone = weakref.ref(a)
    del a, b
    gc.collect()
    assert gone() is None
    assert conftest._modules_at_freeze > 0 and conftest.FREEZE_AFTER_NEW_MODULES == 100
