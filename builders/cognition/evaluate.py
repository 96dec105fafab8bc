"""Scoring translations of CoGnition's test sets (``benchsmith evaluate cognition``).

Predictions: a UTF-8 text file with one translation per test sentence, in the
order of the released files (``cg-test.en`` for ``--split cg_test``, ``test.en``
for ``--split test``). Chinese may be word-segmented with spaces or not, and
subword-nmt joiners (``@@ ``) are undone: both are normalised away before scoring
(:func:`benchsmith.builders.cognition.metric.normalise`).

Figures:

* BLEU (``bleu="char"``, the default): sacrebleu with its ``zh`` tokenizer (every
  Chinese character is a token: character-level BLEU) against the released reference
  with its segmentation spaces removed; the signature is sacrebleu's own. This is the
  paper's BLEU: "We report character-level BLEU scores using SacreBLEU" (Li et al.,
  ACL 2021, Section 5.1), and upstream's ``scripts/infer-one-click-run.sh`` removes every
  space from the hypothesis and runs ``sacrebleu -l en-zh`` (whose default tokenizer for a
  Chinese target is ``zh``). Table 6's 69.58 / 48.66 are therefore character-level.
* BLEU (``bleu="jieba"``): word-level BLEU over jieba (accurate mode) segmentations of
  hypothesis and reference, sacrebleu with ``tokenize="none"``; the signature ends with
  ``|seg:jieba-<version>``. The training pipeline segments Chinese with jieba (Section 5.1:
  "The Chinese sentences are segmented by jieba segmenter"), so this is the BLEU of that
  pipeline's tokens; it is not comparable with the paper's figures.
* CTER (``--split cg_test`` only): :class:`benchsmith.builders.cognition.metric.CTER`
  (the scorer, on the :class:`~benchsmith.validation.metric.Metric` base; ``rule="paper"`` by
  default, i.e. upstream's eval.py, ``"cter-v2"`` on request), instance and
  aggregate level, overall and per NP / VP / PP; ``cter_signature`` is that score's result
  signature (every option that moves the number, then the line and compound counts).

This module is the command's glue (predictions file, BLEU, CTER, per-line details) and
the agreement measurement of the README; the scoring rule itself lives in ``metric.py``.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from benchsmith.validation import predictions as pred_files

from benchsmith.errors import ConfigError, PredictionError, did_you_mean
from benchsmith.release import write_text_atomic

from .atoms import CATEGORIES
from .metric import CTER, CompoundJudge, Lexicon, Verdict, normalise

if TYPE_CHECKING:
    from benchsmith.release import Release

SPLITS = {"cg_test": ("cg_test", "test"), "test": ("parallel", "test")}


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


#: how BLEU tokenises Chinese: ``char`` (the paper's, default) or ``jieba`` words
BLEU_TOKENISATIONS = ("char", "jieba")


def bleu(hypotheses: Sequence[str], references: Sequence[str], tokenisation: str = "char") -> dict[str, Any]:
    """Corpus BLEU (0-100) and its signature; ``tokenisation`` as in the module docstring."""
    import sacrebleu

    if tokenisation not in BLEU_TOKENISATIONS:
        raise ConfigError(f"unknown BLEU tokenisation {tokenisation!r}",
                          hint=did_you_mean(tokenisation, BLEU_TOKENISATIONS))
    hyps, refs = [normalise(h) for h in hypotheses], [normalise(r) for r in references]
    if tokenisation == "char":
        metric = sacrebleu.BLEU(tokenize="zh")
        score = metric.corpus_score(hyps, [refs])
        return {"score": round(score.score, 2), "tokenisation": "char", "signature": str(metric.get_signature())}
    import jieba

    from benchsmith.nlp.segment import segment

    metric = sacrebleu.BLEU(tokenize="none")
    score = metric.corpus_score([" ".join(segment(h)) for h in hyps], [[" ".join(segment(r)) for r in refs]])
    return {"score": round(score.score, 2), "tokenisation": "jieba",
            "signature": f"{metric.get_signature()}|seg:jieba-{jieba.__version__}"}


def evaluate(release: Release, predictions: Path, split: str = "cg_test", rule: str = "paper",
             details: Path | None = None, bleu_tokenisation: str = "char") -> dict[str, Any]:
    """Score ``predictions`` against ``release``; optionally write per-line details (JSON lines)."""
    if split not in SPLITS:
        raise ConfigError(f"cannot evaluate split {split!r}", hint=did_you_mean(split, SPLITS))
    if bleu_tokenisation not in BLEU_TOKENISATIONS:
        raise ConfigError(f"unknown BLEU tokenisation {bleu_tokenisation!r}",
                          hint=did_you_mean(bleu_tokenisation, BLEU_TOKENISATIONS))
    config, split_name = SPLITS[split]
    rows = list(release.examples(config, split_name))
    ids = [r["id"] for r in rows]
    hyps = read_predictions(Path(predictions), len(rows), ids)
    out: dict[str, Any] = {
        "dataset": release.name, "version": release.version, "split": split, "n": len(rows),
        "bleu": bleu(hyps, [r["zh"] for r in rows], bleu_tokenisation),
    }
    if split != "cg_test":
        return out
    cats = [CATEGORIES[r["category"]] if isinstance(r["category"], int) else r["category"] for r in rows]
    score = CTER(Lexicon.from_release(release), rule).score(
        hyps, [r["atoms"] for r in rows], [r["compound"] for r in rows], cats)
    out["cter"] = {k: v.to_dict() for k, v in score.groups.items()}
    out["cter_signature"] = score.signature
    if details is not None:
        write_details(details, rows, score.verdicts)
        out["details"] = str(details)
    return out


def write_details(path: Path, rows: Sequence[Mapping], verdicts: Sequence[Verdict]) -> None:
    """One JSON object per line: id, compound, correct, failed rules (and, for the paper rule,
    eval.py's flag); written atomically."""
    write_text_atomic(Path(path), "".join(
        json.dumps({"id": row["id"], "compound": row["compound"], "correct": v.correct, "failures": list(v.failures),
                    **({"flag": v.flag} if v.flag is not None else {})},
                   ensure_ascii=False) + "\n"
        for row, v in zip(rows, verdicts, strict=True)))


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
