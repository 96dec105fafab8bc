"""How each kind of declared baseline runs (:func:`run_kind`), on the engines of this package.

Every runner takes the spec, the release, the run options and the ``(config, split)``
pairs to score, and returns a :class:`KindOutput`: score rows (plain dicts, see
:class:`~benchsmith.validation.baselines.spec.ScoreRow`), the engines' run records, the
model's name, details, files written, notes and caveats. :func:`spec.run_spec` adds the
paper's figures and the gate.

* ``cross_encoder`` -> :func:`~.multiple_choice.train_multiple_choice`: trains on
  ``config/train_split``, selects on ``config/selection_split``, scores every pair.
  Rows: accuracy (%) per split, with the chance level of the items scored.
* ``use_zero_shot`` -> :mod:`~.use_transfer`: the head trained on ``config/train_split``
  (the source language); selection on ``config/selection_split`` (CO-ZS) or, with
  ``options={"selection": "target"}`` (CO-TLV), on each scored config's own
  ``selection_split``. Rows: accuracy per config (the spec's declared ``averages`` are
  added by :func:`~.spec.run_spec`); details: the head's learning rate, selected update
  and training accuracy per head.
* ``label_issues`` -> :func:`~.label_issues.detect_label_issues` over the pooled pairs
  (ids prefixed with their split). Rows: out-of-fold accuracy (%) and the number flagged;
  details: the ranked candidate errata.
* ``nmt`` -> :func:`~.seq2seq.train` / :func:`~.seq2seq.translate` (preset ``small``
  unless ``--preset``/``options["preset"]``); ``generation`` ->
  :func:`~.generation.finetune_and_generate`; ``copy``: the source is the output. Rows:
  whatever the spec's ``score`` returns (default: sacreBLEU against the references).
* ``lm_scoring`` -> :func:`~.lm_scoring.score_suite` into ``<out>/<config>.<split>.scores.txt``,
  then the spec's ``score`` (the dataset's scorer reads that file). ``--model-path`` may
  hold ``{config}``, ``{src}``, ``{tgt}`` (the config's first and last language), so one
  command scores every pair with its own model.

The training split must exist: a release built without it (``--skip-missing``) is a
ConfigError that names the split, why the build skipped it, and ``--train-split``.
Training on another split than the declared one, no model selection, a subsample or a
preset other than the paper's are *caveats*: the run is then not comparable with the
paper, and says so.
"""

from __future__ import annotations

import json
import random
import tempfile
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from benchsmith.errors import ConfigError, did_you_mean

if TYPE_CHECKING:
    from benchsmith.validation.baselines.spec import BaselineSpec, RunOptions

Pair = tuple[str, str]


@dataclass
class KindOutput:
    rows: list[dict[str, Any]] = field(default_factory=list)
    records: list[Any] = field(default_factory=list)
    model: str = ""
    details: dict[str, Any] = field(default_factory=dict)
    outputs: dict[str, Path] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    caveats: list[str] = field(default_factory=list)


# --------------------------------------------------------------------------- shared helpers


def train_split(spec: BaselineSpec, release: Any, opts: RunOptions) -> tuple[str, list[str]]:
    """The split to train on and the caveat when it is not the declared one; ConfigError
    naming the split (and why the build lacks it) when the release does not have it."""
    split = opts.train_split or spec.train_split
    config = spec.config
    if split is None:
        raise ConfigError(f"baseline {spec.name!r} declares no train split", hint="Pass --train-split SPLIT")
    if config not in release.configs():
        raise ConfigError(f"baseline {spec.name!r} trains on config {config!r}, which {release.name} "
                          f"{release.version} does not have", hint=did_you_mean(config, release.configs()))
    splits = release.splits(config)
    if split not in splits:
        entry = release.manifest["configs"][config]
        skipped = (entry.get("skipped_splits") or {}).get(split)
        why = ""
        if skipped:
            from benchsmith.cards.paths import reason

            why = f": the build skipped it ({reason(str(skipped))})"
        declared = split == spec.train_split
        alternatives = [s for s in splits if s not in spec.eval_splits] or splits
        hint = (f"Pass --train-split {alternatives[0]} to train on another split (the result is then NOT comparable "
                f"with the paper), or rebuild the release with the {split} split's sources"
                if declared and alternatives else did_you_mean(split, splits))
        raise ConfigError(f"the {split} split of {release.name}/{config} is missing in release {release.version}"
                          f"{why}; baseline {spec.name!r} trains on it", hint=hint)
    caveats = []
    if split != spec.train_split:
        caveats.append(f"trained on {config}/{split} instead of {config}/{spec.train_split}, the paper's training "
                       "split")
    return split, caveats


