"""The paper's CTER rule: upstream's ``eval/eval.py``, reimplemented line by line.

Reference: ``../shared/raw/cognition/eval/eval.py`` (upstream's latest version; an older
copy with other atom lists circulates). Every step below names the eval.py code it mirrors;
``tests/test_cognition_eval_conformance.py`` runs eval.py itself and this class on the same
inputs and asserts identical per-line flags and identical instance / aggregate CTER.

Deliberate differences, none of which changes a verdict on valid input:

* eval.py reads the lexicon into a dict (a repeated key: the last line wins); we read the
  release's ``lexicon`` config, where a repeated key is the union of its renderings. Upstream
  repeats only ``building`` (``建筑/楼`` then ``建筑/楼/房子``): the union is the last line.
* An atom missing from the lexicon or from every atom list is a :class:`ConfigError` here;
  eval.py raises ``KeyError`` / ``NameError`` or silently reuses the previous atom's type.
* eval.py asserts that the compound occurs in the source sentence; the release's structure
  check (``cognition_cg_test_structure``) guarantees it, so the judge does not see the source.
* eval.py reads ``src TAB compound TAB hyp`` lines, so a hypothesis with a tab, a line break or
  nothing at all cannot reach it (it raises); ``evaluate`` reads one hypothesis per line and
  refuses empty ones, and the judge takes any other string as eval.py would take its last field.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from benchsmith.errors import ConfigError

#: sha256 of the eval.py this module reimplements (``../shared/raw/cognition/eval/eval.py``, upstream
#: commit f2f980a); the conformance test refuses another copy (an older one with other atom lists circulates)
EVAL_PY_SHA256 = "cabb025caeb60b37e5a022bfe0cb966c97e19e950b9732a57a82e1d9fac5b415"

# eval.py, "# atom list": the lists and their order (the order of the flags, and "last list wins")
P = ("about", "around", "before", "behind", "except", "for", "from", "inside", "like", "near", "on", "to",
     "toward", "towards", "under", "with", "without")
V = ("asked", "visited", "heard", "lost", "hated", "stopped", "woke", "found", "watched", "took", "saw", "told",
     "caught", "liked", "left", "gave", "invited", "met", "chose")
DET = ("the", "every", "any", "another", "each")
ADJ = ("small", "red", "dirty", "lazy", "smart", "large", "special", "silly", "quiet", "empty", "fake")
N = ("dog", "doctor", "sandwich", "hat", "waiter", "lawyer", "peanut", "farmer", "car", "girl", "boyfriend", "child",
     "chair", "building", "clown", "bee", "apartment", "farm", "airplane")
MOD = ("mod0", "mod1", "mod2")
ATOM_TYPE2LIST: Mapping[str, tuple[str, ...]] = {"P": P, "V": V, "DET": DET, "ADJ": ADJ, "N": N, "MOD": MOD}
ATOM_TYPES = ("P", "V", "DET", "ADJ", "N", "MOD")
#: eval.py ``_reg_mod``: applied with str.replace, in this order
REG_MODS: Mapping[str, str] = {"he liked": "mod0", "at the store": "mod1", "on the floor": "mod2"}
#: eval.py's order tests: (atom type, before the noun), MOD only when the verb has no position
ORDER_TESTS = (("DET", "N"), ("ADJ", "N"))


def reg_mod(compound: str) -> list[str]:
    """eval.py ``_reg_mod``: modifier phrases -> ``mod0..2``, then split on whitespace."""
    for k, v in REG_MODS.items():
        compound = compound.replace(k, v)
    return compound.split()


def squeeze(hypothesis: str) -> str:
    """eval.py: ``line.strip()`` (the hypothesis is the line's last field), ``"@@ "`` and every space removed."""
    return hypothesis.rstrip().replace("@@ ", "").replace(" ", "")


def atom_type(atom: str) -> str:
    """eval.py ``_get_atom_state``: the last of eval.py's atom lists that contains ``atom``."""
    found = [k for k, v in ATOM_TYPE2LIST.items() if atom in v]
    if not found:
        raise ConfigError(f"compound word {atom!r} is in none of eval.py's atom lists",
                          hint="The paper rule knows only the atoms of Table 4 (builders/cognition/paper_rule.py)")
    return found[-1]


class PaperJudge:
    """eval.py's verdict on one line (see the module docstring of ``metric.py`` for the rule in words).

    Args:
        entries: lexicon key -> renderings (empty alternatives dropped, as the release stores them).
        optional: keys whose raw entry had an empty alternative (``the\\t/``, ``liked\\t喜欢/``).
    """

    def __init__(self, entries: Mapping[str, Sequence[str]], optional: frozenset[str] | set[str]):
        # back to eval.py's alternatives: "/" -> None (translated, no position); "喜欢/" -> ("喜欢", "")
        self.alternatives: dict[str, tuple[str, ...] | None] = {}
        for key, renders in entries.items():
            if not renders:
                self.alternatives[key] = None
            else:
                self.alternatives[key] = tuple(renders) + (("",) if key in optional else ())

    def _state(self, compound: list[str], hyp: str) -> dict[str, dict | None]:
        """eval.py ``_get_atom_state``: per atom type, ``{"trans": P1|P0, "pos": [min, max] or []}``."""
        state: dict[str, dict | None] = dict.fromkeys(ATOM_TYPES)
        for atom in compound:
            atype = atom_type(atom)
            if atom not in self.alternatives:
                raise ConfigError(f"atom {atom!r} has no lexicon entry",
                                  hint="The lexicon must cover every atom of the CG-test (eval/lexicon)")
            alts = self.alternatives[atom]
            if alts is None:
                state[atype] = {"trans": "P1", "pos": [], "atom": atom}
                continue
            pos_list: list[int] = []
            for t in alts:
                pos_list += [m.start() for m in re.finditer(t, hyp)]
            if pos_list:
                state[atype] = {"trans": "P1", "pos": [min(pos_list), max(pos_list)], "atom": atom}
            else:
                state[atype] = {"trans": "P0", "pos": [], "atom": atom}
        return state

    @staticmethod
    def _order(pos1: list[int], pos2: list[int]) -> str:
        """eval.py ``_get_order_flag``: P1 if min(pos1) < max(pos2) or either has no position."""
        if pos1 and pos2:
            return "P1" if min(pos1) < max(pos2) else "P0"
        return "P1"

    def flag(self, hypothesis: str, compound: str) -> tuple[str, list[str]]:
        """eval.py's flag for one line, and our failure names (``missing:<TYPE>:<atom>``,
        ``order:<TYPE>:<atom>``) for the P0s in it."""
        hyp = squeeze(hypothesis)
        state = self._state(reg_mod(compound), hyp)
        present = {k: v for k, v in state.items() if v is not None}
        trans_flag = [v["trans"] for v in present.values()]
        if "P0" in trans_flag:
            missing = [f"missing:{k}:{_english(v['atom'])}" for k, v in present.items() if v["trans"] == "P0"]
            return "-".join(trans_flag) + "/P0", missing

        def pos(t: str) -> list[int]:
            return state[t]["pos"] if state[t] is not None else []

        tests = list(ORDER_TESTS)
        if not pos("V"):
            # eval.py: MOD may modify the verb in a VP ('bought the car at the store'), so MOD < N is
            # tested only when the verb has no position
            tests.append(("MOD", "N"))
        order_flag, failures = [], []
        for a, b in tests:
            f = self._order(pos(a), pos(b))
            order_flag.append(f)
            if f == "P0":
                failures.append(f"order:{a}:{_english(state[a]['atom'])}")
        return "-".join(trans_flag) + "/" + "-".join(order_flag), failures


def _english(key: str) -> str:
    """``mod1`` -> ``at the store`` (failure names use the compound's words)."""
    return {v: k for k, v in REG_MODS.items()}.get(key, key)
