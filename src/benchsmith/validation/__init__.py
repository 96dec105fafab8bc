"""Validation: checks, official-compatible metrics, baselines, reports and the gate."""
