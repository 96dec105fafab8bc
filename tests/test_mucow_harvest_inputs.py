"""`benchsmith harvest mucow` on bad inputs, kills and leftovers (issue 29).

Every input defect is one typed line, exit 2, and those that need no alignment are found before
the Dask cluster starts (``dask_client`` is replaced by a tripwire in those cases). No scratch
folder survives a harvest; a killed harvest takes its workers' eflomal children and scratch with it;
the next harvest removes the scratch of killed ones. The real SIGKILL of a Tatoeba harvest is
`slow`; its default stand-in kills the owner of a worker built from the aligner's parts.
"""

from __future__ import annotations

import builtins
import json
import os
import signal
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

import pytest
from process_helpers import running, wait_until

from benchsmith.builders.mucow import harvest as harvest_mod
from benchsmith.builders.mucow.aligner import (
    ALIGN_PREFIX,
    HARVEST_PREFIX,
    remove_stale_scratch,
    require_eflomal,
)
from benchsmith.builders.mucow.metric import _same_pair
from benchsmith.cli import main
from benchsmith.errors import ConfigError

FIX = Path(__file__).parent / "fixtures"
OPUS = FIX / "opus" / "toy-deu-eng"
OMW = FIX / "sense-inventory" / "omw"
EUROPARL = OPUS / "Europarl.de-en"


