"""Run every check that applies to a release and write the report.

What runs, in report order:

1. the registered generic checks (``validation/checks/``: integrity,
   distribution, leakage, artifact cues), on every release;
2. fidelity: one result per ``builder.expectations()``;
3. the builder's own ``builder.checks()`` (instances or classes of ``Check``);
4. baselines by level: ``none`` (nothing trained), ``cheap`` (default: majority,
   length rules, the options-only / partial-input logistic regression that can
   fail the gate), ``model`` (cheap + MiniLM-backed baselines); the builder's
   ``known_artifacts.yaml`` (``benchsmith.validation.known_artifacts``) is handed to them;
5. drift against the previous release (see ``benchsmith.validation.drift``).

The builder is found with ``get_builder(release.name, release.version)``; a
release whose dataset (or version) no builder knows gets the generic checks only,
and the report notes it. A check that crashes does not abort the run: it becomes a
failed result naming the exception, so one bug cannot hide the other findings and
the gate still stops the release.
"""

from __future__ import annotations

import gc
import time
import traceback
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchsmith.validation.check import Check, CheckResult, Status, registered_checks

from benchsmith import progress
from benchsmith.errors import ConfigError, did_you_mean
from benchsmith.release import Release

BASELINE_LEVELS = ("none", "cheap", "model")
FAMILY_ORDER = ("integrity", "distribution", "leakage", "artifacts")
AUTO: Any = object()  # "look it up" sentinel for builder / previous


@dataclass
class Validation:
    """The outcome of one run: the results, the report written, the builder used."""

    release: Release
    results: list[CheckResult]
    report: dict[str, Any]
    builder: Any | None
    previous: Release | None
    notes: list[str] = field(default_factory=list)
    seconds: float = 0.0
    #: where the reports went: ``<release>/reports``, or beside a published (read-only) release
    report_dir: Path | None = None

    @property
    def passed(self) -> bool:
        return self.report["passed"]


def find_builder(release: Release) -> tuple[Any | None, str | None]:
    """The builder of this release, or (None, why not).

    A registered name is looked up as such; otherwise the manifest's ``builder`` (the dotted
    path of the class that wrote it, e.g. MuCoW's harvest builder for ``mucow-harvest-*``
    releases) is imported when it lies under ``benchsmith.builders``, and its
    ``for_validation(release)`` supplies the checks and figures.
    """
    import importlib

    from benchsmith.builder import Builder, builders, get_builder

    if release.name in builders():
        try:
            return get_builder(release.name, release.version), None
        except ConfigError as exc:
            return None, (f"builder {release.name!r} cannot build version {release.version} ({exc.message}): "
                          "generic checks only")
    dotted = release.info.builder or ""
    module, _, cls_name = dotted.rpartition(".")
    if module.startswith("benchsmith.builders.") and cls_name:
        try:
            cls = getattr(importlib.import_module(module), cls_name)
        except (ImportError, AttributeError):
            cls = None
        if isinstance(cls, type) and issubclass(cls, Builder):
            try:
                return cls.for_validation(release), None
            except ConfigError as exc:
                return None, f"{dotted} cannot validate this release ({exc.message}): generic checks only"
    return None, f"no registered builder for {release.name!r}: generic checks only"


def generic_checks(near_dup_threshold: float | None = None) -> list[Check]:
    """One instance of every registered generic check, in :data:`FAMILY_ORDER`;
    ``near_dup_threshold`` (``--near-dup-threshold``) overrides the configs' metadata."""
    import benchsmith.validation.checks  # noqa: F401  (registers the generic checks)
    from benchsmith.validation.checks.leakage import NearDuplicateCheck

    classes = sorted(
        registered_checks().values(),
        key=lambda c: FAMILY_ORDER.index(c.family) if c.family in FAMILY_ORDER else len(FAMILY_ORDER),
    )
    out: list[Check] = []
    for cls in classes:
        if issubclass(cls, NearDuplicateCheck):  # registered as "near_duplicates"
            out.append(cls(threshold=near_dup_threshold))
        else:
            out.append(cls())
    return out


def check_level(level: str) -> None:
    """ConfigError (with suggestions) unless ``level`` is one of :data:`BASELINE_LEVELS`."""
    if level not in BASELINE_LEVELS:
        raise ConfigError(f"baselines {level!r} is not a level", hint=did_you_mean(level, BASELINE_LEVELS))


