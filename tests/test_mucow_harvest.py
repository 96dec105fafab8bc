"""The MuCoW harvesting pipeline: stage units, a fixture harvest through the CLI, the Tatoeba deu-eng harvest."""

from __future__ import annotations

import json
import re
import shutil
import sys
from collections import Counter, defaultdict
from pathlib import Path

import datasets
import numpy as np
import pytest

from benchsmith.builders.mucow.align import grow_diag_final_and, one_to_one, require_eflomal
from benchsmith.builders.mucow.harvest import HarvestBuilder, HarvestOptions, run_harvest
from benchsmith.builders.mucow.senses import build_senses, use_embedder
from benchsmith.builders.mucow.suites import Occurrence, match_case, token_span, translation_items
from benchsmith.cli import main
from benchsmith.errors import ConfigError
from benchsmith.loaders.sense_inventory import load_inventory
from benchsmith.nlp.tokenize import get_tokenizer
from benchsmith.release import Release
from benchsmith.validation.check import Status

FIX = Path(__file__).parent / "fixtures"
OPUS = FIX / "opus" / "toy-deu-eng"
OMW = FIX / "sense-inventory" / "omw"


def harvest(capsys, *argv: str) -> tuple[int, dict | None, str]:
    code = main(["-q", "harvest", "mucow", *argv])
    out, err = capsys.readouterr()
    return code, (json.loads(out) if code == 0 else None), err


def is_long(source: str, lang: str, n: int = 10) -> bool:
    return sum(any(c.isalnum() for c in t) for t in get_tokenizer(lang)(source)) > n


# ----------------------------------------------------------------------------- stage units


def test_symmetrisation_and_one_to_one_links():
    fwd = {(0, 0), (1, 1), (2, 1), (3, 3)}
    rev = {(0, 0), (1, 1), (3, 2), (3, 3)}
    links = grow_diag_final_and(fwd, rev)
    # the intersection grows into the diagonal/adjacent union links whose one end is unaligned
    assert links == {(0, 0), (1, 1), (2, 1), (3, 3), (3, 2)}
    # target 1 has two source words, source 3 two target words: only (0, 0) is one-to-one
    assert one_to_one(links) == [(0, 0)]
    assert grow_diag_final_and({(0, 5)}, {(4, 0)}) == {(0, 5), (4, 0)}  # final-and: unaligned on both sides
    assert one_to_one({(0, 0), (1, 1), (1, 2)}) == [(0, 0)]


def test_senses_merge_clusters_sharing_a_word_and_drop_single_sense_words():
    inv = load_inventory(OMW, ["deu", "eng"])
    cands = {
        "schloss": {"castle": 30, "lock": 20, "palace": 0 + 12},
        "bank": {"bench": 15, "shore": 3, "latch": 40},  # only one inventory sense is aligned: dropped
    }
    words = build_senses({"schloss": cands["schloss"]}, inv, "de", "en")
    ids = [s.id for s in words["schloss"].senses]
    assert ids == ["castle", "lock", "palace"]
    lock = words["schloss"].senses[1]
    assert lock.synsets == ("03682487-n", "03683341-n")  # two synsets sharing "lock": one sense
    assert build_senses({"bank": {"bench": 15, "latch": 40}}, inv, "de", "en") == {}


def test_embedding_merge_uses_the_multilingual_encoder():
    inv = load_inventory(OMW, ["deu", "eng"])
    cands = {"schloss": {"castle": 30, "lock": 20, "palace": 12}}
    embed = use_embedder()
    v = embed(["castle", "palace", "lock"])
    sims = v @ v.T
    threshold = float((sims[0, 1] + max(sims[0, 2], sims[1, 2])) / 2)
    assert sims[0, 1] > threshold > max(sims[0, 2], sims[1, 2])  # castle~palace closer than either ~lock
    words = build_senses(cands, inv, "de", "en", merge_threshold=threshold, embedder=embed)
    assert [s.id for s in words["schloss"].senses] == ["castle_palace", "lock"]
    assert build_senses(cands, inv, "de", "en", merge_threshold=-1.0, embedder=embed) == {}  # all merge: one sense


def test_token_span_and_case():
    text = "Er sagte: \"Die Bank ist zu.\""
    toks = get_tokenizer("de")(text)
    j = toks.index("Bank")
    assert token_span(text, toks, j) == (text.index("Bank"), text.index("Bank") + 4)
    assert match_case("bench", "Bank") == "Bench" and match_case("bench", "BANK") == "BENCH"


def _occ(k: int, sense: str, corpus: str) -> Occurrence:
    return Occurrence(f"{k:04d}", corpus, k, "bank", sense, "s", "t", ("s",), ("t",), 0, 0, (0, 1))


