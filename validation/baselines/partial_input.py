"""Partial-input baselines: how far a model gets without the whole input.

Multiple-choice configs (``policy.choices``): a logistic regression scores
each option *alone* (no context, no position); the example's prediction is its
highest-scoring option (ties broken by a seeded coin). Classification configs
that declare ``policy.partial_input`` (e.g. ``["hypothesis"]``): a
multinomial logistic regression reads only those fields.

Accuracy is measured by k-fold cross-validation (default 5 folds, seeded) over
the distinct labeled examples of all splits pooled (exact repeats of an example's
options are dropped, so a copy cannot be memorised across folds); folds split examples, never options of
one example. Features are binary unigram+bigram counts of the tokenizer in
``dataview`` (``min_df=2``), fitted on all texts (unsupervised, so no label leaks).
The logistic regression (log loss, L2 ``alpha=1e-4``) is fitted by seeded SGD for a
fixed 10 epochs rather than by liblinear: liblinear's time on near-separable
sparse data grew erratically with size (5.8 s on 40k options, i.e. most of an
audit), while SGD is linear, so the audit scales (``benchmarks/audit_scaling.py``).

Gain = accuracy - chance, where chance is the mean of 1/(options) for multiple
choice and the majority-class share for classification. The gate threshold is
``policy.partial_input_max_gain``: a gain above it fails. When the builder
sets none, the default is 0.2 for a true partial input (the config declares
``context`` fields, or ``partial_input`` fields) and no threshold at all when the
options *are* the whole input (ComVE subtask A): an options-only model is then a
full-input model and its accuracy is reported, never gated. A gain that is
significant (one-sided binomial test, p < 0.01) but within the threshold warns.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from benchsmith.validation.check import Check, CheckResult, Status
from benchsmith.validation.dataview import ConfigView, as_text, configs, tokens
from scipy import sparse, stats
from sklearn.feature_extraction.text import CountVectorizer
from sklearn.linear_model import SGDClassifier
from sklearn.model_selection import KFold, StratifiedKFold

DEFAULT_MAX_GAIN = 0.2
FOLDS = 5
SEED = 0
MIN_EXAMPLES = 10
EPOCHS = 10
SIGNIFICANCE = 0.01


def max_gain(view: ConfigView) -> float | None:
    """The builder's gate threshold, or the documented default (see module docstring)."""
    declared = view.policy.partial_input_max_gain
    if declared is not None:
        return float(declared)
    mc = view.multiple_choice
    if mc is not None:
        return DEFAULT_MAX_GAIN if mc.context else None
    return DEFAULT_MAX_GAIN if view.policy.partial_input else None


def logistic_regression(seed: int = SEED) -> SGDClassifier:
    """L2-regularised logistic regression fitted by SGD (see module docstring)."""
    # tol=None: always EPOCHS epochs, so the work per example is the same at any size
    return SGDClassifier(loss="log_loss", alpha=1e-4, max_iter=EPOCHS, tol=None, random_state=seed)


def _lower_tokens(text: str) -> list[str]:
    return [t.casefold() for t in tokens(text)]


def bow(texts: Sequence[str]) -> sparse.csr_matrix:
    """Binary unigram+bigram features (min_df=2, or 1 for tiny inputs)."""
    vec = CountVectorizer(
        tokenizer=_lower_tokens, lowercase=False, token_pattern=None, ngram_range=(1, 2), binary=True,
        min_df=2 if len(texts) >= 50 else 1,
    )
    try:
        return vec.fit_transform(texts).tocsr()
    except ValueError:  # empty vocabulary: every text empty -> one constant column
        return sparse.csr_matrix(np.ones((len(texts), 1)))


def mc_examples(
    view: ConfigView, *, with_context: bool = False
) -> tuple[list[list[str]], np.ndarray, list[str] | None]:
    """Options, labels and (``with_context``) joined context texts of every distinct
    labeled multiple-choice example, all splits pooled.

    An example whose options repeat an earlier one's (case and spacing folded) is
    left out: a copy in another fold would be memorised, not generalised from
    (ComVE's trial split repeats 60% of train). Its context is left out with it, so
    ``contexts[i]`` always belongs to ``options[i]``; contexts are None unless asked for.
    """
    mc = view.multiple_choice
    assert mc is not None  # callers check
    options, labels = [], []
    contexts: list[str] | None = [] if with_context else None
    seen: set[tuple[str, ...]] = set()
    for split in view.splits:
        ctx_cols = [view.texts(split, c) for c in mc.context] if with_context else []
        ctx_rows = zip(*ctx_cols) if ctx_cols else itertools.repeat(())
        for opts, y, ctx in zip(view.options(split), view.labeled(split, mc.label), ctx_rows):
            if 0 <= y < len(opts) and len(opts) >= 2:
                key = tuple(" ".join(o.split()).casefold() for o in opts)
                if key in seen:
                    continue
                seen.add(key)
                options.append(opts)
                labels.append(y)
                if contexts is not None:
                    contexts.append(" ".join(ctx))
    return options, np.asarray(labels, dtype=int), contexts


def partial_input_examples(view: ConfigView) -> tuple[list[str], list[str], np.ndarray]:
    """The declared ``partial_input`` fields, each labeled example's text over them
    (fields joined by a space) and its label, all splits pooled."""
    fields = [f for f in view.policy.partial_input if f in view.features]
    lf = view.label_field
    texts, labels = [], []
    for split in view.splits:
        cols = [view.column(split, f) for f in fields]
        for y, *vals in zip(view.labeled(split, lf), *cols):
            if y >= 0:
                texts.append(" ".join(as_text(v) for v in vals))
                labels.append(y)
    return fields, texts, np.asarray(labels, dtype=int)


