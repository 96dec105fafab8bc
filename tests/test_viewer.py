"""The Hub dataset viewer's requirements, checked before a release is pushed."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from validation_helpers import balanced_text_rows, make_release, text_features

from benchsmith.errors import PublishError
from benchsmith.viewer import require_viewer_compatible, viewer_problems


@pytest.fixture
def release(tmp_path):
    return make_release(tmp_path, {"train": balanced_text_rows(30, "tr", 1), "test": balanced_text_rows(10, "te", 2)},
                        text_features())


def test_a_built_release_passes(release):
    assert viewer_problems(release) == []
    require_viewer_compatible(release)


def test_a_shard_with_another_schema_is_named(release):
    shard = release.files("default", "test")[0]
    table = pq.read_table(shard)
    table = table.set_column(table.schema.get_field_index("text"), "text", table["text"].cast(pa.large_string()))
    pq.write_table(table, shard)
    (problem,) = viewer_problems(release)
    assert problem.startswith("data/default/test-") and "field 'text': string vs large_string" in problem
    with pytest.raises(PublishError, match="viewer would not accept.*nothing was uploaded"):
        require_viewer_compatible(release)


def test_card_yaml_that_misses_files_or_does_not_parse_is_named(release):
    card = (release.path / "README.md").read_text(encoding="utf-8")
    assert "path: data/default/test-*.parquet" in card
    wrong = card.replace("path: data/default/test-*.parquet", "path: data/default/tests-*.parquet")
    (problem,) = viewer_problems(release, card_text=wrong)
    assert "data_files ['data/default/tests-*.parquet'] of default/test match []" in problem
    broken = card.replace("configs:", "configs: [", 1)
    assert "does not parse" in viewer_problems(release, card_text=broken)[0]
    unlisted = card.replace("config_name: default", "config_name: other")
    problems = viewer_problems(release, card_text=unlisted)
    assert any("'other', which the release does not have" in p for p in problems)
    assert any("config 'default' is not in configs:" in p for p in problems)


def test_row_groups_over_the_viewer_limit_are_named(release):
    problems = viewer_problems(release, max_row_group_bytes=10)
    assert problems and all("over the viewer's 10 (TooBigContentError)" in p for p in problems)
