"""What an engine receives (:class:`EngineCall`) and returns (:class:`EngineOutput`), the helpers
engines share, and the generic engines (``cross_encoder``, ``label_issues``, ``generation``,
``copy``; validation/README.md, "Engines", has their table). Run-level values (model, device,
seed, epochs, ``--max-examples``) come from the run, never from an engine's options. A missing
training split is a ConfigError naming it, why the build skipped it, and ``--train-split``; any
departure from the paper's setup is a *caveat* (:mod:`.run`).
"""

from __future__ import annotations

import json
import random
import time
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from benchsmith.cards.paths import reason
from benchsmith.errors import ConfigError, did_you_mean
from benchsmith.registry import write_text_atomic
from benchsmith.validation.baselines.generation import GenerationOptions, finetune_and_generate
from benchsmith.validation.baselines.label_issues import DEFAULT_FOLDS, FILTERS, detect_label_issues
from benchsmith.validation.baselines.multiple_choice import (
    POOLINGS,
    MCItem,
    MCOptions,
    options_only,
    train_multiple_choice,
)
from benchsmith.validation.baselines.runtime import RunRecord
from benchsmith.validation.baselines.spec import BaselineSpec, Choices, Options, get_engine, register_engine
from benchsmith.validation.dataview import ConfigView
from benchsmith.validation.metrics.bleu import SacreBLEU

if TYPE_CHECKING:
    from benchsmith.release import Release

Pair = tuple[str, str]


@dataclass
class RunOptions:
    """How one run departs from the spec's defaults (every field is recorded; the CLI checks
    that counts are positive)."""

    model_path: str | Path | None = None
    device: str = "auto"
    epochs: int | None = None
    max_examples: int | None = None
    max_steps: int | None = None
    seed: int = 0
    preset: str | None = None
    train_split: str | None = None
    configs: tuple[str, ...] = ()
    #: ``--set KEY=VALUE``: engine options
    overrides: Mapping[str, Any] = field(default_factory=dict)
    out_dir: str | Path | None = None
    #: also write trained weights into ``out_dir`` (nmt: ``model/``); off by default, as a release's
    #: reports folder is published with it
    save_model: bool = False


@dataclass
class EngineOutput:
    rows: list[dict[str, Any]] = field(default_factory=list)
    records: list[Any] = field(default_factory=list)
    model: str = ""
    details: dict[str, Any] = field(default_factory=dict)
    outputs: dict[str, Path] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    caveats: list[str] = field(default_factory=list)


@dataclass
class EngineCall:
    """One run of an engine: what it scores and with which options."""

    spec: BaselineSpec
    release: Release
    run: RunOptions
    evaluations: Sequence[Pair]
    options: Any

    def items(self, config: str, split: str, seq: bool = False) -> list[Any]:
        """The spec's multiple-choice (``seq``: Seq2SeqItem) items of ``config/split``, cut to
        ``--max-examples`` (seeded)."""
        adapter = self.spec.items
        if not seq:
            made = mc_items(self.spec, self.release, config, split)
        elif adapter is None:
            raise ConfigError(f"baseline {self.spec.name!r} ({self.spec.engine}) needs an items adapter "
                              "returning Seq2SeqItem", hint="Declare items=... in the dataset's baseline.py")
        else:
            made = list(adapter(self.release, config, split))
        return subsample(made, self.run.max_examples, self.run.seed)


def run_engine(spec: BaselineSpec, release: Release, opts: RunOptions,
               evaluations: Sequence[Pair]) -> EngineOutput:
    """Run ``spec`` on its engine with its options and the ``--set`` overrides that engine takes
    (the others were meant for another selected engine: left out and noted)."""
    engine = get_engine(spec.engine)
    foreign = sorted(k for k in opts.overrides if k not in engine.option_names)
    overrides = {k: v for k, v in opts.overrides.items() if k in engine.option_names}
    options = engine.make_options(spec.options, overrides, where=f"baseline {spec.name!r}: ")
    if opts.model_path is None:
        model_path(opts, spec)  # a required --model-path missing: the one clear error before any work
    out = engine.run(EngineCall(spec, release, opts, evaluations, options))
    ignored = [f"--set {', '.join(foreign)} does not apply to {engine.name}: ignored"] if foreign else []
    ignored += [f"--{k.replace('_', '-')} does not apply to {engine.name} ({why}): ignored"
                for k, why in engine.ignores.items() if getattr(opts, k)]
    out.notes[:0] = ignored
    return out


# --------------------------------------------------------------------------- shared helpers


