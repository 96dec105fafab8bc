"""MuCoW's scorers: ContraWSD-style accuracy (scoring suites) and word-level P/R/F (translation suites).

Both implement the one scorer contract, :class:`benchsmith.validation.metric.Metric`:
their options (every choice that moves the number) are in ``signature()``, and the facts
of one scoring call (the language pair, the number of items) in the result's
``signature`` (:meth:`~benchsmith.validation.metric.Metric.result_signature`), e.g.
``mucow-scoring-accuracy:1|better:lower|ties:wrong|order:contrawsd|no-contrastive:correct|benchsmith:X|pair:cs-en|items:3791``.
``benchsmith evaluate mucow`` scores with them (:data:`METRICS`): ``--scores FILE`` (or
PREDICTIONS with ``--metric mucow-scoring-accuracy``) the scoring suite of ``--pair``,
``--translations FILE --lemmatized FILE`` the translation suite.

**Scoring** (:class:`MucowScoringAccuracy`) follows ``evaluate_mod.py`` from the
MuCoW/ContraWSD repositories: the score file has one number per line, for each
item the reference first, then each contrastive translation, in the suite's
order. Lower is better by default (negative log-probabilities); ``maximize``
flips it. An item is correct when the reference is *strictly* better than every
contrastive (a tie counts as wrong); an item without contrastives (upstream ro-en
and ru-en have 20 each) is vacuously correct, as upstream counts it. Accuracy is
reported overall, per corpus and per ``word:sense``.

**Translation** (:class:`MucowTranslationPRF`) follows ``evaluate.py`` of the WMT 2019
translation suite: each output line is Moses-tokenised and lower-cased and
searched for the item's correct and incorrect target words; when neither is
found there, the lemmatised line (lower-cased, split on spaces) is searched.
An example is *positive* when a correct word and no incorrect word is found,
*negative* when an incorrect word is found (also when a correct one is too) and
*unknown* otherwise. As the paper defines them: precision = pos / (pos + neg),
recall = pos / (pos + neg + unk), F = their harmonic mean, each in/out of
domain and overall. Upstream's results tables used recall = pos / (pos + unk)
(its script calls it RecallA); it is reported too, as ``recall_tables`` /
``f_tables``, so the published numbers can be reproduced.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from benchsmith.errors import ConfigError, PredictionError, did_you_mean
from benchsmith.nlp.tokenize import get_tokenizer, same_language
from benchsmith.validation import predictions as pred_files
from benchsmith.validation.metric import Metric, Option, Score

if TYPE_CHECKING:
    from benchsmith.release import Release

# The two prediction-file readers below are generic (one number per line; exactly N lines) and read
# through the one policy of every scorer (benchsmith.validation.predictions): streamed, and a file
# longer than expected stops at its first extra line, so memory never grows with the file.

_SCORES_HINT = "Write one model score per line (reference, then each contrastive)"


def read_scores(path: str | Path, expected: int) -> list[float]:
    """One finite number per line; exactly ``expected`` lines.

    Raises:
        PredictionError: an unreadable file, a line that is not a plain finite number (``inf``,
            ``-inf``, ``nan``, ``1e999`` and a 5,000-digit integer are refused: an infinite score
            ties every other and silently moves accuracy), or the wrong number of lines.
    """
    path = Path(path)
    out: list[float] = []
    for lineno, line in pred_files.lines(path):
        if lineno > expected:
            raise _count_error(path, f"more than {expected} scores", expected, lineno)
        out.append(pred_files.number(line, path, lineno, "score", hint=_SCORES_HINT))
    if len(out) != expected:
        raise _count_error(path, f"{len(out)} scores", expected, len(out) + 1)
    return out


def _count_error(path: Path, found: str, expected: int, line: int) -> PredictionError:
    return PredictionError(f"{found}; expected {expected} (for each item: the reference, then each contrastive)",
                           path=path, line=line,
                           hint="Score the suite's sentences in ContraWSD order (benchsmith evaluate's --help lists it)")


def read_lines_exact(path: str | Path, expected: int, what: str) -> list[str]:
    """Exactly ``expected`` lines of ``what`` (e.g. system translations), in order.

    Raises:
        PredictionError: an unreadable, non-UTF-8 or NUL-holding file, or the wrong number of lines.
    """
    path = Path(path)
    hint = "Translate the suite's sources one per line, in the release's order"
    out: list[str] = []
    for lineno, line in pred_files.lines(path, hint):
        if lineno > expected:
            raise PredictionError(f"more than {expected} lines; expected {expected} ({what}, one per test sentence, "
                                  "in order)", path=path, line=lineno, hint=hint)
        out.append(line)
    if len(out) != expected:
        raise PredictionError(f"{len(out)} lines; expected {expected} ({what}, one per test sentence, in order)",
                              path=path, line=len(out) + 1, hint=hint)
    return out


PAIR = Option("pair", str, "Language pair SRC-TGT, e.g. cs-en (or --config).")


def _acc(c: dict[str, int]) -> dict[str, float | int]:
    return {"correct": c["correct"], "total": c["total"], "accuracy": c["correct"] / c["total"] if c["total"] else 0.0}


def _facts(pair: str | None, items: int) -> dict[str, Any]:
    return {**({"pair": pair} if pair else {}), "items": items}


@dataclass(frozen=True, repr=False)
class MucowScoringAccuracy(Metric):
    """ContraWSD accuracy over a MuCoW scoring suite (see module docstring).

    Args:
        maximize: higher scores are better (log-probabilities); default lower (NLL).
        pair: the suite's language pair (``cs-en``), a fact of the result signature; ``benchsmith
            evaluate`` finds the suite's config from it.

    ``score(predictions, references)``: the scores (per item the reference, then each
    contrastive) against the suite's items; the value is the accuracy (0-1).

    Options in the signature: ``better`` (higher/lower), ``ties`` (always ``wrong``: the
    reference must be strictly better), ``order`` (``contrawsd``: per item the reference,
    then each contrastive), ``no-contrastive`` (always ``correct``: an item without
    contrastives is vacuously correct, as upstream counts it).
    """

    maximize: bool = False
    pair: str | None = None
    name = "mucow-scoring-accuracy"
    version = "1"
    description = "ContraWSD accuracy of a scoring suite (--scores)"
    OPTIONS = (PAIR, Option("maximize", bool, "Higher scores are better (default: lower, e.g. NLL).", default=False),
               Option("scores", Path, "Scoring suite: one model score per line; per item the reference, then each "
                      "contrastive (the same as PREDICTIONS).", predictions=True))
    CONFIGS = ("scoring*",)

    def __post_init__(self) -> None:
        if not isinstance(self.maximize, bool):
            raise ConfigError(f"maximize must be true or false, got {self.maximize!r}")

    def options(self) -> dict[str, Any]:
        return {"better": "higher" if self.maximize else "lower", "ties": "wrong", "order": "contrawsd",
                "no-contrastive": "correct"}

    @staticmethod
    def expected_lines(items: Sequence[dict]) -> int:
        """Score lines a suite needs: per item the reference, then each contrastive."""
        return sum(1 + len(it["contrastive_translations"]) for it in items)

    def target(self, release: Release, config: str | None, split: str | None) -> tuple[str | None, str] | None:
        return suite_target(self, "scoring", release, config, split)

    def for_release(self, release: Release, config: str | None) -> MucowScoringAccuracy:
        """The suite's pair (for the result signature) when ``--config`` named the suite."""
        return self if self.pair is not None else replace(self, pair=suite_pair(release, config))

    def references(self, release: Release, config: str | None, split: str) -> list[dict]:
        return list(release.examples(str(config), split))

    def read_predictions(self, path: Path, references: Sequence[dict]) -> list[float]:
        return read_scores(path, self.expected_lines(references))

    def score(self, predictions: Sequence[float], references: Sequence[dict]) -> Score:
        """Accuracy overall (the value), ``by_corpus`` and ``by_word_sense`` (``word:sense``); the
        result signature adds ``pair`` and the item count.

        Raises:
            PredictionError: the number of scores is not :meth:`expected_lines`.
        """
        items, scores = references, predictions
        if len(scores) != self.expected_lines(items):
            raise PredictionError(f"{len(scores)} scores; expected {self.expected_lines(items)}")
        by_corpus: dict[str, dict[str, int]] = defaultdict(lambda: {"correct": 0, "total": 0})
        by_sense: dict[str, dict[str, int]] = defaultdict(lambda: {"correct": 0, "total": 0})
        total = {"correct": 0, "total": 0}
        k = 0
        for it in items:
            ref = scores[k]
            k += 1
            ok = True
            for _ in it["contrastive_translations"]:
                alt = scores[k]
                k += 1
                if not (ref > alt if self.maximize else ref < alt):
                    ok = False
            for bucket in (total, by_corpus[it["corpus"]], by_sense[f"{it['ambiguous_word']}:{it['sense']}"]):
                bucket["total"] += 1
                bucket["correct"] += ok
        overall = _acc(total)
        return Score(self.name, overall["accuracy"], self.result_signature(**_facts(self.pair, len(items))), {
            **overall,
            "by_corpus": {c: _acc(v) for c, v in sorted(by_corpus.items())},
            "by_word_sense": {c: _acc(v) for c, v in sorted(by_sense.items())},
        })


