"""A Transformer encoder-decoder trained from scratch: CoGnition's NMT baseline.

The setup, as Li et al. (ACL 2021, "On Compositional Generalization of Neural Machine
Translation", Section 5.1) state it:

    "We tokenize the English side using Moses tokenizer and do not apply byte pair
    encoding (BPE) due to the small vocabulary (i.e., 2000). The Chinese sentences are
    segmented by jieba segmenter. We employ BPE with 3,000 merge operations, generating a
    vocabulary of 5,500 subwords. [...] We implement our model using BASE configuration
    provided by Fairseq. The model consists of a 6-layer encoder and a 6-layer decoder
    with the hidden size 512. We tie input and output embeddings on the target side. The
    model parameters are optimized by Adam, with beta_1 = 0.1, beta_2 = 0.98 and
    epsilon = 10^-9. The model is trained for 100,000 steps and we choose the best
    checkpoint on validation set for evaluation."

Table 6 reports, for that model trained on the 196,246 training pairs: BLEU 69.58 on the
random test set, 48.66 on the CG test set, and CTER 27.31% (instance) / 61.62%
(aggregate). BLEU is character-level sacreBLEU.

Preset ``paper`` is fairseq's ``transformer`` (base) as used there: 6+6 post-norm layers,
d_model 512, 8 heads, FFN 2048, dropout 0.1, tied target embeddings (decoder input
embedding = output projection), Adam betas (0.9, 0.98) -- the paper's "beta_1 = 0.1" is
read as a typo for fairseq's 0.9 --, eps 1e-9, inverse-square-root schedule with 4,000
warm-up steps, label smoothing 0.1, 100,000 steps. Not stated in the paper, fairseq's
usual values are used: peak learning rate 7e-4 (= 512^-0.5 * 4000^-0.5, Vaswani et al.),
4,096 tokens per batch, no gradient clipping. One difference from fairseq: dropout also
applies to attention weights (torch's encoder layer does so; fairseq's base uses no
attention dropout). Preset ``small`` is for CPUs: 2+2 pre-norm
layers (they train stably at a higher learning rate), d_model 256, 4 heads, FFN 1024,
peak learning rate 1.5e-3 after 400 warm-up steps, 2,048 tokens per batch, 4,000 steps
(5.8M parameters on CoGnition; about 700 target tokens/s on a busy 2-core machine, so
use ``max_time_s`` there). Every field of :class:`Hyperparameters` overrides the preset
(``train(..., d_model=128, max_steps=500)``).

Data preparation:

* **Source** (English): CoGnition's released English is already Moses-tokenised and
  lower-cased (``were n't``, ``boyfriend 's``; re-tokenising it with sacremoses changes
  1,031 of the 10,000 validation lines, ``n't`` -> ``n 't``), so the default
  ``source_tokenize="whitespace"`` splits on spaces; ``"moses"`` runs sacremoses
  (:mod:`benchsmith.nlp.tokenize`) for raw English. A word vocabulary, no BPE;
  ``lowercase`` is off by default (the data is lower-case already).
* **Target** (Chinese): re-segmented with jieba (:func:`benchsmith.nlp.segment.segment`,
  which first removes existing segmentation spaces, so released segmented lines and raw
  CG-test references are treated alike), then BPE
  (:class:`~benchsmith.builders.cognition.subword.TargetBPE`, 3,000 merges).
* Sides longer than ``max_len`` (256) tokens are truncated.

Training: batches are built by **token count** (``max_tokens`` = padded size
``rows * longest side``, as fairseq's ``--max-tokens``) over pairs sorted by length
(length buckets, seeded tie-breaks), once; their order is reshuffled every epoch. On CUDA
the forward pass runs under autocast (:func:`runtime.autocast_dtype`: bf16, or fp16 with a
grad scaler); CPU runs fp32. The loss is accumulated on the device; the host reads it only
every ``log_every`` steps and at evaluations, so a step never waits for the device. Every
``eval_every`` steps the validation per-token NLL (no smoothing; or character BLEU of
greedy output with ``select_by="bleu"``) is computed; the best weights are kept in memory
and restored at the end (and saved under ``output_dir`` when given). ``max_steps`` and
``max_time_s`` both stop training.

Decoding (:func:`translate`): batched beam search over sentences with incremental
decoding: the encoder output and every layer's cross-attention keys/values are computed
once; each decoder layer caches its self-attention keys/values, so a step runs the
decoder on one new position. A finished hypothesis keeps its beam slot with a frozen score
(it can only be extended by padding at no cost); the search stops when all hypotheses of
the batch are finished (checked every ``check_every`` steps: that check is the only host
sync) or at ``max_len_a * source_length + max_len_b`` tokens. The final hypothesis is
the best ``score / length ** length_penalty`` (fairseq's ``--lenpen``; the length counts
``</s>``). ``beam=1`` is greedy decoding.

Outputs: :func:`translate` returns plain Chinese (BPE undone, segmentation spaces between
Chinese characters removed: what ``benchsmith evaluate cognition`` expects, one line per
source), or the jieba-segmented words / the BPE pieces with ``output=``. Scoring (BLEU,
CTER) is left to :mod:`benchsmith.builders.cognition.evaluate`.
"""

from __future__ import annotations

import hashlib
import json
import math
import random
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field, fields, make_dataclass, replace
from pathlib import Path
from typing import Any

from benchsmith.validation.baselines import runtime
from benchsmith.validation.baselines.engine import (
    EngineCall,
    EngineOutput,
    eval_items,
    out_file,
    pairs,
    register_engine,
    score_outputs,
    selection_split,
    seq_items,
    subsample,
    train_split,
)

from benchsmith import progress
from benchsmith.errors import ConfigError, did_you_mean

