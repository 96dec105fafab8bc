"""Adapters for NLP backends (tagging, parsing, segmentation, tokenisation).

Nothing here downloads a model: every backend loads a locally installed one and
raises :class:`benchsmith.errors.ConfigError` naming what to install otherwise.
"""