def selection_split(spec: BaselineSpec, release: Any, train: str | None) -> tuple[str | None, list[str]]:
    """The model-selection split (None and a caveat when it is the training split or absent)."""
    split = spec.selection_split
    if split is None:
        return None, []
    if split == train:
        return None, [f"no model selection: {spec.config}/{split} is also the training split (last weights kept)"]
    if split not in release.splits(spec.config):
        return None, [f"no model selection: {spec.config}/{split} is not in this release (last weights kept)"]
    return split, []


def subsample(items: Sequence[Any], n: int | None, seed: int) -> list[Any]:
    """A seeded random ``n`` of ``items`` in their order (the multiple-choice engine's rule)."""
    if n is None or len(items) <= n:
        return list(items)
    keep = sorted(random.Random(seed).sample(range(len(items)), n))
    return [items[i] for i in keep]


def engine_keys(kind: str) -> set[str]:
    """The engine options a kind takes (what ``--set KEY=VALUE`` may name for it)."""
    import inspect
    from dataclasses import fields as dc_fields

    if kind in ("cross_encoder", "label_issues"):
        from benchsmith.validation.baselines.multiple_choice import MCOptions

        keys = {f.name for f in dc_fields(MCOptions)} - {"model_path", "device", "seed", "max_examples"}
        return keys | ({"folds", "top", "filter_by"} if kind == "label_issues" else set())
    if kind == "use_zero_shot":
        from benchsmith.validation.baselines.use_transfer import USEOptions

        return {f.name for f in dc_fields(USEOptions)} - {"seed", "device"} | {"selection"}
    if kind == "nmt":
        from benchsmith.validation.baselines.seq2seq import Hyperparameters

        return {f.name for f in dc_fields(Hyperparameters)} | {"preset", "beam", "length_penalty"}
    if kind == "generation":
        from benchsmith.validation.baselines.generation import finetune_and_generate

        return set(inspect.signature(finetune_and_generate).parameters) - {
            "model_path", "train_pairs", "eval_sources", "seed", "device", "output_dir"}
    if kind == "lm_scoring":
        from benchsmith.validation.baselines.lm_scoring import score_suite

        return set(inspect.signature(score_suite).parameters) - {"model_path", "suite_items", "out_path", "seed",
                                                                 "device"}
    return set()


def engine_options(spec: BaselineSpec, opts: RunOptions, drop: Sequence[str] = (),
                   notes: list[str] | None = None) -> dict[str, Any]:
    """The spec's engine defaults with the command line's ``--set`` overrides on top; overrides
    this kind's engine does not take are left out (and noted: they were meant for another kind)."""
    known = engine_keys(spec.kind)
    foreign = sorted(k for k in opts.overrides if k not in known)
    if foreign and notes is not None:
        notes.append(f"--set {', '.join(foreign)} does not apply to {spec.kind}: ignored")
    out = {**spec.options, **{k: v for k, v in opts.overrides.items() if k in known}}
    for key in drop:
        out.pop(key, None)
    return out