from .subword import BOS_ID, EOS_ID, PAD_ID, SPECIAL_TOKENS, UNK_ID, TargetBPE

try:
    import torch
    import torch.nn.functional as F
    from torch import nn
except ImportError as exc:  # pragma: no cover - exercised only without the models extra
    raise ConfigError("the seq2seq baseline needs torch, which is not installed",
                      hint="pip install torch==2.13.0, then pip install -e '.[models]'") from exc

SOURCE_TOKENIZERS = ("whitespace", "moses")
SELECT_BY = ("loss", "bleu")
OUTPUTS = ("text", "words", "bpe")


# --------------------------------------------------------------------------- hyper-parameters

@dataclass(frozen=True)
class Hyperparameters:
    """Model, optimisation and data options (see the module docstring for the presets)."""

    encoder_layers: int = 6
    decoder_layers: int = 6
    d_model: int = 512
    heads: int = 8
    ffn: int = 2048
    dropout: float = 0.1
    norm_first: bool = False
    tie_target_embeddings: bool = True
    lr: float = 7e-4
    warmup: int = 4000
    betas: tuple[float, float] = (0.9, 0.98)
    adam_eps: float = 1e-9
    weight_decay: float = 0.0
    label_smoothing: float = 0.1
    clip_norm: float = 0.0
    max_tokens: int = 4096
    max_steps: int = 100_000
    max_time_s: float | None = None
    eval_every: int = 1000
    log_every: int = 100
    select_by: str = "loss"
    bpe_merges: int | None = 3000
    bpe_vocab_size: int | None = None
    source_tokenize: str = "whitespace"
    lowercase: bool = False
    max_len: int = 256

    def __post_init__(self) -> None:
        ints = ("encoder_layers", "decoder_layers", "d_model", "heads", "ffn", "warmup", "max_tokens",
                "max_steps", "eval_every", "log_every", "max_len")
        for name in ints:
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise ConfigError(f"{name}={value!r}; expected a positive int")
        for name in ("dropout", "lr", "adam_eps", "weight_decay", "label_smoothing", "clip_norm"):
            value = getattr(self, name)
            if not isinstance(value, (int, float)) or isinstance(value, bool):
                raise ConfigError(f"{name}={value!r}; expected a number")
        if self.d_model % self.heads:
            raise ConfigError(f"d_model={self.d_model} is not divisible by heads={self.heads}")
        for name in ("dropout", "label_smoothing"):
            if not 0.0 <= getattr(self, name) < 1.0:
                raise ConfigError(f"{name}={getattr(self, name)!r}; expected a value in [0, 1)")
        if self.lr <= 0 or self.clip_norm < 0 or self.weight_decay < 0:
            raise ConfigError("lr must be positive; clip_norm and weight_decay non-negative")
        if self.max_time_s is not None and self.max_time_s <= 0:
            raise ConfigError(f"max_time_s={self.max_time_s!r}; expected a positive number of seconds or None")
        for name, allowed in (("select_by", SELECT_BY), ("source_tokenize", SOURCE_TOKENIZERS)):
            if getattr(self, name) not in allowed:
                raise ConfigError(f"{name}={getattr(self, name)!r} is not supported",
                                  hint=did_you_mean(str(getattr(self, name)), allowed))

    @classmethod
    def from_preset(cls, preset: str = "small", **overrides: Any) -> Hyperparameters:
        """The preset's values with ``overrides`` applied (unknown names are a ConfigError)."""
        if preset not in PRESETS:
            raise ConfigError(f"unknown seq2seq preset {preset!r}", hint=did_you_mean(preset, PRESETS))
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(overrides) - known)
        if unknown:
            raise ConfigError(f"unknown seq2seq option {unknown[0]!r}", hint=did_you_mean(unknown[0], known))
        if "betas" in overrides:
            overrides["betas"] = tuple(overrides["betas"])
        if "bpe_vocab_size" in overrides and overrides["bpe_vocab_size"] is not None and "bpe_merges" not in overrides:
            overrides["bpe_merges"] = None
        return replace(PRESETS[preset], **overrides)


PRESETS: dict[str, Hyperparameters] = {
    "paper": Hyperparameters(),
    "small": Hyperparameters(
        encoder_layers=2, decoder_layers=2, d_model=256, heads=4, ffn=1024, dropout=0.1, norm_first=True,
        lr=1.5e-3, warmup=400, max_tokens=2048, max_steps=4000, eval_every=250, log_every=50,
    ),
}


# --------------------------------------------------------------------------- vocabularies and data

class Vocab:
    """Source word vocabulary; ids 0-3 are the special tokens shared with :mod:`.subword`."""

    def __init__(self, tokens: Sequence[str]) -> None:
        if tuple(tokens[: len(SPECIAL_TOKENS)]) != SPECIAL_TOKENS:
            raise ConfigError("a source vocabulary must start with the special tokens " + " ".join(SPECIAL_TOKENS))
        self.tokens = list(tokens)
        self.index = {t: i for i, t in enumerate(self.tokens)}

    @classmethod
    def build(cls, sentences: Sequence[Sequence[str]]) -> Vocab:
        """Every word of the training sources, most frequent first (ties alphabetically)."""
        counts = Counter(w for s in sentences for w in s)
        words = sorted((w for w in counts if w not in SPECIAL_TOKENS), key=lambda w: (-counts[w], w))
        return cls(list(SPECIAL_TOKENS) + words)

    def __len__(self) -> int:
        return len(self.tokens)

    def encode(self, words: Sequence[str]) -> list[int]:
        return [self.index.get(w, UNK_ID) for w in words]


def _check_pairs(pairs: Sequence[Sequence[str]], what: str) -> None:
    for i, pair in enumerate(pairs):
        if len(pair) != 2 or not all(isinstance(x, str) and x.strip() for x in pair):
            raise ConfigError(f"{what} pair {i} is {pair!r}; expected (English, Chinese), both non-empty strings")


