"""Charts of the validation report as inline SVG, drawn from a result's ``figures`` specs.

Why SVG and not PNG: every label (a Thai cue, a Tamil token, a Chinese character) stays text,
rendered by the reader's browser with its own fonts, searchable and copyable; a chart is a few
hundred bytes to a few KB instead of ~15 KB of PNG; and drawing one is string formatting (well
under a millisecond), not a matplotlib figure (~50 ms plus ~1 s to import matplotlib).

Specs (produced by the checks, see ``validation/report.py``):

* ``{"kind": "bar", "categories": [...], "series": {name: [values]}}`` grouped bars;
* ``{"kind": "hist", "edges": [...], "series": {name: [shares]}}`` step histograms;
* ``{"kind": "barh", "labels": [...], "values": [...], "reference": [...]}`` horizontal bars on
  0..1 with a reference tick per bar;

each with optional ``title``, ``xlabel`` and ``ylabel``. A spec of another kind raises
``ValueError`` (the checks only make these three). The output is deterministic: the same spec
gives the same bytes, so a report stays byte-stable.
"""

from __future__ import annotations

import math
import unicodedata
from collections.abc import Sequence
from html import escape
from typing import Any

#: colours of the series, in order (colour-blind safe: Okabe-Ito)
PALETTE = ("#0072b2", "#e69f00", "#009e73", "#cc79a7", "#56b4e9", "#d55e00", "#f0e442", "#000000")
WIDTH = 480
FONT = 11  # px; labels are <text>, so the reader's fonts draw every script
#: the classes the charts use; the page that embeds them carries this style once
CSS = ("svg.chart text{font-size:11px;fill:#1f2328} svg.chart .m{fill:#57606a} svg.chart .e{text-anchor:end}"
       "svg.chart .c{text-anchor:middle} svg.chart .t{font-weight:600} svg.chart .g{stroke:#d0d7de;stroke-dasharray:2 3}"
       "svg.chart .ax{stroke:#57606a;fill:none} svg.chart .ref{stroke:#000;stroke-width:2}")


def informative(spec: dict[str, Any]) -> bool:
    """False for a chart that says nothing a sentence would not: a histogram whose every series
    has one bin (the lengths of a one-token field) or bars of one category."""
    kind = spec.get("kind")
    if kind == "hist":
        return any(sum(1 for v in vals if v) > 1 for vals in (spec.get("series") or {}).values())
    if kind == "bar":
        return len(spec.get("categories") or []) > 1
    return True


def svg(spec: dict[str, Any]) -> str:
    """One figure spec as an inline ``<svg>`` element (see module docstring)."""
    kind = spec.get("kind")
    if kind == "bar":
        return _bar(spec)
    if kind == "hist":
        return _hist(spec)
    if kind == "barh":
        return _barh(spec)
    raise ValueError(f"unknown figure kind {kind!r}")


def text_width(s: str) -> float:
    """Approximate width in px of ``s`` at :data:`FONT`, no font metrics needed: enough to leave
    room for a label. An ASCII character is 0.6 em, a wide East Asian one 1 em, a letter of
    another script (Tamil letters are wide, Thai ones narrower: room for the wider) 0.95 em, a
    spacing vowel sign 0.6 em, a combining mark none."""
    em = 0.0
    for ch in s:
        cat = unicodedata.category(ch)
        if cat in ("Mn", "Me", "Cf"):
            continue
        if ch.isascii():
            em += 0.6
        elif unicodedata.east_asian_width(ch) in ("W", "F"):
            em += 1.0
        else:
            em += 0.6 if cat == "Mc" else 0.95
    return em * FONT


def _n(x: float) -> str:
    """A coordinate in whole px: a chart is drawn at its size, and the output stays small."""
    return str(round(x))


def _label(v: float) -> str:
    if v == 0:
        return "0"
    if abs(v) >= 1000:
        return f"{v:,.0f}"
    return f"{v:.3g}"


