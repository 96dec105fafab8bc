"""libyaml's emitter is used for a card document only where it writes PyYAML's text
(benchsmith.cards.yaml_text): equal on random documents of that set, on every real release's
documents, and each known difference is kept out of it."""

from __future__ import annotations

import random

import pytest
import yaml
from benchsmith.cards import lm_eval
from benchsmith.cards.card import card_data, card_metadata
from benchsmith.cards.yaml_text import card_yaml, libyaml_writes_the_same

pytestmark = pytest.mark.skipif(not getattr(yaml, "__with_libyaml__", False), reason="PyYAML without libyaml")

_WORDS = ["- a", "b:", "#c", "'d'", '"e"', "yes", "null", "1.5", "~", "f\\g", "  ", "\n", "因为", "அ", ": ",
          " #", "? ", "|", ">", "&a", "*b", "!t", "%", "@", "`", "\u2028", "\ufeff", "\x85", "\x07",
          "\U0001f600"]
_CHARS = ([chr(i) for i in range(0x250)] + ["\n"] * 5 + [" "] * 15
          + ["\u2028", "\ufeff", "\ufffe", "\U0001f600", "\u4e00", "\u0b85", "\u200b", "\u3000", "\ud7ff",
             "\ue000"])


def _python_card(data):
    return yaml.dump(data, allow_unicode=True, sort_keys=False).strip()


def _libyaml_card(data):
    return yaml.dump(data, Dumper=yaml.CDumper, allow_unicode=True, sort_keys=False).strip()


def _python_lm(data):
    return yaml.dump(data, Dumper=lm_eval._Dumper, sort_keys=False, allow_unicode=True, width=10_000,
                     default_flow_style=False)


def _libyaml_lm(data):
    return yaml.dump(data, Dumper=lm_eval._CDumper, sort_keys=False, allow_unicode=True, width=10_000,
                     default_flow_style=False)


def _documents(seed: int, n: int):
    rng = random.Random(seed)
    for _ in range(n):
        if rng.random() < 0.5:
            s = "".join(rng.choice(_CHARS) for _ in range(rng.randint(0, 150)))
        else:
            s = " ".join(rng.choice([*_WORDS, "x" * rng.randint(1, 90)]) for _ in range(rng.randint(1, 30)))
        key = s[:rng.choice([1, 9, 64, 65, 127, 128, 200])]
        yield {"k": s, key: [s, {"x": s, "y": [s]}], "n": 5, "f": 0.5, "b": True, "z": None, "e": [], "d": {}}


def test_libyaml_writes_what_pyyaml_writes_wherever_it_is_used():
    used = {"card": 0, "lm": 0}
    for doc in _documents(0, 1200):  # ~0.7 s; 42,000 documents of 14 seeds agreed too
        for kind, newlines, python, libyaml in (("card", False, _python_card, _libyaml_card),
                                                ("lm", True, _python_lm, _libyaml_lm)):
            if libyaml_writes_the_same(doc, newlines=newlines):
                used[kind] += 1
                assert libyaml(doc) == python(doc), doc
    assert used["card"] > 60 and used["lm"] > 60  # the check is not vacuous


@pytest.mark.parametrize("value, newlines", [
    ("smile \U0001f600", True),  # libyaml escapes astral characters
    ("a \n" + "x" * 70 + " y", False),  # a folded double-quoted scalar at width 80
    ("\n", True),  # a kept final newline (|2+) before the last key: libyaml adds '...'
])
def test_each_known_difference_stays_with_pyyaml(value, newlines):
    doc = {"first": value, "last": 1}
    python, libyaml = (_python_lm, _libyaml_lm) if newlines else (_python_card, _libyaml_card)
    assert python(doc) != libyaml(doc)
    assert not libyaml_writes_the_same(doc, newlines=newlines)
    assert not libyaml_writes_the_same({value: 1}, newlines=newlines)  # keys too


def test_an_empty_key_stays_with_pyyaml():
    assert _python_card({"": 1}) != _libyaml_card({"": 1})
    assert not libyaml_writes_the_same({"": 1}, newlines=True)


def test_card_yaml_is_to_yaml_and_other_types_go_to_pyyaml():
    assert not libyaml_writes_the_same({"t": (1, 2)}, newlines=True)
    for doc in _documents(1, 200):
        from huggingface_hub import DatasetCardData

        data = DatasetCardData(**{k: v for k, v in doc.items() if isinstance(k, str) and k.isidentifier()})
        assert card_yaml(data.to_dict()) == data.to_yaml()


@pytest.mark.slow  # three real builds (~12 s); the default run has the random documents above
@pytest.mark.realdata
@pytest.mark.parametrize("name", ["comve", "xcopa", "mucow"])
def test_real_card_documents_take_libyaml_and_read_the_same(name, raw, tmp_path):
    from benchsmith.builder import get_builder
    from benchsmith.release import ReleaseWriter
    from benchsmith.source import resolve_sources

    b = get_builder(name)
    release = ReleaseWriter(b, tmp_path, resolve_sources(b.sources, b.checksums(), raw)).write()
    data = card_data(release.info).to_dict()
    assert card_metadata(release.info) == data and list(card_metadata(release.info)) == list(data)
    assert libyaml_writes_the_same(data, newlines=False)
    assert card_yaml(data) == card_data(release.info).to_yaml()
    tasks = sorted((release.path / "lm_eval").glob("*.yaml"))
    assert tasks or name == "mucow"  # MuCoW's configs are no lm-eval tasks
    for path in tasks:
        doc = yaml.safe_load(path.read_text(encoding="utf-8"))
        assert libyaml_writes_the_same(doc, newlines=True) and _libyaml_lm(doc) == _python_lm(doc)


def test_card_metadata_is_dataset_card_data_to_dict(tmp_path):
    """The build's card metadata without huggingface_hub: DatasetCardData's to_dict, key order included
    (the toy release, and with every optional field set and unset)."""
    import dataclasses

    import toy_builder

    from benchsmith.release import ReleaseWriter
    from benchsmith.source import resolve_sources

    b = toy_builder.ToyBuilder()
    release = ReleaseWriter(b, tmp_path, resolve_sources(b.sources, b.checksums(), toy_builder.FIXTURES)).write()
    full = dataclasses.replace(release.info, task_ids=("multiple-choice-qa",), multilinguality=("monolingual",),
                               source_datasets=("original",), paperswithcode_id="toy", task_categories=())
    for info in (release.info, full):
        expected = card_data(info).to_dict()
        assert card_metadata(info) == expected and list(card_metadata(info)) == list(expected)
        assert card_yaml(card_metadata(info)) == card_data(info).to_yaml()


def test_not_plain_is_the_complement_of_plain_on_every_code_point():
    """yaml_text's ``_NOT_PLAIN`` (searched for: cheap to compile) finds exactly the characters
    outside ``PLAIN`` (the class it replaced): every code point of the BMP, and past it (one range in
    both) its ends and 2,000 random ones; a complement that misses one (U+FEFF) is caught."""
    import re

    from benchsmith.cards import yaml_text

    astral = [0x10000, 0x10FFFF, *random.Random(7).sample(range(0x10000, 0x110000), 2000)]
    every = "".join(map(chr, [*range(0x10000), *astral]))
    # the characters are distinct: the same characters kept means the same ones removed
    plain = re.sub(f"[^{yaml_text.PLAIN}]", "", every)
    assert yaml_text._NOT_PLAIN.sub("", every) == plain
    assert re.sub(f"[{yaml_text.NOT_PLAIN.replace(chr(0xFEFF), '')}]", "", every) != plain
