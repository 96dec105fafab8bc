"""What every ``validate`` reads before its first check, read fast and read the same:
``published.yaml`` and ``known_artifacts.yaml`` through libyaml's safe loader (benchsmith.expectation)."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from benchsmith.errors import ParseError
from benchsmith.expectation import read_yaml

BUILDERS = Path(__file__).resolve().parent.parent / "src" / "benchsmith" / "builders"
FILES = sorted([*BUILDERS.glob("*/published.yaml"), *BUILDERS.glob("*/known_artifacts.yaml")])


def test_every_builder_file_reads_as_safe_load_reads_it():
    assert len(FILES) >= 6
    for f in FILES:
        assert read_yaml(f) == (yaml.safe_load(f.read_text(encoding="utf-8")) or {}), f


def test_invalid_yaml_is_a_parse_error_naming_the_line(tmp_path):
    bad = tmp_path / "published.yaml"
    bad.write_text("figures:\n  - id: a\n    value: [1, 2\n  - id: b\n", encoding="utf-8")
    with pytest.raises(ParseError) as err:
        read_yaml(bad)
    assert err.value.line == 4 and str(bad) in str(err.value)
    assert read_yaml(tmp_path / "none.yaml") is None
    (tmp_path / "empty.yaml").write_text("", encoding="utf-8")
    assert read_yaml(tmp_path / "empty.yaml") == {}