def _ticks(hi: float, n: int = 4) -> list[float]:
    """Round tick values from 0 to at least ``hi``."""
    if hi <= 0 or not math.isfinite(hi):
        return [0.0, 1.0]
    raw = hi / n
    mag = 10 ** math.floor(math.log10(raw))
    step = next(m * mag for m in (1, 2, 2.5, 5, 10) if m * mag >= raw)
    return [i * step for i in range(math.ceil(hi / step - 1e-9) + 1)]


def _frame(spec: dict[str, Any], height: float, body: list[str]) -> str:
    title = spec.get("title", "")
    head = (f"<svg class='chart' role='img' width='{WIDTH}' "
            f"height='{_n(height)}' viewBox='0 0 {WIDTH} {_n(height)}'>"
            f"<title>{escape(title)}</title>")
    if title:
        body.insert(0, f"<text x='{WIDTH / 2:g}' y='14' class='c t'>{escape(title)}</text>")
    return head + "".join(body) + "</svg>"


def _axes(x0: float, x1: float, y0: float, y1: float, ymax: float, spec: dict[str, Any]) -> list[str]:
    """Left y axis with ticks from 0 to ``ymax``, the x axis line, and the axis labels."""
    out = [f"<path d='M{_n(x0)} {_n(y0)}V{_n(y1)}H{_n(x1)}' class='ax'/>"]
    grid = []
    for t in _ticks(ymax):
        if t > ymax * 1.0001:
            break
        y = y1 - (y1 - y0) * t / ymax
        out.append(f"<text x='{_n(x0 - 4)}' y='{_n(y + 4)}' class='m e'>{_label(t)}</text>")
        grid.append(f"M{_n(x0)} {_n(y)}H{_n(x1)}")
    out.append(f"<path d='{''.join(grid)}' class='g'/>")
    if spec.get("ylabel"):
        cy = (y0 + y1) / 2
        out.append(f"<text transform='translate(12 {_n(cy)}) rotate(-90)' class='m c'>"
                   f"{escape(spec['ylabel'])}</text>")
    if spec.get("xlabel"):
        out.append(f"<text x='{_n((x0 + x1) / 2)}' y='{_n(y1 + 32)}' class='m c'>"
                   f"{escape(spec['xlabel'])}</text>")
    return out


def _legend(names: Sequence[str], x: float, y: float) -> list[str]:
    out = []
    for i, name in enumerate(names):
        out.append(f"<rect x='{_n(x)}' y='{_n(y - 8)}' width='10' height='10' fill='{PALETTE[i % len(PALETTE)]}'/>"
                   f"<text x='{_n(x + 14)}' y='{_n(y + 1)}'>{escape(str(name))}</text>")
        x += 24 + text_width(str(name))
    return out


def _ymax(series: dict[str, Sequence[float]]) -> float:
    vals = [float(v) for vs in series.values() for v in vs if v is not None and math.isfinite(float(v))]
    top = max(vals, default=0.0)
    return _ticks(top)[-1] if top > 0 else 1.0


def _bar(spec: dict[str, Any]) -> str:
    cats = [str(c) for c in spec["categories"]]
    series = spec["series"]
    rotate = len(cats) > 6 or any(text_width(c) > (WIDTH - 70) / max(len(cats), 1) for c in cats)
    bottom = 50 + (min(max((text_width(c) for c in cats), default=0), 120) * 0.7 if rotate else 0)
    height = 30 + 150 + bottom
    x0, x1, y0, y1 = 56.0, WIDTH - 10.0, 30.0, 30.0 + 150
    ymax = _ymax(series)
    body = _axes(x0, x1, y0, y1, ymax, {**spec, "xlabel": None})
    slot = (x1 - x0) / max(len(cats), 1)
    width = slot * 0.8 / max(len(series), 1)
    for i, (name, vals) in enumerate(series.items()):
        color = PALETTE[i % len(PALETTE)]
        for j, v in enumerate(vals):
            v = float(v or 0)
            h = (y1 - y0) * v / ymax
            x = x0 + slot * j + slot * 0.1 + width * i
            body.append(f"<rect x='{_n(x)}' y='{_n(y1 - h)}' width='{_n(width)}' height='{_n(h)}' fill='{color}'>"
                        f"<title>{escape(str(name))} {escape(cats[j])}: {_label(v)}</title></rect>")
    for j, c in enumerate(cats):
        cx = x0 + slot * (j + 0.5)
        if rotate:
            body.append(f"<text transform='translate({_n(cx)} {_n(y1 + 12)}) rotate(-35)' class='e'>"
                        f"{escape(c)}</text>")
        else:
            body.append(f"<text x='{_n(cx)}' y='{_n(y1 + 14)}' class='c'>{escape(c)}</text>")
    if len(series) > 1:
        body += _legend(list(series), x0, height - 8)
    return _frame(spec, height, body)


