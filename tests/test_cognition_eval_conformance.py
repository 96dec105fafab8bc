"""CTER ``rule="paper"`` against upstream's eval.py itself (``$BENCHSMITH_RAW/cognition/eval/eval.py``).

eval.py is run as upstream runs it (``python eval.py <src TAB compound TAB hyp file> <lexicon>``) in a
subprocess; its per-line flags and its two printed error rates are compared with our judge's
:attr:`Verdict.flag` and :class:`CTER`'s instance / aggregate figures on the same inputs:

* ``BRANCHES``: hand-made lines, one per branch of eval.py (missing atom, each order test, MOD
  regularisation, the MOD test skipped for verbs, ``/`` and empty lexicon alternatives,
  multi-translation entries, BPE markers, spaces); the expected flag is written out too, so the
  table documents eval.py's behaviour;
* every line of the CG-test with its reference, with the reference of another compound in the
  same template, and with seeded random perturbations of the reference (deletions, reversal,
  per-character spaces, BPE joiners, another line's reference).
"""

from __future__ import annotations

import hashlib
import random
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

import pytest

from benchsmith.builders.cognition.atoms import lexicon_roles, parse_compound
from benchsmith.builders.cognition.metric import CTER, CompoundJudge, Lexicon
from benchsmith.builders.cognition.paper_rule import EVAL_PY_SHA256
from benchsmith.loaders.cognition_files import read_lexicon

pytestmark = pytest.mark.realdata


@pytest.fixture(scope="module")
def upstream(raw) -> Path:
    root = raw / "cognition"
    if not (root / "eval" / "eval.py").is_file():
        pytest.skip(f"{root}/eval/eval.py is not there")
    digest = hashlib.sha256((root / "eval" / "eval.py").read_bytes()).hexdigest()
    assert digest == EVAL_PY_SHA256, f"{root}/eval/eval.py is not the version paper_rule.py reimplements"
    return root


@pytest.fixture(scope="module")
def lex(upstream) -> Lexicon:
    entries = read_lexicon(upstream / "eval" / "lexicon")
    return Lexicon({k: e.translations for k, e in entries.items()},
                   frozenset(k for k, e in entries.items() if e.optional), lexicon_roles())


def run_eval_py(upstream: Path, tmp: Path, lines: list[tuple[str, str, str]]) -> tuple[list[str], str, str]:
    """eval.py's per-line flags and its printed instance / aggregate error rates."""
    path = tmp / "merge.tsv"
    path.write_text("".join(f"{s}\t{c}\t{h}\n" for s, c, h in lines), encoding="utf-8")
    out = subprocess.run([sys.executable, str(upstream / "eval" / "eval.py"), str(path),
                          str(upstream / "eval" / "lexicon")],
                         capture_output=True, text=True, check=True, encoding="utf-8").stdout.splitlines()
    flags = [line.rsplit("\t", 1)[1] for line in out[:len(lines)]]
    assert out[len(lines)].startswith("====="), out[len(lines)]
    inst = out[-2].removeprefix("Instance-level error rate:")
    agg = out[-1].removeprefix("Aggregate-level error rate:")
    return flags, inst, agg


def _atoms(compound: str):
    return [a.to_dict() for a in parse_compound(compound).atoms]


