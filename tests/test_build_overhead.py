"""The cheaper card statistics of a build (issue 16) give exactly what the slower paths gave.

* Fleiss' kappa in numpy is the same float as statsmodels' (the reference, kept here) on the
  real release's translator matrices and on random ones;
* the card's read-once view of a release serves the same tables as ``Release.table``, and a
  builder's card sections come out the same through it;
* XCOPA's cached jieba word counts equal the segmented ones, and a rebuild of the same texts
  never starts jieba;
* rendering XCOPA's card imports neither statsmodels nor scipy.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pytest
from benchsmith.builders.xcopa import audit
from benchsmith.builders.xcopa.agreement import fleiss, translator_matrix
from benchsmith.cards.card import _ReadOnce
from benchsmith.loaders.xcopa_jsonl import LANGUAGES

from benchsmith.builder import get_builder


def _statsmodels_fleiss(labels):
    inter_rater = pytest.importorskip("statsmodels.stats.inter_rater")
    table, _ = inter_rater.aggregate_raters(np.array(labels), n_cat=2)
    return float(inter_rater.fleiss_kappa(table, method="fleiss"))


@pytest.mark.parametrize("seed", range(20))
def test_fleiss_is_statsmodels_on_random_matrices(seed):
    rng = np.random.default_rng(seed)
    items, raters = int(rng.integers(2, 300)), int(rng.integers(2, 15))
    labels = (rng.random((items, raters)) < rng.random()).astype(int)
    labels[0] = 0  # both categories present
    labels[1] = 1
    assert fleiss(labels.tolist()) == _statsmodels_fleiss(labels.tolist())


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
def test_fleiss_is_statsmodels_on_the_real_translators(release):
    for split in ("validation", "test"):
        matrix = translator_matrix(release, split, list(LANGUAGES))
        assert len(matrix) in (100, 500) and len(matrix[0]) == 11
        assert fleiss(matrix) == _statsmodels_fleiss(matrix)  # the same float, not approximately


@pytest.mark.realdata
def test_read_once_serves_the_release_tables(release):
    view = _ReadOnce(release)
    for config in release.configs():
        for split in release.splits(config):
            whole = release.table(config, split)
            assert view.table(config, split).equals(whole, check_metadata=True)
            for columns in (["idx"], ["premise", "choice1", "choice2"], ["label", "question"]):
                cols = [c for c in columns if c in whole.column_names]
                assert view.table(config, split, cols).equals(release.table(config, split, cols), check_metadata=True)
    assert len(view._tables) == sum(len(release.splits(c)) for c in release.configs())  # one read per split
    assert view.info is release.info and view.path == release.path


@pytest.mark.realdata
def test_xcopa_card_sections_are_the_same_through_the_read_once_view(release):
    b = get_builder("xcopa")
    assert b.card_sections(_ReadOnce(release)) == b.card_sections(release)


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


def test_exact_mean_matches_statistics_mean():
    from statistics import mean

    for values in ([1], [2, 4], [1, 2], [3, 3, 4], list(range(1, 1000)), [7] * 10, [10**17, 1, 2]):
        assert audit._mean(values) == mean(values) and type(audit._mean(values)) is type(mean(values))
        assert round(audit._mean(values), 1) == round(mean(values), 1)


@pytest.mark.realdata
def test_xcopa_card_imports_neither_statsmodels_nor_scipy(release, tmp_path):
    code = (
        "import sys\n"
        "from benchsmith.builder import get_builder\n"
        "from benchsmith.cards.card import render_card\n"
        "from benchsmith.release import Release\n"
        f"render_card(Release({str(release.path)!r}), get_builder('xcopa'))\n"
        "heavy = sorted(m for m in ('statsmodels', 'scipy', 'scipy.stats') if m in sys.modules)\n"
        "print(','.join(heavy))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         env={**os.environ, "BENCHSMITH_HOME": str(tmp_path)})
    assert out.stdout.strip() == "", out.stdout


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
