"""XCOPA + English COPA built from the real raw data (../shared/raw), both versions.

Counts, the join to COPA (label, question, choice order), every erratum against
the evidence re-derived from the raw files, the audits and the diversity indices.
"""

from __future__ import annotations

import csv
import json
import logging
import math
import re
from collections import Counter

import datasets
import pytest
from benchsmith.builders.xcopa import Xcopa
from benchsmith.builders.xcopa.alignment import (
    RawData,
    derive_question_errata,
    order_margin,
    question_errata_rows,
    question_errata_up_to_date,
)
from benchsmith.builders.xcopa.checks import XcopaBalance, XcopaConsistency, XcopaDiversity, XcopaPartialInput
from benchsmith.builders.xcopa.diversity import _import_lang2vec
from benchsmith.builders.xcopa.metric import score
from benchsmith.loaders.xcopa_jsonl import GMT_LANGUAGES, LANGUAGES
from benchsmith.validation.check import Status

from benchsmith.builder import get_builder
from benchsmith.erratum import read_errata_tsv
from benchsmith.expectation import read_published_yaml
from benchsmith.release import ReleaseWriter
from benchsmith.source import resolve_sources

pytestmark = pytest.mark.realdata

#: question disagreements with COPA per language: (validation, test), measured on upstream
QUESTION_ERRATA = {"th": (52, 250), "tr": (52, 51), "sw": (6, 37), "id": (5, 4), "it": (5, 4)}


@pytest.fixture(scope="module")
def raw_data(raw):
    return RawData.read(raw / "xcopa", raw / "copa")


@pytest.fixture(scope="module")
def releases(raw, tmp_path_factory):
    logging.getLogger("benchsmith.source").setLevel(logging.ERROR)
    reg = tmp_path_factory.mktemp("registry")
    out = {}
    for version in ("1.0.0", "1.1.0"):
        b = get_builder("xcopa", version)
        srcs = resolve_sources(b.sources, b.checksums(), raw)  # every file sha256-verified
        out[version] = ReleaseWriter(b, reg, srcs).write()
    return out


def _rows(release, config, split):
    return release.table(config, split).to_pylist()


def test_every_file_is_registered(releases):
    statuses = {f["status"] for s in releases["1.0.0"].manifest["sources"].values() for f in s["files"].values()}
    assert statuses == {"verified"}


def test_counts_and_expectations(releases):
    r = releases["1.1.0"]
    assert r.configs() == [*LANGUAGES, *(f"translation-{x}" for x in GMT_LANGUAGES), "en"]
    for lang in LANGUAGES:
        assert (r.num_examples(lang, "validation"), r.num_examples(lang, "test")) == (100, 500)
    assert {s: r.num_examples("en", s) for s in r.splits("en")} == {"train": 400, "validation": 100, "test": 500}
    for version, release in releases.items():
        builder = get_builder("xcopa", version)
        failed = [(e.key, e.published, e.check(release)[1]) for e in builder.expectations() if not e.check(release)[0]]
        assert failed == [], version
    assert len(get_builder("xcopa", "1.1.0").expectations()) == len(get_builder("xcopa", "1.0.0").expectations()) + 22


def test_version_1_0_0_reproduces_upstream_content(raw, releases):
    r = releases["1.0.0"]
    q = r.features("et")["question"]
    for config in r.configs():
        if config == "en":
            continue
        lang, folder = config.split("-")[-1], "data-gmt" if config.startswith("translation-") else "data"
        for split, stem in (("validation", "val"), ("test", "test")):
            text = (raw / "xcopa" / folder / lang / f"{stem}.{lang}.jsonl").read_text(encoding="utf-8")
            upstream = [json.loads(line) for line in text.splitlines()]
            built = [{**x, "question": q.int2str(x["question"])} for x in _rows(r, config, split)]
            assert built == upstream, f"{config}/{split}"


def test_english_split_follows_the_paper(releases):
    r = releases["1.0.0"]
    assert [x["copa_id"] for x in _rows(r, "en", "train")] == list(range(1, 401))
    assert [x["copa_id"] for x in _rows(r, "en", "validation")] == list(range(401, 501))
    assert [x["copa_id"] for x in _rows(r, "en", "test")] == list(range(501, 1001))
    assert [x["idx"] for x in _rows(r, "en", "test")] == list(range(500))
    first = _rows(r, "en", "validation")[0]
    assert (first["premise"], first["choice1"]) == ("The man turned on the faucet.", "The toilet filled with water.")


