"""The released MuCoW suites: fixture builds (the shared builder test base, absent pairs reported,
malformed inputs leave nothing) and the real WMT2019 files (counts per pair, published.yaml's figures,
the checks' verdicts on the data as released, load_dataset round trip)."""

from __future__ import annotations

import dataclasses
import json
import shutil
from collections import defaultdict
from pathlib import Path
from typing import ClassVar

import datasets
import pytest
from benchsmith.builders.mucow import SCORING_PAIRS, TRANSLATION_PAIRS, MucowBuilder
from benchsmith.builders.mucow.checks import strict_checks
from benchsmith.validation.check import Status
from benchsmith.validation.fidelity import FidelityCheck
from builder_testing import BuilderTestBase

from benchsmith.builder import get_builder
from benchsmith.cli import main
from benchsmith.errors import ConfigError, MissingSourceError, ParseError
from benchsmith.expectation import read_published_yaml
from benchsmith.release import ReleaseWriter
from benchsmith.source import resolve_sources

FIX = Path(__file__).parent / "fixtures" / "mucow"  # a --sources DIR: FIX/mucow/WMT2019/...


def build(sources_dir: Path, registry: Path, *, checksums: bool = False, skip_missing: bool = True, configs=None):
    b = get_builder("mucow")
    sources = resolve_sources(b.sources, b.checksums() if checksums else {}, sources_dir, allow_missing=True)
    return ReleaseWriter(b, registry, sources, skip_missing=skip_missing, configs=configs).write()


@pytest.fixture(scope="module")
def fixture_release(tmp_path_factory):
    return build(FIX, tmp_path_factory.mktemp("reg"))


def test_fixture_builds_present_pairs_and_reports_absent_ones(fixture_release):
    r = fixture_release
    assert r.configs() == ["scoring-cs-en", "translation-en-cs", "translation-en-de"]
    assert {c: r.num_examples(c, "test") for c in r.configs()} == {
        "scoring-cs-en": 3, "translation-en-cs": 2, "translation-en-de": 4}
    skipped = r.manifest["skipped_configs"]
    expected_absent = {f"scoring-{p}" for p in SCORING_PAIRS if p != "cs-en"} | {
        f"translation-{p}" for p in TRANSLATION_PAIRS if p not in ("en-cs", "en-de")}
    assert set(skipped) == expected_absent
    assert "is missing" in skipped["scoring-ro-en"]["test"]


def test_fixture_rows(fixture_release):
    rows = list(fixture_release.examples("scoring-cs-en", "test"))
    assert rows[0]["id"] == "cs-en-00000" and rows[0]["replacements"] == ["bond", "binding"]
    assert rows[0]["contrastive_translations"][0].endswith("if the bond is not legal.")
    assert rows[2]["contrastive_translations"] == []
    tr = list(fixture_release.examples("translation-en-cs", "test"))
    assert [t["sense"] for t in tr] == ["antény_anténa", "tykadlo"]  # from the tts json
    de = list(fixture_release.examples("translation-en-de", "test"))
    assert [t["sense"] for t in de] == [""] * 4  # no json upstream for en-de: nothing invented
    assert [t["domain"] for t in de] == [1, 0, 1, 0]  # ClassLabel ["in", "out"]


def test_fixture_loads_with_datasets(fixture_release):
    d = datasets.load_dataset(str(fixture_release.path), "translation-en-de", split="test")
    assert d.features["domain"].names == ["in", "out"] and d[1]["correct_words"] == ["teilchenbeschleuniger", "beschleuniger"]


class TestMucowBuilder(BuilderTestBase):
    """The shared builder checks on the fixture: three of the sixteen suites are present, the others
    are recorded as skipped (``--skip-missing``)."""

    builder = MucowBuilder
    sources = FIX
    counts: ClassVar = {"scoring-cs-en": {"test": 3}, "translation-en-cs": {"test": 2}, "translation-en-de": {"test": 4}}
    features: ClassVar = {
        "scoring-cs-en": ["id", "source", "reference", "ambiguous_word", "original_translation", "sense", "corpus",
                          "contrastive_translations", "replacements"],
        "translation-en-de": ["id", "sentence_id", "source", "reference", "ambiguous_word", "sense",
                              "correct_words", "incorrect_words", "domain", "corpus"],
    }


def test_fixture_figures_over_skipped_suites_are_not_measurable(fixture_release):
    """A figure over all nine translation suites cannot be measured on a partial build: a skip, not a fail."""
    results = {r.details["key"]: r for r in FidelityCheck(get_builder("mucow").expectations()).run(fixture_release)}
    assert {r.status for r in results.values()} == {Status.SKIP}
    assert "7 translation suite(s) not built" in results["translation/total_items"].summary
    measures = get_builder("mucow").measures()
    figure = next(f for f in read_published_yaml(MucowBuilder.data_path("published.yaml"))
                  if f.id == "translation/total_items")
    with pytest.raises(ConfigError, match="translation-de-en"):
        measures["suite_items"](fixture_release, figure)