def policy_mc_items(release: Any, config: str, split: str) -> list[Any]:
    """Multiple-choice items from the config's typed policy: ``choices`` are the options,
    ``context`` fields (joined by a space) the context, the label's int the answer."""
    from benchsmith.validation.baselines.multiple_choice import MCItem
    from benchsmith.validation.dataview import ConfigView

    view = ConfigView(release, config)
    mc = view.multiple_choice
    if mc is None:
        raise ConfigError(f"config {config!r} is not multiple choice (its policy declares no choices/label)",
                          hint="Declare Policy(choices=..., label=...) or give the baseline an items adapter")
    out = []
    for n, row in enumerate(release.examples(config, split)):
        options = list(row[mc.list_field]) if mc.list_field else [row[c] for c in mc.choices]
        context = " ".join(str(row[c]) for c in mc.context if row.get(c) not in (None, "")) or None
        ident = row.get(view.id_field) if view.id_field else None
        out.append(MCItem(context=context, options=options, label=int(row[mc.label]),
                          id=str(ident if ident is not None else n)))
    return out


def mc_items(spec: BaselineSpec, release: Any, config: str, split: str) -> list[Any]:
    """The spec's items for ``config/split`` (adapter or policy), with ``options_only`` applied."""
    from benchsmith.validation.baselines.multiple_choice import options_only

    items = list(spec.items(release, config, split)) if spec.items else policy_mc_items(release, config, split)
    return options_only(items) if spec.variant == "options_only" else items


def seq_items(spec: BaselineSpec, release: Any, config: str, split: str) -> list[Any]:
    if spec.items is None:
        raise ConfigError(f"baseline {spec.name!r} ({spec.kind}) needs an items adapter returning Seq2SeqItem",
                          hint="Declare items=... in the dataset's baseline.py")
    return list(spec.items(release, config, split))


def chance(items: Sequence[Any]) -> float:
    return sum(1 / len(it.options) for it in items) / len(items)


def accuracy_row(config: str, split: str, accuracy: float, items: Sequence[Any]) -> dict[str, Any]:
    return {"config": config, "split": split, "metric": "accuracy", "value": round(100 * accuracy, 2),
            "n": len(items), "chance": round(chance(items), 6)}


def model_path(opts: RunOptions, spec: BaselineSpec, **fields: str) -> Path | None:
    """``--model-path`` with ``{config}``/``{src}``/``{tgt}`` filled in; ConfigError when required and absent."""
    if opts.model_path is None:
        if spec.requires_model_path:
            raise ConfigError(f"baseline {spec.name!r} ({spec.kind}) needs --model-path DIR (a local model folder); "
                              "nothing is downloaded", hint=spec.description or "Pass --model-path")
        return None
    text = str(opts.model_path)
    try:
        return Path(text.format(**fields)) if "{" in text else Path(text)
    except (KeyError, IndexError) as exc:
        raise ConfigError(f"--model-path {text!r} names an unknown field {exc}",
                          hint="Fields: {config}, {src}, {tgt}") from None


def out_file(opts: RunOptions, name: str) -> Path | None:
    if opts.out_dir is None:
        return None
    folder = Path(opts.out_dir)
    folder.mkdir(parents=True, exist_ok=True)
    return folder / name


def write_lines(path: Path, lines: Sequence[str]) -> None:
    from benchsmith.registry import write_text_atomic

    write_text_atomic(path, "".join(line.replace("\n", " ") + "\n" for line in lines))


def score_rows(spec: BaselineSpec, release: Any, config: str, split: str, items: Sequence[Any],
               outputs: Any, details: dict[str, Any]) -> list[dict[str, Any]]:
    """The spec's scorer (default: sacreBLEU) as rows; its non-numeric entries go to ``details``.
    A metric ``G/name`` counts the items of group ``G`` when the scorer gives ``n_by_group``."""
    if spec.score is not None:
        scored = dict(spec.score(release, config, split, items, outputs))
    elif spec.kind == "lm_scoring":
        raise ConfigError(f"baseline {spec.name!r} needs a score hook that reads the suite's scores file")
    else:
        import sacrebleu

        refs = [list(it.references) for it in items]
        width = max(len(r) for r in refs)
        streams = [[r[k] if k < len(r) else r[0] for r in refs] for k in range(width)]
        bleu = sacrebleu.BLEU()
        res = bleu.corpus_score(list(outputs), streams)
        scored = {"bleu": round(res.score, 2), "signature": str(bleu.get_signature())}
    rows = []
    extra = {}
    counts = scored.pop("n_by_group", None) or {}
    for metric, value in scored.items():
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            group = metric.rpartition("/")[0]
            rows.append({"config": config, "split": split, "metric": metric, "value": value,
                         "n": counts.get(group, len(items)) if group else len(items)})
        else:
            extra[metric] = value
    if extra:
        details.setdefault("scorer", {})[f"{config}/{split}"] = extra
    return rows


