"""The dataset card's Markdown body, written by hand: what ``templates/dataset_card.md.j2`` renders.

Why not jinja2: importing it cost 0.031-0.049 s CPU of every ``benchsmith build`` (6 runs,
``import jinja2`` after pyarrow, 2026-11-27), ~4% of a ComVE build whose whole process issue 26
holds to 1.3x the pyarrow I/O floor, and loading the compiled template took a bytecode cache
under ``$BENCHSMITH_HOME``. The card is one template; this module writes the same bytes.

**One card, held equal.** The template stays as the reference: tests/test_card_body.py renders
it with jinja2 (the environment the card used: ``keep_trailing_newline``, ``StrictUndefined``,
``finalize=scrub``) and holds :func:`card_body` equal to it on the cards of the real releases and
of the fixtures, each with and without a Hub location, a validation report (short and long, with
failures, warnings, notes, contamination and baselines), skipped splits, missing configs, pending
errata, a harvested release and a "Changes since" section. A change to the card is made in both.

As in the template (where ``finalize`` saw every ``{{ }}``), every value written passes through
:func:`benchsmith.cards.paths.scrub` (:func:`_v`), so no path of the build machine reaches the card.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from benchsmith.cards.paths import scrub


def _v(value: Any) -> str:
    """A value as the template's ``{{ value }}`` wrote it: scrubbed, then ``str``."""
    return str(scrub(value))


def _header(m: Mapping[str, Any], hub: Mapping[str, str] | None) -> str:
    tools = m["tool_versions"]
    out = [f"# {_v(m['pretty_name'])}\n\n{_v(m['description'])}\n\n- **Version:** {_v(m['version'])}"]
    if m["release_notes"]:
        out.append(f" — {_v(m['release_notes'])}")
    out.append(f"\n- **License:** {_v(m['license'] or 'see upstream')}")
    if m["homepage"]:
        out.append(f"\n- **Homepage:** {_v(m['homepage'])}")
    if hub:
        out.append(f"\n- **Hub:** [{_v(hub['repo'])}](https://huggingface.co/datasets/{_v(hub['repo'])}), "
                   f"revision `{_v(hub['revision'])}`")
    out.append(f"\n- **Built by:** benchsmith {_v(tools['benchsmith'])} (`{_v(m['builder'])}`), "
               f"datasets {_v(tools['datasets'])}, pyarrow {_v(tools['pyarrow'])}\n")
    return "".join(out)


def _loading(m: Mapping[str, Any], hub: Mapping[str, str] | None, local_path: str, first_config: str,
             first_splits: Sequence[str]) -> str:
    lp, fc = _v(local_path), _v(first_config)
    if hub:
        how = (
            "\nFrom the Hub, at this version's tag:\n\n```python\nfrom datasets import load_dataset\n\n"
            f'ds = load_dataset("{_v(hub["repo"])}", "{fc}", revision="{_v(hub["revision"])}")\nprint(ds)\n```\n\n'
            f"From a local copy (the registry folder that holds `{lp}`, the default registry being\n"
            f'`~/.cache/benchsmith/registry`):\n\n```python\nds = load_dataset("./{lp}", "{fc}")\n```\n'
        )
    else:
        how = (
            "\nRun from the registry folder this release was built into (`benchsmith build --registry DIR`; "
            "by default\n"
            f"`~/.cache/benchsmith/registry`), which holds it as `{lp}/`, or from the release folder itself:\n\n"
            "```python\nfrom pathlib import Path\n\nfrom datasets import load_dataset\n\n"
            f"# the release folder: this one when run inside it, else {lp} under the registry folder\n"
            f'release = Path.cwd() if Path("release.json").is_file() else Path("./{lp}").resolve()\n'
            f'ds = load_dataset(str(release), "{fc}")\nprint(ds)\n```\n\n'
            "(From elsewhere, give the path of the release folder; once published on the Hub:\n"
            f'`load_dataset("ORG/NAME", "{fc}", revision="{_v(m["version"])}")`.)\n'
        )
    if len(first_splits) > 1:
        mixes = f" `data/{fc}/*.parquet` mixes {_v(' and '.join(map(str, first_splits)))}."
    else:
        mixes = (f" `data/{fc}/` holds one split, {_v(first_splits[0])}, in this version, and a later one may\n"
                 "add others.")
    return (
        f"\n## Loading\n{how}\n"
        "Every config is a folder `data/<config>/` holding all its splits, one file set per split:\n"
        "`data/<config>/<split>-*.parquet`. Parquet readers that do not read this card (pandas, polars, DuckDB,\n"
        f"Spark) must use that per-split pattern:{mixes} For example, with DuckDB from the release folder:\n\n"
        f"```sql\nSELECT * FROM 'data/{fc}/{_v(first_splits[-1])}-*.parquet';\n```\n\n"
        "`croissant.json` describes the same files and records in Croissant 1.0 "
        '(`mlcroissant.Dataset("croissant.json")`).\n'
    )


