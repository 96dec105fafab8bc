"""Known artifacts: the partial-input advantages a builder declares, with their evidence.

Artifacts are either absent or declared. A partial-input probe (the cheap options-only /
partial-input regression, ``partial_input``, or a gated model baseline such as
``subtask-b-options-only``) whose gain over chance is large *and* significant fails the gate
(:func:`benchsmith.validation.checks.partial_input.artifact_verdict`), unless the builder
declares it here; then it warns, names the declaration, and the card gets a "Known artifacts"
section (``benchsmith.cards.known_artifacts``). A declared artifact that grows past its
``max_gain`` fails again: the release got worse than what is known.

``known_artifacts.yaml`` beside the builder (``Builder.data_path``, so an out-of-tree builder
ships it in its package)::

    artifacts:
      - id: options-negation-cue             # stable name
        configs: [subtask_b]                 # configs it concerns (shell patterns)
        probes: [partial_input, subtask-b-options-only]   # the check / baseline specs it explains
        max_gain: 0.45                       # known up to this gain over chance (a fraction)
        what: "the correct reason is the one without a negation"
        citation: "Wang et al. (2020), SemEval-2020 Task 4, Section 3.3"   # a paper, quoted where
        measured: "options-only logistic regression +0.427 (76.1% vs 33.3%, 5-fold CV)"  # or ours

Every declaration needs evidence: a ``citation`` (paper, table or section) or our own
``measured`` figure with how it was measured, or both. Unknown keys, a missing field or no
evidence are errors naming the file and the artifact, never a silent waiver.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from benchsmith.errors import ConfigError, ParseError, did_you_mean
from benchsmith.expectation import read_yaml

if TYPE_CHECKING:
    from benchsmith.builder import Builder

FILE = "known_artifacts.yaml"
#: the probe name of the cheap partial-input check (a baseline spec is named by its spec name)
CHEAP_PROBE = "partial_input"


@dataclass(frozen=True)
class KnownArtifact:
    """One declared artifact (see module docstring)."""

    id: str
    configs: tuple[str, ...]
    probes: tuple[str, ...]
    max_gain: float
    what: str
    citation: str = ""
    measured: str = ""

    @property
    def evidence(self) -> str:
        """The citation and our measurement, in one line."""
        return "; ".join(x for x in (self.citation, f"measured: {self.measured}" if self.measured else "") if x)

    def covers(self, probe: str, config: str) -> bool:
        return probe in self.probes and any(fnmatch.fnmatchcase(config, p) for p in self.configs)

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "configs": list(self.configs), "probes": list(self.probes), "max_gain": self.max_gain,
                "what": self.what, "citation": self.citation, "measured": self.measured}


_REQUIRED = ("id", "configs", "probes", "max_gain", "what")
_KEYS = set(_REQUIRED) | {"citation", "measured"}


def _strings(value: Any) -> tuple[str, ...] | None:
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not value or not all(isinstance(v, str) and v for v in value):
        return None
    return tuple(value)


def read_known_artifacts(path: str | Path) -> list[KnownArtifact]:
    """The declarations of ``path`` (``[]`` when the file does not exist)."""

    path = Path(path)
    doc = read_yaml(path)
    if doc is None:
        return []
    if not isinstance(doc, dict) or set(doc) - {"artifacts"} or not isinstance(doc.get("artifacts", []), list):
        raise ParseError("expected a mapping with one `artifacts:` list", path=path, line=1,
                         hint="See benchsmith/validation/known_artifacts.py for the format")
    out: list[KnownArtifact] = []
    seen: set[str] = set()
    for n, row in enumerate(doc.get("artifacts") or [], start=1):
        where = f"artifact #{n}" + (f" ({row.get('id')})" if isinstance(row, dict) and row.get("id") else "")
        if not isinstance(row, dict):
            raise ParseError(f"{where} is not a mapping", path=path)
        unknown = set(row) - _KEYS
        if unknown:
            bad = min(unknown)
            raise ConfigError(f"{path}: {where} has unknown key {bad!r}", hint=did_you_mean(bad, _KEYS))
        missing = [k for k in _REQUIRED if row.get(k) in (None, "", [])]
        if missing:
            raise ConfigError(f"{path}: {where} lacks {', '.join(missing)}",
                              hint=f"Every known artifact needs {', '.join(_REQUIRED)} and its evidence")
        if not (str(row.get("citation") or "").strip() or str(row.get("measured") or "").strip()):
            raise ConfigError(f"{path}: {where} declares no evidence",
                              hint="Add `citation:` (the paper, with its table or section) or `measured:` "
                                   "(our figure and how it was measured)")
        configs, probes = _strings(row["configs"]), _strings(row["probes"])
        if configs is None or probes is None:
            raise ConfigError(f"{path}: {where}: configs and probes must be names or lists of names")
        gain = row["max_gain"]
        if isinstance(gain, bool) or not isinstance(gain, (int, float)) or not 0 < gain <= 1:
            raise ConfigError(f"{path}: {where}: max_gain {gain!r} is not a fraction in (0, 1]",
                              hint="A gain over chance as a fraction: 0.45 for 45 points")
        if row["id"] in seen:
            raise ConfigError(f"{path}: artifact id {row['id']!r} appears twice")
        seen.add(str(row["id"]))
        out.append(KnownArtifact(id=str(row["id"]), configs=configs, probes=probes, max_gain=float(gain),
                                 what=str(row["what"]), citation=str(row.get("citation") or ""),
                                 measured=str(row.get("measured") or "")))
    return out


def declared(builder: Builder | None) -> list[KnownArtifact]:
    """The builder's declarations (``[]`` without a builder or a file)."""
    if builder is None or not hasattr(builder, "data_path"):
        return []
    return read_known_artifacts(builder.data_path(FILE))


def find(known: Sequence[KnownArtifact], probe: str, config: str) -> KnownArtifact | None:
    """The first declaration covering ``probe`` on ``config``."""
    return next((k for k in known if k.covers(probe, config)), None)


__all__ = ["CHEAP_PROBE", "FILE", "KnownArtifact", "declared", "find", "read_known_artifacts"]
