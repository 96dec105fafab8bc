"""Shared test fixtures, hypothesis profiles, CI's install check and cache isolation.

``raw`` is the real raw data root: ``$BENCHSMITH_RAW`` (CI sets it to ../shared/raw), else
``../shared/raw`` beside the checkout. Where neither exists real-data tests skip locally but fail
under CI (``CI`` set), so a CI run can never pass without having read the real data.

For the same reason, under ``CI`` the run refuses to start unless every distribution of the
``all`` extra (pyproject.toml) is installed (:func:`missing_from_all_extra`): CI installs
``.[all]``, so a test's ``pytest.importorskip`` skips only on a developer's machine, never in CI.

Hypothesis budgets are two settings profiles: ``benchsmith`` (the default run: 500 examples, issue
26's floor per reader of untrusted files) and ``benchsmith-slow`` (5,000), loaded when the run
selected any test marked ``slow`` or when ``BENCHSMITH_HYPOTHESIS_PROFILE`` names it (``.ci/run``
sets it for its slow step). Under ``CI`` both are derandomised, so a CI run is reproducible.

Every test gets its own ``BENCHSMITH_HOME`` (``_isolated_home``), never the user's cache. Real
builds several modules read are made once per run and shared read-only (``built_once``).
"""

from __future__ import annotations

import contextlib
import fcntl
import io
import json
import logging
import os
import shutil
import tempfile
import tomllib
from collections.abc import Callable, Iterator
from importlib import metadata
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

# datasets and huggingface_hub read these at import time: set them before any test imports them.
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_HUB_DISABLE_XET", "1")

# after the variables above; tests/ is on sys.path (pytest puts a conftest's folder there)
import comve_helpers

from benchsmith import progress
from benchsmith.builder import get_builder
from benchsmith.cli import main
from benchsmith.release import Release, ReleaseWriter
from benchsmith.source import resolve_sources

TESTS = Path(__file__).parent
FIXTURES = TESTS / "fixtures"
PYPROJECT = TESTS.parent / "pyproject.toml"

# ----------------------------------------------------------------------------- hypothesis budgets

DEFAULT_PROFILE, SLOW_PROFILE = "benchsmith", "benchsmith-slow"
settings.register_profile(
    DEFAULT_PROFILE,
    max_examples=500,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow,
                           HealthCheck.data_too_large, HealthCheck.large_base_example],
    derandomize=bool(os.environ.get("CI")),  # reproducible in CI
    database=None,  # failing inputs are kept as regressions in the tests, not in a local .hypothesis folder
)
# BENCHSMITH_HYPOTHESIS_MAX_EXAMPLES raises the slow budget for a deeper local run
SLOW_EXAMPLES = int(os.environ.get("BENCHSMITH_HYPOTHESIS_MAX_EXAMPLES", "5000"))
settings.register_profile(SLOW_PROFILE, parent=settings.get_profile(DEFAULT_PROFILE), max_examples=SLOW_EXAMPLES)


def hypothesis_profile(slow_selected: bool) -> str:
    """The profile a run loads: the variable's, else the slow one iff a slow test was selected."""
    return os.environ.get("BENCHSMITH_HYPOTHESIS_PROFILE") or (SLOW_PROFILE if slow_selected else DEFAULT_PROFILE)


settings.load_profile(hypothesis_profile(False))


@pytest.hookimpl(trylast=True)  # after -m has deselected
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    settings.load_profile(hypothesis_profile(any(item.get_closest_marker("slow") for item in items)))


# ----------------------------------------------------------------------------- CI installs everything


def missing_from_all_extra(pyproject: Path = PYPROJECT) -> list[str]:
    """The distributions ``pip install -e ".[all]"`` would install that are not installed, sorted."""
    project = tomllib.loads(pyproject.read_text(encoding="utf-8"))["project"]
    extras, me = project["optional-dependencies"], canonicalize_name(project["name"])
    todo, seen, missing = ["all"], set(), set()
    while todo:
        extra = todo.pop()
        if extra in seen:
            continue
        seen.add(extra)
        for line in extras[extra]:
            req = Requirement(line)
            if canonicalize_name(req.name) == me:  # benchsmith[models,nlp,...]: the extras it names
                todo.extend(req.extras)
                continue
            try:
                metadata.version(req.name)
            except metadata.PackageNotFoundError:
                missing.add(req.name)
    return sorted(missing)