def test_builder_declares_no_expectations_in_code():
    """Figures are data (published.yaml): the builder overrides measures(), never expectations()."""
    assert "expectations" not in vars(MucowBuilder) and "measures" in vars(MucowBuilder)
    assert [e.key for e in get_builder("mucow").expectations()] == [
        "translation/total_items", "translation/language_pairs", "scoring/language_pairs", "scoring/sentence_pairs",
        "scoring/senses_per_word_outside_paper_range"]


def test_absent_pair_without_skip_missing_fails_and_leaves_nothing(tmp_path):
    with pytest.raises(MissingSourceError, match="ro-en.mucow.scoring.json"):
        build(FIX, tmp_path, skip_missing=False, configs=["scoring-ro-en"])
    assert not (tmp_path / "mucow" / "1.0.0").exists()
    assert not [p for p in (tmp_path / "mucow").iterdir()]  # no temporary sibling either


def test_malformed_file_is_a_parse_error_at_file_line_and_leaves_nothing(tmp_path):
    src = tmp_path / "src"
    shutil.copytree(FIX, src)
    key = src / "mucow" / "WMT2019" / "translation test suite" / "txt" / "en-de.key.txt"
    key.write_text(key.read_text(encoding="utf-8").replace("1000002\teubooks", "1000002"), encoding="utf-8")
    reg = tmp_path / "reg"
    with pytest.raises(ParseError) as exc:
        build(src, reg)
    assert exc.value.path == key and exc.value.line == 4
    assert not (reg / "mucow" / "1.0.0").exists()