def _hist(spec: dict[str, Any]) -> str:
    edges = [float(e) for e in spec["edges"]]
    series = spec["series"]
    height = 240.0
    x0, x1, y0, y1 = 56.0, WIDTH - 10.0, 30.0, 180.0
    ymax = _ymax(series)
    body = _axes(x0, x1, y0, y1, ymax, spec)
    lo, hi = edges[0], edges[-1]
    span = (hi - lo) or 1.0

    def px(e: float) -> float:
        return x0 + (x1 - x0) * (e - lo) / span

    for t in _ticks(hi - lo, 6):
        e = lo + t
        if e > hi:
            break
        body.append(f"<text x='{_n(px(e))}' y='{_n(y1 + 14)}' class='m c'>{_label(e)}</text>")
    for i, (name, shares) in enumerate(series.items()):
        d = [f"M{_n(px(edges[0]))} {_n(y1)}"]
        for k, s in enumerate(shares):
            y = y1 - (y1 - y0) * float(s or 0) / ymax
            d.append(f"V{_n(y)}H{_n(px(edges[k + 1]))}")
        d.append(f"V{_n(y1)}")
        body.append(f"<path d='{''.join(d)}' fill='none' stroke='{PALETTE[i % len(PALETTE)]}' stroke-width='1.5'/>")
    if len(series) > 1:
        body += _legend(list(series), x0, height - 4)
    return _frame(spec, height, body)


def _barh(spec: dict[str, Any]) -> str:
    labels = [str(x) for x in spec["labels"]]
    values = [float(v or 0) for v in spec["values"]]
    ref = spec.get("reference") or []
    row = 18.0
    left = min(max((text_width(s) for s in labels), default=0) + 12, WIDTH * 0.45)
    x0, x1, y0 = left, WIDTH - 14.0, 26.0
    height = y0 + row * len(labels) + 40
    body = ["<path d='" + "".join(f"M{_n(x0 + (x1 - x0) * t)} {_n(y0)}V{_n(y0 + row * len(labels))}"
                                  for t in (0, 0.25, 0.5, 0.75, 1.0)) + "' class='g'/>"]
    for t in (0, 0.25, 0.5, 0.75, 1.0):
        x = x0 + (x1 - x0) * t
        body.append(f"<text x='{_n(x)}' y='{_n(y0 + row * len(labels) + 14)}' class='m c'>"
                    f"{_label(t)}</text>")
    for i, (lab, v) in enumerate(zip(labels, values)):
        y = y0 + row * i
        w = (x1 - x0) * min(max(v, 0.0), 1.0)
        body.append(f"<text x='{_n(x0 - 6)}' y='{_n(y + row * 0.7)}' class='e'>{escape(lab)}</text>"
                    f"<rect x='{_n(x0)}' y='{_n(y + 3)}' width='{_n(w)}' height='{_n(row - 6)}' fill='{PALETTE[0]}'/>")
        if i < len(ref) and ref[i] is not None:
            rx = x0 + (x1 - x0) * min(max(float(ref[i]), 0.0), 1.0)
            body.append(f"<path d='M{_n(rx)} {_n(y + 1)}V{_n(y + row - 1)}' class='ref'/>")
    if spec.get("xlabel"):
        body.append(f"<text x='{_n((x0 + x1) / 2)}' y='{_n(height - 6)}' class='m c'>"
                    f"{escape(spec['xlabel'])}</text>")
    return _frame(spec, height, body)


__all__ = ["CSS", "PALETTE", "svg", "text_width"]
