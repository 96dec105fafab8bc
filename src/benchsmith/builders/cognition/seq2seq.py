"""CoGnition's NMT baseline: ``MarianMTModel`` from scratch, trained by ``Seq2SeqTrainer``.

Li et al. (ACL 2021), Section 5.1: Moses-tokenised English without BPE, jieba-segmented Chinese
with 3,000 BPE merges (both vocabularies: :mod:`.subword`), fairseq's Transformer base, Adam
(beta_2 0.98, eps 1e-9), 100,000 steps, the best checkpoint on the validation set; Table 6:
character BLEU 69.58 (random test) / 48.66 (CG test), CTER 27.31% instance / 61.62% aggregate.

* **Model**: ``MarianMTModel(MarianConfig(...))``, randomly initialised, never downloaded: fairseq's
  post-norm Transformer with separate source / target vocabularies, the target embedding tied to
  the output projection (``tie_target_embeddings``).
* **Training**: AdamW with ``weight_decay`` 0, ``inverse_sqrt`` schedule, label smoothing, clipping
  at ``clip_norm`` (0 = none, fairseq's default). Every ``eval_every`` steps (and where training
  stops) the validation pairs are scored; ``load_best_model_at_end`` restores the lowest per-token
  NLL without smoothing.
* **Batches** stay fairseq's (:func:`token_batches`), built once; Trainer's seeded sampler
  shuffles their order every epoch (its dataset is the list of batches, one per step).
* **Decoding** (:func:`translate`): ``generate(num_beams=5)``, ``early_stopping=True`` (fairseq
  stops once ``beam`` hypotheses are finished), at most ``2 * source length + 10`` new tokens
  (fairseq's ``max_len_a`` / ``max_len_b``), ``<pad>`` and ``<s>`` suppressed.

Presets: ``paper`` is fairseq's ``transformer`` base (6+6 layers, d 512, 8 heads, FFN 2048, dropout
0.1, peak lr 7e-4 after 4,000 warm-up steps, betas (0.9, 0.98) -- the paper's "beta_1 = 0.1" read
as a typo --, label smoothing 0.1, 4,096 tokens per batch, 100,000 steps); ``small`` is CPU-sized.
Any :class:`Hyperparameters` field overrides the preset (``--set d_model=128``). The engine's
history, its measurements and the options dropped on the way are in the README beside this
module ("Model baselines").
"""

from __future__ import annotations

import hashlib
import json
import random
import tempfile
import time
from collections import deque
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field, fields, make_dataclass, replace
from pathlib import Path
from typing import Any

from benchsmith import progress
from benchsmith.errors import ConfigError, did_you_mean, writing
from benchsmith.nlp.segment import segment, unsegment
from benchsmith.validation.baselines import engine, runtime
from benchsmith.validation.baselines.spec import Options

from . import subword
from .subword import BOS_ID, EOS_ID, PAD, PAD_ID

try:
    import torch
except ImportError as exc:  # pragma: no cover - exercised only without the models extra
    raise ConfigError("the seq2seq baseline needs torch, which is not installed",
                      hint="pip install torch==2.13.0, then pip install -e '.[models]'") from exc

IGNORE = -100  # label of padding (transformers' convention)


@dataclass(frozen=True)
class Hyperparameters(Options):
    """Model, optimisation and data options (see the module docstring for the presets)."""

    encoder_layers: int = 6
    decoder_layers: int = 6
    d_model: int = 512
    heads: int = 8
    ffn: int = 2048
    dropout: float = 0.1
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
    bpe_merges: int = 3000
    max_len: int = 256

    ZERO = ("bpe_merges",)
    POSITIVE = ("lr", "max_time_s")
    FRACTIONS = ("dropout", "label_smoothing")

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.d_model % self.heads:
            raise ConfigError(f"d_model={self.d_model} is not divisible by heads={self.heads}")

    @classmethod
    def from_preset(cls, preset: str = "small", **overrides: Any) -> Hyperparameters:
        """The preset's values with ``overrides`` applied (unknown names are a ConfigError)."""
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(overrides) - known)
        if unknown:
            raise ConfigError(f"unknown seq2seq option {unknown[0]!r}", hint=did_you_mean(unknown[0], known))
        if "betas" in overrides:
            overrides["betas"] = tuple(overrides["betas"])
        return replace(_preset(preset), **overrides)


