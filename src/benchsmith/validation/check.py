"""The Check contract every validation check follows.

A check looks at a :class:`benchsmith.release.Release` and returns a
:class:`CheckResult` (status pass / warn / fail, metrics, details).

Statistics are not dressed as checks: a descriptive result (a label distribution,
lengths, top words, a cheap baseline's score) has status ``stat`` and cannot fail or
warn; a *check* is something that can fail or warn, and its test shows both.
``skip`` says a check could not run here (and why). Generic
checks register themselves with :func:`register_check`; a builder adds its
dataset-specific checks through ``Builder.checks()``.

A warning or failure is a *finding* people act on: its id is (check, config, split), its
severity the status, its statement the ``summary`` with its figure, and it carries ``why`` (what
the finding means for a user of the data) and ``todo`` (what the maintainer does: fix the
builder, declare it where this check reads declarations, or acknowledge it). Each check says
both as class attributes, specific to itself; a result may override them. A finding the
dataset's declarations explain (an ``acknowledged.yaml`` entry, a ``discrepancy:`` in
``published.yaml``, a ``known_artifacts.yaml`` artifact) carries ``acknowledged`` (the reason
and where it is declared): it is listed, never hidden, and is not counted as a warning
(``benchsmith.validation.acknowledge``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from enum import Enum
from typing import TYPE_CHECKING, Any, ClassVar

if TYPE_CHECKING:
    from benchsmith.release import Release


class Status(str, Enum):
    PASS = "pass"
    WARN = "warn"
    FAIL = "fail"
    SKIP = "skip"
    STAT = "stat"

    def __str__(self) -> str:
        return self.value


@dataclass
class CheckResult:
    """What one check found.

    ``metrics`` hold numbers worth tracking over versions (JSON-serialisable);
    ``details`` hold anything a person needs to act (offending ids, tables).
    ``figures`` are optional chart specs the HTML report draws as SVG (``validation/charts.py``).
    """

    check: str
    family: str
    status: Status
    summary: str
    metrics: dict[str, Any] = field(default_factory=dict)
    details: dict[str, Any] = field(default_factory=dict)
    config: str | None = None
    #: plot specs for the HTML report (see ``benchsmith.validation.report``); kept
    #: out of the card, and small: pre-aggregated counts, never raw rows.
    figures: list[dict[str, Any]] = field(default_factory=list)
    #: the split the finding concerns, when one (the id is check, config, split)
    split: str | None = None
    #: a warning's or failure's meaning for a user of the data, and what the maintainer does
    why: str = ""
    todo: str = ""
    #: what several findings of this check have in common, for one grouped line
    topic: str = ""
    #: the finding's headline number (``metrics[Check.figure_metric]``): an acknowledgement may
    #: hold for this value only, so a changed figure is a new finding
    figure: Any = None
    #: ``{"reason", "source"}`` when the dataset's declarations explain this finding
    acknowledged: dict[str, Any] | None = None

    @property
    def finding_id(self) -> str:
        """``check/config/split`` (the parts that apply)."""
        return "/".join(p for p in (self.check, self.config, self.split) if p)

    @property
    def is_new(self) -> bool:
        """A warning or failure not explained by the dataset's declarations."""
        return self.status in (Status.WARN, Status.FAIL) and not self.acknowledged

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["status"] = self.status.value
        return d


class Check:
    """Base class: subclasses set ``name`` and ``family`` and implement ``run``."""

    name: ClassVar[str]
    family: ClassVar[str]  # integrity | distribution | leakage | artifacts | fidelity | consistency | drift
    #: True when the results depend only on the release's data files and ``release.json``, the
    #: code and the check's parameters: then ``validate`` may reuse them from an earlier run
    #: (``benchsmith.validation.result_cache``)
    cacheable: ClassVar[bool] = False
    #: True when the check may run in a worker process beside the others
    #: (``benchsmith.validation.runner``): it shares no in-process state a later check reads, and
    #: its own cost (scikit-learn's import and fits) is worth a process of its own
    concurrent: ClassVar[bool] = False
    #: True when the check may run in either process (``benchsmith.validation.runner``): it reads
    #: no in-process memo that another check fills or reads (the token columns, a builder's
    #: statistics), so whichever process is idle first takes it
    portable: ClassVar[bool] = False
    #: relative cost of a portable check (CPU seconds on ComVE, roughly): the idle process takes
    #: the costliest first, so the two finish close together
    cost: ClassVar[float] = 0.1
    #: portable checks of one group run in the same process, one after the other (the runner
    #: queues a group as one item, at its summed cost): they share an in-process memo that no
    #: other check reads (``exact_duplicates`` and ``near_duplicates``: each split's normalised content)
    group: ClassVar[str | None] = None
    #: a warning's or failure's meaning for users of the data and what to do about it, specific
    #: to the check (see the module docstring); ``topic`` names what its findings share, for the
    #: grouped line ("ids repeat across splits"), and ``figure_metric`` the metric that is a
    #: finding's headline figure
    why: ClassVar[str] = ""
    todo: ClassVar[str] = ""
    topic: ClassVar[str] = ""
    figure_metric: ClassVar[str | None] = None

    def run(self, release: Release) -> list[CheckResult]:
        raise NotImplementedError

    def imports(self, release: Release) -> tuple[str, ...]:
        """Modules a ``concurrent`` check will import when it runs on ``release`` (told from the
        release's metadata, cheaply): its worker imports them while validate's process runs
        :meth:`prepare` (``benchsmith.validation.runner``; default: none)."""
        return ()

    def prepare(self, release: Release) -> None:
        """Work a ``concurrent`` check shares with the checks of validate's own process, done
        there (token columns, sent to the worker) while the worker imports :meth:`imports`
        (default: nothing)."""

    def result(self, status: Status, summary: str, **kw: Any) -> CheckResult:
        """A result of this check; a warning or failure gets the check's ``why``, ``todo``,
        ``topic`` and figure unless ``kw`` gives its own."""
        r = CheckResult(check=self.name, family=self.family, status=status, summary=summary, **kw)
        if status in (Status.WARN, Status.FAIL):
            r.why = r.why or self.why
            r.todo = r.todo or self.todo
            r.topic = r.topic or self.topic
            if r.figure is None and self.figure_metric:
                r.figure = r.metrics.get(self.figure_metric)
        return r

    def stat(self, summary: str, **kw: Any) -> CheckResult:
        """A descriptive result: measured, reported, never a verdict."""
        return self.result(Status.STAT, summary, **kw)


_CHECKS: dict[str, type[Check]] = {}


def register_check(cls: type[Check]) -> type[Check]:
    """Class decorator: run this check on every release."""
    _CHECKS[cls.name] = cls
    return cls


def registered_checks() -> dict[str, type[Check]]:
    return dict(_CHECKS)


CheckFactory = Callable[[], Check]
