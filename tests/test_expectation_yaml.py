"""A builder's data files in YAML (``published.yaml``, ``known_artifacts.yaml``): invalid YAML is
one error naming the file and the line."""

from __future__ import annotations

import pytest

from benchsmith.errors import ParseError
from benchsmith.expectation import read_yaml


def test_invalid_yaml_is_a_parse_error_naming_the_line(tmp_path):
    bad = tmp_path / "published.yaml"
    bad.write_text("figures:\n  - id: a\n    value: [1, 2\n  - id: b\n", encoding="utf-8")
    with pytest.raises(ParseError) as err:
        read_yaml(bad)
    assert err.value.line == 4 and str(bad) in str(err.value)
    assert read_yaml(tmp_path / "none.yaml") is None
    (tmp_path / "empty.yaml").write_text("", encoding="utf-8")
    assert read_yaml(tmp_path / "empty.yaml") == {}
