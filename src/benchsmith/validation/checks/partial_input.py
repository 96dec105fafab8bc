"""Partial-input baselines: how far a model gets without the whole input.

Multiple-choice configs (``policy.choices``): a logistic regression scores
each option *alone* (no context, no position); the example's prediction is its
highest-scoring option (ties broken by a seeded coin). Classification configs
that declare ``policy.partial_input`` (e.g. ``["hypothesis"]``): a
multinomial logistic regression reads only those fields.

Where it is measured: when the config has a ``train`` and a ``test`` split, the model is
fitted on train and scored on test (the test split is what a user evaluates on, and what
the paper's partial-input probes report); otherwise by k-fold cross-validation (default 5
folds, seeded) over the distinct labeled examples of all splits pooled, and the result says
so. Exact repeats of an example's options are dropped (the first stays, in split order), so
a copy cannot be memorised across folds or from train into test; folds split examples,
never options of one example.

Features are binary unigrams and bigrams of the case-folded tokens of ``dataview``
(the token columns every check shares: nothing is tokenised again), hashed into
2^20 columns (:data:`HASH_BITS`; a token's hash is that of its string, so the
features do not depend on the process) and dropped when they occur in fewer than two
option texts (as ``min_df=2``; 1 below 50 texts). Only each option's sorted feature
indices are kept (4 bytes a feature); a mini-batch's sparse matrix is cut from them
when it is used, so memory stays small at a million examples.

The logistic regression (log loss, L2 ``alpha=1e-4``) is fitted by seeded SGD for a
fixed 10 epochs, out of core (:func:`cross_fit`): the rows are stored grouped by
fold in a seeded random order, so each fold trains on contiguous blocks of
:data:`BATCH_ROWS` rows, visited in a fresh order every epoch and shuffled within
(``partial_fit``: the learning-rate schedule runs on across blocks as in one ``fit``).
SGD rather than liblinear, whose time on near-separable sparse data grew erratically
with size; the features and the fit are both linear in the rows
(``benchmarks/validate_scaling.py``).

Against the earlier in-memory version (an exact ``CountVectorizer`` vocabulary and one
``fit`` of the whole matrix) the accuracy moves by sampling noise only: within
:func:`agreement_tolerance` (three binomial standard errors of the accuracy, at least
0.01) with the same verdicts on the test suite's planted-cue, length-cue, no-cue and
hypothesis-only fixtures (``tests/test_validation_artifacts.py``); on 50,000 synthetic
examples without a cue, 50.0% against 49.8%.

Gain = accuracy - chance, where chance is the mean of 1/(options) for multiple
choice and the majority-class share for classification. One gate rule for every
partial-input probe, this check and the gated model baselines alike
(:func:`artifact_verdict`): a gain that is *large* (at least the threshold) and
*significant* (one-sided binomial test against chance, p < 0.01) fails the gate,
unless the builder declares it as a known artifact with evidence
(``known_artifacts.yaml``, :mod:`benchsmith.validation.known_artifacts`): then it warns,
naming the declaration, and fails again only past the declared ``max_gain``. A declaration
covering the probe and config is attached to its result at any gain (a small gain still
points to what is known), without changing the verdict. A large gain
that is not significant (a handful of items) warns, as does a significant gain under the
threshold; anything else passes. The threshold is ``policy.partial_input_max_gain``, by
default :data:`DEFAULT_MAX_GAIN` (0.10: ten points over chance) for a true partial input
(the config declares ``context`` fields, or ``partial_input`` fields), and no threshold at
all when the options *are* the whole input (ComVE subtask A): an options-only model is
then a full-input model and its accuracy is reported, never gated. A known artifact is
declared, not hidden by raising the threshold.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
from scipy import sparse, stats

from benchsmith.validation.check import Check, CheckResult, Status
from benchsmith.validation.dataview import (
    VOCAB,
    ConfigView,
    as_text,
    configs,
    gather_ranges,
    sorted_unique,
    take_ranges,
)
from benchsmith.validation.known_artifacts import find

if TYPE_CHECKING:
    from benchsmith.release import Release

DEFAULT_MAX_GAIN = 0.1
FOLDS = 5
SEED = 0
MIN_EXAMPLES = 10
EPOCHS = 10
SIGNIFICANCE = 0.01
#: hashed feature columns: 2^20
HASH_BITS = 20
#: rows per SGD mini-batch (and per scoring pass)
BATCH_ROWS = 65_536
#: examples whose features are hashed per numpy pass
_FEATURE_BATCH = 32_768

#: hashes option keys (a name of its own so a test can force collisions)
_key_hash = hash
_M1, _M2 = np.uint64(0xFF51AFD7ED558CCD), np.uint64(0xC4CEB9FE1A85EC53)
_UNIGRAM_SALT, _BIGRAM_SALT = np.uint64(0x9E3779B97F4A7C15), np.uint64(0xD6E8FEB86659FD93)


def agreement_tolerance(accuracy: float, n: int) -> float:
    """How far this baseline's accuracy may sit from the earlier in-memory fit's on ``n``
    examples (see module docstring): 3 binomial standard errors, at least 0.01."""
    return max(0.01, 3 * float(np.sqrt(accuracy * (1 - accuracy) / max(n, 1))))


def max_gain(view: ConfigView) -> float | None:
    """The builder's gate threshold, or the documented default (see module docstring)."""
    declared = view.policy.partial_input_max_gain
    if declared is not None:
        return float(declared)
    mc = view.multiple_choice
    if mc is not None:
        return DEFAULT_MAX_GAIN if mc.context else None
    return DEFAULT_MAX_GAIN if view.policy.partial_input else None


