"""MuCoW's dataset checks: the construction rules of the paper, checked on any suite.

They apply to the released WMT 2019 suites (``MucowBuilder.checks()``) and to harvested
ones (``HarvestBuilder.checks()``, found by the validation runner through the manifest's
``builder``). A config is a *scoring* suite when it has ``contrastive_translations`` and a
*translation* suite when it has ``correct_words`` (both the ``scoring-<pair>`` /
``translation-<pair>`` configs of the release and a harvest's ``scoring`` / ``translation``).
All are one pass over a few columns.

Rules (Raganato, Scherrer & Tiedemann, WMT 2019):

* ``mucow_contrastive_present``: every scoring item has at least one contrastive
  translation (an item without one is scored correct whatever the model does).
* ``mucow_contrastive_aligned``: one replacement word per contrastive translation
  (the score file's order is defined by the contrastive lists).
* ``mucow_contrastive_differs``: no contrastive translation equals its reference (with
  ties counted wrong, such an item can never be scored correct).
* ``mucow_senses_per_word``: every ambiguous word of a translation suite has at least two
  senses in it (Section 4: "If as a result of the above filters, all but one senses of a
  source word were removed, we removed the source word entirely"). A sense is its list of
  correct words (``sense`` is empty upstream for de-en and en-de). Not applied to scoring
  suites: there the paper's rule is about the lexicon (Section 2: "Source words that end up
  with a single synset as a result of this step are discarded"), and a word may keep items
  of one sense only, contrasted with the words of its other senses; a word without a second
  sense shows up as items without contrastives (``mucow_contrastive_present``).
* ``mucow_items_per_sense``: scoring, at most 20 items per sense (Section 2.4: "we randomly
  choose 20 instances of each sense"); translation, 4 to 10 (Section 4: "at least 4
  example sentences, and we retained at most 10 example sentences per sense"). A
  harvest's own bounds, recorded in its config metadata (``options``), take precedence.
* ``mucow_source_length``: every scoring item's source is longer than 10 words (Section 2.4:
  "We restrict the extraction process to sentences longer than 10 words"). A word is a
  Moses token (``benchsmith.nlp.tokenize``, as the harvest tokenises) with a letter or a
  digit, so the check and the harvest's filter agree exactly; a harvest's
  ``options.scoring_min_words`` takes precedence. The result also reports the shortest
  source in Moses tokens counting punctuation: the released WMT 2019 suites break the rule
  as worded in every pair, but no source there has fewer than 10 such tokens (see
  ``MucowBuilder.checks``). Skipped when sacremoses is not installed.
* ``mucow_target_words``: every translation item has correct and incorrect target words,
  and no word is in both lists.
* ``mucow_domain_rule``: all items of a translation sense share its domain, which is
  ``out`` exactly when more than half of them come from a subtitles corpus (Section 4:
  "A synset is considered out-of-domain if more than half of its example sentences come
  from OpenSubtitles2018"). Subtitle corpora: the harvest's ``options.subtitle_labels``,
  else :data:`~benchsmith.builders.mucow.corpora.SUBTITLE_LABELS`.

Each of these passes or reports a violation with its ``severity`` (``fail`` by default); a
builder lowers it to ``warn`` where its data is known to break the rule as released (see
``MucowBuilder.checks``). ``mucow_suite_statistics`` is descriptive (``stat``): the
paper's per-suite figures (items, ambiguous words, senses, senses per word, corpora,
contrastive pairs or in/out of domain).
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

from benchsmith.errors import ConfigError
from benchsmith.nlp.tokenize import get_tokenizer
from benchsmith.validation.check import Check, CheckResult, Status

from .corpora import SUBTITLE_LABELS
from .schema import sense_of, suite_statistics
from .suites import n_words

if TYPE_CHECKING:
    from benchsmith.release import Release

SCORING, TRANSLATION = "scoring", "translation"
VARIANTS = (SCORING, TRANSLATION)
#: the paper's bounds on items per sense (harvest options override them per config)
SCORING_PER_SENSE = 20
TRANSLATION_MIN_PER_SENSE, TRANSLATION_MAX_PER_SENSE = 4, 10
#: the paper's "sentences longer than 10 words" (scoring; a harvest's options override it)
SCORING_MIN_WORDS = 10
#: violations listed in a result's details (all are counted in its metrics)
SHOWN = 20
#: what :meth:`SuiteCheck.inspect` returns: problems (one line each), metrics, details
Inspection = tuple[list[str], dict[str, Any], dict[str, Any]]


def variant_of(release: Release, config: str) -> str | None:
    """``scoring`` / ``translation`` from the config's features (None: not a MuCoW suite)."""
    features = release.config_info(config).features_dict  # names only: no datasets import
    if "contrastive_translations" in features:
        return SCORING
    if "correct_words" in features:
        return TRANSLATION
    return None


