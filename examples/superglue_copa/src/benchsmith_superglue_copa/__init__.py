"""English COPA in SuperGLUE's layout: a benchsmith builder kept outside benchsmith's repository.

Generated with ``benchsmith new superglue_copa`` and filled in. Raw layout (``benchsmith sources
superglue_copa``): ``DIR/copa/datasets/copa-dev.xml`` and ``copa-test.xml`` of COPA-resources
(Roemmele et al., 2011), the files benchsmith's XCOPA builder also reads.

SuperGLUE's layout (Wang et al., 2019; the ``super_glue/copa`` features): ``premise``,
``choice1``, ``choice2``, ``question`` (``cause``/``effect``), ``idx`` (0-based within the
split) and ``label`` (0: choice1, 1: choice2). Splits: train = dev items 1-400, validation =
dev items 401-500, test = the test file's 500 items. Decision: the test labels are kept, as
COPA-resources publishes them (SuperGLUE withholds them for its leaderboard).
"""

from __future__ import annotations

import datasets

from benchsmith.builder import Builder, Config, Policy, register
from benchsmith.source import Source
from benchsmith_superglue_copa.copa_xml import read_items

FILES = {"train": "datasets/copa-dev.xml", "validation": "datasets/copa-dev.xml", "test": "datasets/copa-test.xml"}


def in_split(split: str, item_id: int) -> bool:
    """Which dev items are train (1-400) and which validation (401-500); the test file is test."""
    if split == "train":
        return item_id <= 400
    if split == "validation":
        return item_id > 400
    return True


@register
class SuperglueCopa(Builder):
    name = "superglue_copa"
    pretty_name = "COPA (SuperGLUE layout)"
    description = ("Choice of Plausible Alternatives: given a premise, pick the more plausible cause or effect of "
                   "two alternatives; English COPA in SuperGLUE's field layout.")
    release_notes = {"1.0.0": "COPA-resources as released, in SuperGLUE's layout"}  # noqa: RUF012
    citation = ("@inproceedings{roemmele2011choice, title={Choice of Plausible Alternatives: An Evaluation of "
                "Commonsense Causal Reasoning}, author={Roemmele, Melissa and Bejan, Cosmin Adrian and Gordon, "
                "Andrew S.}, booktitle={AAAI Spring Symposium}, year={2011}}")
    license = "BSD-2-Clause"
    homepage = "https://people.ict.usc.edu/~gordon/copa.html"
    task_categories = ("multiple-choice",)
    sources = (Source("copa", url="https://people.ict.usc.edu/~gordon/downloads/COPA-resources.tgz",
                      license="BSD-2-Clause", files=("datasets/copa-dev.xml", "datasets/copa-test.xml")),)

    def configs(self):
        features = datasets.Features({
            "premise": datasets.Value("string"),
            "choice1": datasets.Value("string"),
            "choice2": datasets.Value("string"),
            "question": datasets.Value("string"),
            "idx": datasets.Value("int32"),
            "label": datasets.ClassLabel(names=["choice1", "choice2"]),
        })
        policy = Policy(task="multiple_choice", id_field="idx", label="label", choices=("choice1", "choice2"),
                        context=("premise", "question"), text_fields=("premise", "choice1", "choice2"),
                        prompt="Which alternative is more plausible?")
        return [Config("default", "English COPA, SuperGLUE's fields and splits", features, policy=policy)]

    def examples(self, config, split, sources):
        idx = 0
        for item in read_items(sources.path("copa", FILES[split])):
            if in_split(split, item.id):
                yield {"premise": item.premise, "choice1": item.a1, "choice2": item.a2, "question": item.asks_for,
                       "idx": idx, "label": item.answer - 1}
                idx += 1