def pytest_configure(config: pytest.Config) -> None:
    if os.environ.get("CI") and (missing := missing_from_all_extra()):
        raise pytest.UsageError(f"CI: {', '.join(missing)} of the `all` extra not installed, so their tests "
                                'would skip: pip install -e ".[all]"')


# ----------------------------------------------------------------------------- helpers and fixtures


def _raw_root() -> Path | None:
    env = os.environ.get("BENCHSMITH_RAW")
    if env:
        return Path(env).resolve()  # tests may chdir; a relative ../shared/raw must not break
    guess = TESTS.parent.parent / "shared" / "raw"
    return guess if guess.is_dir() else None


def run_cli(capsys, *argv: str) -> tuple[int, str, str]:
    """Run ``benchsmith ARGV`` in-process: (exit status, stdout, stderr).

    A plain helper (``from conftest import run_cli``), shared by the CLI tests.
    """
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def one_json(out: str) -> dict:
    """The one JSON object a ``--json`` command printed (fails if stdout holds anything else)."""
    lines = [line for line in out.splitlines() if line.strip()]
    assert len(lines) == 1, out
    return json.loads(lines[0])


@pytest.fixture(scope="session")
def raw() -> Path:
    root = _raw_root()
    if root is None or not root.is_dir():
        if os.environ.get("CI"):
            pytest.fail(f"real data missing: BENCHSMITH_RAW={os.environ.get('BENCHSMITH_RAW')!r} is not a folder")
        pytest.skip("real data not available (set BENCHSMITH_RAW)")
    return root


@pytest.fixture(scope="session")
def fixtures() -> Path:
    return FIXTURES


#: tmpfs where there is one: the reader fuzz rewrites the same few files hundreds of times, and the
#: shared machine's disk made that the larger part of its time (only speed depends on it)
FAST_TMP = "/dev/shm" if os.path.isdir("/dev/shm") and os.access("/dev/shm", os.W_OK) else None


@pytest.fixture
def fast_tmp_path() -> Iterator[Path]:
    """A fresh folder on tmpfs (FAST_TMP; else the system's temporary folder), removed after the test."""
    with tempfile.TemporaryDirectory(prefix="benchsmith-test-", dir=FAST_TMP) as folder:
        yield Path(folder)