def baseline_checks(level: str, model_path: str | Path | None = None) -> list[Check]:
    """The baseline checks of a level (see module docstring, step 4).

    ``cheap`` and ``model`` also report the results ``benchsmith baseline`` saved for the
    release (``RecordedBaselines``: stat results, never a verdict); ``model`` adds the MiniLM
    baselines and runs the builder's declared baselines with a ``gate``
    (``GatedBaselines``, CPU-friendly defaults: ``benchsmith.validation.baselines.checks``),
    whose thresholds can fail the gate. ``model_path`` is the encoder of both.
    """
    check_level(level)
    if level == "none":
        return []
    from benchsmith.validation.baselines.cheap import CheapBaselines
    from benchsmith.validation.baselines.checks import GatedBaselines, RecordedBaselines
    from benchsmith.validation.checks.partial_input import PartialInputCheck

    out: list[Check] = [PartialInputCheck(), CheapBaselines()]
    if level == "model":
        from benchsmith.validation.baselines.model import ModelBaselines

        out += [ModelBaselines(model_path), GatedBaselines(model_path)]
    out.append(RecordedBaselines())
    return out


def builder_checks(builder: Any) -> list[Check]:
    """Fidelity (when the builder declares expectations), then the builder's own checks
    (classes are instantiated)."""
    from benchsmith.validation.fidelity import FidelityCheck

    out: list[Check] = []
    expectations = list(builder.expectations())
    if expectations:
        out.append(FidelityCheck(expectations))
    for c in builder.checks():
        out.append(c() if isinstance(c, type) else c)
    return out


#: ``0`` runs every check in this process (see :func:`run_checks`)
WORKERS_ENV = "BENCHSMITH_VALIDATE_WORKERS"


def run_checks(release: Release, checks: Sequence[Check]) -> list[CheckResult]:
    """Run checks; the results come in the checks' order wherever each ran, and a crash
    becomes a failed result (see module docstring).

    The ``concurrent`` checks (the scikit-learn probes: ``Check.concurrent``) run in one worker
    process while this process runs the others, when this process may use two cores or more,
    fork is available, ``$BENCHSMITH_VALIDATE_WORKERS`` is not ``0`` and some check of this
    process's remains. The worker is forked before the first check, so the probes (scikit-learn's
    import and fits) overlap everything else; it tokenises what it reads again (~1 CPU s on ComVE)
    where a later fork would have inherited the token columns, but measured cold on two quiet cores
    (2026-11-27) the early fork ends XCOPA's validate at 7.0-7.6 s wall against 8.8-10.2 forked
    after the generic checks, ComVE's at 8.0-8.9 against 9.0-9.4. A check the result cache holds
    stays here (a hit costs nothing). The worker sends each check's results back pickled, so they
    are the objects an in-process run returns; if it dies before it answers, its checks run here.
    Only these checks: the others share in-process memos that a second process would compute
    again. Measured in README.md ("validate against build", fifth pass).
    """
    checks = list(checks)
    side = [i for i, c in enumerate(checks) if _concurrent(c)] if _workers_allowed() else []
    if len(side) == len(checks):  # nothing left for this process: no worker
        side = []
    worker = _Worker(release, [checks[k] for k in side]) if side else None
    got: dict[int, list[CheckResult]] = {}
    for i in progress.track(range(len(checks)), f"validate {release.name} {release.version}"):
        if i not in side:
            got[i] = _run_one(release, checks[i])
    if worker is not None:
        got.update(zip(side, worker.results()))
    return [r for i in range(len(checks)) for r in got[i]]


def _run_one(release: Release, check: Check) -> list[CheckResult]:
    try:
        with _gc_paused():
            return list(check.run(release))
    except Exception as exc:  # noqa: BLE001 - reported as a failure, never swallowed
        name, family = getattr(check, "name", type(check).__name__), getattr(check, "family", "unknown")
        return [_crash_result(name, family, exc)]


def _workers_allowed() -> bool:
    import multiprocessing
    import os

    if os.environ.get(WORKERS_ENV, "").strip() == "0":
        return False
    if "fork" not in multiprocessing.get_all_start_methods():  # the worker is a fork (see run_checks)
        return False
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        cores = os.cpu_count() or 1
    return cores >= 2


