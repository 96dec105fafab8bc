"""Cross-lingual audits computed from a release alone (used by the checks and the card).

The English reference is the release's own ``en`` config: ``en/validation`` idx ``i``
is COPA dev item ``401+i`` and ``en/test`` idx ``i`` is COPA test item ``501+i``, the
items XCOPA idx ``i`` translates. The choice order is measured independently of the
labels, on the ``translation-<lang>`` configs (upstream's back-translations).

**Lengths.** Thai and Chinese are written without spaces between words, so a
whitespace count makes a Thai or Chinese sentence about one "word". Lengths here are
in characters (Unicode code points, spaces included) for every language, which
compares across scripts. Words are counted only with a segmenter fit for the script
(:data:`WORD_SEGMENTERS`): whitespace for the languages written with spaces, jieba for
Chinese (``benchsmith.nlp.segment``, the nlp extra), and none for Thai (no Thai
segmenter is a dependency: its word counts are left out, its characters are reported).
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Callable
from importlib.metadata import PackageNotFoundError, version
from typing import TYPE_CHECKING, Any

from benchsmith.cache import cache_path, read_json, write_json
from benchsmith.errors import ConfigError
from benchsmith.loaders.xcopa_jsonl import LANGUAGES
from benchsmith.nlp.segment import segment

from .agreement import changed_counts, fleiss, translator_matrix
from .alignment import _words
from .fields import FIELD_DOCS, HUB_COMPARISON

if TYPE_CHECKING:
    from benchsmith.release import Release

SPLITS = ("validation", "test")
#: how words are counted per config language; a language not listed is written with spaces
#: (whitespace words); ``None``: no segmenter, characters only
WORD_SEGMENTERS: dict[str, str | None] = {"zh": "jieba", "th": None}


def _rows(release: Release, config: str, split: str,
          columns: tuple[str, ...] | None = None) -> list[dict[str, Any]]:
    """The split's rows as dicts, of ``columns`` only where given (converting fewer is cheaper)."""
    return release.table(config, split, columns).to_pylist()


def _columns(release: Release, config: str, split: str, names: tuple[str, ...]) -> list[list[Any]]:
    """The split's ``names`` columns as lists, in that order. The audits below loop over columns
    zipped, not over a dict per row: XCOPA's card audits took 0.185 s CPU of a build as row dicts
    (``benchmarks/build_parts.py xcopa``); tests/test_build_overhead.py holds them equal to the
    row-by-row definitions on the real release."""
    table = release.table(config, split, list(names))
    return [table.column(n).to_pylist() for n in names]


def _has(release: Release, config: str, split: str | None = None) -> bool:
    return config in release.configs() and (split is None or split in release.splits(config))


def languages_in(release: Release) -> list[str]:
    return [lang for lang in LANGUAGES if _has(release, lang)]


def english(release: Release, split: str) -> dict[int, dict[str, Any]] | None:
    if not _has(release, "en", split):
        return None
    return {r["idx"]: r for r in _rows(release, "en", split)}


def text_order(release: Release, split: str) -> dict[str, Any] | None:
    """Items whose back-translated choices match COPA's a2/a1 better than a1/a2 (summed over languages)."""
    en = english(release, split)
    configs = [c for c in release.configs() if c.startswith("translation-") and split in release.splits(c)]
    if en is None or not configs:
        return None
    margin: dict[int, float] = {}
    words: dict[str, set[str]] = {}
    # each text's word set once (the English ones recur per language), and each English pair's
    # sets and sizes once per idx
    en_sets: dict[int, tuple[set[str], set[str], int, int]] = {}
    for i, e in en.items():
        for t in (e["choice1"], e["choice2"]):
            if t not in words:
                words[t] = _words(t)
        b1, b2 = words[e["choice1"]], words[e["choice2"]]
        en_sets[i] = (b1, b2, len(b1), len(b2))
    for c in configs:
        idxs, choices1, choices2 = _columns(release, c, split, ("idx", "choice1", "choice2"))
        for t in {*choices1, *choices2} - words.keys():
            words[t] = _words(t)
        for i, t1, t2 in zip(idxs, choices1, choices2):
            e = en_sets.get(i)
            if e is None:
                continue
            w1, w2 = words[t1], words[t2]
            b1, b2, n_b1, n_b2 = e
            n_w1, n_w2 = len(w1), len(w2)
            # alignment.order_margin, term for term (the same float): Jaccard |a & b| / max(1, |a | b|),
            # the union's size counted as |a| + |b| - |a & b| (the same integer, no union set built),
            # and max(1, n) of that size (an int >= 0) written `n or 1` (no call)
            i12, i21, i11, i22 = len(w1 & b2), len(w2 & b1), len(w1 & b1), len(w2 & b2)
            j12, j21 = i12 / ((n_w1 + n_b2 - i12) or 1), i21 / ((n_w2 + n_b1 - i21) or 1)
            j11, j22 = i11 / ((n_w1 + n_b1 - i11) or 1), i22 / ((n_w2 + n_b2 - i22) or 1)
            margin[i] = margin.get(i, 0) + ((j12 + j21) - (j11 + j22))
    return {"reversed": sorted(i for i, m in margin.items() if m > 0), "items": len(margin),
            "languages": len(configs),
            "smallest_margin": round(min((abs(m) for m in margin.values()), default=0.0), 3)}


