"""Which characters make a word, in any script: the tokeniser of the statistics checks and the
definition the contamination matcher's vectorised tokeniser follows.

Imports nothing heavy: a Dask worker that scans a corpus loads this, not ``datasets``.
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

# Scripts written without spaces between words get one token per character: CJK
# ideographs, kana and Hangul syllables, and the Southeast Asian abugidas Thai, Lao,
# Myanmar and Khmer (a character there is a base letter with its combining vowel and
# tone marks: "ที่" is one token). Without a word segmenter a Thai sentence would
# otherwise be a single "word". Other scripts split on runs of word characters *and
# combining marks*: Python's \w leaves out marks (Mn, Mc), which would cut Tamil or
# Hindi words at every vowel sign; punctuation marks are tokens of their own. Marks
# are collected from the BMP once, on first use, as ranges (about 190; no third-party
# regex engine needed).
_CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff\U00020000-\U0003134f"
_SEA = "\u0e00-\u0eff\u1000-\u109f\u1780-\u17ff"  # Thai, Lao, Myanmar, Khmer
NO_SPACES = _CJK + _SEA


def mark_class() -> str:
    """The combining marks (categories Mn, Mc, Me) of the BMP as a regex character class of ranges."""
    ranges: list[list[int]] = []
    for c in range(0x300, 0x10000):
        if unicodedata.category(chr(c)).startswith("M"):
            if ranges and ranges[-1][1] == c - 1:
                ranges[-1][1] = c
            else:
                ranges.append([c, c])
    return "".join(re.escape(chr(a)) if a == b else f"{re.escape(chr(a))}-{re.escape(chr(b))}" for a, b in ranges)


@lru_cache(maxsize=1)
def token_pattern() -> re.Pattern[str]:
    marks = mark_class()
    return re.compile(rf"[{NO_SPACES}][{marks}]*|(?:[^\W{NO_SPACES}]|[{marks}])+|[^\w\s{marks}]")


def tokens(text: str) -> list[str]:
    """Language-agnostic tokens: word runs (with their combining marks), single characters
    of scripts written without spaces (CJK, Thai, Lao, Myanmar, Khmer; a character with its
    combining marks), punctuation."""
    return token_pattern().findall(text)


@lru_cache(maxsize=1)
def word_pattern() -> re.Pattern[str]:
    """:func:`tokens`' pattern without its punctuation alternative: word runs (with their
    combining marks) and single characters of scripts written without spaces. Contamination
    matching reads words only, so punctuation never decides whether two texts overlap."""
    marks = mark_class()
    return re.compile(rf"[{NO_SPACES}][{marks}]*|(?:[^\W{NO_SPACES}]|[{marks}])+")