def logistic_regression(seed: int = SEED) -> Any:
    """L2-regularised logistic regression fitted by SGD (see module docstring)."""
    # tol=None: always EPOCHS epochs, so the work per example is the same at any size
    from sklearn.linear_model import SGDClassifier  # imported when used: ~1.8 CPU s

    return SGDClassifier(loss="log_loss", alpha=1e-4, max_iter=EPOCHS, tol=None, random_state=seed)


# ----------------------------------------------------------------------------- features


def _fmix64(h: np.ndarray) -> np.ndarray:
    h = h ^ (h >> np.uint64(33))
    h = h * _M1
    h = h ^ (h >> np.uint64(33))
    h = h * _M2
    return h ^ (h >> np.uint64(33))


class SparseRows:
    """Binary sparse rows kept as sorted column indices only (no values): row ``i`` has ones
    at ``indices[indptr[i]:indptr[i + 1]]`` (4 bytes a feature)."""

    def __init__(self, indices: np.ndarray, indptr: np.ndarray, n_features: int) -> None:
        self.indices, self.indptr, self.n_features = indices, indptr, n_features
        self._ones = np.ones(0)

    @property
    def shape(self) -> tuple[int, int]:
        return len(self.indptr) - 1, self.n_features

    def take(self, rows: np.ndarray) -> SparseRows:
        """These rows, in this order (one pass over their features)."""
        starts = self.indptr[rows]
        lens = self.indptr[rows + 1] - starts
        indptr = np.zeros(len(rows) + 1, dtype=np.int64)
        np.cumsum(lens, out=indptr[1:])
        return SparseRows(take_ranges(self.indices, starts, lens), indptr, self.n_features)

    def block(self, lo: int, hi: int) -> sparse.csr_matrix:
        """Rows ``lo:hi`` as a CSR matrix of ones (views of the stored indices: no copy)."""
        a, b = int(self.indptr[lo]), int(self.indptr[hi])
        if len(self._ones) < b - a:
            self._ones = np.ones(b - a)  # one read-only array of ones serves every block
            self._ones.flags.writeable = False
        return sparse.csr_matrix((self._ones[: b - a], self.indices[a:b], self.indptr[lo : hi + 1] - a),
                                 shape=(hi - lo, self.n_features))


