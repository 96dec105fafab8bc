"""Words and Moses tokens of a plain sentence, counted without running the Moses tokeniser.

``mucow_source_length`` needs, for each scoring source it cannot bound away (``checks.source_lengths``),
its number of words (Moses tokens with a letter or digit) and of Moses tokens. On the real release that
is 5,076 of 18,051 sources, 5,005 of them really 10 words or fewer, and ``MosesTokenizer.tokenize``
costs ~0.18 ms each. Most of them are plain sentences, for which the count follows from
what Moses does, with the tokeniser's own character class (``IsAlnum``) and nonbreaking prefixes:

* a *plain* text is pieces of word characters (``IsAlnum`` and ``str.isalnum``) and hyphens,
  single spaces, ASCII marks outside ``IsAlnum`` (``!"#$%&()*+/:;<=>?@[\\]^_{|}~``), commas each
  before a space, and full stops each right after a word character and before a space or at the
  end; no leading or trailing space, no ``MULTI`` (Moses turns ``DOTMULTI`` back into dots);
* Moses pads each of those marks with spaces (``PAD_NOT_ISALNUM``), pads a comma before a
  non-digit (``COMMA_SEPARATE_2``; a space is no digit), never splits a run of ``IsAlnum``
  characters (every rule inserts its space next to a character outside it), leaves a hyphen where it
  is (no rule but the aggressive split, which is off, touches one), and splits a full stop off
  its piece unless the piece is a nonbreaking prefix (not a numeric-only one) of the language, or
  the next token starts with a lowercase letter (``IsLower``), or the piece is a numeric-only
  prefix and the next token starts with an ASCII digit (``handles_nonbreaking_prefixes``; the
  next token of a stop inside the text starts with the character after its space);
* so tokens = pieces + marks + commas + (1 per stop split off), and words = the pieces
  with a word character (a hyphen, a mark, a comma or a stop has no letter or digit).

Any other text (apostrophes, dashes other than ``-``, a comma inside a number, quotes outside
ASCII, an abbreviation with dots, an ellipsis...) returns None and is tokenised (real release:
1,079 of the 5,076 sources; the check 1.0 against 1.6 CPU s). The tokeniser's character class and
prefixes come from sacremoses. tests/test_mucow_checks.py compares the
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
    alnum, marks, plain, runs, inner = _patterns(alnum_class)
    separate = str.maketrans("", "", marks + ",")
    numeric_only = set(moses.NUMERIC_ONLY_PREFIXES)
    prefixes = set(moses.NONBREAKING_PREFIXES) - numeric_only
    lower = set(moses.IsLower)

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
        if stop:  # the stop follows a word character (checked above): the last piece is its token
            tokens += 0 if found[-1] in prefixes else 1
        for m in inner.finditer(body) if "." in body else ():  # a stop inside: the next token decides
            prefix, after = m.group(1), m.group(2)
            kept = prefix in prefixes or after in lower or (prefix in numeric_only and after in "0123456789")
            tokens += 0 if kept else 1
        return sum(1 for piece in found if piece.strip("-")), tokens

    return count


@lru_cache(maxsize=4)
def _patterns(alnum_class: str) -> tuple[set[str], str, re.Pattern[str], re.Pattern[str], re.Pattern[str]]:
    """What :func:`plain_counts` reads of a Moses ``IsAlnum`` class (the same string for every
    language but Chinese, Japanese and Korean: built once)."""
    alnum = set(alnum_class)
    marks = "".join(c for c in MARKS if c not in alnum)
    word_chars = "".join(sorted(c for c in alnum if c.isalnum()))
    word = f"[{re.escape(word_chars)}]"
    # words separated by single spaces or marks; a comma only before a space, a stop only after a
    # word character and before a space
    plain = re.compile(rf"(?:{word}|-|[{re.escape(marks)}]|,(?= )|(?<={word})\.(?= )| (?! ))*")
    # a stop inside the text: the piece it ends, and the first character of the next token
    inner = re.compile(rf"((?:{word}|-)+)\.(?= (.))")
    return alnum, marks, plain, re.compile(f"(?:{word}|-)+"), inner
