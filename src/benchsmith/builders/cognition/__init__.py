"""CoGnition (Li et al., ACL 2021): English-Chinese compositional generalization.

Configs:

* ``parallel``: the released parallel corpus, splits train / validation / test
  (``data/train.*``, ``data/valid.*``, ``data/test.*``). Columns ``en``,
  ``zh`` (the Chinese line with the released word-segmentation spaces removed,
  see :func:`benchsmith.nlp.segment.unsegment`), ``zh_tokens`` (jieba accurate
  mode; it reproduces the released segmentation of valid.zh on 9,999 of 10,000
  lines) and ``id`` (``<split>-<line:06d>``). The 196,246-pair train split is
  declared but not shipped on every machine: without it the build fails naming
  the files, and ``--skip-missing`` builds the other splits and records why.
* ``cg_test``: the compositional generalization test set (``data/cg-test/``),
  one split ``test`` of 10,800 lines = 2,160 novel compounds x 5 contexts.
  ``category`` (NP/VP/PP) comes from the per-category folder the line is in
  (the combined file must equal NP + VP + PP, checked); ``pattern`` and
  ``atoms`` come from parsing the compound with the paper's atom inventory
  (:mod:`benchsmith.builders.cognition.atoms`); ``context`` is the position
  (0-4) of the line in its compound's block of 5; ``id`` is
  ``cg-test-<line:05d>`` (line of ``cg-test.*``).
* ``lexicon``: the evaluation lexicon ``eval/lexicon`` as released (one row
  per atom key; the duplicated ``building`` key merged), so that
  ``benchsmith evaluate cognition`` needs nothing but a release.

Beside this module (one home per dataset): ``checksums.tsv``; ``published.yaml`` (the
paper's figures, checked by the fidelity check; ``measures.py`` holds their measures); no
``errata.tsv`` (1.0.0 is upstream as released; the known issues are measured by
``checks.CGTestProfile`` and listed in the card); ``metric.py`` (the CTER scorer);
``checks.py``; ``evaluate.py`` + ``cli.py`` (``benchsmith evaluate cognition``, ``benchsmith
stage cognition``); the construction stages (``atoms``, ``vocab``, ``chunks``,
``templates``, ``stats``); ``README.md``.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import ClassVar

from datasets import ClassLabel, Features, List, Value

from benchsmith.builder import Builder, Config, Policy, register
from benchsmith.errors import ParseError
from benchsmith.expectation import Measure
from benchsmith.loaders.cognition_files import read_cg_test, read_lexicon
from benchsmith.loaders.moses import iter_parallel
from benchsmith.nlp.segment import segment, unsegment
from benchsmith.source import Source, Sources

from .atoms import CATEGORIES, PATTERNS, parse_compound, pattern_roles
from .checks import CGTestProfile, CGTestStructure, profile
from .measures import MEASURES

#: the card's scoring section: which BLEU and which CTER rule the paper's figures are
EVALUATION_NOTE = (
    "- **BLEU**: `--bleu char` (default) is character-level sacreBLEU (`tokenize=zh`), the paper's: Section 5.1 "
    "\"We report character-level BLEU scores using SacreBLEU\", and upstream's inference script removes every space "
    "of the hypothesis before `sacrebleu -l en-zh`. Table 6's 69.58 (random test) and 48.66 (CG-test) are "
    "character-level. `--bleu jieba` scores jieba words (the training pipeline's segmentation); it is not "
    "comparable with the paper.\n"
    "- **CTER**: `--rule paper` (default) is upstream's `eval/eval.py`, reimplemented and checked line by line "
    "against the script on all 10,800 CG-test lines; automatic CTER figures published with that tool mean this rule. "
    "The paper's own Table 6 CTER (27.31% instance, 61.62% aggregate) is human judgement, with which eval.py "
    "agrees at 94.80% precision / 87.05% recall (Section 4.4). `--rule cter-v2` is an improved rule (fewer false "
    "errors on the human references at equal recall), reported with its own signature and not comparable with "
    "published figures."
)

SPLIT_FILES = {"train": "data/train", "validation": "data/valid", "test": "data/test"}
CG_DIR = "data/cg-test"
LEXICON = "eval/lexicon"


def _cg_files() -> tuple[str, ...]:
    files = [f"{CG_DIR}/cg-test.{ext}" for ext in ("en", "zh", "compound")]
    files += [f"{CG_DIR}/{c}/{c}.{ext}" for c in CATEGORIES for ext in ("en", "zh", "compound")]
    return tuple(files)


COGNITION_SOURCE = Source(
    "cognition",
    url="",  # upstream (github.com/yafuly/CoGnition) ships the data inside a git repo; use --sources
    license="unspecified by upstream (research use)",
    files=tuple(f"{p}.{ext}" for p in SPLIT_FILES.values() for ext in ("en", "zh")) + _cg_files() + (LEXICON,),
    description="CoGnition release: parallel en-zh corpus, CG-test (NP/VP/PP), evaluation lexicon",
)


@register
class CognitionBuilder(Builder):
    name = "cognition"
    pretty_name = "CoGnition"
    description = (
        "English-Chinese parallel corpus of short story sentences (216k pairs) with a compositional "
        "generalization test set: 2,160 novel noun / verb / prepositional compounds in 5 contexts each."
    )
    release_notes: ClassVar[dict[str, str]] = {
        "1.0.0": "The upstream release as published (parallel corpus, CG-test, lexicon).",
    }
    citation = """@inproceedings{li-etal-2021-compositional,
  title = {On Compositional Generalization of Neural Machine Translation},
  author = {Li, Yafu and Yin, Yongjing and Chen, Yulong and Zhang, Yue},
  booktitle = {Proceedings of ACL-IJCNLP 2021},
  pages = {4767--4780},
  year = {2021}
}"""
    license = "unknown"
    homepage = "https://github.com/yafuly/CoGnition"
    task_categories = ("translation",)
    multilinguality = ("translation",)
    source_datasets = ("original",)
    sources = (COGNITION_SOURCE,)

    def configs(self) -> list[Config]:
        parallel = Features(
            {
                "id": Value("string"),
                "en": Value("string"),
                "zh": Value("string"),
                "zh_tokens": List(Value("string")),
            }
        )
        cg = Features(
            {
                "id": Value("string"),
                "en": Value("string"),
                "zh": Value("string"),
                "compound": Value("string"),
                "category": ClassLabel(names=list(CATEGORIES)),
                "pattern": ClassLabel(names=list(PATTERNS)),
                "atoms": List({"role": Value("string"), "text": Value("string")}),
                "context": Value("int8"),
            }
        )
        lexicon = Features(
            {
                "id": Value("string"),
                "translations": List(Value("string")),
                "optional": Value("bool"),
            }
        )
        direction = {"source": "en", "target": "zh"}
        rocstories = ("*rocstories*", "*cloze_test*")  # CoGnition is built from ROCStories (stage 1)
        return [
            Config("parallel", "The en-zh parallel corpus.", parallel, ("train", "validation", "test"),
                   # contamination: the English source side is what a model reads. Its sentences come from
                   # ROCStories (stage 1, the vocabulary filter): overlap with it is by construction; short
                   # everyday sentences also occur in COPA and ComVE (0.1%, README): 1% may, no more
                   ("en", "zh"), policy=Policy(task="translation", contamination_fields=("en",),
                                               contamination_by_design=rocstories,
                                               contamination_max_fraction=(("validation", 0.01), ("test", 0.01))),
                   metadata=direction),
            Config("cg_test", "The compositional generalization test set (CG-test).", cg, ("test",),
                   ("en", "zh"),
                   # category and pattern are attributes of a line, not labels to predict
                   policy=Policy(task="translation", label=None, contamination_fields=("en",),
                                 contamination_by_design=rocstories), metadata=direction),
            Config("lexicon", "The atom lexicon of the automatic compound-translation judgement; "
                   "id is the atom (mod0/mod1/mod2 for the modifier phrases).", lexicon, ("test",), ("en", "zh"),
                   # atoms that may stay untranslated (`the`, `about` ...) have no rendering at all
                   # one- and two-word atoms: below any n-gram that means something; reported only
                   policy=Policy(allow_empty=("translations",), contamination_max_fraction=())),
        ]

    def examples(self, config: Config, split: str, sources: Sources) -> Iterator[dict]:
        if config.name == "parallel":
            yield from self._parallel(split, sources)
        elif config.name == "cg_test":
            yield from self._cg_test(sources)
        else:
            for key, entry in read_lexicon(sources.path("cognition", LEXICON)).items():
                yield {"id": key, "translations": list(entry.translations), "optional": entry.optional}

    def _parallel(self, split: str, sources: Sources) -> Iterator[dict]:
        stem = SPLIT_FILES[split]
        en = sources.path("cognition", f"{stem}.en")
        zh = sources.path("cognition", f"{stem}.zh")
        for pair in iter_parallel(en, zh):  # streamed: train has 196k pairs
            if not pair.source.strip() or not pair.target.strip():
                raise ParseError("empty segment in a parallel pair", path=en if not pair.source.strip() else zh,
                                 line=pair.line, hint="Every line needs a sentence on both sides")
            text = unsegment(pair.target)
            yield {"id": f"{split}-{pair.line:06d}", "en": pair.source.strip(), "zh": text,
                   "zh_tokens": segment(text)}

    def _cg_test(self, sources: Sources) -> Iterator[dict]:
        p = lambda rel: sources.path("cognition", f"{CG_DIR}/{rel}")
        combined = read_cg_test(p("cg-test.en"), p("cg-test.zh"), p("cg-test.compound"))
        categories: list[str] = []
        for cat in CATEGORIES:
            part = read_cg_test(p(f"{cat}/{cat}.en"), p(f"{cat}/{cat}.zh"), p(f"{cat}/{cat}.compound"))
            offset = len(categories)
            for row in part:
                i = offset + row.line - 1
                if i >= len(combined) or (combined[i].en, combined[i].zh, combined[i].compound) != (
                    row.en, row.zh, row.compound
                ):
                    raise ParseError(
                        f"cg-test.* line {i + 1} is not line {row.line} of {cat}/{cat}.*; the combined "
                        "files must be NP, VP and PP concatenated",
                        path=p("cg-test.compound"), line=i + 1,
                        hint="Use the files of one upstream release unmodified",
                    )
                categories.append(cat)
        if len(categories) != len(combined):
            raise ParseError(f"cg-test.* has {len(combined)} lines but NP+VP+PP have {len(categories)}",
                             path=p("cg-test.compound"), line=len(categories) + 1,
                             hint="Use the files of one upstream release unmodified")
        for row, cat in zip(combined, categories):
            comp = parse_compound(row.compound, cat, path=p("cg-test.compound"), line=row.line)
            yield {
                "id": f"cg-test-{row.line:05d}",
                "en": row.en,
                "zh": row.zh,
                "compound": row.compound,
                "category": cat,
                "pattern": comp.pattern,
                "atoms": [a.to_dict() for a in comp.atoms],
                "context": row.context,
            }

    def measures(self) -> dict[str, Measure]:
        """The measures of ``published.yaml`` (:mod:`.measures`)."""
        return dict(MEASURES)

    def checks(self) -> list:
        return [CGTestStructure(), CGTestProfile()]

    def card_sections(self, release) -> dict[str, str]:
        if "cg_test" not in release.configs():
            return {}

        p = profile(release)
        rows = ["| pattern | roles | lines |", "|---|---|---|"]
        for pat, n in p.lines_per_pattern.items():
            rows.append(f"| {pat} | {'+'.join(pattern_roles(pat))} | {n} |")
        cat_line = ", ".join(f"{c}: {n}" for c, n in p.lines_per_category.items())
        dups, longer = p.identical_contexts, p.longer_compound_lines
        issues = (
            f"- Identical contexts of one compound (same sentence, reference and compound): {len(dups)} "
            f"({'; '.join(dups) or 'none'}).\n"
            f"- Lines whose sentence continues the compound with a modifier phrase the compound lacks "
            f"(the sentence may hold a longer compound): {len(longer)} ({', '.join(longer) or 'none'}).\n"
            "- The lexicon lists `building` twice (建筑/楼 and 建筑/楼/房子); the `lexicon` config merges them."
        )
        return {"CG-test compounds": f"Lines per category: {cat_line}.\n\n" + "\n".join(rows),
                "Known upstream issues (kept as released)": issues,
                "Scoring (benchsmith evaluate cognition)": EVALUATION_NOTE}

