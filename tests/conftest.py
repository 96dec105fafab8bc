"""Shared test fixtures.

``raw`` is the real raw data root: ``$BENCHSMITH_RAW`` (CI sets it to
../shared/raw), else ``../shared/raw`` beside the checkout. Where neither exists
real-data tests skip locally but fail under CI (``CI`` set), so a CI run can never
pass without having read the real data.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

# datasets and huggingface_hub read these at import time: set them before any test imports them.
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_HUB_DISABLE_XET", "1")

from benchsmith import progress

TESTS = Path(__file__).parent
FIXTURES = TESTS / "fixtures"
sys.path.insert(0, str(TESTS))  # tests/toy_builder.py and helpers


def _raw_root() -> Path | None:
    env = os.environ.get("BENCHSMITH_RAW")
    if env:
        return Path(env).resolve()  # tests may chdir; a relative ../shared/raw must not break
    guess = TESTS.parent.parent / "shared" / "raw"
    return guess if guess.is_dir() else None


def run_cli(capsys, *argv: str) -> tuple[int, str, str]:
    """Run ``benchsmith ARGV`` in-process: (exit status, stdout, stderr).

    A plain helper (``from conftest import run_cli``), shared by the CLI tests.
    """
    from benchsmith.cli import main

    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def one_json(out: str) -> dict:
    """The one JSON object a ``--json`` command printed (fails if stdout holds anything else)."""
    lines = [line for line in out.splitlines() if line.strip()]
    assert len(lines) == 1, out
    return json.loads(lines[0])


@pytest.fixture(scope="session")
def raw() -> Path:
    root = _raw_root()
    if root is None or not root.is_dir():
        if os.environ.get("CI"):
            pytest.fail(f"real data missing: BENCHSMITH_RAW={os.environ.get('BENCHSMITH_RAW')!r} is not a folder")
        pytest.skip("real data not available (set BENCHSMITH_RAW)")
    return root


@pytest.fixture(scope="session")
def fixtures() -> Path:
    return FIXTURES


@pytest.fixture(autouse=True)
def _isolated_home(tmp_path_factory, monkeypatch):
    """Never touch the user's ~/.cache/benchsmith; no progress bars in tests."""
    monkeypatch.setenv("BENCHSMITH_HOME", str(tmp_path_factory.mktemp("bshome")))
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    progress.set_enabled(False)
    yield
    progress.set_enabled(None)
