"""MuCoW's dataset checks (builders/mucow/checks.py): each rule passes on a well-formed suite and
fails (or warns, at the severity a builder declares) on one that breaks it; the statistics never do.

Suites are written as real releases from rows given inline (configs ``scoring`` and ``translation``
with MuCoW's features, as a harvest writes them).
"""

from __future__ import annotations

import copy
import dataclasses
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from benchsmith.builder import Builder, Config
from benchsmith.builders.mucow.checks import (
    ContrastiveAligned,
    ContrastiveDiffers,
    ContrastivePresent,
    DomainRule,
    ItemsPerSense,
    SensesPerWord,
    SourceLength,
    SuiteStatistics,
    TargetWords,
    strict_checks,
)
from benchsmith.builders.mucow.schema import SCORING_FEATURES, TRANSLATION_FEATURES
from benchsmith.errors import ConfigError
from benchsmith.release import Release, ReleaseWriter
from benchsmith.source import Sources
from benchsmith.validation.check import Status

#: a source of 12 words (14 Moses tokens): longer than the paper's 10
LONG_SOURCE = "Satz {k} mit der Bank , die wir gestern im Park gesehen haben ."


def scoring_item(k: int, sense: str, other: str) -> dict:
    ref = f"Sentence {k} has the {sense} in it and it is long enough to keep."
    return {"id": f"s-{k:03d}", "source": LONG_SOURCE.format(k=k), "reference": ref, "ambiguous_word": "bank",
            "original_translation": sense, "sense": sense, "corpus": "europarl",
            "contrastive_translations": [ref.replace(sense, other)], "replacements": [other]}


def translation_item(k: int, sense: str, other: str, corpus: str, domain: str) -> dict:
    return {"id": f"t-{k:03d}", "sentence_id": k, "source": f"Satz {k} mit der Bank.",
            "reference": f"Sentence {k} with the {sense}.", "ambiguous_word": "bank", "sense": sense,
            "correct_words": [sense], "incorrect_words": [other], "domain": domain, "corpus": corpus}


def good_scoring() -> list[dict]:
    return [scoring_item(k, "bank", "bench") for k in range(3)] + [scoring_item(3 + k, "bench", "bank") for k in range(2)]


def good_translation() -> list[dict]:
    # bank: 4 items, none from subtitles -> in; bench: 3 of 4 from subtitles -> out
    return ([translation_item(k, "bank", "bench", "europarl", "in") for k in range(4)]
            + [translation_item(4 + k, "bench", "bank", "opensubtitles" if k < 3 else "europarl", "out")
               for k in range(4)])


class SuiteBuilder(Builder):
    """Writes the given rows as configs ``scoring`` / ``translation`` (metadata: a harvest's options)."""

    name = "mucow-suite-fixture"
    release_notes = {"1.0.0": "fixture"}  # noqa: RUF012 - as the Builder base declares it

    def __init__(self, rows: dict[str, list[dict]], options: dict | None = None) -> None:
        super().__init__()
        self.rows, self.options = rows, options

    def configs(self):
        features = {"scoring": SCORING_FEATURES, "translation": TRANSLATION_FEATURES}
        meta = {"options": self.options} if self.options else {}
        return [Config(c, c, features[c], splits=("test",), languages=("de", "en"), metadata=meta) for c in self.rows]

    def examples(self, config, split, sources) -> Iterator[dict]:
        yield from self.rows[config.name]


def suite(tmp_path: Path, options: dict | None = None, **rows: list[dict]) -> Release:
    registry = tmp_path / f"reg{len(list(tmp_path.glob('reg*')))}"
    return ReleaseWriter(SuiteBuilder(rows, options), registry, Sources({})).write()


def statuses(check, release: Release) -> dict[str | None, Status]:
    return {r.config: r.status for r in check.run(release)}


def edit(rows: list[dict], k: int, **changes) -> list[dict]:
    rows = copy.deepcopy(rows)
    rows[k].update(changes)
    return rows


