"""A build declared not reproducible (``Builder.reproducible = False``, e.g. an aligner that
seeds itself) is tolerated by drift explicitly: a same-version difference warns and says why;
without the declaration the same difference fails; a lost split fails either way."""

from __future__ import annotations

from validation_helpers import balanced_text_rows, make_builder, text_features

from benchsmith.release import ReleaseWriter
from benchsmith.source import Sources
from benchsmith.validation.check import Status
from benchsmith.validation.drift import DriftCheck


def _build(registry, test_rows, reproducible=True, splits=("train", "test")):
    rows = {"train": balanced_text_rows(30, "tr", 1), "test": test_rows}
    b = make_builder({s: rows[s] for s in splits}, text_features())
    if not reproducible:
        b.reproducible = False  # what HarvestBuilder declares for an unseeded alignment
    return ReleaseWriter(b, registry, Sources({})).write()


def test_the_declaration_is_recorded_in_release_json(tmp_path):
    assert _build(tmp_path / "a", balanced_text_rows(10, "te", 2)).info.to_dict()["reproducible"] is True
    assert _build(tmp_path / "b", balanced_text_rows(10, "te", 2), reproducible=False).info.to_dict()["reproducible"] is False


def test_a_declared_non_reproducible_rebuild_warns_where_a_reproducible_one_fails(tmp_path):
    old = _build(tmp_path / "a", balanced_text_rows(10, "te", 2), reproducible=False)
    test = balanced_text_rows(10, "te", 2)
    test[3]["text"] = "one borderline sentence the aligner linked differently"
    (r,) = DriftCheck(old).run(_build(tmp_path / "b", test, reproducible=False))
    assert r.status is Status.WARN
    assert "declared not reproducible" in r.summary and r.details["tolerated"] == ["test"]
    assert r.details["splits"]["test"]["changed_ids"] == ["te-3"]

    strict_old = _build(tmp_path / "c", balanced_text_rows(10, "te", 2))
    (r,) = DriftCheck(strict_old).run(_build(tmp_path / "d", test))
    assert r.status is Status.FAIL and "differs from the same version's previous build" in r.summary


def test_an_identical_rebuild_passes_and_a_lost_split_fails_even_when_declared(tmp_path):
    old = _build(tmp_path / "a", balanced_text_rows(10, "te", 2), reproducible=False)
    (r,) = DriftCheck(old).run(_build(tmp_path / "b", balanced_text_rows(10, "te", 2), reproducible=False))
    assert r.status is Status.PASS and "identical" in r.summary
    (r,) = DriftCheck(old).run(_build(tmp_path / "c", None, reproducible=False, splits=("train",)))
    assert r.status is Status.FAIL and "split 'test'" in r.summary
