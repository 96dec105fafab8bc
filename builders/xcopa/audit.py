"""Cross-lingual audits computed from a release alone (used by the checks and the card).

The English reference is the release's own ``en`` config: ``en/validation`` idx ``i``
is COPA dev item ``401+i`` and ``en/test`` idx ``i`` is COPA test item ``501+i``, the
items XCOPA idx ``i`` translates. The choice order is measured independently of the
labels, on the ``translation-<lang>`` configs (upstream's back-translations).
"""

from __future__ import annotations

from collections import Counter
from statistics import mean
from typing import Any

from benchsmith.loaders.xcopa_jsonl import LANGUAGES

from .alignment import order_margin

SPLITS = ("validation", "test")


def _rows(release: Any, config: str, split: str) -> list[dict[str, Any]]:
    return release.table(config, split).to_pylist()


def _has(release: Any, config: str, split: str | None = None) -> bool:
    return config in release.configs() and (split is None or split in release.splits(config))


def languages_in(release: Any) -> list[str]:
    return [lang for lang in LANGUAGES if _has(release, lang)]


def english(release: Any, split: str) -> dict[int, dict[str, Any]] | None:
    if not _has(release, "en", split):
        return None
    return {r["idx"]: r for r in _rows(release, "en", split)}


def text_order(release: Any, split: str) -> dict[str, Any] | None:
    """Items whose back-translated choices match COPA's a2/a1 better than a1/a2 (summed over languages)."""
    en = english(release, split)
    configs = [c for c in release.configs() if c.startswith("translation-") and split in release.splits(c)]
    if en is None or not configs:
        return None
    margin: Counter[int] = Counter()
    for c in configs:
        for r in _rows(release, c, split):
            e = en.get(r["idx"])
            if e is None:
                continue
            margin[r["idx"]] += order_margin(r["choice1"], r["choice2"], e["choice1"], e["choice2"])
    return {"reversed": sorted(i for i, m in margin.items() if m > 0), "items": len(margin),
            "languages": len(configs),
            "smallest_margin": round(min((abs(m) for m in margin.values()), default=0.0), 3)}


def consistency(release: Any) -> dict[str, dict[str, dict[str, Any]]]:
    """Per language and split: what differs from English COPA.

    ``labels_agree`` / ``label_differs``: XCOPA label == / != COPA label (ids in
    ``label_differs_idx``, together with idx that have no COPA item);
    ``question_differs``: question != COPA's asks-for.
    """
    out: dict[str, dict[str, dict[str, Any]]] = {}
    en_rows = {s: english(release, s) for s in SPLITS}  # read once, not once per language
    for lang in languages_in(release):
        for split in SPLITS:
            en = en_rows[split]
            if en is None or not _has(release, lang, split):
                continue
            rows = _rows(release, lang, split)
            label_diff = [r["idx"] for r in rows if r["idx"] not in en or r["label"] != en[r["idx"]]["label"]]
            question_diff = [r["idx"] for r in rows if r["idx"] in en and r["question"] != en[r["idx"]]["question"]]
            out.setdefault(lang, {})[split] = {
                "items": len(rows),
                "labels_agree": len(rows) - len(label_diff),
                "label_differs": len(label_diff),
                "label_differs_idx": label_diff,
                "question_differs": len(question_diff),
                "question_differs_idx": question_diff,
            }
    return out


def balance(release: Any) -> dict[str, dict[str, dict[str, Any]]]:
    """Label and question counts per config and split (ClassLabel names as keys)."""
    out: dict[str, dict[str, dict[str, Any]]] = {}
    for config in release.configs():
        feats = release.features(config)
        for split in release.splits(config):
            table = release.table(config, split, ["label", "question"])
            labels = Counter(feats["label"].int2str(v) for v in table.column("label").to_pylist())
            questions = Counter(feats["question"].int2str(v) for v in table.column("question").to_pylist())
            out.setdefault(config, {})[split] = {
                "label": dict(sorted(labels.items())), "question": dict(sorted(questions.items())),
            }
    return out


def length_ratios(release: Any) -> dict[str, dict[str, float]]:
    """Mean characters of premise and of choices, per language / English, on aligned items."""
    out: dict[str, dict[str, float]] = {}
    en_rows = {s: english(release, s) for s in SPLITS}
    for lang in languages_in(release):
        p_l, p_e, c_l, c_e = [], [], [], []
        for split in SPLITS:
            en = en_rows[split]
            if en is None or not _has(release, lang, split):
                continue
            for r in _rows(release, lang, split):
                e = en.get(r["idx"])
                if e is None:
                    continue
                p_l.append(len(r["premise"]))
                p_e.append(len(e["premise"]))
                c_l += [len(r["choice1"]), len(r["choice2"])]
                c_e += [len(e["choice1"]), len(e["choice2"])]
        if p_l:
            out[lang] = {
                "premise_ratio": round(mean(p_l) / mean(p_e), 3),
                "choice_ratio": round(mean(c_l) / mean(c_e), 3),
                "premise_chars": round(mean(p_l), 1),
                "choice_chars": round(mean(c_l), 1),
            }
    return out


def card_sections(release: Any) -> dict[str, str]:
    cons = consistency(release)
    if not cons:
        return {}
    lines = [
        (
            "Every item is joined to the English COPA item it translates (validation idx *i* = COPA dev "
            "item 401+*i*, test idx *i* = COPA test item 501+*i*)."
        ),
        "",
        "| language | split | items | labels agreeing with COPA | question ≠ COPA |",
        "|---|---|---:|---:|---:|",
    ]
    for lang, splits in cons.items():
        for split, c in splits.items():
            lines.append(
                f"| {lang} | {split} | {c['items']} | {c['labels_agree']}/{c['items']} | {c['question_differs']} |"
            )
    for split in SPLITS:
        order = text_order(release, split)
        if order is not None:
            lines.append(
                f"\nChoice order ({split}, from upstream's back-translations in {order['languages']} languages): "
                f"{order['items'] - len(order['reversed'])}/{order['items']} items in COPA's order."
            )
    ratios = length_ratios(release)
    bal = balance(release)
    lines2 = [
        "| language | premise chars / English | choice chars / English | test cause/effect | test choice1/choice2 |",
        "|---|---:|---:|---:|---:|",
    ]
    for lang, r in ratios.items():
        t = bal.get(lang, {}).get("test", {})
        q, lab = t.get("question", {}), t.get("label", {})
        lines2.append(
            f"| {lang} | {r['premise_ratio']} | {r['choice_ratio']} | {q.get('cause', 0)}/{q.get('effect', 0)} | "
            f"{lab.get('choice1', 0)}/{lab.get('choice2', 0)} |"
        )
    return {"Alignment with English COPA": "\n".join(lines), "Balance and lengths": "\n".join(lines2)}