# (check class, variant, rows that break the rule, words of the failing summary)
BROKEN: list[tuple[type, str, Callable[[], list[dict]], str]] = [
    (ContrastivePresent, "scoring", lambda: edit(good_scoring(), 0, contrastive_translations=[], replacements=[]),
     "1 item(s) of 'bank' have no contrastive translation"),
    (ContrastiveAligned, "scoring", lambda: edit(good_scoring(), 1, replacements=["bench", "seat"]),
     "s-001: 1 contrastive translation(s), 2 replacement(s)"),
    (ContrastiveDiffers, "scoring",
     lambda: edit(good_scoring(), 2, contrastive_translations=[good_scoring()[2]["reference"]]),
     "have a contrastive identical to the reference"),
    (SensesPerWord, "translation", lambda: [r for r in good_translation() if r["sense"] == "bench"],
     "'bank' has one sense ('bench', 4 item(s))"),
    (ItemsPerSense, "scoring",
     lambda: good_scoring() + [scoring_item(10 + k, "bench", "bank") for k in range(19)],
     "'bank' sense 'bench' has 21 item(s); allowed 1-20"),
    (ItemsPerSense, "translation", lambda: good_translation()[1:],
     "'bank' sense 'bank' has 3 item(s); allowed 4-10"),
    (ItemsPerSense, "translation",
     lambda: good_translation() + [translation_item(20 + k, "bank", "bench", "europarl", "in") for k in range(7)],
     "'bank' sense 'bank' has 11 item(s); allowed 4-10"),
    # 10 words (12 tokens counting the comma and the full stop) is not "longer than 10 words"
    (SourceLength, "scoring", lambda: edit(good_scoring(), 1, source="Satz 1 mit der Bank , die wir gestern dort sahen ."),
     "1 of 5 item(s) have a source of 10 words or fewer (shortest: 10 words, 12 tokens counting punctuation)"),
    (TargetWords, "translation", lambda: edit(good_translation(), 0, incorrect_words=[]),
     "t-000: 1 correct and 0 incorrect word(s)"),
    (TargetWords, "translation", lambda: edit(good_translation(), 0, incorrect_words=["bench", "bank"]),
     "t-000: ['bank'] listed as correct and incorrect"),
    (DomainRule, "translation", lambda: edit(good_translation(), 0, domain="out"),
     "'bank' sense 'bank': 0 of 4 item(s) from subtitles, so 'in', but marked in/out"),
    # exactly half from subtitles is not "more than half": in domain
    (DomainRule, "translation", lambda: edit(good_translation(), 4, corpus="europarl"),
     "'bank' sense 'bench': 2 of 4 item(s) from subtitles, so 'in', but marked out"),
]


@pytest.mark.parametrize("cls, variant, broken, words", BROKEN, ids=lambda v: getattr(v, "__name__", None))
def test_each_rule_passes_when_kept_and_fails_or_warns_when_broken(tmp_path, cls, variant, broken, words):
    good = {"scoring": good_scoring, "translation": good_translation}[variant]()
    ok = suite(tmp_path, **{variant: good})
    assert statuses(cls(), ok) == {variant: Status.PASS}
    bad = suite(tmp_path, **{variant: broken()})
    (result,) = cls().run(bad)
    assert result.status == Status.FAIL and result.config == variant
    assert words in result.summary and words in result.details["problems"][0]
    (warned,) = cls(severity=Status.WARN).run(bad)
    assert warned.status == Status.WARN and warned.summary == result.summary


#: a suite with more than one offence: several words of one sense, a reference equal to the second
#: of three contrastives, several groups out of bounds, decomposed and composed letters (two strings)
def several_offences() -> dict[str, list[dict]]:
    return {
        "scoring": (edit(edit(edit(good_scoring(), 0, contrastive_translations=[], replacements=["x"]), 2,
                               contrastive_translations=["a", good_scoring()[2]["reference"], "b"],
                               replacements=["a", "b", "c"]), 4, ambiguous_word="cafe\u0301")
                    + [scoring_item(10 + k, "bench", "bank") for k in range(21)]),
        "translation": (good_translation()[1:]
                        + [{**translation_item(30 + k, w, "x", "europarl", "in"), "ambiguous_word": w}
                           for k, w in enumerate(["caf\u00e9", "cafe\u0301", "seal", "seal"])])}


def test_each_offence_of_a_suite_with_several_is_found(tmp_path):
    release = suite(tmp_path, **several_offences())
    for check in strict_checks():
        if check.name in ("mucow_contrastive_present", "mucow_contrastive_aligned", "mucow_contrastive_differs",
                          "mucow_items_per_sense", "mucow_senses_per_word"):
            assert {r.status for r in check.run(release)} == {Status.FAIL}, check.name


def test_offending_ids_and_counts_are_reported(tmp_path):
    rows = edit(good_scoring(), 0, contrastive_translations=[], replacements=[])
    rows = edit(rows, 3, contrastive_translations=[rows[3]["reference"]])
    release = suite(tmp_path, scoring=rows)
    (empty,) = ContrastivePresent().run(release)
    assert empty.metrics == {"items": 5, "without_contrastive": 1} and empty.details["ids"] == ["s-000"]
    (same,) = ContrastiveDiffers().run(release)
    assert same.metrics == {"items": 5, "identical_contrastive": 1} and same.details["ids"] == ["s-003"]
    assert "translated 'bench'" in same.summary


