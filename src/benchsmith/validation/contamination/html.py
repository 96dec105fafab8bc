"""The contamination section of the validation report (HTML) and the card's lines (Markdown).

Both read only the report's ``contamination`` results (:mod:`.check`): the rate per config
and split against the registry's other releases, and the items that moved between splits
since the previous version.
"""

from __future__ import annotations

import html
from typing import Any


def _against(report: dict[str, Any]) -> list[dict[str, Any]]:
    return [r for r in report.get("results") or []
            if r.get("check") == "contamination" and (r.get("details") or {}).get("splits")]


def card_lines(report: dict[str, Any] | None, split: str = "test") -> list[str]:
    """"checked against S: x% of test items share a 13-gram with S" (one line), or nothing."""
    if not report:
        return []
    results = _against(report)
    if not results:
        return []
    rows = [row for r in results for row in r["details"]["splits"] if row["split"] == split]
    if not rows:
        return []
    d = results[0]["details"]
    names = ", ".join(d["sources"])
    items = sum(row["items"] for row in rows)
    hit = sum(row["contaminated"] for row in rows)
    line = (f"checked against {names}: {hit / max(items, 1):.1%} of {split} items ({hit:,} of {items:,}) share a "
            f"{d['ngram']}-gram (or, when shorter, a whole field of at least {d['min_tokens']} words) with them "
            "(`benchsmith contamination` checks corpora).")
    return [line]


def section(report: dict[str, Any]) -> str:
    """An HTML table of the contamination rates per config and split ("" when none ran)."""
    results = _against(report)
    if not results:
        return ""
    e = html.escape
    d = results[0]["details"]
    rows = "".join(
        f"<tr><td><code>{e(row['config'])}</code></td><td>{e(row['split'])}</td><td>{row['items']:,}</td>"
        f"<td>{row['contaminated']:,}</td><td>{row['rate']:.2%}</td>"
        f"<td>{e(', '.join(f'{k} {v}' for k, v in row['by_source'].items()) or '-')}</td>"
        f"<td>{'-' if row['max_fraction'] is None else format(row['max_fraction'], '.1%')}</td>"
        f"<td>{e(row['status'])}</td></tr>"
        for r in results for row in r["details"]["splits"])
    return (f"<h2>Contamination</h2><p class='meta'>Items sharing a {d['ngram']}-gram of normalised words (or, "
            f"when shorter, a whole field of at least {d['min_tokens']} words) with "
            f"{e(', '.join(d['sources']))}.</p><table><tr><th>config</th><th>split</th><th>items</th>"
            f"<th>contaminated</th><th>rate</th><th>by source</th><th>max</th><th>status</th></tr>{rows}</table>")
