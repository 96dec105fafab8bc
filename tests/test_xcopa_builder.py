"""The shared builder checks (tests/builder_testing.py) on the XCOPA fixture, both versions.

The fixture holds Estonian and Thai (3 validation + 3 test items each, with
back-translations) and five COPA dev / three COPA test items. ``idx`` is per split, as
upstream, so ids repeat across splits by design.
"""

from __future__ import annotations

from typing import ClassVar

from xcopa_helpers import FIXTURE_CONFIGS, FIXTURES, FixtureXcopa

from benchsmith.testing import BuilderTestBase

XCOPA_FIELDS = ["premise", "choice1", "choice2", "question", "label", "idx", "changed"]


class TestXcopaBuilder(BuilderTestBase):
    builder = FixtureXcopa
    sources = FIXTURES
    configs: ClassVar[list[str]] = FIXTURE_CONFIGS
    counts: ClassVar[dict[str, dict[str, int]]] = {
        "et": {"validation": 3, "test": 3},
        "th": {"validation": 3, "test": 3},
        "translation-et": {"validation": 3, "test": 3},
        "translation-th": {"validation": 3, "test": 3},
        "en": {"train": 2, "validation": 3, "test": 3},
    }
    features: ClassVar[dict[str, list[str]]] = {
        "et": XCOPA_FIELDS,
        "th": XCOPA_FIELDS,
        "translation-et": XCOPA_FIELDS,
        "translation-th": XCOPA_FIELDS,
        "en": [*XCOPA_FIELDS, "copa_id"],
    }
    ids_repeat_across_splits = True


class TestXcopaBuilderUpstream(TestXcopaBuilder):
    """1.0.0: upstream's values, the question errata pending."""

    version = "1.0.0"