def source_words(text: str, hp: Hyperparameters) -> list[str]:
    """The source tokens the model sees (see the module docstring)."""
    if hp.lowercase:
        text = text.lower()
    if hp.source_tokenize == "moses":
        from benchsmith.nlp.tokenize import get_tokenizer

        return get_tokenizer("en")(text)
    return text.split()


def target_words(text: str) -> str:
    """jieba words of a Chinese line, space-separated."""
    from benchsmith.nlp.segment import segment

    return " ".join(segment(text))


@dataclass
class Batch:
    """Padded tensors of one batch: source (+``</s>``), decoder input (``<s>`` + y), output (y + ``</s>``)."""

    src: Any
    tgt_in: Any
    tgt_out: Any
    src_tokens: int
    tgt_tokens: int

    def to(self, device: str) -> Batch:
        nb = device.startswith("cuda")
        return Batch(self.src.to(device, non_blocking=nb), self.tgt_in.to(device, non_blocking=nb),
                     self.tgt_out.to(device, non_blocking=nb), self.src_tokens, self.tgt_tokens)


def _pad(rows: Sequence[Sequence[int]]) -> Any:
    out = torch.full((len(rows), max(map(len, rows))), PAD_ID, dtype=torch.long)
    for i, r in enumerate(rows):
        out[i, : len(r)] = torch.tensor(r, dtype=torch.long)
    return out


def make_batch(src: Sequence[Sequence[int]], tgt: Sequence[Sequence[int]]) -> Batch:
    s = [list(x) + [EOS_ID] for x in src]
    return Batch(_pad(s), _pad([[BOS_ID, *y] for y in tgt]), _pad([[*y, EOS_ID] for y in tgt]),
                 sum(map(len, s)), sum(len(y) + 1 for y in tgt))


def token_batches(src: Sequence[Sequence[int]], tgt: Sequence[Sequence[int]], max_tokens: int,
                  seed: int = 0) -> list[list[int]]:
    """Indices grouped by length into batches of at most ``max_tokens`` padded tokens.

    Pairs are sorted by (source length, target length, a seeded random tie-break); a batch
    grows while ``rows * longest side`` stays within ``max_tokens`` (a single longer pair
    forms its own batch).
    """
    rng = random.Random(seed)
    ties = [rng.random() for _ in src]
    order = sorted(range(len(src)), key=lambda i: (len(src[i]), len(tgt[i]), ties[i]))
    batches: list[list[int]] = []
    cur: list[int] = []
    longest = 0
    for i in order:
        size = max(len(src[i]) + 1, len(tgt[i]) + 1)
        if cur and max(longest, size) * (len(cur) + 1) > max_tokens:
            batches.append(cur)
            cur, longest = [], 0
        cur.append(i)
        longest = max(longest, size)
    if cur:
        batches.append(cur)
    return batches


# --------------------------------------------------------------------------- the model

class SinusoidalPositions(nn.Module):
    """Fixed sinusoidal position encodings (sin half, cos half, as fairseq)."""

    def __init__(self, dim: int, max_len: int = 1024) -> None:
        super().__init__()
        self.dim = dim
        self.register_buffer("table", self._table(max_len), persistent=False)

    def _table(self, n: int) -> Any:
        half = self.dim // 2
        freq = torch.exp(torch.arange(half, dtype=torch.float) * -(math.log(10000.0) / max(half - 1, 1)))
        angles = torch.arange(n, dtype=torch.float)[:, None] * freq[None, :]
        table = torch.cat([torch.sin(angles), torch.cos(angles)], dim=1)
        return F.pad(table, (0, self.dim - 2 * half))

    def forward(self, length: int, start: int = 0) -> Any:
        if start + length > self.table.size(0):
            self.table = self._table(2 * (start + length)).to(self.table.device)
        return self.table[start : start + length]