def test_cli_build_malformed_exits_2_with_one_line(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr("benchsmith.builders.mucow.MucowBuilder.checksums", classmethod(lambda cls: {}))
    src = tmp_path / "src"
    shutil.copytree(FIX, src)
    js = src / "mucow" / "WMT2019" / "scoring test suite" / "json" / "cs-en.mucow.scoring.json"
    js.write_text(js.read_text(encoding="utf-8").replace('"origin": "opensubs",\n    "sense": "bond"', '"sense": "bond"'),
                  encoding="utf-8")
    code = main(["-q", "build", "mucow", "--sources", str(src), "--registry", str(tmp_path / "reg"), "--skip-missing"])
    err = capsys.readouterr().err
    assert code == 2
    assert f"{js}:22" in err and "lacks field(s) ['origin']" in err
    assert not (tmp_path / "reg" / "mucow" / "1.0.0").exists()


# ----------------------------------------------------------------------------- real data

REAL_COUNTS = {
    # items per pair in the upstream WMT2019 files (json array lengths; txt line counts)
    "scoring-cs-en": 3791, "scoring-et-en": 1094, "scoring-lt-en": 356, "scoring-lv-en": 139,
    "scoring-ro-en": 4787, "scoring-ru-en": 4161, "scoring-tr-en": 3723,
    "translation-de-en": 4268, "translation-en-cs": 1843, "translation-en-de": 3337, "translation-en-fi": 830,
    "translation-en-lt": 69, "translation-en-ru": 1814, "translation-fi-en": 2117, "translation-lt-en": 99,
    "translation-ru-en": 1223,
}


@pytest.fixture(scope="module")
def real_release(raw, tmp_path_factory):
    # checksums=True: the registered sha256 of every upstream file is verified
    return build(raw, tmp_path_factory.mktemp("realreg"), checksums=True, skip_missing=False)


def test_real_counts_per_pair(real_release):
    assert {c: real_release.num_examples(c, "test") for c in real_release.configs()} == REAL_COUNTS
    assert real_release.manifest["skipped_configs"] == {}
    files = real_release.manifest["sources"]["mucow"]["files"]
    assert {f["status"] for f in files.values()} == {"verified"}


def test_real_translation_total_matches_the_readme(real_release):
    exp = {e.key: e for e in get_builder("mucow").expectations()}["translation/total_items"]
    ok, measured = exp.check(real_release)
    assert ok and measured == 15600


def test_real_published_figures(real_release):
    """published.yaml on the real build: measurable figures agree, the 11-pair scoring figures are skips
    (upstream's WMT2019 folder holds 7 of the paper's 11 scoring pairs)."""
    results = {r.details["key"]: r for r in FidelityCheck(get_builder("mucow").expectations()).run(real_release)}
    assert {k: r.status for k, r in results.items()} == {
        "translation/total_items": Status.PASS, "translation/language_pairs": Status.PASS,
        "scoring/language_pairs": Status.SKIP, "scoring/sentence_pairs": Status.SKIP,
        "scoring/senses_per_word_outside_paper_range": Status.PASS,
    }
    assert results["translation/language_pairs"].metrics["measured"] == 9
    assert "4 pairs that upstream's WMT2019 folder does not hold" in results["scoring/language_pairs"].summary
    figures = {f.id: f for f in read_published_yaml(MucowBuilder.data_path("published.yaml"))}
    sentence_pairs = get_builder("mucow").measures()["suite_sentence_pairs"]
    measurable = dataclasses.replace(figures["scoring/sentence_pairs"], needs=None)
    assert sentence_pairs(real_release, measurable) == 18051 + 35590  # the 7 pairs' items + contrastives
    assert "hold 53,641" in " ".join(figures["scoring/sentence_pairs"].what.split())


def test_real_checks_warn_exactly_on_the_known_upstream_defects(real_release):
    """The checks MucowBuilder declares: no failure on the real data; warnings name the defects of the
    WMT2019 files as released, which the strict (harvest) checks fail on."""
    by = defaultdict(dict)
    for check in get_builder("mucow").checks():
        for r in check.run(real_release):
            by[r.check][r.config] = r
    statuses = {check: {c: r.status.value for c, r in res.items() if r.status != Status.PASS}
                for check, res in by.items()}
    assert statuses == {
        "mucow_suite_statistics": {c: "stat" for c in REAL_COUNTS},
        "mucow_contrastive_present": {"scoring-ro-en": "warn", "scoring-ru-en": "warn"},
        "mucow_contrastive_aligned": {},
        "mucow_contrastive_differs": {"scoring-cs-en": "warn", "scoring-ro-en": "warn", "scoring-ru-en": "warn"},
        "mucow_senses_per_word": {},
        "mucow_items_per_sense": {}, "mucow_target_words": {}, "mucow_domain_rule": {},
    }
    assert by["mucow_contrastive_present"]["scoring-ro-en"].metrics["without_contrastive"] == 20
    assert "20 item(s) of 'șah' have no contrastive" in by["mucow_contrastive_present"]["scoring-ro-en"].summary
    assert "20 item(s) of 'свеча' have no contrastive" in by["mucow_contrastive_present"]["scoring-ru-en"].summary
    same = {c: by["mucow_contrastive_differs"][c].metrics["identical_contrastive"]
            for c in ("scoring-cs-en", "scoring-ro-en", "scoring-ru-en")}
    assert same == {"scoring-cs-en": 20, "scoring-ro-en": 27, "scoring-ru-en": 6}
    assert "'d.n.a.'" in by["mucow_contrastive_differs"]["scoring-cs-en"].summary
    assert by["mucow_suite_statistics"]["translation-en-lt"].metrics["in_domain"] == 30
    strict = {(r.check, r.config) for c in strict_checks() for r in c.run(real_release) if r.status == Status.FAIL}
    assert strict == {(check, config) for check, res in statuses.items() for config, st in res.items() if st == "warn"}


def test_real_rows_are_well_formed(real_release):
    for config in real_release.configs():
        t = real_release.table(config, "test")
        assert t.num_rows == REAL_COUNTS[config]
        if config.startswith("scoring-"):
            rows = t.to_pylist()
            assert all(len(r["contrastive_translations"]) == len(r["replacements"]) for r in rows)
            assert sum(len(r["contrastive_translations"]) == 0 for r in rows) in (0, 20)  # ro-en, ru-en: 20 upstream
        else:
            senses = t.column("sense").to_pylist()
            matched = sum(bool(s) for s in senses)
            if config in ("translation-de-en", "translation-en-de"):
                assert matched == 0
            else:  # every txt item is in the tts json pool (sentence id, source, word)
                assert matched == len(senses)


def test_real_release_loads_and_card_has_statistics(real_release):
    d = datasets.load_dataset(str(real_release.path), "scoring-lv-en", split="test")
    assert len(d) == 139 and d.features["contrastive_translations"].feature.dtype == "string"
    card = (real_release.path / "README.md").read_text(encoding="utf-8")
    assert "| translation-en-lt | 69 | 4 | 2.00 | 30 in / 39 out |" in card
    manifest = json.loads((real_release.path / "release.json").read_text(encoding="utf-8"))
    assert manifest["configs"]["translation-de-en"]["metadata"]["pair"] == "de-en"


def test_real_references_as_output_find_the_correct_words(real_release):
    """The key lists the reference's own words: every reference is covered, few contain an incorrect word too."""
    from benchsmith.builders.mucow.metric import MucowTranslationPRF

    items = list(real_release.examples("translation-en-de", "test"))
    refs = [i["reference"] for i in items]
    out = MucowTranslationPRF("de").score(items, refs, [r.lower() for r in refs])
    assert out["unknown"] == 0 and out["coverage"] == 1.0
    assert out["precision"] > 0.99 and out["negative"] > 0  # both-found counts as wrong


def test_real_scoring_oracle_and_anti_oracle(real_release):
    from benchsmith.builders.mucow.metric import MucowScoringAccuracy

    items = list(real_release.examples("scoring-ro-en", "test"))
    oracle = [s for it in items for s in [0.0] + [1.0] * len(it["contrastive_translations"])]
    assert MucowScoringAccuracy().score(items, oracle)["accuracy"] == 1.0
    anti = MucowScoringAccuracy(maximize=True).score(items, oracle)
    assert anti["correct"] == sum(not it["contrastive_translations"] for it in items) == 20  # vacuous items only
