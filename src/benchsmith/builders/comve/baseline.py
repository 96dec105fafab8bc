"""ComVE's baselines, scored with the ComVE scorer of ``benchsmith evaluate comve``
(:func:`~benchsmith.builders.comve.metric.comve_metric`, official-compatible): the model
baselines it declares (``BASELINES``, run by ``benchsmith baseline comve``) and the cheap ones
that the ``comve_baselines`` check runs on every release:

* ``copy_source`` (subtask C; the ``copy_source_bleu`` measure of ``published.yaml``): the
  nonsensical statement itself as the reason, scored with the official BLEU: how much BLEU the
  references' lexical overlap with the statement gives for free.
* ``negation_cue`` (subtask B): choose the option that contains a negation word (:data:`NEGATION`);
  among several such options the first, and ``A`` when none has one. ``coverage`` is the share of
  items with exactly one negated option, the items the cue alone decides. Chance is 1/3.

Subtasks A and B need no adapter for the model baselines: their typed policies name the options
(A: sent0/sent1, no context; B: option_a..c with false_sent as context) and the label. Subtask C
is generation; its items and its official BLEU come from here.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from benchsmith.builders.comve.metric import comve_metric
from benchsmith.validation.baselines.spec import BaselineSpec, Gate, Seq2SeqItem, Setup, Splits

if TYPE_CHECKING:
    from benchsmith.release import Release

NEGATION = frozenset([
    "not", "no", "never", "cannot", "can't", "don't", "doesn't", "didn't", "isn't", "aren't", "wasn't",
    "weren't", "won't", "wouldn't", "couldn't", "shouldn't", "hasn't", "haven't", "hadn't", "mustn't",
    "nobody", "nothing", "none", "neither", "nor", "nowhere", "without",
])
_TOKEN = re.compile(r"[a-z]+(?:'[a-z]+)*")


def has_negation(text: str) -> bool:
    text = text.lower().replace("\u2019", "'")
    return any(t in NEGATION or t.endswith("n't") for t in _TOKEN.findall(text))


def negation_choice(options: list[str]) -> tuple[str, int]:
    """The chosen letter and how many options carry a negation."""
    neg = [i for i, o in enumerate(options) if has_negation(o)]
    return "ABC"[neg[0] if neg else 0], len(neg)


def negation_cue(release: Release, split: str) -> dict[str, Any]:
    """Accuracy of the negation-cue heuristic on subtask B ``split``."""
    t = release.table("subtask_b", split)
    ids = t.column("id").to_pylist()
    names = release.config_info("subtask_b").features_dict["label"]["names"]  # no datasets import
    gold = {i: names[v] for i, v in zip(ids, t.column("label").to_pylist())}
    opts = zip(*(t.column(c).to_pylist() for c in ("option_a", "option_b", "option_c")))
    preds, n_neg = {}, []
    for i, o in zip(ids, opts):
        preds[i], k = negation_choice(list(o))
        n_neg.append(k)
    res = comve_metric("b").score(preds, gold)
    decided = [i for i, k in zip(ids, n_neg) if k == 1]
    return {"baseline": "negation_cue", "split": split, "accuracy": res.value, "n": res.details["total"],
            "coverage": len(decided) / len(ids) if ids else 0.0,
            "accuracy_when_decided": sum(preds[i] == gold[i] for i in decided) / len(decided) if decided
            else None,
            "chance": 1 / 3, "signature": res.signature}


def copy_source(release: Release, split: str) -> dict[str, Any]:
    """Official BLEU of copying ``false_sent`` as the reason on subtask C ``split``."""
    t = release.table("subtask_c", split)
    ids = t.column("id").to_pylist()
    res = comve_metric("c").score(dict(zip(ids, t.column("false_sent").to_pylist())),
                                  dict(zip(ids, t.column("references").to_pylist())))
    return {"baseline": "copy_source", "split": split, "bleu": res.value, "n": len(ids),
            "brevity_penalty": res.details["brevity_penalty"], "precisions": res.details["precisions"],
            "signature": res.signature}


def subtask_c_items(release: Release, config: str, split: str) -> list[Seq2SeqItem]:
    """Subtask C as (statement -> reasons): the non-empty references of each item; an item without
    any (27 in trial) is left out, as the official scorer cannot score it."""
    out = []
    for row in release.examples(config, split):
        refs = tuple(r for r in row["references"] if r and r.strip())
        if refs:
            out.append(Seq2SeqItem(id=row["id"], source=row["false_sent"], references=refs))
    return out


def subtask_c_score(release: Release, config: str, split: str, items: Sequence[Seq2SeqItem],
                    outputs: Sequence[str]) -> dict[str, Any]:
    """The official subtask C BLEU (:class:`~.metric.ComVEBLEU`) of ``outputs`` against the items' references."""
    res = comve_metric("c").score({it.id: out for it, out in zip(items, outputs, strict=True)},
                                  {it.id: list(it.references) for it in items})
    return {"bleu": round(res.value or 0.0, 2), "signature": res.signature}  # two decimals, as the paper prints


BASELINES = [
    BaselineSpec(
        "subtask-a", "cross_encoder", "subtask_a",
        description="subtask A cross-encoder: the two statements as the options, no context; train on train, "
        "select on validation, test on test",
    ),
    BaselineSpec(
        "subtask-b", "cross_encoder", "subtask_b",
        description="subtask B cross-encoder: false_sent as the context, the three reasons as the options",
    ),
    BaselineSpec(
        "subtask-b-options-only", "cross_encoder", "subtask_b", variant="options_only", gate=Gate(),
        description="subtask B with the statement hidden (options only): gated at 0.10 over chance; the "
        "negation cue is the known artifact options-negation-cue, declared up to 0.45 (known_artifacts.yaml)",
    ),
    BaselineSpec(
        "subtask-c-copy", "copy", "subtask_c", items=subtask_c_items, score=subtask_c_score,
        setup=Setup(paper=("subtask_c/test/copy_source_bleu",)),
        description="subtask C, the statement itself as the reason (no model), official BLEU",
    ),
    BaselineSpec(
        "subtask-c-generation", "generation", "subtask_c", splits=Splits(selection=None),
        items=subtask_c_items, score=subtask_c_score, setup=Setup(model="generation"),
        description="subtask C: fine-tune a local seq2seq or causal LM (--model-path, e.g. BART or GPT-2) on "
        "statement -> reason pairs of train, generate for test, official BLEU",
    ),
]