# compound, hypothesis, eval.py's flag (types in eval.py's order P, V, DET, ADJ, N, MOD / order DET, ADJ[, MOD])
BRANCHES = [
    ("the dog", "狗把他自己的车给了他。", "P1-P1/P1-P1-P1"),  # `the` is "/": translated, no position
    ("the small dog", "狗给了他一辆车。", "P1-P0-P1/P0"),  # missing ADJ: no order test
    ("the small dog he liked", "小狗给了他一辆车。", "P1-P1-P1-P0/P0"),  # missing MOD (he liked -> mod0)
    ("behind the car", "他在车上。", "P0-P1-P1/P0"),  # missing P
    ("every dog", "狗每天都叫。", "P1-P1/P0-P1-P1"),  # DET after N
    ("every dog", "狗每天都叫狗。", "P1-P1/P1-P1-P1"),  # first DET < *last* N
    ("the small dog", "狗很小。", "P1-P1-P1/P1-P0-P1"),  # ADJ after N
    ("the small dog", "小女孩看到了那只狗。", "P1-P1-P1/P1-P1-P1"),  # no window: 小 of 小女孩 counts
    ("the dog he liked", "狗是他喜欢的。", "P1-P1-P1/P1-P1-P0"),  # MOD after N (NP)
    ("the dog at the store", "商店里的狗很饿。", "P1-P1-P1/P1-P1-P1"),  # mod1: 店里 / 商店
    ("the dog at the store", "狗在店里。", "P1-P1-P1/P1-P1-P0"),
    ("on the chair on the floor", "他坐在地板上的椅子上。", "P1-P1-P1-P1/P1-P1-P1"),  # PP: MOD tested
    ("on the chair on the floor", "他把椅子放在地上。", "P1-P1-P1-P1/P1-P1-P0"),  # PP: MOD after N fails
    ("with the chair on the floor", "椅子在地板上。", "P1-P1-P1-P1/P1-P1-P0"),
    ("took the chair on the floor", "他把椅子带到地上。", "P1-P1-P1-P1/P1-P1"),  # VP: MOD not tested
    ("liked the car", "车。", "P1-P1-P1/P1-P1"),  # liked is 喜欢/: the empty alternative matches anywhere
    ("liked the car on the floor", "车在地上。", "P1-P1-P1-P1/P1-P1"),  # ... and gives V a position
    ("visited the building", "他参观了那座楼。", "P1-P1-P1/P1-P1"),  # multi-translation entries
    ("the farmer", "农场主回家了。", "P1-P1/P1-P1-P1"),
    ("the farmer", "农民回家了。", "P1-P1/P1-P1-P1"),
    ("the farmer", "农夫回家了。", "P1-P1/P1-P1-P1"),
    ("another small dog", "另 一 只 小 狗 来 了 。", "P1-P1-P1/P1-P1-P1"),  # segmentation spaces
    ("another small dog", "另一只小@@ 狗来了。", "P1-P1-P1/P1-P1-P1"),  # BPE joiners
    ("another small dog", "狗 @@ 另 一 只 小", "P1-P1-P1/P0-P0-P1"),
    ("the small dog", "a small 狗 iPhone X", "P1-P0-P1/P0"),  # Latin words: spaces removed too
    ("the small dog", "小狗@@", "P1-P1-P1/P1-P1-P1"),  # a final @@ stays
    ("the small dog", "小狗   ", "P1-P1-P1/P1-P1-P1"),  # trailing spaces
    ("each smart lawyer he liked", "每个他喜欢的聪明律师。", "P1-P1-P1-P1/P1-P1-P1"),  # 5 atoms
    ("saw each special clown he liked", "我见过每个他喜欢的特别的小丑", "P1-P1-P1-P1-P1/P1-P1"),
    ("hated another silly girl", "她讨厌另一个傻女孩。", "P1-P1-P1-P1/P1-P1"),
    ("without the quiet bee", "不安静的蜜蜂", "P1-P1-P1-P1/P1-P1-P1"),
    ("toward every empty building", "朝着每一座空楼", "P1-P1-P1-P1/P1-P1-P1"),
    ("toward every empty building", "朝着每一座空房子", "P1-P1-P1-P1/P1-P1-P1"),  # `building` twice upstream
]


def test_branches_match_eval_py(upstream, lex, tmp_path):
    lines = [(f"{c} .", c, h) for c, h, _ in BRANCHES]
    flags, _, _ = run_eval_py(upstream, tmp_path, lines)
    judge = CompoundJudge(lex)  # the default rule is the paper's
    ours = [judge.judge(h, _atoms(c)) for c, h, _ in BRANCHES]
    assert flags == [f for _, _, f in BRANCHES]
    assert [v.flag for v in ours] == flags
    assert [v.correct for v in ours] == ["P0" not in f for f in flags]
    assert all(bool(v.failures) == (not v.correct) for v in ours)


