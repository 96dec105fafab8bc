"""XCOPA's features, what each field means, and how they compare with the Hub's copies.

Every config has upstream's seven fields in upstream's order; ``en`` adds ``copa_id``.
``question`` is a string (``"cause"``/``"effect"``), as in upstream's jsonl, the Hub's
``xcopa`` and ``super_glue``/``copa``, and as lm-evaluation-harness's xcopa and copa
prompts read it (``connector[doc["question"]]``). ``label`` is a ClassLabel
(``choice1``/``choice2``), as ``super_glue``/``copa`` has it; the Hub's ``xcopa`` has an
``int32``: the values (0, 1) are the same.
"""

from __future__ import annotations

from datasets import ClassLabel, Features, Value

QUESTION = Value("string")
QUESTIONS = ("cause", "effect")
LABEL = ClassLabel(names=["choice1", "choice2"])
FEATURES = Features(
    {
        "premise": Value("string"),
        "choice1": Value("string"),
        "choice2": Value("string"),
        "question": QUESTION,
        "label": LABEL,
        "idx": Value("int32"),
        "changed": Value("bool"),
    }
)
EN_FEATURES = Features({**FEATURES, "copa_id": Value("int32")})

#: what each field holds (the card's "Fields" section)
FIELD_DOCS: dict[str, str] = {
    "premise": "the premise; in `translation-<lang>`, upstream's Google translation of it back into English",
    "choice1": "the first alternative, in COPA's order",
    "choice2": "the second alternative, in COPA's order",
    "question": "`\"cause\"` or `\"effect\"` (a string): whether the more plausible cause or effect of the "
    "premise is asked for. 1.0.0 keeps upstream's value; from 1.1.0 it is English COPA's `asks-for` "
    "(errata `xcopa-<lang>-question`)",
    "label": "0 = `choice1`, 1 = `choice2` is the more plausible alternative: the majority label of the 11 "
    "translators, which is English COPA's answer on every item",
    "idx": "item number within the split: validation idx *i* translates COPA dev item 401+*i*, test idx *i* "
    "COPA test item 501+*i* (the key is split + idx)",
    "changed": "`true` where this language's translator chose the other alternative and was overridden by the "
    "majority label, the translation left as it was (paper Section 2, footnote 5, Section 3). It is not a flag "
    "for items adapted to the culture. `translation-<lang>` repeats its language's flag; always `false` in `en`",
    "copa_id": "`en` only: COPA's item id (1-400 train, 401-500 validation, 501-1000 test)",
}

#: the Hub's copies as we know them, beside ours (the card's "Fields" section)
HUB_COMPARISON = (
    "Compared with the Hugging Face Hub's copies: the Hub's `xcopa` has the same seven fields in the same "
    "order and types (`question` a string, `idx` int32, `changed` bool) except `label`, an `int32` there "
    "and a ClassLabel (`choice1`, `choice2`) here, with the same values 0/1; its configs are named as ours "
    "(`et` ... `zh`, `translation-<lang>`). `super_glue`/`copa` has `premise`, `choice1`, `choice2`, "
    "`question` (string), `idx` (int32) and `label` (ClassLabel `choice1`, `choice2`), with the test "
    "labels hidden (-1); our `en` adds `changed` (always false) and `copa_id`, keeps the test labels "
    "(COPA-resources' copa-test.xml) and splits COPA's dev set as the XCOPA paper trains on it "
    "(train = items 1-400, validation = 401-500)."
)