def consistency(release: Release) -> dict[str, dict[str, dict[str, Any]]]:
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
            idxs, labels, questions = _columns(release, lang, split, ("idx", "label", "question"))
            en_label = {i: e["label"] for i, e in en.items()}
            en_question = {i: e["question"] for i, e in en.items()}
            label_diff = [i for i, label in zip(idxs, labels) if i not in en or label != en_label[i]]
            question_diff = [i for i, q in zip(idxs, questions) if i in en and q != en_question[i]]
            out.setdefault(lang, {})[split] = {
                "items": len(idxs),
                "labels_agree": len(idxs) - len(label_diff),
                "label_differs": len(label_diff),
                "label_differs_idx": label_diff,
                "question_differs": len(question_diff),
                "question_differs_idx": question_diff,
            }
    return out


def _name(feature: Any, value: Any) -> Any:
    """A value by name: ClassLabel ints as their names, strings (``question``) as they are."""
    return feature.int2str(value) if hasattr(feature, "int2str") and isinstance(value, int) else value


def balance(release: Release) -> dict[str, dict[str, dict[str, Any]]]:
    """Label and question counts per config and split (label names and question strings as keys)."""
    out: dict[str, dict[str, dict[str, Any]]] = {}
    for config in release.configs():
        feats = release.config_info(config).features
        for split in release.splits(config):
            table = release.table(config, split, ["label", "question"])
            # count the stored values, then name them (a ClassLabel's names are distinct: the same counts)
            labels = {_name(feats["label"], v): n
                      for v, n in Counter(table.column("label").to_pylist()).items()}
            questions = {_name(feats["question"], v): n
                         for v, n in Counter(table.column("question").to_pylist()).items()}
            out.setdefault(config, {})[split] = {
                "label": dict(sorted(labels.items())), "question": dict(sorted(questions.items())),
            }
    return out


def length_ratios(release: Release) -> dict[str, dict[str, float]]:
    """Mean characters of premise and of choices, per language / English, on aligned items."""
    out: dict[str, dict[str, float]] = {}
    en_rows = {s: english(release, s) for s in SPLITS}
    # each English item's (premise, choice1 + choice2) characters, once per split
    en_chars = {s: {i: (len(e["premise"]), len(e["choice1"]) + len(e["choice2"])) for i, e in en.items()}
                for s, en in en_rows.items() if en is not None}
    for lang in languages_in(release):
        # sums and counts of the lengths of aligned items: _mean_of's figures without the lists
        n_items = p_l = p_e = c_l = c_e = 0
        for split in SPLITS:
            en = en_chars.get(split)
            if en is None or not _has(release, lang, split):
                continue
            idxs, premises, choices1, choices2 = _columns(release, lang, split,
                                                          ("idx", "premise", "choice1", "choice2"))
            if en.keys() >= set(idxs):  # every item aligned (XCOPA's): the sums of whole columns
                n_items += len(idxs)
                p_l += sum(map(len, premises))
                c_l += sum(map(len, choices1)) + sum(map(len, choices2))
                p_e += sum([en[i][0] for i in idxs])
                c_e += sum([en[i][1] for i in idxs])
                continue
            for i, premise, choice1, choice2 in zip(idxs, premises, choices1, choices2):
                e = en.get(i)
                if e is None:
                    continue
                n_items += 1
                p_l += len(premise)
                p_e += e[0]
                c_l += len(choice1) + len(choice2)
                c_e += e[1]
        if n_items:
            out[lang] = {
                "premise_ratio": round(_mean_of(p_l, n_items) / _mean_of(p_e, n_items), 3),
                "choice_ratio": round(_mean_of(c_l, 2 * n_items) / _mean_of(c_e, 2 * n_items), 3),
                "premise_chars": round(_mean_of(p_l, n_items), 1),
                "choice_chars": round(_mean_of(c_l, 2 * n_items), 1),
            }
    return out


