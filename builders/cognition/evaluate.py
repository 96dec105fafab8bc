"""Reading CoGnition translation files, and the agreement measurement of the CTER rules.

Predictions (``benchsmith evaluate cognition PREDICTIONS``): a UTF-8 text file with one
translation per test sentence, in the order of the released files (``cg-test.en`` for
``--split cg_test``, ``test.en`` for ``--split test``). Chinese may be word-segmented with spaces
or not, and subword-nmt joiners (``@@ ``) are undone: both are normalised away before scoring
(:func:`benchsmith.builders.cognition.metric.normalise`). The metrics themselves (BLEU, CTER)
are in ``metric.py``; :func:`read_predictions` is what their ``read_predictions`` hook calls.

:func:`reference_agreement` is the measurement of the README's "Evaluation" section (how often
a rule flags a human reference, how often it catches a swapped one).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from benchsmith.validation import predictions as pred_files

from benchsmith.errors import PredictionError

from .metric import CompoundJudge, normalise


def read_predictions(path: Path, expected: int, ids: Sequence[str]) -> list[str]:
    """One translation per line; the count must match the references.

    Read as every scorer reads predictions (:mod:`benchsmith.validation.predictions`): streamed,
    each line checked as it is read, and a file longer than expected stops at its first extra line.

    Raises:
        PredictionError: an unreadable file, invalid UTF-8 or a NUL byte, the wrong number of lines
            or an empty translation (naming the line and id).
    """
    hint = "Translate every line of the source file and keep the order"
    out: list[str] = []
    for lineno, text in pred_files.lines(path, "Pass the file with one translation per test sentence"):
        if lineno > expected:
            raise PredictionError(f"more than {expected} translations, expected {expected} (one per test sentence, "
                                  "in the order of the released files)", path=path, line=lineno, hint=hint)
        if not normalise(text):
            raise PredictionError(f"empty translation for id {ids[lineno - 1]!r}", path=path, line=lineno,
                                  hint="Every test sentence needs a non-empty translation")
        out.append(text)
    if len(out) != expected:
        raise PredictionError(
            f"{len(out)} translations, expected {expected} (one per test sentence, in the order of the "
            "released files)",
            path=path, line=len(out) + 1, hint=hint,
        )
    return out


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
