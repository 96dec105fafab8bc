"""CoGnition's metrics: BLEU (:class:`CognitionBLEU`) on both test sets and compound translation
error rate (:class:`CTER`) on the CG-test, declared in :data:`METRICS` for ``benchsmith evaluate
cognition``. Predictions: a UTF-8 text file with one translation per test sentence, in the order of
the released files (``cg-test.en`` for ``--split cg_test``, ``test.en`` for ``--split test``),
read by :func:`read_predictions`; Chinese may be word-segmented with spaces or not, and
subword-nmt joiners (``@@ ``) are undone (:func:`normalise`).

A compound translation is judged from the hypothesis alone, with the released
atom lexicon (``eval/lexicon``: each atom's accepted Chinese renderings), as the
paper's automatic evaluation does (Li et al., ACL 2021, Section 4.4). Two rules:

``rule="paper"`` (the default: what published CTER figures mean) is upstream's
``eval/eval.py`` (the version in ``../shared/raw/cognition/eval/``), reimplemented
line by line by :class:`PaperJudge` and checked against the script itself on every
line of the CG-test (``tests/test_cognition_eval_conformance.py``):

1. **Regularise** the compound: ``he liked`` -> ``mod0``, ``at the store`` -> ``mod1``,
   ``on the floor`` -> ``mod2`` (plain ``str.replace`` in that order), then split on spaces.
   Each word's type is looked up in eval.py's atom lists P, V, DET, ADJ, N, MOD (the
   last list that contains it wins) and its translation in the lexicon.
2. **Normalise** the hypothesis exactly as eval.py: trailing whitespace stripped,
   ``"@@ "`` removed, then *every* ASCII space removed (also between Latin words;
   a final ``@@`` without a space stays).
3. **Presence**: an entry that is exactly ``/`` (``the``, ``about``, ``for``, ``on``,
   ``to``, ``with``) is translated and has no position. Otherwise each ``/``-separated
   alternative is searched with ``re.finditer`` (a regular expression, non-overlapping
   matches, start offsets); an *empty* alternative (``liked`` is ``喜欢/``) matches at
   every offset. The atom is translated when any alternative matches; its position is
   ``[first start, last start]`` over all alternatives. Any untranslated atom makes
   the line wrong and no order is tested (flag ``P1-P0-.../P0``).
4. **Order** (only when all atoms are present): DET before N, ADJ before N, and, when
   the verb has no position (NP and PP compounds, or no verb), MOD before N. "A before
   N" means ``first start of A < last start of N``, and holds when either has no
   position. The MOD test therefore applies to ``on the floor`` in PP compounds
   (``在地板上的椅子上`` passes, ``椅子在地上`` fails) but never to VP compounds.

A line is *correct* when its flag (``<presence flags>/<order flags>``, eval.py's
printout, kept in :attr:`Verdict.flag`) has no ``P0``. Instance-level CTER is the
share of incorrect lines; aggregate-level CTER is the share of compounds with at
least one incorrect context. eval.py aggregates consecutive blocks of 5 lines; we
aggregate by compound string, which is the same on the released order (2,160
compounds, each one block of 5 consecutive lines).

``rule="cter-v2"`` is an improved rule, offered as an explicit option only (its
figures are not comparable with published CTER). Differences, each motivated by a
translation one can label by hand (README, "Evaluation"):

* **masking**: an occurrence inside a longer lexicon rendering of a *different* atom
  does not count (child 孩 inside girl 女孩, small 小 inside clown 小丑, large 大 inside
  around 大约, farm 农场 inside farmer 农场主); not applied between two verbs or two
  prepositions, whose entries share senses (met 见 / saw 见过, asked 请 / invited 邀请);
* **order** needs one noun occurrence with each pre-nominal atom (DET, ADJ, ``he liked``,
  ``at the store``) ending at most ``ORDER_WINDOW[role]`` characters before it (ADJ 4,
  MOD 10, DET 14: the smallest windows that accept 99.95% of the 10,800 human
  references); ``on the floor`` is never ordered (it may attach to the verb:
  把椅子留在地上), the verb and preposition neither (把-constructions, circumpositions);
* **normalisation** keeps spaces between Latin words and undoes a final ``@@``;
* an empty lexicon alternative means "may stay untranslated" rather than "matches
  everywhere".

:class:`CTER` implements the one scoring contract (:class:`benchsmith.validation.metric.Metric`):
its options are the rule, masking, the order windows and the lexicon's fingerprint, so
``signature()`` (``cter:1|rule:paper|mask:no|window:none|lexicon:<sha256[:12]>|benchsmith:X``)
reproduces the number; the facts of one scoring call (lines, compounds) go into that
score's result signature (``...|n:10800|compounds:2160``).
"""