def test_a_harvests_recorded_options_set_the_bounds(tmp_path):
    """The harvest records its options in the config metadata; the checks read them."""
    tight = suite(tmp_path, {"translation_min_per_sense": 2, "translation_max_per_sense": 3, "scoring_per_sense": 2},
                  scoring=good_scoring(), translation=good_translation())
    got = {r.config: r for r in ItemsPerSense().run(tight)}
    assert got["scoring"].status == Status.FAIL and "has 3 item(s); allowed 1-2" in got["scoring"].summary
    assert got["translation"].status == Status.FAIL and "has 4 item(s); allowed 2-3" in got["translation"].summary
    assert got["translation"].metrics["allowed"] == [2, 3] and got["translation"].metrics["outside"] == 2
    # europarl named a subtitles corpus: bank's 4 europarl items make it out of domain
    relabelled = suite(tmp_path, {"subtitle_labels": ["europarl"]}, translation=good_translation())
    (dom,) = DomainRule().run(relabelled)
    assert dom.status == Status.FAIL and "4 of 4 item(s) from subtitles, so 'out'" in dom.summary
    assert dom.details["subtitle_labels"] == ["europarl"]


def test_variants_are_told_apart_by_features_and_absent_ones_skip(tmp_path):
    only_translation = suite(tmp_path, translation=good_translation())
    (skipped,) = ContrastivePresent().run(only_translation)
    assert skipped.status == Status.SKIP and "no scoring suite" in skipped.summary
    assert statuses(SensesPerWord(), only_translation) == {"translation": Status.PASS}
    (skipped,) = ItemsPerSense(variants=("scoring",)).run(only_translation)
    assert skipped.status == Status.SKIP and "no scoring suite" in skipped.summary
    # a scoring word whose items all have one sense is no violation: they are contrasted with its other senses
    only_scoring = suite(tmp_path, scoring=[r for r in good_scoring() if r["sense"] == "bank"])
    assert SensesPerWord().run(only_scoring)[0].status == Status.SKIP
    assert statuses(ContrastivePresent(), only_scoring) == {"scoring": Status.PASS}


def test_bad_check_settings_are_config_errors():
    with pytest.raises(ConfigError, match="fail or warn, not pass"):
        ContrastivePresent(severity=Status.PASS)
    with pytest.raises(ConfigError, match="fail or warn, not stat"):
        ContrastivePresent(severity="stat")
    assert ContrastivePresent(severity="warn").severity is Status.WARN
    with pytest.raises(ConfigError, match="does not apply to \\['translation'\\]"):
        ContrastivePresent(variants=("translation",))


def test_statistics_are_stat_results_that_never_fail(tmp_path):
    broken = edit(good_scoring(), 0, contrastive_translations=[], replacements=[])
    release = suite(tmp_path, scoring=broken, translation=good_translation())
    results = {r.config: r for r in SuiteStatistics().run(release)}
    assert {r.status for r in results.values()} == {Status.STAT}
    assert results["scoring"].metrics["items"] == 5 and results["scoring"].metrics["contrastive_pairs"] == 4
    assert results["scoring"].metrics["senses_per_word"] == 2.0
    assert (results["translation"].metrics["in_domain"], results["translation"].metrics["out_of_domain"]) == (4, 4)
    assert "8 items, 1 ambiguous words, 2.00 senses per word, 4 in / 4 out of domain" in results["translation"].summary


def test_strict_checks_pass_on_well_formed_suites(tmp_path):
    release = suite(tmp_path, scoring=good_scoring(), translation=good_translation())
    results = [r for c in strict_checks() for r in c.run(release)]
    assert {r.status for r in results} == {Status.PASS, Status.STAT}
    assert {r.check for r in results} == {"mucow_suite_statistics", "mucow_contrastive_present",
                                          "mucow_contrastive_aligned", "mucow_contrastive_differs",
                                          "mucow_senses_per_word", "mucow_items_per_sense", "mucow_source_length",
                                          "mucow_target_words", "mucow_domain_rule"}


def test_source_length_counts_words_as_the_harvest_does_and_reads_its_options(tmp_path):
    """Words are Moses tokens with a letter or digit (punctuation does not count); the threshold is the
    harvest's ``scoring_min_words`` when recorded; the result says how short the shortest source is."""
    rows = edit(good_scoring(), 1, source="Satz 1 mit der Bank , die wir gestern dort sahen .")
    (res,) = SourceLength().run(suite(tmp_path, scoring=rows))
    assert res.metrics == {"items": 5, "min_words": 10, "short_items": 1, "shortest_words": 10,
                           "shortest_tokens": 12, "items_under_min_tokens": 0}
    assert res.details["ids"] == ["s-001"] and res.details["words"] == "Moses tokens with a letter or digit"
    (loose,) = SourceLength().run(suite(tmp_path, {"scoring_min_words": 9}, scoring=rows))
    assert loose.status == Status.PASS and loose.summary == "scoring/test: every source sentence is longer than 9 words"