def hashed_features(token_runs: Sequence[tuple[np.ndarray, np.ndarray]], *, min_df: int | None = None) -> SparseRows:
    """Binary hashed unigram+bigram features, one row per token run.

    ``token_runs`` is a sequence of (token ids, offsets) blocks, one row per run of the
    block (``ids[offsets[i]:offsets[i + 1]]``), rows in block order. ``min_df``
    defaults to 2 from 50 rows, else 1 (as the module docstring says).
    """
    hashes = VOCAB.hashes()
    n_bits = np.uint64(64 - HASH_BITS)
    idx_parts: list[np.ndarray] = []
    len_parts: list[np.ndarray] = []
    for ids, offsets in token_runs:
        for lo in range(0, len(offsets) - 1, _FEATURE_BATCH):
            starts = offsets[lo : lo + _FEATURE_BATCH + 1]
            lens = np.diff(starts)
            pos = gather_ranges(starts[:-1], lens)
            owner = np.repeat(np.arange(len(lens), dtype=np.int64), lens)
            h = hashes[ids[pos]]
            inner = owner[:-1] == owner[1:]
            with np.errstate(over="ignore"):
                uni = _fmix64(h ^ _UNIGRAM_SALT)
                bi = _fmix64((h[:-1][inner] * _M1 + h[1:][inner]) ^ _BIGRAM_SALT)
            col = np.concatenate([uni, bi]) >> n_bits
            row = np.concatenate([owner, owner[:-1][inner]])
            keys = sorted_unique(row * np.int64(1 << HASH_BITS) + col.astype(np.int64))  # binary, sorted per row
            idx_parts.append((keys & ((1 << HASH_BITS) - 1)).astype(np.int32))
            len_parts.append(np.bincount(keys >> HASH_BITS, minlength=len(lens)))
    counts = np.concatenate(len_parts) if len_parts else np.zeros(0, dtype=np.int64)
    if min_df is None:
        min_df = 2 if len(counts) >= 50 else 1
    df = np.zeros(1 << HASH_BITS, dtype=np.int64)
    for part in idx_parts:
        df += np.bincount(part, minlength=1 << HASH_BITS)
    # Columns are renumbered by falling document frequency (ties by bucket), dropping the
    # rare ones: the model is the same up to a permutation of its weights, but the weights
    # SGD touches most sit together (a 2^20 weight vector scattered over 8 MB made every
    # update a cache miss: 2x slower).
    kept = np.flatnonzero(df >= min_df)
    ranked = kept[np.argsort(-df[kept], kind="stable")]
    column = np.full(1 << HASH_BITS, -1, dtype=np.int32)
    column[ranked] = np.arange(len(ranked), dtype=np.int32)
    for i, (part, n) in enumerate(zip(idx_parts, len_parts)):
        cols = column[part]
        keep = cols >= 0
        if not keep.all():
            owner = np.repeat(np.arange(len(n)), n)
            len_parts[i] = np.bincount(owner[keep], minlength=len(n))
            cols = cols[keep]
        # keep each row's columns sorted (CSR canonical form) after the renumbering
        idx_parts[i] = cols[np.lexsort((cols, np.repeat(np.arange(len(n)), len_parts[i])))]
    counts = np.concatenate(len_parts) if len_parts else np.zeros(0, dtype=np.int64)
    indptr = np.zeros(len(counts) + 1, dtype=np.int64)
    np.cumsum(counts, out=indptr[1:])
    indices = np.concatenate(idx_parts) if idx_parts else np.zeros(0, dtype=np.int32)
    return SparseRows(indices, indptr, max(len(ranked), 1))


def streamed_logistic_regression(seed: int = SEED) -> Any:
    """:func:`logistic_regression` for :func:`cross_fit`'s ``partial_fit`` calls: it shuffles each
    mini-batch with a generator that runs on across calls (an int seed would repeat one order)."""
    from sklearn.linear_model import SGDClassifier

    return SGDClassifier(loss="log_loss", alpha=1e-4, tol=None, shuffle=True,
                         random_state=np.random.RandomState(seed))


def cross_fit(
    features: SparseRows, targets: np.ndarray, fold_of_row: np.ndarray, *, seed: int = SEED, predict: bool = False,
    score_folds: Sequence[int] | None = None,
) -> np.ndarray:
    """Out-of-fold decision values (``predict``: predicted targets) of a logistic regression
    fitted out of core, one fold held out at a time.

    The rows are stored once, grouped by fold and in a seeded random order within a fold,
    so a fold's training rows are two contiguous ranges: each epoch visits their blocks of
    :data:`BATCH_ROWS` rows in a fresh seeded order and ``partial_fit`` shuffles within a
    block (the learning-rate schedule runs on across blocks as in one ``fit``); no
    matrix of more than one block is ever built. A fold whose training rows fit in one
    block (every real dataset today) is fitted by one ``fit`` of :data:`EPOCHS` epochs,
    shuffled every epoch by the seed: the same model as ten ``partial_fit`` calls on that
    block, but sklearn checks its input once instead of ten times (about 2.5 ms a call:
    XCOPA's 22 configs made 1,690 calls, 3.6 of its 12.3 CPU seconds of validation; one
    ``fit`` a fold: 0.5 s). A fold whose training rows hold one
    class only leaves its rows at 0 (``predict``: at that class). ``score_folds``: hold out only
    these folds (a train/test split is fold 1 and fold 0: one fit, test scored).
    """
    rng = np.random.default_rng(seed + 1)
    order = np.lexsort((rng.random(len(targets)), fold_of_row))
    stored, y = features.take(order), targets[order]
    bounds = np.searchsorted(fold_of_row[order], np.arange(int(fold_of_row.max(initial=-1)) + 2))
    out = np.zeros(len(targets), dtype=targets.dtype if predict else float)
    for f in range(len(bounds) - 1):
        lo, hi = int(bounds[f]), int(bounds[f + 1])
        if lo == hi or (score_folds is not None and f not in score_folds):
            continue
        blocks = [(a, min(a + BATCH_ROWS, b)) for a, b in ((0, lo), (hi, len(y))) for a in range(a, b, BATCH_ROWS)]
        classes = np.unique(np.concatenate([y[:lo], y[hi:]]))
        if len(classes) < 2:
            if predict and len(classes):
                out[order[lo:hi]] = classes[0]
            continue
        if len(y) - (hi - lo) <= BATCH_ROWS:
            # one block: one ``fit`` of EPOCHS epochs (see the docstring)
            model = logistic_regression(seed).fit(
                sparse.vstack([stored.block(0, lo), stored.block(hi, len(y))], format="csr"),
                np.concatenate([y[:lo], y[hi:]]))
        else:
            model = streamed_logistic_regression(seed)
            for _ in range(EPOCHS):
                for k in rng.permutation(len(blocks)).tolist():
                    a, b = blocks[k]
                    model.partial_fit(stored.block(a, b), y[a:b], classes=classes)
        for a in range(lo, hi, BATCH_ROWS):
            b = min(a + BATCH_ROWS, hi)
            m = stored.block(a, b)
            out[order[a:b]] = model.predict(m) if predict else model.decision_function(m)
    return out