def _prf(pos: int, neg: int, unk: int) -> dict[str, float | int]:
    n = pos + neg + unk
    precision = pos / (pos + neg) if pos + neg else 0.0
    recall = pos / n if n else 0.0
    recall_tables = pos / (pos + unk) if pos + unk else 0.0

    def f(p: float, r: float) -> float:
        return 2 * p * r / (p + r) if p + r else 0.0

    return {
        "positive": pos, "negative": neg, "unknown": unk, "total": n,
        "coverage": (pos + neg) / n if n else 0.0,
        "precision": precision, "recall": recall, "f": f(precision, recall),
        "recall_tables": recall_tables, "f_tables": f(precision, recall_tables),
    }


@dataclass(frozen=True, repr=False)
class MucowTranslationPRF(Metric):
    """Word-level precision / recall / F over a MuCoW translation suite (see module docstring).

    Args:
        lang: the target language (ISO 639-1), which picks the Moses tokenizer (``benchsmith
            evaluate`` takes it from the suite's config, :meth:`for_release`).
        pair: the suite's language pair, a fact of the result signature (and how ``benchsmith
            evaluate`` finds the suite).
        lemmatized: the file of lemmatised translations ``benchsmith evaluate`` reads beside the
            translations (``--lemmatized``).

    ``score(predictions, references)``: ``(translation, lemmatised translation)`` per item against
    the suite's items; the value is F (the paper's recall).

    Options in the signature: ``tok`` (``moses-<lang>``), ``case`` (``lower``), ``fallback``
    (``lemmatized``: the lemmatised line is searched when the tokens hold neither word list),
    ``both-found`` (``wrong``), ``recall`` (the paper's ``pos/(pos+neg+unk)``; the tables'
    ``pos/(pos+unk)`` is reported beside it as ``recall_tables``).
    """

    lang: str | None = None
    pair: str | None = None
    lemmatized: Path | None = None
    name = "mucow-translation-prf"
    version = "1"
    description = "word-level precision, recall and F of a translation suite (--translations, --lemmatized)"
    OPTIONS = (PAIR, Option("translations", Path, "Translation suite: system output, one detokenised line per "
                            "sentence (the same as PREDICTIONS).", predictions=True),
               Option("lemmatized", Path, "The same output lemmatised (space-separated lemmas per line).",
                      required=True))
    CONFIGS = ("translation*",)

    def __post_init__(self) -> None:
        if self.lang is not None and (not isinstance(self.lang, str) or not self.lang.strip()):
            raise ConfigError(f"the target language must be a language code, got {self.lang!r}",
                              hint="Pass the suite's target language, e.g. de")

    def options(self) -> dict[str, Any]:
        return {"tok": f"moses-{self.lang}", "case": "lower", "fallback": "lemmatized", "both-found": "wrong",
                "recall": "pos/(pos+neg+unk)"}

    def judge(self, item: dict, tokens: Sequence[str], lemmas: Sequence[str]) -> str:
        """``pos`` / ``neg`` / ``unk`` for one output (tokens and lemmas lower-cased)."""
        good, bad = item["correct_words"], item["incorrect_words"]
        tok = set(tokens)
        pos, neg = any(w in tok for w in good), any(w in tok for w in bad)
        if not pos and not neg:
            lem = set(lemmas)
            pos, neg = any(w in lem for w in good), any(w in lem for w in bad)
        if neg:
            return "neg"
        return "pos" if pos else "unk"

    def target(self, release: Release, config: str | None, split: str | None) -> tuple[str | None, str] | None:
        return suite_target(self, "translation", release, config, split)

    def for_release(self, release: Release, config: str | None) -> MucowTranslationPRF:
        """The target language of the suite's config (its last language) and its pair, when not given."""
        return replace(self, lang=self.lang or release.config_info(config).languages[-1],
                       pair=self.pair or suite_pair(release, config))

    def references(self, release: Release, config: str | None, split: str) -> list[dict]:
        return list(release.examples(str(config), split))

    def read_predictions(self, path: Path, references: Sequence[dict]) -> list[tuple[str, str]]:
        """The translations and, from :attr:`lemmatized`, their lemmatised lines: one per item each."""
        if self.lemmatized is None:
            raise ConfigError("the translation suite needs the lemmatised translations too",
                              hint="Pass --lemmatized FILE beside the translations")
        translations = read_lines_exact(path, len(references), "translations")
        return list(zip(translations, read_lines_exact(self.lemmatized, len(references), "lemmatised translations")))

    def score(self, predictions: Sequence[tuple[str, str]], references: Sequence[dict]) -> Score:
        """F (the value), P/R/F overall, ``in_domain``, ``out_of_domain`` and ``by_word``; the
        result signature adds ``pair`` and the item count.

        Raises:
            PredictionError: predictions and items differ in number.
        """
        items = references
        if len(predictions) != len(items):
            raise PredictionError(f"{len(predictions)} translations for {len(items)} items")
        if self.lang is None:
            raise ConfigError("MucowTranslationPRF needs the target language", hint="Pass lang, e.g. de")
        tok = get_tokenizer(self.lang)
        counts = {d: {"pos": 0, "neg": 0, "unk": 0} for d in ("in", "out")}
        per_word: dict[str, dict[str, int]] = defaultdict(lambda: {"pos": 0, "neg": 0, "unk": 0})
        for it, (raw, lem) in zip(items, predictions):
            verdict = self.judge(it, [t.lower() for t in tok(raw.strip())], lem.strip().lower().split(" "))
            dom = it["domain"] if isinstance(it["domain"], str) else ("in", "out")[it["domain"]]
            counts[dom][verdict] += 1
            per_word[it["ambiguous_word"]][verdict] += 1
        all_ = {k: counts["in"][k] + counts["out"][k] for k in ("pos", "neg", "unk")}
        overall = _prf(all_["pos"], all_["neg"], all_["unk"])
        return Score(self.name, overall["f"], self.result_signature(**_facts(self.pair, len(items))), {
            **overall,
            "in_domain": _prf(counts["in"]["pos"], counts["in"]["neg"], counts["in"]["unk"]),
            "out_of_domain": _prf(counts["out"]["pos"], counts["out"]["neg"], counts["out"]["unk"]),
            "by_word": {w: _prf(c["pos"], c["neg"], c["unk"]) for w, c in sorted(per_word.items())},
        })


