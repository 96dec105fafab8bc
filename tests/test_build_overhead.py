"""XCOPA's card statistics: Fleiss' kappa, cached word counts (a rebuild of the same texts
never starts jieba), means and the text-order memo.
"""

from __future__ import annotations

import json

import pytest

from benchsmith.builders.xcopa import audit
from benchsmith.builders.xcopa.agreement import fleiss


@pytest.mark.parametrize(("labels", "kappa"), [
    ([[0, 0], [1, 1]], 1.0),  # full agreement
    ([[0, 1], [1, 0]], -1.0),  # every pair split, categories balanced
    ([[0, 0, 0], [0, 0, 1], [1, 1, 1]], 0.55),  # P = 7/9, Pe = 41/81: (7/9 - 41/81) / (40/81)
])
def test_fleiss(labels, kappa):
    assert fleiss(labels) == pytest.approx(kappa)


def test_fleiss_rejects_what_statsmodels_cannot_count():
    with pytest.raises(ValueError):
        fleiss([[0, 2], [1, 1]])
    with pytest.raises(ValueError):
        fleiss([0, 1, 1])


@pytest.fixture(scope="module")
def release(real_xcopa):
    """XCOPA's current version from the real data (tests/conftest.py: shared read-only)."""
    return real_xcopa


@pytest.mark.realdata
def test_cached_word_counts_equal_segmented_ones(release, monkeypatch):
    pytest.importorskip("jieba")
    segmented = audit.text_lengths(release, cache=False)
    assert segmented["zh"]["words_by"] == "jieba" and segmented["zh"]["premise_words"] is not None
    first = audit.text_lengths(release)  # fills the cache
    assert first == segmented
    cached = json.loads(audit._word_cache_path().read_text(encoding="utf-8"))
    assert list(cached.values()) == [[segmented["zh"]["premise_words"], segmented["zh"]["choice_words"]]]

    def no_segmenter(lang):
        if lang == "zh":
            raise AssertionError("a cached language must not start its segmenter")
        return orig(lang)

    orig = audit.word_counter
    monkeypatch.setattr(audit, "word_counter", no_segmenter)
    again = audit.text_lengths(release)
    assert again == segmented
    assert [type(again[c][k]) for c in again for k in again[c]] == [
        type(segmented[c][k]) for c in segmented for k in segmented[c]]


def test_word_cache_key_changes_with_texts_version_and_rule():
    base = audit._word_key("jieba", "0.42.1", ["我想"], ["节约", "能源"])
    assert base == audit._word_key("jieba", "0.42.1", ["我想"], ["节约", "能源"])
    assert base != audit._word_key("jieba", "0.42.2", ["我想"], ["节约", "能源"])
    assert base != audit._word_key("jieba", "0.42.1", ["我想", "节约"], ["能源"])
    assert base != audit._word_key("jieba", "0.42.1", ["我想"], ["节约能源"])


def test_means_are_ints_where_they_are_whole():
    means = [audit._mean_of(t, n) for t, n in ((10, 2), (3, 2), (7, 1), (10**17 + 2, 3))]
    assert means == [5, 1.5, 7, 33_333_333_333_333_334]
    assert type(audit._mean_of(10, 2)) is int and type(audit._mean_of(3, 2)) is float
    with pytest.raises(ValueError):
        audit._mean_of(0, 0)


@pytest.mark.realdata
def test_text_order_memo_is_order_margin(release):
    from collections import Counter

    from benchsmith.builders.xcopa.alignment import order_margin

    for split in ("validation", "test"):
        en = {r["idx"]: r for r in release.table("en", split).to_pylist()}
        margin: Counter = Counter()
        configs = [c for c in release.configs() if c.startswith("translation-")]
        for c in configs:
            for r in release.table(c, split).to_pylist():
                e = en[r["idx"]]
                margin[r["idx"]] += order_margin(r["choice1"], r["choice2"], e["choice1"], e["choice2"])
        got = audit.text_order(release, split)
        assert got == {"reversed": sorted(i for i, m in margin.items() if m > 0), "items": len(margin),
                       "languages": len(configs),
                       "smallest_margin": round(min(abs(m) for m in margin.values()), 3)}