def train_split(spec: BaselineSpec, release: Release, opts: RunOptions) -> tuple[str, list[str]]:
    """The split to train on and the caveat when it is not the declared one; ConfigError
    naming the split (and why the build lacks it) when the release does not have it."""
    declared, config = spec.splits.train, spec.config
    split = opts.train_split or declared
    if split is None:
        raise ConfigError(f"baseline {spec.name!r} declares no train split", hint="Pass --train-split SPLIT")
    if config not in release.configs():
        raise ConfigError(f"baseline {spec.name!r} trains on config {config!r}, which {release.name} "
                          f"{release.version} does not have", hint=did_you_mean(config, release.configs()))
    splits = release.splits(config)
    if split not in splits:

        skipped = release.config_info(config).skipped_splits.get(split)
        why = f": the build skipped it ({reason(str(skipped))})" if skipped else ""
        alternatives = [s for s in splits if s not in spec.splits.eval] or splits
        hint = (f"Pass --train-split {alternatives[0]} to train on another split (the result is then NOT comparable "
                f"with the paper), or rebuild the release with the {split} split's sources"
                if split == declared and alternatives else did_you_mean(split, splits))
        raise ConfigError(f"the {split} split of {release.name}/{config} is missing in release {release.version}"
                          f"{why}; baseline {spec.name!r} trains on it", hint=hint)
    if split == declared:
        return split, []
    return split, [f"trained on {config}/{split} instead of {config}/{declared}, the paper's training split"]


def selection_split(spec: BaselineSpec, release: Release, train: str | None) -> tuple[str | None, list[str]]:
    """The model-selection split (None and a caveat when it is the training split or absent)."""
    split = spec.splits.selection
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
    return [items[i] for i in sorted(random.Random(seed).sample(range(len(items)), n))]


def mc_items(spec: BaselineSpec, release: Release, config: str, split: str) -> list[Any]:
    """The spec's multiple-choice items for ``config/split``, ``options_only`` applied: its
    ``items`` adapter's, else from the config's typed policy (``choices`` are the options,
    ``context`` fields joined by a space the context, the label's int the answer)."""

    if spec.items is not None:
        items = list(spec.items(release, config, split))
    else:
        view = ConfigView(release, config)
        mc = view.multiple_choice
        if mc is None:
            raise ConfigError(f"config {config!r} is not multiple choice (its policy declares no "
                              "choices/label)", hint="Declare Policy(choices=..., label=...) or give the "
                              "baseline an items adapter")
        items = []
        for n, row in enumerate(release.examples(config, split)):
            options = list(row[mc.list_field]) if mc.list_field else [row[c] for c in mc.choices]
            context = " ".join(str(row[c]) for c in mc.context if row.get(c) not in (None, "")) or None
            ident = row.get(view.id_field) if view.id_field else None
            items.append(MCItem(context=context, options=options, label=int(row[mc.label]),
                                id=str(ident if ident is not None else n)))
    return options_only(items) if spec.variant == "options_only" else items


def accuracy_row(config: str, split: str, accuracy: float, items: Sequence[Any]) -> dict[str, Any]:
    """A score row of multiple-choice ``items``, with their chance level (mean 1/options)."""
    chance = sum(1 / len(it.options) for it in items) / len(items)
    return {"config": config, "split": split, "metric": "accuracy", "value": round(100 * accuracy, 2),
            "n": len(items), "chance": round(chance, 6)}


def model_path(opts: RunOptions, spec: BaselineSpec, **fields: str) -> Path | None:
    """``--model-path`` with ``{config}``/``{src}``/``{tgt}`` filled in; ConfigError when required and absent."""
    if opts.model_path is None:
        if spec.engine_info.needs_model_path:
            raise ConfigError(f"baseline {spec.name!r} ({spec.engine}) needs --model-path DIR (a local model folder); "
                              "nothing is downloaded", hint=spec.description or "Pass --model-path")
        return None
    text = str(opts.model_path)
    try:
        return Path(text.format(**fields) if "{" in text else text)
    except (KeyError, IndexError) as exc:
        raise ConfigError(f"--model-path {text!r} names an unknown field {exc}",
                          hint="Fields: {config}, {src}, {tgt}") from None


def out_file(opts: RunOptions, name: str) -> Path | None:
    if opts.out_dir is None:
        return None
    Path(opts.out_dir).mkdir(parents=True, exist_ok=True)
    return Path(opts.out_dir) / name


def write_lines(path: Path, lines: Sequence[str]) -> None:

    write_text_atomic(path, "".join(line.replace("\n", " ") + "\n" for line in lines))


def score_rows(spec: BaselineSpec, release: Release, config: str, split: str, items: Sequence[Any],
               outputs: Any, details: dict[str, Any]) -> list[dict[str, Any]]:
    """The spec's scorer (default: sacreBLEU) as rows; its non-numeric entries go to ``details``.
    A metric ``G/name`` counts the items of group ``G`` when the scorer gives ``n_by_group``."""
    if spec.score is not None:
        scored = dict(spec.score(release, config, split, items, outputs))
    else:

        res = SacreBLEU().score(list(outputs), [list(it.references) for it in items])
        scored = {"bleu": round(res.value or 0.0, 2), "signature": res.signature}
    counts = scored.pop("n_by_group", None) or {}
    rows, extra = [], {}
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


def pairs(items: Sequence[Any]) -> list[Pair]:
    """(source, reference) training pairs of seq2seq items: one per non-empty reference."""
    return [(it.source, r) for it in items for r in it.references if r and r.strip()]