def test_translation_variant_counts_and_domain_rule():
    inv = load_inventory(OMW, ["deu", "eng"])
    words = build_senses({"bank": {"bank": 20, "bench": 20}}, inv, "de", "en")
    every = lambda occs: [True] * len(occs)
    pools = {
        # 12 candidates, the 10 best-ranked are kept; 4 of those 10 are subtitles -> in domain
        ("bank", "bank"): [_occ(k, "bank", "opensubtitles" if k in (0, 1, 2, 3, 10, 11) else "europarl") for k in range(12)],
        # 3 of 5 from subtitles: more than half -> out of domain
        ("bank", "bench"): [_occ(100 + k, "bench", "opensubtitles" if k < 3 else "europarl") for k in range(5)],
    }
    items = translation_items(pools, words, every)
    assert Counter((i["sense"], i["domain"]) for i in items) == {("bank", "in"): 10, ("bench", "out"): 5}
    assert [i["sentence_id"] for i in items if i["sense"] == "bank"] == list(range(10))
    assert all(i["incorrect_words"] == ["bench"] for i in items if i["sense"] == "bank")
    # exactly half is not "more than half"
    pools[("bank", "bench")] = [_occ(100 + k, "bench", "opensubtitles" if k < 2 else "europarl") for k in range(4)]
    assert {i["domain"] for i in translation_items(pools, words, every) if i["sense"] == "bench"} == {"in"}
    # the noun test leaves bench with 2 (< 4) examples: bank keeps one sense, so the word is dropped
    assert translation_items(pools, words, lambda occs: [o.line % 2 == 0 for o in occs]) == []


def test_missing_eflomal_is_a_config_error(monkeypatch):
    monkeypatch.setitem(sys.modules, "eflomal", None)
    with pytest.raises(ConfigError, match=r"pip install 'benchsmith\[mucow\]'"):
        require_eflomal()


# ----------------------------------------------------------------------------- CLI, fixtures


@pytest.fixture(scope="module")
def fixture_harvest(toy_harvest):
    """The toy corpus harvested with the default options (tests/conftest.py, shared read-only)."""
    return toy_harvest


def test_fixture_harvest_words_and_senses(fixture_harvest):
    stats = fixture_harvest.info.to_dict()["configs"]["scoring"]["metadata"]["statistics"]
    assert stats["ambiguous_words"] == 3 and stats["senses_per_word"] == 2.0 and stats["sentence_pairs"] == 248
    rows = list(fixture_harvest.examples("scoring", "test"))
    expected = {("bank", "bank"), ("bank", "bench"), ("essen", "eat"), ("essen", "food"), ("schloss", "castle"),
                ("schloss", "lock")}
    found = {(r["ambiguous_word"], r["sense"]) for r in rows}
    # eflomal is seeded (so a harvest is reproducible), but another seed may miss the long "lock" sentences
    # of this tiny corpus: the test holds for any seed
    assert found <= expected and len(found) >= 5 and {w for w, _ in found} == {"bank", "essen", "schloss"}
    assert {r["corpus"] for r in rows} == {"europarl", "opensubtitles"}


def test_fixture_harvest_scoring_items(fixture_harvest):
    rows = list(fixture_harvest.examples("scoring", "test"))
    per_sense = Counter((r["ambiguous_word"], r["sense"]) for r in rows)
    assert max(per_sense.values()) == 20
    other = {"bank": "bench", "bench": "bank", "castle": "lock", "lock": "castle", "eat": "food", "food": "eat"}
    for r in rows:
        assert is_long(r["source"], "de")
        assert r["replacements"] == [other[r["sense"]]]
        assert r["contrastive_translations"] == [re.sub(rf"\b{r['original_translation']}\b", other[r["sense"]], r["reference"])]


def test_fixture_harvest_translation_items(fixture_harvest):
    rows = list(fixture_harvest.examples("translation", "test"))
    # "essen": the eat-sense is a verb in the inventory (no German tagger here), so only one noun sense: dropped
    assert {r["ambiguous_word"] for r in rows} == {"bank", "schloss"}
    by_sense = defaultdict(list)
    for r in rows:
        by_sense[(r["ambiguous_word"], r["sense"])].append(r)
    for (_, sense), items in by_sense.items():
        assert 4 <= len(items) <= 10
        subs = sum(i["corpus"] == "opensubtitles" for i in items)
        assert {i["domain"] for i in items} == {1 if subs * 2 > len(items) else 0}
        assert all(i["correct_words"] == [sense] for i in items)
    assert any(r["domain"] == 1 for r in rows)  # lock sentences come mostly from the subtitles TMX
    manifest = fixture_harvest.info.to_dict()
    assert set(manifest["sources"]) == {"parallel", "inventory"}
    assert set(manifest["sources"]["parallel"]["files"]) == {"Europarl.de-en.de", "Europarl.de-en.en", "OpenSubtitles.de-en.tmx"}
    assert manifest["configs"]["translation"]["metadata"]["statistics"]["pos"] == "inventory"


