"""The official-compatible corpus BLEU: a table of inputs, options and hand-computed scores."""

from __future__ import annotations

import math

import pytest
import sacrebleu

from benchsmith.errors import ConfigError
from benchsmith.validation.metrics.accuracy import Accuracy
from benchsmith.validation.metrics.bleu import CorpusBLEU

# (hypotheses, references per hypothesis, options, expected BLEU on the 0-100 scale, why)
TABLE = [
    (["the cat sat on the mat"], [["the cat sat on the mat"]], {}, 100.0, "identical"),
    # every n-gram of the hypothesis is in the 7-token reference: precisions are 1, only the
    # brevity penalty differs: shortest reference (4) < 6 tokens -> 1; closest (7) -> exp(1 - 7/6)
    (["a b c d e f"], [["a b c d", "a b c d e f g"]], {}, 100.0, "shortest reference: no penalty"),
    (["a b c d e f"], [["a b c d", "a b c d e f g"]], {"ref_length": "closest"}, 100 * math.exp(1 - 7 / 6),
     "closest reference: penalty"),
    (["a b c d"], [["a b c d e f g h"]], {}, 100 * math.exp(1 - 8 / 4), "brevity penalty exp(1 - r/c)"),
    # three tokens have no 4-gram: without smoothing the score is 0, as the official scorer says
    (["a b c"], [["a b c"]], {}, 0.0, "no 4-gram, no smoothing"),
    (["a b c"], [["a b c"]], {"smooth": "lin2004"}, 100.0, "official --smooth: (m+1)/(n+1) on every order"),
    # clipping by the maximum count over references: 'the' x4 vs refs with 1 and 2 'the'
    # -> p1 = 2/4, p2 = 1/3, p3 = 0/2, p4 = 0/1; smoothed: 3/5, 2/4, 1/3, 1/2
    (["the the the the"], [["the cat", "the the dog"]], {}, 0.0, "clipped, no 3-gram match"),
    (["the the the the"], [["the cat", "the the dog"]], {"smooth": "lin2004"}, 100 * (3 / 5 * 2 / 4 * 1 / 3 * 1 / 2) ** 0.25,
     "clipped, smoothed"),
    # empty references are skipped (the official scorer drops them before taking lengths)
    (["a b c d"], [["a b c d", ""]], {}, 100.0, "empty reference skipped"),
    # whitespace tokens keep punctuation attached; 13a splits it off
    (["Hello, world!"], [["Hello , world !"]], {}, 0.0, "whitespace tokens"),
    (["Hello, world!"], [["Hello , world !"]], {"tokenize": "13a"}, 100.0, "13a tokens"),
    (["Hello world"], [["hello world"]], {"lowercase": True, "max_order": 2}, 100.0, "lowercase, bigrams"),
    # corpus level: statistics are summed before the geometric mean. Segment 1 matches fully
    # (4 tokens), segment 2 matches nothing (4 tokens): p_n = (4-n+1)/(2*(4-n+1)) = 1/2
    (["a b c d", "w x y z"], [["a b c d"], ["e f g h"]], {}, 50.0, "corpus statistics"),
]


@pytest.mark.parametrize("hyps,refs,options,expected,why", TABLE, ids=[row[-1] for row in TABLE])
def test_bleu_table(hyps, refs, options, expected, why):
    assert CorpusBLEU(**options).score(hyps, refs).value == pytest.approx(expected, abs=1e-9)


def test_closest_mode_is_sacrebleu_exactly():
    hyps = ["the cat is on the mat today", "a dog barks loudly at night", "it rains"]
    refs = [["the cat sat on the mat", "there is a cat on the mat today"],
            ["the dog barks at night", "a dog is barking loudly"],
            ["it is raining now", "rain falls"]]
    ours = CorpusBLEU(ref_length="closest").score(hyps, refs)
    theirs = sacrebleu.corpus_bleu(hyps, [list(r) for r in zip(*refs)], tokenize="none", smooth_method="none")
    assert ours.value == pytest.approx(theirs.score, abs=1e-12)
    assert ours.details["ref_len"] == theirs.ref_len and ours.details["sys_len"] == theirs.sys_len


