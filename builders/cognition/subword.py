"""Byte-pair encoding of the target side (Chinese words from jieba) with the HF ``tokenizers`` library.

CoGnition's NMT baseline (Li et al., ACL 2021, Section 5.1): "The Chinese sentences are
segmented by jieba segmenter. We employ BPE with 3,000 merge operations, generating a
vocabulary of 5,500 subwords." :class:`TargetBPE` learns that encoding with
``tokenizers``' BPE model and trainer; nothing here hand-writes merges.

Decisions:

* **Pre-tokenisation** is ``WhitespaceSplit``: a "word" is exactly one jieba word of the
  space-segmented input, never split further at punctuation, so decoding gives back the
  segmentation that went in.
* **Markers**: a subword that continues a word carries the prefix ``##``
  (``凝视 ##着``); decoding (``tokenizers``' WordPiece decoder without clean-up) glues it
  to the previous piece. ``decode(encode(s)) == " ".join(s.split())`` for every line whose
  characters were seen in training (an unseen character becomes ``<unk>``). A word that
  itself starts with ``##`` would be ambiguous, so :meth:`TargetBPE.encode` refuses it.
* **Number of merges**: subword-nmt counts merge operations; ``tokenizers`` stops at a
  vocabulary size. The trainer is run once with no merges to learn the initial alphabet
  (every character, plus its ``##`` continuation form, plus the special tokens), then
  with ``vocab_size = alphabet + merges``, so exactly ``merges`` merges are learned
  (fewer only if no pair occurs ``min_frequency`` = 2 times, subword-nmt's default).
  With 3,000 merges on CoGnition's validation split this gives 6,209 symbols: more than the
  paper's 5,500 because each character appears both word-initially and as ``##`` form.
* **Reproducible**: the same lines give the same merges and ids in every run (see
  :func:`_train` for the work-around this needs in ``tokenizers`` 0.23).
* **Special tokens** take ids 0-3: ``<pad>``, ``<s>`` (decoder start), ``</s>``, ``<unk>``,
  shared with the NMT model (:mod:`.seq2seq`).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from pathlib import Path

from benchsmith.errors import ConfigError

PAD, BOS, EOS, UNK = "<pad>", "<s>", "</s>", "<unk>"
SPECIAL_TOKENS = (PAD, BOS, EOS, UNK)
PAD_ID, BOS_ID, EOS_ID, UNK_ID = range(4)
PREFIX = "##"
MIN_FREQUENCY = 2


def _new_tokenizer():
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers

    tok = Tokenizer(models.BPE(unk_token=UNK, continuing_subword_prefix=PREFIX))
    tok.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    tok.decoder = decoders.WordPiece(prefix=PREFIX, cleanup=False)
    return tok


def _train(lines: Sequence[str], vocab_size: int):
    """Train, then rebuild a plain BPE tokenizer from the learned vocabulary and merges.

    The ``##`` forms of every character are handed to the trainer first, in sorted order
    (as special tokens, so they get fixed ids): left to the trainer they get ids in hash-map
    order, and equal-count merges are broken by id, so two runs learned different merges
    (huggingface/tokenizers#1794). The rebuilt tokenizer holds them as ordinary symbols.
    """
    import json

    from tokenizers import models, trainers

    continuations = sorted({PREFIX + c for line in lines for w in line.split() for c in w[1:]})
    trained = _new_tokenizer()
    trainer = trainers.BpeTrainer(vocab_size=vocab_size, special_tokens=[*SPECIAL_TOKENS, *continuations],
                                  continuing_subword_prefix=PREFIX, min_frequency=MIN_FREQUENCY,
                                  show_progress=False)
    trained.train_from_iterator(lines, trainer, length=len(lines))
    model = json.loads(trained.to_str())["model"]
    tok = _new_tokenizer()
    tok.model = models.BPE(vocab=model["vocab"], merges=[tuple(m) for m in model["merges"]], unk_token=UNK,
                           continuing_subword_prefix=PREFIX)
    tok.add_special_tokens(list(SPECIAL_TOKENS))
    return tok


class TargetBPE:
    """A BPE encoder over space-segmented words; see the module docstring.

    Build one with :meth:`train` (or :meth:`load`); ``encode`` gives subword ids,
    ``decode`` gives the space-segmented words back.
    """

    def __init__(self, tokenizer) -> None:
        self.tokenizer = tokenizer
        vocab = tokenizer.get_vocab()
        for i, name in enumerate(SPECIAL_TOKENS):
            if vocab.get(name) != i:
                raise ConfigError(f"BPE vocabulary has {name!r} at id {vocab.get(name)}, expected {i}",
                                  hint="Train the encoder with TargetBPE.train (special tokens first)")

    @classmethod
    def train(cls, segmented: Iterable[str], merges: int | None = 3000, vocab_size: int | None = None) -> TargetBPE:
        """Learn ``merges`` merge operations (or fill ``vocab_size`` symbols) from space-segmented lines.

        Give exactly one of ``merges`` and ``vocab_size``.
        """
        if (merges is None) == (vocab_size is None):
            raise ConfigError("give exactly one of merges= and vocab_size= for the target BPE",
                              hint="The paper's setting is merges=3000")
        lines = [" ".join(s.split()) for s in segmented]
        if not any(lines):
            raise ConfigError("no target text to learn BPE from", hint="Pass non-empty training pairs")
        if vocab_size is None:
            if not isinstance(merges, int) or merges < 0:
                raise ConfigError(f"merges={merges!r}; expected a non-negative int")
            alphabet = _train(lines, 1).get_vocab_size()
            vocab_size = alphabet + merges
        elif not isinstance(vocab_size, int) or vocab_size <= len(SPECIAL_TOKENS):
            raise ConfigError(f"vocab_size={vocab_size!r}; expected an int above {len(SPECIAL_TOKENS)}")
        return cls(_train(lines, vocab_size))

    @property
    def vocab_size(self) -> int:
        return self.tokenizer.get_vocab_size()

    @property
    def num_merges(self) -> int:
        return len(json.loads(self.tokenizer.to_str())["model"]["merges"])

    def encode(self, segmented: str) -> list[int]:
        """Subword ids of one space-segmented line (no ``<s>`` / ``</s>``)."""
        words = segmented.split()
        bad = next((w for w in words if w.startswith(PREFIX)), None)
        if bad is not None:
            raise ConfigError(f"target word {bad!r} starts with the subword marker {PREFIX!r}",
                              hint="Such a word cannot be encoded reversibly; remove or rewrite it")
        return self.tokenizer.encode(" ".join(words)).ids

    def encode_batch(self, lines: Sequence[str]) -> list[list[int]]:
        for line in lines:
            if any(w.startswith(PREFIX) for w in line.split()):
                self.encode(line)  # raises with the word named
        return [e.ids for e in self.tokenizer.encode_batch([" ".join(s.split()) for s in lines])]

    def pieces(self, ids: Sequence[int]) -> list[str]:
        """The subword strings of ``ids`` (``##`` marks a continuation)."""
        return [self.tokenizer.id_to_token(i) for i in ids]

    def decode(self, ids: Sequence[int]) -> str:
        """Space-segmented words of ``ids``; special tokens other than ``<unk>`` are dropped."""
        ids = [i for i in ids if i >= UNK_ID]
        return self.tokenizer.decode(ids, skip_special_tokens=False)

    def to_json(self) -> str:
        return self.tokenizer.to_str()

    @classmethod
    def from_json(cls, text: str) -> TargetBPE:
        from tokenizers import Tokenizer

        return cls(Tokenizer.from_str(text))

    def save(self, path: str | Path) -> None:
        self.tokenizer.save(str(path))

    @classmethod
    def load(cls, path: str | Path) -> TargetBPE:
        from tokenizers import Tokenizer

        path = Path(path)
        if not path.is_file():
            raise ConfigError("BPE file not found", path=path, hint="Pass the target_bpe.json a training run saved")
        return cls(Tokenizer.from_file(str(path)))