def streamed_option_level_cv(
    features: SparseRows, owners: np.ndarray, labels: np.ndarray, n_options: np.ndarray, *, folds: int = FOLDS,
    seed: int = SEED, test: np.ndarray | None = None,
) -> np.ndarray:
    """:func:`option_level_cv` on :class:`SparseRows`, fitted out of core (:func:`cross_fit`):
    the same folds over examples and the same seeded tie-break. ``test`` (a boolean mask over
    examples): no folds, one fit on the other examples; only the test examples' predictions
    mean anything."""
    offsets = np.concatenate([[0], np.cumsum(n_options)]).astype(np.int64)
    position = np.arange(len(owners)) - offsets[owners]
    is_correct = (position == labels[owners]).astype(np.int64)
    scores = np.random.default_rng(seed).random(len(owners)) * 1e-9  # seeded tie-break between equal scores
    if test is not None:
        fold_of_example = np.where(test, 0, 1).astype(np.int64)
        scores += cross_fit(features, is_correct, fold_of_example[owners], seed=seed, score_folds=(0,))
        return best_option(scores, offsets)
    fold_of_example = np.zeros(len(labels), dtype=np.int64)
    from sklearn.model_selection import KFold

    kf = KFold(n_splits=min(folds, len(labels)), shuffle=True, random_state=seed)
    for f, (_train, held) in enumerate(kf.split(np.arange(len(labels)))):
        fold_of_example[held] = f
    scores += cross_fit(features, is_correct, fold_of_example[owners], seed=seed)
    return best_option(scores, offsets)


def streamed_classification_cv(features: SparseRows, labels: np.ndarray, *, folds: int = FOLDS,
                               seed: int = SEED) -> np.ndarray:
    """:func:`classification_cv` on :class:`SparseRows`, fitted out of core (:func:`cross_fit`)."""
    counts = np.bincount(labels)
    n_splits = max(2, min(folds, int(counts[counts > 0].min())))
    fold_of_row = np.zeros(len(labels), dtype=np.int64)
    from sklearn.model_selection import StratifiedKFold

    skf = StratifiedKFold(n_splits=n_splits, shuffle=True, random_state=seed)
    for f, (_train, test) in enumerate(skf.split(np.zeros(len(labels)), labels)):
        fold_of_row[test] = f
    return cross_fit(features, labels, fold_of_row, seed=seed, predict=True)


# ----------------------------------------------------------------------------- examples


def mc_examples(
    view: ConfigView, *, with_context: bool = False, splits: Sequence[str] | None = None,
) -> tuple[list[list[str]], np.ndarray, list[str] | None]:
    """Options, labels and (``with_context``) joined context texts of every distinct
    labeled multiple-choice example, all splits pooled (``splits``: only these, in this order).

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
    for split in view.splits if splits is None else splits:
        ctx_cols = [view.texts(split, c) for c in mc.context] if with_context else []
        ctx_rows = zip(*ctx_cols) if ctx_cols else itertools.repeat(())
        for opts, y, ctx in zip(view.options(split), view.labeled(split, mc.label), ctx_rows):
            if 0 <= y < len(opts) and len(opts) >= 2:
                key = option_key(opts)
                if key in seen:
                    continue
                seen.add(key)
                options.append(opts)
                labels.append(y)
                if contexts is not None:
                    contexts.append(" ".join(ctx))
    return options, np.asarray(labels, dtype=int), contexts


def option_key(options: Sequence[str]) -> tuple[str, ...]:
    """What makes two examples' options the same: each option case- and spacing-folded."""
    return tuple(" ".join(o.split()).casefold() for o in options)