# --------------------------------------------------------------------------- multiple choice


def _cross_encoder(spec: BaselineSpec, release: Any, opts: RunOptions,
                   evaluations: Sequence[tuple[str, str]]) -> KindOutput:
    from benchsmith.validation.baselines.multiple_choice import train_multiple_choice

    out = KindOutput()
    train, out.caveats = train_split(spec, release, opts)
    select, caveats = selection_split(spec, release, train)
    out.caveats += caveats
    n, seed = opts.max_examples, opts.seed
    train_items = mc_items(spec, release, spec.config, train)
    validation = mc_items(spec, release, spec.config, select) if select else None
    evaluate: dict[str, list[Any]] = {}
    for config, split in evaluations:
        if (config, split) in ((spec.config, select), (spec.config, train)):
            continue  # the selection split is scored anyway; the training split is not a score
        items = mc_items(spec, release, config, split)
        if items:
            evaluate[f"{config}/{split}"] = items
        else:
            out.notes.append(f"{config}/{split} is empty: not scored")
    options = {"epochs": opts.epochs} if opts.epochs else {}
    if opts.max_steps:
        out.notes.append("--max-steps does not apply to cross_encoder (it trains whole epochs): ignored")
    result = train_multiple_choice(train_items, validation, evaluate, model_path=opts.model_path, device=opts.device,
                                   seed=seed, max_examples=n, **{**engine_options(spec, opts, notes=out.notes), **options})
    if validation is not None:
        out.rows.append(accuracy_row(spec.config, select, result.accuracy["validation"],
                                     subsample(validation, n, seed)))
    for key, items in evaluate.items():
        config, _, split = key.partition("/")
        out.rows.append(accuracy_row(config, split, result.accuracy[key], subsample(items, n, seed)))
    record = result.record
    record.hyperparameters.update(spec=spec.name, variant=spec.variant, train=f"{spec.config}/{train}",
                                  selection=f"{spec.config}/{select}" if select else None)
    out.records = [record]
    out.model = record.model
    out.details = {"best_epoch": result.best_epoch, "history": [asdict(h) for h in result.history]}
    path = out_file(opts, f"{spec.name}.predictions.jsonl")
    if path is not None:
        lines = [json.dumps({"split": s, "id": i, **asdict(p)}, ensure_ascii=False)
                 for s, preds in result.predictions.items() for i, p in preds.items()]
        write_lines(path, lines)
        out.outputs["predictions"] = path
    return out


