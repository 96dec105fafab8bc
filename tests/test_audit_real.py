"""CI's audit on the real data: every dataset builds from ../shared/raw, validates, and passes its gate.

This is what `benchsmith audit NAME --sources DIR` does in CI; a change that makes a real release
fail a check (a new leak, a broken expectation, an artifact getting worse) fails here.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchsmith.cli import main


# CoGnition (the quickest, ~7 s: its raw folder lacks the train split) is the default run's
# representative, on the audit tests/conftest.py runs once (real_cognition_audit: its release is
# the real CoGnition the other modules read); the other three are slow (15-25 s each):
# `python -m pytest -m slow`
@pytest.mark.realdata
@pytest.mark.parametrize("name", [pytest.param("comve", marks=pytest.mark.slow),
                                  pytest.param("xcopa", marks=pytest.mark.slow),
                                  "cognition",
                                  pytest.param("mucow", marks=pytest.mark.slow)])
def test_audit_passes_on_real_data(raw, tmp_path, capsys, request, name):
    if name == "cognition":  # this command line, run once by tests/conftest.py (COGNITION_AUDIT_ARGV)
        audited = request.getfixturevalue("real_cognition_audit")
        code, out, err, registry = audited["code"], audited["out"], audited["err"], Path(audited["registry"])
    else:
        code = main(["-q", "audit", name, "--sources", str(raw), "--registry", str(tmp_path),
                     "--skip-missing", "--json"])
        (out, err), registry = capsys.readouterr(), tmp_path
    report = json.loads(out)
    failures = [f"{r['check']} {r.get('config')}: {r['summary']}" for r in report["results"] if r["status"] == "fail"]
    assert code == 0, failures or err
    assert report["passed"] and report["committed"] and not failures
    release = registry / name / report["version"]
    assert (release / "reports" / "validation.html").is_file()
    card = (release / "README.md").read_text(encoding="utf-8")
    assert "## Validation" in card and "Not validated yet" not in card