def _concurrent(check: Check) -> bool:
    from benchsmith.validation.result_cache import CachedCheck, stored

    if isinstance(check, CachedCheck):
        return bool(getattr(check.inner, "concurrent", False)) and not stored(check.key)
    return bool(getattr(check, "concurrent", False))


class _Worker:
    """One forked process running some checks in order (see :func:`run_checks`)."""

    def __init__(self, release: Release, checks: list[Check]) -> None:
        import multiprocessing

        import pyarrow as pa

        # a copy of this process: nothing imported again; multiprocessing flushes stdout and stderr
        # before it forks, so nothing buffered is written twice
        ctx = multiprocessing.get_context("fork")
        # pyarrow imports pandas at its first Python-to-Arrow conversion (~0.5 CPU s), which both
        # processes reach: done once, before the fork (MuCoW's worker 2.1-2.4 -> 1.7-1.9 CPU s)
        pa.scalar(0)
        self.release, self.checks = release, checks
        self._answer, send = ctx.Pipe(duplex=False)
        self._proc = ctx.Process(target=_work, args=(release, checks, send), daemon=True)
        self._proc.start()
        send.close()

    def results(self) -> list[list[CheckResult]]:
        """Each check's results; the checks run here when the worker died without answering."""
        try:
            answer = self._answer.recv()
        except (EOFError, OSError):
            answer = None
        finally:
            self._answer.close()
            self._proc.join()
        if answer is None:
            return [_run_one(self.release, c) for c in self.checks]
        out = []
        for check, (results, hit) in zip(self.checks, answer):
            if hit:  # served from the result cache there: noted here as the run's other hits are
                check.hits.append(check.name)  # type: ignore[attr-defined]
            out.append(results)
        return out


def _work(release: Release, checks: list[Check], conn: Any) -> None:
    progress.set_enabled(False)  # one bar: this process's
    answer = []
    for check in checks:
        hits = getattr(check, "hits", None)
        before = len(hits) if hits is not None else 0
        answer.append((_run_one(release, check), hits is not None and len(hits) > before))
    conn.send(answer)
    conn.close()


def _crash_result(name: str, family: str, exc: BaseException) -> CheckResult:
    last = traceback.format_exception_only(type(exc), exc)[-1].strip()
    return CheckResult(
        check=name,
        family=family,
        status=Status.FAIL,
        summary=f"the check crashed: {last}",
        details={"traceback": "".join(traceback.format_exception(type(exc), exc, exc.__traceback__, limit=8))},
    )