def _option_texts(view: ConfigView, split: str, rows: np.ndarray | None = None) -> Any:
    """Each row's option strings: every row in batches (``rows`` None), or the given rows."""
    mc = view.multiple_choice
    assert mc is not None
    fields = [mc.list_field] if mc.list_field else list(mc.choices)
    if rows is not None:
        got = view.take(split, fields, rows)
        cols = [got[f] for f in fields]
        yield from _rows_of(mc.list_field, cols)
        return
    for batch in view.batches(split, fields):
        yield from _rows_of(mc.list_field, [batch.column(f).to_pylist() for f in fields])


def _rows_of(list_field: str | None, cols: list[list[Any]]) -> Any:
    if list_field:
        return ([as_text(o) for o in (row or [])] for row in cols[0])
    return (list(map(as_text, row)) for row in zip(*cols))


def distinct_mc_rows(view: ConfigView) -> list[tuple[str, np.ndarray]]:
    """``[(split, rows)]``: the rows :func:`mc_examples` keeps (labeled, at least two options,
    options not repeating an earlier example's), in pooled order.

    One 64-bit hash of :func:`option_key` per usable row; only rows whose hash repeats are
    read again and compared on the exact key, so a hash collision never drops an example.
    """
    mc = view.multiple_choice
    assert mc is not None
    usable: dict[str, np.ndarray] = {}
    hashes: list[np.ndarray] = []
    for split in view.splits:
        y = view.label_array(split, mc.label)
        k = view.option_tokens(split).counts()
        ok = np.flatnonzero((y >= 0) & (y < k) & (k >= 2))
        usable[split] = ok
        mask = np.zeros(len(y), dtype=bool)
        mask[ok] = True
        hashes.append(np.fromiter((_key_hash(option_key(o)) for o, m in zip(_option_texts(view, split), mask) if m),
                                  dtype=np.int64, count=len(ok)))
    pooled = np.concatenate(hashes) if hashes else np.zeros(0, dtype=np.int64)
    _, first, inverse, counts = np.unique(pooled, return_index=True, return_inverse=True, return_counts=True)
    keep = np.zeros(len(pooled), dtype=bool)
    keep[first[counts == 1]] = True
    repeated = np.flatnonzero(counts[inverse] > 1)  # pooled positions whose hash repeats
    if len(repeated):
        bases = np.cumsum([0] + [len(usable[s]) for s in view.splits])
        seen: set[tuple[str, ...]] = set()
        keys: dict[int, tuple[str, ...]] = {}
        for i, split in enumerate(view.splits):
            sel = repeated[(repeated >= bases[i]) & (repeated < bases[i + 1])]
            if len(sel):
                opts = _option_texts(view, split, usable[split][sel - bases[i]])
                keys.update(zip(sel.tolist(), map(option_key, opts)))
        for pos in repeated.tolist():  # pooled order: the first of each exact key stays
            if keys[pos] not in seen:
                seen.add(keys[pos])
                keep[pos] = True
    out, start = [], 0
    for split in view.splits:
        n = len(usable[split])
        out.append((split, usable[split][keep[start : start + n]]))
        start += n
    return out


def partial_input_examples(view: ConfigView) -> tuple[list[str], list[str], np.ndarray]:
    """The declared ``partial_input`` fields, each labeled example's text over them
    (fields joined by a space) and its label, all splits pooled."""
    fields = [f for f in view.policy.partial_input if f in view.features]
    lf = view.label_field
    texts: list[str] = []
    labels: list[int] = []
    if lf is None:  # no label: no labeled example
        return fields, texts, np.asarray(labels, dtype=int)
    for split in view.splits:
        cols = [view.column(split, f) for f in fields]
        for y, *vals in zip(view.labeled(split, lf), *cols):
            if y >= 0:
                texts.append(" ".join(as_text(v) for v in vals))
                labels.append(y)
    return fields, texts, np.asarray(labels, dtype=int)