def test_source_length_skips_without_a_source_language_or_tokenizer(tmp_path, monkeypatch):
    release = suite(tmp_path, scoring=good_scoring())
    scoring = dataclasses.replace(release.info.configs["scoring"], languages=())
    monkeypatch.setattr(release, "info", dataclasses.replace(release.info, configs={**release.info.configs,
                                                                                  "scoring": scoring}))
    (res,) = SourceLength().run(release)
    assert res.status == Status.SKIP and "declares no source language" in res.summary

    def no_sacremoses(lang):
        raise ConfigError("sacremoses is not installed", hint="pip install 'benchsmith[nlp]'")

    monkeypatch.setattr("benchsmith.builders.mucow.checks.get_tokenizer", no_sacremoses)
    (res,) = SourceLength().run(suite(tmp_path, scoring=good_scoring()))
    assert res.status == Status.SKIP and "sacremoses is not installed" in res.summary


TRICKY_SOURCES = [
    "Satz mit der Bank , die wir gestern im Park gesehen haben und noch einmal sahen .",  # long: bounded
    "Kurz , aber : ja !", "", "   ", "a\tb\x01c d e f g h i j k l",  # control character: exact path
    "eins zwei drei vier fünf sechs sieben acht neun zehn elf",  # 11 chunks: just over the bound
    "DOTMULTI eins zwei drei vier fünf sechs sieben acht neun zehn elf zwölf",  # Moses rewrites it: exact
    "Herr Dr. Müller kam um 10.30 Uhr ... und ging \"schnell\" wieder -- ohne ein Wort zu sagen .",
    "— – … « » ( ) [ ] { } eins zwei drei vier fünf sechs sieben acht neun zehn",
]


@pytest.mark.parametrize("min_words", [0, 5, 10, 12, 40])
def test_source_lengths_tokenise_only_what_decides_a_figure_and_agree_with_every_source_tokenised(min_words):
    from benchsmith.builders.mucow.checks import source_lengths
    from benchsmith.nlp.tokenize import get_tokenizer

    tok = get_tokenizer("de")
    seen: list[str] = []

    def counting(text):
        seen.append(text)
        return tok(text)

    bounded = source_lengths(TRICKY_SOURCES, counting, min_words)
    assert bounded == source_lengths(TRICKY_SOURCES, tok, min_words, exhaustive=True)
    if min_words == 5:
        assert len(seen) < len(TRICKY_SOURCES)  # the long sources were never tokenised


def test_word_chunks_are_the_chunks_with_a_letter_or_digit_for_every_code_point():
    """``_WORD_CHUNK`` counts what ``sum(any(ch.isalnum() for ch in c) for c in text.split())`` counts:
    its ``[^\\W_]`` is ``str.isalnum`` and its ``\\S`` is not ``str.isspace`` for every code point."""
    import array
    import re
    import sys

    from benchsmith.builders.mucow.checks import _WORD_CHUNK

    codes = array.array("I", range(sys.maxunicode + 1)).tobytes()  # every code point, surrogates too
    every = codes.decode(f"utf-32-{'le' if sys.byteorder == 'little' else 'be'}", "surrogatepass")
    assert len(every) == sys.maxunicode + 1
    assert "".join(re.findall(r"[^\W_]", every)) == "".join(filter(str.isalnum, every))
    assert "".join(re.findall(r"\s", every)) == "".join(filter(str.isspace, every))
    for text in TRICKY_SOURCES + ["Das ist usw.", "x\u00a0y", "tab\tab", "ünïcödé wörter und ΣΩ", "-- a-b ,, ² ½ _ __x\u00a0y\u2003z"]:
        assert len(_WORD_CHUNK.findall(text)) == sum(any(ch.isalnum() for ch in c) for c in text.split()), text


@pytest.mark.realdata
@pytest.mark.slow
def test_source_lengths_on_the_real_suites_agree_with_every_source_tokenised(raw):
    import json

    from benchsmith.builders.mucow.checks import SCORING_MIN_WORDS, source_lengths
    from benchsmith.nlp.tokenize import get_tokenizer

    for f in sorted((raw / "mucow" / "WMT2019" / "scoring test suite" / "json").glob("*.json")):
        sources = [item["source"] for item in json.loads(f.read_text(encoding="utf-8"))]
        tok = get_tokenizer(f.name[:2])
        for min_words in (SCORING_MIN_WORDS, 15):
            assert source_lengths(sources, tok, min_words) == source_lengths(sources, tok, min_words,
                                                                              exhaustive=True), f.name
