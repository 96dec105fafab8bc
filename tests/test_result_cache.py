"""The validation result cache (validation/result_cache.py): a hit only for the same data,
code and parameters; every other change runs the check again."""

from __future__ import annotations

import pytest
from validation_helpers import balanced_text_rows, make_release, rewrite_split, text_features

from benchsmith.validation import result_cache, runner
from benchsmith.validation.checks.distribution import LengthCheck
from benchsmith.validation.checks.integrity import SchemaCheck
from benchsmith.validation.checks.leakage import NearDuplicateCheck


@pytest.fixture
def counted(monkeypatch):
    """How many times LengthCheck and SchemaCheck really ran (every check in this process, where the
    count is kept: no worker process)."""
    monkeypatch.setenv(runner.WORKERS_ENV, "0")
    calls = {"lengths": 0, "schema": 0}
    for cls, name in ((LengthCheck, "lengths"), (SchemaCheck, "schema")):
        real = cls.run

        def run(self, release, _real=real, _name=name):
            calls[_name] += 1
            return _real(self, release)

        monkeypatch.setattr(cls, "run", run)
    return calls


def _release(tmp_path):
    return make_release(tmp_path / "reg", {"train": balanced_text_rows(60, "a"), "test": balanced_text_rows(30, "b", 1)},
                        text_features())


def _validate(release, **kw):
    return runner.validate(release, baselines="none", builder=None, previous=None, write=False, **kw)


def test_a_second_identical_run_reuses_cacheable_results_and_says_so(tmp_path, counted):
    r = _release(tmp_path)
    first = _validate(r)
    second = _validate(r)
    assert counted == {"lengths": 1, "schema": 2}  # schema reads the card: never cached
    assert [x.to_dict() for x in first.results] == [x.to_dict() for x in second.results]
    assert not any("result cache" in n for n in first.notes)
    assert any("reused from the result cache" in n and "lengths" in n for n in second.notes)


def test_changed_data_misses(tmp_path, counted):
    r = _release(tmp_path)
    _validate(r)
    rewrite_split(r, "default", "test", lambda rows: [{**x, "text": x["text"] + " more"} for x in rows])
    v = _validate(r)
    assert counted["lengths"] == 2
    assert not any("result cache" in n for n in v.notes)


def test_changed_manifest_misses(tmp_path, counted):
    r = _release(tmp_path)
    _validate(r)
    path = r.path / "release.json"
    path.write_text(path.read_text().replace('"train"', '"train" ', 1))
    _validate(r)
    assert counted["lengths"] == 2


def test_changed_code_misses(tmp_path, counted, monkeypatch):
    r = _release(tmp_path)
    _validate(r)
    monkeypatch.setattr(result_cache, "code_digest", lambda: "another version of the code")
    _validate(r)
    assert counted["lengths"] == 2


def test_no_cache_and_the_environment_switch_run_every_check(tmp_path, counted, monkeypatch):
    r = _release(tmp_path)
    _validate(r)
    _validate(r, cache=False)
    assert counted["lengths"] == 2
    monkeypatch.setenv("BENCHSMITH_NO_CACHE", "1")
    _validate(r)
    assert counted["lengths"] == 3


def test_the_key_holds_the_parameters_and_refuses_what_has_no_json_form(tmp_path):
    r = _release(tmp_path)
    key = result_cache.release_digest(r)
    assert result_cache.check_key(NearDuplicateCheck(threshold=0.8), key) != result_cache.check_key(
        NearDuplicateCheck(threshold=0.9), key)
    assert result_cache.check_key(NearDuplicateCheck(threshold=0.8), key) == result_cache.check_key(
        NearDuplicateCheck(threshold=0.8), key)
    assert result_cache.check_key(SchemaCheck(), key) is None  # not cacheable
    odd = LengthCheck()
    odd.hook = lambda: None  # a parameter without a JSON form: not cacheable
    assert result_cache.check_key(odd, key) is None


def test_a_crash_is_not_stored(tmp_path, monkeypatch):
    r = _release(tmp_path)
    with monkeypatch.context() as m:
        m.setattr(LengthCheck, "run", lambda self, release: 1 / 0)
        first = _validate(r)
    assert any(x.check == "lengths" and "crashed" in x.summary for x in first.results)
    second = _validate(r)
    assert not any(x.check == "lengths" and "crashed" in x.summary for x in second.results)


def test_the_cheap_baselines_are_cached_and_a_hit_is_the_recomputation(tmp_path, monkeypatch):
    from benchsmith.validation.baselines.cheap import CheapBaselines

    calls = []
    real = CheapBaselines.run
    monkeypatch.setattr(CheapBaselines, "run", lambda self, release: calls.append(1) or real(self, release))
    r = _release(tmp_path)
    first = runner.validate(r, baselines="cheap", builder=None, previous=None, write=False)
    second = runner.validate(r, baselines="cheap", builder=None, previous=None, write=False)
    fresh = runner.validate(r, baselines="cheap", builder=None, previous=None, write=False, cache=False)
    assert len(calls) == 2 and any("baselines" in n.split(": ")[-1].split(", ") for n in second.notes)
    assert [x.to_dict() for x in first.results] == [x.to_dict() for x in second.results] \
        == [x.to_dict() for x in fresh.results]


def test_fidelity_is_keyed_by_its_figures_and_a_hit_is_the_recomputation(tmp_path):
    from benchsmith.expectation import Expectation
    from benchsmith.validation.fidelity import FidelityCheck

    r = _release(tmp_path)
    count = Expectation.count("default", "test", 30, "Table 1")
    key = result_cache.check_key(FidelityCheck([count]), result_cache.release_digest(r))
    assert key is not None  # the measure (a function) is named by cache_params, not refused
    other = Expectation.count("default", "test", 31, "Table 1")
    assert result_cache.check_key(FidelityCheck([other]), result_cache.release_digest(r)) != key
    hits: list[str] = []
    (cached,) = result_cache.cached_checks(r, [FidelityCheck([count])], hits)
    first, second = cached.run(r), cached.run(r)
    assert hits == ["fidelity"] and [x.to_dict() for x in first] == [x.to_dict() for x in second] \
        == [x.to_dict() for x in FidelityCheck([count]).run(r)]
