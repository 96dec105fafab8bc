"""``benchsmith evaluate NAME PREDICTIONS [--config C] [--split S] [--metric M] [metric options]``.

One generic command for every dataset. ``evaluate`` is a command group whose sub-commands are
not written by hand: ``benchsmith evaluate NAME`` is generated from the metrics that dataset's
builder declares (``METRICS`` of its ``metric.py``), so ``benchsmith evaluate comve --help``
lists exactly the options ComVE's metrics take, typed (``--rule`` a choice, ``--lemmatized`` a
path, ``--maximize`` a flag), and a new dataset or metric option needs no CLI code. The generated
command hands everything to :func:`benchsmith.scoring.evaluate`.

Options every dataset has: PREDICTIONS (or a metric's predictions option, e.g. ``--scores``),
``--config``, ``--split``, ``--metric`` (repeatable), ``--release`` (default: the newest NAME in
the registry), ``--registry``, ``--details FILE`` (one JSON line per item judged, for the metrics
that judge items) and ``--json`` (one JSON object on stdout). A dataset's command is built when it
is named (or listed by ``--help``).
"""

from __future__ import annotations

import inspect
from pathlib import Path
from typing import Annotated, Any

import typer
from typer.core import TyperGroup

from benchsmith.builder import builders, get_builder
from benchsmith.cli.options import JSON_OPTION, REGISTRY_OPTION
from benchsmith.cli.output import console, emit, err_console, table
from benchsmith.reference import gold
from benchsmith.scoring import evaluate, metric_options

#: parameters of every generated command; a metric option may not take one of these names
GENERIC = ("predictions", "config", "split", "metric", "release", "registry", "details", "json_out",
           "allow_unvalidated")


class EvaluateGroup(TyperGroup):
    """``benchsmith evaluate``: one sub-command per registered dataset, generated on demand."""

    def list_commands(self, ctx: Any) -> list[str]:
        return list(builders())

    def get_command(self, ctx: Any, cmd_name: str) -> Any:
        return dataset_command(get_builder(cmd_name).name)  # an unknown name: ConfigError with suggestions


def _help(text: str) -> str:
    """Help text as people read it: no reST double backquotes."""
    return text.replace("``", "")


def dataset_command(name: str) -> Any:
    """The click command of ``benchsmith evaluate NAME``, from NAME's declared metrics."""
    builder = get_builder(name)
    declared = builder.metrics()
    options = metric_options(declared)
    split_help = " ".join(dict.fromkeys(c.split_help for c in declared.values() if c.split_help))
    params = [
        inspect.Parameter("predictions", inspect.Parameter.POSITIONAL_OR_KEYWORD, default=None, annotation=Annotated[
            Path | None, typer.Argument(metavar="PREDICTIONS", show_default=False,
                                        help="The predictions file (its format: the metric's docs and README).")]),
        _option("config", str | None, "--config", "Config to score (default: what the metric scores).", None,
                metavar="NAME"),
        _option("split", str | None, "--split", f"Split to score (default: test). {split_help}".strip(), None,
                metavar="SPLIT"),
        _option("metric", list[str] | None, "--metric",
                "Metric to score with, repeatable (default: every metric that scores the config): "
                + ", ".join(declared) + ".", None, metavar="NAME"),
        _option("release", str, "--release",
                "Release directory, NAME[/VERSION] in the registry, or a published revision "
                f"hf://datasets/ORG/NAME@VERSION. Default: {name} (its newest version).", name,
                metavar="RELEASE"),
        inspect.Parameter("registry", inspect.Parameter.KEYWORD_ONLY, default=REGISTRY_OPTION,
                          annotation=Path | None),
        _option("allow_unvalidated", bool, "--allow-unvalidated",
                "Score against a release that was never validated (no seal) or failed its validation: "
                "its gold data is then not certified.", False),
        _option("details", Path | None, "--details",
                "Write one JSON line per item judged (metrics that judge items: "
                + (", ".join(n for n, c in declared.items() if c.judges_items) or "none") + ").", None,
                metavar="FILE"),
    ]
    for key, (opt, takers) in options.items():
        if key in GENERIC:
            raise TypeError(f"metric option {key!r} of {takers} clashes with a generic option of evaluate")
        text = _help(opt.help)
        if opt.default is not None and opt.type is not bool:
            text += f" Default: {opt.default}."
        if len(takers) < len(declared):
            text += f" [{', '.join(takers)}]"
        kind: Any = bool if opt.type is bool else (opt.type | None)
        params.append(_option(key, kind, opt.cli_flag, text, False if opt.type is bool else None,
                              metavar=None if opt.type is bool else _metavar(key, opt.type)))
    params.append(inspect.Parameter("json_out", inspect.Parameter.KEYWORD_ONLY, default=JSON_OPTION, annotation=bool))

    def command(**kwargs: Any) -> None:
        _run(name, kwargs, options)

    command.__signature__ = inspect.Signature(params)  # type: ignore[attr-defined]
    command.__annotations__ = {p.name: p.annotation for p in params}
    lines = [f"Score predictions with {name}'s metrics.", f"Metrics: {', '.join(declared)}."]
    lines += [f"{n}: {_help(c.description)}." if c.description else f"{n}." for n, c in declared.items()]
    app = typer.Typer(rich_markup_mode=None, add_completion=False)
    app.command(name, help="\n\n".join(lines), no_args_is_help=True)(command)
    return typer.main.get_command(app)


