"""The verdict-first summary of a validation report, one source for its three readers.

The HTML report's first screen, the terminal (``validate`` / ``audit`` without ``-v``) and
``--summary markdown`` (a CI job's step summary) show the same thing, in this order:

1. the dataset, its version and the gate verdict;
2. the counts by status (fail, warn, acknowledged, pass, stat, skip): an acknowledged warning
   is not counted as a warning (``validation/acknowledge.py``);
3. the *new* findings (failures, then warnings the dataset's declarations do not explain),
   each with what to do;
4. the acknowledged findings, each with where it is declared.

A finding is a warning or failure of one check on one config (``validation/check.py``).
Findings of one check with one status group into one line with a count ("unique_ids in 22
configs: ids repeat across splits (100 each)"), so a by-design warning repeated over every
config takes one line, and the informative ones are not pushed off the screen.

Nothing is cut: the terminal wraps a line to its width, and a pipe (a CI log) gets whole lines.
"""

from __future__ import annotations

import textwrap
from dataclasses import dataclass
from typing import Any

#: statuses in the order the counts are shown
COUNT_ORDER = ("fail", "warn", "acknowledged", "pass", "stat", "skip")
#: failures first, then warnings; nothing else is an item
ITEM_RANK = {"fail": 0, "warn": 1}
#: terminal lines ``validate`` may take when nothing is new: one 80x24 screen, with the prompt
SCREEN_LINES = 23
#: new finding groups the terminal shows (then "+N more")
MAX_NEW = 20


@dataclass(frozen=True)
class Item:
    """One failure or warning of a report: a finding."""

    status: str
    check: str
    config: str | None
    summary: str
    anchor: str  # the id of its section in the HTML page
    why: str = ""
    todo: str = ""
    topic: str = ""
    figure: Any = None
    split: str | None = None
    #: ``{"reason", "source"}`` when the dataset's declarations explain it
    acknowledged: dict[str, Any] | None = None

    @property
    def where(self) -> str:
        return " ".join(p for p in (self.check, self.config, self.split) if p)

    @property
    def id(self) -> str:
        return "/".join(p for p in (self.check, self.config, self.split) if p)


@dataclass(frozen=True)
class Group:
    """The findings of one check with one status, new or acknowledged: one line."""

    items: tuple[Item, ...]

    @property
    def first(self) -> Item:
        return self.items[0]

    @property
    def status(self) -> str:
        return self.first.status

    @property
    def check(self) -> str:
        return self.first.check

    @property
    def acknowledged(self) -> bool:
        return bool(self.first.acknowledged)

    @property
    def sources(self) -> list[str]:
        return list(dict.fromkeys(str((it.acknowledged or {}).get("source", "")).split(":")[0]
                                  for it in self.items if it.acknowledged))

    def statement(self) -> str:
        """One finding's ``where: summary``; several: the check, how many, what they share and
        the range of their figures."""
        if len(self.items) == 1:
            return f"{self.first.where}: {self.first.summary}"
        configs = list(dict.fromkeys(it.config for it in self.items if it.config))
        many = f"{len(configs)} configs" if len(configs) == len(self.items) else f"{len(self.items)} findings"
        what = self.first.topic or self.first.summary
        figures = [it.figure for it in self.items if isinstance(it.figure, (int, float))]
        rng = ""
        if len(figures) == len(self.items):
            lo, hi = min(figures), max(figures)
            rng = f" ({_num(lo)} each)" if lo == hi else f" ({_num(lo)} to {_num(hi)})"
        return f"{self.check} in {many}: {what}{rng}"


def _num(v: float) -> str:
    return f"{v:,}" if isinstance(v, int) or float(v).is_integer() else f"{v:.3g}"


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
        (ITEM_RANK[r["status"]], i, Item(
            r["status"], r["check"], r.get("config"), " ".join(str(r["summary"]).split()), f"r{i}",
            why=r.get("why") or "", todo=r.get("todo") or "", topic=r.get("topic") or "",
            figure=r.get("figure"), split=r.get("split"), acknowledged=r.get("acknowledged")))
        for i, r in enumerate(report.get("results") or [])
        if r.get("status") in ITEM_RANK
    ]
    return [it for _, _, it in sorted(found, key=lambda t: (t[0], t[1]))]


def new_items(report: dict[str, Any]) -> list[Item]:
    return [it for it in items(report) if not it.acknowledged]


def acknowledged_items(report: dict[str, Any]) -> list[Item]:
    return [it for it in items(report) if it.acknowledged]


def groups(its: list[Item]) -> list[Group]:
    """One group per (status, check, acknowledged or not), in the order of first appearance."""
    by: dict[tuple[str, str, bool], list[Item]] = {}
    for it in its:
        by.setdefault((it.status, it.check, bool(it.acknowledged)), []).append(it)
    return [Group(tuple(v)) for v in by.values()]


