"""Fidelity: the builder's published figures, checked against the release.

One result per figure of the builder's ``published.yaml`` (an
:class:`benchsmith.expectation.Expectation`): both numbers are shown (``published``
and ``measured``, with the source). A mismatch beyond the tolerance fails, unless
the figure names a known ``discrepancy``: then it warns and the result carries that
text (the card lists it). A figure that ``needs`` what this release lacks (e.g. the
CoGnition train split) is a skip with that text; so is a figure about a split the
build skipped (``--skip-missing``). A figure whose ``measure`` crashes is a failure
naming the error: a broken figure must not pass silently.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from benchsmith.errors import ConfigError
from benchsmith.validation.check import Check, CheckResult, Status

if TYPE_CHECKING:
    from benchsmith.release import Release


def _fmt(v: Any) -> str:
    if isinstance(v, float):
        return f"{v:.4g}"
    if isinstance(v, int):
        return f"{v:,}"
    return repr(v) if isinstance(v, str) else str(v)


class FidelityCheck(Check):
    name = "fidelity"
    family = "fidelity"
    topic = 'published figures not reproduced'
    why = ('the release differs from what the paper describes: scores on it are not comparable with '
        "the paper's")
    todo = ('fix the builder; when the difference is understood, add a `discrepancy:` saying why to '
        "the figure in the builder's published.yaml")
    #: a measure reads the release (and installed packages: lang2vec's URIEL) only, by contract of
    #: ``published.yaml``'s measures; a figure that needs more is a ``needs`` skip
    cacheable = True

    def __init__(self, expectations: Sequence[Any]) -> None:
        self.expectations = list(expectations)

    def cache_params(self) -> list[list[Any]]:
        """The result cache's key part (validation/result_cache.py): each figure as declared, a
        measure by its name (a function has no JSON form; its code is in the cache key)."""
        return [[e.key, e.published, e.reference, e.tolerance, e.description, getattr(e, "discrepancy", None),
                 getattr(e, "needs", None), getattr(e.measure, "__qualname__", repr(e.measure))]
                for e in self.expectations]

    def run(self, release: Release) -> list[CheckResult]:
        return [self._one(release, e) for e in self.expectations]

    def _one(self, release: Release, e: Any) -> CheckResult:
        config = e.key.split("/")[0] if "/" in e.key else None
        if config not in release.info.configs:
            config = None
        base = {"key": e.key, "published": e.published, "reference": e.reference, "tolerance": e.tolerance}
        if getattr(e, "discrepancy", None):
            base["discrepancy"] = e.discrepancy
        if getattr(e, "needs", None):
            return self.result(Status.SKIP, f"{e.key}: published {_fmt(e.published)} ({e.reference}); needs {e.needs}",
                               config=config, metrics={"published": e.published}, details={**base, "needs": e.needs})
        try:
            ok, measured = e.check(release)
        except ConfigError as exc:  # a config or split this build skipped
            return self.result(
                Status.SKIP,
                f"{e.key}: published {_fmt(e.published)}, not measurable in this build ({exc.message})",
                config=config,
                metrics={"published": e.published},
                details=base,
            )
        except Exception as exc:  # noqa: BLE001 - report the broken expectation, do not hide it
            return self.result(
                Status.FAIL,
                f"{e.key}: measuring failed ({type(exc).__name__}: {exc})",
                config=config,
                metrics={"published": e.published},
                details=base,
            )
        tol = f" ± {_fmt(e.tolerance)}" if e.tolerance else ""
        summary = f"{e.key}: published {_fmt(e.published)}{tol}, measured {_fmt(measured)} ({e.reference})"
        metrics: dict[str, Any] = {"published": e.published, "measured": measured}
        if isinstance(measured, (int, float)) and isinstance(e.published, (int, float)):
            metrics["difference"] = measured - e.published
        status = Status.PASS if ok else (Status.WARN if getattr(e, "discrepancy", None) else Status.FAIL)
        # a known discrepancy is the finding's acknowledgement (validation/acknowledge.py), shown
        # with it; the statement stays one line
        return self.result(
            status,
            summary,
            config=config,
            todo=f"fix the builder, or add a `discrepancy:` saying why to figure {e.key} in the builder's "
                 "published.yaml",
            metrics=metrics,
            details={**base, "measured": measured, "description": e.description},
        )
