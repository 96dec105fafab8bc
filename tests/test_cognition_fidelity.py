"""CoGnition's published figures (builders/cognition/published.yaml) measured independently.

Expected values are read from published.yaml; measurements come from the raw files
(``$BENCHSMITH_RAW/cognition``) with code that does not go through the release or atoms.py,
or, for figures that need the train split, from the commands their ``needs:`` names, run on
data that is here (their output must carry every key of the figure).
"""

from __future__ import annotations

import json
from collections import Counter, defaultdict

import pytest
from conftest import FIXTURES

from benchsmith.builder import get_builder
from benchsmith.builders.cognition.atoms import parse_compound
from benchsmith.builders.cognition.baseline import PAPER, score_translations, translation_items
from benchsmith.builders.cognition.stats import compound_statistics, constituent_shares, corpus_statistics
from benchsmith.expectation import read_published_yaml
from benchsmith.release import ReleaseWriter
from benchsmith.source import resolve_sources

PUBLISHED = {f.id: f for f in read_published_yaml(get_builder("cognition").data_path("published.yaml"))}
MODS = ("he liked", "at the store", "on the floor")


def _lines(path) -> list[str]:
    return path.read_text(encoding="utf-8").splitlines()


def _tokens(compound: str) -> list[str]:
    """Words of a compound, each modifier phrase one token."""
    for i, m in enumerate(MODS):
        compound = compound.replace(m, f"<MOD{i}>")
    return [MODS[int(w[4])] if w.startswith("<MOD") else w for w in compound.split()]


@pytest.mark.realdata
def test_table5_sizes_from_the_raw_files(raw):
    d = raw / "cognition" / "data"
    assert len(_lines(d / "valid.en")) == PUBLISHED["parallel/validation/num_examples"].value
    assert len(_lines(d / "test.en")) == PUBLISHED["parallel/test/num_examples"].value
    assert len(_lines(d / "cg-test" / "cg-test.en")) == PUBLISHED["cg_test/test/num_examples"].value
    assert not (d / "train.en").exists() and PUBLISHED["parallel/train/num_examples"].needs


@pytest.mark.realdata
def test_compound_extent_from_the_raw_files(raw):
    comps = set(_lines(raw / "cognition" / "data" / "cg-test" / "cg-test.compound"))
    measured = {"compounds": len(comps), "max_atoms": max(len(_tokens(c)) for c in comps),
                "max_words": max(len(c.split()) for c in comps)}
    assert measured == PUBLISHED["cg_test/test/compound_extent"].value


@pytest.mark.realdata
def test_atom_inventory_from_the_slots_of_the_raw_compounds(raw):
    """[V|P] DET [ADJ] N [MOD]: the head is the first token of a VP / PP compound, DET the next; a
    modifier phrase is last; N is the last other token, ADJ whatever sits between DET and N."""
    found = defaultdict(set)
    for cat, head in (("NP", None), ("VP", "V"), ("PP", "P")):
        for comp in set(_lines(raw / "cognition" / "data" / "cg-test" / cat / f"{cat}.compound")):
            toks = _tokens(comp)
            if head:
                found[head].add(toks.pop(0))
            found["DET"].add(toks.pop(0))
            if toks[-1] in MODS:
                found["MOD"].add(toks.pop())
            found["N"].add(toks.pop())
            assert len(toks) <= 1, comp
            found["ADJ"].update(toks)
    assert {k: sorted(v) for k, v in found.items()} == PUBLISHED["cg_test/test/atom_inventory"].value


def test_few_shot_is_one_to_ten_occurrences():
    """The stats stage buckets a compound seen 10 times as few-shot and 11 times as many-shot."""
    want = PUBLISHED["stage/stats/frequency_buckets"].value
    comps = [parse_compound("the small dog"), parse_compound("the red dog"), parse_compound("the lazy dog")]
    corpus = (["the small dog ran ."] * want["few_shot_max"] + ["the red dog ran ."] * want["many_shot_min"]
              + ["the lazy dog ran ."] * want["few_shot_min"])
    got = {s["compound"]: s["bucket"] for s in compound_statistics(comps, corpus)}
    assert got == {"the small dog": "few-shot", "the red dog": "many-shot", "the lazy dog": "few-shot"}
    assert compound_statistics(comps[:1], ["a dog ."])[0]["bucket"] == "zero-shot"


# --------------------------------------------------- figures that need the train split: their commands


