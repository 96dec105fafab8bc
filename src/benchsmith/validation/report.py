"""The validation report: ``reports/validation.json`` (machines) and
``reports/validation.html`` (people).

JSON keys: ``name``, ``version``, ``benchsmith`` (tool version), ``baselines``
(the level run), ``fingerprints`` (``{config: {split: sha256}}`` of the release
validated, so the gate can tell a stale report), ``previous`` (the release drift
compared against, or null), ``summary`` (``{pass, warn, fail, skip, stat, acknowledged}``
counts: ``warn`` counts the new warnings, ``acknowledged`` those the dataset's declarations
explain, see ``benchsmith.validation.acknowledge``),
``passed`` (no failure), and ``results`` (one object per check result: ``check``,
``family``, ``config``, ``split``, ``status``, ``summary``, ``metrics``, ``details``,
``figures``, and for a warning or failure ``why``, ``todo``, ``topic``, ``figure`` and
``acknowledged``: ``validation/check.py``), and ``seal`` (written last, by ``validate`` of a release that is not published:
the digest and listing of every file of the release as validated, see ``benchsmith.seal``).
No timestamps: validating the same release twice writes the same JSON.

The HTML page is one self-contained file (inline CSS, charts as inline SVG drawn
by ``validation/charts.py``, no script), readable from disk without a server,
verdict first (see :func:`render_html`). Charts are drawn from each result's
``figures`` specs:

* ``{"kind": "bar", "categories": [...], "series": {name: [values]}}`` grouped bars;
* ``{"kind": "hist", "edges": [...], "series": {name: [shares]}}`` step histograms;
* ``{"kind": "barh", "labels": [...], "values": [...], "reference": [...]}``
  horizontal bars with a reference tick per bar;

each with optional ``title``, ``xlabel``, ``ylabel``.
"""

from __future__ import annotations

import html
import json
import math
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import benchsmith
from benchsmith.jsonable import to_jsonable
from benchsmith.manifest import ReleaseInfo
from benchsmith.registry import write_text_atomic
from benchsmith.validation import charts, summary
from benchsmith.validation.check import CheckResult, Status
from benchsmith.validation.contamination.html import section

if TYPE_CHECKING:
    from benchsmith.release import Release

STATUS_ORDER = {Status.FAIL.value: 0, Status.WARN.value: 1, Status.PASS.value: 2, Status.STAT.value: 3,
                Status.SKIP.value: 4}
COLORS = {"pass": "#1a7f37", "warn": "#9a6700", "fail": "#cf222e", "skip": "#6e7781", "stat": "#0969da",
          "acknowledged": "#8c959f"}


def build_report(
    release: Release,
    results: Sequence[CheckResult],
    *,
    baselines: str,
    previous: Any | None = None,
    notes: Sequence[str] = (),
) -> dict[str, Any]:
    """The report object (see module docstring); NaN/inf metrics become null."""
    # an acknowledged warning is listed but not counted as a warning (validation/acknowledge.py)
    counts = Counter("acknowledged" if r.acknowledged else r.status.value for r in results)
    totals = {s: counts.get(s, 0) for s in ("pass", "warn", "fail", "skip", "stat", "acknowledged")}
    return _finite(to_jsonable(
        {
            "name": release.name,
            "version": release.version,
            "benchsmith": benchsmith.__version__,
            "baselines": baselines,
            "fingerprints": release.fingerprints(),
            "previous": {"name": previous.name, "version": previous.version} if previous is not None else None,
            "notes": list(notes),
            "summary": totals,
            "passed": totals["fail"] == 0,
            "results": [r.to_dict() for r in results],
        }
    ))


