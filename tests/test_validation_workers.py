"""``run_checks``' worker process: the ``concurrent`` checks run in a forked process beside the
others, the ``portable`` ones go to whichever process is idle (the costliest first), the results
come back in the checks' order, a crash there is a failed result, a worker that dies has the
checks it took run here, and ``BENCHSMITH_VALIDATE_WORKERS=0`` keeps every check here."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from process_helpers import running, wait_until
from validation_helpers import MC_META, balanced_text_rows, make_release, mc_features, mc_rows, text_features

from benchsmith.validation import runner
from benchsmith.validation.check import Check, Status
from benchsmith.validation.result_cache import cached_checks

PARENT = os.getpid()


class Where(Check):
    """Reports the pid it ran in (a stat), or crashes / kills its process / sleeps when told to."""

    family = "distribution"

    def __init__(self, name: str, concurrent: bool = False, how: str = "ok", portable: bool = False,
                 cost: float = 0.1, sleep: float = 0.0, group: str | None = None) -> None:
        self.name, self.concurrent, self.how = name, concurrent, how  # type: ignore[misc]
        self.portable, self.cost, self.sleep, self.group = portable, cost, sleep, group  # type: ignore[misc]

    def run(self, release):
        if self.how == "crash":
            raise RuntimeError("boom")
        if self.how == "die" and os.getpid() != PARENT:
            os._exit(3)  # the worker dies without answering
        time.sleep(self.sleep)
        return [self.stat(f"{self.name} ran", metrics={"pid": os.getpid()})]


@pytest.fixture(scope="module")
def release(tmp_path_factory):
    reg = tmp_path_factory.mktemp("workers")
    return make_release(reg, {"train": balanced_text_rows(20, "tr", 1)}, text_features())


@pytest.fixture(autouse=True)
def _allowed(monkeypatch):
    monkeypatch.delenv(runner.WORKERS_ENV, raising=False)
    monkeypatch.setattr(runner, "_workers_allowed", lambda: True)  # as on a machine with 2+ cores


def test_concurrent_checks_run_in_a_worker_and_the_order_is_kept(release):
    checks = [Where("a"), Where("b", concurrent=True), Where("c"), Where("d", concurrent=True)]
    got = runner.run_checks(release, checks)  # b and d run in the worker
    assert [r.check for r in got] == ["a", "b", "c", "d"]
    pids = {r.check: r.metrics["pid"] for r in got}
    assert pids["a"] == pids["c"] == os.getpid()
    assert pids["b"] == pids["d"] != os.getpid()


def test_a_crash_in_the_worker_is_a_failed_result(release):
    got = runner.run_checks(release, [Where("b", concurrent=True, how="crash"), Where("a")])
    assert [(r.check, r.status) for r in got] == [("b", Status.FAIL), ("a", Status.STAT)]
    assert "RuntimeError: boom" in got[0].summary


def test_a_worker_that_dies_has_its_checks_run_here(release):
    got = runner.run_checks(release, [Where("b", concurrent=True, how="die"), Where("a")])
    assert [r.check for r in got] == ["b", "a"] and got[0].metrics["pid"] == os.getpid()


def test_no_worker_when_disabled_last_or_cached(release, monkeypatch, tmp_path):
    # every check is concurrent: nothing left for this process, so no worker
    got = runner.run_checks(release, [Where("b", concurrent=True), Where("c", concurrent=True)])
    assert {r.metrics["pid"] for r in got} == {os.getpid()}
    monkeypatch.setattr(runner, "_workers_allowed", lambda: False)
    got = runner.run_checks(release, [Where("b", concurrent=True), Where("a")])
    assert {r.metrics["pid"] for r in got} == {os.getpid()}
    # a cached result is served here: no worker for a hit, and the hit is noted once
    monkeypatch.setenv("BENCHSMITH_HOME", str(tmp_path))
    monkeypatch.setattr(runner, "_workers_allowed", lambda: True)

    class Cacheable(Where):
        cacheable = True

    first: list[str] = []
    runner.run_checks(release, cached_checks(release, [Cacheable("b", concurrent=True), Where("a")], first))
    assert first == []  # computed in the worker and stored there
    hits: list[str] = []
    checks = cached_checks(release, [Cacheable("b", concurrent=True), Where("a")], hits)
    again = runner.run_checks(release, checks)
    assert hits == ["b"] and again[0].metrics["pid"] != os.getpid()  # the pid the worker stored


def test_the_worker_is_forked_before_the_first_check(release, monkeypatch):
    # so that the probes overlap every other check (runner.run_checks: measured, the early fork wins)
    started: list[int] = []
    seen: list[int] = []
    real = runner._Worker.__init__

    def init(self, *a):
        started.append(1)
        real(self, *a)

    class Mark(Where):
        def run(self, release):
            seen.append(len(started))
            return super().run(release)

    class Generic(Mark):
        pass

    monkeypatch.setattr(runner._Worker, "__init__", init)
    monkeypatch.setattr(runner, "registered_checks", lambda: {"generic": Generic})
    checks = [Generic("a"), Generic("b"), Mark("x"), Where("c", concurrent=True), Mark("d")]
    runner.run_checks(release, checks)
    assert seen == [1, 1, 1, 1]  # not after the generic a and b (their token columns are not waited for)


def test_workers_allowed_reads_the_environment(monkeypatch):
    monkeypatch.undo()
    monkeypatch.setenv(runner.WORKERS_ENV, "0")
    assert runner._workers_allowed() is False


def test_the_real_probes_give_the_same_results_in_the_worker(tmp_path, monkeypatch):
    from benchsmith.validation.checks.artifacts import CueCheck
    from benchsmith.validation.checks.partial_input import PartialInputCheck

    cued = make_release(tmp_path, {"train": mc_rows(200, "t", 4, cue="never")}, mc_features(), MC_META)
    checks = [CueCheck(), PartialInputCheck()]
    forks: list[int] = []
    real = runner._Worker.__init__
    monkeypatch.setattr(runner._Worker, "__init__", lambda self, *a: (forks.append(1), real(self, *a))[1])
    here = runner.run_checks(cued, checks)  # the autouse fixture allows the worker
    assert forks == [1]
    monkeypatch.setattr(runner, "_workers_allowed", lambda: False)
    alone = runner.run_checks(cued, checks)
    assert [r.to_dict() for r in here] == [r.to_dict() for r in alone]
    assert [r.status for r in here] == [Status.WARN, Status.FAIL]  # the planted cue: named, and the probe fails


def test_portable_checks_go_to_the_idle_process_costliest_first(release):
    # the worker's probe is long, so this process takes the portable checks after its own,
    # the costliest first; then the reverse: this process is busy and the worker takes them
    long_probe = [Where("p", concurrent=True, sleep=0.4), Where("a"),
                  Where("small", portable=True, cost=0.1), Where("big", portable=True, cost=2.0)]
    assert runner.plan(long_probe) == ([0], [3, 2])
    got = runner.run_checks(release, long_probe)
    assert [r.check for r in got] == ["p", "a", "small", "big"]  # the checks' order, wherever they ran
    pids = {r.check: r.metrics["pid"] for r in got}
    assert pids["p"] != os.getpid() and pids["a"] == pids["small"] == pids["big"] == os.getpid()
    busy_here = [Where("p", concurrent=True), Where("a", sleep=0.4),
                 Where("small", portable=True, cost=0.1), Where("big", portable=True, cost=2.0)]
    pids = {r.check: r.metrics["pid"] for r in runner.run_checks(release, busy_here)}
    assert pids["a"] == os.getpid() and pids["p"] == pids["small"] == pids["big"] != os.getpid()


def test_a_group_is_one_item_of_the_queue_at_its_summed_cost(release):
    # g1 + g2 (0.5 + 0.5) outrank "big" (0.9): queued together, in check order, taken by one process
    checks = [Where("p", concurrent=True, sleep=0.3), Where("a", sleep=0.3),
              Where("g2", portable=True, cost=0.5, group="g"), Where("big", portable=True, cost=0.9),
              Where("g1", portable=True, cost=0.5, group="g")]
    side, shared = runner.plan(checks)
    assert (side, shared) == ([0], [2, 4, 3])
    assert runner.groups(checks, shared) == [[2, 4], [3]]
    pids = {r.check: r.metrics["pid"] for r in runner.run_checks(release, checks)}
    assert pids["g1"] == pids["g2"]
    ungrouped = [c if c.name not in ("g1", "g2") else Where(c.name, portable=True, cost=0.5) for c in checks]
    assert runner.plan(ungrouped) == ([0], [3, 2, 4])


def test_a_worker_for_portable_checks_alone_only_when_worth_it(release):
    cheap = [Where("a"), Where("x", portable=True, cost=0.2), Where("y", portable=True, cost=0.2)]
    assert runner.plan(cheap) == ([], [])
    dear = [Where("a", sleep=0.4), Where("x", portable=True, cost=1.5)]
    assert runner.plan(dear) == ([], [1])
    pids = {r.check: r.metrics["pid"] for r in runner.run_checks(release, dear)}
    assert pids["a"] == os.getpid() != pids["x"]


def test_a_dead_worker_has_the_portable_checks_it_took_run_here(release):
    checks = [Where("a", sleep=0.4), Where("x", portable=True, cost=2.0, how="die"),
              Where("y", portable=True, cost=1.0)]
    got = runner.run_checks(release, checks)
    assert [r.check for r in got] == ["a", "x", "y"]
    assert {r.metrics["pid"] for r in got} == {os.getpid()}  # x killed the worker; x and y ran here


def test_prepare_runs_here_while_the_worker_imports_and_its_tokens_are_sent(release, monkeypatch):
    # the worker imports what the probe declares while this process runs its prepare (the token
    # columns the probe reads); the worker then has those columns and their ids without tokenising
    import sys

    from benchsmith.validation import dataview

    events: list[str] = []
    real = runner._Worker.__init__
    monkeypatch.setattr(runner._Worker, "__init__",
                        lambda self, *a: (events.append("fork"), real(self, *a))[1])
    assert "tabnanny" not in sys.modules

    class Prepared(Where):
        def imports(self, release):
            return ("tabnanny",)

        def prepare(self, release):
            events.append(f"prepare {self.name}")
            if self.how == "crash":
                raise RuntimeError("boom")
            view = dataview.configs(release)[0]
            view.token_column("train", "text")

        def run(self, release):
            if self.how == "crash":
                raise RuntimeError("boom")
            view = dataview.configs(release)[0]
            key = ("tokens", *view.content_key("train"), "text")
            had = dataview.STORE.peek(key) is not None
            ids = view.token_column("train", "text").ids
            words = sorted({dataview.VOCAB.names[i] for i in ids.tolist()})
            return [self.stat("ran", metrics={"pid": os.getpid(), "had": had, "words": words,
                                              "tabnanny": "tabnanny" in sys.modules})]

    dataview.STORE.clear()
    got = runner.run_checks(release, [Prepared("p", concurrent=True),
                                      Prepared("q", concurrent=True, how="crash"), Where("a")])
    assert events == ["fork", "prepare p", "prepare q"]
    assert [(r.check, r.status) for r in got] == [("p", Status.STAT), ("q", Status.FAIL), ("a", Status.STAT)]
    m = got[0].metrics
    assert m["pid"] != os.getpid() and m["had"] and m["tabnanny"] and "tabnanny" not in sys.modules
    view = dataview.configs(release)[0]
    here = view.token_column("train", "text").ids.tolist()
    assert m["words"] == sorted({dataview.VOCAB.names[i] for i in here})


def test_a_forked_vocabulary_adopts_only_a_continuation():
    from benchsmith.validation.dataview import Vocabulary

    parent, child = Vocabulary(), Vocabulary()
    parent.ids(["a", "b"])
    child.ids(["a", "b"])
    parent.ids(["C", "d"])
    assert child.adopt(parent.state()) and child.names == ["a", "b", "c", "d"]
    assert child.ids(["D"]).tolist() == [3]
    other = Vocabulary()
    other.ids(["z"])
    assert not other.adopt(parent.state()) and other.names == ["z"]


def test_the_real_generic_checks_give_the_same_results_in_the_worker(tmp_path, monkeypatch):
    from benchsmith.validation.runner import generic_checks

    rows = balanced_text_rows(60, "tr", 1)
    splits = {"train": rows, "test": rows[:5] + balanced_text_rows(30, "te", 2)}
    dup = make_release(tmp_path, splits, text_features())
    checks = generic_checks()
    assert {checks[i].name for i in runner.plan(checks)[1]} == {
        "near_duplicates", "exact_duplicates", "unique_ids", "empty_fields", "fingerprint", "lengths", "cues",
        "label_balance"}
    here = runner.run_checks(dup, checks)
    monkeypatch.setattr(runner, "_workers_allowed", lambda: False)
    alone = runner.run_checks(dup, checks)
    assert [r.to_dict() for r in here] == [r.to_dict() for r in alone]
    assert {r.check: r.status for r in here}["exact_duplicates"] == Status.FAIL  # the planted leak: found


def test_the_probe_asks_for_scikit_learn_only_where_it_fits(tmp_path, release):
    from benchsmith.validation.checks.partial_input import PartialInputCheck

    mc = make_release(tmp_path, {"train": mc_rows(20, "t", 4)}, mc_features(), MC_META)
    assert PartialInputCheck().imports(mc) == ("sklearn.linear_model",)
    assert PartialInputCheck().imports(release) == ()  # labels but no options and no partial_input fields


_KILLED = textwrap.dedent("""
    import os, sys, time
    from pathlib import Path
    sys.path.insert(0, sys.argv[2])
    from benchsmith.validation import runner
    from benchsmith.validation.check import Check
    from validation_helpers import balanced_text_rows, make_release, text_features

    class Sleeper(Check):
        family = "distribution"

        def __init__(self, name, concurrent):
            self.name, self.concurrent = name, concurrent

        def run(self, release):
            if self.concurrent:  # the worker says who it is, then works on
                Path(sys.argv[1] + ".tmp").write_text(str(os.getpid()))
                os.replace(sys.argv[1] + ".tmp", sys.argv[1])
            time.sleep(60)
            return []

    runner._workers_allowed = lambda: True
    release = make_release(Path(sys.argv[3]), {"train": balanced_text_rows(20, "tr", 1)}, text_features())
    runner.run_checks(release, [Sleeper("here", False), Sleeper("there", True)])
""")


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="/proc and PR_SET_PDEATHSIG")
def test_a_killed_validate_takes_its_worker_along(tmp_path):
    """SIGKILL validate while its worker runs a check: the worker goes too (no orphan holding
    validate's stdout/stderr), and the pipe validate's caller reads ends."""
    script, info = tmp_path / "validate.py", tmp_path / "worker.pid"
    script.write_text(_KILLED, encoding="utf-8")
    proc = subprocess.Popen([sys.executable, str(script), str(info), str(Path(__file__).parent), str(tmp_path / "reg")],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    try:
        assert wait_until(info.exists, 60), "the worker never started its check"
        worker = int(info.read_text())
        assert running(worker)
        proc.kill()
        proc.wait()
        assert wait_until(lambda: not running(worker)), "the worker outlived validate"
        proc.stdout.read()  # EOF: no process holds validate's stdout any more
    finally:
        proc.kill()
        proc.stdout.close()
