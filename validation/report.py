"""The validation report: ``reports/validation.json`` (machines) and
``reports/validation.html`` (people).

JSON keys: ``name``, ``version``, ``benchsmith`` (tool version), ``baselines``
(the level run), ``fingerprints`` (``{config: {split: sha256}}`` of the release
validated, so the gate can tell a stale report), ``previous`` (the release drift
compared against, or null), ``summary`` (``{pass, warn, fail, skip}`` counts),
``passed`` (no failure), and ``results`` (one object per check result: ``check``,
``family``, ``config``, ``status``, ``summary``, ``metrics``, ``details``,
``figures``), and ``seal`` (written last, by ``validate`` of a release that is not published:
the digest and listing of every file of the release as validated, see ``benchsmith.seal``).
No timestamps: validating the same release twice writes the same JSON.

The HTML page is one self-contained file (inline CSS, plots embedded as base64
PNGs rendered with matplotlib's Agg backend), readable from disk without a
server. Plots are drawn from each result's ``figures`` specs:

* ``{"kind": "bar", "categories": [...], "series": {name: [values]}}`` grouped bars;
* ``{"kind": "hist", "edges": [...], "series": {name: [shares]}}`` step histograms;
* ``{"kind": "barh", "labels": [...], "values": [...], "reference": [...]}``
  horizontal bars with a reference tick per bar;

each with optional ``title``, ``xlabel``, ``ylabel``.
"""

from __future__ import annotations

import base64
import functools
import html
import io
import json
import math
import warnings
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from benchsmith.validation.check import CheckResult, Status

import benchsmith
from benchsmith.jsonable import to_jsonable
from benchsmith.registry import write_text_atomic

STATUS_ORDER = {Status.FAIL.value: 0, Status.WARN.value: 1, Status.PASS.value: 2, Status.STAT.value: 3,
                Status.SKIP.value: 4}
COLORS = {"pass": "#1a7f37", "warn": "#9a6700", "fail": "#cf222e", "skip": "#6e7781", "stat": "#0969da"}


