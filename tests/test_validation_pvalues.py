"""The closed-form tests of validation/pvalues.py give scipy.stats' floats exactly (==).

The module exists only to keep ``scipy.stats`` (~1.1 CPU s to import) out of a cold
``validate``; these tests are what lets it stand in for the library. The real-data test runs
the checks that report p-values on two XCOPA configs (label balance, length cues, option cues,
the partial-input verdict) once with scipy.stats patched in and once without, and compares
every result.
"""

from __future__ import annotations

import numpy as np
import pytest
from benchsmith.validation import pvalues
from scipy import stats  # scikit-learn's dependency, in the validation extra


def _scipy_chisquare(counts):
    r = stats.chisquare(counts)
    return float(r.statistic), float(r.pvalue)


def _scipy_binom(k, n, p):
    return float(stats.binomtest(k, n, p, alternative="greater").pvalue)


def _scipy_kruskal(*groups):
    r = stats.kruskal(*groups)
    return float(r.statistic), float(r.pvalue)


@pytest.mark.parametrize("counts", [[5, 5], [3195, 3386, 3419], [4979, 5021], [0, 10], [1, 0, 0, 7], [2, 3, 4, 5, 6],
                                    [100_000, 99_999], [17, 17, 17]])
def test_chisquare_is_scipys(counts):
    assert pvalues.chisquare_uniform(np.asarray(counts)) == _scipy_chisquare(counts)


def test_chisquare_on_random_counts_is_scipys():
    rng = np.random.default_rng(0)
    for _ in range(200):
        counts = rng.integers(0, 5000, size=int(rng.integers(2, 8)))
        if counts.sum() == 0:
            continue
        assert pvalues.chisquare_uniform(counts) == _scipy_chisquare(counts)


def test_binomtest_is_scipys_at_the_edges_and_at_random():
    cases = [(0, 1, 0.5), (1, 1, 0.5), (0, 10, 0.0), (10, 10, 1.0), (3, 10, 0.0), (3, 10, 1.0), (5, 10, 1e-9),
             (500, 1000, 0.5), (620, 1000, 0.5), (100, 100, 0.25), (41, 80, 0.5)]
    rng = np.random.default_rng(1)
    for _ in range(300):
        n = int(rng.integers(1, 20_000))
        cases.append((int(rng.integers(0, n + 1)), n, float(rng.random())))
    for k, n, p in cases:
        assert pvalues.binomtest_greater(k, n, p) == _scipy_binom(k, n, p), (k, n, p)


def test_binomtest_refuses_what_scipy_refuses():
    for k, n, p in [(5, 4, 0.5), (-1, 4, 0.5), (1, 0, 0.5), (1, 4, 1.5)]:
        with pytest.raises(ValueError):
            pvalues.binomtest_greater(k, n, p)
        with pytest.raises(ValueError):
            _scipy_binom(k, n, p)


def test_kruskal_is_scipys_with_and_without_ties():
    rng = np.random.default_rng(2)
    for trial in range(150):
        k = int(rng.integers(2, 5))
        # integer lengths (the checks' inputs: many ties) and continuous values (none)
        groups = [rng.integers(1, 30, size=int(rng.integers(2, 400))) if trial % 2 else
                  rng.normal(size=int(rng.integers(2, 400))) for _ in range(k)]
        assert pvalues.kruskal(*groups) == _scipy_kruskal(*groups)
    assert pvalues.kruskal(np.array([1, 1, 1]), np.array([2, 2, 2]), np.array([2, 2])) == (7.0, _scipy_kruskal(
        [1, 1, 1], [2, 2, 2], [2, 2])[1])


def test_a_wrong_statistic_would_be_caught():
    """The comparison can fail: a chi-squared against the wrong expectation differs."""
    counts = np.array([3195, 3386, 3419])
    assert pvalues.chisquare_uniform(counts) != _scipy_chisquare(counts + 1)


@pytest.mark.realdata
@pytest.mark.slow
def test_checks_report_the_same_p_values_with_scipy_stats_on_real_xcopa(raw, tmp_path_factory, monkeypatch):
    from benchsmith.validation.checks import artifacts, distribution, partial_input

    from benchsmith.builder import get_builder
    from benchsmith.release import ReleaseWriter
    from benchsmith.source import resolve_sources

    b = get_builder("xcopa")
    sources = resolve_sources(b.sources, b.checksums(), raw, allow_missing=True)
    release = ReleaseWriter(b, tmp_path_factory.mktemp("reg"), sources, configs=["et", "zh", "en"],
                            skip_missing=True).write()
    checks = [distribution.LabelBalanceCheck(), distribution.LengthCheck(), artifacts.CueCheck(),
              partial_input.PartialInputCheck()]

    def results():
        return [(r.check, r.config, r.status, r.metrics) for c in checks for r in c.run(release)]

    ours = results()
    monkeypatch.setattr(distribution, "chisquare_uniform", _scipy_chisquare)
    monkeypatch.setattr(distribution, "binomtest_greater", _scipy_binom)
    monkeypatch.setattr(distribution, "kruskal", _scipy_kruskal)
    monkeypatch.setattr(artifacts, "binomtest_greater", _scipy_binom)
    monkeypatch.setattr(pvalues, "binomtest_greater", _scipy_binom)  # the partial-input verdict's
    assert results() == ours
    assert any("p_value" in str(m) for *_, m in ours)
