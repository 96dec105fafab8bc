"""CoGnition's model baseline: the paper's Transformer NMT (this folder's ``nmt`` engine,
:mod:`.seq2seq`), scored as ``benchsmith evaluate cognition`` scores (:mod:`.metric`, called from
here because ``validation/`` never imports a builder): character-level sacreBLEU on the random
test (``parallel/test``) and the CG-test (``cg_test/test``); on the CG-test CTER at the instance
and the aggregate level, overall and per NP / VP / PP (with BLEU per category, as Table 6). It
trains on ``parallel/train``, which ``../shared/raw`` lacks: README, "Model baselines", has what
``--train-split validation`` then gives and the paper's figures (:data:`PAPER`). The paper's CTER
is human judgement (Section 4.4); ours is eval.py's automatic rule.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from benchsmith.validation.baselines.spec import BaselineSpec, Seq2SeqItem, Setup

from .atoms import CATEGORIES
from .metric import CTER, CognitionBLEU, Lexicon
from .seq2seq import nmt_engine  # noqa: F401 - registers the nmt engine

if TYPE_CHECKING:
    from benchsmith.release import Release

#: published.yaml ids of the paper's Table 6 figures for this baseline (values keyed by metric)
PAPER = ("table6/random-test/Transformer", "table6/cg-test/Transformer")


def translation_items(release: Release, config: str, split: str) -> list[Seq2SeqItem]:
    """(English source, Chinese reference) per line of ``parallel`` or ``cg_test``."""
    return [Seq2SeqItem(id=row["id"], source=row["en"], references=(row["zh"],))
            for row in release.examples(config, split)]


def score_translations(release: Release, config: str, split: str, items: Sequence[Seq2SeqItem],
                       hypotheses: Sequence[str]) -> dict[str, Any]:
    """BLEU (character-level sacreBLEU, as ``evaluate cognition``); on the CG-test also CTER
    (the default rule ``paper``: upstream's eval.py, as Table 6) overall and per category, and BLEU
    per category. CTER and BLEU are 0-100; ``n_by_group`` counts the lines of each category."""
    refs = [it.references[0] for it in items]
    bleu = CognitionBLEU()
    overall = bleu.score(hypotheses, refs)
    out: dict[str, Any] = {"bleu": overall.value, "bleu_signature": overall.signature}
    if config != "cg_test":
        return out
    rows = {r["id"]: r for r in release.examples(config, split)}
    picked = [rows[it.id] for it in items]
    cats = [CATEGORIES[r["category"]] if isinstance(r["category"], int) else r["category"] for r in picked]
    score = CTER(Lexicon.from_release(release)).score(hypotheses, picked)
    for group, res in score.details["groups"].items():
        prefix = "" if group == "all" else f"{group}/"
        out[f"{prefix}instance_cter"] = res["instance_cter"]
        out[f"{prefix}aggregate_cter"] = res["aggregate_cter"]
    out["n_by_group"] = {}
    for cat in CATEGORIES:
        idx = [i for i, c in enumerate(cats) if c == cat]
        if idx:
            out[f"{cat}/bleu"] = bleu.score([hypotheses[i] for i in idx], [refs[i] for i in idx]).value
            out["n_by_group"][cat] = len(idx)
    out["cter_signature"] = score.signature
    return out


BASELINES = [
    BaselineSpec(
        "nmt", "nmt", "parallel", eval_configs=("parallel", "cg_test"), items=translation_items,
        score=score_translations, setup=Setup(
            "Table 6", model="transformer", paper=PAPER, note="the paper trains fairseq's Transformer base "
            "for 100,000 steps on the 196,246 training pairs (--preset paper); the default preset small is a "
            "CPU-sized model"),
        description="Transformer NMT from scratch (en -> zh, jieba + BPE targets), BLEU on the random and CG "
        "test sets, CTER on the CG test set",
    ),
]
