"""Scoring a predictions file with a dataset's declared metrics: what ``benchsmith evaluate`` runs.

One generic path for every dataset (``benchsmith evaluate NAME PREDICTIONS [--config C]
[--split S] [--metric M] [metric options]``, :mod:`benchsmith.cli.evaluate`):

1. the builder's metrics (:meth:`benchsmith.builder.Builder.metrics`, ``METRICS`` of its
   ``metric.py``); ``--metric`` picks some, a predictions option (MuCoW's ``--scores``) picks
   the metric that declares it, otherwise every declared metric is a candidate;
2. each candidate is built from the options given (typed, validated by its constructor) and
   asked which config and split the request scores (:meth:`Metric.target`); a candidate that
   does not score that config drops out (CoGnition's CTER on the random test set). Without
   ``--metric``, a candidate whose target is an error drops out too while another one scores
   (MuCoW's translation suite when only a scoring suite exists for the pair); the first error is
   raised when none does. The candidates left must agree on the config and split: one file is
   scored against one split;
3. each metric reads the references, then the file (streamed, checked row by row against the
   references: :mod:`benchsmith.validation.predictions`), and scores it
   (:meth:`Metric.score`).

Every mistake is a typed one-line :class:`~benchsmith.errors.BenchsmithError` (exit 2): an
unknown metric or option value (with suggestions), an option no chosen metric takes, a missing
required option, two predictions files, none.

The result is one JSON-ready object: ``dataset``, ``version``, ``config`` (``None`` when a metric
scores every config of the split, as XCOPA's), ``split``, ``predictions``, ``scores`` (metric name
-> :meth:`Score.to_dict`: ``score``, ``signature`` and the details), ``warnings`` and, with
``details``, the path of the per-item JSON lines written (``details``).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from benchsmith.errors import BenchsmithError, ConfigError, did_you_mean
from benchsmith.release import write_text_atomic

if TYPE_CHECKING:
    from benchsmith.builder import Builder
    from benchsmith.release import Release
    from benchsmith.validation.metric import Metric, Option, Score


def metric_options(metrics: Mapping[str, type[Metric]]) -> dict[str, tuple[Option, list[str]]]:
    """Every option the metrics declare, by name: the option and the metrics that take it.

    Raises:
        TypeError: two metrics declare one name with different types or flags (a programming error).
    """
    out: dict[str, tuple[Option, list[str]]] = {}
    for name, cls in metrics.items():
        for opt in cls.OPTIONS:
            if opt.name in out:
                first = out[opt.name][0]
                if (first.type, first.cli_flag, first.predictions) != (opt.type, opt.cli_flag, opt.predictions):
                    raise TypeError(f"metrics {out[opt.name][1]} and {name} declare option {opt.name!r} differently")
                out[opt.name][1].append(name)
            else:
                out[opt.name] = (opt, [name])
    return out


def _choose(declared: Mapping[str, type[Metric]], names: Sequence[str], given: Mapping[str, Any],
            options: Mapping[str, tuple[Option, list[str]]], dataset: str) -> tuple[list[str], bool]:
    """The candidate metrics and whether the user chose them (``--metric`` or a predictions option)."""
    for n in names:
        if n not in declared:
            raise ConfigError(f"{dataset} has no metric {n!r}", hint=did_you_mean(n, declared))
    by_file = [k for k in given if options[k][0].predictions]
    if len(by_file) > 1:
        flags = " and ".join(options[k][0].cli_flag for k in by_file)
        raise ConfigError(f"{flags} both name a predictions file; give one", hint="One file is scored at a time")
    if names:
        chosen = list(dict.fromkeys(names))
    elif by_file:
        chosen = list(options[by_file[0]][1])
    else:
        return list(declared), False
    for k in given:
        opt, takers = options[k]
        if not set(takers) & set(chosen):
            raise ConfigError(f"{opt.cli_flag} is an option of {' and '.join(takers)}, not of {', '.join(chosen)}",
                              hint=f"Leave {opt.cli_flag} out, or score with --metric {takers[0]}")
    return chosen, True


def evaluate(builder: Builder, release: Release, predictions: Path | None, *, config: str | None = None,
             split: str | None = None, metrics: Sequence[str] = (), options: Mapping[str, Any] | None = None,
             details: Path | None = None) -> dict[str, Any]:
    """Score ``predictions`` against ``release`` with ``builder``'s metrics (see the module docstring).

    Args:
        options: metric options that were given (name -> value), e.g. ``{"rule": "cter-v2"}``; a
            predictions option (``{"scores": path}``) stands for ``predictions``.
        details: write the per-item records of the metrics that give them (JSON lines) there.
    """
    declared = builder.metrics()
    if not declared:
        raise ConfigError(f"{builder.name} declares no metrics",
                          hint="A dataset declares them as METRICS in its metric.py (see CONTRIBUTING.md)")
    table = metric_options(declared)
    given = dict(options or {})
    for k in given:
        if k not in table:
            raise ConfigError(f"{builder.name}'s metrics take no option {k!r}", hint=did_you_mean(k, table))
    chosen, explicit = _choose(declared, metrics, given, table, builder.name)
    for k in [k for k in given if table[k][0].predictions]:
        if predictions is not None:
            raise ConfigError(f"PREDICTIONS and {table[k][0].cli_flag} both name a predictions file; give one")
        predictions = Path(given.pop(k))
    for k, value in given.items():
        choices = table[k][0].choices
        if choices and value not in choices:
            raise ConfigError(f"{table[k][0].cli_flag} {value!r} is not one of {', '.join(choices)}",
                              hint=did_you_mean(str(value), choices))

    targets: list[tuple[Metric, tuple[str | None, str]]] = []
    errors: list[BenchsmithError] = []
    for name in chosen:
        cls = declared[name]
        kwargs = {o.name: given[o.name] for o in cls.OPTIONS if o.name in given}
        metric = cls(**kwargs)
        try:
            target = metric.target(release, config, split)
        except BenchsmithError as exc:
            if explicit or len(chosen) == 1:
                raise
            errors.append(exc)
            continue
        if target is not None:
            targets.append((metric, target))
    if not targets:
        if errors:
            raise errors[0]
        where = f"config {config!r}" if config else "this request"
        raise ConfigError(f"no metric of {builder.name} ({', '.join(chosen)}) scores {where}",
                          hint="; ".join(f"{n} scores {', '.join(declared[n].CONFIGS) or 'every config'}"
                                         for n in chosen))
    if len({t for _, t in targets}) > 1:
        raise ConfigError("the metrics score different configs: " + ", ".join(
            f"{m.name} {t[0]}/{t[1]}" for m, t in targets), hint="Pick one with --metric (or name the --config)")
    for metric, _ in targets:
        for opt in type(metric).OPTIONS:
            if opt.required and opt.name not in given:
                raise ConfigError(f"{metric.name} needs {opt.cli_flag}", hint=f"Pass {opt.cli_flag} ({opt.help.rstrip('.')})")
    if predictions is None:
        flags = [o.cli_flag for m, _ in targets for o in type(m).OPTIONS if o.predictions]
        raise ConfigError("no predictions file", hint="Pass PREDICTIONS" + "".join(f" or {f} FILE" for f in flags))

    target_config, target_split = targets[0][1]
    scores: dict[str, Score] = {}
    for metric, _ in targets:
        metric = metric.for_release(release, target_config)
        references = metric.references(release, target_config, target_split)
        scores[metric.name] = metric.score(metric.read_predictions(predictions, references), references)
    out: dict[str, Any] = {
        "dataset": release.name, "version": release.version, "config": target_config, "split": target_split,
        "predictions": str(predictions), "scores": {k: s.to_dict() for k, s in scores.items()},
        "warnings": [f"{predictions} {w}" for s in scores.values() for w in s.warnings],
    }
    if details is not None:
        with_items = [s for s in scores.values() if s.items]
        if not with_items:
            out["warnings"].append(f"--details: {', '.join(scores)} judge no single items; nothing written")
        else:
            tag = len(with_items) > 1
            write_text_atomic(Path(details), "".join(
                json.dumps({**({"metric": s.metric} if tag else {}), **item}, ensure_ascii=False) + "\n"
                for s in with_items for item in s.items))
            out["details"] = str(details)
    return out