PRESETS: dict[str, Hyperparameters] = {
    "paper": Hyperparameters(),
    "small": Hyperparameters(encoder_layers=2, decoder_layers=2, d_model=256, heads=4, ffn=1024, lr=1.5e-3,
                             warmup=400, max_tokens=2048, max_steps=4000, eval_every=250, log_every=50),
}


def _preset(name: str) -> Hyperparameters:
    if name not in PRESETS:
        raise ConfigError(f"unknown seq2seq preset {name!r}", hint=did_you_mean(name, PRESETS))
    return PRESETS[name]


# --------------------------------------------------------------------------- data

def prepare(pairs: Sequence[Sequence[str]], hp: Hyperparameters, source: Any = None,
            target: Any = None) -> tuple[list[dict[str, list[int]]], Any, Any]:
    """One feature per pair (``input_ids`` x + ``</s>``, ``labels`` y + ``</s>``) and the source /
    target vocabularies (:mod:`.subword`), learned from ``pairs`` when not given. The Chinese side
    is re-segmented by jieba (Section 5.1), the English side split on spaces."""
    english = [en for en, _ in pairs]
    chinese = [" ".join(segment(zh)) for _, zh in pairs]
    source = source or subword.source_vocab(english)
    target = target or subword.target_bpe(chinese, hp.bpe_merges)
    src = [e.ids[: hp.max_len] for e in source.encode_batch(english)]
    tgt = [t[: hp.max_len] for t in subword.encode_targets(target, chinese)]
    return [{"input_ids": [*x, EOS_ID], "labels": [*y, EOS_ID]} for x, y in zip(src, tgt)], source, target


def token_batches(features: Sequence[dict], max_tokens: int, seed: int = 0) -> list[list[int]]:
    """Indices grouped by length into batches of at most ``max_tokens`` padded tokens.

    Pairs are sorted by (source length, target length, a seeded random tie-break); a batch grows
    while ``rows * longest side`` stays within ``max_tokens`` (a longer pair forms its own batch).
    This is fairseq's ``--max-tokens``, the paper's batch size (4,096 tokens): transformers has no
    token-count sampler (``group_by_length`` fixes the number of rows, not of tokens).
    """
    rng = random.Random(seed)
    ties = [rng.random() for _ in features]
    sizes = [(len(f["input_ids"]), len(f["labels"])) for f in features]
    batches: list[list[int]] = []
    cur: list[int] = []
    longest = 0
    for i in sorted(range(len(features)), key=lambda i: (*sizes[i], ties[i])):
        if cur and max(longest, *sizes[i]) * (len(cur) + 1) > max_tokens:
            batches.append(cur)
            cur, longest = [], 0
        cur.append(i)
        longest = max(longest, *sizes[i])
    return batches + [cur] if cur else batches


class _Collator:
    """``DataCollatorForSeq2Seq`` over a training step's batch (a list of features) or evaluation
    features; queues the sizes of training batches so that the callback counts what was trained
    (accelerate's loader fetches one batch ahead)."""

    def __init__(self, source: Any, net: Any) -> None:
        from transformers import DataCollatorForSeq2Seq

        self.pad = DataCollatorForSeq2Seq(_padder(source), model=net, label_pad_token_id=IGNORE)
        self.queue: deque[tuple[int, int]] = deque()

    def __call__(self, items: Sequence[Any]) -> dict[str, Any]:
        if isinstance(items[0], list):  # a training step: one token batch
            (items,) = items
            self.queue.append((sum(len(f["labels"]) for f in items), len(items)))
        return dict(self.pad(items))