def word_counter(lang: str) -> tuple[str | None, Callable[[str], int] | None]:
    """``(segmenter name, text -> words)`` for a language; ``(None, None)`` where none fits."""
    how = WORD_SEGMENTERS.get(lang, "whitespace")
    if how == "whitespace":
        return how, lambda text: len(text.split())
    if how == "jieba":
        try:
            segment("")
        except ConfigError:  # jieba not installed: characters only
            return None, None
        return how, lambda text: len([w for w in segment(text) if any(ch.isalnum() for ch in w)])
    return None, None


#: file under ``$BENCHSMITH_HOME/cache`` that keeps segmenter word counts between builds
WORD_COUNT_CACHE = "xcopa-word-counts.json"
#: entries kept in it (one per distinct set of texts and segmenter version)
WORD_COUNT_CACHE_ENTRIES = 32
#: bump when :func:`word_counter`'s rule changes: older entries then never match
_WORD_RULE = "alnum-words-v1"


def _segmenter_version(how: str | None) -> str | None:
    """The installed version of a segmenter package (its dictionary ships with it), or None."""
    if how != "jieba":
        return None
    try:
        return version("jieba")
    except PackageNotFoundError:  # no jieba: no cache, characters only
        return None


def _word_key(how: str, version: str, premises: list[str], choices: list[str]) -> str:
    h = hashlib.sha256(f"{_WORD_RULE}\0{how}\0{version}\0".encode())
    for group in (premises, choices):
        h.update(b"\1")
        for t in group:
            h.update(t.encode("utf-8", "surrogatepass") + b"\0")
    return h.hexdigest()


def _word_cache_path() -> Any:
    return cache_path(WORD_COUNT_CACHE)


def _read_word_cache() -> dict[str, Any]:
    data = read_json(_word_cache_path())
    return data if isinstance(data, dict) else {}


def _write_word_cache(entries: dict[str, Any]) -> None:
    write_json(_word_cache_path(), dict(list(entries.items())[-WORD_COUNT_CACHE_ENTRIES:]))


def _mean_of(total: int, n: int) -> float | int:
    """The mean of ``n`` ints that sum to ``total``: an int where it is one (as
    ``statistics.mean`` returns, so the card prints ``5`` rather than ``5.0``), else the float."""
    if n == 0:
        raise ValueError("mean requires at least one data point")
    return total // n if total % n == 0 else total / n


def _word_means(how: str | None, count: Callable[[str], int] | None, premises: list[str],
                choices: list[str]) -> tuple[Any, Any]:
    if not count:
        return None, None
    return (round(_mean_of(sum(map(count, premises)), len(premises)), 1),
            round(_mean_of(sum(map(count, choices)), len(choices)), 1))


def text_lengths(release: Release, *, cache: bool = True) -> dict[str, dict[str, Any]]:
    """Per XCOPA language and ``en`` (validation + test): mean premise and choice length in
    characters, and in words where :func:`word_counter` has a segmenter for the language.

    Word counts by a segmenter that needs start-up (jieba loads its dictionary: ~0.7 s of a
    build) are kept in ``$BENCHSMITH_HOME/cache`` (:data:`WORD_COUNT_CACHE`), keyed by the
    sha256 of the texts, the segmenter's installed version and the counting rule, so a
    rebuild of the same texts never starts jieba; ``cache=False`` always segments. A cache
    that cannot be read or written is ignored."""
    out: dict[str, dict[str, Any]] = {}
    entries: dict[str, Any] | None = None
    for config in [*languages_in(release), "en"]:
        splits = [s for s in SPLITS if _has(release, config, s)]
        if not splits:
            continue
        premises, choices = [], []
        for s in splits:
            premise, choice1, choice2 = _columns(release, config, s, ("premise", "choice1", "choice2"))
            premises += premise
            choices += [c for pair in zip(choice1, choice2) for c in pair]
        how = WORD_SEGMENTERS.get(config, "whitespace")
        version = _segmenter_version(how) if cache else None
        if version is not None:
            key = _word_key(how, version, premises, choices)
            if entries is None:
                entries = _read_word_cache()
            hit = entries.get(key)
            if isinstance(hit, list) and len(hit) == 2:
                words = (hit[0], hit[1])
            else:
                how, count = word_counter(config)
                words = _word_means(how, count, premises, choices)
                if count:
                    entries.pop(key, None)
                    entries[key] = list(words)
                    _write_word_cache(entries)
        else:
            how, count = word_counter(config)
            words = _word_means(how, count, premises, choices)
        out[config] = {
            "premise_chars": round(_mean_of(sum(map(len, premises)), len(premises)), 1),
            "choice_chars": round(_mean_of(sum(map(len, choices)), len(choices)), 1),
            "premise_words": words[0],
            "choice_words": words[1],
            "words_by": how,
        }
    return out