def _use_zero_shot(spec: BaselineSpec, release: Any, opts: RunOptions,
                   evaluations: Sequence[tuple[str, str]]) -> KindOutput:
    from benchsmith.validation.baselines import use_transfer as ut

    out = KindOutput()
    train, out.caveats = train_split(spec, release, opts)
    n, seed = opts.max_examples, opts.seed
    options = engine_options(spec, opts, drop=("selection",), notes=out.notes)
    target = (opts.overrides.get("selection") or spec.options.get("selection", "source")) == "target"
    if opts.max_steps:
        options["max_updates"] = opts.max_steps
    if opts.epochs:
        out.notes.append("--epochs does not apply to use_zero_shot (updates with early stopping; --max-steps "
                         "caps them): ignored")
    base = ut.USEOptions(seed=seed, device=opts.device)
    en_train = subsample(mc_items(spec, release, spec.config, train), n, seed)
    name = None if opts.encoder is None else getattr(opts.encoder, "__qualname__", "custom encoder")

    def head(select_config: str) -> Any:
        split, caveats = (spec.selection_split, []) if select_config != spec.config \
            else selection_split(spec, release, train)
        for c in caveats:
            if c not in out.caveats:
                out.caveats.append(c)
        if split is None or split not in release.splits(select_config):
            raise ConfigError(f"use_zero_shot selects on {select_config}/{spec.selection_split}, which this release "
                              "lacks", hint="Build that split, or run the CO-ZS setup")
        val = subsample(mc_items(spec, release, select_config, split), n, seed)
        res = ut.train_use_head(en_train, val, options=base, encoder=opts.encoder, encoder_name=name, **options)
        res.record.hyperparameters.update(spec=spec.name, train=f"{spec.config}/{train}",
                                          selection=f"{select_config}/{split}")
        out.records.append(res.record)
        out.rows.append(accuracy_row(select_config, split, res.validation_accuracy, val))
        heads.append({"selection": f"{select_config}/{split}", "train": f"{spec.config}/{train}", "lr": res.lr,
                      "best_update": res.best_update, "updates": res.record.steps, "lr_search": res.search,
                      "train_accuracy": res.train_accuracy})
        return res

    heads: list[dict[str, Any]] = []
    shared = None if target else head(spec.config)
    for config, split in evaluations:
        items = subsample(mc_items(spec, release, config, split), n, seed)
        if not items:
            out.notes.append(f"{config}/{split} is empty: not scored")
            continue
        res = shared if shared is not None else head(config)
        accuracy = ut.evaluate(res, items)
        out.rows.append(accuracy_row(config, split, accuracy, items))
    out.model = out.records[0].model if out.records else "USE"
    out.details = {"selection": f"each scored config's {spec.selection_split} split" if target
                   else f"{spec.config}/{spec.selection_split}", "heads": heads}
    for h in heads:
        out.notes.append(f"head selected on {h['selection']}: lr {h['lr']} at update {h['best_update']} "
                         f"({h['updates']} updates over the lr grid); its accuracy on {h['train']} "
                         f"{100 * h['train_accuracy']:.1f}%")
    return out


def _label_issues(spec: BaselineSpec, release: Any, opts: RunOptions,
                  evaluations: Sequence[tuple[str, str]]) -> KindOutput:
    from benchsmith.validation.baselines.label_issues import DEFAULT_FOLDS, detect_label_issues
    from benchsmith.validation.baselines.multiple_choice import MCOptions

    out = KindOutput()
    items = []
    splits = []
    for config, split in evaluations:
        splits.append(split)
        items += [replace(it, id=f"{split}/{it.id}") for it in mc_items(spec, release, config, split)]
    items = subsample(items, opts.max_examples, opts.seed)
    options = engine_options(spec, opts, drop=("folds", "top", "filter_by"), notes=out.notes)
    if opts.epochs:
        options["epochs"] = opts.epochs
    settings = {**spec.options, **opts.overrides}
    folds = int(settings.get("folds", DEFAULT_FOLDS))
    mc = MCOptions.make(model_path=opts.model_path, device=opts.device, **options)
    report = detect_label_issues(items, folds=folds, seed=opts.seed, options=mc, top=settings.get("top"),
                                 filter_by=settings.get("filter_by", "prune_by_noise_rate"))
    where = "+".join(splits)
    config = evaluations[0][0]
    out.rows = [{"config": config, "split": where, "metric": "out_of_fold_accuracy",
                 "value": round(100 * report.out_of_fold_accuracy, 2), "n": report.n_items},
                {"config": config, "split": where, "metric": "flagged", "value": len(report.issues),
                 "n": report.n_items}]
    for r in report.records:
        r.hyperparameters.update(spec=spec.name, items=f"{config}/{where}")
    out.records = list(report.records)
    out.model = out.records[0].model if out.records else ""
    out.details = {"candidate_errata": [asdict(i) for i in report.issues], "folds": report.folds,
                   "filter_by": report.filter_by, "n_items": report.n_items,
                   "note": "candidates for a maintainer to read, never applied: a flagged item may be hard, not wrong"}
    return out


# --------------------------------------------------------------------------- outputs: nmt, generation, copy


def _pairs(items: Sequence[Any]) -> list[Pair]:
    return [(it.source, ref) for it in items for ref in it.references if ref and ref.strip()]