def options_of(release: Release, config: str) -> dict[str, Any]:
    """The harvest options recorded in the config's metadata (``{}`` for the released suites)."""
    return dict(release.config_info(config).metadata.get("options") or {})


def domain_name(value: Any) -> str:
    """``in`` / ``out`` from the ClassLabel int or its name."""
    return value if isinstance(value, str) else ("in", "out")[value]


def sense_key(row: dict, variant: str) -> tuple[str, str]:
    """(word, sense): the ``sense`` id for scoring, the correct words for translation."""
    return row["ambiguous_word"], sense_of(row, variant)


class SuiteCheck(Check):
    """One result per MuCoW suite (config/split) of :attr:`variants` found in the release.

    Subclasses implement :meth:`inspect`; a violation is reported with ``severity``.
    """

    family = "integrity"
    topic = "suite items break the suite's rule"
    why = ("a contrastive item that breaks the suite's construction rule does not test word-sense "
        'disambiguation')
    todo = ("fix the harvest or the builder; for upstream rows, record them in the builder's "
        'findings/errata')
    cacheable = True  # reads the release's data only (validation/result_cache.py)
    #: run in validate's worker process beside the generic checks (validation/runner.py): they read
    #: the release only and share no in-process memo with another check, and MuCoW's probe leaves
    #: that worker idle (README.md, "Validate in seconds")
    concurrent = True
    variants: ClassVar[tuple[str, ...]] = VARIANTS
    #: what the check requires, in words (the pass summary)
    rule: ClassVar[str] = ""

    def __init__(self, severity: Status = Status.FAIL, variants: Sequence[str] | None = None) -> None:
        if severity not in (Status.FAIL, Status.WARN):
            raise ConfigError(f"{self.name}: a violation is reported as fail or warn, not {severity!s}")
        severity = Status(severity)  # "warn" -> Status.WARN
        unknown = sorted(set(variants or ()) - set(type(self).variants))
        if unknown:
            raise ConfigError(f"{self.name} does not apply to {unknown}", hint=f"It checks {list(type(self).variants)}")
        self.severity = severity
        self.applies = tuple(variants) if variants else type(self).variants

    def suites(self, release: Release) -> Iterator[tuple[str, str, str]]:
        for config in release.configs():
            variant = variant_of(release, config)
            if variant in self.applies:
                for split in release.splits(config):
                    yield config, split, variant

    def run(self, release: Release) -> list[CheckResult]:
        out = []
        for config, split, variant in self.suites(release):
            where = f"{config}/{split}"
            try:
                problems, metrics, details = self.inspect(release, config, split, variant)
            except ConfigError as exc:  # what the check needs is not installed (e.g. sacremoses)
                out.append(self.result(Status.SKIP, f"{where}: not checked ({exc.message})", config=config,
                                       details={"split": split}))
                continue
            details = {"split": split, **details}
            if problems:
                more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
                out.append(self.result(self.severity, f"{where}: {problems[0]}{more}", config=config, metrics=metrics,
                                       details={**details, "problems": problems[:SHOWN]}))
            else:
                out.append(self.result(Status.PASS, f"{where}: {details.get('rule') or self.rule}", config=config,
                                       metrics=metrics,
                                       details=details))
        if not out:
            out.append(self.result(Status.SKIP, f"no {' or '.join(self.applies)} suite in this release"))
        return out

    def inspect(self, release: Release, config: str, split: str, variant: str) -> Inspection:
        """``(problems, metrics, details)``: one line per violation (none when the rule holds),
        numbers worth tracking, and what a person needs to act (offending ids)."""
        raise NotImplementedError


