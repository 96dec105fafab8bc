"""Official-compatible scorers used by validation and ``benchsmith evaluate``."""