def test_english_labels_are_copas(raw, releases):
    """en's labels, per split, are copa-dev.xml's / copa-test.xml's answers (read from the XML here)."""
    import xml.etree.ElementTree as ET
    from collections import Counter

    def answers(name, keep):
        root = ET.parse(raw / "copa" / "datasets" / name).getroot()
        return [int(i.get("most-plausible-alternative")) - 1 for i in root if keep(int(i.get("id")))]

    expected = {
        "train": answers("copa-dev.xml", lambda i: i <= 400),
        "validation": answers("copa-dev.xml", lambda i: i > 400),
        "test": answers("copa-test.xml", lambda i: True),
    }
    for version, release in releases.items():
        for split, labels in expected.items():
            assert [x["label"] for x in _rows(release, "en", split)] == labels, (version, split)
    assert Counter(expected["validation"]) == Counter(x["label"] for x in _rows(releases["1.1.0"], "en", "validation"))


def test_labels_and_choice_order_agree_with_copa_everywhere(raw_data):
    """Every language keeps COPA's answer on every item, and every back-translation keeps its order."""
    for lang in LANGUAGES:
        for split in ("validation", "test"):
            assert all(x.label == raw_data.copa_for(split, x).label for x in raw_data.human[lang, split]), (lang, split)
    for split in ("validation", "test"):
        margins: dict[int, float] = {}
        for (lang, s), records in raw_data.gmt.items():
            if s == split:
                for x in records:
                    c = raw_data.copa_for(split, x)
                    margins[x.idx] = margins.get(x.idx, 0.0) + order_margin(x.choice1, x.choice2, c.alternative1, c.alternative2)
        assert len(margins) == (100 if split == "validation" else 500)
        assert [i for i, m in margins.items() if m > 0] == [], split


def test_errata_table_is_the_evidence(raw_data):
    derived = derive_question_errata(raw_data)
    assert question_errata_up_to_date(Xcopa.errata_path(), derived)
    on_disk = read_errata_tsv(Xcopa.errata_path())
    assert [r.cells() for e in on_disk for r in e.rows] == [r.cells() for r in question_errata_rows(derived)]
    expected_ids = [(f"xcopa-{lang}-question", "1.1.0") for lang in sorted(QUESTION_ERRATA)]
    assert [(e.id, e.version) for e in on_disk] == expected_ids
    for e in on_disk:  # every item in the language config and in its translation, with its evidence
        lang = e.id.split("-")[1]
        assert {r.config for r in e.rows} == {lang, f"translation-{lang}"}
        assert all(re.fullmatch(r"datasets/copa-(dev|test)\.xml item \d+ asks-for=(cause|effect); "
                                r"\d+/10 other XCOPA languages say (cause|effect)"
                                r"(; data-gmt repeats upstream's value)?", r.evidence) for r in e.rows)
    counts = {}
    for e in derived:
        counts.setdefault(e.lang, [0, 0])[e.split == "test"] += 1
    assert {lang: tuple(c) for lang, c in counts.items()} == QUESTION_ERRATA
    th = [x.question for s in ("validation", "test") for x in raw_data.human["th", s]]
    assert set(th) == {"effect"} and len(th) == 600  # Thai says effect throughout
    for e in derived:  # the fix is always COPA's value; upstream's is the other relation
        assert e.fixed == raw_data.copa[e.split][e.copa_id].asks_for != e.upstream


@pytest.mark.parametrize("lang", sorted(QUESTION_ERRATA))
def test_each_erratum(releases, lang):
    old, new = releases["1.0.0"], releases["1.1.0"]
    erratum = next(e for e in new.manifest["errata_applied"] if e["id"] == f"xcopa-{lang}-question")
    n_val, n_test = QUESTION_ERRATA[lang]
    assert len(erratum["items"]) == 2 * (n_val + n_test)  # the language and its translation
    for split, n in (("validation", n_val), ("test", n_test)):
        en = {x["idx"]: x["question"] for x in _rows(new, "en", split)}
        before = _rows(old, lang, split)
        assert sum(x["question"] != en[x["idx"]] for x in before) == n
        assert all(x["question"] == en[x["idx"]] for x in _rows(new, lang, split))
        assert all(x["question"] == en[x["idx"]] for x in _rows(new, f"translation-{lang}", split))
        assert [x["label"] for x in _rows(new, lang, split)] == [x["label"] for x in before]