def built_once(tmp_path_factory: pytest.TempPathFactory, name: str, build: Callable[[Path], Path]) -> Path:
    """``build(folder)`` (which returns a path in ``folder``) once per test run; later calls, in this
    or another xdist worker, wait for it and get the same path. The folder is the run's own (beside
    the workers' temporary folders), so nothing outlives the run; it is shared read-only.

    Why: a session fixture is made once per *process*, and with ``-n auto`` each xdist worker would
    make the same real build again.
    """
    root = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        root = root.parent  # the run's folder, above every worker's popen-gwN
    marker = root / f"built-once-{name}.path"
    with open(root / f"built-once-{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file is closed
        if not marker.is_file():
            folder = root / f"built-once-{name}"
            shutil.rmtree(folder, ignore_errors=True)  # what a worker that failed half-way left
            folder.mkdir()
            marker.write_text(str(build(folder)), encoding="utf-8")
        return Path(marker.read_text(encoding="utf-8"))


#: the command line of ``real_cognition_audit`` (tests/test_audit_real.py runs it for the other datasets)
COGNITION_AUDIT_ARGV = ("-q", "audit", "cognition", "--skip-missing", "--json")


@pytest.fixture(scope="session")
def real_cognition_audit(raw, tmp_path_factory) -> dict:
    """``benchsmith audit cognition --sources RAW --registry REG --skip-missing --json`` on the real
    data (build with the registered checksums verified and the train split, which ../shared/raw
    lacks, skipped; validate; commit), run in-process once per test run (``built_once``):
    ``{"code", "out", "err", "release"}``. tests/test_audit_real.py checks the audit;
    ``real_cognition`` is its release."""

    def audit(folder: Path) -> Path:
        out, err = io.StringIO(), io.StringIO()
        with pytest.MonkeyPatch.context() as mp:  # the function-scoped _isolated_home is not active yet
            mp.setenv("BENCHSMITH_HOME", str(tmp_path_factory.mktemp("bshome")))
            progress.set_enabled(False)
            try:
                with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
                    code = main([*COGNITION_AUDIT_ARGV, "--sources", str(raw),
                                 "--registry", str(folder / "reg")])
            finally:
                progress.set_enabled(None)
        record = folder / "audit.json"
        record.write_text(json.dumps({"code": code, "out": out.getvalue(), "err": err.getvalue(),
                                      "registry": str(folder / "reg")}), encoding="utf-8")
        return record

    return json.loads(built_once(tmp_path_factory, "real-cognition-audit", audit).read_text(encoding="utf-8"))


@pytest.fixture(scope="session")
def real_cognition(real_cognition_audit):
    """CoGnition built from the real data and audited (``real_cognition_audit``: registered checksums
    verified, the train split skipped, validated), once per test run, shared by the xdist workers: two
    modules read it besides the audit's test. A test reads it and never changes it."""
    audited = real_cognition_audit
    assert audited["code"] == 0, audited["err"][-2000:]
    return Release(Path(audited["registry"]) / "cognition" / json.loads(audited["out"])["version"])


@pytest.fixture(scope="session")
def real_xcopa(raw, tmp_path_factory):
    """XCOPA's current version built from the real data, every raw file sha256-verified against
    the registered checksums, once per test run (``built_once``), read by several modules. A test
    reads it and never changes it."""

    def build(folder: Path) -> Path:
        logging.getLogger("benchsmith.source").setLevel(logging.ERROR)
        b = get_builder("xcopa")
        sources = resolve_sources(b.sources, b.checksums(), raw)
        with pytest.MonkeyPatch.context() as mp:  # the function-scoped _isolated_home is not active yet
            mp.setenv("BENCHSMITH_HOME", str(tmp_path_factory.mktemp("bshome")))
            return ReleaseWriter(b, folder, sources).write().path

    return Release(built_once(tmp_path_factory, "real-xcopa", build))


@pytest.fixture(scope="session")
def real_comve(raw, tmp_path_factory) -> dict:
    """ComVE 1.0.0 and 1.1.0 built from the real data (the registered sha256 of every upstream file
    verified), once per test run (``built_once``): test_comve_real.py reads both and
    test_core_fingerprints.py holds 1.1.0 to its registered fingerprints. A test reads them and
    never changes them."""

    def build_in(version: str):
        def run(folder: Path) -> Path:
            with pytest.MonkeyPatch.context() as mp:  # the function-scoped _isolated_home is not active yet
                mp.setenv("BENCHSMITH_HOME", str(tmp_path_factory.mktemp("bshome")))
                return comve_helpers.build(raw, folder, version, checksums=True).path
        return run

    return {v: Release(built_once(tmp_path_factory, f"real-comve-{v}", build_in(v)))
            for v in ("1.0.0", "1.1.0")}


TOY_HARVEST_ARGV = ("-q", "harvest", "mucow", "--parallel", str(FIXTURES / "opus" / "toy-deu-eng"),
                    "--inventory", str(FIXTURES / "sense-inventory" / "omw"), "--src", "deu", "--tgt", "eng",
                    "--json")


def _harvest_once(tmp_path_factory: pytest.TempPathFactory, name: str, *extra: str):
    """``benchsmith harvest mucow`` of the toy deu-eng corpus (TOY_HARVEST_ARGV + ``extra``), made
    once per test run (``built_once``) and shared read-only."""
    pytest.importorskip("eflomal")

    def build(registry: Path) -> Path:
        with pytest.MonkeyPatch.context() as mp:  # the function-scoped _isolated_home is not active yet
            mp.setenv("BENCHSMITH_HOME", str(tmp_path_factory.mktemp("bshome")))
            progress.set_enabled(False)
            try:
                assert main([*TOY_HARVEST_ARGV, *extra, "--registry", str(registry)]) == 0
            finally:
                progress.set_enabled(None)
        return registry / "mucow-harvest-deu-eng" / "1.0.0"

    return Release(built_once(tmp_path_factory, name, build))


@pytest.fixture(scope="session")
def toy_harvest(tmp_path_factory):
    """``benchsmith harvest mucow`` of the toy deu-eng corpus with the default options (seed 0),
    made once per test run (``built_once``), read by several modules. A test reads it and never
    changes it (copy it first)."""
    return _harvest_once(tmp_path_factory, "toy-harvest")


@pytest.fixture(scope="session")
def toy_harvest_again(tmp_path_factory):
    """The harvest of ``toy_harvest`` made a second time, on one worker process (``--workers 1``;
    the default is one per core), once per test run and read-only: test_mucow_pipeline.py shows it
    byte-identical to ``toy_harvest`` (a harvest repeated, and the worker count changes nothing),
    test_cli_messages.py validates it against ``toy_harvest`` as ``--previous`` (drift: identical)."""
    return _harvest_once(tmp_path_factory, "toy-harvest-again", "--workers", "1")


@pytest.fixture(autouse=True)
def _isolated_home(tmp_path_factory, monkeypatch):
    """Never touch the user's ~/.cache/benchsmith; no progress bars in tests."""
    monkeypatch.setenv("BENCHSMITH_HOME", str(tmp_path_factory.mktemp("bshome")))
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    progress.set_enabled(False)
    yield
    progress.set_enabled(None)


# ----------------------------------------------------------------------------- fuzz cases per class


class FuzzCases:
    """The cases one fuzz test ran, counted by the test (``with fuzz_cases.case(): ...`` around
    each hypothesis example or generated case), and how many of them raised."""

    def __init__(self) -> None:
        self.run = self.failed = 0

    @contextlib.contextmanager
    def case(self) -> Iterator[None]:
        self.run += 1
        try:
            yield
        except BaseException:
            self.failed += 1
            raise


@pytest.fixture
def fuzz_cases(request) -> Iterator[FuzzCases]:
    """A counter of a ``fuzz``-marked test's own cases; without it the test is one case."""
    counted = FuzzCases()
    yield counted
    request.node.user_properties.append(("fuzz_cases", (counted.run, counted.failed)))


def pytest_runtest_setup(item: pytest.Item) -> None:
    if (marker := item.get_closest_marker("fuzz")) is not None:
        item.user_properties.append(("fuzz_class", marker.args[0]))


#: nodeid -> {"class", "cases" (None: not counted by the test), "failed", "item_failed", "seconds"};
#: filled from the reports, which xdist's workers send to the controller with their user_properties
_FUZZ_RESULTS: dict[str, dict] = {}


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    props = dict(report.user_properties)
    if "fuzz_class" not in props:
        return
    rec = _FUZZ_RESULTS.setdefault(report.nodeid, {"class": props["fuzz_class"], "cases": None, "failed": 0,
                                                   "item_failed": False, "skipped": False, "seconds": 0.0})
    rec["seconds"] += report.duration
    rec["item_failed"] |= report.failed or hasattr(report, "wasxfail")  # an expected failure is a failed case
    rec["skipped"] |= report.skipped and not hasattr(report, "wasxfail")
    if "fuzz_cases" in props:
        rec["cases"], rec["failed"] = props["fuzz_cases"]


def pytest_terminal_summary(terminalreporter) -> None:
    """One line per fuzz class: cases run, passed, failed, and the tests' summed time."""
    if not _FUZZ_RESULTS:
        return
    per: dict[str, list[float]] = {}
    for rec in _FUZZ_RESULTS.values():
        cases = (rec["cases"] if rec["cases"] is not None else 1) if not rec["skipped"] else 0
        failed = max(rec["failed"], 1) if rec["item_failed"] else rec["failed"]
        row = per.setdefault(rec["class"], [0, 0, 0, 0.0])
        row[0] += 1
        row[1] += max(cases, failed)
        row[2] += failed
        row[3] += rec["seconds"]
    terminalreporter.section("fuzz cases per class")
    for name, (tests, cases, failed, seconds) in sorted(per.items()):
        terminalreporter.write_line(f"fuzz {name}: {cases:,} cases run, {cases - failed:,} passed, {failed:,} failed "
                                    f"({tests} tests, {seconds:.1f} s)")