def _harvest(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(["-q", "harvest", "mucow", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def _one_line(code: int, out: str, err: str) -> str:
    assert code == 2 and out == "", (code, out, err)
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err, err
    return err.strip()


@pytest.fixture
def no_cluster(monkeypatch):
    """A tripwire: the test fails if the harvest starts its cluster (i.e. got past the input checks)."""
    def tripwire(*a, **k):
        raise AssertionError("the Dask cluster was started: this input should have been refused before")
    monkeypatch.setattr(harvest_mod, "dask_client", tripwire)


@pytest.fixture
def private_tmp(tmp_path, monkeypatch):
    """$TMPDIR of this test alone (forked workers inherit it)."""
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    monkeypatch.setenv("TMPDIR", str(tmp))
    monkeypatch.setattr(tempfile, "tempdir", str(tmp))
    return tmp


def _pair(tmp_path: Path, de: list[str], en: list[str]) -> Path:
    par = tmp_path / "par"
    par.mkdir(exist_ok=True)
    (par / "x.de").write_text("".join(f"{s}\n" for s in de), encoding="utf-8")
    (par / "x.en").write_text("".join(f"{s}\n" for s in en), encoding="utf-8")
    return par


def _europarl(n: int) -> tuple[list[str], list[str]]:
    de = (OPUS / "Europarl.de-en.de").read_text(encoding="utf-8").splitlines()
    en = (OPUS / "Europarl.de-en.en").read_text(encoding="utf-8").splitlines()
    return de[:n], en[:n]


# ----------------------------------------------------------------------------- before alignment

CORPORA = [
    # what the corpus holds -> the error's words
    ("empty", [], [], "no sentence pair with text on both sides"),
    ("3,000 blank lines", [""] * 3000, ["  "] * 3000, "no sentence pair with text on both sides"),
    ("one side blank", ["Das Haus."] * 50, [""] * 50, "no sentence pair with text on both sides"),
    ("1 pair", *_europarl(1), "hold 1 sentence pair(s) with text on both sides"),
    ("10 pairs", *_europarl(10), "hold 10 sentence pair(s)"),
]


@pytest.mark.parametrize("case, de, en, words", CORPORA, ids=[c[0] for c in CORPORA])
def test_a_corpus_too_small_is_refused_before_alignment(tmp_path, capsys, no_cluster, case, de, en, words):
    par = _pair(tmp_path, de, en)
    line = _one_line(*_harvest(capsys, "--parallel", str(par), "--inventory", str(OMW), "--src", "deu",
                               "--tgt", "eng", "--registry", str(tmp_path / "reg")))
    assert words in line and "x (moses: x.de, x.en)" in line and "--min-links" in line
    assert not (tmp_path / "reg").exists()


def test_the_floor_follows_min_links(tmp_path, capsys, no_cluster):
    """10 pairs are refused at --min-links 10 (floor 20) and pass the check at --min-links 5 (floor 10):
    the tripwire then fires, i.e. the harvest went on to align."""
    par = _pair(tmp_path, *_europarl(10))
    args = ["--parallel", str(par), "--inventory", str(OMW), "--src", "deu", "--tgt", "eng",
            "--registry", str(tmp_path / "reg")]
    assert "a harvest needs at least 20" in _one_line(*_harvest(capsys, *args))
    with pytest.raises(AssertionError, match="cluster was started"):
        main(["-q", "harvest", "mucow", *args, "--min-links", "5"])


def _inventory_only_deu(tmp_path: Path) -> Path:
    inv = tmp_path / "inv"
    inv.mkdir()
    (inv / "wikt-deu.tab").write_bytes((OMW / "wikt-deu.tab").read_bytes())
    return inv


def _babelnet_without_eng(tmp_path: Path) -> Path:
    inv = tmp_path / "bn"
    inv.mkdir()
    (inv / "x.tsv").write_text("synset\tlanguage\tlemma\tpos\nbn:1n\tDE\tBank\tNOUN\nbn:1n\tFR\tbanc\tNOUN\n",
                               encoding="utf-8")
    return inv


ARGS = [
    # (what, argv given a tmp_path, the error's words)
    ("src = tgt", lambda t: ["--src", "deu", "--tgt", "deu"], "--src deu and --tgt deu are the same language (deu)"),
    ("de = deu", lambda t: ["--src", "de", "--tgt", "deu"], "--src de and --tgt deu are the same language (deu)"),
    ("unknown code", lambda t: ["--src", "klingon", "--tgt", "en"], "unknown language code 'klingon'"),
    ("inventory is a file", lambda t: ["--inventory", str(OMW / "wikt-deu.tab")],
     "sense inventory folder is a file, not a folder"),
    ("inventory absent", lambda t: ["--inventory", str(t / "nowhere")], "sense inventory folder does not exist"),
    ("language not in an OMW inventory", lambda t: ["--inventory", str(_inventory_only_deu(t))],
     "sense inventory has no entries for language 'eng'"),
    ("language not in a BabelNet inventory", lambda t: ["--inventory", str(_babelnet_without_eng(t))],
     "sense inventory has no entries for language 'eng'"),
]


@pytest.mark.parametrize("what, argv, words", ARGS, ids=[a[0] for a in ARGS])
def test_bad_arguments_are_one_line_before_alignment(tmp_path, capsys, no_cluster, what, argv, words):
    base = {"--parallel": str(OPUS), "--inventory": str(OMW), "--src": "deu", "--tgt": "eng",
            "--registry": str(tmp_path / "reg")}
    given = argv(tmp_path)
    base.update(dict(zip(given[::2], given[1::2])))
    line = _one_line(*_harvest(capsys, *[x for kv in base.items() for x in kv]))
    assert words in line, line
    assert not (tmp_path / "reg").exists()


def test_pairs_compare_by_language():
    assert _same_pair("deu-eng", "de-en") and _same_pair("de-en", "deu-eng") and _same_pair("cs-en", "cs-en")
    assert not _same_pair("deu-eng", "en-de") and not _same_pair("deu-eng", "fr-en")


# ----------------------------------------------------------------------------- eflomal that does not import


@pytest.mark.parametrize("exc", [ModuleNotFoundError("No module named 'eflomal'"),
                                 ImportError("cannot import name 'Aligner' (undefined symbol: omp_get_num_threads)"),
                                 OSError("libgomp.so.1: cannot open shared object file")])
def test_any_eflomal_import_failure_is_not_installed(monkeypatch, tmp_path, capsys, no_cluster, exc):
    real_import = builtins.__import__

    def failing(name, *a, **k):
        if name == "eflomal":
            raise exc
        return real_import(name, *a, **k)

    monkeypatch.delitem(sys.modules, "eflomal", raising=False)
    monkeypatch.setattr(builtins, "__import__", failing)
    with pytest.raises(ConfigError, match=r"eflomal is not installed.*pip install 'benchsmith\[mucow\]'"):
        require_eflomal()
    line = _one_line(*_harvest(capsys, "--parallel", str(OPUS), "--inventory", str(OMW), "--src", "deu",
                               "--tgt", "eng", "--registry", str(tmp_path / "reg")))
    assert "eflomal is not installed" in line
    if not isinstance(exc, ModuleNotFoundError):
        assert type(exc).__name__ in line  # a broken install says what failed


def test_an_installed_eflomal_imports():
    assert require_eflomal().__name__ == "eflomal"


# ----------------------------------------------------------------------------- after alignment, and leftovers


def test_a_harvest_with_no_word_is_a_typed_error_and_leaves_no_scratch(tmp_path, capsys, private_tmp):
    """100 pairs pass the size check, align, and find no ambiguous word (every word has one
    translation): was a 68-line traceback from `client.scatter` (exit 1)."""
    par = _pair(tmp_path, [f"Das Haus {k} ist alt." for k in range(100)], [f"The house {k} is old." for k in range(100)])
    line = _one_line(*_harvest(capsys, "--parallel", str(par), "--inventory", str(OMW), "--src", "deu",
                               "--tgt", "eng", "--registry", str(tmp_path / "reg"), "--workers", "1"))
    assert "the harvest found no test item for deu-eng (0 ambiguous words in 100 sentence pairs)" in line
    assert list(private_tmp.iterdir()) == []  # no dask-scratch-space, no mucow-align-* / mucow-harvest-*


def test_a_harvest_leaves_no_scratch_and_de_is_deu(tmp_path, capsys, private_tmp):
    code, out, err = _harvest(capsys, "--parallel", str(OPUS), "--inventory", str(OMW), "--src", "de",
                              "--tgt", "en", "--registry", str(tmp_path / "reg"), "--workers", "1", "--json")
    assert code == 0, err
    assert json.loads(out)["name"] == "mucow-harvest-deu-eng"  # the same release as --src deu --tgt eng
    assert list(private_tmp.iterdir()) == []


def test_stale_scratch_of_dead_owners_is_removed(private_tmp):
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    stale = [private_tmp / f"{ALIGN_PREFIX}{dead.pid}-abc", private_tmp / f"{HARVEST_PREFIX}{dead.pid}-def"]
    live = [private_tmp / f"{ALIGN_PREFIX}{os.getpid()}-ghi", private_tmp / "mucow-align-notapid",
            private_tmp / "other-123-x"]
    for d in stale + live:
        d.mkdir()
        (d / "source.efl").write_text("x")
    assert sorted(remove_stale_scratch()) == sorted(stale)
    assert sorted(private_tmp.iterdir()) == sorted(live)


# ----------------------------------------------------------------------------- kills

_WORKER = textwrap.dedent("""
    import json, multiprocessing, os, sys, threading, time
    from benchsmith import lifeline
    from benchsmith.builders.mucow import aligner

    def worker(info, owner):
        # a forked Dask worker's first step (harvest's DieWithHarvest plugin), and nothing else ends it:
        # distributed's own guard fails under fork (aligner.py, "kills and leftovers")
        lifeline.die_with_parent(owner)
        scratch = []
        def align():
            with aligner.scratch_dir(aligner.ALIGN_PREFIX) as tmp:
                scratch.append(str(tmp))
                aligner.run_child(["sleep", "60"], cwd=tmp, env=os.environ)  # stands for eflomal
        threading.Thread(target=align, daemon=True).start()
        while not aligner._CHILDREN:
            time.sleep(0.01)
        [child] = aligner._CHILDREN
        json.dump({"worker": os.getpid(), "child": child.pid, "scratch": scratch[0]}, open(info + ".tmp", "w"))
        os.replace(info + ".tmp", info)
        time.sleep(60)

    if __name__ == "__main__":
        multiprocessing.set_start_method("fork")
        multiprocessing.Process(target=worker, args=(sys.argv[1], os.getpid())).start()
        time.sleep(60)  # the harvest, killed by the test
""")


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="/proc and PR_SET_PDEATHSIG")
def test_a_killed_owner_takes_the_aligner_child_along_and_the_next_run_removes_the_scratch(tmp_path, private_tmp):
    """The default run's stand-in for the slow test below: a worker process made of the aligner's parts."""
    script, info = tmp_path / "owner.py", tmp_path / "info.json"
    script.write_text(_WORKER, encoding="utf-8")
    owner = subprocess.Popen([sys.executable, str(script), str(info)], env={**os.environ, "TMPDIR": str(private_tmp)})
    got: dict = {}
    try:
        assert wait_until(info.exists), "the worker did not start its child"
        got = json.loads(info.read_text())
        scratch = Path(got["scratch"])
        assert running(got["worker"]) and running(got["child"]) and scratch.is_dir()
        assert scratch.name.startswith(f"{ALIGN_PREFIX}{got['worker']}-") and scratch.parent == private_tmp
        owner.send_signal(signal.SIGKILL)
        owner.wait()
        assert wait_until(lambda: not running(got["worker"]), 5), "the worker outlived its owner"
        assert wait_until(lambda: not running(got["child"]), 5), "the aligner's child outlived its worker"
        assert scratch.is_dir()  # os._exit ran no cleanup ...
        assert remove_stale_scratch() == [scratch] and list(private_tmp.iterdir()) == []  # ... the next run does
    finally:
        owner.kill()
        for pid in (got.get("worker"), got.get("child")):
            if pid and running(pid):
                os.kill(pid, signal.SIGKILL)


_LATE_FORK = textwrap.dedent("""
    import json, multiprocessing.process as mpp, os, sys, time
    from benchsmith.builders.mucow import harvest

    start = mpp.BaseProcess.start
    def late_start(self):  # a loaded machine: a worker is forked after the next nanny made its pipe
        time.sleep(0.5)
        start(self)
    mpp.BaseProcess.start = late_start
    with harvest.dask_client(None, workers=2) as client:
        pids = sorted(client.run(os.getpid).values())
        json.dump(pids, open(sys.argv[1] + ".tmp", "w"))
        os.replace(sys.argv[1] + ".tmp", sys.argv[1])
        time.sleep(60)  # the harvest, killed by the test
""")


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="/proc and PR_SET_PDEATHSIG")
def test_forked_workers_die_with_a_killed_harvest_when_each_holds_the_others_pipe(tmp_path):
    """distributed's own guard (each worker exits when its pipe from the parent closes) fails when both
    workers' pipes exist before either is forked: each keeps the other's pipe open. Forcing that
    order, the two workers outlived the killed harvest every time before the fix."""
    script, info = tmp_path / "harvest.py", tmp_path / "pids.json"
    script.write_text(_LATE_FORK, encoding="utf-8")
    owner = subprocess.Popen([sys.executable, str(script), str(info)])
    pids: list[int] = []
    try:
        assert wait_until(info.exists, 60), "the cluster did not start"
        pids = json.loads(info.read_text())
        assert len(pids) == 2 and all(running(p) for p in pids)
        owner.send_signal(signal.SIGKILL)
        owner.wait()
        assert wait_until(lambda: not any(running(p) for p in pids), 5), "a worker outlived the harvest"
    finally:
        owner.kill()
        for pid in pids:
            if running(pid):
                os.kill(pid, signal.SIGKILL)


@pytest.mark.slow  # a real harvest of Tatoeba deu-eng killed while eflomal runs (~15 s)
def test_a_killed_harvest_takes_eflomal_along(raw, tmp_path, private_tmp):
    tatoeba = raw / "opus" / "tatoeba" / "deu-eng"
    inv = raw / "sense-inventory" / "omw-wikt"
    argv = [sys.executable, "-m", "benchsmith.cli", "-q", "harvest", "mucow", "--parallel", str(tatoeba),
            "--inventory", str(inv), "--src", "deu", "--tgt", "eng", "--registry", str(tmp_path / "reg"),
            "--workers", "2"]
    proc = subprocess.Popen(argv, env={**os.environ, "TMPDIR": str(private_tmp)},
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        assert wait_until(lambda: any(private_tmp.glob(f"{ALIGN_PREFIX}*/source.efl")), 120), "no alignment began"
        proc.send_signal(signal.SIGKILL)
        proc.wait()

        def eflomal_gone() -> bool:
            for p in Path("/proc").glob("[0-9]*"):
                try:
                    cwd = os.readlink(p / "cwd")
                except OSError:
                    continue
                if cwd.startswith(str(private_tmp)) and running(int(p.name)):
                    return False
            return True

        assert wait_until(eflomal_gone, 5), "an eflomal child outlived the harvest"
        # the killed harvest's scratch (its own, its workers') goes with the next harvest (one that fails at once)
        assert any(private_tmp.glob(f"{HARVEST_PREFIX}{proc.pid}-*"))
        subprocess.run([*argv[:-2], "--src", "deu", "--tgt", "deu"], env={**os.environ, "TMPDIR": str(private_tmp)},
                       capture_output=True, check=False)
        assert list(private_tmp.iterdir()) == []
    finally:
        proc.kill()


@pytest.mark.slow  # a real harvest under the limit, beside the resource-limit fuzzer (test_rlimit_fuzz.py)
def test_a_harvest_under_a_file_size_limit_is_one_line_exit_3(tmp_path):
    """eflomal's input files stop at ``ulimit -f`` without an error (its ``prepare_files`` does not
    report a short write) and eflomal then fails reading them: a fault of the machine, one line."""
    import resource

    def limited() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (4096, 4096))

    proc = subprocess.run(
        [sys.executable, "-m", "benchsmith.console", "harvest", "mucow", "--parallel", str(OPUS), "--inventory",
         str(OMW), "--src", "de", "--tgt", "en", "--registry", str(tmp_path / "reg"), "--min-links", "1",
         "--workers", "1"],
        env={**os.environ, "BENCHSMITH_HOME": str(tmp_path / "home"), "TMPDIR": str(tmp_path)},
        preexec_fn=limited, capture_output=True, text=True, timeout=300, check=False)
    errors = [line for line in proc.stderr.splitlines() if line.startswith("error: ")]
    assert proc.returncode == 3 and len(errors) == 1, proc.stderr[-3000:]
    assert "Traceback" not in proc.stderr and "file-size limit" in errors[0], proc.stderr[-3000:]
    assert not (tmp_path / "reg" / "mucow").exists() or not any((tmp_path / "reg" / "mucow").iterdir())