def _score_outputs(spec: BaselineSpec, release: Any, opts: RunOptions, out: KindOutput,
                   batches: Sequence[tuple[str, str, list[Any], list[str]]]) -> None:
    for config, split, items, hyps in batches:
        path = out_file(opts, f"{config}.{split}.hyp.txt")
        if path is not None:
            write_lines(path, hyps)
            out.outputs[f"{config}/{split}"] = path
        out.rows += score_rows(spec, release, config, split, items, hyps, out.details)


def _eval_items(spec: BaselineSpec, release: Any, opts: RunOptions,
                evaluations: Sequence[tuple[str, str]], out: KindOutput) -> list[tuple[str, str, list[Any]]]:
    batches = []
    for config, split in evaluations:
        items = subsample(seq_items(spec, release, config, split), opts.max_examples, opts.seed)
        if items:
            batches.append((config, split, items))
        else:
            out.notes.append(f"{config}/{split} is empty: not scored")
    return batches


def _nmt(spec: BaselineSpec, release: Any, opts: RunOptions, evaluations: Sequence[tuple[str, str]]) -> KindOutput:
    from benchsmith.validation.baselines import seq2seq

    out = KindOutput()
    train, out.caveats = train_split(spec, release, opts)
    select, caveats = selection_split(spec, release, train)
    out.caveats += caveats
    n, seed = opts.max_examples, opts.seed
    train_pairs = _pairs(subsample(seq_items(spec, release, spec.config, train), n, seed))
    valid_pairs = _pairs(subsample(seq_items(spec, release, spec.config, select), n, seed)) if select else []
    settings = engine_options(spec, opts, drop=("preset", "beam", "length_penalty"), notes=out.notes)
    preset = opts.preset or spec.options.get("preset", "small")
    if preset not in seq2seq.PRESETS:
        raise ConfigError(f"unknown seq2seq preset {preset!r}", hint=did_you_mean(preset, seq2seq.PRESETS))
    if opts.max_steps:
        settings["max_steps"] = opts.max_steps
    if opts.epochs:
        out.notes.append("--epochs does not apply to nmt (it trains for --max-steps): ignored")
    if preset != "paper":
        out.caveats.append(f"preset {preset} (not the paper's Transformer base: --preset paper)")
    paper_steps = seq2seq.PRESETS["paper"].max_steps
    steps = settings.get("max_steps", seq2seq.PRESETS[preset].max_steps)
    if preset == "paper" and steps < paper_steps:
        out.caveats.append(f"trained for at most {steps:,} steps, the paper {paper_steps:,}")
    model_dir = out_file(opts, "model") if opts.save_model else None
    model = seq2seq.train(train_pairs, valid_pairs, preset, seed=seed, device=opts.device, output_dir=model_dir,
                          **settings)
    if model_dir is not None:
        out.outputs["model"] = model_dir
    beam = int({**spec.options, **opts.overrides}.get("beam", 5))
    penalty = float({**spec.options, **opts.overrides}.get("length_penalty", 1.0))
    t0 = time.perf_counter()
    decoded = []
    for config, split, items in _eval_items(spec, release, opts, evaluations, out):
        decoded.append((config, split, items, seq2seq.translate(model, [it.source for it in items], beam=beam,
                                                               length_penalty=penalty)))
    record = model.record
    record.hyperparameters.update(spec=spec.name, train=f"{spec.config}/{train}",
                                  selection=f"{spec.config}/{select}" if select else None, beam=beam,
                                  length_penalty=penalty, decode_time_s=round(time.perf_counter() - t0, 3))
    _score_outputs(spec, release, opts, out, decoded)
    out.records = [record]
    out.model = record.model
    out.details["history"] = model.history
    return out


