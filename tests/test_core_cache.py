"""benchsmith.cache: a cache that cannot be read is empty; one that cannot be written costs only time."""

from __future__ import annotations

from conftest import run_cli

from benchsmith import cache


def test_round_trip_and_unreadable_entries(tmp_path, monkeypatch):
    monkeypatch.setenv("BENCHSMITH_HOME", str(tmp_path))
    path = cache.cache_path("x", "entry.json")
    assert path == tmp_path / "cache" / "x" / "entry.json" and cache.read_json(path) is None
    assert cache.write_json(path, {"ü": [1, None]}) and cache.read_json(path) == {"ü": [1, None]}
    path.write_bytes(b"{not json")
    assert cache.read_json(path) is None
    assert sorted(p.name for p in path.parent.iterdir()) == ["entry.json"]  # no temporary left


def test_a_file_where_the_cache_should_be_fails_nothing(tmp_path, monkeypatch, capsys):
    home = tmp_path / "home"
    home.write_text("a file, not a folder")
    monkeypatch.setenv("BENCHSMITH_HOME", str(home))
    assert cache.write_bytes(cache.cache_path("figures", "f.png"), b"png") is False
    assert cache.read_json(cache.cache_path("index.json")) is None
    code, out, err = run_cli(capsys, "list")  # the builder index cannot be kept: listed all the same
    assert code == 0 and "xcopa" in out, err