def _metavar(key: str, kind: type) -> str:
    """A metric option's value as a word: FILE, N, X, else the option's name (``--rule RULE``)."""
    return {Path: "FILE", int: "N", float: "X"}.get(kind, key.upper().replace("_", "-"))


def _option(key: str, annotation: Any, flag: str, text: str, default: Any, **extra: Any) -> inspect.Parameter:
    return inspect.Parameter(key, inspect.Parameter.KEYWORD_ONLY, default=default,
                             annotation=Annotated[annotation, typer.Option(flag, help=text, show_default=False,
                                                                           **extra)])


def _run(name: str, kwargs: dict[str, Any], options: dict[str, Any]) -> None:
    given = {k: v for k, v in kwargs.items() if k in options and v is not None and v is not False}
    release = gold(kwargs["release"], kwargs["registry"], allow_unvalidated=kwargs["allow_unvalidated"])
    out = evaluate(get_builder(name), release, kwargs["predictions"], config=kwargs["config"], split=kwargs["split"],
                   metrics=kwargs["metric"] or (), options=given, details=kwargs["details"])
    for w in out["warnings"]:
        err_console.print(f"warning: {w}", markup=False, highlight=False)
    emit(out, kwargs["json_out"], lambda: _print(out))


def _print(out: dict[str, Any]) -> None:
    """Each metric: its figure and scalar details, a table per breakdown (per language, per group ...),
    then its signature whole on its own line (a figure must be reproducible from its printout)."""
    where = f"{out['config']}/{out['split']}" if out["config"] else out["split"]
    for metric, res in out["scores"].items():
        scalars = [(k, _fmt(v)) for k, v in res.items() if k not in ("signature", "warnings") and _scalar(v)]
        console.print(table(f"{out['dataset']} {out['version']} {where}: {metric}", ["figure", "value"], scalars))
        for key, value in res.items():
            rows = value if isinstance(value, dict) and value and all(isinstance(v, dict) for v in value.values()) \
                else None
            if rows is None:
                continue
            if len(rows) > 40:
                console.print(f"{key}: {len(rows)} rows (--json has them)", markup=False, highlight=False)
                continue
            columns = [c for c, v in next(iter(rows.values())).items() if _scalar(v)]
            console.print(table(f"{metric}: {key}", ["", *columns],
                                [(k, *(_fmt(r.get(c)) for c in columns)) for k, r in rows.items()]))
        console.print(f"signature: {res['signature']}", markup=False, highlight=False)
    if out.get("details"):
        console.print(f"details: {out['details']}", markup=False, highlight=False)


def _scalar(v: Any) -> bool:
    """A value a table cell shows: a number, text, or a short list of them (languages averaged)."""
    if isinstance(v, list):
        return len(v) <= 20 and all(isinstance(x, (str, int)) for x in v)
    return v is None or isinstance(v, (str, int, float, bool))


def _fmt(v: Any) -> str:
    if isinstance(v, list):
        return ", ".join(map(str, v)) or "-"
    return f"{v:.4f}" if isinstance(v, float) else str(v)


evaluate_app = typer.Typer(
    cls=EvaluateGroup, help="Score predictions with a dataset's metrics.\n\nbenchsmith evaluate NAME PREDICTIONS "
    "[--config C] [--split S] [--metric M] [metric options]; `benchsmith evaluate NAME -h` lists NAME's options.",
    no_args_is_help=True, rich_markup_mode=None)
