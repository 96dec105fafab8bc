"""Generic checks run on every release.

Importing this package registers them (``register_check``), in report order.
"""

from benchsmith.validation.checks import artifacts, distribution, integrity, leakage, translation
from benchsmith.validation.contamination import check as contamination

__all__ = ["artifacts", "contamination", "distribution", "integrity", "leakage", "translation"]