def test_fixture_harvest_loads_with_datasets(fixture_harvest):
    d = datasets.load_dataset(str(fixture_harvest.path), "scoring", split="test")
    assert len(d) == fixture_harvest.num_examples("scoring", "test") and "contrastive_translations" in d.features


def test_validating_a_harvest_runs_mucows_checks(fixture_harvest, tmp_path):
    """The runner finds the harvest builder through the manifest's `builder` and runs MuCoW's checks
    (strict: the pipeline applies every rule); the harvest reproduces no published figure."""
    from benchsmith.validation.runner import find_builder, validate

    assert fixture_harvest.info.to_dict()["builder"] == "benchsmith.builders.mucow.harvest.HarvestBuilder"
    builder, why = find_builder(fixture_harvest)
    assert why is None and isinstance(builder, HarvestBuilder) and builder.name == "mucow-harvest-deu-eng"
    assert list(builder.expectations()) == [] and builder.errata() == []
    with pytest.raises(ConfigError, match="holds no harvest"):
        builder.configs()
    copy = Release(shutil.copytree(fixture_harvest.path, tmp_path / "mucow-harvest-deu-eng" / "1.0.0"))
    v = validate(copy, baselines="none", previous=None)
    mucow = [r for r in v.results if r.check.startswith("mucow_")]
    assert {(r.check, r.config) for r in mucow} >= {
        ("mucow_contrastive_present", "scoring"), ("mucow_contrastive_differs", "scoring"),
        ("mucow_contrastive_aligned", "scoring"), ("mucow_senses_per_word", "translation"),
        ("mucow_items_per_sense", "translation"), ("mucow_domain_rule", "translation"),
        ("mucow_suite_statistics", "scoring")}
    assert {r.status for r in mucow} == {Status.PASS, Status.STAT}, [r.summary for r in mucow if r.status != "pass"]
    assert not [r for r in v.results if r.check == "fidelity"]
    card = (copy.path / "README.md").read_text(encoding="utf-8")
    assert "- sentence pairs read: 248" in card and "noun test: inventory" in card  # re-rendered from the manifest


def test_harvest_misaligned_corpus_exits_2_and_writes_nothing(tmp_path, capsys):
    par = tmp_path / "par"
    par.mkdir()
    shutil.copy(OPUS / "Europarl.de-en.de", par / "x.de")
    (par / "x.en").write_text("one line\n", encoding="utf-8")
    reg = tmp_path / "reg"
    code, _, err = harvest(capsys, "--parallel", str(par), "--inventory", str(OMW), "--src", "de", "--tgt", "en",
                           "--registry", str(reg))
    assert code == 2 and f"{par / 'x.de'}:2: line counts differ" in err
    assert not reg.exists() or not any(reg.rglob("*.parquet"))


def test_harvest_bad_scheduler_is_a_config_error(tmp_path, capsys):
    code, _, err = harvest(capsys, "--parallel", str(OPUS), "--inventory", str(OMW), "--src", "de", "--tgt", "en",
                           "--registry", str(tmp_path), "--scheduler", "tcp://127.0.0.1:9")
    assert code == 2 and "cannot reach the Dask scheduler" in err
    assert not any(tmp_path.iterdir())


def test_harvest_on_a_distributed_scheduler(tmp_path, capsys):
    """--scheduler ADDRESS: tasks and results travel pickled over TCP to a separate scheduler and worker."""
    from dask.distributed import LocalCluster

    with LocalCluster(n_workers=1, threads_per_worker=2, processes=False, protocol="tcp", dashboard_address=":0") as cl:
        code, out, err = harvest(capsys, "--parallel", str(OPUS), "--inventory", str(FIX / "sense-inventory" / "babelnet"),
                                 "--src", "de", "--tgt", "en", "--registry", str(tmp_path), "--scheduler",
                                 cl.scheduler_address, "--json")
    assert code == 0, err
    assert cl.scheduler_address.startswith("tcp://")
    assert out["statistics"]["ambiguous_words"] == 3 and out["configs"]["scoring"]["test"] > 0
    assert out["name"] == "mucow-harvest-deu-eng"  # de and deu are one language: one release name


# ----------------------------------------------------------------------------- real data: Tatoeba deu-eng


@pytest.fixture(scope="module")
def tatoeba(raw, tmp_path_factory):
    reg = tmp_path_factory.mktemp("tatoeba")
    code = main(["-q", "harvest", "mucow", "--parallel", str(raw / "opus" / "tatoeba" / "deu-eng"),
                 "--inventory", str(raw / "sense-inventory" / "omw-wikt"), "--src", "deu", "--tgt", "eng",
                 "--registry", str(reg), "--json"])
    assert code == 0
    return Release(reg / "mucow-harvest-deu-eng" / "1.0.0")


