"""Readers of raw source formats, each yielding typed records with file:line errors."""