def test_only_errata_configs_change_between_versions(releases):
    old, new = releases["1.0.0"], releases["1.1.0"]
    changed = {
        c for c in new.configs() for s in new.splits(c)
        if new.split_info(c, s)["fingerprint"] != old.split_info(c, s)["fingerprint"]
    }
    assert changed == {*QUESTION_ERRATA, *(f"translation-{x}" for x in QUESTION_ERRATA)}


def test_cross_lingual_consistency_check(releases):
    old = {r.config: r for r in XcopaConsistency().run(releases["1.0.0"])}
    assert {c for c, r in old.items() if r.status == Status.WARN} == set(QUESTION_ERRATA)
    assert old["th"].metrics["test_question_differs"] == 250
    for version, release in releases.items():
        results = {r.config: r for r in XcopaConsistency().run(release)}
        for lang in LANGUAGES:
            m = results[lang].metrics
            assert (m["validation_labels_agree"], m["test_labels_agree"]) == (100, 500), (version, lang)
            assert (m["validation_label_differs"], m["test_label_differs"]) == (0, 0)
        for split, n in (("validation", 100), ("test", 500)):
            m = results[f"*/{split}"].metrics
            assert (m["order_agrees"], m["order_reversed"]) == (n, 0), (version, split)
    new = XcopaConsistency().run(releases["1.1.0"])
    assert {r.status for r in new} == {Status.PASS}


def test_balance_and_length_ratios(releases):
    old = {r.config: r for r in XcopaBalance().run(releases["1.0.0"])}
    assert old["th"].metrics["balance"]["test"]["question"] == {"effect": 500}
    assert old["tr"].metrics["balance"]["test"]["question"] == {"cause": 199, "effect": 301}
    new = {r.config: r for r in XcopaBalance().run(releases["1.1.0"])}
    assert {r.status for r in new.values()} == {Status.PASS}
    assert new["th"].metrics["balance"]["test"]["question"] == {"cause": 250, "effect": 250}
    assert new["th"].metrics["balance"]["test"]["label"] == {"choice1": 250, "choice2": 250}
    ratios = {lang: r.metrics["length"]["premise_ratio"] for lang, r in new.items()}
    assert ratios["zh"] < 0.4 < ratios["th"] < 1.0 < ratios["ta"]  # characters: Chinese is dense


def test_partial_input_baselines(releases):
    (res,) = XcopaPartialInput().run(releases["1.1.0"])
    lr = res.metrics["overlap-length-lr"]
    assert set(lr) == {"full", "NoP", "NoQ"} and set(lr["NoP"]) == {*LANGUAGES, "en"}
    assert all(0.35 < acc < 0.65 for v in lr.values() for acc in v.values())  # cheap cues stay near chance
    assert res.status == Status.PASS


def _independent_index(figure) -> float:
    """A Table 2 figure computed here from languages.tsv and lang2vec, without diversity.py's formulas."""
    with open(Xcopa.data_path("languages.tsv"), encoding="utf-8", newline="") as fh:
        rows = list(csv.DictReader(fh, delimiter="\t"))
    base = {"e": math.e, 2: 2.0}[figure.args.get("base", "e")]

    def h(counts):
        n = sum(counts)
        return -sum(c / n * math.log(c / n, base) for c in counts if c)

    index = figure.args["index"]
    if index == "family":
        return len({r["family"] for r in rows}) / len(rows)
    if index == "geography":
        return h(Counter(r[figure.args["scheme"]] for r in rows).values())
    codes = [r["iso639_3"] for r in rows]
    # diversity.py's helper for the import only (lang2vec's bin/ script shadows the package)
    vectors = _import_lang2vec().get_features(codes, "syntax_knn")
    n_features = len(vectors[codes[0]])
    ones = [sum(float(vectors[c][j]) >= 0.5 for c in codes) for j in range(n_features)]
    return sum(h([k, len(codes) - k]) for k in ones) / n_features