from __future__ import annotations

import hashlib
import re
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from benchsmith.errors import ConfigError, PredictionError, did_you_mean
from benchsmith.nlp.segment import segment, unsegment
from benchsmith.validation import predictions as pred_files
from benchsmith.validation.metric import Metric, Option, Score
from benchsmith.validation.metrics.bleu import SacreBLEU

from .atoms import CATEGORIES, MODIFIERS, lexicon_roles
from .paper_rule import PaperJudge

if TYPE_CHECKING:
    from benchsmith.release import Release

#: the default rule: upstream's eval.py, what published CTER figures mean
RULE_VERSION = "paper"
RULES = ("paper", "cter-v2")
SPLIT_HELP = "cg_test (the default: BLEU and CTER) or test (BLEU) name CoGnition's two test sets."
#: Pre-nominal roles (and modifier lexicon keys) whose rendering must precede the noun's.
ORDERED_ROLES = ("DET", "ADJ")
ORDERED_MODIFIERS = ("mod0", "mod1")
ORDER_WINDOW: Mapping[str, int] = {"DET": 14, "ADJ": 4, "MOD": 10}
#: Roles whose lexicon entries overlap in sense: no masking between two atoms of one of these roles.
UNMASKED_WITHIN = ("V", "P")

_BPE = re.compile(r"@@( |$)")


def undo_bpe(text: str) -> str:
    """``"sand@@ wich"`` -> ``"sandwich"`` (subword-nmt joiners)."""
    return _BPE.sub("", text)


def normalise(text: str) -> str:
    """BPE joiners undone, segmentation spaces between Chinese characters removed."""
    return unsegment(undo_bpe(text))


@dataclass(frozen=True)
class Verdict:
    """The judgement of one hypothesis: correct, and the rules that failed."""

    correct: bool
    failures: tuple[str, ...] = ()
    #: ``rule="paper"`` only: eval.py's per-line flag (e.g. ``P1-P1-P1/P1-P0``)
    flag: str | None = None


@dataclass
class Lexicon:
    """Atom -> accepted renderings; ``optional`` atoms may stay untranslated."""

    entries: Mapping[str, tuple[str, ...]]
    optional: frozenset[str] = frozenset()
    #: atom key -> role (N, ADJ, DET, MOD, V, P); keys without a role are masked like nouns.
    roles: Mapping[str, str] = field(default_factory=dict)
    _blockers: dict[tuple[str, str], tuple[str, ...]] = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        # For each (atom, rendering): longer renderings of *other* atoms containing it.
        for key, renders in self.entries.items():
            role = self.roles.get(key)
            others = [
                (k2, rs) for k2, rs in self.entries.items()
                if k2 != key and not (role in UNMASKED_WITHIN and self.roles.get(k2) == role)
            ]
            for r in renders:
                longer = {o for _k2, rs in others for o in rs if r in o and o != r}
                self._blockers[(key, r)] = tuple(sorted(longer))

    @classmethod
    def from_rows(cls, rows: Iterable[Mapping], roles: Mapping[str, str] | None = None) -> Lexicon:
        """From the release's ``lexicon`` config rows (id, translations, optional)."""
        entries, optional = {}, set()
        for row in rows:
            entries[row["id"]] = tuple(row["translations"])
            if row["optional"]:
                optional.add(row["id"])
        return cls(entries, frozenset(optional), dict(roles or {}))

    @classmethod
    def from_release(cls, release: Release) -> Lexicon:
        """The ``lexicon`` config of a CoGnition release, with the inventory's roles."""
        return cls.from_rows(release.examples("lexicon", "test"), roles=lexicon_roles())

    @staticmethod
    def key(role: str, text: str) -> str:
        """The lexicon key of an atom: modifiers are filed as ``mod0..mod2``."""
        return MODIFIERS.get(text, text) if role == "MOD" else text

    def fingerprint(self) -> str:
        blob = "\n".join(f"{k}\t{'/'.join(v)}\t{int(k in self.optional)}"
                         for k, v in sorted(self.entries.items()))
        return hashlib.sha256(blob.encode("utf-8")).hexdigest()[:12]

    def occurrences(self, key: str, text: str, mask: bool) -> list[tuple[int, int]]:
        """(start, end) of every counted occurrence of ``key``'s renderings in ``text``."""
        spans: set[tuple[int, int]] = set()
        for r in self.entries.get(key, ()):
            blocked: list[tuple[int, int]] = []
            if mask:
                for b in self._blockers.get((key, r), ()):
                    start = text.find(b)
                    while start != -1:
                        blocked.append((start, start + len(b)))
                        start = text.find(b, start + 1)
            start = text.find(r)
            while start != -1:
                end = start + len(r)
                if not any(bs <= start and end <= be for bs, be in blocked):
                    spans.add((start, end))
                start = text.find(r, start + 1)
        return sorted(spans)