def _configs(m: Mapping[str, Any], split_names: Sequence[str], skipped: Mapping[str, Mapping[str, str]]) -> str:
    out = ["\n## Configs and splits\n\n| config | languages |", *(f" {_v(s)} |" for s in split_names),
           "\n|---|---|", "---:|" * len(split_names), "\n"]
    for c, info in m["configs"].items():
        out.append(f"| `{_v(c)}` | {_v(', '.join(map(str, info['languages'])))} |")
        for s in split_names:
            n = "{:,}".format(info["splits"][s]["num_examples"]) if s in info["splits"] else "—"
            out.append(f" {_v(n)} |")
        out.append("\n")
    if skipped:
        out.append("\nSplits not built (their sources were missing):\n\n")
        for c, splits in skipped.items():
            why = "; ".join(f"{_v(s)} ({_v(reason)})" for s, reason in splits.items())
            out.append(f"- `{_v(c)}`: {why}\n")
    if m["missing_configs"]:
        names = ", ".join(f"`{_v(c)}`" for c in m["missing_configs"])
        out.append(f"\nConfigs not built in this (partial) build: {names}.\n")
    return "".join(out)


def _fields(m: Mapping[str, Any], feature_groups: Sequence[Mapping[str, Any]],
            sections: Mapping[str, Any]) -> str:
    out = ["\n## Fields\n"]
    for group in feature_groups:
        out.append("\n")
        out.extend(f"- `{_v(c)}`: {_v(m['configs'][c]['description'])}\n" for c in group["configs"])
        out.append("\n| field | type |\n|---|---|\n")
        out.extend(f"| `{_v(f['name'])}` | {_v(f['type'])} |\n" for f in group["rows"])
    for heading, body in sections.items():
        out.append(f"\n## {_v(heading)}\n\n{_v(body)}\n")
    return "".join(out)


def _lm_eval(lm_eval_tasks: Sequence[str], lm_eval_group: str) -> str:
    if not lm_eval_tasks:
        return ""
    return (
        "\n## Evaluation with lm-evaluation-harness\n\n"
        f"`lm_eval/` holds one lm-eval task per multiple-choice config ({_v(len(lm_eval_tasks))} tasks, group\n"
        f"`{_v(lm_eval_group)}`); see `lm_eval/README.md`. From the release folder:\n\n"
        "```bash\nlm_eval --model hf --model_args pretrained=EleutherAI/pythia-160m --include_path lm_eval "
        f"--tasks {_v(lm_eval_tasks[0])}\n```\n"
    )


def _errata(m: Mapping[str, Any], harvested: bool, sections: Mapping[str, Any]) -> str:
    out = ["\n## Errata\n\n"]
    if m["errata_applied"]:
        out.append("Applied in this version:\n\n")
        out.extend(f"- **{_v(e['id'])}** (since {_v(e['version'])}, {_v(len(e['items']))} items): {_v(e['what'])} "
                   f"*Evidence:* {_v(e['evidence'])} *Fix:* {_v(e['fix'])}\n" for e in m["errata_applied"])
    elif harvested:
        out.append("None: this release was harvested by benchsmith's pipeline from the inputs under Sources, "
                   "not copied from\nupstream's release, so upstream's errata do not apply to it.")
        if "Reproducibility" in sections:
            out.append(" Whether a new harvest gives the same files: see Reproducibility.")
        out.append("\n")
    else:
        out.append("None applied: this version reproduces upstream as released.\n")
    if m["errata_pending"]:
        out.append("\nKnown but not applied in this version (fixed in a later one):\n\n")
        out.extend(f"- **{_v(e['id'])}** (fixed in {_v(e['version'])}, {_v(len(e['items']))} items): "
                   f"{_v(e['what'])}\n" for e in m["errata_pending"])
    out.append("\n")
    return "".join(out)


def _changes(m: Mapping[str, Any], changes_md: str | None) -> str:
    since = m.get("changes_since")
    if not since:
        return ""
    text = _v(changes_md) if changes_md else f"{_v(since.get('error'))}\n"
    return f"## Changes since {_v(since.get('version') or 'the previous version')}\n\n{text}\n"


def _escaped(text: Any) -> str:
    """The template's ``text | replace("|", "\\|")``: a pipe inside a Markdown table cell."""
    return _v(str(text).replace("|", "\\|"))


