"""XCOPA's words for the lm-evaluation-harness tasks shipped with a release (``cards/lm_eval.py``).

lm-eval's built-in ``xcopa_<lang>`` tasks (``tasks/xcopa/utils.py``) join the premise and a
choice with a connector word per language, for ``cause`` and ``effect``. The card's lm-eval
files use them for a COPA-shaped config in one of these languages (so our tasks score as the
built-in ones do); the XCOPA builder hands them over as ``Xcopa.lm_eval_connectors``, as
generic card code names no dataset. English is ``tasks/super_glue/copa/utils.py``'s (the
cards' default). A test compares them with the installed lm-eval.
"""

from __future__ import annotations

#: (cause, effect) connector per XCOPA language, as lm-eval's ``tasks/xcopa/utils.py`` has them
CONNECTORS: dict[str, tuple[str, str]] = {
    "en": ("because", "therefore"),
    "et": ("sest", "seetõttu"),
    "ht": ("poukisa", "donk sa"),
    "it": ("perché", "quindi"),
    "id": ("karena", "maka"),
    "qu": ("imataq", "chaymi"),
    "sw": ("kwa sababu", "kwa hiyo"),
    "zh": ("因为", "所以"),
    "ta": ("காரணமாக", "எனவே"),
    "th": ("เพราะ", "ดังนั้น"),
    "tr": ("çünkü", "bu yüzden"),
    "vi": ("bởi vì", "vì vậy"),
}

__all__ = ["CONNECTORS"]