def _check_window(window: Mapping[str, int]) -> dict[str, int]:
    got = dict(window)
    if set(got) != set(ORDER_WINDOW):
        raise ConfigError(f"CTER window has roles {sorted(got)}; expected exactly {sorted(ORDER_WINDOW)}",
                          hint="e.g. window={'DET': 14, 'ADJ': 4, 'MOD': 10} (characters before the noun)")
    for role, n in got.items():
        if not isinstance(n, int) or isinstance(n, bool) or n < 0:
            raise ConfigError(f"CTER window[{role!r}] = {n!r}; expected a non-negative int (characters)")
    return {role: got[role] for role in ORDER_WINDOW}


class CompoundJudge:
    """Applies the rule in the module docstring to one hypothesis."""

    def __init__(self, lexicon: Lexicon, rule: str = RULE_VERSION, window: Mapping[str, int] | None = None):
        if rule not in RULES:
            raise ConfigError(f"unknown CTER rule {rule!r}", hint=did_you_mean(rule, RULES))
        if rule == "paper" and window is not None:
            raise ConfigError("CTER rule 'paper' has no order window",
                              hint="Leave window unset, or use cter-v2")
        self.lexicon = lexicon
        self.rule = rule
        self.mask = rule != "paper"
        self.window = None if rule == "paper" else _check_window(ORDER_WINDOW if window is None else window)
        self.paper = PaperJudge(lexicon.entries, lexicon.optional) if rule == "paper" else None

    def judge(self, hypothesis: str, atoms: Sequence[Mapping[str, str]]) -> Verdict:
        if self.paper is not None:
            flag, failures = self.paper.flag(hypothesis, " ".join(a["text"] for a in atoms))
            return Verdict("P0" not in flag, tuple(failures), flag)
        text = normalise(hypothesis)
        failures: list[str] = []
        found: dict[int, list[tuple[int, int]]] = {}
        for i, atom in enumerate(atoms):
            key = self.lexicon.key(atom["role"], atom["text"])
            if key not in self.lexicon.entries:
                raise ConfigError(
                    f"atom {atom['text']!r} ({atom['role']}) has no lexicon entry {key!r}",
                    hint="The lexicon must cover every atom of the CG-test (eval/lexicon)",
                )
            if key in self.lexicon.optional:
                continue
            occ = self.lexicon.occurrences(key, text, self.mask)
            if not occ:
                failures.append(f"missing:{atom['role']}:{atom['text']}")
            found[i] = occ
        if failures:
            return Verdict(False, tuple(failures))
        noun_i = next((i for i, a in enumerate(atoms) if a["role"] == "N"), None)
        if noun_i is None or noun_i not in found:
            return Verdict(True)
        ordered = [
            i for i, a in enumerate(atoms)
            if i in found and (a["role"] in ORDERED_ROLES or (
                a["role"] == "MOD" and self.lexicon.key("MOD", a["text"]) in ORDERED_MODIFIERS))
        ]
        if not ordered:
            return Verdict(True)
        best: list[int] | None = None
        for ns, _ne in found[noun_i]:
            bad = [i for i in ordered if not any(
                e <= ns and (self.window is None or ns - e <= self.window[atoms[i]["role"]])
                for _s, e in found[i]
            )]
            if not bad:
                return Verdict(True)
            if best is None or len(bad) < len(best):
                best = bad
        return Verdict(False, tuple(f"order:{atoms[i]['role']}:{atoms[i]['text']}" for i in best or ()))