def _validation(v: Mapping[str, Any] | None, contamination: Sequence[str], local_path: str) -> str:
    if not v:
        return (f"## Validation\n\nNot validated yet: run `benchsmith validate {_v(local_path)}` "
                "(from the registry folder).\n\n")
    out = [(f"## Validation\n\nGate: **{'passed' if v['passed'] else 'failed'}**. {_v(v['total'])} results: "
           f"{_v(v['counts_text'])}.\nReport: `reports/validation.html` (every result, with plots) and "
           "`reports/validation.json`")]
    if v["baselines"]:
        out.append(f"; baselines: {_v(v['baselines'])}")
    out.append(".\n")
    out.extend(f"\n- {_v(n)}" for n in v["notes"])
    out.extend(f"\n- Contamination: {_v(line)}" for line in contamination)
    out.append("\n")
    statuses = v["statuses"]
    if v["full"]:
        out.append("\n| check | config | status | summary |\n|---|---|---|---|\n")
        out.extend(f"| {_v(r['check'])} | {_v(r.get('config') or '')} | {_v(r['status'])} | "
                   f"{_escaped(r['summary'])} |\n" for r in v["results"])
    else:
        out.append("\nResults per check (the report lists each one):\n\n| check | family |")
        out.extend(f" {_v(s)} |" for s in statuses)
        out.append("\n|---|---|" + "---:|" * len(statuses) + "\n")
        for row in v["by_check"]:
            out.append(f"| {_v(row['check'])} | {_v(row['family'])} |")
            out.extend(f" {_v(row['counts'][s])} |" for s in statuses)
            out.append("\n")
        out.append("| **all** | |")
        out.extend(f" **{_v(v['counts'][s])}** |" for s in statuses)
        out.append("\n")
        for heading, rows in v["listed"]:
            if not rows:
                continue
            out.append(f"\n{_v(heading)} ({_v(v['counts'][rows[0]['status']])}; one row per check and summary):"
                       "\n\n| check | configs | summary |\n|---|---|---|\n")
            out.extend(f"| {_v(r['check'])} | {_v(', '.join(map(str, r['configs'])))} | {_escaped(r['summary'])} |\n"
                       for r in rows)
    out.append("\n")
    return "".join(out)


def _baselines(m: Mapping[str, Any], baselines: Mapping[str, Any] | None) -> str:
    if not baselines:
        return ""
    runs = baselines["runs"]
    out = [
        (f"## Baselines\n\nModel baselines of this release ({_v(runs)} run{_v('s' if runs != 1 else '')}: "
        f"`benchsmith baseline {_v(m['name'])}`, and the gated ones of\n"
        "`benchsmith validate --baselines model`). Accuracy and error rates are in %, BLEU is 0-100; the paper's "
        "figure\nstands beside ours where the paper reports one. Each run's record (model and its sha256, seed, "
        "device, dtype,\nlibrary versions, hyper-parameters, steps, wall time, throughput) is in "
        "`reports/validation.json`.\n\n"
        "| baseline | config | split | variant | model | metric | score | paper |\n"
        "|---|---|---|---|---|---|---:|---|\n")
    ]
    out.extend(f"| {_v(r['baseline'])} | {_v(r['config'])} | {_v(r['split'])} | {_v(r['variant'])} | "
               f"{_v(str(r['model']).replace('|', '/'))} | {_v(r['metric'])} | {_v(r['score'])} | {_v(r['paper'])} |\n"
               for r in baselines["rows"])
    if baselines["not_comparable"]:
        out.append("\nNot comparable with the paper (a subsample, another training split, a smaller model or fewer "
                   f"steps than the\npaper's): {_v(', '.join(map(str, baselines['not_comparable'])))}.\n")
    out.append("\n")
    return "".join(out)


def _sources(m: Mapping[str, Any], source_status: Mapping[str, str]) -> str:
    rows = "".join(f"| {_v(n)} | {_v(s['license'])} | {_v(len(s['files']))} | {_v(source_status[n])} |\n"
                   for n, s in m["sources"].items())
    return (f"## Sources\n\n| source | license | files | status |\n|---|---|---:|---|\n{rows}\n"
            "Per-file sha256 checksums are in `release.json`.\n\n"
            f"## Citation\n\n```bibtex\n{_v(m['citation'])}\n```\n")


def card_body(*, m: Mapping[str, Any], hub: Mapping[str, str] | None, local_path: str, first_config: str,
              first_splits: Sequence[str], split_names: Sequence[str], feature_groups: Sequence[Mapping[str, Any]],
              sections: Mapping[str, Any], v: Mapping[str, Any] | None, contamination: Sequence[str],
              baselines: Mapping[str, Any] | None, skipped: Mapping[str, Mapping[str, str]],
              source_status: Mapping[str, str], lm_eval_tasks: Sequence[str], lm_eval_group: str,
              harvested: bool, changes_md: str | None) -> str:
    """The card's body (below the YAML front matter) from the values ``cards.card.render_card``
    computes (``m`` is the manifest's JSON form), as ``templates/dataset_card.md.j2`` renders them."""
    return "".join([
        _header(m, hub),
        _loading(m, hub, local_path, first_config, first_splits),
        _configs(m, split_names, skipped),
        _fields(m, feature_groups, sections),
        _lm_eval(lm_eval_tasks, lm_eval_group),
        _errata(m, harvested, sections),
        _changes(m, changes_md),
        _validation(v, contamination, local_path),
        _baselines(m, baselines),
        _sources(m, source_status),
    ])
