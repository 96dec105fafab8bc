"""The generic baseline engines (any dataset), registered when this module is imported (on the
first engine lookup). The model, device, seed, epochs and ``--max-examples`` come from the run
(:class:`~.engine.RunOptions`), never from an engine's options.

* ``cross_encoder`` (:class:`~.multiple_choice.MCOptions`): trains on ``config/train_split``,
  selects on ``config/selection_split``, scores every pair; rows: accuracy (%) per split with
  the chance level of the items scored.
* ``label_issues`` (:class:`LabelIssuesOptions`): :func:`~.label_issues.detect_label_issues`
  over the pooled splits (ids prefixed with their split); rows: out-of-fold accuracy (%) and
  the number flagged; details: the ranked candidate errata.
* ``generation`` (:class:`~.generation.GenerationOptions`, ``--model-path`` required) and
  ``copy`` (the source is the output); rows: the spec's ``score`` (default sacreBLEU).
"""

from __future__ import annotations

import json
import time
from dataclasses import asdict, dataclass, replace
from typing import Any

from benchsmith.validation.baselines.engine import (
    EngineCall,
    EngineOutput,
    accuracy_row,
    eval_items,
    mc_items,
    model_path,
    out_file,
    pairs,
    register_engine,
    score_outputs,
    selection_split,
    seq_items,
    subsample,
    train_split,
    write_lines,
)
from benchsmith.validation.baselines.generation import GenerationOptions
from benchsmith.validation.baselines.label_issues import DEFAULT_FOLDS
from benchsmith.validation.baselines.multiple_choice import MCOptions


def _items(call: EngineCall, config: str, split: str) -> list[Any]:
    """The spec's multiple-choice items of ``config/split``, cut to ``--max-examples`` (seeded)."""
    return subsample(mc_items(call.spec, call.release, config, split), call.run.max_examples, call.run.seed)


@register_engine("cross_encoder", options=MCOptions, accuracy=True, multiple_choice=True)
def cross_encoder(call: EngineCall) -> EngineOutput:
    from benchsmith.validation.baselines.multiple_choice import train_multiple_choice

    spec, opts = call.spec, call.run
    out = EngineOutput()
    train, out.caveats = train_split(spec, call.release, opts)
    select, caveats = selection_split(spec, call.release, train)
    out.caveats += caveats
    scored = {f"{spec.config}/{select}": _items(call, spec.config, select)} if select else {}
    evaluate: dict[str, list[Any]] = {}
    for config, split in call.evaluations:
        if (config, split) in ((spec.config, select), (spec.config, train)):
            continue  # the selection split is scored anyway; the training split is not a score
        items = _items(call, config, split)
        if items:
            evaluate[f"{config}/{split}"] = items
        else:
            out.notes.append(f"{config}/{split} is empty: not scored")
    if opts.max_steps:
        out.notes.append("--max-steps does not apply to cross_encoder (it trains whole epochs): ignored")
    options = replace(call.options, epochs=opts.epochs or call.options.epochs)
    validation = next(iter(scored.values()), None)
    result = train_multiple_choice(_items(call, spec.config, train), validation, evaluate, options,
                                   model_path=opts.model_path, device=opts.device, seed=opts.seed)
    for key, items in {**scored, **evaluate}.items():
        config, _, split = key.partition("/")
        accuracy = result.accuracy[key if key in evaluate else "validation"]
        out.rows.append(accuracy_row(config, split, accuracy, items))
    record = result.record
    record.hyperparameters.update(spec=spec.name, variant=spec.variant, train=f"{spec.config}/{train}",
                                  selection=f"{spec.config}/{select}" if select else None)
    out.records, out.model = [record], record.model
    out.details = {"best_epoch": result.best_epoch, "history": result.history}
    path = out_file(opts, f"{spec.name}.predictions.jsonl")
    if path is not None:
        write_lines(path, [json.dumps({"split": s, "id": i, **asdict(p)}, ensure_ascii=False)
                           for s, preds in result.predictions.items() for i, p in preds.items()])
        out.outputs["predictions"] = path
    return out