def _padder(source: Any) -> Any:
    """The source vocabulary as a transformers tokenizer: what pads ``input_ids``."""
    from transformers import PreTrainedTokenizerFast

    return PreTrainedTokenizerFast(tokenizer_object=source, pad_token=PAD)


# --------------------------------------------------------------------------- model and training

def new_model(hp: Hyperparameters, src_vocab: int, tgt_vocab: int) -> Any:
    """A randomly initialised ``MarianMTModel`` of ``hp`` (see the module docstring)."""
    from transformers import MarianConfig, MarianMTModel

    return MarianMTModel(MarianConfig(
        vocab_size=src_vocab, decoder_vocab_size=tgt_vocab, share_encoder_decoder_embeddings=False,
        tie_word_embeddings=hp.tie_target_embeddings, d_model=hp.d_model, encoder_layers=hp.encoder_layers,
        decoder_layers=hp.decoder_layers, encoder_attention_heads=hp.heads, decoder_attention_heads=hp.heads,
        encoder_ffn_dim=hp.ffn, decoder_ffn_dim=hp.ffn, activation_function="relu", dropout=hp.dropout,
        attention_dropout=hp.dropout, activation_dropout=hp.dropout, scale_embedding=True,
        max_position_embeddings=2 * hp.max_len + 16, pad_token_id=PAD_ID, bos_token_id=BOS_ID,
        eos_token_id=EOS_ID, decoder_start_token_id=BOS_ID, forced_eos_token_id=EOS_ID))


def weights_sha256(net: Any) -> str:
    """sha256 over the weights: every tensor's name, dtype, shape and bytes, in name order."""
    h = hashlib.sha256()
    for name, tensor in sorted(net.state_dict().items()):
        t = tensor.detach().cpu().contiguous().reshape(-1)
        h.update(f"{name}|{t.dtype}|{tuple(tensor.shape)}\0".encode())
        h.update(t.view(torch.uint8).numpy().tobytes())
    return h.hexdigest()


