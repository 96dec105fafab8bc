"""Builders declare ``datasets.Features``: every config of every builder does, and its Arrow schema
builds; a plain mapping of feature types is accepted; anything else is a one-line ConfigError naming
the config."""

from __future__ import annotations

import datasets
import pytest

from benchsmith.builder import Config, builders
from benchsmith.errors import ConfigError


def test_every_builder_config_declares_datasets_features():
    seen = set()
    for name, cls in sorted(builders().items()):
        for config in cls().configs():
            assert type(config.features) is datasets.Features, (name, config.name)
            assert config.features.arrow_schema.names == list(config.features)
            assert datasets.Features.from_dict(config.features.to_dict()) == config.features
            seen.add(name)
    assert {"comve", "xcopa", "mucow", "cognition"} <= seen


def test_a_plain_mapping_of_feature_types_becomes_features():
    declared = {"id": datasets.Value("string"), "label": datasets.ClassLabel(names=["a", "b"])}
    config = Config("c", "d", declared)
    assert type(config.features) is datasets.Features
    assert config.features["label"].str2int("b") == 1


@pytest.mark.parametrize("features, says", [(5, "features must be a datasets.Features mapping, not int"),
                                             ({"x": "string"}, "features are not datasets feature types")])
def test_features_that_are_not_feature_types_are_a_config_error(features, says):
    with pytest.raises(ConfigError, match=f"config 'c': {says}") as err:
        Config("c", "d", features)
    assert "datasets.Features" in str(err.value.hint) and "\n" not in str(err.value)
