"""Kept for existing imports: the base now ships as :mod:`benchsmith.testing.builder`."""

from benchsmith.testing.builder import BuilderTestBase, _take  # noqa: F401
