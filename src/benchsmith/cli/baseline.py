"""``benchsmith baseline NAME``: run a dataset's declared model baselines on its release.

The selection options, the saved files (``reports/baselines/<baseline>[@<config>].json`` of the
release unless ``--no-save``; ``--out DIR`` moves the files and keeps trained weights, which never
go into the release's folder: it is published with its reports) and the exit status (1 when a
gated baseline fails) are in validation/README.md, "Running them". A saved result holds no
absolute path of the machine that ran it (:func:`~.run.portable`); the printed one shows them.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer
import yaml
from rich.table import Table

from benchsmith.builder import builders, get_builder
from benchsmith.cli.options import JSON_OPTION, REGISTRY_OPTION
from benchsmith.cli.output import console, emit, literal, table
from benchsmith.errors import ConfigError, GateError, did_you_mean
from benchsmith.jsonable import to_jsonable
from benchsmith.lookup import resolve_release
from benchsmith.registry import write_text_atomic
from benchsmith.validation.baselines.checks import builder_of, saved_dir
from benchsmith.validation.baselines.run import BaselineResult, run_spec
from benchsmith.validation.baselines.runtime import pick_device
from benchsmith.validation.baselines.spec import select_specs

PRESETS = ("small", "paper")


def parse_settings(items: list[str] | None) -> dict[str, Any]:
    """``KEY=VALUE`` pairs: ints, floats (``2e-5``), else YAML (``true``, ``[1e-3, 1e-4]``, text)."""
    out: dict[str, Any] = {}
    for item in items or []:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise ConfigError(f"--set {item!r} is not KEY=VALUE", hint="e.g. --set lr=2e-5 --set batch_size=32")
        for parse in (int, float, yaml.safe_load):  # YAML 1.1 reads 5e-3 as a string: numbers first
            try:
                out[key.strip()] = parse(value)
                break
            except (ValueError, yaml.YAMLError):
                continue
        else:
            out[key.strip()] = value
    return out


def _resolve(name: str, registry: Path | None) -> tuple[Any, Any]:
    """(builder, release): unknown dataset names get suggestions before the registry is read."""
    if not Path(name).exists():
        dataset = name.partition("/")[0]
        if dataset not in builders():
            raise ConfigError(f"unknown dataset {dataset!r}", hint=did_you_mean(dataset, builders()))
    release = resolve_release(name, registry)
    builder = builder_of(release, any_version=True)
    if builder is None:
        raise ConfigError(f"release {release.name} {release.version} has no registered builder: no baselines "
                          "are declared for it", path=release.path, hint=did_you_mean(release.name, builders()))
    return builder, release


def _print(result: BaselineResult, saved: Path | None) -> None:
    spec = result.spec
    head = (f"{result.dataset} {result.version} · {spec.name} ({spec.engine}, {spec.variant}) · "
            f"model {result.model} · {result.wall_time_s:.1f} s")
    rows = [(r.config, r.split, r.metric, "—" if r.value is None else r.value, "" if r.n is None else r.n,
             ", ".join(f"{p['value']} ({p['id']})" for p in r.paper) or "—") for r in result.scores]
    console.print(table(head, ["config", "split", "metric", "ours", "n", "paper"], rows))
    lines = []
    if spec.setup.note and any(r.paper for r in result.scores):
        lines.append(f"[dim]paper: {literal(spec.setup.note)}[/]")
    if result.caveats:
        label = "NOT comparable with the paper" if spec.setup.paper else "caveats"
        lines.append(f"[bold yellow]{label}:[/] " + literal("; ".join(result.caveats)))
    if result.gate:
        style = {"pass": "green", "warn": "yellow", "fail": "bold red"}[result.gate["status"]]
        why = "; ".join(f"{c['config']}/{c['split']}: accuracy {c['accuracy']:.1%}, chance {c['chance']:.1%}"
                        + (f" ({c['why']})" if c["why"] else "") for c in result.gate["checks"])
        rule = literal(result.gate["rule"])
        lines.append(f"gate [{style}]{result.gate['status']}[/] ({rule}): {literal(why)}")
    lines += [f"[dim]note: {literal(note)}[/]" for note in result.notes]
    rec = result.records[0] if result.records else None  # label_issues has one per fold: the first
    if rec is not None:
        speed = "".join(f", {v} {what}/s" for v, what in ((rec.examples_per_s, "examples"),
                                                          (rec.tokens_per_s, "tokens")) if v)
        record = (f"record: {rec.device} {rec.dtype}, seed {rec.seed}, {rec.steps} steps, {rec.wall_time_s} s"
                  f"{speed}; sha256 {(rec.model_sha256 or '-')[:16]}")
        lines.append(f"[dim]{literal(record)}[/]")
    for line in lines:
        console.print(line, highlight=False)
    if saved is not None:
        console.print(f"saved: {saved}", highlight=False, markup=False)


def _print_list(name: str, specs: list[dict[str, Any]]) -> None:
    """``baseline --list`` at the terminal's width (80 columns too): every column but ``paper``
    keeps its cells whole (names are never cut); ``paper`` wraps, one figure id a line; if the
    names still do not fit, ``paper``, ``setup``, ``gate`` and ``variant`` are left out, in that
    order."""
    columns = ["baseline", "engine", "config", "variant", "gate", "setup", "paper"]
    rows = [[s["name"], s["engine"], s["config"], s["variant"], "yes" if s["gate"] else "", s["setup"] or "",
             "\n".join(s["paper"])] for s in specs]
    widths = [max(len(line) for cell in [c, *(r[i] for r in rows)] for line in cell.splitlines() or [""])
              for i, c in enumerate(columns)]
    keep, dropped = list(range(len(columns))), []
    for drop in ("paper", "setup", "gate", "variant"):
        need = sum(min(widths[i], 16) if columns[i] == "paper" else widths[i] for i in keep)
        need += 3 * len(keep) + 1  # borders and padding
        if need <= console.width:
            break
        keep.remove(columns.index(drop))
        dropped.append(drop)
    t = Table(title=f"{name} baselines")
    for i in keep:
        whole = columns[i] != "paper"
        t.add_column(columns[i], no_wrap=whole, overflow="fold", min_width=widths[i] if whole else None)
    for r in rows:
        t.add_row(*[r[i] for i in keep])
    console.print(t)
    if dropped:
        console.print(f"[dim]left out to fit {console.width} columns: {', '.join(dropped)} (a wider terminal or "
                      "--json shows them)[/]", highlight=False)


def baseline_cmd(
    name: Annotated[str, typer.Argument(metavar="NAME", help="Dataset name (its newest release), NAME/VERSION, or a release "
                                        "directory.")],
    config: Annotated[str | None, typer.Option("--config", metavar="NAME", help="Run the baselines that score this config, "
                                               "on it only.")] = None,
    baseline: Annotated[list[str] | None, typer.Option("--baseline", metavar="NAME", help="A declared baseline (repeatable; "
                                                       "--list shows them).")] = None,
    model: Annotated[str | None, typer.Option("--model", metavar="NAME", help="Select by model short name (e.g. use).")] = None,
    setup: Annotated[str | None, typer.Option("--setup", metavar="NAME", help="Select by setup (e.g. CO-ZS, TrTe, NoP).")] = None,
    variant: Annotated[str | None, typer.Option("--variant", metavar="NAME", help="Select by variant (full, options_only, NoP, "
                                                "NoQ).")] = None,
    model_path: Annotated[str | None, typer.Option("--model-path", metavar="DIR", help="Local model folder (may hold {config}, "
                                                   "{src}, {tgt}); default per engine: MiniLM, USE.")] = None,
    device: Annotated[str, typer.Option("--device", metavar="DEVICE", help="auto | cpu | cuda.")] = "auto",
    epochs: Annotated[int | None, typer.Option("--epochs", metavar="N", min=1, help="Training epochs (default: the spec's).")
                      ] = None,
    max_examples: Annotated[int | None, typer.Option("--max-examples", metavar="N", min=1, help="At most N items per split "
                                                     "(seeded subsample; not comparable).")] = None,
    max_steps: Annotated[int | None, typer.Option("--max-steps", metavar="N", min=1, help="Stop training after N steps "
                                                  "(nmt, generation; USE updates).")] = None,
    preset: Annotated[str | None, typer.Option("--preset", metavar="NAME", help="nmt model size: small (default) | paper.")
                      ] = None,
    train_split: Annotated[str | None, typer.Option("--train-split", metavar="SPLIT", help="Train on this split instead of the "
                                                    "declared one (not comparable).")] = None,
    seed: Annotated[int, typer.Option("--seed", metavar="N", help="Seed of sampling, initialisation and batch order.")] = 0,
    settings: Annotated[list[str] | None, typer.Option("--set", metavar="KEY=VALUE", help="Engine option KEY=VALUE (repeatable), e.g. "
                                                       "lr=2e-5, d_model=128.")] = None,
    out: Annotated[Path | None, typer.Option("--out", metavar="DIR", help="Folder for predictions, score files and trained "
                                             "weights (default: beside the saved result, no weights).")] = None,
    no_save: Annotated[bool, typer.Option("--no-save", help="Do not save results beside the release.")] = False,
    list_specs: Annotated[bool, typer.Option("--list", help="List the declared baselines and exit.")] = False,
    registry: Path | None = REGISTRY_OPTION,
    json_out: bool = JSON_OPTION,
) -> None:
    """Run a dataset's declared model baselines on its release.

    Paper figures are printed beside ours; the results are saved beside the release."""
    if list_specs:
        b = get_builder(name.partition("/")[0]) if not Path(name).exists() else _resolve(name, registry)[0]
        specs = [s.summary() for s in b.baselines()]
        emit({"name": b.name, "baselines": specs}, json_out, lambda: _print_list(b.name, specs))
        return
    if preset is not None and preset not in PRESETS:
        raise ConfigError(f"unknown preset {preset!r}", hint=did_you_mean(preset, PRESETS))
    pick_device(device)  # --device cuda without a GPU fails before any work
    overrides = parse_settings(settings)
    builder, release = _resolve(name, registry)
    specs = select_specs(builder.baselines(), names=baseline or (), model=model, setup=setup, variant=variant,
                         config=config, release=release, dataset=builder.name)
    known = set().union(*(s.engine_info.option_names for s in specs))
    for key in overrides:
        if key not in known:
            raise ConfigError(f"--set {key}: no selected baseline's engine takes it", hint=did_you_mean(key, known))
    unrun = [s for s in specs if s.engine_info.needs_model_path] if model_path is None and not baseline else []
    skipped = [f"{s.name} needs --model-path (a local model for engine {s.engine}): skipped" for s in unrun]
    specs = [s for s in specs if s not in unrun] or specs  # alone, it runs to say why it cannot
    results, saved = [], []
    base = saved_dir(release)
    for spec in specs:
        stem = spec.name + (f"@{config}" if config else "")
        files = (out / stem if out is not None else None) if no_save else (out or base) / stem
        result = run_spec(spec, release, builder=builder, model_path=model_path, device=device, epochs=epochs,
                          max_examples=max_examples, max_steps=max_steps, seed=seed, preset=preset,
                          train_split=train_split, configs=(config,) if config else (), overrides=overrides,
                          out_dir=files, save_model=out is not None)
        result.notes += skipped
        path = None
        if not no_save:
            path = base / f"{stem}.json"
            path.parent.mkdir(parents=True, exist_ok=True)
            saved_json = to_jsonable(result.to_dict(relative_to=base))  # no path of this machine in a release
            write_text_atomic(path, json.dumps(saved_json, indent=1, ensure_ascii=False) + "\n")
            saved.append(str(path))
        results.append((result, path))
    failed = [r for r, _ in results if r.gate and not r.gate["passed"]]
    payload = {"name": release.name, "version": release.version, "release": str(release.path),
               "passed": not failed, "results": [r.to_dict() for r, _ in results], "saved": saved}

    def human() -> None:
        for r, p in results:
            _print(r, p)

    emit(payload, json_out, human)
    if failed:
        raise GateError(f"{len(failed)} gated baseline(s) failed for {release.name} {release.version}: "
                        + ", ".join(r.spec.name for r in failed), path=release.path,
                        hint="A partial-input model beats chance by more than the threshold: read the gate lines")

