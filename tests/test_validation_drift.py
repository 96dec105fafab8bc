"""Drift against the previous release: counts, labels, fingerprints, ids added/removed/changed."""

from __future__ import annotations

from validation_helpers import balanced_text_rows, make_release, text_features

from benchsmith.builder import Erratum
from benchsmith.erratum import ErratumRow
from benchsmith.release import Release
from benchsmith.validation.check import Status
from benchsmith.validation.drift import DriftCheck, previous_release


def _splits(train=None, test=None):
    return {"train": train or balanced_text_rows(30, "tr", 1), "test": test or balanced_text_rows(10, "te", 2)}


def test_previous_release_is_the_newest_older_version(tmp_path):
    v1 = make_release(tmp_path, _splits(), text_features(), version="1.0.0")
    v2 = make_release(tmp_path, _splits(), text_features(), version="1.1.0")
    v3 = make_release(tmp_path, _splits(), text_features(), version="2.0.0")
    assert previous_release(v3).version == "1.1.0"
    assert previous_release(v2).version == "1.0.0"
    assert previous_release(v1) is None


def test_identical_rebuild_passes_and_a_changed_rebuild_fails(tmp_path):
    old = make_release(tmp_path / "a", _splits(), text_features())
    same = make_release(tmp_path / "b", _splits(), text_features())
    (r,) = DriftCheck(old).run(same)
    assert r.status is Status.PASS and "identical" in r.summary
    test = balanced_text_rows(10, "te", 2)
    test[3]["text"] = "a silently changed sentence"
    changed = make_release(tmp_path / "c", _splits(test=test), text_features())
    (r,) = DriftCheck(old).run(changed)
    assert r.status is Status.FAIL
    assert r.details["splits"]["test"]["changed_ids"] == ["te-3"]
    assert r.details["splits"]["train"]["fingerprint"]["same"] is True


def test_new_version_reports_added_removed_changed_and_labels(tmp_path):
    make_release(tmp_path, _splits(), text_features(), version="1.0.0")
    test = balanced_text_rows(10, "te", 2)
    test.append({"id": "te-new", "text": "brand new", "label": 0})
    names = ("no", "yes")
    # the erratum drops te-5 and fixes te-0's label; the core applies it while building 1.1.0
    erratum = Erratum("fix", "1.1.0", (
        ErratumRow("fix", "1.1.0", "default", "test", "te-5", "*", "*", "<drop>", "a duplicate, by eye"),
        ErratumRow("fix", "1.1.0", "default", "test", "te-0", "label", names[test[0]["label"]],
                   names[1 - test[0]["label"]], "mislabelled, by eye"),
    ))
    new = make_release(tmp_path, _splits(test=test), text_features(), version="1.1.0", errata=[erratum])
    (r,) = DriftCheck(previous_release(new)).run(new)
    assert r.status is Status.PASS  # every removal/change is explained by the erratum
    t = r.details["splits"]["test"]
    assert (t["added"], t["removed"], t["changed"]) == (1, 1, 1)
    assert t["added_ids"] == ["te-new"] and t["removed_ids"] == ["te-5"] and t["changed_ids"] == ["te-0"]
    assert t["num_examples"] == [10, 10]
    assert sum(t["labels"]["previous"]["label"].values()) == 10
    assert "test +1 -1 ~1" in r.summary


def test_unexplained_changes_warn_and_a_lost_split_fails(tmp_path):
    old = make_release(tmp_path, _splits(), text_features(), version="1.0.0")
    test = balanced_text_rows(10, "te", 2)[1:]
    new = make_release(tmp_path, _splits(test=test), text_features(), version="1.1.0")
    (r,) = DriftCheck(old).run(new)
    assert r.status is Status.WARN and r.details["unexplained"] == ["test:te-0"]
    lost = make_release(tmp_path, {"train": balanced_text_rows(30, "tr", 1)}, text_features(), version="1.2.0")
    (r,) = DriftCheck(Release(old.path)).run(lost)
    assert r.status is Status.FAIL and "split 'test'" in r.summary
