"""Acknowledged findings: the warnings a dataset's maintainers have read and explained.

Like a linter's baseline (ruff's ``noqa``, mypy's ignores), an acknowledgement names a finding
and says why it stays: the finding is still listed in the terminal, the report and the card,
with its reason, but is not counted as a warning, so what ``validate`` shows first is what is
new. Only warnings are acknowledged: a failure is fixed, or declared where its check reads
declarations (a ``discrepancy:`` in ``published.yaml``, an artifact in ``known_artifacts.yaml``,
a field of the config's policy).

Three declarations acknowledge a warning:

* ``acknowledged.yaml`` beside the builder (``Builder.data_path``)::

      acknowledged:
        - check: unique_ids            # a check's name (a typo is an error, with suggestions)
          configs: ["*"]               # shell patterns (default: every config)
          splits: ["*"]                # shell patterns over the result's split (default: any)
          figure: 100                  # optional: holds while the finding's figure is this
          reason: "upstream numbers the items of each split from 1 (README: ...)"

  ``reason`` is required and says why a reader may accept the finding (quote the paper or the
  upstream README where one applies); with ``figure`` a changed figure is a new finding again;
* a ``discrepancy:`` of a ``published.yaml`` figure (the fidelity result carries it);
* a ``known_artifacts.yaml`` artifact (the partial-input result carries it).

An acknowledgement that matches no warning is reported as a note (stale: remove it).
"""

from __future__ import annotations

import fnmatch
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml

from benchsmith.errors import ConfigError, ParseError, did_you_mean
from benchsmith.validation.check import Check, CheckResult, Status

if TYPE_CHECKING:
    from benchsmith.builder import Builder

FILE = "acknowledged.yaml"
_KEYS = {"check", "configs", "splits", "figure", "reason"}


@dataclass(frozen=True)
class Acknowledgement:
    """One entry of ``acknowledged.yaml`` (see module docstring)."""

    check: str
    reason: str
    configs: tuple[str, ...] = ("*",)
    splits: tuple[str, ...] = ("*",)
    figure: Any = None
    source: str = ""  # "acknowledged.yaml:LINE"

    def matches(self, r: CheckResult) -> bool:
        """Same check, config and split (patterns); the figure is compared by :meth:`holds_for`."""
        return (r.check == self.check
                and any(fnmatch.fnmatchcase(r.config or "", p) for p in self.configs)
                and any(fnmatch.fnmatchcase(r.split or "", p) for p in self.splits))

    def holds_for(self, r: CheckResult) -> bool:
        if self.figure is None:
            return True
        if isinstance(self.figure, (int, float)) and isinstance(r.figure, (int, float)):
            return math.isclose(float(self.figure), float(r.figure), rel_tol=1e-9, abs_tol=1e-12)
        return bool(self.figure == r.figure)

    @property
    def pattern(self) -> str:
        where = ",".join(self.configs) + ("/" + ",".join(self.splits) if self.splits != ("*",) else "")
        return f"{self.check} {where}" + (f" (figure {self.figure})" if self.figure is not None else "")


def check_names(extra: Iterable[str] = ()) -> set[str]:
    """Every check name known here: the generic checks, fidelity, drift, the baselines,
    contamination, every imported builder check class, and ``extra`` (a builder's checks)."""
    import benchsmith.validation.baselines.cheap
    import benchsmith.validation.baselines.checks
    import benchsmith.validation.baselines.model
    import benchsmith.validation.checks
    import benchsmith.validation.contamination.check
    import benchsmith.validation.drift
    import benchsmith.validation.fidelity  # noqa: F401

    names: set[str] = set()
    todo: list[type[Check]] = [Check]
    while todo:
        cls = todo.pop()
        todo.extend(cls.__subclasses__())
        name = getattr(cls, "name", None)
        if isinstance(name, str):
            names.add(name)
    return names | {"release_files", "builder_checks"} | set(extra)


def _patterns(value: Any, key: str, path: Path, line: int) -> tuple[str, ...]:
    if value is None:
        return ("*",)
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not value or not all(isinstance(v, str) and v for v in value):
        raise ConfigError(f"{key} must be a pattern or a list of patterns, not {value!r}", path=path, line=line,
                          hint='e.g. configs: ["*"] or configs: [et, "translation-*"]')
    return tuple(value)


