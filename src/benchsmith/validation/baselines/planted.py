"""A planted partial-input artifact that bag-of-words cannot see: what the fine-tuned probe is for.

Each item is a two-option multiple-choice question with a context ("Ada had to pick one chair.")
and two options made of the same words in another order: "not the broken chair but the sturdy
chair" and "not the sturdy chair but the broken chair". The two adjective slots have the same
neighbours ("the _ chair"), so both options have the same unigrams *and* bigrams: a
bag-of-words model sees two identical options and can only guess. The cue is the negation's
scope: in a cued item the correct option negates the unfavourable adjective. ``strength`` is the
share of cued items; in the others the correct option is a seeded coin flip, so the best
options-only accuracy is ``strength + (1 - strength) / 2`` and ``strength=0`` plants nothing.

``benchmarks/planted_artifacts.py`` runs the probes on it (strength x seed); the tests use it
with a small budget.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import datasets

from benchsmith.builder import Builder, Config, Policy
from benchsmith.release import Release, ReleaseWriter
from benchsmith.source import Sources

#: (unfavourable, favourable) adjective pairs
PAIRS = (("broken", "sturdy"), ("dirty", "clean"), ("rotten", "fresh"), ("ugly", "pretty"), ("bad", "good"),
         ("awful", "lovely"), ("boring", "exciting"), ("rude", "polite"), ("sad", "happy"), ("weak", "strong"),
         ("dangerous", "safe"), ("noisy", "quiet"), ("wrong", "right"), ("cruel", "gentle"), ("stale", "tasty"),
         ("useless", "useful"), ("damaged", "perfect"), ("fake", "real"), ("smelly", "fragrant"), ("cheap", "elegant"))
NOUNS = ("chair", "apple", "car", "dog", "house", "book", "phone", "shirt", "garden", "bridge", "knife", "lamp",
         "river", "road", "teacher", "bread", "song", "film", "coat", "boat", "door", "cake", "pen", "room",
         "bag", "bed", "bike", "bottle", "box", "camera", "cup", "desk", "dress", "engine", "fence", "glass",
         "hat", "horse", "jacket", "key", "map", "mirror", "nurse", "painting", "plate", "shoe", "sofa", "table")
NAMES = ("Ada", "Ben", "Chloe", "Dev", "Eva", "Femi", "Gus", "Hana", "Ivo", "Jun", "Kai", "Lea")
#: frames whose two slots ({x}, {y}) have the same neighbours: swapping them keeps every bigram
FRAMES = ("not the {x} {n} but the {y} {n}", "they chose the {y} {n} and not the {x} {n}",
          "never the {x} {n} , always the {y} {n}", "the {y} {n} , not the {x} {n} , was kept")
FEATURES = datasets.Features({"id": datasets.Value("string"), "premise": datasets.Value("string"),
                              "choice1": datasets.Value("string"), "choice2": datasets.Value("string"),
                              "label": datasets.ClassLabel(names=["1", "2"])})
POLICY = {"task": "multiple_choice", "choices": ["choice1", "choice2"], "label": "label", "context": ["premise"]}


def planted_rows(n: int, strength: float, seed: int, prefix: str = "") -> list[dict[str, Any]]:
    """``n`` items, a ``strength`` share of them cued (see module docstring); seeded."""
    rng = random.Random(seed)
    rows = []
    for i in range(n):
        bad, good = rng.choice(PAIRS)
        noun, frame = rng.choice(NOUNS), rng.choice(FRAMES)
        cued = frame.format(x=bad, y=good, n=noun)  # negates the unfavourable one
        other = frame.format(x=good, y=bad, n=noun)
        right = cued if rng.random() < strength or rng.random() < 0.5 else other
        wrong = other if right == cued else cued
        label = rng.randint(0, 1)
        options = [wrong, right] if label else [right, wrong]
        rows.append({"id": f"{prefix}{i}", "premise": f"{rng.choice(NAMES)} had to pick one {noun} .",
                     "choice1": options[0], "choice2": options[1], "label": label})
    return rows


def planted_release(registry: str | Path, strength: float, seed: int, *, n_train: int = 1000, n_test: int = 500,
                    policy: Mapping[str, Any] | None = None) -> Release:
    """A release ``planted`` of one config with ``train`` and ``test`` splits of planted items, in ``registry``
    (``policy``: more policy fields, e.g. a smaller probe budget)."""
    splits = {"train": planted_rows(n_train, strength, seed, "train-"),
              "test": planted_rows(n_test, strength, seed + 10_000, "test-")}
    fields = {**POLICY, **(policy or {})}

    class Planted(Builder):
        name = "planted"
        release_notes = {"1.0.0": "planted order cue"}  # noqa: RUF012 - as the Builder base declares it

        def configs(self) -> Sequence[Config]:
            return [Config("default", "planted negation-scope cue", FEATURES, splits=tuple(splits),
                           policy=Policy.from_dict(fields))]

        def examples(self, cfg: Any, split: str, sources: Any) -> Any:
            yield from (dict(r) for r in splits[split])

    return ReleaseWriter(Planted("1.0.0"), Path(registry), Sources({})).write()
