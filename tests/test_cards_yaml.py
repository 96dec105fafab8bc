"""The card's front matter and the lm-eval task files: read back by huggingface_hub's card parser
and by ``datasets`` as written (values, key order, features, split sizes), whatever the text holds,
and the same bytes for the same metadata."""

from __future__ import annotations

import dataclasses

import pytest
import toy_builder
import yaml
from datasets.info import DatasetInfosDict
from huggingface_hub import DatasetCard

from benchsmith.cards import lm_eval
from benchsmith.cards.card import card_data, card_yaml, render_card
from benchsmith.release import ReleaseWriter
from benchsmith.source import resolve_sources


@pytest.fixture(scope="module")
def toy(tmp_path_factory):
    b = toy_builder.ToyBuilder()
    return ReleaseWriter(b, tmp_path_factory.mktemp("reg"), resolve_sources(b.sources, b.checksums(),
                                                                            toy_builder.FIXTURES)).write()


def test_huggingface_hub_and_datasets_read_the_front_matter_as_written(toy):
    card = DatasetCard(render_card(toy, toy_builder.ToyBuilder()))
    expected = card_data(toy.info).to_dict()
    assert card.data.to_dict() == expected and list(card.data.to_dict()) == list(expected)
    assert list(expected)[:3] == ["language", "license", "size_categories"]
    infos = DatasetInfosDict.from_dataset_card_data(card.data)
    for name, cfg in toy.info.configs.items():
        assert infos[name].features == cfg.features
        assert {s: i.num_examples for s, i in infos[name].splits.items()} == {
            s: i.num_examples for s, i in cfg.splits.items()}


@pytest.mark.parametrize("pretty_name", ["Ünïcode 因为 அ 😀", "two\nlines", "- a: b #c 'd' \"e\"", "yes", "1.5",
                                         "x" * 200, "tab\tand\u2028separator", ""])
def test_any_text_reads_back_and_writes_the_same_bytes(toy, pretty_name):
    info = dataclasses.replace(toy.info, pretty_name=pretty_name, task_ids=("multiple-choice-qa",),
                               paperswithcode_id="toy")
    text = card_yaml(info)
    assert text == card_yaml(info)
    data = DatasetCard(f"---\n{text}\n---\n\nbody\n").data.to_dict()
    assert data == card_data(info).to_dict() and list(data) == list(card_data(info).to_dict())
    assert data["pretty_name"] == pretty_name


def test_lm_eval_prompts_are_literal_blocks_that_read_back():
    doc = {"task": "t", "doc_to_text": "Premise: x\nA. one\nB. two\nAnswer:", "target": "😀 ünï", "n": 1}
    text = lm_eval._dump(doc)
    assert "doc_to_text: |-\n  Premise: x\n  A. one\n" in text and "😀 ünï" in text
    assert yaml.safe_load(text) == doc and list(yaml.safe_load(text)) == list(doc)