def test_branch_failures_are_named(lex):
    judge = CompoundJudge(lex, "paper")
    assert judge.judge("小狗给了他一辆车。", _atoms("the small dog he liked")).failures == ("missing:MOD:he liked",)
    assert judge.judge("他把椅子放在地上。", _atoms("on the chair on the floor")).failures == (
        "order:MOD:on the floor",)
    assert judge.judge("狗很小。", _atoms("the small dog")).failures == ("order:ADJ:small",)


# ------------------------------------------------------------------------------ the whole CG-test


@pytest.fixture(scope="module")
def cg(upstream):
    d = upstream / "data" / "cg-test"
    return tuple((d / name).read_text(encoding="utf-8").splitlines()
                 for name in ("cg-test.en", "cg-test.compound", "cg-test.zh"))


def _swapped(en: list[str], comp: list[str], zh: list[str]) -> list[str]:
    """Each line's hypothesis: the reference of the next line with the same English template
    and another compound (its own reference where there is none)."""
    by_template = defaultdict(list)
    for i, (s, c) in enumerate(zip(en, comp)):
        by_template[f" {s} ".replace(f" {c} ", " <X> ", 1)].append(i)
    out = list(zh)
    for idx in by_template.values():
        for a, b in zip(idx, idx[1:] + idx[:1]):
            if comp[a] != comp[b]:
                out[a] = zh[b]
    return out


def _perturbed(zh: list[str], seed: int) -> list[str]:
    rng = random.Random(seed)
    out = []
    for i, ref in enumerate(zh):
        text = ref.replace(" ", "")
        k = rng.randrange(6)
        if k == 0 and len(text) > 2:  # delete a span
            a = rng.randrange(len(text) - 1)
            text = text[:a] + text[a + rng.randint(1, 3):]
        elif k == 1:  # reverse
            text = text[::-1]
        elif k == 2:  # one character per token
            text = " ".join(text)
        elif k == 3:  # BPE joiners inside words
            text = "".join(ch + ("@@ " if rng.random() < 0.3 else "") for ch in text)
        elif k == 4:  # another line's reference
            text = zh[rng.randrange(len(zh))]
        else:  # the released segmentation, halves swapped
            words = ref.split()
            text = " ".join(words[len(words) // 2:] + words[:len(words) // 2])
        out.append(text or ref)
    return out


# perturbed-1 (the perturbations again with another seed, ~1.3 CPU s) in the slow run
@pytest.mark.parametrize("variant", ["references", "swapped", "perturbed-0",
                                     pytest.param("perturbed-1", marks=pytest.mark.slow)])
def test_every_cg_test_line_matches_eval_py(upstream, lex, cg, tmp_path, variant):
    en, comp, zh = cg
    hyps = {"references": lambda: zh, "swapped": lambda: _swapped(en, comp, zh),
            "perturbed-0": lambda: _perturbed(zh, 0), "perturbed-1": lambda: _perturbed(zh, 1)}[variant]()
    flags, inst, agg = run_eval_py(upstream, tmp_path, list(zip(en, comp, hyps)))
    score = CTER(lex).score(hyps, [{"atoms": _atoms(c), "compound": c} for c in comp])
    mismatched = [(i, f, v["flag"]) for i, (f, v) in enumerate(zip(flags, score.items)) if f != v["flag"]]
    assert not mismatched, mismatched[:5]
    res = score.details["groups"]["all"]
    assert (res["instances"], res["compounds"]) == (10800, 2160)
    # eval.py prints "{0:.3%}".format(rate)
    assert f"{res['instance_errors'] / res['instances']:.3%}" == inst
    assert f"{res['compound_errors'] / res['compounds']:.3%}" == agg


def test_reference_figures(upstream, lex, cg, tmp_path):
    """eval.py on the human references (README): 283 of 10,800 lines flagged, 212 of 2,160 compounds."""
    _en, comp, zh = cg
    res = CTER(lex).score(zh, [{"atoms": _atoms(c), "compound": c} for c in comp]).details["groups"]["all"]
    assert (res["instance_errors"], res["compound_errors"]) == (283, 212)