class Attention(nn.Module):
    """Multi-head attention whose keys/values can be computed once and reused (the cache)."""

    def __init__(self, dim: int, heads: int, dropout: float) -> None:
        super().__init__()
        self.heads, self.dropout = heads, dropout
        self.q_proj = nn.Linear(dim, dim)
        self.kv_proj = nn.Linear(dim, 2 * dim)
        self.out_proj = nn.Linear(dim, dim)

    def _split(self, x: Any) -> Any:  # (B, T, D) -> (B, H, T, D/H)
        b, t, d = x.shape
        return x.view(b, t, self.heads, d // self.heads).transpose(1, 2)

    def keys_values(self, x: Any) -> tuple[Any, Any]:
        k, v = self.kv_proj(x).chunk(2, dim=-1)
        return self._split(k), self._split(v)

    def forward(self, x: Any, k: Any, v: Any, mask: Any = None, causal: bool = False) -> Any:
        q = self._split(self.q_proj(x))
        out = F.scaled_dot_product_attention(q, k, v, attn_mask=mask, is_causal=causal,
                                             dropout_p=self.dropout if self.training else 0.0)
        b, h, t, dh = out.shape
        return self.out_proj(out.transpose(1, 2).reshape(b, t, h * dh))


class DecoderLayer(nn.Module):
    """Self-attention (causal, or one new position against a cache), cross-attention, FFN."""

    def __init__(self, dim: int, heads: int, ffn: int, dropout: float, norm_first: bool) -> None:
        super().__init__()
        self.norm_first = norm_first
        self.self_attn = Attention(dim, heads, dropout)
        self.cross_attn = Attention(dim, heads, dropout)
        self.ff = nn.Sequential(nn.Linear(dim, ffn), nn.ReLU(), nn.Dropout(dropout), nn.Linear(ffn, dim))
        self.norms = nn.ModuleList(nn.LayerNorm(dim) for _ in range(3))
        self.drop = nn.Dropout(dropout)

    def _block(self, i: int, x: Any, fn) -> Any:
        if self.norm_first:
            return x + self.drop(fn(self.norms[i](x)))
        return self.norms[i](x + self.drop(fn(x)))

    def forward(self, x: Any, memory_kv: tuple[Any, Any], memory_mask: Any, cache: dict | None = None) -> Any:
        def self_attention(h: Any) -> Any:
            k, v = self.self_attn.keys_values(h)
            if cache is None:  # the whole prefix at once
                return self.self_attn(h, k, v, causal=True)
            if "k" in cache:  # one new position: attend to every cached one and itself
                k, v = torch.cat([cache["k"], k], dim=2), torch.cat([cache["v"], v], dim=2)
            cache["k"], cache["v"] = k, v
            return self.self_attn(h, k, v)

        x = self._block(0, x, self_attention)
        x = self._block(1, x, lambda h: self.cross_attn(h, *memory_kv, mask=memory_mask))
        return self._block(2, x, self.ff)


@dataclass
class DecoderState:
    """What incremental decoding keeps between steps: per-layer cross K/V and self-attention caches."""

    memory_kv: list[tuple[Any, Any]]
    memory_mask: Any
    caches: list[dict] = field(default_factory=list)
    position: int = 0

    def reorder(self, index: Any) -> None:
        """Follow the beams chosen at this step (cross K/V are identical within a sentence's beams)."""
        for c in self.caches:
            c["k"], c["v"] = c["k"].index_select(0, index), c["v"].index_select(0, index)


class Seq2SeqTransformer(nn.Module):
    """Encoder (torch's ``nn.TransformerEncoder``) + cache-able decoder (:class:`DecoderLayer`)."""

    def __init__(self, hp: Hyperparameters, src_vocab: int, tgt_vocab: int) -> None:
        super().__init__()
        d = hp.d_model
        self.scale = math.sqrt(d)
        self.src_embed = nn.Embedding(src_vocab, d, padding_idx=PAD_ID)
        self.tgt_embed = nn.Embedding(tgt_vocab, d, padding_idx=PAD_ID)
        self.positions = SinusoidalPositions(d)
        self.drop = nn.Dropout(hp.dropout)
        layer = nn.TransformerEncoderLayer(d, hp.heads, hp.ffn, hp.dropout, batch_first=True, norm_first=hp.norm_first)
        self.encoder = nn.TransformerEncoder(layer, hp.encoder_layers, norm=nn.LayerNorm(d) if hp.norm_first else None,
                                             enable_nested_tensor=False)
        self.decoder = nn.ModuleList(DecoderLayer(d, hp.heads, hp.ffn, hp.dropout, hp.norm_first)
                                     for _ in range(hp.decoder_layers))
        self.decoder_norm = nn.LayerNorm(d) if hp.norm_first else nn.Identity()
        self.output = nn.Linear(d, tgt_vocab, bias=False)
        for p in self.parameters():
            if p.dim() > 1:
                nn.init.xavier_uniform_(p)
        for emb in (self.src_embed, self.tgt_embed):  # fairseq: N(0, d^-0.5), padding row zero
            nn.init.normal_(emb.weight, std=d ** -0.5)
            nn.init.zeros_(emb.weight[PAD_ID])
        if hp.tie_target_embeddings:
            self.output.weight = self.tgt_embed.weight

    def _embed(self, emb: Any, ids: Any, start: int = 0) -> Any:
        return self.drop(emb(ids) * self.scale + self.positions(ids.size(1), start))

    def encode(self, src: Any) -> tuple[Any, Any]:
        """Encoder output and the source padding mask (True = padding)."""
        pad = src.eq(PAD_ID)
        return self.encoder(self._embed(self.src_embed, src), src_key_padding_mask=pad), pad

    def start(self, memory: Any, src_pad: Any, cache: bool = True) -> DecoderState:
        """Cross-attention keys/values of every layer, computed once per source batch."""
        kv = [layer.cross_attn.keys_values(memory) for layer in self.decoder]
        mask = (~src_pad)[:, None, None, :]
        return DecoderState(kv, mask, [{} for _ in self.decoder] if cache else [])

    def decode(self, tgt_in: Any, state: DecoderState) -> Any:
        """Logits for every position of ``tgt_in`` (teacher forcing, causal; no cache)."""
        x = self._embed(self.tgt_embed, tgt_in)
        for layer, kv in zip(self.decoder, state.memory_kv):
            x = layer(x, kv, state.memory_mask)
        return self.output(self.decoder_norm(x))

    def step(self, last: Any, state: DecoderState) -> Any:
        """Logits for one new position given the last token (B, 1), updating the caches."""
        x = self._embed(self.tgt_embed, last, state.position)
        for layer, kv, cache in zip(self.decoder, state.memory_kv, state.caches):
            x = layer(x, kv, state.memory_mask, cache)
        state.position += 1
        return self.output(self.decoder_norm(x))[:, -1]

    def forward(self, src: Any, tgt_in: Any) -> Any:
        memory, pad = self.encode(src)
        return self.decode(tgt_in, self.start(memory, pad, cache=False))


# --------------------------------------------------------------------------- decoding

def beam_search(model: Seq2SeqTransformer, src: Any, beam: int = 5, *, length_penalty: float = 1.0,
                max_len: int = 200, use_cache: bool = True, check_every: int = 4) -> list[list[int]]:
    """Best target ids (without ``</s>``) for each row of ``src``; see the module docstring.

    ``use_cache=False`` re-runs the decoder over the whole prefix at every step: the slow
    reference the cached search must agree with.
    """
    b, k = src.size(0), beam
    memory, pad = model.encode(src)
    memory, pad = memory.repeat_interleave(k, 0), pad.repeat_interleave(k, 0)
    state = model.start(memory, pad, cache=use_cache)
    dev = src.device
    tokens = torch.full((b * k, 1), BOS_ID, dtype=torch.long, device=dev)
    scores = torch.zeros(b, k, device=dev)
    scores[:, 1:] = float("-inf")  # all beams start identical: expand only the first
    finished = torch.zeros(b * k, dtype=torch.bool, device=dev)
    lengths = torch.zeros(b * k, dtype=torch.long, device=dev)
    rows = (torch.arange(b, device=dev) * k)[:, None]
    for t in range(max_len):
        logits = model.step(tokens[:, -1:], state) if use_cache else model.decode(tokens, state)[:, -1]
        logp = F.log_softmax(logits.float(), dim=-1)
        vocab = logp.size(-1)
        logp[:, PAD_ID] = float("-inf")
        logp[:, BOS_ID] = float("-inf")
        if t == max_len - 1:  # out of room: every open hypothesis ends here
            logp = torch.where(torch.arange(vocab, device=dev) == EOS_ID, logp, float("-inf"))
        pad_only = torch.full_like(logp, float("-inf"))
        pad_only[:, PAD_ID] = 0.0  # a finished hypothesis continues with padding at no cost
        logp = torch.where(finished[:, None], pad_only, logp)
        cand = (scores.view(-1, 1) + logp).view(b, k * vocab)
        scores, idx = cand.topk(k, dim=1)
        origin = (rows + idx // vocab).view(-1)
        new = (idx % vocab).view(-1)
        was_finished = finished.index_select(0, origin)
        tokens = torch.cat([tokens.index_select(0, origin), new[:, None]], dim=1)
        lengths = lengths.index_select(0, origin) + (~was_finished).long()
        finished = was_finished | new.eq(EOS_ID)
        if use_cache:
            state.reorder(origin)
        if (t + 1) % check_every == 0 and bool(finished.all()):
            break
    normalised = scores.view(-1) / lengths.clamp(min=1).float() ** length_penalty
    best = normalised.view(b, k).argmax(dim=1) + rows.view(-1)
    out = []
    for row in tokens.index_select(0, best)[:, 1:].tolist():
        out.append(row[: row.index(EOS_ID)] if EOS_ID in row else row)
    return out


# --------------------------------------------------------------------------- the trained model

def weights_sha256(net: Any) -> str:
    """sha256 over the weights: every tensor's name, dtype, shape and bytes, in name order.

    (Not the bytes of a ``torch.save`` file: those carry a per-call serialisation id.)
    """
    h = hashlib.sha256()
    for name, tensor in sorted(net.state_dict().items()):
        t = tensor.detach().cpu().contiguous().reshape(-1)
        h.update(f"{name}|{t.dtype}|{tuple(tensor.shape)}\0".encode())
        h.update(t.view(torch.uint8).numpy().tobytes())
    return h.hexdigest()


@dataclass
class TrainedModel:
    """A trained model with everything needed to translate with it and to reproduce it.

    ``record.model_sha256`` is :func:`weights_sha256` of the selected weights.
    """

    model: Any
    src_vocab: Vocab
    bpe: TargetBPE
    hp: Hyperparameters
    record: runtime.RunRecord
    history: list[dict] = field(default_factory=list)
    best_step: int = 0
    device: str = "cpu"
    preset: str = "small"

    def save(self, path: str | Path) -> Path:
        """Write ``model.pt``, ``config.json``, ``source_vocab.txt``, ``target_bpe.json``, ``record.json``."""
        path = Path(path)
        path.mkdir(parents=True, exist_ok=True)
        torch.save(self.model.state_dict(), path / "model.pt")
        config = {"preset": self.preset, "hyperparameters": asdict(self.hp), "best_step": self.best_step,
                  "src_vocab": len(self.src_vocab), "tgt_vocab": self.bpe.vocab_size}
        (path / "config.json").write_text(json.dumps(config, indent=2) + "\n", encoding="utf-8")
        (path / "source_vocab.txt").write_text("\n".join(self.src_vocab.tokens) + "\n", encoding="utf-8")
        self.bpe.save(path / "target_bpe.json")
        (path / "record.json").write_text(json.dumps({"record": self.record.to_dict(), "history": self.history},
                                                     indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
        return path

    @classmethod
    def load(cls, path: str | Path, device: str = "auto") -> TrainedModel:
        path = Path(path)
        if not (path / "config.json").is_file() or not (path / "model.pt").is_file():
            raise ConfigError("not a seq2seq model folder (config.json / model.pt missing)", path=path,
                              hint="Pass the output_dir of a seq2seq training run")
        config = json.loads((path / "config.json").read_text(encoding="utf-8"))
        hp = Hyperparameters(**{**config["hyperparameters"], "betas": tuple(config["hyperparameters"]["betas"])})
        dev = runtime.pick_device(device)
        src_vocab = Vocab((path / "source_vocab.txt").read_text(encoding="utf-8").split("\n")[:-1])
        bpe = TargetBPE.load(path / "target_bpe.json")
        net = Seq2SeqTransformer(hp, len(src_vocab), bpe.vocab_size)
        net.load_state_dict(torch.load(path / "model.pt", map_location="cpu", weights_only=True))
        saved = json.loads((path / "record.json").read_text(encoding="utf-8"))
        return cls(net.to(dev).eval(), src_vocab, bpe, hp, runtime.RunRecord(**saved["record"]), saved["history"],
                   config["best_step"], dev, config["preset"])


def translate(model: TrainedModel, sources: Sequence[str], beam: int = 5, *, length_penalty: float = 1.0,
              batch_size: int = 64, max_len_a: float = 2.0, max_len_b: int = 10, output: str = "text",
              use_cache: bool = True) -> list[str]:
    """Translate English sentences; one string per source, in order.

    ``output``: ``"text"`` plain Chinese (what ``benchsmith evaluate cognition`` reads),
    ``"words"`` the jieba-segmented words, ``"bpe"`` the subword pieces (``##`` continuations).
    The longest output is ``max_len_a * longest source in the batch + max_len_b`` tokens.
    """
    if output not in OUTPUTS:
        raise ConfigError(f"output={output!r} is not supported", hint=did_you_mean(output, OUTPUTS))
    if not isinstance(beam, int) or isinstance(beam, bool) or beam < 1:
        raise ConfigError(f"beam={beam!r}; expected a positive int")
    ids = _decode_ids(model.model, model.src_vocab, model.hp, model.device, sources, beam, length_penalty,
                      batch_size, max_len_a, max_len_b, use_cache)
    if output == "bpe":
        return [" ".join(model.bpe.pieces(r)) for r in ids]
    from benchsmith.nlp.segment import unsegment

    words = [model.bpe.decode(r) for r in ids]
    return words if output == "words" else [unsegment(w) for w in words]


def _decode_ids(net: Any, src_vocab: Vocab, hp: Hyperparameters, device: str, sources: Sequence[str], beam: int,
                length_penalty: float, batch_size: int, max_len_a: float, max_len_b: int,
                use_cache: bool) -> list[list[int]]:
    ids = [src_vocab.encode(source_words(s, hp))[: hp.max_len] for s in sources]
    order = sorted(range(len(ids)), key=lambda i: len(ids[i]))  # similar lengths share a batch
    batches = [order[i : i + batch_size] for i in range(0, len(order), batch_size)]
    dtype = runtime.autocast_dtype(device)
    results: list[list[int]] = [[] for _ in ids]
    was_training = net.training
    net.eval()
    with torch.inference_mode(), torch.autocast(device.split(":")[0], dtype=dtype, enabled=dtype is not None):
        for batch in progress.track(batches, f"decode (beam {beam})"):
            src = _pad([ids[i] + [EOS_ID] for i in batch]).to(device)
            hyps = beam_search(net, src, beam, length_penalty=length_penalty,
                               max_len=int(max_len_a * src.size(1) + max_len_b), use_cache=use_cache)
            for i, hyp in zip(batch, hyps):
                results[i] = hyp
    net.train(was_training)
    return results


# --------------------------------------------------------------------------- training

def inverse_sqrt(step: int, warmup: int) -> float:
    """Learning-rate multiplier: linear warm-up to 1 at ``warmup``, then ``sqrt(warmup / step)``."""
    step = max(step, 1)
    return min(step / warmup, math.sqrt(warmup / step))


def prepare(pairs: Sequence[Sequence[str]], hp: Hyperparameters, src_vocab: Vocab | None = None,
            bpe: TargetBPE | None = None) -> tuple[list[list[int]], list[list[int]], Vocab, TargetBPE]:
    """Source/target ids of ``pairs``; the vocabulary and BPE are learned from them when not given."""
    src_words = [source_words(en, hp) for en, _ in pairs]
    tgt_seg = [target_words(zh) for _, zh in pairs]
    if src_vocab is None:
        src_vocab = Vocab.build(src_words)
    if bpe is None:
        bpe = TargetBPE.train(tgt_seg, merges=hp.bpe_merges, vocab_size=hp.bpe_vocab_size)
    src = [src_vocab.encode(w)[: hp.max_len] for w in src_words]
    tgt = [t[: hp.max_len] for t in bpe.encode_batch(tgt_seg)]
    return src, tgt, src_vocab, bpe


def batches_of(src: Sequence[Sequence[int]], tgt: Sequence[Sequence[int]], max_tokens: int, seed: int = 0,
               pin: bool = False) -> list[Batch]:
    """Padded :class:`Batch` es of :func:`token_batches` (pinned for fast copies to a GPU with ``pin``)."""
    out = [make_batch([src[i] for i in b], [tgt[i] for i in b]) for b in token_batches(src, tgt, max_tokens, seed)]
    if pin:
        out = [Batch(b.src.pin_memory(), b.tgt_in.pin_memory(), b.tgt_out.pin_memory(), b.src_tokens, b.tgt_tokens)
               for b in out]
    return out


def loss_sum(net: Any, batch: Batch, smoothing: float = 0.0, dtype: Any = None, device: str = "cpu") -> Any:
    """Summed (label-smoothed) cross-entropy of a batch's target tokens, padding ignored."""
    with torch.autocast(device.split(":")[0], dtype=dtype, enabled=dtype is not None):
        logits = net(batch.src, batch.tgt_in)
    return F.cross_entropy(logits.float().flatten(0, 1), batch.tgt_out.flatten(), ignore_index=PAD_ID,
                           label_smoothing=smoothing, reduction="sum")


def train(train_pairs: Sequence[Sequence[str]], valid_pairs: Sequence[Sequence[str]] = (), preset: str = "small", *,
          seed: int = 1, device: str = "auto", output_dir: str | Path | None = None,
          **overrides: Any) -> TrainedModel:
    """Train a model on ``(English, Chinese)`` pairs; select the best checkpoint on ``valid_pairs``.

    ``overrides`` are :class:`Hyperparameters` fields. With no validation pairs the last
    weights are kept. ``max_time_s`` bounds the training loop (evaluations included, data
    preparation not). In the returned record, ``tokens_per_s`` counts target tokens (with
    ``</s>``, fairseq's ``wps``) and ``examples_per_s`` pairs, per second of training steps
    (evaluations excluded); ``wall_time_s`` is the whole call; ``hyperparameters`` holds the
    options plus the model size, vocabularies, epochs, best step and why training stopped.
    """
    hp = Hyperparameters.from_preset(preset, **overrides)
    _check_pairs(train_pairs, "training")
    _check_pairs(valid_pairs, "validation")
    if not train_pairs:
        raise ConfigError("no training pairs", hint="Pass a non-empty list of (English, Chinese) pairs")
    dev = runtime.pick_device(device)
    dtype = runtime.autocast_dtype(dev)
    start = time.perf_counter()
    runtime.seed_everything(seed)

    src, tgt, src_vocab, bpe = prepare(train_pairs, hp)
    batches = batches_of(src, tgt, hp.max_tokens, seed, pin=dev.startswith("cuda"))
    valid: list[Batch] = []
    if valid_pairs:
        vs, vt, _, _ = prepare(valid_pairs, hp, src_vocab, bpe)
        valid = batches_of(vs, vt, hp.max_tokens)

    net = Seq2SeqTransformer(hp, len(src_vocab), bpe.vocab_size).to(dev)
    loop = _Loop(net, hp, dev, dtype, valid, valid_pairs, src_vocab, bpe)
    loop.run(batches, random.Random(seed))
    if loop.best_state is not None:
        net.load_state_dict(loop.best_state)
    net.eval()

    record = runtime.RunRecord(
        baseline="seq2seq-transformer", model=f"transformer-{preset} (trained from scratch)",
        model_sha256=weights_sha256(net), seed=seed, device=dev,
        dtype=runtime.dtype_name(dtype), gpu=runtime.gpu_name(dev), steps=loop.step)
    record.hyperparameters = {
        "preset": preset, **asdict(hp), "parameters": sum(p.numel() for p in net.parameters()),
        "src_vocab": len(src_vocab), "tgt_vocab": bpe.vocab_size, "bpe_merges_learned": bpe.num_merges,
        "train_pairs": len(train_pairs), "valid_pairs": len(valid_pairs), "batches_per_epoch": len(batches),
        "epochs": round(loop.step / len(batches), 2), "best_step": loop.best_step, "best_valid": loop.best_metric,
        "stopped_by": loop.stopped_by, "train_time_s": round(loop.train_time, 3),
    }
    if loop.train_time > 0:
        record.tokens_per_s = round(loop.tgt_tokens / loop.train_time, 2)
        record.examples_per_s = round(loop.examples / loop.train_time, 2)
    out = TrainedModel(net, src_vocab, bpe, hp, record, loop.history, loop.best_step, dev, preset)
    record.wall_time_s = round(time.perf_counter() - start, 3)
    if output_dir is not None:
        out.save(output_dir)
    return out


class _Loop:
    """The training loop: steps, on-device loss accumulation, evaluations, the best weights."""

    def __init__(self, net: Any, hp: Hyperparameters, dev: str, dtype: Any, valid: Sequence[Batch],
                 valid_pairs: Sequence[Sequence[str]], src_vocab: Vocab, bpe: TargetBPE) -> None:
        self.net, self.hp, self.dev, self.dtype = net, hp, dev, dtype
        self.valid, self.valid_pairs, self.src_vocab, self.bpe = valid, valid_pairs, src_vocab, bpe
        self.opt = torch.optim.Adam(net.parameters(), lr=hp.lr, betas=hp.betas, eps=hp.adam_eps,
                                    weight_decay=hp.weight_decay)
        self.sched = torch.optim.lr_scheduler.LambdaLR(self.opt, lambda s: inverse_sqrt(s + 1, hp.warmup))
        self.scaler = torch.amp.GradScaler("cuda") if dtype == torch.float16 else None
        self.step = 0
        self.stopped_by: str | None = None
        self.history: list[dict] = []
        self.best_state: dict | None = None
        self.best_step = 0
        self.best_metric: float | None = None
        self.train_time = 0.0
        self.tgt_tokens = 0
        self.examples = 0
        self.loss_sum = torch.zeros((), device=dev)  # read by the host only when logging
        self.loss_tokens = 0

    def run(self, batches: Sequence[Batch], rng: random.Random) -> None:
        hp = self.hp
        self.net.train()
        t0 = time.perf_counter()
        eval_time = 0.0
        with progress.bar("train seq2seq", total=hp.max_steps) as bar:
            while self.stopped_by is None:
                order = list(range(len(batches)))
                rng.shuffle(order)  # a new batch order every epoch
                for bi in order:
                    self._step(batches[bi])
                    bar.advance()
                    elapsed = time.perf_counter() - t0
                    if self.step >= hp.max_steps:
                        self.stopped_by = "max_steps"
                    elif hp.max_time_s is not None and elapsed >= hp.max_time_s:
                        self.stopped_by = "max_time_s"
                    evaluate = self.step % hp.eval_every == 0 or self.stopped_by is not None
                    if evaluate or self.step % hp.log_every == 0:
                        e0 = time.perf_counter()
                        self._log(evaluate, elapsed)
                        eval_time += time.perf_counter() - e0
                    if self.stopped_by is not None:
                        break
        if self.dev.startswith("cuda"):
            torch.cuda.synchronize()
        self.train_time = time.perf_counter() - t0 - eval_time

    def _step(self, batch: Batch) -> None:
        b = batch.to(self.dev)
        loss = loss_sum(self.net, b, self.hp.label_smoothing, self.dtype, self.dev)
        scaled = loss / b.tgt_tokens  # per-token mean, as fairseq normalises by ntokens
        if self.scaler is not None:
            self.scaler.scale(scaled).backward()
            self.scaler.unscale_(self.opt)
        else:
            scaled.backward()
        if self.hp.clip_norm > 0:
            torch.nn.utils.clip_grad_norm_(self.net.parameters(), self.hp.clip_norm)
        if self.scaler is not None:
            self.scaler.step(self.opt)
            self.scaler.update()
        else:
            self.opt.step()
        self.opt.zero_grad(set_to_none=True)
        self.sched.step()
        self.step += 1
        self.loss_sum += loss.detach()
        self.loss_tokens += b.tgt_tokens
        self.tgt_tokens += b.tgt_tokens
        self.examples += b.src.size(0)

    def _log(self, evaluate: bool, elapsed: float) -> None:
        entry: dict[str, Any] = {"step": self.step,
                                 "train_loss": round(self.loss_sum.item() / max(self.loss_tokens, 1), 5),
                                 "lr": self.sched.get_last_lr()[0], "elapsed_s": round(elapsed, 2)}
        self.loss_sum.zero_()
        self.loss_tokens = 0
        if evaluate and self.valid:
            entry["valid_nll"] = round(self._valid_nll(), 5)
            metric = entry["valid_nll"]
            if self.hp.select_by == "bleu":
                entry["valid_bleu"] = round(self._valid_bleu(), 2)
                metric = -entry["valid_bleu"]
            if self.best_metric is None or metric < self.best_metric:
                self.best_metric, self.best_step = metric, self.step
                self.best_state = {k: v.detach().clone() for k, v in self.net.state_dict().items()}
        self.history.append(entry)

    def _valid_nll(self) -> float:
        """Per-token NLL (no label smoothing) over the validation batches."""
        self.net.eval()
        total = torch.zeros((), device=self.dev)
        tokens = 0
        with torch.inference_mode():
            for b in self.valid:
                total += loss_sum(self.net, b.to(self.dev), 0.0, self.dtype, self.dev)
                tokens += b.tgt_tokens
        self.net.train()
        return total.item() / max(tokens, 1)

    def _valid_bleu(self) -> float:
        """Character BLEU (sacrebleu ``zh``) of greedy translations of the validation sources."""
        from benchsmith.validation.metrics.bleu import SacreBLEU

        from benchsmith.nlp.segment import unsegment

        ids = _decode_ids(self.net, self.src_vocab, self.hp, self.dev, [en for en, _ in self.valid_pairs], 1, 1.0,
                          64, 2.0, 10, True)
        hyps = [unsegment(self.bpe.decode(r)) for r in ids]
        refs = [unsegment(zh) for _, zh in self.valid_pairs]
        return SacreBLEU(tokenize="zh").score(hyps, [[r] for r in refs]).value or 0.0

# --------------------------------------------------------------------------- the nmt engine


def _check_nmt_options(self: Any) -> None:
    if self.preset not in PRESETS:
        raise ConfigError(f"unknown seq2seq preset {self.preset!r}", hint=did_you_mean(self.preset, PRESETS))


#: The ``nmt`` engine's options: ``preset``, the decoder's ``beam`` and ``length_penalty``, and every
#: :class:`Hyperparameters` field, None meaning "the preset's value" (built from Hyperparameters' fields
#: so that the two never drift apart).
NMTOptions = make_dataclass(
    "NMTOptions",
    [("preset", str, "small"), ("beam", int, 5), ("length_penalty", float, 1.0)]
    + [(f.name, f"{f.type} | None", None) for f in fields(Hyperparameters)],
    frozen=True, namespace={"__post_init__": _check_nmt_options, "__module__": __name__},
)


@register_engine("nmt", options=NMTOptions)
def nmt_engine(call: EngineCall) -> EngineOutput:
    """CoGnition's Transformer NMT from scratch: train on ``config/train_split``, select on
    ``selection_split``, translate every evaluated split, score with the spec's hook."""
    spec, release, opts, o = call.spec, call.release, call.run, call.options
    out = EngineOutput()
    train_on, out.caveats = train_split(spec, release, opts)
    select, caveats = selection_split(spec, release, train_on)
    out.caveats += caveats
    n, seed = opts.max_examples, opts.seed
    train_pairs = pairs(subsample(seq_items(spec, release, spec.config, train_on), n, seed))
    valid_pairs = pairs(subsample(seq_items(spec, release, spec.config, select), n, seed)) if select else []
    settings = {f.name: getattr(o, f.name) for f in fields(Hyperparameters) if getattr(o, f.name) is not None}
    preset = opts.preset or o.preset
    if preset not in PRESETS:
        raise ConfigError(f"unknown seq2seq preset {preset!r}", hint=did_you_mean(preset, PRESETS))
    if opts.max_steps:
        settings["max_steps"] = opts.max_steps
    if opts.epochs:
        out.notes.append("--epochs does not apply to nmt (it trains for --max-steps): ignored")
    if preset != "paper":
        out.caveats.append(f"preset {preset} (not the paper's Transformer base: --preset paper)")
    paper_steps = PRESETS["paper"].max_steps
    steps = settings.get("max_steps", PRESETS[preset].max_steps)
    if preset == "paper" and steps < paper_steps:
        out.caveats.append(f"trained for at most {steps:,} steps, the paper {paper_steps:,}")
    model_dir = out_file(opts, "model") if opts.save_model else None
    model = train(train_pairs, valid_pairs, preset, seed=seed, device=opts.device, output_dir=model_dir, **settings)
    if model_dir is not None:
        out.outputs["model"] = model_dir
    t0 = time.perf_counter()
    decoded = [(config, split, items, translate(model, [it.source for it in items], beam=o.beam,
                                                length_penalty=o.length_penalty))
               for config, split, items in eval_items(call, out)]
    record = model.record
    record.hyperparameters.update(spec=spec.name, train=f"{spec.config}/{train_on}",
                                  selection=f"{spec.config}/{select}" if select else None, beam=o.beam,
                                  length_penalty=o.length_penalty, decode_time_s=round(time.perf_counter() - t0, 3))
    score_outputs(call, out, decoded)
    out.records = [record]
    out.model = record.model
    out.details["history"] = model.history
    return out