def test_table2_figures_are_the_papers_and_reproduced(raw, releases):
    published = read_published_yaml(Xcopa.data_path("published.yaml"))
    figures = {f.id: f for f in published if f.measure == "diversity_index"}
    assert sorted(figures) == ["table2/family", "table2/geography", "table2/typology"]
    paper = raw.parent / "papers" / "004_25603e83cac24e2f.txt"
    if paper.is_file():  # the values are Table 2's XCOPA column as printed
        text = paper.read_text(encoding="utf-8")
        for name in ("typology", "family", "geography"):
            (row,) = [line for line in text.splitlines() if line.startswith(name.capitalize() + " [0, ")]
            printed = re.search(r"\] ([\d.]+) ", row).group(1)
            assert float(printed) == figures[f"table2/{name}"].value, row
    measure = Xcopa("1.1.0").measures()["diversity_index"]
    for key, f in figures.items():
        independent = _independent_index(f)
        assert measure(releases["1.1.0"], f) == pytest.approx(independent, abs=1e-4), key
        within = abs(independent - f.value) <= f.tolerance
        assert within is (f.discrepancy is None), (key, independent, f.value, f.discrepancy)


def test_table2_geography_is_in_bits():
    """The unit published.yaml declares for geography, shown on Table 2's other columns.

    Macro-area counts of the non-English languages: TyDiQA 8 Eurasia, Africa (sw),
    Papunesia (id); XNLI 13 Eurasia, Africa (sw). Table 2 prints 0.92 and 0.37.
    """
    bits = lambda counts: -sum(c / sum(counts) * math.log2(c / sum(counts)) for c in counts)
    assert round(bits([8, 1, 1]), 2) == 0.92 and round(bits([13, 1]), 2) == 0.37
    assert round(bits([7, 1, 1, 1, 1]), 2) == 1.67  # XCOPA
    assert math.log(5) < 1.67  # no distribution over XCOPA's 5 macro-areas reaches 1.67 nats


def test_diversity_stat(releases):
    (res,) = XcopaDiversity().run(releases["1.1.0"])
    assert res.status == Status.STAT
    assert res.metrics["languages"] == 11 and res.metrics["family"] == 1.0
    # WALS macro-areas: 7 Eurasia + Africa, Papunesia, North America, South America
    nats = -(7 / 11) * math.log(7 / 11) - 4 / 11 * math.log(1 / 11)
    assert res.metrics["geography_nats"] == pytest.approx(nats, abs=1e-4)
    assert res.metrics["geography_bits"] == pytest.approx(nats / math.log(2), abs=1e-4)
    # UN sub-regions: 3 South-eastern Asia, 8 others alone
    assert res.metrics["geography_un_region_nats"] == pytest.approx(
        -(3 / 11) * math.log(3 / 11) - 8 / 11 * math.log(1 / 11), abs=1e-4)


def test_load_dataset_round_trip(releases):
    r = releases["1.1.0"]
    th = datasets.load_dataset(str(r.path), "th")
    assert th["test"].num_rows == 500 and th["test"].features["question"].names == ["cause", "effect"]
    en = datasets.load_dataset(str(r.path), "en")
    assert en["train"].num_rows == 400 and en["validation"][0]["copa_id"] == 401


def test_scoring_real_release(releases, tmp_path):
    r = releases["1.1.0"]
    path = tmp_path / "gold.jsonl"
    with open(path, "w", encoding="utf-8") as fh:
        for lang in LANGUAGES:
            fh.writelines(json.dumps({"lang": lang, "idx": x["idx"], "label": x["label"] if lang != "qu" else 0}) + "\n" for x in _rows(r, lang, "test"))
    result = score(r, path)
    assert result["complete"] is True and len(result["languages"]) == 11
    assert result["languages"]["et"]["accuracy"] == 1.0
    assert result["languages"]["qu"]["accuracy"] == 0.5  # always choice1 on a balanced test set
    assert result["average"] == pytest.approx((10 + 0.5) / 11)