def eval_items(call: EngineCall, out: EngineOutput, seq: bool = True,
               skip: Sequence[tuple[str, str | None]] = ()) -> list[tuple[str, str, list[Any]]]:
    """``(config, split, items)`` of every evaluation but ``skip`` (as :meth:`EngineCall.items`);
    empty ones noted."""
    batches = []
    for config, split in call.evaluations:
        if (config, split) in skip:
            continue
        items = call.items(config, split, seq=seq)
        if items:
            batches.append((config, split, items))
        else:
            out.notes.append(f"{config}/{split} is empty: not scored")
    return batches


def score_outputs(call: EngineCall, out: EngineOutput, batches: Sequence[tuple[str, str, list[Any], list[str]]]) -> None:
    """Write each batch's hypotheses to ``<out>/<config>.<split>.hyp.txt`` and score them."""
    for config, split, items, hyps in batches:
        path = out_file(call.run, f"{config}.{split}.hyp.txt")
        if path is not None:
            write_lines(path, hyps)
            out.outputs[f"{config}/{split}"] = path
        out.rows += score_rows(call.spec, call.release, config, split, items, hyps, out.details)


# --------------------------------------------------------------------------- the generic engines


@register_engine("cross_encoder", options=MCOptions, accuracy=True, multiple_choice=True,
                 ignores={"max_steps": "it trains whole epochs"})
def cross_encoder(call: EngineCall) -> EngineOutput:

    spec, opts = call.spec, call.run
    out = EngineOutput()
    train, out.caveats = train_split(spec, call.release, opts)
    select, caveats = selection_split(spec, call.release, train)
    out.caveats += caveats
    scored = {f"{spec.config}/{select}": call.items(spec.config, select)} if select else {}
    # the selection split is scored anyway; the training split is not a score
    skip = ((spec.config, select), (spec.config, train))
    evaluate = {f"{c}/{s}": items for c, s, items in eval_items(call, out, seq=False, skip=skip)}
    options = replace(call.options, epochs=opts.epochs or call.options.epochs)
    validation = next(iter(scored.values()), None)
    result = train_multiple_choice(call.items(spec.config, train), validation, evaluate, options,
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

    CHOICES: ClassVar[Choices] = (("pooling", POOLINGS), ("filter_by", FILTERS))


@register_engine("label_issues", options=LabelIssuesOptions, multiple_choice=True)
def label_issues(call: EngineCall) -> EngineOutput:

    spec, opts, o = call.spec, call.run, call.options
    items = []
    for config, split in call.evaluations:
        items += [replace(it, id=f"{split}/{it.id}") for it in mc_items(spec, call.release, config, split)]
    items = subsample(items, opts.max_examples, opts.seed)
    mc = replace(o, epochs=opts.epochs or o.epochs)  # a LabelIssuesOptions is the cross-encoder's MCOptions
    report = detect_label_issues(items, folds=o.folds, seed=opts.seed, options=mc, top=o.top,
                                 filter_by=o.filter_by, model_path=opts.model_path, device=opts.device)
    where = "+".join(split for _, split in call.evaluations)
    config = call.evaluations[0][0]
    out = EngineOutput(records=list(report.records))
    out.rows = [{"config": config, "split": where, "metric": metric, "value": value, "n": report.n_items}
                for metric, value in (("out_of_fold_accuracy", round(100 * report.out_of_fold_accuracy, 2)),
                                      ("flagged", len(report.issues)))]
    for r in out.records:
        r.hyperparameters.update(spec=spec.name, items=f"{config}/{where}")
    out.model = out.records[0].model if out.records else ""
    out.details = {"candidate_errata": [asdict(i) for i in report.issues], "folds": report.folds,
                   "filter_by": report.filter_by, "n_items": report.n_items,
                   "note": "candidates for a maintainer to read, never applied: a flagged item may be hard, "
                   "not wrong"}
    return out


@register_engine("generation", options=GenerationOptions, needs_model_path=True)
def generation(call: EngineCall) -> EngineOutput:

    spec, opts = call.spec, call.run
    out = EngineOutput()
    path = model_path(opts, spec)
    assert path is not None  # registered with needs_model_path: model_path() raised the user's error already
    train, out.caveats = train_split(spec, call.release, opts)
    batches = eval_items(call, out)
    options = replace(call.options, epochs=opts.epochs or call.options.epochs,
                      max_steps=opts.max_steps or call.options.max_steps)
    outputs, record = finetune_and_generate(path, pairs(call.items(spec.config, train, seq=True)),
                                            [it.source for _, _, items in batches for it in items], options,
                                            seed=opts.seed, device=opts.device)
    record.hyperparameters.update(spec=spec.name, train=f"{spec.config}/{train}")
    decoded, k = [], 0
    for config, split, items in batches:
        decoded.append((config, split, items, outputs[k:k + len(items)]))
        k += len(items)
    score_outputs(call, out, decoded)
    out.records, out.model = [record], record.model
    return out


@register_engine("copy", options=Options, trains=False)  # no options
def copy(call: EngineCall) -> EngineOutput:
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
