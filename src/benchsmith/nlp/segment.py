"""Chinese word segmentation (jieba) and the helpers around it.

* :func:`segment` cuts Chinese text into words with jieba's default dictionary
  in accurate mode (``cut_all=False``, ``HMM=True``): the tool CoGnition's
  authors used for their released segmentation. The tokenizer is created once
  per process; jieba's start-up chatter is silenced.
* :func:`unsegment` removes the spaces a segmenter put *between* Chinese
  characters (CJK ideographs and full-width punctuation) while keeping spaces
  between Latin words ("iPhone X"), so segmented and raw text compare equal.

Undoing subword-nmt's ``@@ `` joiners is CoGnition's scorer's business
(``benchsmith.builders.cognition.metric.undo_bpe``), not a segmentation concern.

Nothing here downloads anything: jieba ships its dictionary in the wheel.
"""

from __future__ import annotations

import logging
import re
import warnings
from functools import lru_cache

from benchsmith.errors import ConfigError

# CJK ideographs, CJK punctuation, full-width forms: a space next to one of these
# is segmentation, not content.
_CJK = r"\u2e80-\u9fff\uf900-\ufaff\u3000-\u303f\uff00-\uffef"
_SPACE_AFTER_CJK = re.compile(rf"(?<=[{_CJK}])\s+")
_SPACE_BEFORE_CJK = re.compile(rf"\s+(?=[{_CJK}])")


@lru_cache(maxsize=1)
def _tokenizer():
    try:
        with warnings.catch_warnings():  # jieba imports the deprecated pkg_resources
            warnings.simplefilter("ignore")
            import jieba
    except ImportError as exc:  # pragma: no cover - jieba is in the nlp extra
        raise ConfigError(
            "Chinese segmentation needs jieba, which is not installed",
            hint="pip install 'benchsmith[nlp]'",
        ) from exc
    jieba.setLogLevel(logging.WARNING)
    tok = jieba.Tokenizer()
    tok.initialize()
    return tok


def segment(text: str) -> list[str]:
    """jieba accurate-mode words of ``text`` (existing spaces are removed first)."""
    text = unsegment(text)
    return [w for w in _tokenizer().cut(text, cut_all=False, HMM=True) if w.strip()]


def unsegment(text: str) -> str:
    """Drop spaces next to Chinese characters; keep spaces between Latin words."""
    text = _SPACE_AFTER_CJK.sub("", text.strip())
    return _SPACE_BEFORE_CJK.sub("", text)