@dataclass
class CterResult:
    """CTER of one group of lines (all, or one category)."""

    instances: int
    instance_errors: int
    compounds: int
    compound_errors: int

    @property
    def instance_cter(self) -> float:
        return 100.0 * self.instance_errors / self.instances if self.instances else 0.0

    @property
    def aggregate_cter(self) -> float:
        return 100.0 * self.compound_errors / self.compounds if self.compounds else 0.0

    def to_dict(self) -> dict:
        return {
            "instance_cter": round(self.instance_cter, 2),
            "aggregate_cter": round(self.aggregate_cter, 2),
            "instances": self.instances,
            "instance_errors": self.instance_errors,
            "compounds": self.compounds,
            "compound_errors": self.compound_errors,
        }


class CTER(Metric[Sequence[str], Sequence[Mapping[str, Any]]]):
    """Compound translation error rate, instance and aggregate level (see module docstring).

    Args:
        lexicon: the atom lexicon (:meth:`Lexicon.from_release` reads a release's; ``benchsmith
            evaluate`` passes it through :meth:`for_release`).
        rule: ``"paper"`` (default: upstream's eval.py) or ``"cter-v2"``.
        window: ``cter-v2`` only: characters a pre-nominal DET / ADJ / MOD may end before
            the noun (default :data:`ORDER_WINDOW`).

    ``score(predictions, references)``: one translation per CG-test row (``atoms``, ``compound``,
    and optionally ``category`` and ``id``). The value is the instance-level CTER over all lines
    (0-100); ``details["groups"]`` has instance and aggregate CTER overall (``all``) and per
    category; ``items`` the per-line verdicts (``--details``).

    >>> CTER(Lexicon.from_release(release)).score(hyps, rows).to_dict()    # doctest: +SKIP
    """

    name = "cter"
    description = "compound translation error rate on the CG-test (instance and aggregate, %)"
    OPTIONS = (Option("rule", str, "paper (upstream's eval.py: what published CTER means) or cter-v2 (improved, not "
                      "comparable with published figures).", default=RULE_VERSION, choices=RULES),)
    CONFIGS = ("cg_test",)
    split_help = SPLIT_HELP
    judges_items = True

    def __init__(self, lexicon: Lexicon | None = None, rule: str = RULE_VERSION,
                 window: Mapping[str, int] | None = None):
        CompoundJudge(Lexicon({}), rule, window)  # a bad rule or window fails here, before any file is read
        self.lexicon, self.rule, self.window = lexicon, rule, window
        self.judge = CompoundJudge(lexicon, rule, window) if lexicon is not None else None

    def options(self) -> dict[str, Any]:
        window = None if self.rule == "paper" else _check_window(ORDER_WINDOW if self.window is None else self.window)
        return {"rule": self.rule, "mask": self.rule != "paper", "window": window,
                "lexicon": self.lexicon.fingerprint() if self.lexicon is not None else None}

    def _judge(self) -> CompoundJudge:
        if self.judge is None:
            raise ConfigError("CTER needs the atom lexicon", hint="Construct CTER(Lexicon.from_release(release))")
        return self.judge

    def verdicts(self, hypotheses: Sequence[str],
                 atoms: Sequence[Sequence[Mapping[str, str]]]) -> list[Verdict]:
        judge = self._judge()
        return [judge.judge(h, a) for h, a in zip(hypotheses, atoms, strict=True)]

    def score(self, predictions: Sequence[str], references: Sequence[Mapping[str, Any]]) -> Score:
        """Judge every line, then aggregate per compound (overall and per category)."""
        if len(predictions) != len(references):
            raise ConfigError(f"{len(predictions)} translations for {len(references)} CG-test lines")
        verdicts = self.verdicts(predictions, [r["atoms"] for r in references])
        cats = [_category(r) for r in references]
        groups = self.aggregate(verdicts, [r["compound"] for r in references],
                                None if any(c is None for c in cats) else cats)
        items = [{**({"id": r["id"]} if "id" in r else {}), "compound": r["compound"], "correct": v.correct,
                  "failures": list(v.failures), **({"flag": v.flag} if v.flag is not None else {})}
                 for r, v in zip(references, verdicts)]
        return Score(self.name, round(groups["all"].instance_cter, 2),
                     self.result_signature(n=groups["all"].instances, compounds=groups["all"].compounds),
                     {"groups": {k: v.to_dict() for k, v in groups.items()}}, items=items)

    # benchsmith evaluate's hooks
    def target(self, release: Release, config: str | None, split: str | None) -> tuple[str | None, str] | None:
        return cognition_target(self, release, config, split)

    def for_release(self, release: Release, config: str | None) -> CTER:
        return CTER(Lexicon.from_release(release), self.rule, self.window)

    def references(self, release: Release, config: str | None, split: str) -> list[dict[str, Any]]:
        return list(release.examples(str(config), split))

    def read_predictions(self, path: Path, references: Sequence[Mapping[str, Any]]) -> list[str]:
        return read_predictions(path, len(references), [r["id"] for r in references])

    @staticmethod
    def aggregate(verdicts: Sequence[Verdict], compounds: Sequence[str], groups: Sequence[str] | None = None
                  ) -> dict[str, CterResult]:
        """``{"all": ..., <group>: ...}`` from per-line verdicts (groups: e.g. NP/VP/PP)."""
        keys = ["all"] + (sorted(set(groups)) if groups is not None else [])
        per: dict[str, dict] = {k: {"n": 0, "err": 0, "comp": defaultdict(bool)} for k in keys}
        for i, (v, c) in enumerate(zip(verdicts, compounds, strict=True)):
            for k in ("all", groups[i]) if groups is not None else ("all",):
                per[k]["n"] += 1
                per[k]["err"] += not v.correct
                per[k]["comp"][c] |= not v.correct
        return {
            k: CterResult(d["n"], d["err"], len(d["comp"]), sum(d["comp"].values())) for k, d in per.items()
        }


