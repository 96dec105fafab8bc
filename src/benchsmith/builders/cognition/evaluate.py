"""The agreement measurement of the CTER rules (README, "Evaluation"): how often a rule flags a
human reference, how often it catches a swapped one. The metrics themselves (BLEU, CTER) and the
translations reader are in ``metric.py``.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from typing import Any

from .metric import CompoundJudge


def reference_agreement(rows: Sequence[Mapping], judge: CompoundJudge) -> dict[str, Any]:
    """How the judgement behaves on data whose verdict is known without annotators.

    * ``references``: each human reference judged as the translation of its own
      compound: all are correct, so every flag is a false error.
    * ``swapped``: for lines that share an English template (the same sentence
      with another compound), the reference of the *other* line judged as the
      translation of this one: wrong by construction when the atoms differ, so
      every pass is a missed error (pairs whose atoms are a superset are still
      counted: additions are invisible to a lexicon rule).
    """
    flagged = sum(not judge.judge(r["zh"], r["atoms"]).correct for r in rows)
    by_template: dict[str, list[int]] = defaultdict(list)
    for i, r in enumerate(rows):
        by_template[f" {r['en']} ".replace(f" {r['compound']} ", " <X> ", 1)].append(i)
    pairs = [(a, b) for v in by_template.values() for a, b in zip(v, v[1:] + v[:1])
             if a != b and rows[a]["compound"] != rows[b]["compound"]]
    caught = sum(not judge.judge(rows[b]["zh"], rows[a]["atoms"]).correct for a, b in pairs)
    return {
        "references": len(rows), "references_flagged": flagged,
        "false_error_rate": round(100 * flagged / len(rows), 2) if rows else None,
        "swapped": len(pairs), "swapped_caught": caught,
        "error_recall": round(100 * caught / len(pairs), 2) if pairs else None,
    }
