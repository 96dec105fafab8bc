"""XCOPA (Ponti et al., 2020) with the English COPA (Roemmele et al., 2011) it translates.

Configs:

* ``et ht id it qu sw ta th tr vi zh``: the human translations, ``validation`` (100)
  and ``test`` (500), with upstream's fields (``question`` the string ``cause``/``effect``
  as upstream and the Hub have it, ``label`` a ClassLabel; see ``fields``);
* ``translation-<lang>``: upstream's Google back-translations into English
  (``data-gmt``; none for Quechua), the "translate-test" inputs of the paper;
* ``en``: English COPA split as the XCOPA paper trains on it: ``train`` = COPA dev
  items 1-400, ``validation`` = COPA dev 401-500 (idx ``i`` = item ``401+i``, the
  item XCOPA validation idx ``i`` translates), ``test`` = COPA test (idx ``i`` =
  item ``501+i``). Choices keep COPA's order; ``copa_id`` is COPA's item id.

Every XCOPA item is joined to its COPA item while building (see ``alignment``):
an idx with no COPA item, a label that disagrees with COPA (XCOPA keeps COPA's
choice order and labels on every item; there is no exception list), or a question
that disagrees with COPA without its row in ``errata.tsv`` (same config, split and
idx, ``old`` = upstream's value) stops the build with a ParseError naming the jsonl
file and line; so does a row for an item that already agrees, or a row whose ``new``
is not COPA's value (naming the errata.tsv line). The builder yields upstream's values; the core applies ``errata.tsv``
(``xcopa-<lang>-question``, version 1.1.0, rows for the language config and its
translation), so 1.0.0 reproduces upstream and 1.1.0 has COPA's ``asks-for``.

``changed`` is upstream's marker of the items where that language's translator chose
the other alternative and the majority label overrode it (not "adapted to the
culture"): it reproduces the paper's Table 3, footnote 6 and Fleiss' kappas (see
``agreement``).

Data beside this module: ``checksums.tsv``, ``errata.tsv`` (derived, see
``alignment``), ``published.yaml`` (the paper's figures; ``measures()`` adds the
measures of ``measures``), ``languages.tsv`` (the languages of Table 2's samples).
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Iterator, Mapping, Sequence
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from benchsmith.builder import Builder, Config, Policy, register
from benchsmith.erratum import ErratumRow
from benchsmith.errors import ParseError
from benchsmith.expectation import Measure
from benchsmith.loaders.copa_xml import CopaItem, read_copa_xml
from benchsmith.loaders.xcopa_jsonl import (
    GMT_LANGUAGES,
    LANGUAGES,
    XcopaRecord,
    read_xcopa_jsonl,
    xcopa_relpath,
)
from benchsmith.source import Source, Sources

from .alignment import COPA_DEV, COPA_SPLITS, COPA_TEST, EN_TRAIN_LAST_ID, copa_item_for
from .audit import card_sections
from .checks import XcopaAgreement, XcopaBalance, XcopaConsistency, XcopaDiversity, XcopaPartialInput
from .fields import EN_FEATURES, FEATURES
from .lm_eval import CONNECTORS
from .measures import MEASURES

if TYPE_CHECKING:
    from benchsmith.release import Release

LANGUAGE_NAMES = {
    "et": "Estonian", "ht": "Haitian Creole", "id": "Indonesian", "it": "Italian", "qu": "Quechua",
    "sw": "Swahili", "ta": "Tamil", "th": "Thai", "tr": "Turkish", "vi": "Vietnamese", "zh": "Mandarin Chinese",
}
POLICY = Policy(
    task="multiple_choice", id_field="idx", label="label", choices=("choice1", "choice2"),
    context=("premise", "question"), text_fields=("premise", "choice1", "choice2"),
    # contamination: the premise and both choices (``question`` is cause/effect, not text)
    contamination_fields=("premise", "choice1", "choice2"),
)
#: A language config translates ``en`` item for item (same split and idx): a premise or choice
#: left in English fails the gate (the generic ``untranslated`` check).
HUMAN_POLICY = dataclasses.replace(POLICY, translation_of="en", translated_fields=("premise", "choice1", "choice2"))
#: English COPA and XCOPA's back-translations of it overlap COPA by construction (README,
#: "Contamination"): declared, so matches against COPA's files or a COPA release never gate.
#: Their short everyday sentences ("He took a deep breath.") also occur whole in ComVE and
#: CoGnition (at most 4% of a split, measured): up to 5% of validation/test may, no more.
COPA_SOURCES = ("copa-*.xml", "copa", "*/copa/*", "super_glue*")
ENGLISH_POLICY = dataclasses.replace(POLICY, contamination_by_design=COPA_SOURCES,
                                     contamination_max_fraction=(("validation", 0.05), ("test", 0.05)))
_REDERIVE = "benchsmith stage xcopa tables --sources RAW_DIR --write"

XCOPA_SOURCE = Source(
    "xcopa",
    url="https://github.com/cambridgeltl/xcopa/archive/refs/heads/master.zip",
    archive_root="xcopa-master",
    license="CC-BY-4.0",
    files=tuple(
        [xcopa_relpath(lang, s) for lang in LANGUAGES for s in COPA_SPLITS]
        + [xcopa_relpath(lang, s, translated=True) for lang in GMT_LANGUAGES for s in COPA_SPLITS]
    ),
    optional=("LICENSE.md",),
    description="XCOPA jsonl: data/<lang>/{val,test}.<lang>.jsonl and data-gmt/ (Google translations into English)",
)
COPA_SOURCE = Source(
    "copa",
    url="https://people.ict.usc.edu/~gordon/downloads/COPA-resources.tgz",
    archive_root="COPA-resources",
    license="BSD-2-Clause",
    files=(COPA_DEV, COPA_TEST),
    description="English COPA in the COPA-resources XML layout (datasets/copa-dev.xml, datasets/copa-test.xml)",
)


@register
class Xcopa(Builder):
    name = "xcopa"
    #: lm-eval's xcopa_<lang> connector words, for the card's lm-eval tasks (builders/xcopa/lm_eval.py)
    lm_eval_connectors = CONNECTORS
    pretty_name = "XCOPA + English COPA"
    description = (
        "Cross-lingual Choice of Plausible Alternatives: COPA's causal commonsense items translated into "
        "11 typologically diverse languages, with the English COPA split the XCOPA paper trains on and "
        "upstream's machine translations back into English."
    )
    #: What each version contains (its history is in CHANGELOG.md); each version's content is the one
    #: registered in fingerprints.tsv; any change to it needs a new version.
    release_notes: ClassVar[dict[str, str]] = {
        "1.0.0": "Upstream XCOPA (and English COPA) values as released, every item verified against COPA's "
        "label and choice order: 11 languages (validation 100, test 500), upstream's Google translations into "
        "English (`translation-<lang>`, none for Quechua), and the `en` config (COPA dev 1-400 / 401-500 / "
        "test). `question` is the string \"cause\"/\"effect\" as in upstream's jsonl and the Hub's xcopa and "
        "super_glue/copa; `label` a ClassLabel; `changed` upstream's marker of items whose majority label "
        "overrode the translator's choice. Builds made under this number before 2026-11-25 may differ (see "
        "CHANGELOG.md); the fingerprints registered on 2026-11-25 are the reference.",
        "1.1.0": "1.0.0's content with the `question` (cause/effect) of the items where upstream disagrees with "
        "English COPA set to COPA's (Thai, Turkish, Swahili, Indonesian and Italian, in the language config and "
        "its translation; see Errata). `en/validation` has COPA's own choice order (labels: 55 choice1, 45 "
        "choice2). Builds made under this number before 2026-11-25 may differ (see CHANGELOG.md); the "
        "fingerprints registered on 2026-11-25 are the reference.",
        "1.2.0": "1.1.0's content with the five options upstream left in English translated (errata "
        "`xcopa-tr-untranslated`, `xcopa-id-untranslated` in errata.tsv): Turkish validation item 26 `choice1`, "
        "Indonesian test items 330 `choice1`, 416, 440 and 442 `choice2`. The translations are ours, not "
        "upstream's translators'; the `translation-<lang>` configs keep upstream's back-translations.",
    }
    citation = """@inproceedings{ponti2020xcopa,
  title={{XCOPA}: A Multilingual Dataset for Causal Commonsense Reasoning},
  author={Ponti, Edoardo Maria and Glava{\\v{s}}, Goran and Majewska, Olga and Liu, Qianchu and Vuli{\\'c}, Ivan and Korhonen, Anna},
  booktitle={Proceedings of the 2020 Conference on Empirical Methods in Natural Language Processing (EMNLP)},
  year={2020},
  url={https://aclanthology.org/2020.emnlp-main.185}
}
@inproceedings{roemmele2011choice,
  title={Choice of plausible alternatives: An evaluation of commonsense causal reasoning},
  author={Roemmele, Melissa and Bejan, Cosmin Adrian and Gordon, Andrew S},
  booktitle={2011 AAAI Spring Symposium Series},
  year={2011}
}"""
    license = "CC-BY-4.0"
    homepage = "https://github.com/cambridgeltl/xcopa"
    task_categories = ("multiple-choice",)
    # Hub discovery metadata, as the Hub's xcopa card has it as far as we know it (task_ids,
    # multilinguality, source_datasets, paperswithcode_id). task_categories stays multiple-choice,
    # the parent of multiple-choice-qa in the Hub's task taxonomy (that card lists question-answering).
    task_ids = ("multiple-choice-qa",)
    multilinguality = ("multilingual",)
    source_datasets = ("extended|copa",)
    paperswithcode_id = "xcopa"
    sources = (XCOPA_SOURCE, COPA_SOURCE)
    #: where the errata tables live (tests point it at the fixture's tables).
    tables_dir: ClassVar[Path | None] = None

    # ------------------------------------------------------------------ declared
    def configs(self) -> Sequence[Config]:
        out = []
        for lang in LANGUAGES:
            out.append(Config(
                lang,
                f"{LANGUAGE_NAMES[lang]} XCOPA (human translation of COPA).",
                FEATURES, splits=("validation", "test"), languages=(lang,),
                policy=HUMAN_POLICY, metadata={"kind": "human", "source_language": lang},
            ))
        for lang in GMT_LANGUAGES:
            out.append(Config(
                f"translation-{lang}",
                f"{LANGUAGE_NAMES[lang]} XCOPA machine-translated back into English by upstream (data-gmt).",
                FEATURES, splits=("validation", "test"), languages=("en",),
                policy=ENGLISH_POLICY, metadata={"kind": "translation", "source_language": lang},
            ))
        out.append(Config(
            "en",
            "English COPA as the XCOPA paper uses it: train = dev 1-400, validation = dev 401-500, test = test.",
            EN_FEATURES, splits=("train", "validation", "test"), languages=("en",),
            policy=ENGLISH_POLICY, metadata={"kind": "english", "source_language": "en"},
        ))
        return out

    def measures(self) -> Mapping[str, Measure]:
        """The measures of published.yaml's figures (``measures``): Table 2's indices, the
        translators' agreement (Table 3, Section 2, footnote 6), Table 1's items, model baselines."""
        return MEASURES

    @classmethod
    def errata_path(cls) -> Path:
        """``errata.tsv`` (hand-written) beside the builder, or in ``tables_dir`` (the fixture's own)."""
        return cls.tables_dir / "errata.tsv" if cls.tables_dir is not None else super().errata_path()

    @classmethod
    def generated_errata_path(cls) -> Path:
        """``errata.generated.tsv`` beside the builder, or in ``tables_dir`` (the fixture's own)."""
        if cls.tables_dir is not None:
            return cls.tables_dir / "errata.generated.tsv"
        return super().generated_errata_path()

    def checks(self) -> Sequence[Any]:
        annotations = os.environ.get("BENCHSMITH_XCOPA_ANNOTATIONS")
        return [
            XcopaConsistency(),
            XcopaBalance(),
            XcopaPartialInput(),
            XcopaDiversity(),
            XcopaAgreement(Path(annotations) if annotations else None),
        ]

    def card_sections(self, release: Release) -> dict[str, str]:
        return card_sections(release)

    # ------------------------------------------------------------------ errata rows
    @cached_property
    def question_rows(self) -> dict[tuple[str, str, str], ErratumRow]:
        """``{(config, split, idx): row}`` of every ``question`` row of ``errata.tsv`` (applied or not)."""
        rows = (r for e in self.errata() for r in e.rows if r.field == "question")
        return {(r.config, r.split, r.item): r for r in rows}

    @cached_property
    def _question_rows_by_split(self) -> dict[tuple[str, str], dict[int, ErratumRow]]:
        """:attr:`question_rows` per (config, split), keyed by canonical int idx (a row keyed by a
        non-canonical idx matches none): grouped once, not filtered from every row per split."""
        out: dict[tuple[str, str], dict[int, ErratumRow]] = {}
        for (c, sp, k), r in self.question_rows.items():
            if k.isdigit() and str(int(k)) == k:
                out.setdefault((c, sp), {})[int(k)] = r
        return out

    # ------------------------------------------------------------------ examples
    def examples(self, config: Config, split: str, sources: Sources) -> Iterator[dict]:
        kind = config.metadata["kind"]
        if kind == "english":
            yield from self._english(split, sources)
            return
        lang = config.metadata["source_language"]
        path = sources.path("xcopa", xcopa_relpath(lang, split, translated=kind == "translation"))
        copa = self._copa(sources, COPA_SPLITS[split][0])
        for record in read_xcopa_jsonl(path):
            item = copa_item_for(record, split, copa, path)
            if record.label != item.label:
                raise ParseError(
                    f"label {record.label} disagrees with COPA item {item.id} (most-plausible-alternative="
                    f"{item.label + 1}); XCOPA keeps COPA's choice order and answer",
                    path=path, line=record.line,
                    hint=f"Check that {COPA_SPLITS[split][0]} is COPA's (sha256 in `benchsmith sources xcopa`); "
                    "if the XCOPA label is wrong, declare an erratum",
                )
            self._check_question(config.name, split, record, item, path)
            yield record.to_example()  # upstream's values: the core applies errata.tsv

    def _check_question(self, config: str, split: str, record: XcopaRecord, item: CopaItem, path: Path) -> None:
        """A question that disagrees with COPA must have its row in errata.tsv, fixing it to COPA's
        value; a question that agrees must have none (a stale row would break a correct item)."""
        key = f"{config}/{split}/{record.idx}"
        row = self.question_rows.get((config, split, str(record.idx)))
        if record.question == item.asks_for:
            if row is not None:
                raise ParseError(
                    f"erratum {row.id!r} changes the question of {key}, which already agrees with COPA item "
                    f"{item.id} (asks-for={item.asks_for})",
                    path=row.path, line=row.line, hint=f"Re-derive errata.tsv ({_REDERIVE})",
                )
            return
        if row is None or row.old != record.question:
            found = "" if row is None else f" (its row, line {row.line}, has old={row.old!r})"
            raise ParseError(
                f"question {record.question!r} disagrees with COPA item {item.id} (asks-for={item.asks_for}) "
                f"and errata.tsv has no matching row for {key}{found}",
                path=path, line=record.line,
                hint=f"Re-derive errata.tsv ({_REDERIVE}) and review the new rows",
            )
        if row.new != item.asks_for:
            raise ParseError(
                f"erratum {row.id!r} sets {key} question to {row.new!r}, but COPA item {item.id} asks for "
                f"{item.asks_for!r}",
                path=row.path, line=row.line, hint=f"Re-derive errata.tsv ({_REDERIVE})",
            )

    def _english(self, split: str, sources: Sources) -> Iterator[dict]:
        rel = COPA_TEST if split == "test" else COPA_DEV
        path = sources.path("copa", rel)
        for item in self._copa(sources, rel).values():
            if split == "train":
                if item.id > EN_TRAIN_LAST_ID:
                    continue
                idx = item.id - 1
            elif split == "validation":
                if item.id <= EN_TRAIN_LAST_ID:
                    continue
                idx = item.id - COPA_SPLITS["validation"][1]
                if idx >= 100:
                    raise ParseError(f"COPA dev item id {item.id} is outside 1-500", path=path, line=item.line,
                                     hint="Use the COPA-resources copa-dev.xml (ids 1-500)")
            else:
                idx = item.id - COPA_SPLITS["test"][1]
                if idx < 0:
                    raise ParseError(f"COPA test item id {item.id} is outside 501-1000", path=path, line=item.line,
                                     hint="Use the COPA-resources copa-test.xml (ids 501-1000)")
            yield {
                "premise": item.premise, "choice1": item.alternative1, "choice2": item.alternative2,
                "question": item.asks_for, "label": item.label, "idx": idx, "changed": False, "copa_id": item.id,
            }

    def _copa(self, sources: Sources, rel: str) -> dict[int, CopaItem]:
        cache = self.__dict__.setdefault("_copa_cache", {})
        path = sources.path("copa", rel)
        if path not in cache:
            cache[path] = {it.id: it for it in read_copa_xml(path)}
        return cache[path]