def _category(row: Mapping[str, Any]) -> str | None:
    cat = row.get("category")
    return CATEGORIES[cat] if isinstance(cat, int) else cat


def read_predictions(path: Path, expected: int, ids: Sequence[str]) -> list[str]:
    """One translation per line; the count must match the references.

    Read as every scorer reads predictions (:mod:`benchsmith.validation.predictions`): streamed,
    each line checked as it is read, and a file longer than expected stops at its first extra line.

    Raises:
        PredictionError: an unreadable file, invalid UTF-8 or a NUL byte, the wrong number of lines
            or an empty translation (naming the line and id).
    """
    hint = "Translate every line of the source file and keep the order"
    out: list[str] = []
    for lineno, text in pred_files.lines(path, "Pass the file with one translation per test sentence"):
        if lineno > expected:
            raise PredictionError(f"more than {expected} translations, expected {expected} (one per test sentence, "
                                  "in the order of the released files)", path=path, line=lineno, hint=hint)
        if not normalise(text):
            raise PredictionError(f"empty translation for id {ids[lineno - 1]!r}", path=path, line=lineno,
                                  hint="Every test sentence needs a non-empty translation")
        out.append(text)
    if len(out) != expected:
        raise PredictionError(
            f"{len(out)} translations, expected {expected} (one per test sentence, in the order of the "
            "released files)",
            path=path, line=len(out) + 1, hint=hint,
        )
    return out


#: ``--split`` of the command before the generic ``evaluate``: the test set, not the release split
SPLITS = {"cg_test": ("cg_test", "test"), "test": ("parallel", "test")}


def cognition_target(metric: Metric, release: Release, config: str | None, split: str | None
                     ) -> tuple[str | None, str] | None:
    """CoGnition's request: ``--split cg_test`` (the default) or ``--split test`` name a *test set*
    (config ``cg_test`` or ``parallel``, split ``test``), as the command always took them;
    ``--config C [--split S]`` names config and split as for every dataset."""
    if config is None:
        if (split or "cg_test") not in SPLITS:
            raise ConfigError(f"cannot evaluate split {split!r}", hint=did_you_mean(str(split), SPLITS))
        config, split = SPLITS[split or "cg_test"]
    return Metric.target(metric, release, config, split)


