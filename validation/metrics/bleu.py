"""Corpus BLEU with the options that official task scorers differ on.

sacrebleu's ``BLEU`` always takes the *closest* reference length for the brevity
penalty. Older task scorers (the tensorflow/nmt ``bleu.py`` lineage, which the
ComVE / SemEval-2020 Task 4 subtask C scorer copies) take the *shortest*
reference, count whitespace tokens and skip empty references. :class:`CorpusBLEU`
reproduces either: sacrebleu extracts the n-grams and combines the sufficient
statistics (``BLEU.compute_bleu``); only the reference length and the
n-gram clipping across references are gathered here, exactly as both do it
(clip each n-gram by its maximum count over the references).

The official ComVE subtask C figure is ``CorpusBLEU()`` with the defaults
(``max_order=4, tokenize="whitespace", smooth="none", ref_length="shortest"``),
on the 0-100 scale the official script prints.

``smooth="lin2004"`` is the official script's ``--smooth`` (add one to the matches
and totals of *every* order, Lin and Och 2004); sacrebleu's ``add-k`` skips
unigrams, so it is a different number.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar

import sacrebleu
from benchsmith.validation.metric import Metric
from sacrebleu.metrics.bleu import BLEU
from sacrebleu.metrics.helpers import extract_all_word_ngrams

import benchsmith
from benchsmith.errors import ConfigError, did_you_mean


@dataclass(frozen=True)
class BLEUResult:
    """A corpus BLEU score (0-100) with its sufficient statistics and signature."""

    score: float
    precisions: tuple[float, ...]
    brevity_penalty: float
    sys_len: int
    ref_len: int
    counts: tuple[int, ...]
    totals: tuple[int, ...]
    signature: str

    def to_dict(self) -> dict:
        return {
            "score": self.score,
            "precisions": list(self.precisions),
            "brevity_penalty": self.brevity_penalty,
            "sys_len": self.sys_len,
            "ref_len": self.ref_len,
            "counts": list(self.counts),
            "totals": list(self.totals),
            "signature": self.signature,
        }


class CorpusBLEU(Metric):
    """Corpus-level BLEU.

    Args:
        max_order: highest n-gram order.
        tokenize: ``"whitespace"`` (``str.split()``, the official ComVE scorer) or
            ``"13a"`` (sacrebleu's default mteval tokenizer).
        smooth: ``"none"`` (official), ``"lin2004"`` (official ``--smooth``), or
            sacrebleu's ``"floor"``, ``"add-k"``, ``"exp"``.
        ref_length: ``"shortest"`` (official ComVE) or ``"closest"`` (sacrebleu).
        lowercase: lowercase hypotheses and references first.
    """

    name = "bleu"
    TOKENIZERS: ClassVar[tuple[str, ...]] = ("whitespace", "13a")
    SMOOTHING: ClassVar[tuple[str, ...]] = ("none", "lin2004", "floor", "add-k", "exp")
    REF_LENGTHS: ClassVar[tuple[str, ...]] = ("shortest", "closest")

    def __init__(
        self,
        max_order: int = 4,
        tokenize: str = "whitespace",
        smooth: str = "none",
        ref_length: str = "shortest",
        lowercase: bool = False,
    ) -> None:
        for value, allowed, what in (
            (tokenize, self.TOKENIZERS, "tokenize"),
            (smooth, self.SMOOTHING, "smooth"),
            (ref_length, self.REF_LENGTHS, "ref_length"),
        ):
            if value not in allowed:
                raise ConfigError(f"BLEU {what}={value!r} is not supported", hint=did_you_mean(value, allowed))
        if not isinstance(max_order, int) or max_order < 1:
            raise ConfigError(f"BLEU max_order={max_order!r}; expected a positive int")
        self.max_order = max_order
        self.tokenize = tokenize
        self.smooth = smooth
        self.ref_length = ref_length
        self.lowercase = lowercase
        self._tok = None
        if tokenize == "13a":
            from sacrebleu.tokenizers.tokenizer_13a import Tokenizer13a

            self._tok = Tokenizer13a()

    def _prep(self, text: str) -> str:
        if self.lowercase:
            text = text.lower()
        return self._tok(text) if self._tok is not None else text

    def corpus_score(self, hypotheses: Sequence[str], references: Sequence[Sequence[str]]) -> BLEUResult:
        """Score ``hypotheses[i]`` against ``references[i]`` (one list of strings per hypothesis).

        Empty references are skipped, as the official ComVE scorer does; every
        hypothesis needs at least one non-empty reference.
        """
        if len(hypotheses) != len(references):
            raise ConfigError(
                f"{len(hypotheses)} hypotheses but {len(references)} reference lists; expected one list per hypothesis"
            )
        correct = [0] * self.max_order
        total = [0] * self.max_order
        sys_len = ref_len = 0
        nrefs = 0
        for i, (hyp, refs) in enumerate(zip(hypotheses, references)):
            ref_stats = [extract_all_word_ngrams(self._prep(r), 1, self.max_order) for r in refs if r.strip()]
            if not ref_stats:
                raise ConfigError(f"hypothesis #{i} has no non-empty reference; expected at least one")
            nrefs = max(nrefs, len(ref_stats))
            hyp_ngrams, hyp_len = extract_all_word_ngrams(self._prep(hyp), 1, self.max_order)
            merged: Counter = Counter()
            for ngrams, _ in ref_stats:
                merged |= ngrams  # max count over references: the clipping of both scorers
            for ngram, count in hyp_ngrams.items():
                n = len(ngram) - 1
                total[n] += count
                correct[n] += min(count, merged.get(ngram, 0))
            lengths = [length for _, length in ref_stats]
            if self.ref_length == "shortest":
                ref_len += min(lengths)
            else:  # sacrebleu's rule: closest length, the shorter one on a tie
                ref_len += min(lengths, key=lambda r: (abs(r - hyp_len), r))
            sys_len += hyp_len
        smooth = self.smooth
        if smooth == "lin2004":
            correct = [c + 1 for c in correct]
            total = [t + 1 for t in total]
            smooth = "none"
        bleu = BLEU.compute_bleu(
            correct, total, sys_len, ref_len, smooth_method=smooth, max_ngram_order=self.max_order
        )
        return BLEUResult(
            score=float(bleu.score),
            precisions=tuple(float(p) for p in bleu.precisions),
            brevity_penalty=float(bleu.bp),
            sys_len=sys_len,
            ref_len=ref_len,
            counts=tuple(correct),
            totals=tuple(total),
            signature=f"nrefs:{nrefs}|{self.signature()}",
        )

    def options(self) -> dict[str, object]:
        return {"case": "lc" if self.lowercase else "mixed", "eff": "no", "tok": self.tokenize,
                "smooth": self.smooth, "reflen": self.ref_length, "maxn": self.max_order}

    def signature(self) -> str:
        """Every option that changes the number, sacrebleu-style (``nrefs`` is in each result's signature)."""
        opts = "|".join(f"{k}:{v}" for k, v in self.options().items())
        return f"{opts}|version:sacrebleu-{sacrebleu.__version__}+benchsmith-{benchsmith.__version__}"
