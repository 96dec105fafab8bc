"""Features shared by the released MuCoW suites and harvested ones (so one evaluator serves both)."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.compute as pc
from datasets import ClassLabel, Features, List, Value

_S = Value("string")

SCORING_FEATURES = Features({
    "id": _S,
    "source": _S,
    "reference": _S,
    "ambiguous_word": _S,
    "original_translation": _S,
    "sense": _S,
    "corpus": _S,
    "contrastive_translations": List(_S),
    "replacements": List(_S),
})

TRANSLATION_FEATURES = Features({
    "id": _S,
    "sentence_id": Value("int64"),
    "source": _S,
    "reference": _S,
    "ambiguous_word": _S,
    "sense": _S,
    "correct_words": List(_S),
    "incorrect_words": List(_S),
    "domain": ClassLabel(names=["in", "out"]),
    "corpus": _S,
})


#: the columns :func:`suite_statistics` reads, per variant
STATISTICS_COLUMNS = {
    "scoring": ["ambiguous_word", "corpus", "sense", "contrastive_translations"],
    "translation": ["ambiguous_word", "corpus", "correct_words", "domain"],
}


def list_items(column: pa.ChunkedArray | pa.Array) -> int:
    """The items of a list column, over every row."""
    return pc.sum(pc.list_value_length(column)).as_py() or 0


def sense_of(row: dict, variant: str) -> str:
    """An item's sense: its ``sense`` id (scoring), its correct target words (translation: ``sense``
    is empty upstream for de-en and en-de, and the correct words are what the sense is made of)."""
    return row["sense"] if variant == "scoring" else " ".join(row["correct_words"])


def senses_per_word(rows: list[dict], variant: str) -> tuple[int, int]:
    """``(ambiguous words, senses)`` over a suite's items (needs ``ambiguous_word`` and the sense field)."""
    words = {r["ambiguous_word"] for r in rows}
    return len(words), len({(r["ambiguous_word"], sense_of(r, variant)) for r in rows})


def suite_statistics(rows: list[dict], variant: str) -> dict:
    """The paper's figures for one suite: items, ambiguous words, senses, senses per word (+ per variant)."""
    words, senses = senses_per_word(rows, variant)
    out: dict = {
        "items": len(rows),
        "ambiguous_words": words,
        "senses": senses,
        "senses_per_word": round(senses / words, 3) if words else 0.0,
    }
    corpora: dict[str, int] = {}
    for r in rows:
        corpora[r["corpus"]] = corpora.get(r["corpus"], 0) + 1
    out["corpora"] = dict(sorted(corpora.items()))
    if variant == "scoring":
        out["contrastive_pairs"] = sum(len(r["contrastive_translations"]) for r in rows)
    else:
        dom = [r["domain"] if isinstance(r["domain"], str) else ("in", "out")[r["domain"]] for r in rows]
        out["in_domain"] = dom.count("in")
        out["out_of_domain"] = dom.count("out")
    return out
