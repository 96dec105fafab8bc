"""The CG-test atom inventory and the 12 compound patterns (Li et al., ACL 2021).

A compound is a noun phrase (NP), verb phrase (VP) or prepositional phrase (PP)
built from atoms by one of 12 patterns (paper, Table 3):

====  ==========================  ====  =====================  ====  ============================
1.1   DET+N                       2.1   V+DET+N                3.1   P+DET+N
1.2   DET+ADJ+N                   2.2   V+DET+ADJ+N            3.2   P+DET+ADJ+N
1.3   DET+N+MOD                   2.3   V+DET+N+MOD            3.3   P+DET+N+MOD
1.4   DET+ADJ+N+MOD               2.4   V+DET+ADJ+N+MOD        3.4   P+DET+ADJ+N+MOD
====  ==========================  ====  =====================  ====  ============================

The inventory below is the paper's atom set, per category. It is data, checked
rather than trusted: the tests assert that (a) every atom has an entry in the
released ``eval/lexicon`` (modifiers under the lexicon's keys ``mod0..mod2``),
and (b) the atoms found at each slot of the 2,160 released compounds are exactly
these sets. :func:`parse_compound` derives pattern and atoms from a compound
string with this inventory; nothing is labelled by hand.

Slot filling in the release: NP compounds are the full product DET x (ADJ or
none) x N x (MOD or none) = 5 x 6 x 8 x 3 = 720. VP and PP compounds use the same
product, with one verb / preposition per slot (19 verbs, 17 prepositions), so
the full enumeration (:func:`enumerate_compounds`) has 720 + 13,680 + 12,240
compounds and contains all 2,160 released ones.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator, Mapping
from dataclasses import dataclass

from benchsmith.errors import ParseError

CATEGORIES = ("NP", "VP", "PP")

DETERMINERS = ("the", "every", "any", "another", "each")

#: Modifier phrases and their lexicon keys.
MODIFIERS: Mapping[str, str] = {"he liked": "mod0", "at the store": "mod1", "on the floor": "mod2"}


@dataclass(frozen=True)
class CategoryInventory:
    """The atoms one category draws from."""

    category: str
    head: tuple[str, ...]  # verbs (VP) or prepositions (PP); empty for NP
    nouns: tuple[str, ...]
    adjectives: tuple[str, ...]
    modifiers: tuple[str, ...]
    determiners: tuple[str, ...] = DETERMINERS


INVENTORY: Mapping[str, CategoryInventory] = {
    "NP": CategoryInventory(
        "NP",
        head=(),
        nouns=("dog", "doctor", "sandwich", "hat", "waiter", "lawyer", "peanut", "farmer"),
        adjectives=("small", "red", "dirty", "lazy", "smart"),
        modifiers=("he liked", "at the store"),
    ),
    "VP": CategoryInventory(
        "VP",
        head=("asked", "visited", "heard", "lost", "hated", "stopped", "woke", "found", "watched", "took",
              "saw", "told", "caught", "liked", "left", "gave", "invited", "met", "chose"),
        nouns=("car", "girl", "boyfriend", "child", "chair", "building", "clown", "bee"),
        adjectives=("small", "large", "dirty", "special", "silly"),
        modifiers=("he liked", "on the floor"),
    ),
    "PP": CategoryInventory(
        "PP",
        head=("about", "around", "before", "behind", "except", "for", "from", "inside", "like", "near",
              "on", "to", "toward", "towards", "under", "with", "without"),
        nouns=("car", "doctor", "apartment", "chair", "building", "farm", "airplane", "bee"),
        adjectives=("small", "large", "quiet", "empty", "fake"),
        modifiers=("he liked", "on the floor"),
    ),
}

_HEAD_ROLE = {"NP": None, "VP": "V", "PP": "P"}
_CATEGORY_NUMBER = {"NP": 1, "VP": 2, "PP": 3}


def pattern_name(category: str, has_adj: bool, has_mod: bool) -> str:
    """``("VP", True, False)`` -> ``"2.2"`` (see the table in the module docstring)."""
    return f"{_CATEGORY_NUMBER[category]}.{1 + int(has_adj) + 2 * int(has_mod)}"


def pattern_roles(pattern: str) -> tuple[str, ...]:
    """``"2.4"`` -> ``("V", "DET", "ADJ", "N", "MOD")``."""
    cat_no, _, sub = pattern.partition(".")
    k = int(sub) - 1
    head = {"1": (), "2": ("V",), "3": ("P",)}[cat_no]
    return head + ("DET",) + (("ADJ",) if k & 1 else ()) + ("N",) + (("MOD",) if k & 2 else ())


PATTERNS: tuple[str, ...] = tuple(f"{c}.{k}" for c in (1, 2, 3) for k in (1, 2, 3, 4))


@dataclass(frozen=True)
class Atom:
    """One atom of a compound: its role (DET, ADJ, N, MOD, V, P) and English text."""

    role: str
    text: str

    def to_dict(self) -> dict[str, str]:
        return {"role": self.role, "text": self.text}


@dataclass(frozen=True)
class Compound:
    """A compound parsed into category, pattern and atoms (in English order)."""

    text: str
    category: str
    pattern: str
    atoms: tuple[Atom, ...]

    def atom(self, role: str) -> Atom | None:
        return next((a for a in self.atoms if a.role == role), None)

    @property
    def length(self) -> int:
        """Number of atoms (the paper's compound length)."""
        return len(self.atoms)


def build(category: str, head: str | None, det: str, adj: str | None, noun: str, mod: str | None) -> Compound:
    """Assemble a compound from its atoms."""
    atoms: list[Atom] = []
    role = _HEAD_ROLE[category]
    if role:
        atoms.append(Atom(role, head or ""))
    atoms.append(Atom("DET", det))
    if adj:
        atoms.append(Atom("ADJ", adj))
    atoms.append(Atom("N", noun))
    if mod:
        atoms.append(Atom("MOD", mod))
    text = " ".join(a.text for a in atoms)
    return Compound(text, category, pattern_name(category, bool(adj), bool(mod)), tuple(atoms))


def _match(words: list[str], inv: CategoryInventory) -> Compound | None:
    rest = list(words)
    head = None
    if inv.head:
        if not rest or rest[0] not in inv.head:
            return None
        head = rest.pop(0)
    if not rest or rest[0] not in inv.determiners:
        return None
    det = rest.pop(0)
    adj = rest.pop(0) if rest and rest[0] in inv.adjectives else None
    if not rest or rest[0] not in inv.nouns:
        return None
    noun = rest.pop(0)
    mod = " ".join(rest) or None
    if mod is not None and mod not in inv.modifiers:
        return None
    return build(inv.category, head, det, adj, noun, mod)


def parse_compound(text: str, category: str | None = None, *, path=None, line: int | None = None) -> Compound:
    """Parse a compound string into pattern and atoms with the inventory.

    ``category`` restricts the parse to one category (the folder a compound came
    from); otherwise every category is tried and exactly one must match.

    Raises:
        ParseError: no category's grammar matches, or more than one does.
    """
    words = text.split()
    cats = (category,) if category else CATEGORIES
    found = [c for c in (_match(words, INVENTORY[cat]) for cat in cats) if c is not None]
    if len(found) != 1:
        what = "matches no pattern" if not found else f"is ambiguous ({', '.join(c.pattern for c in found)})"
        raise ParseError(
            f"compound {text!r} {what} of the CoGnition atom inventory"
            + (f" for category {category}" if category else ""),
            path=path,
            line=line,
            hint="Compounds are [V|P] DET [ADJ] N [MOD] over the paper's atoms (builders/cognition/atoms.py)",
        )
    return found[0]


def enumerate_compounds(categories: tuple[str, ...] = CATEGORIES) -> Iterator[Compound]:
    """Every compound the inventory x the 12 patterns allows, in a fixed order."""
    for cat in categories:
        inv = INVENTORY[cat]
        heads = inv.head or (None,)
        for head, det, adj, noun, mod in itertools.product(
            heads, inv.determiners, (None, *inv.adjectives), inv.nouns, (None, *inv.modifiers)
        ):
            yield build(cat, head, det, adj, noun, mod)


def lexicon_roles() -> dict[str, str]:
    """Lexicon key -> role for every atom of the inventory (``mod0`` -> MOD, ``liked`` -> V ...)."""
    roles: dict[str, str] = {}
    for inv in INVENTORY.values():
        head_role = _HEAD_ROLE[inv.category]
        for words, role in ((inv.determiners, "DET"), (inv.adjectives, "ADJ"), (inv.nouns, "N"),
                            (inv.head, head_role)):
            for w in words:
                roles[w] = role  # type: ignore[assignment]
        for m in inv.modifiers:
            roles[MODIFIERS[m]] = "MOD"
    return roles
