"""Release versions are semantic versions (MAJOR.MINOR.PATCH)."""

from __future__ import annotations

from benchsmith.errors import ConfigError


def parse_version(v: str) -> tuple[int, int, int]:
    """``"1.2.3"`` -> ``(1, 2, 3)``; anything else is a ConfigError."""
    parts = str(v).split(".")
    # ASCII digits only, 18 at most a part: a 5,000-digit part would pass isdigit() and then
    # break int() (Python's 4,300-digit limit), and no version needs more
    if len(parts) != 3 or not all(p.isascii() and p.isdigit() and len(p) <= 18 for p in parts):
        shown = repr(v) if len(str(v)) <= 40 else f"{str(v)[:37]!r}... ({len(str(v)):,} characters)"
        raise ConfigError(f"version {shown} is not semantic (MAJOR.MINOR.PATCH, each a number of at most 18 digits)",
                          hint="Use e.g. 1.0.0")
    return tuple(int(p) for p in parts)  # type: ignore[return-value]