def test_sacrebleu_metric_is_sacrebleu_exactly():
    """SacreBLEU (what the generation baselines and CoGnition report) is sacrebleu's number and signature;
    a hypothesis with fewer references repeats its first one, which moves neither counts nor lengths."""
    from benchsmith.validation.metrics.bleu import SacreBLEU

    hyps = ["the cat is on the mat today", "a dog barks loudly at night", "it rains"]
    refs = [["the cat sat on the mat", "there is a cat on the mat today"], ["the dog barks at night"],
            ["it is raining now", "rain falls"]]
    bleu = sacrebleu.BLEU()
    theirs = bleu.corpus_score(hyps, [[r[0] for r in refs], [r[1] if len(r) > 1 else r[0] for r in refs]])
    ours = SacreBLEU().score(hyps, refs)
    assert ours.value == theirs.score and ours.signature == str(bleu.get_signature())
    assert ours.signature.startswith("nrefs:2|case:mixed|eff:no|tok:13a|smooth:exp|")
    assert SacreBLEU(tokenize="zh").signature() == f"case:mixed|eff:no|tok:zh|smooth:exp|version:{sacrebleu.__version__}"
    zh = SacreBLEU(tokenize="zh").score(["我喜欢猫", "他走了"], [["我喜欢狗"], ["他走了"]])
    assert zh.value == sacrebleu.BLEU(tokenize="zh").corpus_score(["我喜欢猫", "他走了"], [["我喜欢狗", "他走了"]]).score
    for bad in ({"tokenize": "words"}, {"smooth": "add1"}):
        with pytest.raises(ConfigError):
            SacreBLEU(**bad)
    with pytest.raises(ConfigError, match="no reference"):
        SacreBLEU().score(["a"], [[]])


def test_signature_records_every_option():
    bleu = CorpusBLEU()
    res = bleu.score(["a b c d"], [["a b c d", "a b", "a b c"]])
    sig = res.signature
    for part in ("nrefs:3", "case:mixed", "tok:whitespace", "smooth:none", "reflen:shortest", "maxn:4",
                 f"sacrebleu-{sacrebleu.__version__}"):
        assert part in sig
    assert "reflen:closest" in CorpusBLEU(ref_length="closest").signature()
    # the metric's signature is its options only: scoring never changes it
    before = bleu.signature()
    bleu.score(["a b"], [["a b"]])
    assert bleu.signature() == before and "nrefs" not in before


@pytest.mark.parametrize("options", [{"ref_length": "longest"}, {"tokenize": "spacy"}, {"smooth": "add1"},
                                     {"max_order": 0}])
def test_bad_options_are_config_errors(options):
    with pytest.raises(ConfigError):
        CorpusBLEU(**options)


def test_hypothesis_without_reference_is_an_error():
    with pytest.raises(ConfigError, match="no non-empty reference"):
        CorpusBLEU().score(["a"], [["", " "]])


def test_accuracy_table():
    acc = Accuracy()
    # score(predictions, references): the references' ids are scored
    res = acc.score({"1": "A", "2": "C", "3": "C", "4": "B"}, {"1": "A", "2": "B", "3": "C", "4": "A"})
    assert (res.value, res.details) == (0.5, {"correct": 2, "total": 4})
    assert res.signature.endswith("|n:4") and res.to_dict()["score"] == 0.5
    with pytest.raises(ConfigError, match="'2'"):
        acc.score({"1": "A"}, {"1": "A", "2": "B"})


def test_clipping_is_sacrebleus_on_random_repetitive_text():
    """The per-n-gram maximum over references (no Counter merge) clips as sacrebleu does: small
    vocabulary, so n-grams repeat within and across references; 1 and 3 references."""
    import random

    rng = random.Random(7)

    def sent() -> str:
        return " ".join(rng.choice("abcde") for _ in range(rng.randint(1, 12)))

    for nrefs in (1, 3):
        hyps = [sent() for _ in range(200)]
        refs = [[sent() for _ in range(nrefs)] for _ in hyps]
        ours = CorpusBLEU(ref_length="closest").score(hyps, refs)
        streams = [list(r) for r in zip(*refs)]
        theirs = sacrebleu.corpus_bleu(hyps, streams, tokenize="none", smooth_method="none")
        assert ours.details["counts"] == list(theirs.counts) and ours.details["totals"] == list(theirs.totals)
        assert ours.value == pytest.approx(theirs.score, abs=1e-12)
