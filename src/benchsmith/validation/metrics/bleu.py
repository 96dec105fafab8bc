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

from collections.abc import Sequence
from typing import TYPE_CHECKING, ClassVar

import benchsmith
from benchsmith.errors import ConfigError, did_you_mean
from benchsmith.validation.metric import Metric, Score

if TYPE_CHECKING:
    from sacrebleu.metrics.bleu import BLEU

# sacrebleu (the ``validation`` extra) is imported where a score or signature is made


class CorpusBLEU(Metric[Sequence[str], Sequence[Sequence[str]]]):
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
    description = "corpus BLEU (0-100) with the options official task scorers differ on"
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

    def score(self, predictions: Sequence[str], references: Sequence[Sequence[str]]) -> Score:
        """Score ``predictions[i]`` against ``references[i]`` (one list of strings per hypothesis).

        Empty references are skipped, as the official ComVE scorer does; every
        hypothesis needs at least one non-empty reference.
        """
        from sacrebleu.metrics.bleu import BLEU
        from sacrebleu.metrics.helpers import extract_all_word_ngrams

        if len(predictions) != len(references):
            raise ConfigError(
                f"{len(predictions)} hypotheses but {len(references)} reference lists; expected one list per hypothesis"
            )
        correct = [0] * self.max_order
        total = [0] * self.max_order
        sys_len = ref_len = 0
        nrefs = 0
        for i, (hyp, refs) in enumerate(zip(predictions, references)):
            ref_stats = [extract_all_word_ngrams(self._prep(r), 1, self.max_order) for r in refs if r.strip()]
            if not ref_stats:
                raise ConfigError(f"hypothesis #{i} has no non-empty reference; expected at least one")
            nrefs = max(nrefs, len(ref_stats))
            hyp_ngrams, hyp_len = extract_all_word_ngrams(self._prep(hyp), 1, self.max_order)
            counts = [ngrams for ngrams, _ in ref_stats]
            for ngram, count in hyp_ngrams.items():
                n = len(ngram) - 1
                total[n] += count
                # clipped by the maximum count over the references (the clipping of both scorers),
                # looked up for the hypothesis's n-grams only: merging whole Counters (``|=``) was
                # 40 % of ComVE's copy-source BLEU
                best = max(c.get(ngram, 0) for c in counts) if len(counts) > 1 else counts[0].get(ngram, 0)
                correct[n] += min(count, best)
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
        return Score(self.name, float(bleu.score), f"nrefs:{nrefs}|{self.signature()}", {
            "precisions": [float(p) for p in bleu.precisions],
            "brevity_penalty": float(bleu.bp),
            "sys_len": sys_len,
            "ref_len": ref_len,
            "counts": list(correct),
            "totals": list(total),
        })

    def options(self) -> dict[str, object]:
        return {"case": "lc" if self.lowercase else "mixed", "eff": "no", "tok": self.tokenize,
                "smooth": self.smooth, "reflen": self.ref_length, "maxn": self.max_order}

    def signature(self) -> str:
        """Every option that changes the number, sacrebleu-style (``nrefs`` is in each result's signature)."""
        import sacrebleu

        opts = "|".join(f"{k}:{v}" for k, v in self.options().items())
        return f"{opts}|version:sacrebleu-{sacrebleu.__version__}+benchsmith-{benchsmith.__version__}"


class SacreBLEU(Metric[Sequence[str], Sequence[Sequence[str]]]):
    """sacrebleu's own corpus BLEU (closest reference length), on the one scoring contract.

    What the generation baselines and CoGnition report (character BLEU is ``tokenize="zh"``).
    ``score(predictions, references)`` takes one list of references per hypothesis, like
    :class:`CorpusBLEU`; a hypothesis with fewer references than the most has its first one
    repeated, which moves neither the clipped counts nor the closest length. The value is
    sacrebleu's score unrounded; the result signature is sacrebleu's own
    (``nrefs:1|case:mixed|eff:no|tok:zh|smooth:exp|version:2.x``).

    Args:
        tokenize: a sacrebleu tokenizer name (``13a``, ``zh``, ``none`` ...).
        smooth: a sacrebleu smoothing method (``exp``, ``floor``, ``add-k``, ``none``).
        lowercase: lowercase hypotheses and references first.
    """

    name = "sacrebleu"
    description = "sacrebleu's corpus BLEU (0-100)"

    def __init__(self, tokenize: str = "13a", smooth: str = "exp", lowercase: bool = False) -> None:
        from sacrebleu.metrics.bleu import BLEU as _BLEU

        if tokenize not in _BLEU.TOKENIZERS:
            raise ConfigError(f"sacrebleu has no tokenizer {tokenize!r}", hint=did_you_mean(tokenize, _BLEU.TOKENIZERS))
        if smooth not in _BLEU.SMOOTH_DEFAULTS:
            raise ConfigError(f"sacrebleu has no smoothing {smooth!r}", hint=did_you_mean(smooth, _BLEU.SMOOTH_DEFAULTS))
        self.tokenize, self.smooth, self.lowercase = tokenize, smooth, lowercase

    def _bleu(self) -> BLEU:
        from sacrebleu.metrics.bleu import BLEU

        return BLEU(tokenize=self.tokenize, smooth_method=self.smooth, lowercase=self.lowercase)

    def options(self) -> dict[str, object]:
        return {"case": "lc" if self.lowercase else "mixed", "tok": self.tokenize, "smooth": self.smooth}

    def signature(self) -> str:
        """sacrebleu's signature of these options (``nrefs`` is in each result's signature)."""
        import sacrebleu

        bleu = self._bleu()
        return (f"case:{'lc' if self.lowercase else 'mixed'}|eff:no|tok:{bleu.tokenizer.signature()}"
                f"|smooth:{self.smooth}|version:{sacrebleu.__version__}")

    def score(self, predictions: Sequence[str], references: Sequence[Sequence[str]]) -> Score:
        if len(predictions) != len(references):
            raise ConfigError(f"{len(predictions)} hypotheses but {len(references)} reference lists; "
                              "expected one list per hypothesis")
        if any(not refs for refs in references):
            raise ConfigError("a hypothesis has no reference; expected at least one")
        width = max((len(r) for r in references), default=1)
        streams = [[r[k] if k < len(r) else r[0] for r in references] for k in range(width)]
        bleu = self._bleu()
        res = bleu.corpus_score(list(predictions), streams)
        return Score(self.name, float(res.score), str(bleu.get_signature()), {
            "precisions": [float(p) for p in res.precisions], "brevity_penalty": float(res.bp),
            "sys_len": int(res.sys_len), "ref_len": int(res.ref_len),
            "counts": [int(c) for c in res.counts], "totals": [int(t) for t in res.totals],
        })