def headline(report: dict[str, Any], title: str | None = None) -> str:
    """``xcopa 1.1.0: gate passed (0 fail, 0 warn, 25 acknowledged, 80 pass, 40 stat, 3 skip)``."""
    title = title or f"{report['name']} {report['version']}"
    return f"{title}: {verdict(report)} ({counts_text(report)})"


# ------------------------------------------------------------------ terminal

#: a terminal line: its text and a rich style ("" for none)
Line = tuple[str, str]
_STYLE = {"fail": "bold red", "warn": "yellow"}


def wrap(text: str, style: str, width: int | None, indent: int) -> list[Line]:
    """``text`` whole: wrapped to ``width`` with a hanging indent, or one line when None."""
    lead = len(text) - len(text.lstrip(" "))
    text = " " * lead + " ".join(text.split())
    if width is None:
        return [(text, style)]
    return [(ln, style) for ln in textwrap.wrap(text, max(width, 20), subsequent_indent=" " * indent,
                                                break_on_hyphens=False)] or [("", style)]


def terminal(report: dict[str, Any], *, title: str | None = None, width: int | None = None,
             report_path: str | None = None, max_lines: int = SCREEN_LINES) -> list[Line]:
    """What ``validate`` prints: the headline, the new findings (each group with what to do),
    the acknowledged ones (one line per check), the notes, the report's path.

    ``width``: the terminal's width (lines wrap to it); None in a pipe (whole lines). Nothing is
    cut; when nothing is new the whole fits ``max_lines`` (an 80x24 screen), the acknowledged
    lines giving way to a count of those not shown.
    """
    passed = bool(report.get("passed"))
    head = wrap(headline(report, title), "green" if passed else "bold red", width, 2)
    body: list[Line] = []
    new = groups(new_items(report))
    for g in new[:MAX_NEW]:
        body += wrap(f"{g.status:<4} {g.statement()}", _STYLE.get(g.status, ""), width, 5)
        if g.first.todo:
            body += wrap(f"     to do: {g.first.todo}", "", width, 11)
    if len(new) > MAX_NEW:
        body += wrap(f"... {len(new) - MAX_NEW} more new findings (--verbose, or the report)", "dim", width, 4)
    if not new:
        body += [("nothing new", "green")]
    tail: list[Line] = []
    notes = [str(n) for n in report.get("notes") or []]
    for note in notes[:3]:
        tail += wrap(note, "dim", width, 2)
    if len(notes) > 3:
        tail += [(f"... {len(notes) - 3} more notes (--verbose)", "dim")]
    shown = len(items(report))
    rest = len(report.get("results") or []) - shown
    if rest:
        tail += wrap(f"{rest} passing/descriptive results not shown (--verbose, or the report)", "dim", width, 2)
    if report_path:
        tail += [(f"report: {report_path}", "")]
    acked = groups(acknowledged_items(report))
    ack_lines: list[list[Line]] = []
    for g in acked:
        src = ", ".join(g.sources)
        ack_lines.append(wrap(f"ack  {g.statement()} ({src})", "dim", width, 5))
    room = max_lines - len(head) - len(body) - len(tail) - 1  # the "acknowledged" heading
    out = head + body
    if ack_lines:
        out.append((f"acknowledged, not counted as warnings ({len(acknowledged_items(report))}):", ""))
        taken = 0
        for k, lines in enumerate(ack_lines):
            left = len(ack_lines) - k
            need = len(lines) + (1 if left > 1 else 0)  # keep a line for "... N more" unless last
            if taken + need > room:
                more = sum(len(g.items) for g in acked[k:])
                out += wrap(f"... {more} more acknowledged in {left} checks (--verbose, or the report)", "dim",
                             width, 4)
                break
            out += lines
            taken += len(lines)
    return out + tail


# ------------------------------------------------------------------ markdown

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
    new = groups(new_items(report))
    if new:
        lines += ["| status | check | finding | what to do |", "|---|---|---|---|"]
        for g in new[:max_items]:
            check = f"[{_md_cell(g.check)}](validation.html#{g.first.anchor})"
            lines.append(f"| {g.status} | {check} | {_md_cell(g.statement())} | {_md_cell(g.first.todo)} |")
        if len(new) > max_items:
            lines.append(f"\n{len(new) - max_items} more new findings: see the report.")
    else:
        lines.append("Nothing new: no failures and no unacknowledged warnings.")
    acked = groups(acknowledged_items(report))
    if acked:
        lines += ["", f"Acknowledged ({sum(len(g.items) for g in acked)}, not counted as warnings):", ""]
        lines += [f"- {_md_cell(g.statement())} ({_md_cell(', '.join(g.sources))})" for g in acked[:max_items]]
    for note in report.get("notes") or []:
        lines.append(f"\n> {_md_cell(str(note))}")
    if html_path:
        lines.append(f"\nFull report: `{html_path}`")
    return "\n".join(lines) + "\n"


__all__ = ["COUNT_ORDER", "Group", "Item", "Line", "acknowledged_items", "counts", "counts_text", "groups",
           "headline", "items", "markdown", "new_items", "terminal", "verdict", "wrap"]
