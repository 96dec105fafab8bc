"""The gate: failed checks stop a release.

``enforce(report)`` raises :class:`~benchsmith.errors.GateError` (exit status 1)
naming every failed check; warnings and skips pass. ``require_passed(release)``
is what ``publish`` calls: the release must carry a report
(``reports/validation.json``) that passed *and* was computed on the data now in
the release (the report's fingerprints equal the manifest's), so editing a
release after validating it cannot slip through.
"""

from __future__ import annotations

import textwrap
from typing import TYPE_CHECKING, Any

from benchsmith.errors import GateError
from benchsmith.seal import read_report

if TYPE_CHECKING:
    from benchsmith.release import Release


def failures(report: dict[str, Any]) -> list[dict[str, Any]]:
    """The report's failed results (warnings and skips never stop a release)."""
    return [r for r in report["results"] if r["status"] == "fail"]


#: the most characters of one failure's summary in the gate's line (a fidelity summary quotes its paper)
SUMMARY_CHARS = 100


def describe(failed: list[dict[str, Any]], limit: int = 3) -> str:
    """One line naming the first ``limit`` failures (check, config, summary cut to
    :data:`SUMMARY_CHARS`) and how many more: the report has the rest."""
    shown = "; ".join(
        f"{r['check']}" + (f" [{r['config']}]" if r.get("config") else "") + f": {_cut(str(r['summary']))}"
        for r in failed[:limit]
    )
    more = f" (+{len(failed) - limit} more)" if len(failed) > limit else ""
    return shown + more


def _cut(text: str) -> str:
    return textwrap.shorten(text, SUMMARY_CHARS, placeholder=" …")


def enforce(report: dict[str, Any], where: Any = None) -> None:
    """Raise GateError if any check failed."""
    failed = failures(report)
    if failed:
        raise GateError(
            f"{len(failed)} check(s) failed for {report['name']} {report['version']}: {describe(failed)}",
            path=where,
            hint=hint(failed),
        )


def hint(failed: list[dict[str, Any]], limit: int = 3) -> str:
    """What to do about the failures: each failing check's own ``todo`` (``validation/check.py``),
    once per check, then where the details are."""
    todos = {r["check"]: r.get("todo") or "" for r in reversed(failed)}
    todos = dict(reversed(list(todos.items())))  # each check's first failure, in report order
    said = [f"{check}: {todo}" for check, todo in todos.items() if todo][:limit]
    if not said:
        return "Read reports/validation.html: fix the builder (see each failure's details)"
    more = f" (+{len(todos) - limit} more checks)" if len(todos) > limit else ""
    return "; ".join(said) + more + ". Details: reports/validation.html"


def require_passed(release: Release) -> dict[str, Any]:
    """The release's report, if it passed and is current; GateError otherwise."""

    path = release.reports_dir / "validation.json"
    report = read_report(release.path)  # never through a link
    if report is None:
        raise GateError(
            "release has not been validated (no reports/validation.json)",
            path=release.path,
            hint=f"Run `benchsmith validate {release.path}` first",
        )
    if not isinstance(report.get("results"), list):
        raise GateError("corrupt validation report: no list of results", path=path,
                        hint=f"Re-run `benchsmith validate {release.path}`")
    if report.get("fingerprints") != release.fingerprints():
        raise GateError(
            "the validation report is stale: it was computed on other data than the release now holds",
            path=path,
            hint=f"Re-run `benchsmith validate {release.path}`",
        )
    enforce(report, where=path)
    return report