def _history(log: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Trainer's log history as one entry per logged step (train loss, lr, validation NLL)."""
    names = {"loss": "train_loss", "learning_rate": "lr", "eval_nll": "valid_nll"}
    by_step: dict[int, dict[str, Any]] = {}
    for e in log:
        for key, name in names.items():
            if key in e:
                value = e[key] if name == "lr" else round(e[key], 5)
                by_step.setdefault(e["step"], {"step": e["step"]})[name] = value
    return [by_step[s] for s in sorted(by_step)]


def _nll_per_token(logits: Any, labels: Any) -> Any:
    """Per-token NLL of the labels (0 at padding): what evaluation keeps instead of the logits."""
    logp = torch.log_softmax(logits[0].float() if isinstance(logits, tuple) else logits.float(), dim=-1)
    nll = -logp.gather(-1, labels.clamp(min=0).unsqueeze(-1)).squeeze(-1)
    return nll.masked_fill(labels.eq(IGNORE), 0.0)


def _mean_nll(pred: Any) -> dict[str, float]:
    mask = pred.label_ids != IGNORE
    return {"nll": float(pred.predictions[mask].sum() / max(mask.sum(), 1))}


def trainer_arguments(hp: Hyperparameters, device: str, output_dir: str, seed: int, evaluates: bool) -> dict:
    """``Seq2SeqTrainingArguments`` of a run on ``device`` (a plain dict: a test can check the CUDA
    flags where transformers refuses to build them): the shared precision, seeding and quiet
    defaults of every Trainer engine, then the NMT run's own (module docstring)."""
    steps = "steps" if evaluates else "no"
    return dict(
        runtime.trainer_defaults(device, seed, runtime.autocast_dtype(device)),
        output_dir=output_dir, max_steps=hp.max_steps, per_device_train_batch_size=1,
        per_device_eval_batch_size=64, learning_rate=hp.lr, lr_scheduler_type="inverse_sqrt",
        warmup_steps=hp.warmup, optim="adamw_torch", adam_beta1=hp.betas[0], adam_beta2=hp.betas[1],
        adam_epsilon=hp.adam_eps, weight_decay=hp.weight_decay, max_grad_norm=hp.clip_norm,
        label_smoothing_factor=hp.label_smoothing, logging_strategy="steps", logging_steps=hp.log_every,
        logging_nan_inf_filter=False,  # its isnan check would make every step wait for the GPU
        eval_strategy=steps, eval_steps=hp.eval_every, save_strategy=steps, save_steps=hp.eval_every,
        save_only_model=True, save_total_limit=1, load_best_model_at_end=evaluates,
        metric_for_best_model="nll", greater_is_better=False, dataloader_pin_memory=device.startswith("cuda"))


def train(train_pairs: Sequence[Sequence[str]], valid_pairs: Sequence[Sequence[str]] = (),
          preset: str = "small", *, seed: int = 1, device: str = "auto", output_dir: str | Path | None = None,
          **overrides: Any) -> TrainedModel:
    """Train a model on ``(English, Chinese)`` pairs; select the best checkpoint on ``valid_pairs``.

    ``overrides`` are :class:`Hyperparameters` fields. With no validation pairs the last weights
    are kept. ``max_time_s`` bounds the training loop (evaluations included). The record's
    ``tokens_per_s`` counts target tokens (with ``</s>``, fairseq's ``wps``) and
    ``examples_per_s`` pairs per second of training steps (evaluations and saves excluded).
    """
    from transformers import Seq2SeqTrainer, Seq2SeqTrainingArguments

    runtime.quiet_transformers()
    hp = Hyperparameters.from_preset(preset, **overrides)
    for what, given in (("training", train_pairs), ("validation", valid_pairs)):
        for i, pair in enumerate(given):
            if len(pair) != 2 or not all(isinstance(x, str) and x.strip() for x in pair):
                raise ConfigError(f"{what} pair {i} is {pair!r}; expected (English, Chinese), both non-empty")
    if not train_pairs:
        raise ConfigError("no training pairs", hint="Pass a non-empty list of (English, Chinese) pairs")
    dev = runtime.pick_device(device)
    start = time.perf_counter()
    runtime.seed_everything(seed)
    features, source, target = prepare(train_pairs, hp)
    batches = [[features[i] for i in b] for b in token_batches(features, hp.max_tokens, seed)]
    valid = prepare(valid_pairs, hp, source, target)[0] if valid_pairs else []  # 64 pairs a batch, in order
    net = new_model(hp, source.get_vocab_size(), target.get_vocab_size())
    collator = _Collator(source, net)
    with tempfile.TemporaryDirectory(prefix="benchsmith-nmt-") as tmp, \
            progress.bar("train seq2seq", total=hp.max_steps) as bar:
        watch = runtime.watch_class()(bar, hp.max_time_s, collator.queue.popleft, bool(valid))
        args = Seq2SeqTrainingArguments(**trainer_arguments(hp, dev, tmp, seed, bool(valid)))
        trainer = runtime.quiet(Seq2SeqTrainer(
            model=net, args=args, train_dataset=batches, eval_dataset=valid or None, data_collator=collator,
            callbacks=[watch], compute_metrics=_mean_nll, preprocess_logits_for_metrics=_nll_per_token))
        trainer.train()
    state, net = trainer.state, trainer.model.eval()
    best_step = int(state.best_model_checkpoint.rsplit("-", 1)[1]) if state.best_model_checkpoint else 0
    record = runtime.RunRecord(
        baseline="seq2seq-transformer", model=f"transformer-{preset} (trained from scratch)",
        model_sha256=weights_sha256(net), seed=seed, device=dev, steps=state.global_step)
    record.hyperparameters = {
        "preset": preset, **asdict(hp), "parameters": net.num_parameters(only_trainable=True),
        "model_class": "MarianMTModel", "loop": "transformers.Seq2SeqTrainer",
        "src_vocab": source.get_vocab_size(), "tgt_vocab": target.get_vocab_size(),
        "bpe_merges_learned": len(json.loads(target.to_str())["model"]["merges"]),
        "train_pairs": len(train_pairs), "valid_pairs": len(valid_pairs), "batches_per_epoch": len(batches),
        "epochs": round(state.global_step / len(batches), 2), "best_step": best_step,
        "best_valid": None if state.best_metric is None else round(state.best_metric, 5),
        "stopped_by": "max_time_s" if watch.timed_out else "max_steps",
        "train_time_s": round(watch.train_time, 3),
    }
    record.throughput(watch.examples, watch.tokens, watch.train_time)
    out = TrainedModel(net, source, target, hp, record, _history(state.log_history), best_step, dev, preset)
    record.wall_time_s = round(time.perf_counter() - start, 3)
    if output_dir is not None:
        out.save(output_dir)
    return out


# --------------------------------------------------------------------------- the trained model

@dataclass
class TrainedModel:
    """A trained model, its vocabularies (``tokenizers.Tokenizer``) and what reproduces it."""

    model: Any
    source: Any
    target: Any
    hp: Hyperparameters
    record: runtime.RunRecord
    history: list[dict] = field(default_factory=list)
    best_step: int = 0
    device: str = "cpu"
    preset: str = "small"

    def save(self, path: str | Path) -> Path:
        """``save_pretrained`` plus ``source_vocab.json``, ``target_bpe.json`` and ``nmt.json``
        (preset, hyperparameters, best step, run record, history)."""
        path = Path(path)
        saved = {"preset": self.preset, "hyperparameters": asdict(self.hp), "best_step": self.best_step,
                 "record": self.record.to_dict(), "history": self.history}
        with writing(path):  # a full disk names the model folder (exit 3)
            self.model.save_pretrained(path)
            self.source.save(str(path / "source_vocab.json"))
            self.target.save(str(path / "target_bpe.json"))
            (path / "nmt.json").write_text(json.dumps(saved, indent=2, ensure_ascii=False), encoding="utf-8")
        return path


@contextmanager
def generation_vocab(net: Any) -> Iterator[None]:
    """``net.config.vocab_size`` set to the target vocabulary while ``generate`` runs.

    Our Marian has separate vocabularies (``vocab_size`` = English words, ``decoder_vocab_size`` =
    target BPE). transformers 5.17's beam search sized its scores by ``config.vocab_size`` and failed
    on the first batch (torch 2.11 + transformers 5.17: "RuntimeError:
    shape '[64, 9950]' is invalid for input of size 1986880": 1,990 source words, 6,209 target
    pieces); 5.24 reads the width of the logits. The encoder's embeddings are built already, so the
    value only steers generation, and it is restored afterwards."""
    saved = net.config.vocab_size
    net.config.vocab_size = net.config.decoder_vocab_size
    try:
        yield
    finally:
        net.config.vocab_size = saved


def translate(model: TrainedModel, sources: Sequence[str], beam: int = 5, *, length_penalty: float = 1.0,
              batch_size: int = 64) -> list[str]:
    """Plain Chinese translations of English sentences (what ``evaluate cognition`` reads), in
    order; at most ``2 * longest source in the batch + 10`` new tokens."""
    if type(beam) is not int or beam < 1:
        raise ConfigError(f"beam={beam!r}; expected a positive int")
    net, dev, padder = model.model, model.device, _padder(model.source)
    ids = [e.ids[: model.hp.max_len] + [EOS_ID] for e in model.source.encode_batch(list(sources))]
    order = sorted(range(len(ids)), key=lambda i: len(ids[i]))  # similar lengths share a batch
    results, dtype = [""] * len(ids), runtime.autocast_dtype(dev)  # bf16 / fp16 autocast on CUDA
    with torch.inference_mode(), torch.autocast(dev.split(":")[0], dtype=dtype, enabled=dtype is not None), \
            generation_vocab(net.eval()):
        for start in progress.track(range(0, len(order), batch_size), f"decode (beam {beam})"):
            batch = order[start : start + batch_size]
            src = padder.pad({"input_ids": [ids[i] for i in batch]}, return_tensors="pt").to(dev)
            out = net.generate(**src, num_beams=beam, do_sample=False, early_stopping=True,
                               length_penalty=length_penalty, max_new_tokens=2 * src.input_ids.size(1) + 10,
                               suppress_tokens=[PAD_ID, BOS_ID], pad_token_id=PAD_ID, eos_token_id=EOS_ID)
            for i, row in zip(batch, out[:, 1:].tolist()):  # drop the decoder start token
                row = row[: row.index(EOS_ID)] if EOS_ID in row else row
                results[i] = unsegment(subword.decode(model.target, row))
    return results


# --------------------------------------------------------------------------- the nmt engine

#: The ``nmt`` engine's options: ``preset``, the decoder's ``beam`` and ``length_penalty``, and
#: every :class:`Hyperparameters` field, None meaning "the preset's value" (built from its fields
#: so that the two never drift apart).
NMTOptions = make_dataclass(
    "NMTOptions",
    [("preset", str, "small"), ("beam", int, 5), ("length_penalty", float, 1.0)]
    + [(f.name, f"{f.type} | None", None) for f in fields(Hyperparameters)],
    frozen=True, namespace={"__post_init__": lambda self: _preset(self.preset), "__module__": __name__},
)


@engine.register_engine("nmt", options=NMTOptions, ignores={"epochs": "it trains for --max-steps"})
def nmt_engine(call: engine.EngineCall) -> engine.EngineOutput:
    """CoGnition's Transformer NMT from scratch: train on ``config/train_split``, select on
    ``selection_split``, translate every evaluated split, score with the spec's hook."""
    spec, release, opts, o = call.spec, call.release, call.run, call.options
    out = engine.EngineOutput()
    train_on, out.caveats = engine.train_split(spec, release, opts)
    select, caveats = engine.selection_split(spec, release, train_on)
    out.caveats += caveats
    pairs = [engine.pairs(call.items(spec.config, split, seq=True)) if split else []
             for split in (train_on, select)]
    settings = {f.name: getattr(o, f.name) for f in fields(Hyperparameters) if getattr(o, f.name) is not None}
    preset = opts.preset or o.preset
    settings["max_steps"] = steps = opts.max_steps or settings.get("max_steps", _preset(preset).max_steps)
    if preset != "paper":
        out.caveats.append(f"preset {preset} (not the paper's Transformer base: --preset paper)")
    elif steps < PRESETS["paper"].max_steps:
        out.caveats.append(f"trained for at most {steps:,} steps, the paper {PRESETS['paper'].max_steps:,}")
    model_dir = engine.out_file(opts, "model") if opts.save_model else None
    model = train(*pairs, preset, seed=opts.seed, device=opts.device, output_dir=model_dir, **settings)
    if model_dir is not None:
        out.outputs["model"] = model_dir
    t0 = time.perf_counter()
    decoded = [(config, split, items, translate(model, [it.source for it in items], beam=o.beam,
                                                length_penalty=o.length_penalty))
               for config, split, items in engine.eval_items(call, out)]
    model.record.hyperparameters.update(
        spec=spec.name, train=f"{spec.config}/{train_on}", selection=select and f"{spec.config}/{select}",
        beam=o.beam, length_penalty=o.length_penalty, decode_time_s=round(time.perf_counter() - t0, 3))
    engine.score_outputs(call, out, decoded)
    out.records, out.model, out.details["history"] = [model.record], model.record.model, model.history
    return out
