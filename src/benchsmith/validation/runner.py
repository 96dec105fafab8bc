"""Run every check that applies to a release and write the report.

What runs, in report order:

1. the registered generic checks (``validation/checks/``: integrity,
   distribution, leakage, artifact cues), on every release;
2. fidelity: one result per ``builder.expectations()``;
3. the builder's own ``builder.checks()`` (instances or classes of ``Check``);
4. baselines by level: ``none`` (nothing trained), ``cheap`` (default: majority,
   length rules, the options-only / partial-input logistic regression and the
   fine-tuned encoder probe on the same partial input, both of which can fail the
   gate: ``validation/baselines/probe.py``), ``model`` (cheap + MiniLM-backed baselines); the builder's
   ``known_artifacts.yaml`` (``benchsmith.validation.known_artifacts``) is handed to them;
5. drift against the previous release (see ``benchsmith.validation.drift``).

The builder is found with ``get_builder(release.name, release.version)``; a
release whose dataset (or version) no builder knows gets the generic checks only,
and the report notes it. A check that crashes does not abort the run: it becomes a
failed result naming the exception, so one bug cannot hide the other findings and
the gate still stops the release.
"""

from __future__ import annotations

import errno
import gc
import importlib
import logging
import multiprocessing
import os
import threading
import time
import traceback
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import benchsmith.validation.checks  # noqa: F401  (registers the generic checks)
from benchsmith import progress, registry, seal
from benchsmith.builder import Builder, get_builder, is_registered
from benchsmith.cards.card import write_card_files
from benchsmith.errors import ConfigError, ReleaseError, did_you_mean
from benchsmith.lifeline import die_with_parent
from benchsmith.release import Release
from benchsmith.validation import acknowledge
from benchsmith.validation.baselines.cheap import CheapBaselines
from benchsmith.validation.baselines.checks import GatedBaselines, RecordedBaselines
from benchsmith.validation.baselines.model import ModelBaselines
from benchsmith.validation.baselines.probe import FineTunedProbe
from benchsmith.validation.check import Check, CheckResult, Status, registered_checks
from benchsmith.validation.checks.leakage import NearDuplicateCheck
from benchsmith.validation.checks.partial_input import PartialInputCheck
from benchsmith.validation.dataview import export_tokens, import_tokens
from benchsmith.validation.drift import DriftCheck, previous_release
from benchsmith.validation.fidelity import FidelityCheck
from benchsmith.validation.known_artifacts import declared
from benchsmith.validation.report import build_report, write_report, write_report_json
from benchsmith.validation.result_cache import CachedCheck, cached_checks, stored

log = logging.getLogger(__name__)
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
    if is_registered(release.name):
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

    ``cheap`` and ``model`` run both partial-input probes (bag-of-words and fine-tuned; the
    latter skips without the ``models`` extra) and also report the results ``benchsmith baseline`` saved for the
    release (``RecordedBaselines``: stat results, never a verdict); ``model`` adds the MiniLM
    baselines and runs the builder's declared baselines with a ``gate``
    (``GatedBaselines``, CPU-friendly defaults: ``benchsmith.validation.baselines.checks``),
    whose thresholds can fail the gate. ``model_path`` is the encoder of all of them.
    """
    check_level(level)
    if level == "none":
        return []

    out: list[Check] = [PartialInputCheck(), FineTunedProbe(model_path, cpu=level == "model"), CheapBaselines()]
    if level == "model":
        out += [ModelBaselines(model_path), GatedBaselines(model_path)]
    out.append(RecordedBaselines())
    return out


def builder_checks(builder: Any) -> list[Check]:
    """Fidelity (when the builder declares expectations), then the builder's own checks
    (classes are instantiated)."""
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

    On two cores or more (fork available, ``$BENCHSMITH_VALIDATE_WORKERS`` not ``0``) one worker
    process is forked before the first check and the checks are shared between it and this
    process (:func:`plan`):

    * the ``concurrent`` checks (the scikit-learn probes: their import and fits) run in the
      worker, first. The worker imports what they declare (``Check.imports``: scikit-learn)
      while this process does the work they share with its own checks (``Check.prepare``:
      tokenising the fields the probe reads) and sends it the result
      (:func:`benchsmith.validation.dataview.export_tokens`, pickled through a pipe), so neither
      waits for the other and nothing is tokenised twice;
    * the ``portable`` checks (near and exact duplicates, unique ids, empty fields, fingerprints:
      no in-process memo shared with another check) are a queue that either process takes from
      when idle, the costliest first (``Check.cost``): this process after its own checks, the
      worker after its probes, so the two finish close together whatever the load; the checks of
      one ``Check.group`` are one item of that queue, run by one process one after the other
      (near and exact duplicates share each split's normalised content there);
    * every other check runs here, in order (they share token columns and builder statistics).

    A check the result cache holds stays here (a hit costs nothing). The worker sends its results
    back pickled, so they are the objects an in-process run returns; if it dies before it answers,
    every check it took runs here.
    """
    checks = list(checks)
    side, shared = plan(checks) if _workers_allowed() else ([], [])
    worker: _Worker | None = None
    if side or shared:
        worker = _Worker(release, checks, side, shared)
        for k in side:
            _prepare(release, checks[k])
        worker.prepared()
    away = set(side) | set(shared)
    mine = [i for i in range(len(checks)) if i not in away]

    def order() -> Iterator[int]:
        yield from mine
        while worker is not None and (k := worker.claim()) is not None:
            yield from worker.group(k)

    got: dict[int, list[CheckResult]] = {}
    for i in progress.track(order(), f"validate {release.name} {release.version}", total=len(checks)):
        got[i] = _run_one(release, checks[i])
    if worker is not None:
        got.update(worker.results(done=got))
    return [r for i in range(len(checks)) for r in got[i]]


