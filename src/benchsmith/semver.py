"""Release versions are semantic versions (MAJOR.MINOR.PATCH)."""

from __future__ import annotations

from benchsmith.errors import ConfigError


def parse_version(v: str) -> tuple[int, int, int]:
    """``"1.2.3"`` -> ``(1, 2, 3)``; anything else is a ConfigError."""
    parts = str(v).split(".")
    if len(parts) != 3 or not all(p.isdigit() for p in parts):
        raise ConfigError(f"version {v!r} is not semantic (MAJOR.MINOR.PATCH)", hint="Use e.g. 1.0.0")
    return tuple(int(p) for p in parts)  # type: ignore[return-value]