def _joined_tokens(view: ConfigView, split: str, fields: Sequence[str], rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(ids, offsets): for each row, the tokens of its fields one after the other (the
    tokens of the fields' texts joined by spaces)."""
    cols = [view.token_column(split, f) for f in fields]
    lens = np.stack([c.lengths()[rows] for c in cols], axis=1) if cols else np.zeros((len(rows), 0), dtype=np.int64)
    base = np.cumsum([0] + [len(c.ids) for c in cols[:-1]])
    starts = np.stack([b + c.row_offsets[:-1][rows] for b, c in zip(base, cols)], axis=1) if cols else lens
    ids = take_ranges(np.concatenate([c.ids for c in cols]) if cols else np.zeros(0, dtype=np.int32),
                      starts.ravel(), lens.ravel())
    offsets = np.zeros(len(rows) + 1, dtype=np.int64)
    np.cumsum(lens.sum(axis=1), out=offsets[1:])
    return ids, offsets


# ----------------------------------------------------------------------------- cross-validation


def option_level_cv(
    features: Any, owners: np.ndarray, labels: np.ndarray, n_options: np.ndarray, *, folds: int = FOLDS,
    seed: int = SEED, make_model: Callable[[], Any] | None = None, test: np.ndarray | None = None,
) -> np.ndarray:
    """Cross-validated predicted option index per example.

    ``features`` has one row per option, in example order (a matrix in memory: the
    model baselines' embeddings; :func:`streamed_option_level_cv` is the out-of-core
    version); ``owners[r]`` is the example of row ``r``. A binary classifier learns "is this
    option correct"; each held-out example takes its best-scoring option.
    """
    make_model = make_model or (lambda: logistic_regression(seed))
    offsets = np.concatenate([[0], np.cumsum(n_options)]).astype(np.int64)
    position = np.arange(len(owners)) - offsets[owners]
    is_correct = (position == labels[owners]).astype(int)
    rng = np.random.default_rng(seed)
    scores = rng.random(len(owners)) * 1e-9  # seeded tie-break between equal scores
    from sklearn.model_selection import KFold

    kf = KFold(n_splits=min(folds, len(labels)), shuffle=True, random_state=seed)
    in_train = np.zeros(len(labels), dtype=bool)
    folds_ = [(np.flatnonzero(~test), None)] if test is not None else kf.split(np.arange(len(labels)))
    for train_ex, _test_ex in folds_:
        in_train[:] = False
        in_train[train_ex] = True
        train_rows = in_train[owners]
        test_rows = ~train_rows
        if len(np.unique(is_correct[train_rows])) < 2:
            continue  # nothing to learn: all test scores stay at the tie-break
        model = make_model()
        model.fit(features[train_rows], is_correct[train_rows])
        scores[test_rows] += np.asarray(model.decision_function(features[test_rows]), dtype=float)
    return best_option(scores, offsets)


def best_option(scores: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """Per example, the position of its highest score (the first on a tie, as ``argmax``)."""
    n_options = np.diff(offsets)
    if len(n_options) and (n_options == n_options[0]).all() and n_options[0] > 0:
        return np.argmax(scores.reshape(len(n_options), int(n_options[0])), axis=1)
    return np.array([int(np.argmax(scores[offsets[e] : offsets[e + 1]])) for e in range(len(n_options))])


def classification_cv(
    features: Any, labels: np.ndarray, *, folds: int = FOLDS, seed: int = SEED,
    make_model: Callable[[], Any] | None = None,
) -> np.ndarray:
    """Cross-validated predictions of a multinomial logistic regression (features in memory)."""
    make_model = make_model or (lambda: logistic_regression(seed))
    counts = np.bincount(labels)
    n_splits = max(2, min(folds, int(counts[counts > 0].min())))
    from sklearn.model_selection import StratifiedKFold

    skf = StratifiedKFold(n_splits=n_splits, shuffle=True, random_state=seed)
    pred = np.empty_like(labels)
    for tr, te in skf.split(np.zeros(len(labels)), labels):
        model = make_model()
        model.fit(features[tr], labels[tr])
        pred[te] = model.predict(features[te])
    return pred


def artifact_verdict(
    *, accuracy: float, chance: float, n: int, threshold: float | None, probe: str, config: str,
    known: Sequence[Any] = (),
) -> dict[str, Any]:
    """The one gate rule of a partial-input probe (see module docstring): ``status``
    (pass/warn/fail), the figures, the declaration that explains it (``known_artifact``) and
    ``why`` in words. ``probe`` is ``partial_input`` or a baseline spec's name; ``known`` the
    builder's :class:`~benchsmith.validation.known_artifacts.KnownArtifact` declarations."""
    gain = accuracy - chance
    p = float(stats.binomtest(round(accuracy * n), n, chance, alternative="greater").pvalue) if n else 1.0
    significant = p < SIGNIFICANCE
    large = threshold is not None and gain >= threshold - 1e-9
    declared = find(known, probe, config) if threshold is not None else None
    reasons: list[str] = []
    if large and significant:
        if declared is not None and gain <= declared.max_gain + 1e-9:
            status = "warn"
            reasons.append(f"known artifact {declared.id!r} (declared up to {declared.max_gain:+.0%}): "
                           f"{declared.what}; evidence: {declared.evidence}")
        elif declared is not None:
            status = "fail"
            reasons.append(f"gain {gain:+.1%} exceeds the known artifact {declared.id!r} as declared "
                           f"(up to {declared.max_gain:+.0%}): the artifact got worse")
        else:
            status = "fail"
            reasons.append(f"gain over chance {gain:+.1%} >= {threshold:.0%} and significant (p={p:.2g}): an "
                           "undeclared artifact; remove the cue, or declare it with evidence in known_artifacts.yaml")
    elif large:
        status = "warn"
        reasons.append(f"gain {gain:+.1%} >= {threshold:.0%} but not significant on {n} items (p={p:.2g}): "
                       "too few to fail the gate")
    elif significant:
        status = "warn"
        reasons.append(f"significant gain over chance (p={p:.2g})" +
                       (f" within the threshold {threshold:.0%}" if threshold is not None else ""))
    else:
        status = "pass"
    if declared is not None and not (large and significant):  # the pointer at any gain, the verdict unchanged
        reasons.append(f"known artifact {declared.id!r} declared for this probe (up to {declared.max_gain:+.0%}): "
                       f"{declared.what}")
    return {"status": status, "accuracy": round(accuracy, 4), "chance": round(chance, 4), "gain": round(gain, 4),
            "n": n, "p_value": p, "max_gain": threshold,
            "known_artifact": declared.to_dict() if declared is not None else None,
            "why": "; ".join(reasons)}


def verdict(
    check: Check, view: ConfigView, *, accuracy: float, chance: float, n: int, what: str, extra: dict[str, Any],
    known: Sequence[Any] = (),
) -> CheckResult:
    """Turn a partial-input accuracy into pass / warn / fail (:func:`artifact_verdict`)."""
    threshold = max_gain(view)
    v = artifact_verdict(accuracy=accuracy, chance=chance, n=n, threshold=threshold, probe=check.name,
                         config=view.config, known=known)
    metrics = {k: v[k] for k in ("accuracy", "chance", "gain", "n", "p_value", "max_gain")}
    text = f"{what}: {accuracy:.1%} vs chance {chance:.1%} (gain {v['gain']:+.1%}, n={n}"
    text += "; not gated: the options are the whole input)" if threshold is None else f"; max gain {threshold:.0%})"
    text += f", {extra.get('evaluation', 'cross-validated')}"
    if v["why"]:
        text += f": {v['why']}"
    details = {**extra, "known_artifact": v["known_artifact"], "why": v["why"]}
    return check.result(Status(v["status"]), text, config=view.config, metrics=metrics, details=details)


class PerConfigBaseline(Check):
    """A baseline run per config: ``_mc`` for multiple choice, ``_classification`` where the
    builder declared ``partial_input`` fields, skipped otherwise."""

    def _mc(self, view: ConfigView) -> CheckResult:
        raise NotImplementedError

    def _classification(self, view: ConfigView) -> CheckResult:
        raise NotImplementedError

    def run(self, release: Release) -> list[CheckResult]:
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


FEATURES = f"binary unigram+bigram, hashed to 2^{HASH_BITS}"


def holdout(view: ConfigView) -> bool:
    """Whether the probe trains on ``train`` and scores ``test`` (see module docstring)."""
    return "train" in view.splits and "test" in view.splits


def _where(view: ConfigView, used_holdout: bool) -> str:
    if used_holdout:
        return "trained on train, scored on test"
    why = "no train and test split" if not holdout(view) else "too few labeled train or test examples"
    return f"{FOLDS}-fold cross-validated over all splits pooled ({why})"


class PartialInputCheck(PerConfigBaseline):
    """Options-only / partial-input logistic regression (runs with ``--baselines cheap|model``).

    ``known_artifacts``: the builder's declarations (the runner sets them), which turn a
    failing probe into a warning up to their ``max_gain``."""

    name = "partial_input"
    cacheable = True  # reads the release's data only (validation/result_cache.py)
    concurrent = True  # scikit-learn's import (~1.5 CPU s) and the fits overlap the other checks
    family = "artifacts"
    topic = 'a partial-input probe beats chance'
    why = ('a model that sees only part of the input (the options, the hypothesis) scores above '
        'chance: an annotation artifact that changes what a paper may claim from the full-input '
        'score')
    todo = ('declare the artifact with its evidence (paper, our measurement) in known_artifacts.yaml, '
        'or remove the cue in the builder; never raise the threshold')
    figure_metric = 'gain'

    def __init__(self, known_artifacts: Sequence[Any] = ()) -> None:
        self.known_artifacts = list(known_artifacts)

    def imports(self, release: Release) -> tuple[str, ...]:
        """scikit-learn (~1.5 CPU s), when some config has a probe to fit (``Check.imports``:
        imported by the worker while the tokens are made; MuCoW has none, and none is imported)."""
        fits = any(v.multiple_choice is not None or (v.policy.partial_input and v.label_field)
                   for v in configs(release))
        return ("sklearn.linear_model",) if fits else ()

    def prepare(self, release: Release) -> None:
        """Tokenise the fields the probe reads, in validate's process while the worker imports
        scikit-learn (``Check.prepare``): ``lengths``, ``cues`` and the cheap baselines read the
        same token columns there, and the worker is sent them instead of tokenising them again
        (~1 CPU s on ComVE; validation/runner.py)."""
        for view in configs(release):
            mc = view.multiple_choice
            if mc is not None:
                fields = [mc.list_field] if mc.list_field else list(mc.choices)
            elif view.policy.partial_input and view.label_field:
                fields = [f for f in view.policy.partial_input if f in view.features]
            else:
                continue
            for split in view.splits:
                for f in fields:
                    view.token_column(split, f)

    def _mc(self, view: ConfigView) -> CheckResult:
        mc = view.multiple_choice
        assert mc is not None
        kept = distinct_mc_rows(view)
        split_sizes = {s: len(r) for s, r in kept}
        use_holdout = holdout(view) and min(split_sizes.get("train", 0), split_sizes.get("test", 0)) >= MIN_EXAMPLES
        if use_holdout:
            kept = [(s, r) for s, r in kept if s in ("train", "test")]
        labels = np.concatenate([view.label_array(s, mc.label)[r] for s, r in kept])
        if len(labels) < MIN_EXAMPLES:
            return self.result(Status.SKIP, f"only {len(labels)} labeled examples", config=view.config)
        runs, n_options = [], []
        for split, rows in kept:
            opts = view.option_tokens(split)
            k = opts.counts()[rows]
            options = gather_ranges(opts.row_offsets[rows], k)  # the kept rows' options, in order
            lens = opts.offsets[options + 1] - opts.offsets[options]
            offsets = np.zeros(len(options) + 1, dtype=np.int64)
            np.cumsum(lens, out=offsets[1:])
            runs.append((take_ranges(opts.ids, opts.offsets[options], lens), offsets))
            n_options.append(k)
        n_opt = np.concatenate(n_options)
        owners = np.repeat(np.arange(len(labels)), n_opt)
        features = hashed_features(runs)
        test = np.concatenate([np.full(len(r), s == "test") for s, r in kept]) if use_holdout else None
        pred = streamed_option_level_cv(features, owners, labels, n_opt, test=test)
        scored = test if test is not None else np.ones(len(labels), dtype=bool)
        accuracy = float(np.mean(pred[scored] == labels[scored]))
        chance = float(np.mean(1 / n_opt[scored]))
        return verdict(self, view, accuracy=accuracy, chance=chance, n=int(scored.sum()),
                       what="options-only logistic regression", known=self.known_artifacts,
                       extra={"evaluation": _where(view, use_holdout), "folds": None if use_holdout else FOLDS,
                              "seed": SEED, "features": FEATURES, "epochs": EPOCHS})

    def _classification(self, view: ConfigView) -> CheckResult:
        fields = [f for f in view.policy.partial_input if f in view.features]
        lf = view.label_field
        assert lf is not None
        labeled = {s: np.flatnonzero(view.label_array(s, lf) >= 0) for s in view.splits}
        use_holdout = holdout(view) and min(len(labeled["train"]), len(labeled["test"])) >= MIN_EXAMPLES
        splits = ["train", "test"] if use_holdout else list(view.splits)
        runs, labels_ = [], []
        for split in splits:
            rows = labeled[split]
            runs.append(_joined_tokens(view, split, fields, rows))
            labels_.append(view.label_array(split, lf)[rows])
        labels = np.concatenate(labels_) if labels_ else np.zeros(0, dtype=np.int64)
        if len(labels) < MIN_EXAMPLES or len(np.unique(labels)) < 2:
            return self.result(Status.SKIP, f"only {len(labels)} labeled examples", config=view.config)
        if use_holdout:
            test = np.concatenate([np.full(len(labeled[s]), s == "test") for s in splits])
            pred = cross_fit(hashed_features(runs), labels, np.where(test, 0, 1).astype(np.int64), predict=True,
                             score_folds=(0,))
            labels, pred = labels[test], pred[test]
        else:
            pred = streamed_classification_cv(hashed_features(runs), labels)
        # the majority share of the scored labels: no constant guess beats it
        chance = float(np.bincount(labels).max() / len(labels))
        accuracy = float(np.mean(pred == labels))
        return verdict(self, view, accuracy=accuracy, chance=chance, n=len(labels),
                       what=f"{'+'.join(fields)}-only logistic regression", known=self.known_artifacts,
                       extra={"evaluation": _where(view, use_holdout), "fields": fields,
                              "folds": None if use_holdout else FOLDS, "seed": SEED, "features": FEATURES})
