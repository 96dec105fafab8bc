"""Baselines: cheap (majority, copy, length, partial input) and model-backed."""
