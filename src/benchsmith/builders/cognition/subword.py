"""The two vocabularies of CoGnition's NMT baseline, both HF ``tokenizers`` models.

Li et al. (ACL 2021), Section 5.1: the English side is Moses-tokenised and lower-cased, without
BPE (vocabulary ~2,000); "The Chinese sentences are segmented by jieba segmenter. We employ BPE
with 3,000 merge operations, generating a vocabulary of 5,500 subwords."

* **Source** (:func:`source_vocab`): a ``WordLevel`` model over ``WhitespaceSplit`` words (the
  released English is tokenised already), learned by ``WordLevelTrainer``: every word of the
  training sources, most frequent first, ties in byte order (the hand-written ``Vocab`` it
  replaced used the same order: same ids, same results); unseen words are ``<unk>``.
* **Target** (:func:`target_bpe`): a ``BPE`` model over the jieba words of a space-segmented line
  (``WhitespaceSplit``: a word is never split further at punctuation, so decoding gives back the
  segmentation that went in). A subword that continues a word carries the prefix ``##``
  (``凝视 ##着``); the WordPiece decoder without clean-up glues it back, so
  ``decode(encode(s)) == " ".join(s.split())`` for every line whose characters were seen in
  training. A word that itself starts with ``##`` would be ambiguous: :func:`encode_targets`
  refuses it.
* **Number of merges**: subword-nmt counts merges, ``tokenizers`` stops at a vocabulary size. The
  trainer runs once with no merges to learn the alphabet (every character, its ``##`` form, the
  special tokens), then with ``vocab_size = alphabet + merges``: exactly ``merges`` merges
  (fewer only if no pair occurs ``min_frequency`` = 2 times, subword-nmt's default). With 3,000
  merges on CoGnition's validation split this gives 6,209 symbols: more than the paper's 5,500
  because each character appears both word-initially and as ``##`` form.
* **Reproducible**: the same lines give the same merges and ids in every run (see
  :func:`_train_bpe` for the work-around this needs in ``tokenizers`` 0.23).
* **Special tokens** take ids 0-3 on both sides: ``<pad>``, ``<s>`` (decoder start), ``</s>``,
  ``<unk>``.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from benchsmith.errors import ConfigError

PAD, BOS, EOS, UNK = "<pad>", "<s>", "</s>", "<unk>"
SPECIAL_TOKENS = (PAD, BOS, EOS, UNK)
PAD_ID, BOS_ID, EOS_ID, UNK_ID = range(4)
PREFIX = "##"
MIN_FREQUENCY = 2


def _words(model: Any) -> Any:
    from tokenizers import Tokenizer, decoders, pre_tokenizers

    tok = Tokenizer(model)
    tok.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    tok.decoder = decoders.WordPiece(prefix=PREFIX, cleanup=False)
    return tok


def source_vocab(lines: Sequence[str]) -> Any:
    """The word vocabulary of the training sources (see the module docstring)."""
    from tokenizers import models, trainers

    tok = _words(models.WordLevel(unk_token=UNK))
    trainer = trainers.WordLevelTrainer(vocab_size=1 << 31, special_tokens=[*SPECIAL_TOKENS],
                                        show_progress=False)
    tok.train_from_iterator(lines, trainer, length=len(lines))
    return tok


def _train_bpe(lines: Sequence[str], vocab_size: int) -> Any:
    """Train, then rebuild a plain BPE tokenizer from the learned vocabulary and merges.

    The ``##`` forms of every character are handed to the trainer first, in sorted order
    (as special tokens, so they get fixed ids): left to the trainer they get ids in hash-map
    order, and equal-count merges are broken by id, so two runs learned different merges
    (huggingface/tokenizers#1794). The rebuilt tokenizer holds them as ordinary symbols.
    """
    from tokenizers import models, trainers

    continuations = sorted({PREFIX + c for line in lines for w in line.split() for c in w[1:]})
    bpe = {"unk_token": UNK, "continuing_subword_prefix": PREFIX}
    trained = _words(models.BPE(**bpe))
    trainer = trainers.BpeTrainer(vocab_size=vocab_size, special_tokens=[*SPECIAL_TOKENS, *continuations],
                                  continuing_subword_prefix=PREFIX, min_frequency=MIN_FREQUENCY,
                                  show_progress=False)
    trained.train_from_iterator(lines, trainer, length=len(lines))
    model = json.loads(trained.to_str())["model"]
    tok = _words(models.BPE(vocab=model["vocab"], merges=[tuple(m) for m in model["merges"]], **bpe))
    tok.add_special_tokens(list(SPECIAL_TOKENS))
    return tok


def target_bpe(segmented: Sequence[str], merges: int = 3000) -> Any:
    """Learn ``merges`` merge operations from space-segmented lines."""
    if not isinstance(merges, int) or isinstance(merges, bool) or merges < 0:
        raise ConfigError(f"bpe_merges={merges!r}; expected a non-negative int")
    lines = [" ".join(s.split()) for s in segmented]
    if not any(lines):
        raise ConfigError("no target text to learn BPE from", hint="Pass non-empty training pairs")
    return _train_bpe(lines, _train_bpe(lines, 1).get_vocab_size() + merges)


def encode_targets(tok: Any, segmented: Sequence[str]) -> list[list[int]]:
    """Subword ids of space-segmented lines (no ``<s>`` / ``</s>``)."""
    for line in segmented:
        bad = next((w for w in line.split() if w.startswith(PREFIX)), None)
        if bad is not None:
            raise ConfigError(f"target word {bad!r} starts with the subword marker {PREFIX!r}",
                              hint="Such a word cannot be encoded reversibly; remove or rewrite it")
    return [e.ids for e in tok.encode_batch(list(segmented))]


def decode(tok: Any, ids: Sequence[int]) -> str:
    """Space-segmented words of ``ids``; special tokens other than ``<unk>`` are dropped."""
    return tok.decode([i for i in ids if i >= UNK_ID], skip_special_tokens=False)