def _rows(release: Release, config: str, split: str, columns: Sequence[str]) -> list[dict]:
    return release.table(config, split, list(columns)).to_pylist()


class ContrastivePresent(SuiteCheck):
    name = "mucow_contrastive_present"
    variants = (SCORING,)
    rule = "every item has at least one contrastive translation"

    def inspect(self, release, config, split, variant):
        rows = _rows(release, config, split, ["id", "ambiguous_word", "contrastive_translations"])
        n, empty = len(rows), [r for r in rows if not r["contrastive_translations"]]
        words = Counter(r["ambiguous_word"] for r in empty)
        problems = [f"{n} item(s) of {w!r} have no contrastive translation (scored correct whatever the model does)"
                    for w, n in words.most_common()]
        return problems, {"items": n, "without_contrastive": len(empty)}, {"ids": [r["id"] for r in empty]}


class ContrastiveAligned(SuiteCheck):
    name = "mucow_contrastive_aligned"
    variants = (SCORING,)
    rule = "one replacement word per contrastive translation"

    def inspect(self, release, config, split, variant):
        rows = _rows(release, config, split, ["id", "contrastive_translations", "replacements"])
        n = len(rows)
        bad = [r for r in rows if len(r["contrastive_translations"]) != len(r["replacements"])]
        problems = [f"{r['id']}: {len(r['contrastive_translations'])} contrastive translation(s), "
                    f"{len(r['replacements'])} replacement(s)" for r in bad]
        return problems, {"items": n, "misaligned": len(bad)}, {}


class ContrastiveDiffers(SuiteCheck):
    name = "mucow_contrastive_differs"
    variants = (SCORING,)
    rule = "every contrastive translation differs from its reference"

    def inspect(self, release, config, split, variant):
        columns = ["id", "ambiguous_word", "original_translation", "reference", "contrastive_translations"]
        rows = _rows(release, config, split, columns)
        n, same = len(rows), [r for r in rows if r["reference"] in r["contrastive_translations"]]
        by = Counter((r["ambiguous_word"], r["original_translation"]) for r in same)
        problems = [f"{n} item(s) of {w!r} (translated {t!r}) have a contrastive identical to the reference "
                    "(never scored correct: ties count wrong)" for (w, t), n in by.most_common()]
        return problems, {"items": n, "identical_contrastive": len(same)}, {"ids": [r["id"] for r in same]}


class SensesPerWord(SuiteCheck):
    name = "mucow_senses_per_word"
    variants = (TRANSLATION,)
    rule = "every ambiguous word has at least two senses"

    def inspect(self, release, config, split, variant):
        senses: dict[str, set[str]] = defaultdict(set)
        items: Counter = Counter()
        for r in _rows(release, config, split, ["ambiguous_word", "correct_words"]):
            word, sense = sense_key(r, variant)
            senses[word].add(sense)
            items[word] += 1
        words, n_senses = len(senses), sum(len(s) for s in senses.values())
        single = sorted(w for w, s in senses.items() if len(s) < 2)
        one = {w: (next(iter(senses[w])), items[w]) for w in single}
        problems = [f"{w!r} has one sense ({one[w][0]!r}, {one[w][1]} item(s))" for w in single]
        return problems, {"ambiguous_words": words, "senses": n_senses, "single_sense_words": len(single),
                          "senses_per_word": round(n_senses / words, 3) if words else 0.0}, {}


class ItemsPerSense(SuiteCheck):
    name = "mucow_items_per_sense"
    rule = "items per sense within the paper's bounds"

    @staticmethod
    def bounds(release: Release, config: str, variant: str) -> tuple[int, int]:
        opts = options_of(release, config)
        if variant == SCORING:
            return 1, int(opts.get("scoring_per_sense", SCORING_PER_SENSE))
        return (int(opts.get("translation_min_per_sense", TRANSLATION_MIN_PER_SENSE)),
                int(opts.get("translation_max_per_sense", TRANSLATION_MAX_PER_SENSE)))

    def inspect(self, release, config, split, variant):
        columns = ["ambiguous_word", "sense" if variant == SCORING else "correct_words"]
        low, high = self.bounds(release, config, variant)
        per = Counter(sense_key(r, variant) for r in _rows(release, config, split, columns))
        outside = [(k, n) for k, n in sorted(per.items()) if not low <= n <= high]
        senses, least, most = len(per), min(per.values(), default=0), max(per.values(), default=0)
        problems = [f"{w!r} sense {s!r} has {k} item(s); allowed {low}-{high}" for (w, s), k in outside]
        return problems, {"senses": senses, "min_per_sense": least, "max_per_sense": most,
                          "allowed": [low, high], "outside": len(problems)}, {}