def card_sections(release: Release) -> dict[str, str]:
    """The card's XCOPA sections: fields, translator agreement, alignment with COPA, balance and lengths."""
    fields = [name for c in release.configs() for name in release.config_info(c).features_dict]
    out = {"Field meanings": "\n".join(
        ["| field | meaning |", "|---|---|"]
        + [f"| `{name}` | {doc} |" for name, doc in FIELD_DOCS.items() if name in fields]
        + ["", HUB_COMPARISON]
    )}
    langs = languages_in(release)
    if langs:
        lines = [
            ("`changed` marks the items where the language's translator labelled the other alternative and the "
            "majority of the 11 translators overrode it. From it the release reproduces the paper's Table 3 "
            "(% of the translator's labels that agree with the majority label), Section 2's averages and "
            "footnote 6 (checked in Validation, figures `<lang>/<split>/majority_agreement`, `translators/...`)."),
            "",
            "| language | " + " | ".join(langs) + " |",
            "|---|" + "---:|" * len(langs),
        ]
        for split in SPLITS:
            cells = []
            for lang in langs:
                if not _has(release, lang, split):
                    cells.append("-")
                    continue
                changed, n = changed_counts(release, lang, split)
                cells.append(f"{100 * (1 - changed / n):.1f} ({changed})")
            lines.append(f"| {split}: % agreeing (changed) | " + " | ".join(cells) + " |")
        kappas = []
        for split in SPLITS:
            present = [lang for lang in langs if _has(release, lang, split)]
            if len(present) >= 2:
                kappas.append(f"{split} {fleiss(translator_matrix(release, split, present)):.3f}")
        if kappas:
            lines += ["", (f"Fleiss' kappa over the {len(langs)} translators' labels (recovered from `label` and "
                          f"`changed`): {', '.join(kappas)}.")]
        out["Translator agreement"] = "\n".join(lines)
    cons = consistency(release)
    if not cons:
        return out
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
    out["Alignment with English COPA"] = "\n".join(lines)
    ratios = length_ratios(release)
    lengths = text_lengths(release)
    bal = balance(release)
    lines2 = [
        ("Lengths in characters (Unicode code points) compare across scripts; words are counted with a "
        "segmenter fit for the script (whitespace; jieba for Chinese) and not at all for Thai, which is "
        "written without spaces and has no segmenter here."),
        "",
        ("| language | premise chars (/ English) | choice chars (/ English) | premise words (by) | test cause/effect "
        "| test choice1/choice2 |"),
        "|---|---:|---:|---:|---:|---:|",
    ]
    for lang, r in ratios.items():
        t = bal.get(lang, {}).get("test", {})
        q, lab = t.get("question", {}), t.get("label", {})
        ln = lengths.get(lang, {})
        words = f"{ln['premise_words']} ({ln['words_by']})" if ln.get("premise_words") is not None else "-"
        lines2.append(
            f"| {lang} | {r['premise_chars']} ({r['premise_ratio']}) | {r['choice_chars']} ({r['choice_ratio']}) "
            f"| {words} | {q.get('cause', 0)}/{q.get('effect', 0)} | {lab.get('choice1', 0)}/{lab.get('choice2', 0)} |"
        )
    en = lengths.get("en")
    if en:
        lines2.append(f"| en | {en['premise_chars']} (1.0) | {en['choice_chars']} (1.0) | {en['premise_words']} "
                      f"(whitespace) | | |")
    out["Balance and lengths"] = "\n".join(lines2)
    return out
