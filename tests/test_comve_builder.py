"""ComVE on the shared builder test base (tests/builder_testing.py), on tests/fixtures/comve.

The good fixture's trial split carries upstream-like defects (see comve_helpers), so 1.1.0
applies the fixture's errata.tsv through the core applier and 1.0.0 does not: the two
classes below check both versions. ComVE's ids are upstream's, which restart in every split
(trial "1" and train "1" are different instances): ids repeat across splits by design.
"""

from __future__ import annotations

from comve_helpers import GOOD, FixtureComVE

from benchsmith.testing import BuilderTestBase

SPLITS = ("train", "validation", "test", "trial")
FEATURES = {
    "subtask_a": ["id", "sent0", "sent1", "label"],
    "subtask_b": ["id", "false_sent", "option_a", "option_b", "option_c", "label"],
    "subtask_c": ["id", "false_sent", "references"],
    "tuples": ["id", "sensical_statement", "nonsensical_statement", "correct_reason", "confusing_reason1",
               "confusing_reason2", "references"],
}


def _counts(trial_b: int) -> dict[str, dict[str, int]]:
    full = dict(zip(SPLITS, (4, 3, 3, 2)))
    return {c: {**full, "trial": trial_b} if c == "subtask_b" else dict(full) for c in FEATURES}


class TestComveBuilder(BuilderTestBase):
    builder = FixtureComVE
    sources = GOOD
    counts = _counts(trial_b=1)  # erratum train-degenerate-options leaves trial 2 out of subtask_b
    features = FEATURES
    ids_repeat_across_splits = True


class TestComveBuilderUpstream(BuilderTestBase):
    builder = FixtureComVE
    sources = GOOD
    version = "1.0.0"
    counts = _counts(trial_b=2)
    features = FEATURES
    ids_repeat_across_splits = True