class SourceLength(SuiteCheck):
    name = "mucow_source_length"
    variants = (SCORING,)
    rule = "every source sentence is longer than the minimum number of words"

    def inspect(self, release, config, split, variant):
        min_words = int(options_of(release, config).get("scoring_min_words", SCORING_MIN_WORDS))
        languages = release.config_info(config).languages
        if not languages:
            raise ConfigError("the config declares no source language to tokenise with")
        tokenize = get_tokenizer(languages[0])
        rows = _rows(release, config, split, ["id", "source"])
        m = source_lengths([r["source"] for r in rows], tokenize, min_words)
        short = [rows[i]["id"] for i in m.short]
        metrics = {"items": len(rows), "min_words": min_words, "short_items": len(short),
                   "shortest_words": m.shortest_words, "shortest_tokens": m.shortest_tokens,
                   "items_under_min_tokens": m.under_min_tokens}
        problems = []
        if short:
            problems.append(f"{len(short):,} of {len(rows):,} item(s) have a source of {min_words} words or fewer "
                            f"(shortest: {metrics['shortest_words']} words, {metrics['shortest_tokens']} tokens "
                            "counting punctuation)")
        return problems, metrics, {"ids": short[:SHOWN], "words": "Moses tokens with a letter or digit",
                                   "rule": f"every source sentence is longer than {min_words} words"}


@dataclass(frozen=True)
class SourceLengths:
    """What ``mucow_source_length`` reports of a suite's sources (see :func:`source_lengths`)."""

    short: list[int]  # rows with min_words words or fewer, in order
    under_min_tokens: int
    shortest_words: int
    shortest_tokens: int


#: characters that make a source take the exact path: Moses deletes ASCII control characters
#: and turns "DOT...MULTI" back into dots, the only two ways it removes characters
_UNBOUNDED = re.compile(r"[\x00-\x1f]|MULTI")
#: from a chunk's first letter or digit to its end: one match per whitespace chunk holding one.
#: ``[^\W_]`` is ``str.isalnum`` and ``\s`` is ``str.isspace`` (what ``str.split`` splits on), for
#: every code point (tests/test_mucow_checks.py)
_WORD_CHUNK = re.compile(r"[^\W_]\S*")


def source_lengths(sources: Sequence[str], tokenize: Any, min_words: int, *,
                   exhaustive: bool = False) -> SourceLengths:
    """Words (Moses tokens with a letter or digit) and Moses tokens of the sources, tokenising
    only those that decide a figure.

    Moses only inserts spaces (it never joins two whitespace-separated chunks, and deletes no
    character but the two of :data:`_UNBOUNDED`), so each chunk of ``source.split()`` becomes
    one or more tokens: the chunks bound the tokens from below, and the chunks with a letter or
    digit bound the words. A source is tokenised when its bounds do not clear ``min_words`` (it
    may be short) or while its bound is under the shortest count found so far (it may be the
    shortest); every other source's counts cannot change a figure (most of MuCoW's 18,000 scoring
    sources have 20 words or more). ``exhaustive`` tokenises every source
    (tests/test_mucow_checks.py compares both on the real suites)."""
    exact: dict[int, tuple[int, int]] = {}

    def measure(i: int) -> tuple[int, int]:
        if i not in exact:
            toks = tokenize(sources[i])
            exact[i] = (n_words(toks), len(toks))
        return exact[i]

    bounds: dict[int, tuple[int, int]] = {}
    for i, text in enumerate(sources):
        if exhaustive or _UNBOUNDED.search(text):
            measure(i)
            continue
        b = (len(_WORD_CHUNK.findall(text)), len(text.split()))
        if b[0] <= min_words or b[1] < min_words:
            measure(i)
        else:
            bounds[i] = b
    shortest = []
    for k in (0, 1):  # words, tokens: the smallest bounds first, while one could be the minimum
        best = min((e[k] for e in exact.values()), default=None)
        for i in sorted(bounds, key=lambda i: bounds[i][k]):
            if best is not None and bounds[i][k] >= best:
                break
            best = measure(i)[k] if best is None else min(best, measure(i)[k])
        shortest.append(best or 0)
    return SourceLengths(short=sorted(i for i, e in exact.items() if e[0] <= min_words),
                         under_min_tokens=sum(1 for e in exact.values() if e[1] < min_words),
                         shortest_words=shortest[0], shortest_tokens=shortest[1])