@contextmanager
def _gc_paused() -> Iterator[None]:
    """Pause CPython's cyclic GC while a check runs.

    Checks allocate millions of small acyclic objects (shingle sets, token lists);
    each generation-2 collection rescans all of them, which made near-duplicate
    detection superlinear (11.6 s instead of 4.6 s on 50k rows). Reference counting
    still frees them; only reference cycles wait until the check returns.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def validate(
    release: Release,
    *,
    baselines: str = "cheap",
    builder: Any = AUTO,
    previous: Release | None = AUTO,
    near_dup_threshold: float | None = None,
    model_path: str | Path | None = None,
    write: bool = True,
    extra_checks: Sequence[Check] = (),
    cache: bool = True,
) -> Validation:
    """Validate a release; with ``write`` also write the reports and re-render the card.

    Args:
        baselines: ``none`` | ``cheap`` | ``model``.
        builder: the builder to take expectations and checks from (default: look it up; None: generic only).
        previous: the release to compute drift against (default: the newest older version beside it; None: no drift).
        near_dup_threshold: Jaccard threshold overriding the configs' metadata.
        model_path: encoder folder for ``--baselines model``.
        cache: reuse the stored results of cacheable checks run before on the same data,
            code and parameters (:mod:`benchsmith.validation.result_cache`; ``--no-cache``).
    """
    from benchsmith.validation.drift import DriftCheck, previous_release
    from benchsmith.validation.report import build_report, write_report

    from benchsmith import seal

    start = time.perf_counter()
    checks = generic_checks(near_dup_threshold)  # fail fast on a bad level before any work
    for _ in seal.walk(release.path):  # regular files only (a link is refused before any check reads it)
        pass
    extra = baseline_checks(baselines, model_path)
    notes: list[str] = []
    if builder is AUTO:
        builder, why = find_builder(release)
        if why:
            notes.append(why)
    crashed: list[CheckResult] = []
    if builder is not None:
        try:
            checks += builder_checks(builder)
        except Exception as exc:  # noqa: BLE001 - a broken hook is a failure, not a crash
            crashed.append(_crash_result("builder_checks", "fidelity", exc))
    # the builder's known artifacts turn a failing partial-input probe into a warning (up to the
    # declared gain); a malformed known_artifacts.yaml is the builder's input error (exit 2)
    from benchsmith.validation.known_artifacts import declared

    known = declared(builder)
    for c in extra:
        if hasattr(c, "known_artifacts"):
            c.known_artifacts = known
        if hasattr(c, "builder") and c.builder is None and builder is not None:  # GatedBaselines
            c.builder = builder
    checks += extra
    checks += list(extra_checks)
    if previous is AUTO:
        previous = previous_release(release)
    if previous is not None:
        checks.append(DriftCheck(previous))
    else:
        notes.append("no previous release of this dataset to compare with: no drift results")
    from benchsmith import registry

    published = registry.published_fingerprints(release.path) is not None
    report_dir = registry.detached_reports_dir(release.path) if published else release.reports_dir
    cached: list[str] = []
    if cache:
        from benchsmith.validation.result_cache import cached_checks

        checks = cached_checks(release, checks, cached)
    results = crashed + run_checks(release, checks)
    if cached:
        notes.append(f"{len(cached)} check(s) reused from the result cache (same data, code and parameters): "
                     + ", ".join(cached))
    if not write:
        report = build_report(release, results, baselines=baselines, previous=previous, notes=notes)
        return Validation(release, results, report, builder, previous, notes, time.perf_counter() - start, report_dir)
    # Writing goes under the version's lock, and "published" is decided again under it: a
    # publish that landed while the checks ran makes this a read-only run (issue 29), so a
    # published release is never written again, whatever runs beside it.
    with _version_lock(release):
        published = registry.published_fingerprints(release.path) is not None
        report_dir = registry.detached_reports_dir(release.path) if published else release.reports_dir
        notes += _read_only_note(published, report_dir)
        report = build_report(release, results, baselines=baselines, previous=previous, notes=notes)
        if Release(release.path).fingerprints() != report["fingerprints"]:
            from benchsmith.errors import ReleaseError

            raise ReleaseError(f"{release.name} {release.version} was rebuilt while it was being validated: "
                               "nothing was written", path=release.path, hint="Validate it again")
        if published:
            write_report(release, report, report_dir)
        else:
            write_sealed(release, report, builder)
    return Validation(release, results, report, builder, previous, notes, time.perf_counter() - start, report_dir)


@contextmanager
def _version_lock(release: Release) -> Iterator[None]:
    """The version's lock (``benchsmith.registry.lock``, where publish and build take it). A
    release folder outside any registry whose lock folder cannot be created (its grandparent is
    not writable) is written without it: no publish can take that lock either."""
    import errno

    from benchsmith import registry

    try:
        cm = registry.lock(release.path)
        cm.__enter__()
    except OSError as exc:
        if exc.errno not in (errno.EACCES, errno.EPERM, errno.EROFS):
            raise
        yield
        return
    try:
        yield
    finally:
        cm.__exit__(None, None, None)


def _read_only_note(published: bool, report_dir: Path) -> list[str]:
    return [f"published releases are read-only: the report goes to {report_dir}, the card is unchanged"
            ] if published else []


def write_sealed(release: Release, report: dict[str, Any], builder: Any | None) -> None:
    """Write the report, re-render the card from it, then seal the release as it now is and
    record the seal in ``reports/validation.json`` (the caller holds the version's lock).

    The card reads the report, so the report is written first; the seal comes last so it
    covers the card, croissant.json and lm_eval/ as rendered (see :mod:`benchsmith.seal`)."""
    from benchsmith.cards.card import write_card_files
    from benchsmith.validation.report import write_report, write_report_json

    from benchsmith import seal

    report.pop("seal", None)
    write_report(release, report, release.reports_dir)
    write_card_files(release, builder)
    report["seal"] = seal.compute(release.path).to_dict()
    write_report_json(report, release.reports_dir)