#: fork a worker for portable checks alone (no probe to run) only when they are worth it:
#: their summed ``Check.cost`` (ComVE's near and exact duplicates and unique ids: ~2)
WORKER_MIN_COST = 1.0


def plan(checks: Sequence[Check]) -> tuple[list[int], list[int]]:
    """(the checks the worker runs first, the portable queue, costliest first), as indices;
    ``([], [])``: no worker (nothing worth a process, or nothing left for this one). The checks of
    one ``Check.group`` sit together in the queue, in check order, at the group's summed cost
    (:func:`groups` cuts the queue into the items a process takes)."""
    side = [i for i, c in enumerate(checks) if _flag(c, "concurrent")]
    portable = [i for i, c in enumerate(checks) if i not in side and _flag(c, "portable")]
    cost = {i: float(getattr(_inner(checks[i]), "cost", 0.0)) for i in portable}
    total: dict[Any, float] = {}
    for i in portable:
        total[_group(checks, i)] = total.get(_group(checks, i), 0.0) + cost[i]
    first: dict[Any, int] = {}
    for i in portable:
        first.setdefault(_group(checks, i), i)
    shared = sorted(portable, key=lambda i: (-total[_group(checks, i)], first[_group(checks, i)], i))
    if len(side) == len(checks):  # nothing left for this process: no worker
        return [], []
    if not side and sum(cost.values()) < WORKER_MIN_COST:
        return [], []
    return side, shared


def _group(checks: Sequence[Check], i: int) -> Any:
    """The queue item check ``i`` belongs to: its ``Check.group``, or itself alone."""
    name = getattr(_inner(checks[i]), "group", None)
    return ("group", name) if name else ("check", i)


def groups(checks: Sequence[Check], shared: Sequence[int]) -> list[list[int]]:
    """The portable queue of :func:`plan` as the items a process takes: one group (or one check)
    each, in queue order."""
    out: list[list[int]] = []
    for i in shared:
        if out and _group(checks, out[-1][0]) == _group(checks, i):
            out[-1].append(i)
        else:
            out.append([i])
    return out


def _run_one(release: Release, check: Check) -> list[CheckResult]:
    try:
        with _gc_paused():
            return list(check.run(release))
    except Exception as exc:  # noqa: BLE001 - reported as a failure, never swallowed
        name, family = getattr(check, "name", type(check).__name__), getattr(check, "family", "unknown")
        return [_crash_result(name, family, exc)]


def _workers_allowed() -> bool:
    if os.environ.get(WORKERS_ENV, "").strip() == "0":
        return False
    if "fork" not in multiprocessing.get_all_start_methods():  # the worker is a fork (see run_checks)
        return False
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        cores = os.cpu_count() or 1
    return cores >= 2


def _inner(check: Check) -> Check:
    return check.inner if isinstance(check, CachedCheck) else check


def _flag(check: Check, attr: str) -> bool:
    """``check.<attr>`` (``concurrent`` / ``portable``), false for a result the cache holds."""
    if isinstance(check, CachedCheck):
        return bool(getattr(check.inner, attr, False)) and not stored(check.key)
    return bool(getattr(check, attr, False))


def _imports(release: Release, check: Check) -> tuple[str, ...]:
    """``Check.imports``; none when it fails (the check's own run reports the error)."""
    imports = getattr(_inner(check), "imports", None)
    try:
        return tuple(imports(release)) if imports is not None else ()
    except Exception:  # noqa: BLE001 - the check meets the same error in its run and reports it
        return ()


