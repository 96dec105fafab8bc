"""The report's figure cache: a cached figure is the figure a fresh render gives, never a stale one."""

from __future__ import annotations

import base64

import pytest
from benchsmith.validation import report

HIST = {"kind": "hist", "title": "et: premise length", "xlabel": "tokens", "ylabel": "share of examples",
        "edges": [3, 4, 5, 6], "series": {"validation": [0.2, 0.5, 0.3], "test": [0.1, 0.6, 0.3]}}
BARH = {"kind": "barh", "title": "cues", "labels": ["a rather long cue label", "b"], "values": [0.7, 0.2],
        "reference": [0.5, 0.5]}


def cached(home) -> list:
    return sorted((home / "cache" / "figures").glob("*.png"))


def test_a_cached_figure_is_the_fresh_render_and_is_used(tmp_path, monkeypatch):
    monkeypatch.setenv("BENCHSMITH_HOME", str(tmp_path))
    fresh = report._render(HIST)
    assert fresh[:8] == b"\x89PNG\r\n\x1a\n" and report._render(HIST) == fresh  # Agg: same input, same bytes
    assert base64.b64decode(report._png(HIST)) == fresh
    assert len(cached(tmp_path)) == 1

    def no_render(spec):
        raise AssertionError("drawn again")

    monkeypatch.setattr(report, "_render", no_render)
    assert base64.b64decode(report._png(HIST)) == fresh  # from the cache
    with pytest.raises(AssertionError, match="drawn again"):  # another spec is another key
        report._png(HIST | {"title": "zh: premise length"})


def test_a_new_draw_version_or_matplotlib_never_reads_an_old_figure(tmp_path, monkeypatch):
    monkeypatch.setenv("BENCHSMITH_HOME", str(tmp_path))
    report._png(BARH)
    monkeypatch.setattr(report, "_DRAW_VERSION", report._DRAW_VERSION + "-next")
    report._png(BARH)
    assert len(cached(tmp_path)) == 2


def test_the_cache_keeps_its_size_and_a_broken_cache_never_fails_a_report(tmp_path, monkeypatch):
    monkeypatch.setenv("BENCHSMITH_HOME", str(tmp_path))
    monkeypatch.setattr(report, "FIGURE_CACHE_FILES", 2)
    for n in range(4):
        report._png(HIST | {"title": f"figure {n}"})
    assert len(cached(tmp_path)) == 4
    report._prune_figure_cache()
    assert len(cached(tmp_path)) == 2
    home = tmp_path / "not-a-folder"
    home.write_text("a file where the cache should be")
    monkeypatch.setenv("BENCHSMITH_HOME", str(home))
    assert base64.b64decode(report._png(BARH)) == report._render(BARH)
    report._prune_figure_cache()
