"""The generic audit on a real release: XCOPA (Estonian and Chinese configs), built from ../shared/raw.

XCOPA was built balanced and without annotation artifacts (Ponti et al. 2020 keep
COPA's design), so the audit must find: intact integrity, labels consistent with
uniform, no cross-split leakage, and an options-only model near chance. Building
two configs keeps this to a few seconds.
"""

from __future__ import annotations

import pytest

from benchsmith.builder import builders, get_builder
from benchsmith.release import ReleaseWriter
from benchsmith.source import resolve_sources
from benchsmith.validation.runner import validate

pytestmark = pytest.mark.realdata


@pytest.fixture(scope="module")
def xcopa_validation(raw, tmp_path_factory):
    if "xcopa" not in builders():
        pytest.skip("no xcopa builder registered")
    b = get_builder("xcopa")
    sources = resolve_sources(b.sources, b.checksums(), raw, allow_missing=True)
    release = ReleaseWriter(
        b, tmp_path_factory.mktemp("reg"), sources, configs=["et", "zh"], skip_missing=True
    ).write()
    return validate(release, builder=b, baselines="cheap", previous=None)


def test_no_check_crashes_and_the_report_and_card_are_written(xcopa_validation):
    v = xcopa_validation
    assert not [r for r in v.results if "crashed" in r.summary]
    assert (v.release.path / "reports" / "validation.html").is_file()
    assert "reports/validation.html" in (v.release.path / "README.md").read_text()


def test_integrity_balance_and_leakage_hold_on_xcopa(xcopa_validation):
    by = {(r.check, r.config): r for r in xcopa_validation.results}
    for config in ("et", "zh"):
        for check in ("schema", "fingerprint", "empty_fields", "label_balance", "exact_duplicates"):
            assert by[(check, config)].status.value == "pass", by[(check, config)].summary
        assert by[("near_duplicates", config)].status.value != "fail"


def test_xcopa_options_alone_do_not_give_the_answer_away(xcopa_validation):
    for r in xcopa_validation.results:
        if r.check == "partial_input":
            assert r.metrics["chance"] == 0.5 and r.metrics["n"] == 600
            assert abs(r.metrics["gain"]) < 0.1, r.summary
            assert r.status.value != "fail"
