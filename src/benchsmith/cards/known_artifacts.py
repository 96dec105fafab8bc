"""The card's "Known artifacts" section: what the builder declares, and what this release measured.

A builder declares its known partial-input artifacts in ``known_artifacts.yaml``
(:mod:`benchsmith.validation.known_artifacts`); the gate warns on them instead of failing. The
card says so plainly, so a user learns about the shortcut before evaluating on the data: one
entry per declaration with its evidence, and the figures this release's validation report
measured that the declaration explains. Without declarations there is no section (an
undeclared large artifact fails the gate instead).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from benchsmith.validation.known_artifacts import declared

if TYPE_CHECKING:
    from benchsmith.builder import Builder

HEADING = "Known artifacts"


def _measured(report: Mapping[str, Any] | None) -> dict[str, list[str]]:
    """``{artifact id: ["probe config/split: accuracy vs chance (gain, n)", ...]}`` from the report."""
    out: dict[str, list[str]] = {}
    for r in (report or {}).get("results") or []:
        details = r.get("details") or {}
        rows = []
        if details.get("known_artifact"):
            m = r.get("metrics") or {}
            rows.append((details["known_artifact"], f"{r['check']} on {r.get('config')}", m))
        for c in ((details.get("gate") or {}).get("checks") or []):
            if c.get("known_artifact"):
                name = (details.get("table") or [{}])[0].get("baseline", r["check"])
                rows.append((c["known_artifact"], f"{name} on {c['config']}/{c['split']}", c))
        for known, where, m in rows:
            if m.get("accuracy") is None:
                continue
            line = (f"{where}: {m['accuracy']:.1%} vs chance {m['chance']:.1%} (gain {m['gain']:+.1%}, "
                    f"n={m['n']:,})")
            out.setdefault(known["id"], []).append(line)
    return out


def _declared(builder: Builder | None, report: Mapping[str, Any] | None) -> list[dict[str, Any]]:
    if builder is not None:
        return [k.to_dict() for k in declared(builder)]
    seen: dict[str, dict[str, Any]] = {}  # no builder: the declarations the report carries
    for r in (report or {}).get("results") or []:
        details = r.get("details") or {}
        for k in [details.get("known_artifact")] + [c.get("known_artifact") for c in
                                                    (details.get("gate") or {}).get("checks") or []]:
            if isinstance(k, dict) and k.get("id"):
                seen.setdefault(k["id"], k)
    return list(seen.values())


def section(builder: Builder | None, report: Mapping[str, Any] | None) -> dict[str, str]:
    """``{"Known artifacts": markdown}``, or ``{}`` when nothing is declared."""
    known = _declared(builder, report)
    if not known:
        return {}
    measured = _measured(report)
    lines = [
        ("Shortcuts this dataset is known to allow: a model that sees only part of the input does far better "
        "than chance. They are properties of the data as upstream made it, declared by the builder with their "
        "evidence (`known_artifacts.yaml`); the validation gate warns on them up to the declared gain and fails "
        "a release where they grow past it. Take them into account when reading a model's score."),
        "",
    ]
    for k in known:
        lines.append(f"- **{k['id']}** ({', '.join(k['configs'])}; probes: {', '.join(k['probes'])}; "
                     f"known up to {k['max_gain']:+.0%} over chance): {k['what']}")
        if k.get("citation"):
            lines.append(f"  *Evidence:* {k['citation']}")
        if k.get("measured"):
            lines.append(f"  *Measured:* {k['measured']}")
        for m in measured.get(k["id"], []):
            lines.append(f"  *This release:* {m}")
    return {HEADING: "\n".join(lines)}


__all__ = ["HEADING", "section"]
