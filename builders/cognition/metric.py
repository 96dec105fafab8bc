"""CoGnition's scorer: compound translation error rate (CTER) on the CG-test.

A compound translation is judged from the hypothesis alone, with the released
atom lexicon (``eval/lexicon``: each atom's accepted Chinese renderings), as the
paper's automatic evaluation does (Li et al., ACL 2021, Section 4.4). The rule,
exactly (``RULE_VERSION = "cter-v2"``):

1. **Normalise** the hypothesis: undo BPE (``@@ ``) and remove word-segmentation
   spaces between Chinese characters, so segmented and raw output score alike.
2. **Find** every occurrence of every rendering of every atom of the compound
   (plain substring search). An occurrence is **masked** (does not count) when it
   lies inside an occurrence of a *longer lexicon rendering of a different atom*
   (child 孩 inside girl 女孩, small 小 inside clown 小丑, large 大 inside around
   大约, farm 农场 inside farmer 农场主): such a match is another atom's word, not
   this atom's translation. Masking is not applied between two verbs or two
   prepositions: their lexicon entries share senses (met 见 / saw 见过, asked 请 /
   invited 邀请), and masking them only flagged correct human references.
3. **Presence**: every atom whose lexicon entry has no empty alternative must have
   at least one unmasked occurrence; otherwise the failure is ``missing:<ROLE>:<atom>``.
   Atoms the lexicon lets go untranslated (``the``, ``liked``, ``about``, ``for``,
   ``on``, ``to``, ``with``: an empty alternative) are always satisfied.
4. **Order** (Chinese is head-final in the noun phrase): there must be one noun
   occurrence that comes after (non-overlapping, to its left) an occurrence of each
   *pre-nominal* atom: the determiner, the adjective, and the modifiers ``he liked``
   (a relative clause, 他喜欢的N) and ``at the store`` (店里的N), each ending at
   most ``ORDER_WINDOW[role]`` characters before the noun starts (ADJ 4, MOD 10,
   DET 14: classifiers, 的 and the other pre-nominal atoms may sit in between, as in
   每一只他喜欢的小狗; an adjective seven characters away modifies something else,
   as in 小女孩看到了那只狗). The windows are the smallest that accept at least
   99.95% of the 10,800 human references for that role. Atoms with no required
   rendering are skipped. Not ordered: the verb (把-constructions put it after the
   noun), the preposition (circumpositions such as 在车后面 put the localizer after
   the noun) and ``on the floor`` (it may attach to the verb: 把椅子留在地上).
   Failure: ``order:<ROLE>:<atom>``.

A line is *correct* when no failure is found. Instance-level CTER is the share of
incorrect lines; aggregate-level CTER is the share of compounds with at least one
incorrect context (a compound counts as correct only if all 5 contexts are).

``rule="paper"`` gives the rule as the paper describes it (steps 1, 3 and 4
without masking and without a window) so both can be compared on the same data.

:class:`CTER` implements the one scorer contract (:class:`benchsmith.validation.metric.Metric`):
its options are the rule, masking, the order windows and the lexicon's fingerprint, so
``signature()`` (``cter:1|rule:cter-v2|mask:yes|window:DET=14,ADJ=4,MOD=10|lexicon:<sha256[:12]>|
benchsmith:X``) reproduces the number; the facts of one scoring call (lines, compounds) go
into that score's result signature (``...|n:10800|compounds:2160``).
"""

from __future__ import annotations

import hashlib
import re
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from benchsmith.validation.metric import Metric

from benchsmith.errors import ConfigError, did_you_mean
from benchsmith.nlp.segment import unsegment

from .atoms import MODIFIERS, lexicon_roles

RULE_VERSION = "cter-v2"
RULES = ("cter-v2", "paper")
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
    def from_release(cls, release: Any) -> Lexicon:
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

    def judge(self, hypothesis: str, atoms: Sequence[Mapping[str, str]]) -> Verdict:
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


@dataclass(frozen=True)
class CterScore:
    """One scoring call: CTER per group (``all`` and e.g. NP/VP/PP), the per-line verdicts,
    and the result signature (options + the call's line and compound counts)."""

    groups: Mapping[str, CterResult]
    verdicts: tuple[Verdict, ...]
    signature: str

    def to_dict(self) -> dict:
        return {"cter": {k: v.to_dict() for k, v in self.groups.items()}, "signature": self.signature}


class CTER(Metric):
    """Compound translation error rate, instance and aggregate level (see module docstring).

    Args:
        lexicon: the atom lexicon (:meth:`Lexicon.from_release` reads a release's).
        rule: ``"cter-v2"`` (default) or ``"paper"``.
        window: ``cter-v2`` only: characters a pre-nominal DET / ADJ / MOD may end before
            the noun (default :data:`ORDER_WINDOW`).

    >>> cter = CTER(Lexicon.from_release(release))                  # doctest: +SKIP
    >>> cter.score(hyps, atoms, compounds, categories).to_dict()    # doctest: +SKIP
    """

    name = "cter"

    def __init__(self, lexicon: Lexicon, rule: str = RULE_VERSION, window: Mapping[str, int] | None = None):
        self.judge = CompoundJudge(lexicon, rule, window)
        self.lexicon = lexicon

    def options(self) -> dict[str, Any]:
        return {"rule": self.judge.rule, "mask": self.judge.mask, "window": self.judge.window,
                "lexicon": self.lexicon.fingerprint()}

    def verdicts(self, hypotheses: Sequence[str],
                 atoms: Sequence[Sequence[Mapping[str, str]]]) -> list[Verdict]:
        return [self.judge.judge(h, a) for h, a in zip(hypotheses, atoms, strict=True)]

    def score(self, hypotheses: Sequence[str], atoms: Sequence[Sequence[Mapping[str, str]]],
              compounds: Sequence[str], groups: Sequence[str] | None = None) -> CterScore:
        """Judge every line, then aggregate per compound (overall and per group)."""
        verdicts = self.verdicts(hypotheses, atoms)
        agg = self.aggregate(verdicts, compounds, groups)
        return CterScore(agg, tuple(verdicts),
                         self.result_signature(n=agg["all"].instances, compounds=agg["all"].compounds))

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
