"""Upstream findings: inconsistencies of the ComVE release that need no fix of ours.

An erratum changes data (``errata.tsv``, applied by the core); a finding only records what
upstream is like and what a split keeps and why (e.g. dev.csv's three extra rows). They are
data in ``findings.yaml`` beside the builder::

    findings:
      - id: dev-csv-extra-rows           # stable id (the audit and the card name it)
        what: "..."                      # what upstream is like, with its counts
        evidence: "..."                  # how we know (tests/test_comve_real.py re-derives the counts)
        decision: "..."                  # what the release does about it
        items: ["dev.csv:478", ...]      # optional: the affected rows or ids

``comve_upstream_audit`` reports each one (a ``stat`` result), the card lists them, and the
real-data tests re-derive every count from the raw files. A missing or unknown key is an
error naming the file and line, so a misspelt ``decison`` cannot vanish.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

import yaml

from benchsmith.errors import ParseError, did_you_mean

#: the findings file beside the builder
FINDINGS_PATH = Path(__file__).with_name("findings.yaml")

@dataclass(frozen=True)
class Finding:
    id: str
    what: str
    evidence: str
    decision: str
    items: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "what": self.what, "evidence": self.evidence, "decision": self.decision,
                "items": list(self.items)}


_KEYS = [f.name for f in fields(Finding)]
_REQUIRED = ("id", "what", "evidence", "decision")


def _text(value: Any) -> str:
    return " ".join(str(value).split())


def read_findings(path: str | Path) -> list[Finding]:
    """Every finding of ``path`` in file order (``[]`` when the file does not exist)."""
    path = Path(path)
    if not path.is_file():
        return []
    # libyaml's loader where PyYAML has it: the same documents, ~10x less CPU than the pure-Python
    # one (which took ~0.1 s of a ComVE build, this file being read once per build for the card)
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    text = path.read_text(encoding="utf-8")
    try:
        node = yaml.compose(text, Loader=loader)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        raise ParseError(f"not valid YAML ({getattr(exc, 'problem', exc)})", path=path,
                         line=mark.line + 1 if mark else None) from None
    doc = yaml.load(text, Loader=loader) or {}
    if not isinstance(doc, dict) or set(doc) != {"findings"} or not isinstance(doc["findings"], list):
        raise ParseError("expected a mapping with exactly one key, `findings:` (a list)", path=path, line=1)
    rows = next(v for k, v in node.value if k.value == "findings").value
    out, seen = [], set()
    for row, row_node in zip(doc["findings"], rows):
        line = row_node.start_mark.line + 1
        if not isinstance(row, dict):
            raise ParseError("a finding is not a mapping", path=path, line=line)
        for key in row:
            if key not in _KEYS:
                raise ParseError(f"finding {row.get('id')!r} has unknown key {key!r}", path=path, line=line,
                                 hint=did_you_mean(str(key), _KEYS))
        missing = [k for k in _REQUIRED if not row.get(k)]
        if missing:
            raise ParseError(f"finding {row.get('id')!r} lacks {', '.join(missing)}", path=path, line=line,
                             hint=f"Every finding needs {', '.join(_REQUIRED)}")
        if row["id"] in seen:
            raise ParseError(f"finding id {row['id']!r} appears twice", path=path, line=line)
        seen.add(row["id"])
        items = row.get("items", [])
        if not isinstance(items, list):
            raise ParseError(f"finding {row['id']!r}: items must be a list", path=path, line=line)
        out.append(Finding(str(row["id"]), _text(row["what"]), _text(row["evidence"]), _text(row["decision"]),
                           tuple(str(i) for i in items)))
    return out