@dataclass(frozen=True)
class LabelIssuesOptions(MCOptions):
    """The cross-encoder's options, the number of folds, how many candidates to keep (None:
    all) and cleanlab's ``filter_by``."""

    folds: int = DEFAULT_FOLDS
    top: int | None = None
    filter_by: str = "prune_by_noise_rate"


@register_engine("label_issues", options=LabelIssuesOptions, multiple_choice=True)
def label_issues(call: EngineCall) -> EngineOutput:
    from benchsmith.validation.baselines.label_issues import detect_label_issues

    spec, release, opts, o = call.spec, call.release, call.run, call.options
    out = EngineOutput()
    items = []
    splits = []
    for config, split in call.evaluations:
        splits.append(split)
        items += [replace(it, id=f"{split}/{it.id}") for it in mc_items(spec, release, config, split)]
    items = subsample(items, opts.max_examples, opts.seed)
    mc = replace(o, epochs=opts.epochs or o.epochs)  # a LabelIssuesOptions is the cross-encoder's MCOptions
    report = detect_label_issues(items, folds=o.folds, seed=opts.seed, options=mc, top=o.top,
                                 filter_by=o.filter_by, model_path=opts.model_path, device=opts.device)
    where = "+".join(splits)
    config = call.evaluations[0][0]
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
                   "note": "candidates for a maintainer to read, never applied: a flagged item may be hard, "
                   "not wrong"}
    return out


@register_engine("generation", options=GenerationOptions, needs_model_path=True)
def generation(call: EngineCall) -> EngineOutput:
    from benchsmith.validation.baselines.generation import finetune_and_generate

    spec, release, opts = call.spec, call.release, call.run
    out = EngineOutput()
    path = model_path(opts, spec)
    assert path is not None  # registered with needs_model_path: model_path() raised the user's error already
    train, out.caveats = train_split(spec, release, opts)
    train_pairs = pairs(subsample(seq_items(spec, release, spec.config, train), opts.max_examples, opts.seed))
    batches = eval_items(call, out)
    sources = [it.source for _, _, items in batches for it in items]
    options = replace(call.options, epochs=opts.epochs or call.options.epochs,
                      max_steps=opts.max_steps or call.options.max_steps)
    outputs, record = finetune_and_generate(path, train_pairs, sources, options, seed=opts.seed,
                                            device=opts.device)
    record.hyperparameters.update(spec=spec.name, train=f"{spec.config}/{train}")
    decoded, k = [], 0
    for config, split, items in batches:
        decoded.append((config, split, items, outputs[k:k + len(items)]))
        k += len(items)
    score_outputs(call, out, decoded)
    out.records = [record]
    out.model = record.model
    return out


@dataclass(frozen=True)
class NoOptions:
    """An engine without options."""


@register_engine("copy", options=NoOptions, trains=False)
def copy(call: EngineCall) -> EngineOutput:
    from benchsmith.validation.baselines.runtime import RunRecord

    out = EngineOutput(model="copy (the source is the output; no model)")
    batches = eval_items(call, out)
    record = RunRecord(baseline="copy-source", model=out.model, model_sha256=None, seed=call.run.seed,
                       device="cpu", dtype="-", hyperparameters={"spec": call.spec.name})
    start = time.perf_counter()
    score_outputs(call, out, [(c, s, items, [it.source for it in items]) for c, s, items in batches])
    record.wall_time_s = round(time.perf_counter() - start, 3)
    record.throughput(sum(len(items) for _, _, items in batches), None, record.wall_time_s)
    out.records = [record]
    return out


__all__ = ["LabelIssuesOptions", "NoOptions", "copy", "cross_encoder", "generation", "label_issues"]