def option_level_cv(
    features: Any, owners: np.ndarray, labels: np.ndarray, n_options: np.ndarray, *, folds: int = FOLDS,
    seed: int = SEED, make_model: Callable[[], Any] | None = None,
) -> np.ndarray:
    """Cross-validated predicted option index per example.

    ``features`` has one row per option, in example order; ``owners[r]`` is the
    example of row ``r``. A binary classifier learns "is this option correct";
    each held-out example takes its best-scoring option.
    """
    make_model = make_model or (lambda: logistic_regression(seed))
    offsets = np.concatenate([[0], np.cumsum(n_options)])
    position = np.arange(len(owners)) - offsets[owners]
    is_correct = (position == labels[owners]).astype(int)
    rng = np.random.default_rng(seed)
    scores = rng.random(len(owners)) * 1e-9  # seeded tie-break between equal scores
    kf = KFold(n_splits=min(folds, len(labels)), shuffle=True, random_state=seed)
    for train_ex, _test_ex in kf.split(np.arange(len(labels))):
        train_rows = np.isin(owners, train_ex)
        test_rows = ~train_rows
        if len(np.unique(is_correct[train_rows])) < 2:
            continue  # nothing to learn: all test scores stay at the tie-break
        model = make_model()
        model.fit(features[train_rows], is_correct[train_rows])
        scores[test_rows] += np.asarray(model.decision_function(features[test_rows]), dtype=float)
    pred = np.array([int(np.argmax(scores[offsets[e] : offsets[e + 1]])) for e in range(len(labels))])
    return pred


def classification_cv(features: Any, labels: np.ndarray, *, folds: int = FOLDS, seed: int = SEED) -> np.ndarray:
    """Cross-validated predictions of a multinomial logistic regression."""
    counts = np.bincount(labels)
    n_splits = max(2, min(folds, int(counts[counts > 0].min())))
    skf = StratifiedKFold(n_splits=n_splits, shuffle=True, random_state=seed)
    pred = np.empty_like(labels)
    for tr, te in skf.split(np.zeros(len(labels)), labels):
        model = logistic_regression(seed)
        model.fit(features[tr], labels[tr])
        pred[te] = model.predict(features[te])
    return pred


def verdict(
    check: Check, view: ConfigView, *, accuracy: float, chance: float, n: int, what: str, extra: dict[str, Any]
) -> CheckResult:
    """Turn a partial-input accuracy into pass / warn / fail (see module docstring)."""
    threshold = max_gain(view)
    gain = accuracy - chance
    p = float(stats.binomtest(round(accuracy * n), n, chance, alternative="greater").pvalue)
    metrics = {"accuracy": round(accuracy, 4), "chance": round(chance, 4), "gain": round(gain, 4), "n": n,
               "p_value": p, "max_gain": threshold}
    text = f"{what}: {accuracy:.1%} vs chance {chance:.1%} (gain {gain:+.1%}, n={n}"
    if threshold is None:
        text += "; not gated: the options are the whole input)"
    else:
        text += f"; max gain {threshold:.0%})"
    if threshold is not None and gain > threshold:
        status = Status.FAIL
    elif p < SIGNIFICANCE:
        status = Status.WARN
    else:
        status = Status.PASS
    return check.result(status, text, config=view.config, metrics=metrics, details=extra)


class PerConfigBaseline(Check):
    """A baseline run per config: ``_mc`` for multiple choice, ``_classification`` where the
    builder declared ``partial_input`` fields, skipped otherwise."""

    def _mc(self, view: ConfigView) -> CheckResult:
        raise NotImplementedError

    def _classification(self, view: ConfigView) -> CheckResult:
        raise NotImplementedError

    def run(self, release: Any) -> list[CheckResult]:
        out = []
        for view in configs(release):
            if view.multiple_choice is not None:
                out.append(self._mc(view))
            elif view.policy.partial_input and view.label_field:
                out.append(self._classification(view))
            else:
                out.append(self.result(Status.SKIP, "no options and no partial_input fields declared",
                                       config=view.config))
        return out


class PartialInputCheck(PerConfigBaseline):
    """Options-only / partial-input logistic regression (runs with ``--baselines cheap|model``)."""

    name = "partial_input"
    family = "artifacts"

    def _mc(self, view: ConfigView) -> CheckResult:
        options, labels, _ = mc_examples(view)
        if len(labels) < MIN_EXAMPLES:
            return self.result(Status.SKIP, f"only {len(labels)} labeled examples", config=view.config)
        n_options = np.asarray([len(o) for o in options])
        owners = np.repeat(np.arange(len(options)), n_options)
        features = bow([o for opts in options for o in opts])
        pred = option_level_cv(features, owners, labels, n_options)
        accuracy = float(np.mean(pred == labels))
        chance = float(np.mean(1 / n_options))
        return verdict(self, view, accuracy=accuracy, chance=chance, n=len(labels),
                       what="options-only logistic regression", extra={"folds": FOLDS, "seed": SEED,
                                                                       "features": "binary unigram+bigram"})

    def _classification(self, view: ConfigView) -> CheckResult:
        fields, texts, labels_ = partial_input_examples(view)
        if len(labels_) < MIN_EXAMPLES or len(np.unique(labels_)) < 2:
            return self.result(Status.SKIP, f"only {len(labels_)} labeled examples", config=view.config)
        pred = classification_cv(bow(texts), labels_)
        accuracy = float(np.mean(pred == labels_))
        chance = float(np.bincount(labels_).max() / len(labels_))
        return verdict(self, view, accuracy=accuracy, chance=chance, n=len(labels_),
                       what=f"{'+'.join(fields)}-only logistic regression",
                       extra={"fields": fields, "folds": FOLDS, "seed": SEED})