@pytest.mark.realdata
def test_stats_command_gives_the_train_figures_keys(raw, capsys):
    """`stage cognition stats` (train/seen_compounds_pct, train/atom_frequency_range) on valid.en: the
    command runs and reports what the figures compare (the values differ: valid is not train)."""
    from conftest import run_cli

    d = raw / "cognition" / "data"
    code, out, _ = run_cli(capsys, "stage", "cognition", "stats", str(d / "cg-test" / "cg-test.compound"),
                           str(d / "valid.en"), "--json")
    res = json.loads(out)
    assert code == 0 and res["compounds"] == 2160
    assert 0 <= res["seen_pct"] < 5 and set(res["atom_frequency"]) == set(PUBLISHED["train/atom_frequency_range"].value)
    assert "stage cognition stats" in PUBLISHED["train/seen_compounds_pct"].needs


def test_corpus_statistics_keys_and_arithmetic():
    got = corpus_statistics(["a b c .", "a b .", "a ."])
    assert got == {"vocab": 4, "tokens": 9, "sentences": 3, "avg_len": 3.0, "avg_freq": 2.2, "min_freq": 1}
    assert set(PUBLISHED["table7/ROC-Filter"].value) | set(PUBLISHED["table8/ROC-Filter"].value) <= set(got)
    # the paper's own row is consistent with these definitions: 2,096,524 / 216,246 = 9.7, / 2,000 = 1048.3
    t7, t8 = PUBLISHED["table7/ROC-Filter"].value, PUBLISHED["table8/ROC-Filter"].value
    assert round(t7["tokens"] / t7["sentences"], 1) == t8["avg_len"]
    assert round(t7["tokens"] / t7["vocab"], 1) == t8["avg_freq"]


def test_constituent_shares_count_every_phrasal_node():
    from nltk import Tree

    t = Tree.fromstring("(ROOT (S (NP (DT the) (NN dog)) (VP (VBD sat) (PP (IN on) (NP (DT the) (NN mat)))) (. .)))")
    got = constituent_shares([t])
    assert got["per_label"] == {"NP": 2, "S": 1, "VP": 1, "PP": 1} and got["np_vp_pp_pct"] == 80.0
    assert "np_vp_pp_pct" in PUBLISHED["train/np_vp_pp_share_pct"].needs


# --------------------------------------------------------------------------- Table 6 (model baseline)


def test_table6_figures_are_keyed_by_the_baselines_metrics(tmp_path):
    """Every key of the Table 6 figures is a metric the nmt baseline reports, on the figure's split."""
    b = get_builder("cognition")
    sources = resolve_sources(b.sources, {}, FIXTURES / "cognition", allow_missing=True)
    release = ReleaseWriter(b, tmp_path, sources, skip_missing=True).write()
    assert set(PAPER) == {"table6/random-test/Transformer", "table6/cg-test/Transformer"}
    for fid in PAPER:
        f = PUBLISHED[fid]
        items = translation_items(release, f.config, f.split)
        scores = score_translations(release, f.config, f.split, items, [it.references[0] for it in items])
        assert set(f.value) <= set(scores), set(f.value) - set(scores)
        assert f.measure == "model_baseline" and "--preset paper" in f.needs and "196,246" in f.needs
    assert PUBLISHED["table6/cg-test/Transformer"].value["instance_cter"] == 27.31
    assert Counter(k.split("/")[0] for k in PUBLISHED["table6/cg-test/Transformer"].value)["PP"] == 3


def test_baseline_run_shows_table6_beside_its_scores(tmp_path, capsys):
    """`baseline cognition --train-split validation` (a tiny model on the fixture): the paper's Table 6
    figures are attached to the rows they are about, and CTER uses the paper rule."""
    pytest.importorskip("torch")
    from conftest import one_json, run_cli

    b = get_builder("cognition")
    sources = resolve_sources(b.sources, {}, FIXTURES / "cognition", allow_missing=True)
    ReleaseWriter(b, tmp_path, sources, skip_missing=True).write()
    tiny = [x for kv in ("encoder_layers=1", "decoder_layers=1", "d_model=32", "heads=2", "ffn=64", "dropout=0.0",
                         "max_tokens=96", "warmup=4", "eval_every=3", "log_every=3", "bpe_merges=8", "beam=2")
            for x in ("--set", kv)]
    code, out, err = run_cli(capsys, "--quiet", "baseline", "cognition", "--registry", str(tmp_path),
                             "--train-split", "validation", "--max-steps", "3", "--no-save", *tiny, "--json")
    assert code == 0, err
    [res] = one_json(out)["results"]
    paper = {(s["config"], s["metric"]): [p["value"] for p in s.get("paper", [])] for s in res["scores"]}
    assert paper[("parallel", "bleu")] == [69.58]
    assert paper[("cg_test", "bleu")] == [48.66] and paper[("cg_test", "instance_cter")] == [27.31]
    assert paper[("cg_test", "aggregate_cter")] == [61.62] and paper[("cg_test", "PP/instance_cter")] == [37.72]
    assert not any("not in published.yaml" in n for n in res["notes"])
    assert res["comparable"] is False
    assert "cter:1|rule:paper" in res["details"]["scorer"]["cg_test/test"]["cter_signature"]