def build_report(
    release: Any,
    results: Sequence[CheckResult],
    *,
    baselines: str,
    previous: Any | None = None,
    notes: Sequence[str] = (),
) -> dict[str, Any]:
    """The report object (see module docstring); NaN/inf metrics become null."""
    counts = Counter(r.status.value for r in results)
    summary = {s.value: counts.get(s.value, 0) for s in (Status.PASS, Status.WARN, Status.FAIL, Status.SKIP, Status.STAT)}
    return _finite(to_jsonable(
        {
            "name": release.name,
            "version": release.version,
            "benchsmith": benchsmith.__version__,
            "baselines": baselines,
            "fingerprints": release.fingerprints(),
            "previous": {"name": previous.name, "version": previous.version} if previous is not None else None,
            "notes": list(notes),
            "summary": summary,
            "passed": summary["fail"] == 0,
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


def write_report(release: Any, report: dict[str, Any], out: Path | None = None) -> tuple[Path, Path]:
    """Write both files into ``out`` (default ``<release>/reports/``); returns their paths."""
    out = Path(out) if out is not None else release.reports_dir
    jpath = write_report_json(report, out)
    hpath = out / "validation.html"
    write_text_atomic(hpath, render_html(report, release.manifest))
    _prune_figure_cache()
    return jpath, hpath


def write_report_json(report: dict[str, Any], out: Path) -> Path:
    """Write ``validation.json`` alone into ``out`` (atomically); returns its path."""
    out.mkdir(parents=True, exist_ok=True)
    jpath = out / "validation.json"
    write_text_atomic(jpath, json.dumps(report, indent=2, ensure_ascii=False, allow_nan=False, default=str) + "\n")
    return jpath


# ------------------------------------------------------------------ plots


#: bump when :func:`_draw` changes what it draws: cached figures of older versions never match
_DRAW_VERSION = "2"
#: rendered figures kept in ``$BENCHSMITH_HOME/cache/figures`` (about 15 KB each)
FIGURE_CACHE_FILES = 4096


def _png(spec: dict[str, Any]) -> str:
    """One figure spec as a base64 PNG, from the figure cache when this spec was drawn before.

    Validating unchanged data again (``validate`` then ``audit``, a CI re-run) draws the same
    specs, and drawing is most of a report's cost (~50-80 ms a figure; 133 for XCOPA). The
    cache is keyed by the spec, matplotlib's version and :data:`_DRAW_VERSION`, and Agg writes
    the same bytes for the same input, so a cached figure is the figure a fresh render gives.
    """
    import hashlib

    from benchsmith.cache import cache_path, write_bytes

    key = hashlib.sha256(json.dumps([_DRAW_VERSION, _matplotlib_version(), spec], sort_keys=True,
                                    default=str).encode()).hexdigest()
    path = cache_path("figures", f"{key}.png")
    try:
        return base64.b64encode(path.read_bytes()).decode("ascii")
    except OSError:
        pass
    data = _render(spec)
    write_bytes(path, data)
    return base64.b64encode(data).decode("ascii")


@functools.cache
def _matplotlib_version() -> str:
    from importlib.metadata import version

    return version("matplotlib")


def _prune_figure_cache() -> None:
    """Keep the newest :data:`FIGURE_CACHE_FILES` cached figures (once per report, not per figure)."""
    from benchsmith.cache import cache_path

    try:
        files = list(cache_path("figures").glob("*.png"))
        if len(files) > FIGURE_CACHE_FILES:
            files.sort(key=lambda f: f.stat().st_mtime)
            for old in files[: len(files) - FIGURE_CACHE_FILES]:
                old.unlink(missing_ok=True)
    except OSError:
        pass


def _render(spec: dict[str, Any]) -> bytes:
    """Render one figure spec to PNG bytes."""
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt
    import numpy as np

    kind = spec.get("kind")
    with warnings.catch_warnings():  # missing glyphs (Tamil, Thai...) and tight_layout notes
        warnings.simplefilter("ignore", UserWarning)
        return _draw(spec, kind, plt, np)


def _draw(spec: dict[str, Any], kind: Any, plt: Any, np: Any) -> bytes:
    height = 3.0 if kind != "barh" else 0.3 * len(spec.get("labels", [])) + 1.2
    fig, ax = plt.subplots(figsize=(6.4, max(height, 2.2)), dpi=80)
    try:
        if kind == "bar":
            cats, series = spec["categories"], spec["series"]
            x = np.arange(len(cats))
            width = 0.8 / max(len(series), 1)
            for i, (name, vals) in enumerate(series.items()):
                ax.bar(x + i * width - 0.4 + width / 2, vals, width, label=name)
            ax.set_xticks(x, [str(c) for c in cats], rotation=30 if len(cats) > 6 else 0)
        elif kind == "hist":
            edges = spec["edges"]
            for name, shares in spec["series"].items():
                ax.stairs(shares, edges, label=name, linewidth=1.5)
        elif kind == "barh":
            labels, vals = spec["labels"][::-1], spec["values"][::-1]
            y = np.arange(len(labels))
            ax.barh(y, vals, color="#4c72b0")
            if spec.get("reference"):
                ax.scatter(spec["reference"][::-1], y, marker="|", s=200, color="black", zorder=3)
            ax.set_yticks(y, labels)
            ax.set_xlim(0, 1)
        else:
            raise ValueError(f"unknown figure kind {kind!r}")
        ax.set_title(spec.get("title", ""), fontsize=10)
        ax.set_xlabel(spec.get("xlabel", ""))
        ax.set_ylabel(spec.get("ylabel", ""))
        if kind in ("bar", "hist") and len(spec.get("series", {})) > 1:
            ax.legend(fontsize=8)
        if kind == "hist":
            # Numeric ticks only: fixed margins fit, and tight_layout (a second text-layout pass,
            # ~40 % of a figure's cost) is kept for the bar charts, whose category labels vary.
            fig.subplots_adjust(left=0.13, right=0.98, bottom=0.18, top=0.9)
        else:
            fig.tight_layout()
        buf = io.BytesIO()
        fig.savefig(buf, format="png")
    finally:
        plt.close(fig)
    return buf.getvalue()


# ------------------------------------------------------------------ html

_CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,sans-serif;margin:2rem auto;max-width:70rem;color:#1f2328;
padding:0 1rem}
h1{margin-bottom:.2rem} .meta{color:#57606a;margin-top:0}
table{border-collapse:collapse;width:100%;margin:1rem 0;font-size:.9rem}
th,td{border:1px solid #d0d7de;padding:.35rem .5rem;text-align:left;vertical-align:top}
th{background:#f6f8fa} .badge{display:inline-block;padding:.1rem .5rem;border-radius:1rem;color:#fff;
font-size:.8rem;font-weight:600} pre{background:#f6f8fa;padding:.6rem;overflow:auto;font-size:.8rem;
max-height:24rem} details{margin:.3rem 0 1rem} .result{border-top:1px solid #d0d7de;padding-top:.5rem}
img{max-width:100%;margin:.3rem .5rem .3rem 0} .kv td:first-child{white-space:nowrap;color:#57606a}
"""


def _badge(status: str) -> str:
    return f'<span class="badge" style="background:{COLORS.get(status, "#6e7781")}">{html.escape(status)}</span>'


def _metrics_table(metrics: dict[str, Any]) -> str:
    if not metrics:
        return ""
    rows = "".join(
        f"<tr><td>{html.escape(str(k))}</td><td>{html.escape(_fmt(v))}</td></tr>" for k, v in metrics.items()
    )
    return f'<table class="kv">{rows}</table>'


def _fmt(v: Any) -> str:
    if isinstance(v, float):
        return f"{v:.4g}"
    if isinstance(v, (dict, list)):
        return json.dumps(v, ensure_ascii=False)
    return str(v)


def render_html(report: dict[str, Any], manifest: dict[str, Any] | None = None) -> str:
    """One self-contained HTML page for a report (plots embedded)."""
    e = html.escape
    s = report["summary"]
    results = sorted(
        enumerate(report["results"]),
        key=lambda ir: (STATUS_ORDER.get(ir[1]["status"], 9), ir[0]),
    )
    title = f"{report['name']} {report['version']}: validation"
    parts = [
        "<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>",
        f"<title>{e(title)}</title><style>{_CSS}</style></head><body>",
        f"<h1>{e(title)}</h1>",
        f"<p class='meta'>benchsmith {e(report['benchsmith'])} &middot; baselines: {e(report['baselines'])}"
        + (f" &middot; drift against {e(report['previous']['name'])} {e(report['previous']['version'])}"
           if report.get("previous") else " &middot; no previous release to compare with")
        + "</p>",
        "<p>" + " ".join(f"{_badge(k)} {v}" for k, v in s.items()) + " &nbsp; <b>"
        + ("gate passed" if report["passed"] else "gate FAILED") + "</b></p>",
    ]
    for note in report.get("notes", []):
        parts.append(f"<p class='meta'>{e(note)}</p>")
    if manifest:
        rows = "".join(
            f"<tr><td><code>{e(c)}</code></td><td>{e(s_)}</td><td>{info['num_examples']:,}</td>"
            f"<td><code>{e(info['fingerprint'][:16])}</code></td></tr>"
            for c, cfg in manifest["configs"].items()
            for s_, info in cfg["splits"].items()
        )
        parts.append("<h2>Splits</h2><table><tr><th>config</th><th>split</th><th>examples</th>"
                     f"<th>fingerprint</th></tr>{rows}</table>")
    parts.append("<h2>Checks</h2><table><tr><th>status</th><th>check</th><th>family</th><th>config</th>"
                 "<th>summary</th></tr>")
    for i, r in results:
        parts.append(
            f"<tr><td>{_badge(r['status'])}</td><td><a href='#r{i}'>{e(r['check'])}</a></td><td>{e(r['family'])}</td>"
            f"<td>{e(r.get('config') or '')}</td><td>{e(r['summary'])}</td></tr>"
        )
    parts.append("</table><h2>Details</h2>")
    for i, r in results:
        if r["status"] == "skip" and not r.get("details"):
            continue
        parts.append(
            f"<div class='result' id='r{i}'><h3>{_badge(r['status'])} {e(r['check'])}"
            + (f" &middot; <code>{e(r['config'])}</code>" if r.get("config") else "")
            + f"</h3><p>{e(r['summary'])}</p>"
        )
        parts.append(_metrics_table(r.get("metrics") or {}))
        for spec in r.get("figures") or []:
            parts.append(f"<img alt='{e(spec.get('title', 'plot'))}' src='data:image/png;base64,{_png(spec)}'>")
        if r.get("details"):
            parts.append(
                "<details><summary>details</summary><pre>"
                + e(json.dumps(r["details"], indent=1, ensure_ascii=False, default=str))
                + "</pre></details>"
            )
        parts.append("</div>")
    parts.append("</body></html>\n")
    return "\n".join(parts)