def _prepare(release: Release, check: Check) -> None:
    """``Check.prepare`` before the fork; a failure there is left for the check's own run to report."""
    prepare = getattr(_inner(check), "prepare", None)
    if prepare is None:
        return
    try:
        with _gc_paused():
            prepare(release)
    except Exception as exc:  # noqa: BLE001 - the check meets the same error in its run and reports it
        log.debug("%s: preparing failed (%s); its own run reports it", check.name, exc)


def _send_tokens(conn: Any, state: dict[str, Any]) -> None:
    try:
        conn.send(state)
    except (OSError, EOFError):  # the worker is gone: it will not need them
        pass
    finally:
        conn.close()


class _Worker:
    """One forked process: its own checks in order, then portable ones from the shared queue
    (see :func:`run_checks`)."""

    def __init__(self, release: Release, checks: list[Check], side: list[int], shared: list[int]) -> None:
        # a copy of this process: nothing imported again; multiprocessing flushes stdout and stderr
        # before it forks, so nothing buffered is written twice
        ctx = multiprocessing.get_context("fork")
        self.release, self.checks, self.side, self.shared = release, checks, side, shared
        self.items = groups(checks, shared)
        self._next = ctx.Value("i", 0)  # the next queue item to take, shared by both processes
        self._answer, send = ctx.Pipe(duplex=False)
        tokens, self._tokens = ctx.Pipe(duplex=False)
        imports = sorted({m for i in side for m in _imports(release, checks[i])})
        args = (release, checks, side, shared, self._next, send, (tokens, self._tokens), imports, os.getpid())
        self._proc = ctx.Process(target=_work, args=args, daemon=True)
        self._proc.start()
        send.close()
        tokens.close()
        self._sender: threading.Thread | None = None

    def prepared(self) -> None:
        """Send the worker this process's token columns (``Check.prepare`` made them), taken
        here (the checks that follow change the store) and sent from a thread: the pipe holds
        64 KB, and the worker reads only once its imports are done."""
        state = export_tokens()
        self._sender = threading.Thread(target=_send_tokens, args=(self._tokens, state), daemon=True)
        self._sender.start()

    def claim(self) -> int | None:
        """The position in the portable queue of an item (a check, or a group of them) no process
        took yet, now this one's (:meth:`group`)."""
        return _claim(self._next, len(self.items))

    def group(self, k: int) -> list[int]:
        """The checks of queue item ``k``, in order."""
        return self.items[k]

    def results(self, done: dict[int, list[CheckResult]]) -> dict[int, list[CheckResult]]:
        """The worker's results by check index; the checks it took run here when it died without
        answering (``done``: the checks this process ran)."""
        try:
            answer = self._answer.recv()
        except (EOFError, OSError):
            answer = None
        finally:
            self._answer.close()
            self._proc.join()
            if self._sender is not None:
                self._sender.join()
            else:
                self._tokens.close()
        if answer is None:
            return {i: _run_one(self.release, self.checks[i])
                    for i in [*self.side, *self.shared] if i not in done}
        out = {}
        for i, results, hit in answer:
            if hit:  # served from the result cache there: noted here as the run's other hits are
                self.checks[i].hits.append(self.checks[i].name)  # type: ignore[attr-defined]
            out[i] = results
        return out


def _claim(counter: Any, n: int) -> int | None:
    with counter.get_lock():
        k = counter.value
        if k >= n:
            return None
        counter.value = k + 1
    return k


def _work(release: Release, checks: list[Check], side: list[int], shared: list[int], counter: Any,
          conn: Any, pipe: tuple[Any, Any], imports: list[str], parent: int) -> None:
    # killed with validate (SIGKILL included): an orphan would hold validate's stdout/stderr and
    # run its checks for nobody
    die_with_parent(parent)
    progress.set_enabled(False)  # one bar: this process's
    tokens, theirs = pipe
    theirs.close()  # the sending end, inherited: closed here, so a validate that dies is an EOF
    for module in imports:  # while validate's process tokenises (see run_checks)
        try:
            importlib.import_module(module)
        except ImportError:  # the check reports it when it runs
            pass
    try:
        state = tokens.recv()
    except (EOFError, OSError):  # nothing sent: the checks tokenise what they read
        state = None
    finally:
        tokens.close()
    if state is not None:
        import_tokens(state)

    def order() -> Iterator[int]:
        yield from side
        items = groups(checks, shared)
        while (k := _claim(counter, len(items))) is not None:
            yield from items[k]

    answer = []
    for i in order():
        hits = getattr(checks[i], "hits", None)
        before = len(hits) if hits is not None else 0
        answer.append((i, _run_one(release, checks[i]), hits is not None and len(hits) > before))
    conn.send(answer)
    conn.close()