#: how BLEU tokenises Chinese: ``char`` (the paper's, default) or ``jieba`` words
BLEU_TOKENISATIONS = ("char", "jieba")


class CognitionBLEU(Metric[Sequence[str], Sequence[Mapping[str, Any]]]):
    """Corpus BLEU (0-100, two decimals) of translations against the released references.

    ``tokenisation="char"`` (the default): :class:`~benchsmith.validation.metrics.bleu.SacreBLEU`
    with its ``zh`` tokenizer (every Chinese character a token) on hypothesis and reference with BPE
    joiners and segmentation spaces removed (:func:`normalise`); the signature is sacrebleu's own.
    This is the paper's BLEU: "We report character-level BLEU scores using SacreBLEU" (Li et al.,
    ACL 2021, Section 5.1); upstream's ``scripts/infer-one-click-run.sh`` removes every space from
    the hypothesis and runs ``sacrebleu -l en-zh`` (whose default tokenizer for a Chinese target is
    ``zh``). Table 6's 69.58 / 48.66 are therefore character-level.

    ``tokenisation="jieba"``: word-level BLEU over jieba (accurate mode) segmentations of both,
    sacrebleu with ``tokenize="none"``; the signature ends with ``|seg:jieba-<version>``. The
    training pipeline segments Chinese with jieba (Section 5.1), so this is the BLEU of that
    pipeline's tokens; it is not comparable with the paper's figures.

    ``score(predictions, references)``: one translation per row; a row needs ``zh``.
    """

    name = "bleu"
    description = "corpus BLEU of the translations (character level by default, 0-100)"
    OPTIONS = (Option("tokenisation", str, "char (the paper's character-level sacreBLEU) or jieba (BLEU over jieba "
                      "words).", default="char", choices=BLEU_TOKENISATIONS, flag="--bleu"),)
    CONFIGS = ("cg_test", "parallel")
    split_help = SPLIT_HELP

    def __init__(self, tokenisation: str = "char") -> None:
        if tokenisation not in BLEU_TOKENISATIONS:
            raise ConfigError(f"unknown BLEU tokenisation {tokenisation!r}",
                              hint=did_you_mean(tokenisation, BLEU_TOKENISATIONS))
        self.tokenisation = tokenisation
        self.bleu = SacreBLEU(tokenize="zh" if tokenisation == "char" else "none")

    def options(self) -> dict[str, Any]:
        return {"tokenisation": self.tokenisation, **self.bleu.options()}

    def signature(self) -> str:
        return self.bleu.signature() + (self._seg() if self.tokenisation == "jieba" else "")

    @staticmethod
    def _seg() -> str:
        import jieba

        return f"|seg:jieba-{jieba.__version__}"

    def score(self, predictions: Sequence[str], references: Sequence[Mapping[str, Any]] | Sequence[str]) -> Score:
        """``references``: rows with ``zh``, or the reference strings themselves."""
        hyps = [normalise(h) for h in predictions]
        refs = [normalise(r if isinstance(r, str) else r["zh"]) for r in references]
        if self.tokenisation == "jieba":
            hyps, refs = [" ".join(segment(h)) for h in hyps], [" ".join(segment(r)) for r in refs]
        res = self.bleu.score(hyps, [[r] for r in refs])
        signature = res.signature + (self._seg() if self.tokenisation == "jieba" else "")
        return Score(self.name, round(res.value or 0.0, 2), signature, {"tokenisation": self.tokenisation})

    def target(self, release: Release, config: str | None, split: str | None) -> tuple[str | None, str] | None:
        return cognition_target(self, release, config, split)

    def references(self, release: Release, config: str | None, split: str) -> list[dict[str, Any]]:
        return list(release.examples(str(config), split))

    def read_predictions(self, path: Path, references: Sequence[Mapping[str, Any]]) -> list[str]:
        return read_predictions(path, len(references), [r["id"] for r in references])


#: what ``benchsmith evaluate cognition`` scores with (``Builder.metrics``): BLEU on both test
#: sets, CTER on the CG-test
METRICS = (CognitionBLEU, CTER)
