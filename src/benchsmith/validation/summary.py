"""The verdict-first summary of a validation report, one source for its three readers.

The HTML report's first screen, the terminal (``validate`` / ``audit`` without ``-v``) and
``--summary markdown`` (a CI job's step summary) show the same thing, in this order:

1. the dataset, its version and the gate verdict;
2. the counts by status (fail, warn, pass, stat, skip);
3. every failure, then every warning, as one line: status, check, config, summary, with a link
   (``#r<N>``, N the result's index in ``results``) to its section of the HTML page.

A line is the result's ``summary`` whole; each reader shortens it to its width (the terminal
to the console width, with an ellipsis) and the report keeps the full text.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

#: statuses in the order the counts are shown
COUNT_ORDER = ("fail", "warn", "pass", "stat", "skip")
#: failures first, then warnings; nothing else is an item
ITEM_RANK = {"fail": 0, "warn": 1}


@dataclass(frozen=True)
class Item:
    """One failure or warning of a report."""

    status: str
    check: str
    config: str | None
    summary: str
    anchor: str  # the id of its section in the HTML page

    @property
    def where(self) -> str:
        return f"{self.check} {self.config}" if self.config else self.check


def verdict(report: dict[str, Any]) -> str:
    return "gate passed" if report.get("passed") else "gate FAILED"


def counts(report: dict[str, Any]) -> list[tuple[str, int]]:
    s = report.get("summary") or {}
    return [(k, int(s.get(k, 0))) for k in COUNT_ORDER]


def counts_text(report: dict[str, Any]) -> str:
    return ", ".join(f"{n} {k}" for k, n in counts(report))


def items(report: dict[str, Any]) -> list[Item]:
    """Failures then warnings, each in the order the checks ran."""
    found = [
        (ITEM_RANK[r["status"]], i, Item(r["status"], r["check"], r.get("config"), " ".join(str(r["summary"]).split()),
                                          f"r{i}"))
        for i, r in enumerate(report.get("results") or [])
        if r.get("status") in ITEM_RANK
    ]
    return [it for _, _, it in sorted(found, key=lambda t: (t[0], t[1]))]


def headline(report: dict[str, Any], title: str | None = None) -> str:
    """``xcopa 1.1.0: gate passed (0 fail, 25 warn, 80 pass, 40 stat, 3 skip)``."""
    title = title or f"{report['name']} {report['version']}"
    return f"{title}: {verdict(report)} ({counts_text(report)})"


def _md_cell(text: str) -> str:
    return text.replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ")


def markdown(report: dict[str, Any], *, title: str | None = None, html_path: str | None = None,
             max_items: int = 50) -> str:
    """The summary as GitHub-flavoured markdown (a pull request's step summary).

    Each check links to its section as ``validation.html#rN``: relative, so the links work
    where the report sits beside the summary (a CI job's uploaded artifact), where a runner's
    absolute path would not; ``html_path`` (where this run wrote it) is named at the end. At
    most ``max_items`` lines, then a count of the rest: GitHub caps a step summary at 1 MiB.
    """
    title = title or f"{report['name']} {report['version']}"
    mark = "✅" if report.get("passed") else "❌"
    lines = [f"### {mark} {_md_cell(title)}: {verdict(report)}", ""]
    lines.append("| " + " | ".join(k for k, _ in counts(report)) + " |")
    lines.append("|" + "---:|" * len(COUNT_ORDER))
    lines.append("| " + " | ".join(str(n) for _, n in counts(report)) + " |")
    lines.append("")
    its = items(report)
    if its:
        lines += ["| status | check | config | summary |", "|---|---|---|---|"]
        for it in its[:max_items]:
            check = f"[{_md_cell(it.check)}](validation.html#{it.anchor})"
            lines.append(f"| {it.status} | {check} | {_md_cell(it.config or '')} | {_md_cell(it.summary)} |")
        if len(its) > max_items:
            lines.append(f"\n{len(its) - max_items} more failures and warnings: see the report.")
    else:
        lines.append("No failures and no warnings.")
    for note in report.get("notes") or []:
        lines.append(f"\n> {_md_cell(str(note))}")
    if html_path:
        lines.append(f"\nFull report: `{html_path}`")
    return "\n".join(lines) + "\n"


__all__ = ["COUNT_ORDER", "Item", "counts", "counts_text", "headline", "items", "markdown", "verdict"]