def _changed_files(release: Release) -> list[CheckResult]:
    """A failed result when a data file is not the one the build wrote (its sha256 in release.json
    differs: a re-encoded or edited parquet), so such a release is never validated and sealed as
    it is; nothing (no result) when every file matches."""
    problems = release.verify_files()
    if not problems:
        return []
    return [CheckResult(check="release_files", family="integrity", status=Status.FAIL,
                        summary=f"{len(problems)} data file(s) differ from release.json: {'; '.join(problems[:3])}",
                        details={"problems": problems},
                        why="the data is not what the build wrote: the release cannot be reproduced",
                        todo="rebuild the release with `benchsmith build` (never edit a data file by hand)")]


def _crash_result(name: str, family: str, exc: BaseException) -> CheckResult:
    last = traceback.format_exception_only(type(exc), exc)[-1].strip()
    return CheckResult(
        check=name,
        family=family,
        status=Status.FAIL,
        summary=f"the check crashed: {last}",
        why="a crashed check found nothing: the release is unaudited for what it covers",
        todo="fix the check or the data it crashed on (the traceback is in the report's details)",
        details={"traceback": "".join(traceback.format_exception(type(exc), exc, exc.__traceback__, limit=8))},
    )


@contextmanager
def _gc_paused() -> Iterator[None]:
    """Pause CPython's cyclic GC while a check runs.

    Checks allocate millions of small acyclic objects (shingle sets, token lists);
    each generation-2 collection rescans all of them, which made near-duplicate
    detection superlinear (50k rows: 11.6 s with it, 4.6 s without). Reference counting
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

    known = declared(builder)

    acks = acknowledge.declared(builder, [c.name for c in checks + extra])  # a typo'd check: exit 2
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

    published = registry.published_fingerprints(release.path) is not None
    report_dir = registry.detached_reports_dir(release.path) if published else release.reports_dir
    cached: list[str] = []
    if cache:
        checks = cached_checks(release, checks, cached)
    results = crashed + _changed_files(release) + run_checks(release, checks)
    results, stale = acknowledge.apply(results, acks)
    notes += stale
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
            raise ReleaseError(f"{release.name} {release.version} was rebuilt while it was being validated: "
                               "nothing was written", path=release.path, hint="Validate it again")
        if published:
            write_report(release, report, report_dir)
        else:
            write_sealed(release, report, builder)
    return Validation(release, results, report, builder, previous, notes, time.perf_counter() - start, report_dir)


@contextmanager
def _version_lock(release: Release) -> Iterator[None]:
    """The version's lock (``benchsmith.registry.lock``, where publish and build take it), for a
    release in a registry. A folder outside any registry is written without it: nothing outside
    the folder is written (no ``<grandparent>/.locks``), and no build or publish takes that lock.
    A registry whose lock folder cannot be created (not writable) is written without it too."""
    if not registry.in_registry(release.path):
        yield
        return
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
    record the seal in ``reports/validation.json`` and, for a release in a registry, in the
    registry's seal record (the authority, outside the folder: :mod:`benchsmith.seal`); the
    caller holds the version's lock.

    The card reads the report, so the report is written first; the seal comes last so it
    covers the card, croissant.json and lm_eval/ as rendered. A link or special file in the
    folder is refused before anything is written, and a card that fails to render puts the
    previous report back: a failed validate leaves the release as it was."""
    list(seal.walk(release.path))  # regular files only, before anything is written
    before = {name: _read_inside(release, name) for name in seal.BY_RULE}
    report.pop("seal", None)
    try:
        write_report(release, report, release.reports_dir)
        write_card_files(release, builder)
    except BaseException:
        for name, data in before.items():
            if data is None:
                (release.path / name).unlink(missing_ok=True)
            elif _read_inside(release, name) != data:  # a write that failed left its file as it was
                registry.write_text_atomic(release.path / name, data)
        raise
    sealed = seal.compute(release.path)
    report["seal"] = sealed.to_dict()
    if registry.in_registry(release.path):
        registry.record_seal(release.path, sealed.to_dict(), passed=bool(report.get("passed")),
                             fingerprints=report.get("fingerprints") or {})
    write_report_json(report, release.reports_dir)


def _read_inside(release: Release, rel: str) -> str | None:
    """A by-rule report file's text (None: absent), read without following links."""
    try:
        fd = seal.open_regular(release.path, rel)
    except FileNotFoundError:
        return None
    with os.fdopen(fd, "rb") as fh:
        return fh.read().decode("utf-8", errors="replace")