def _generation(spec: BaselineSpec, release: Any, opts: RunOptions,
                evaluations: Sequence[tuple[str, str]]) -> KindOutput:
    from benchsmith.validation.baselines.generation import finetune_and_generate

    out = KindOutput()
    path = model_path(opts, spec)
    train, out.caveats = train_split(spec, release, opts)
    pairs = _pairs(subsample(seq_items(spec, release, spec.config, train), opts.max_examples, opts.seed))
    batches = _eval_items(spec, release, opts, evaluations, out)
    sources = [it.source for _, _, items in batches for it in items]
    settings = engine_options(spec, opts, notes=out.notes)
    if opts.epochs:
        settings["epochs"] = opts.epochs
    if opts.max_steps:
        settings["max_steps"] = opts.max_steps
    outputs, record = finetune_and_generate(path, pairs, sources, seed=opts.seed, device=opts.device, **settings)
    record.hyperparameters.update(spec=spec.name, train=f"{spec.config}/{train}")
    decoded, k = [], 0
    for config, split, items in batches:
        decoded.append((config, split, items, outputs[k:k + len(items)]))
        k += len(items)
    _score_outputs(spec, release, opts, out, decoded)
    out.records = [record]
    out.model = record.model
    return out


def _copy(spec: BaselineSpec, release: Any, opts: RunOptions, evaluations: Sequence[tuple[str, str]]) -> KindOutput:
    from benchsmith.validation.baselines.runtime import RunRecord, timed

    out = KindOutput(model="copy (the source is the output; no model)")
    batches = _eval_items(spec, release, opts, evaluations, out)
    record = RunRecord(baseline="copy-source", model=out.model, model_sha256=None, seed=opts.seed, device="cpu",
                       dtype="-", hyperparameters={"spec": spec.name})
    with timed(record, examples=sum(len(items) for _, _, items in batches)):
        _score_outputs(spec, release, opts, out, [(c, s, items, [it.source for it in items])
                                                  for c, s, items in batches])
    out.records = [record]
    return out


def _lm_scoring(spec: BaselineSpec, release: Any, opts: RunOptions,
                evaluations: Sequence[tuple[str, str]]) -> KindOutput:
    from benchsmith.validation.baselines.lm_scoring import score_suite

    out = KindOutput()
    if opts.max_examples:
        out.notes.append("--max-examples does not apply to lm_scoring (a scores file covers the whole suite): ignored")
    settings = engine_options(spec, opts, notes=out.notes)
    with tempfile.TemporaryDirectory(prefix="benchsmith-scores-") as tmp:
        for config, split in evaluations:
            langs = list(release.manifest["configs"][config].get("languages") or [""])
            path = model_path(opts, spec, config=config, src=langs[0], tgt=langs[-1])
            items = list(spec.items(release, config, split)) if spec.items else list(release.examples(config, split))
            target = out_file(opts, f"{config}.{split}.scores.txt") or Path(tmp) / f"{config}.{split}.scores.txt"
            record = score_suite(path, items, target, device=opts.device, seed=opts.seed, **settings)
            record.hyperparameters.update(spec=spec.name, config=config, split=split)
            out.records.append(record)
            out.rows += score_rows(spec, release, config, split, items, target, out.details)
            if opts.out_dir is not None:
                out.outputs[f"{config}/{split}"] = target
    out.model = out.records[0].model if len({r.model for r in out.records}) == 1 \
        else str(opts.model_path)
    return out


RUNNERS = {
    "cross_encoder": _cross_encoder,
    "use_zero_shot": _use_zero_shot,
    "label_issues": _label_issues,
    "nmt": _nmt,
    "generation": _generation,
    "copy": _copy,
    "lm_scoring": _lm_scoring,
}


def run_kind(spec: BaselineSpec, release: Any, opts: RunOptions, evaluations: Sequence[tuple[str, str]]) -> KindOutput:
    """Run ``spec`` (see module docstring); the rows and records of one call."""
    runner = RUNNERS.get(spec.kind)
    if runner is None:
        raise ConfigError(f"no runner for baseline kind {spec.kind!r}", hint=did_you_mean(spec.kind, RUNNERS))
    if spec.requires_model_path and opts.model_path is None:
        model_path(opts, spec)  # the one clear error before any work
    return runner(spec, release, opts, evaluations)


__all__ = ["RUNNERS", "KindOutput", "mc_items", "policy_mc_items", "run_kind", "seq_items", "train_split"]