#: what ``benchsmith evaluate mucow`` scores with (``Builder.metrics``): one metric per kind of suite
METRICS = (MucowScoringAccuracy, MucowTranslationPRF)


def _same_pair(a: str | None, b: str) -> bool:
    """Whether two SRC-TGT pairs name the same languages (``de-en`` is ``deu-eng``: a harvest records ISO 639-3)."""
    if not a or a.count("-") != 1 or b.count("-") != 1:
        return a == b
    return all(same_language(x, y) for x, y in zip(a.split("-"), b.split("-")))


def find_config(release: Release, variant: str, pair: str) -> str:
    """``<variant>-<pair>`` in a released suite, or ``<variant>`` of a harvested release for that pair."""
    configs = release.configs()
    if f"{variant}-{pair}" in configs:
        return f"{variant}-{pair}"
    if variant in configs and _same_pair(release.config_info(variant).metadata.get("pair"), pair):
        return variant
    have = [c for c in configs if c.startswith(variant)]
    skipped = release.info.skipped_configs
    if f"{variant}-{pair}" in skipped:
        raise ConfigError(f"release {release.name} {release.version} has no {variant}-{pair}: its upstream file was absent",
                          path=release.path, hint="Rebuild from sources that include it")
    raise ConfigError(f"release {release.name} {release.version} has no {variant} suite for pair {pair!r}",
                      path=release.path, hint=did_you_mean(f"{variant}-{pair}", have))


def suite_pair(release: Release, config: str | None) -> str | None:
    """The pair a suite's config records (``metadata.pair``), so a score found by ``--config`` reads
    the same as one found by ``--pair``."""
    return release.config_info(config).metadata.get("pair") if config else None


def suite_target(metric: Metric, variant: str, release: Release, config: str | None, split: str | None
                 ) -> tuple[str | None, str] | None:
    """The ``variant`` suite (scoring or translation) for ``--pair`` (or ``--config``), split test."""
    pair = getattr(metric, "pair", None)
    if config is None:
        if pair is None:
            raise ConfigError("say which MuCoW suite to score", hint="Pass --pair SRC-TGT, e.g. --pair cs-en")
        config = find_config(release, variant, pair)
    return Metric.target(metric, release, config, split)