class TargetWords(SuiteCheck):
    name = "mucow_target_words"
    variants = (TRANSLATION,)
    rule = "every item has correct and incorrect target words, and none is in both"

    def inspect(self, release, config, split, variant):
        rows = _rows(release, config, split, ["id", "correct_words", "incorrect_words"])
        problems = []
        for r in rows:
            good, bad = r["correct_words"], r["incorrect_words"]
            if not good or not bad:
                problems.append(f"{r['id']}: {len(good)} correct and {len(bad)} incorrect word(s)")
            elif set(good) & set(bad):
                problems.append(f"{r['id']}: {sorted(set(good) & set(bad))} listed as correct and incorrect")
        return problems, {"items": len(rows), "bad_items": len(problems)}, {}


class DomainRule(SuiteCheck):
    name = "mucow_domain_rule"
    variants = (TRANSLATION,)
    rule = "each sense is out of domain exactly when more than half of its items come from subtitles"

    def inspect(self, release, config, split, variant):
        subtitles = {s.lower() for s in options_of(release, config).get("subtitle_labels", SUBTITLE_LABELS)}
        by: dict[tuple[str, str], list[dict]] = defaultdict(list)
        for r in _rows(release, config, split, ["ambiguous_word", "correct_words", "corpus", "domain"]):
            by[sense_key(r, variant)].append(r)
        problems = []
        for (word, sense), items in sorted(by.items()):
            domains = sorted({domain_name(i["domain"]) for i in items})
            subs = sum(i["corpus"].lower() in subtitles for i in items)
            expected = "out" if 2 * subs > len(items) else "in"
            if domains != [expected]:
                problems.append(f"{word!r} sense {sense!r}: {subs} of {len(items)} item(s) from subtitles, so "
                                f"{expected!r}, but marked {'/'.join(domains)}")
        return problems, {"senses": len(by), "violations": len(problems)}, {"subtitle_labels": sorted(subtitles)}


class SuiteStatistics(Check):
    """The paper's per-suite figures (Tables 4 and 6 report them per pair): descriptive only."""

    name = "mucow_suite_statistics"
    family = "distribution"
    concurrent = True  # as SuiteCheck's

    def run(self, release: Release) -> list[CheckResult]:
        out = []
        for config in release.configs():
            variant = variant_of(release, config)
            if variant is None:
                continue
            for split in release.splits(config):
                extra = ["contrastive_translations", "sense"] if variant == SCORING else ["correct_words", "domain"]
                table = release.table(config, split, ["ambiguous_word", "corpus", *extra])
                st = suite_statistics(table.to_pylist(), variant)
                tail = (f"{st['contrastive_pairs']:,} contrastive" if variant == SCORING
                        else f"{st['in_domain']:,} in / {st['out_of_domain']:,} out of domain")
                out.append(self.stat(
                    f"{config}/{split}: {st['items']:,} items, {st['ambiguous_words']:,} ambiguous words, "
                    f"{st['senses_per_word']:.2f} senses per word, {tail}",
                    config=config, metrics=st, details={"split": split},
                ))
        return out or [self.result(Status.SKIP, "no MuCoW suite in this release")]


def strict_checks() -> list[Check]:
    """Every MuCoW check, a violation failing: what a suite built by the paper's rules must pass."""
    return [SuiteStatistics(), ContrastivePresent(), ContrastiveAligned(), ContrastiveDiffers(), SensesPerWord(),
            ItemsPerSense(), SourceLength(), TargetWords(), DomainRule()]
