"""Words and Moses tokens of a plain sentence, counted without running the Moses tokeniser.

``mucow_source_length`` needs, for each scoring source it cannot bound away (``checks.source_lengths``),
its number of words (Moses tokens with a letter or digit) and of Moses tokens. On the real release that
is 5,076 of 18,051 sources, 5,005 of them really 10 words or fewer, and ``MosesTokenizer.tokenize``
costs ~0.18 ms each (~0.9 CPU s). Most of them are plain sentences, for which the count follows from
what Moses does, with the tokeniser's own character class (``IsAlnum``) and nonbreaking prefixes:

* a *plain* text is runs of word characters (``IsAlnum`` and ``str.isalnum``), single spaces,
  ASCII marks outside ``IsAlnum`` (``!"#$%&()*+/:;<=>?@[\\]^_{|}~``), commas each before a space,
  and at most one full stop, as its last character and right after a word character; no leading
  or trailing space, no ``MULTI`` (Moses turns ``DOTMULTI`` back into dots);
* Moses pads each of those marks with spaces (``PAD_NOT_ISALNUM``), pads a comma before a
  non-digit (``COMMA_SEPARATE_2``; a space is no digit), never splits a run of ``IsAlnum``
  characters (every rule inserts its space next to a character outside it), and splits the final
  full stop off its word unless the word is a nonbreaking prefix (not a numeric-only one) of the
  language (``handles_nonbreaking_prefixes``: the last token has no next token to look at);
* so tokens = runs + marks + commas + (1 when the final stop splits off), and words = runs (a mark,
  a comma or a stop has no letter or digit).

Any other text (apostrophes, hyphens, a comma inside a number, quotes outside ASCII, a dot inside
the sentence, an ellipsis...) returns None and is tokenised. Real release: 3,158 of the 5,076
sources are plain (1,918 are tokenised); ``mucow_source_length`` FIGURE (sacremoses' import, ~0.45 s,
stays: the tokeniser's class and prefixes come from it). tests/test_mucow_checks.py compares the
counts with the tokeniser's on every real scoring source (slow), on made-up sentences (every rule
above met and broken) and on random ones.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import lru_cache
from typing import Any

#: ASCII marks that Moses pads when they are outside its ``IsAlnum`` class (checked per tokeniser)
MARKS = '!"#$%&()*+/:;<=>?@[\\]^_{|}~'

Counts = Callable[[str], "tuple[int, int] | None"]


def plain_counts(tokenizer: Any) -> Counts:
    """``count(text) -> (words, tokens)`` for a plain text (module docstring), None for any other,
    from ``tokenizer``'s Moses tokeniser (:class:`benchsmith.nlp.tokenize.Tokenizer`); a tokeniser
    without one counts nothing (every text is tokenised)."""
    moses = getattr(tokenizer, "_moses", None)
    alnum_class = getattr(moses, "IsAlnum", None)
    if moses is None or not isinstance(alnum_class, str):
        return lambda text: None
    alnum, marks, plain, runs = _patterns(alnum_class)
    separate = str.maketrans("", "", marks + ",")
    prefixes = set(moses.NONBREAKING_PREFIXES) - set(moses.NUMERIC_ONLY_PREFIXES)

    def count(text: str) -> tuple[int, int] | None:
        if not text:
            return 0, 0
        if text[0] == " " or "MULTI" in text:
            return None
        stop = text[-1] == "."
        body = text[:-1] if stop else text
        if not body or body[-1] == " " or (stop and body[-1] not in alnum) or not plain.fullmatch(body):
            return None
        found = runs.findall(body)
        tokens = len(found) + len(body) - len(body.translate(separate))  # + each mark and comma
        if stop:  # the stop follows a word character (checked above): the last run is its token
            tokens += 0 if found[-1] in prefixes else 1
        return len(found), tokens

    return count


@lru_cache(maxsize=4)
def _patterns(alnum_class: str) -> tuple[set[str], str, re.Pattern[str], re.Pattern[str]]:
    """What :func:`plain_counts` reads of a Moses ``IsAlnum`` class (the same string for every
    language but Chinese, Japanese and Korean: built once, ~0.045 CPU s)."""
    alnum = set(alnum_class)
    marks = "".join(c for c in MARKS if c not in alnum)
    word_chars = "".join(sorted(c for c in alnum if c.isalnum()))
    word = f"[{re.escape(word_chars)}]"
    # words separated by single spaces or marks; a comma only before a space
    plain = re.compile(rf"(?:{word}|[{re.escape(marks)}]|,(?= )| (?! ))*")
    return alnum, marks, plain, re.compile(f"{word}+")