@pytest.mark.slow  # the Tatoeba harvest (~35 s); the fixture harvest above is the default run's
def test_tatoeba_statistics(tatoeba):
    st = tatoeba.info.to_dict()["configs"]["scoring"]["metadata"]["statistics"]
    assert st["sentence_pairs"] == 17565
    assert st["ambiguous_words"] >= 5 and st["senses_per_word"] >= 2.0
    assert st["scoring"]["items"] == tatoeba.num_examples("scoring", "test") > 50
    assert st["translation"]["items"] == tatoeba.num_examples("translation", "test") > 20


@pytest.mark.slow  # the Tatoeba harvest (~35 s); the fixture harvest above is the default run's
def test_tatoeba_scoring_suite_is_well_formed(tatoeba):
    rows = list(tatoeba.examples("scoring", "test"))
    assert len({r["id"] for r in rows}) == len(rows)
    per_sense = Counter((r["ambiguous_word"], r["sense"]) for r in rows)
    assert max(per_sense.values()) <= 20
    tok_de, tok_en = get_tokenizer("de"), get_tokenizer("en")
    for r in rows:
        assert r["corpus"] == "tatoeba"
        assert is_long(r["source"], "de")
        assert [t.lower() for t in tok_de(r["source"])].count(r["ambiguous_word"]) == 1
        assert r["original_translation"].lower() in r["sense"].split("_")
        assert [t.lower() for t in tok_en(r["reference"])].count(r["original_translation"].lower()) == 1
        assert r["replacements"] and not set(r["replacements"]) & set(r["sense"].split("_"))
        for c, w in zip(r["contrastive_translations"], r["replacements"]):
            assert c != r["reference"] and w.lower() in c.lower()
            assert len(c) - len(r["reference"]) == len(w) - len(r["original_translation"])


@pytest.mark.slow  # the Tatoeba harvest (~35 s); the fixture harvest above is the default run's
def test_tatoeba_translation_suite_is_well_formed(tatoeba):
    rows = list(tatoeba.examples("translation", "test"))
    by_word = defaultdict(Counter)
    for r in rows:
        by_word[r["ambiguous_word"]][r["sense"]] += 1
        assert r["domain"] == 0  # tatoeba is not subtitles
        assert not set(r["correct_words"]) & set(r["incorrect_words"])
        assert r["sense"] == "_".join(r["correct_words"])
    for senses in by_word.values():
        assert len(senses) >= 2 and all(4 <= n <= 10 for n in senses.values())


@pytest.mark.slow  # the Tatoeba harvest (~35 s); the fixture harvest above is the default run's
def test_tatoeba_harvest_passes_mucows_checks(tatoeba):
    """Every construction rule holds on a real harvest (the checks validation runs on it)."""
    results = [r for c in HarvestBuilder.for_validation(tatoeba).checks() for r in c.run(tatoeba)]
    assert {r.status for r in results} == {Status.PASS, Status.STAT}, [r.summary for r in results if r.status != "pass"]
    assert {r.config for r in results} == {"scoring", "translation"}


@pytest.mark.slow  # the Tatoeba harvest (~35 s); the fixture harvest above is the default run's
def test_tatoeba_harvest_is_reproducible(raw, tatoeba):
    """eflomal seeded with the harvest's seed: the CLI harvest (pieces on worker processes) gives exactly the
    items of a harvest on one worker process with the same seed (issue 15: it gave 13-15 ambiguous words
    over four runs)."""
    again = run_harvest([raw / "opus" / "tatoeba" / "deu-eng"], raw / "sense-inventory" / "omw-wikt",
                        HarvestOptions("deu", "eng"), workers=1)
    meta = tatoeba.info.to_dict()["configs"]["scoring"]["metadata"]
    assert meta["alignment"]["deterministic"] is True and meta["alignment"]["seed"] == 0
    assert meta["statistics"]["ambiguous_words"] == len(again.words)
    assert list(tatoeba.examples("scoring", "test")) == again.scoring
    translation = [{**r, "domain": ("in", "out")[r["domain"]]} for r in tatoeba.examples("translation", "test")]
    assert translation == again.translation


@pytest.mark.slow  # the Tatoeba harvest (~35 s); the fixture harvest above is the default run's
def test_tatoeba_release_loads(tatoeba):
    d = datasets.load_dataset(str(tatoeba.path), "translation", split="test")
    assert d.features["domain"].names == ["in", "out"] and len(d) == tatoeba.num_examples("translation", "test")
    assert np.isfinite(tatoeba.info.to_dict()["configs"]["translation"]["metadata"]["statistics"]["senses_per_word"])