def read_acknowledged(path: str | Path, known: Iterable[str] | None = None) -> list[Acknowledgement]:
    """The acknowledgements of ``path`` (``[]`` when it does not exist); ``known``: the valid
    check names (default :func:`check_names`). Unknown keys, an unknown check, a missing or empty
    reason are errors naming the file and line."""
    path = Path(path)
    if not path.is_file():
        return []
    try:
        root = yaml.compose(path.read_text(encoding="utf-8"), Loader=yaml.SafeLoader)
        doc = yaml.safe_load(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        raise ParseError(f"not valid YAML ({getattr(exc, 'problem', exc)})", path=path,
                         line=mark.line + 1 if mark else None) from None
    if doc is None:
        return []
    if not isinstance(doc, dict) or set(doc) - {"acknowledged"} or not isinstance(doc.get("acknowledged"), list):
        raise ParseError("expected a mapping with one `acknowledged:` list", path=path, line=1,
                         hint="See benchsmith/validation/acknowledge.py for the format")
    seq = next(v for k, v in root.value if k.value == "acknowledged")
    names = set(known) if known is not None else check_names()
    out: list[Acknowledgement] = []
    for node, row in zip(seq.value, doc["acknowledged"]):
        line = node.start_mark.line + 1
        if not isinstance(row, dict):
            raise ParseError("an acknowledgement is a mapping (check, reason, ...)", path=path, line=line)
        unknown = set(row) - _KEYS
        if unknown:
            bad = min(unknown)
            raise ConfigError(f"unknown key {bad!r}", path=path, line=line, hint=did_you_mean(bad, _KEYS))
        check = row.get("check")
        if not isinstance(check, str) or check not in names:
            raise ConfigError(f"{check!r} is not a check", path=path, line=line, hint=did_you_mean(str(check), names))
        reason = row.get("reason")
        if not isinstance(reason, str) or not reason.strip():
            raise ConfigError(f"acknowledging {check} needs a reason", path=path, line=line,
                              hint="Say why a reader may accept the finding: quote the paper or upstream")
        figure = row.get("figure")
        if figure is not None and (isinstance(figure, bool) or not isinstance(figure, (int, float, str))):
            raise ConfigError(f"figure {figure!r} is not a number or a string", path=path, line=line)
        out.append(Acknowledgement(check=check, reason=" ".join(reason.split()),
                                   configs=_patterns(row.get("configs"), "configs", path, line),
                                   splits=_patterns(row.get("splits"), "splits", path, line),
                                   figure=figure, source=f"{path.name}:{line}"))
    return out


def declared(builder: Builder | None, checks: Iterable[str] = ()) -> list[Acknowledgement]:
    """The builder's acknowledgements (``[]`` without a builder or a file); ``checks``: the names
    of the checks this validation runs (the builder's own among them)."""
    if builder is None or not hasattr(builder, "data_path"):
        return []
    return read_acknowledged(builder.data_path(FILE), check_names(checks))


def _declared_by_check(r: CheckResult) -> dict[str, Any] | None:
    """The acknowledgement a result carries from its own check's declarations: a fidelity
    figure's ``discrepancy`` (published.yaml) or a partial-input probe's known artifact."""
    d = r.details or {}
    if d.get("discrepancy"):
        return {"reason": str(d["discrepancy"]), "source": "published.yaml: discrepancy of " + str(d.get("key", ""))}
    art = d.get("known_artifact")
    if isinstance(art, dict) and art.get("id"):
        evidence = "; ".join(x for x in (art.get("citation"), art.get("measured")) if x)
        return {"reason": f"{art.get('what', '')}" + (f" ({evidence})" if evidence else ""),
                "source": f"known_artifacts.yaml: {art['id']}"}
    return None


def apply(results: Sequence[CheckResult], acks: Sequence[Acknowledgement]) -> tuple[list[CheckResult], list[str]]:
    """The results with each explained warning marked ``acknowledged``, and notes: an
    acknowledgement whose figure no longer holds (the finding is new again), one that matches
    nothing (stale)."""
    used: set[int] = set()
    changed: dict[int, list[str]] = {}
    out: list[CheckResult] = []
    for r in results:
        if r.status != Status.WARN:
            out.append(r)
            continue
        ack = _declared_by_check(r)
        if ack is None:
            for k, a in enumerate(acks):
                if not a.matches(r):
                    continue
                if a.holds_for(r):
                    used.add(k)
                    ack = {"reason": a.reason, "source": a.source}
                    if a.figure is not None:
                        ack["figure"] = a.figure
                    break
                changed.setdefault(k, []).append(r.finding_id + f" ({r.figure})")
        out.append(replace(r, acknowledged=ack) if ack else r)
    notes = []
    for k, a in enumerate(acks):
        if k in used:
            continue
        if k in changed:
            notes.append(f"{a.source}: acknowledged {a.pattern}, but the figure changed: "
                         f"{', '.join(changed[k][:3])} now; a new finding until it is acknowledged again")
        else:
            notes.append(f"{a.source}: acknowledgement {a.pattern} matches no warning: remove it")
    return out, notes


__all__ = ["FILE", "Acknowledgement", "apply", "check_names", "declared", "read_acknowledged"]