def _finite(obj: Any) -> Any:
    """JSON has no NaN: a statistic that is undefined (e.g. a test on one class) is null."""
    if isinstance(obj, float):
        return obj if math.isfinite(obj) else None
    if isinstance(obj, dict):
        return {k: _finite(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_finite(v) for v in obj]
    return obj


def write_report(release: Release, report: dict[str, Any], out: Path | None = None) -> tuple[Path, Path]:
    """Write both files into ``out`` (default ``<release>/reports/``); returns their paths."""
    out = Path(out) if out is not None else release.reports_dir
    jpath = write_report_json(report, out)
    hpath = out / "validation.html"
    write_text_atomic(hpath, render_html(report, release.info))
    return jpath, hpath


def write_report_json(report: dict[str, Any], out: Path) -> Path:
    """Write ``validation.json`` alone into ``out`` (atomically); returns its path."""
    out.mkdir(parents=True, exist_ok=True)
    jpath = out / "validation.json"
    write_text_atomic(jpath, json.dumps(report, indent=2, ensure_ascii=False, allow_nan=False, default=str) + "\n")
    return jpath


# ------------------------------------------------------------------ html

#: the most a report page may weigh, in UTF-8 bytes. Everything but the results' ``details``
#: (verdict, lists, summaries, metrics, charts, split table) is always shown; what is left of the
#: budget goes to the details of failures and warnings first, then is shared equally by the
#: other results, each cut to its share and at most :data:`DETAILS_MAX_CHARS` characters; a
#: share under :data:`DETAILS_MIN_CHARS` is not shown (the page says so). validation.json always
#: keeps every detail whole. XCOPA's 410 results otherwise made a page of 3.4 MB (PNGs) or 0.75 MB.
PAGE_BUDGET_BYTES = 580_000
DETAILS_MAX_CHARS = 3000
DETAILS_MIN_CHARS = 400

_CSS = """
body{font-family:system-ui,-apple-system,"Segoe UI","Noto Sans","Noto Sans Tamil","Noto Sans Thai",
"Noto Sans CJK SC","WenQuanYi Zen Hei","Noto Sans Devanagari",sans-serif;margin:1rem auto;max-width:70rem;
color:#1f2328;padding:0 1rem;line-height:1.4}
h1{margin:.2rem 0;font-size:1.6rem} .meta{color:#57606a;margin:.2rem 0}
.verdict{display:inline-block;font-size:1.3rem;font-weight:700;padding:.2rem .8rem;border-radius:.4rem;color:#fff;
margin:.4rem 0} .verdict.pass{background:#1a7f37} .verdict.fail{background:#cf222e}
.counts{margin:.4rem 0 .8rem} .counts span{margin-right:.8rem}
ul.items{list-style:none;padding:0;margin:0 0 1rem;font-size:.9rem}
ul.items li{padding:.12rem 0;border-bottom:1px solid #eaeef2}
table{border-collapse:collapse;width:100%;margin:.6rem 0;font-size:.9rem}
th,td{border:1px solid #d0d7de;padding:.3rem .5rem;text-align:left;vertical-align:top}
th{background:#f6f8fa} .badge{display:inline-block;min-width:2.6rem;text-align:center;padding:0 .4rem;
border-radius:1rem;color:#fff;font-size:.75rem;font-weight:600}
pre{background:#f6f8fa;padding:.6rem;overflow:auto;font-size:.8rem;max-height:24rem}
details.config{border:1px solid #d0d7de;border-radius:.4rem;margin:.4rem 0;padding:.2rem .6rem}
details.config>summary{cursor:pointer;font-weight:600} .result{border-top:1px solid #d0d7de;padding:.4rem 0}
.result h3{font-size:1rem;margin:.3rem 0} svg.chart{max-width:100%;height:auto;margin:.3rem .5rem .3rem 0}
.kv{font-size:.85rem} .kv span{color:#57606a}
ul.items li .why,ul.items li .todo,ul.items li .reason{margin:.1rem 0 .1rem 3.2rem;color:#57606a}
ul.items li .todo b,ul.items li .reason b{color:#1f2328} ul.items li .where{margin-left:3.2rem;font-size:.85rem}
.badge.ack{background:#8c959f}
""" + "".join(f".badge.{k}{{background:{v}}}" for k, v in COLORS.items())


def _badge(status: str) -> str:
    cls = status if status in COLORS else "skip"
    return f"<span class='badge {cls}'>{html.escape(status)}</span>"


def _text(s: Any) -> str:
    """Escape a text node (quotes stay as they are: the page is smaller and reads the same)."""
    return html.escape(str(s), quote=False)


def _metrics_table(metrics: dict[str, Any]) -> str:
    if not metrics:
        return ""
    # one line of "name value" pairs: a two-column table per result was an eighth of XCOPA's page
    return "<p class='kv'>" + " &middot; ".join(f"<span>{_text(k)}</span> {_text(_fmt(v))}"
                                                 for k, v in metrics.items()) + "</p>"


def _fmt(v: Any) -> str:
    if isinstance(v, float):
        return f"{v:.4g}"
    if isinstance(v, (dict, list)):
        return json.dumps(v, ensure_ascii=False)
    return str(v)


def _details(details: Any, limit: int) -> str:
    text = json.dumps(details, indent=1, ensure_ascii=False, default=str)
    if len(text) > limit:
        text = (text[:limit] + f"\n... {len(text) - limit:,} more characters: the whole "
                "object is this result\'s \"details\" in validation.json")
    return "<details><summary>details</summary><pre>" + html.escape(text, quote=False) + "</pre></details>"


def _result(i: int, r: dict[str, Any], details_limit: int) -> str:
    e = html.escape
    ack = r.get("acknowledged")
    parts = [f"<div class='result' id='r{i}'><h3>{_badge(r['status'])} {e(r['check'])}"
             + (f" &middot; <code>{e(r['config'])}</code>" if r.get("config") else "")
             + f"</h3><p>{_text(r['summary'])}</p>"]
    if ack:
        parts.append(f"<p class='meta'><span class='badge ack'>ack</span> {e(str(ack.get('source', '')))}: "
                     f"{_text(ack.get('reason', ''))}</p>")
    elif r.get("todo"):
        parts.append(f"<p class='meta'>what to do: {_text(r['todo'])}</p>")
    parts.append(_metrics_table(r.get("metrics") or {}))
    figures = [charts.svg(spec) for spec in r.get("figures") or [] if spec and charts.informative(spec)]
    if figures:
        parts.append("<div>" + "".join(figures) + "</div>")
    if r.get("details") and details_limit:
        parts.append(_details(r["details"], details_limit))
    parts.append("</div>")
    return "".join(parts)


def _details_limits(report: dict[str, Any], base_bytes: int) -> dict[int, int]:
    """How many characters of each result's details the page shows (see :data:`PAGE_BUDGET_BYTES`);
    ``base_bytes``: the page without any details."""
    sizes = {i: len(json.dumps(r["details"], indent=1, ensure_ascii=False, default=str).encode())
             for i, r in enumerate(report["results"]) if r.get("details")}
    overhead = 160  # the <details> element and the "more characters" line
    left = PAGE_BUDGET_BYTES - base_bytes
    limits: dict[int, int] = {}
    first = [i for i in sizes if report["results"][i]["status"] in ("fail", "warn")]
    for i in first:
        n = min(sizes[i], DETAILS_MAX_CHARS)
        if left - n - overhead < 0:
            break
        limits[i] = n
        left -= n + overhead
    rest = [i for i in sizes if i not in limits and i not in first]
    if rest:
        share = left // len(rest) - overhead
        if share >= DETAILS_MIN_CHARS:
            limits.update({i: min(share, DETAILS_MAX_CHARS) for i in rest})
    return limits


def _label(it: summary.Item, distinct: bool) -> str:
    """How a finding of a group is named: its config when each has its own, else the head of its
    summary (a fidelity figure's key: ``tuples/train/num_examples``) when short, else its id."""
    head = it.summary.split(": ", 1)[0]
    return it.config or it.id if distinct else head if len(head) <= 60 else it.id


def _labels(its: Sequence[summary.Item]) -> list[str]:
    configs = [it.config for it in its]
    distinct = len(set(configs)) == len(configs)
    return [_label(it, distinct) for it in its]


def _where_links(g: summary.Group) -> str:
    """The findings of a group, each linking to its result."""
    if len(g.items) == 1:
        return ""
    return ("<div class='where'>" + ", ".join(f"<a href='#{it.anchor}'>{html.escape(label)}</a>"
                                               for it, label in zip(g.items, _labels(g.items))) + "</div>")


def _findings(report: dict[str, Any]) -> list[str]:
    """What is new first (failures, then warnings no declaration explains), each group with why
    it matters and what to do; then the acknowledged findings with their reasons: listed, never
    hidden (``validation/summary.py``, ``validation/acknowledge.py``)."""
    e = html.escape
    new = summary.groups(summary.new_items(report))
    n_new = sum(len(g.items) for g in new)
    parts = [f"<h2 id='items'>New findings ({n_new})</h2>"]
    if new:
        lis = []
        for g in new:
            lis.append(f"<li>{_badge(g.status)} <a href='#{g.first.anchor}'>{e(g.check)}</a> "
                       f"{_text(g.statement().removeprefix(g.check).lstrip())}{_where_links(g)}"
                       + (f"<div class='why'>why it matters: {_text(g.first.why)}</div>" if g.first.why else "")
                       + (f"<div class='todo'><b>what to do:</b> {_text(g.first.todo)}</div>" if g.first.todo
                          else "") + "</li>")
        parts.append("<ul class='items'>" + "".join(lis) + "</ul>")
    else:
        parts.append("<p>Nothing new: no failure, and every warning is acknowledged below.</p>")
    acked = summary.groups(summary.acknowledged_items(report))
    if acked:
        n_ack = sum(len(g.items) for g in acked)
        parts.append(f"<h2 id='acknowledged'>Acknowledged findings ({n_ack}, not counted as warnings)</h2>")
        lis = []
        for g in acked:
            reasons: dict[tuple[str, str], list[summary.Item]] = {}
            for it in g.items:
                ack = it.acknowledged or {}
                reasons.setdefault((str(ack.get("reason", "")), str(ack.get("source", ""))), []).append(it)
            labels = dict(zip([it.anchor for it in g.items], _labels(g.items)))
            why = "".join(
                "<div class='reason'>"
                + (f"{e(', '.join(labels[it.anchor] for it in its))}: " if len(reasons) > 1 else "")
                + f"<b>acknowledged</b> ({e(src)}): {_text(reason)}</div>"
                for (reason, src), its in reasons.items())
            lis.append(f"<li><span class='badge ack'>ack</span> <a href='#{g.first.anchor}'>{e(g.check)}</a> "
                       f"{_text(g.statement().removeprefix(g.check).lstrip())}{_where_links(g)}{why}</li>")
        parts.append("<ul class='items'>" + "".join(lis) + "</ul>")
    return parts


def _section_id(config: str | None) -> str:
    return "release" if config is None else "config-" + "".join(c if c.isalnum() or c in "-_." else "_" for c in config)


def render_html(report: dict[str, Any], info: ReleaseInfo | None = None) -> str:
    """One self-contained HTML page for a report (see :func:`_page`), at most
    :data:`PAGE_BUDGET_BYTES` unless its results alone weigh more (then without details)."""
    base = _page(report, info, {})
    limits = _details_limits(report, len(base.encode()))
    return _page(report, info, limits) if limits else base


def _page(report: dict[str, Any], info: ReleaseInfo | None, limits: dict[int, int]) -> str:
    """One self-contained HTML page for a report: no script, no external resource.

    Verdict first: the first screen is the dataset, its version, the gate verdict, the counts
    by status, then the new findings (grouped per check, each with why it matters and what to
    do) and the acknowledged ones with their reasons, each linking to its section (the same
    groups as the terminal and ``--summary markdown``: ``validation/summary.py``). Then one
    collapsed section (``<details>``) per config, with the release-wide results first, each
    result with its metrics, its charts (inline SVG, ``validation/charts.py``) and its details;
    the split table last. Browsers open a closed ``<details>`` when a link targets an element
    inside it, so the links of the first screen work.
    """
    e = html.escape
    title = f"{report['name']} {report['version']}"
    passed = bool(report["passed"])
    parts = [
        ("<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>"
         "<meta name='viewport' content='width=device-width,initial-scale=1'>"),
        f"<title>{e(title)}: validation</title><style>{_CSS}{charts.CSS}</style></head><body>",
        f"<header id='verdict'><h1>{e(title)}</h1>",
        f"<div class='verdict {'pass' if passed else 'fail'}'>{e(summary.verdict(report))}</div>",
        "<div class='counts'>" + "".join(f"<span>{_badge(k)} {n}</span>" for k, n in summary.counts(report))
        + "</div>",
        f"<p class='meta'>benchsmith {e(report['benchsmith'])} &middot; baselines: {e(report['baselines'])}"
        + (f" &middot; drift against {e(report['previous']['name'])} {e(report['previous']['version'])}"
           if report.get("previous") else " &middot; no previous release to compare with")
        + "</p></header>",
    ]
    parts.extend(_findings(report))
    for note in report.get("notes", []):
        parts.append(f"<p class='meta'>{e(note)}</p>")
    groups: dict[str | None, list[tuple[int, dict[str, Any]]]] = {}
    for i, r in enumerate(report["results"]):
        groups.setdefault(r.get("config"), []).append((i, r))
    order = sorted(groups, key=lambda c: (c is not None, list(groups).index(c)))
    parts.append("<h2 id='checks'>Checks</h2>")
    hidden = sum(1 for i, r in enumerate(report["results"]) if r.get("details") and i not in limits)
    if hidden:
        parts.append(f"<p class='meta'>The details of {hidden} results are left out of this page, which is kept "
                     f"under {PAGE_BUDGET_BYTES // 1000} KB: validation.json beside it has every one.</p>")
    for config in order:
        rows = sorted(groups[config], key=lambda ir: (STATUS_ORDER.get(ir[1]["status"], 9), ir[0]))
        n = Counter("acknowledged" if r.get("acknowledged") else r["status"] for _, r in rows)
        label = "release (every config)" if config is None else f"config {config}"
        parts.append(
            f"<details class='config' id='{_section_id(config)}'><summary>{e(label)} &middot; "
            + " ".join(f"{_badge(k)} {n[k]}" for k in summary.COUNT_ORDER if n.get(k)) + "</summary>"
        )
        parts.extend(_result(i, r, limits.get(i, 0)) for i, r in rows
                     if not (r["status"] == "skip" and not r.get("details")))
        skipped = [r for _, r in rows if r["status"] == "skip" and not r.get("details")]
        if skipped:
            parts.append("<p class='meta'>skipped: " + "; ".join(
                f"{e(r['check'])}: {_text(r['summary'])}" for r in skipped) + "</p>")
        parts.append("</details>")
    if info is not None:
        rows_ = "".join(
            f"<tr><td><code>{e(c)}</code></td><td>{e(s_)}</td><td>{split.num_examples:,}</td>"
            f"<td><code>{e(split.fingerprint[:16])}</code></td></tr>"
            for c, s_, split in info.iter_splits()
        )
        parts.append("<h2 id='splits'>Splits</h2><table><tr><th>config</th><th>split</th><th>examples</th>"
                     f"<th>fingerprint</th></tr>{rows_}</table>")

    parts.append(section(report))
    parts.append("</body></html>\n")
    return "\n".join(parts)
