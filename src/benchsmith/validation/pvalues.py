"""The three significance tests the checks report, without importing ``scipy.stats``.

Importing ``scipy.stats`` costs ~1.1 CPU s (scipy 1.17, measured on the dev machine:
``import scipy.stats`` 1.16 s against 0.28 s for ``scipy.special``), more than the whole
``label_balance`` check of a release, and ``label_balance``, ``lengths``, ``cues`` and the
partial-input verdict each needed it on a first (cold) ``validate``. The tests here are the
closed forms scipy itself evaluates, with its own special functions and in its order of
floating-point operations, so every statistic and p-value is the same float:

* :func:`chisquare_uniform` is ``scipy.stats.chisquare(counts)`` (Pearson, uniform expected
  counts): ``sum((obs - mean)**2 / mean)``, p = ``chdtrc(k - 1, stat)``;
* :func:`binomtest_greater` is ``scipy.stats.binomtest(k, n, p, alternative="greater").pvalue``:
  ``binom.sf(k - 1, n, p)``, the same boost ``_binom_sf`` ufunc with ``rv_discrete.sf``'s
  support rules (1 below the support, 0 from ``n`` on);
* :func:`kruskal` is ``scipy.stats.kruskal(*groups)``: average ranks with the tie
  correction, p = ``chdtrc(groups - 1, h)``.

``tests/test_validation_pvalues.py`` holds each to scipy.stats with ``==`` on the real
releases' inputs and on random ones with ties and edge cases; a scipy upgrade that changes
either side fails there.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


def chisquare_uniform(counts: Sequence[int] | np.ndarray) -> tuple[float, float]:
    """(statistic, p-value) of Pearson's chi-squared test of ``counts`` against uniform."""
    from scipy.special import chdtrc

    obs = np.asarray(counts, dtype=np.float64)
    expected = np.mean(obs, keepdims=True)
    stat = np.sum((obs - expected) ** 2 / expected)
    return float(stat), float(chdtrc(np.float64(len(obs) - 1), stat))


def binomtest_greater(k: int, n: int, p: float) -> float:
    """One-sided binomial test p-value: P(X >= k) for X ~ Binomial(n, p)."""
    if not 0 <= k <= n or n < 1 or not 0 <= p <= 1:
        raise ValueError(f"binomial test needs 0 <= k <= n, n >= 1, 0 <= p <= 1 (got k={k}, n={n}, p={p})")
    x = k - 1
    if x < 0:
        return 1.0
    if x >= n:
        return 0.0
    from scipy.special._ufuncs import _binom_sf  # what scipy.stats.binom.sf evaluates

    return float(np.clip(_binom_sf(np.float64(x), np.float64(n), np.float64(p)), 0, 1))


def kruskal(*groups: np.ndarray) -> tuple[float, float]:
    """(H, p-value) of the Kruskal-Wallis H test of the groups (each at least one value)."""
    from scipy.special import chdtrc

    samples = [np.asarray(g, dtype=np.float64) for g in groups]
    sizes = [len(s) for s in samples]
    total = sum(sizes)
    data = np.concatenate(samples)
    order = np.argsort(data, kind="stable")
    ranked_sorted, ties = _average_ranks_sorted(data[order])
    ranked = np.empty_like(ranked_sorted)
    ranked[order] = ranked_sorted
    tie_term = 1 - np.sum(ties**3 - ties) / (total**3 - total)
    bounds = np.cumsum([0, *sizes])
    ssbn = sum(np.sum(ranked[bounds[i] : bounds[i + 1]]) ** 2 / sizes[i] for i in range(len(sizes)))
    h = 12.0 / (total * (total + 1)) * ssbn - 3 * (total + 1)
    h /= tie_term
    return float(h), float(chdtrc(np.float64(len(samples) - 1), h))


def _average_ranks_sorted(y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Average ranks of sorted values, and the size of each tie group (zeros elsewhere), as
    ``scipy.stats._stats_py._rankdata(method="average", return_ties=True)`` computes them."""
    n = len(y)
    first = np.concatenate(([True], y[:-1] != y[1:]))
    starts = np.arange(n)[first]
    counts = np.diff(starts, append=n)
    ranks = np.arange(1, n + 1, dtype=np.float64)[first] + (counts.astype(np.float64) - 1) / 2
    ties = np.zeros(n, dtype=np.float64)
    ties[first] = counts
    return np.repeat(ranks, counts), ties
