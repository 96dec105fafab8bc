"""The harvest's worker processes change nothing, and a seed fixes eflomal.

* ``run_harvest`` with chunks cut into pieces on two worker processes gives the words, scoring
  items and translation items one process gives from whole chunks.
* eflomal seeded (:class:`EflomalAligner`): the same input and seed give the same links; a whole
  harvest is byte-identical when repeated, locally and on a ``distributed`` scheduler.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from benchsmith.builders.mucow import align as align_module
from benchsmith.builders.mucow.align import pieces_per_chunk, split_chunk
from benchsmith.builders.mucow.aligner import EflomalAligner, FixedAlignment, chunk_seed, eflomal_iterations
from benchsmith.builders.mucow.corpora import Chunk, discover_corpora, iter_chunks
from benchsmith.builders.mucow.harvest import HarvestOptions, run_harvest
from benchsmith.cli import main
from benchsmith.errors import ConfigError
from benchsmith.nlp.tokenize import get_tokenizer
from benchsmith.release import Release

FIX = Path(__file__).parent / "fixtures"
OPUS = FIX / "opus" / "toy-deu-eng"
OMW = FIX / "sense-inventory" / "omw"


# ----------------------------------------------------------------------------- units


def test_pieces_cover_a_chunk_in_order_and_give_every_worker_work():
    chunk = Chunk(3, ["c"] * 10, list(range(1, 11)), [f"s{k}" for k in range(10)], [f"t{k}" for k in range(10)])
    pieces = split_chunk(chunk, 4, first_index=7)
    assert [p.index for p in pieces] == [7, 8, 9, 10] and {p.chunk for p in pieces} == {3}
    assert [len(p.lines) for p in pieces] == [2, 3, 2, 3]
    assert [x for p in pieces for x in p.source] == chunk.source and [x for p in pieces for x in p.lines] == chunk.lines
    assert [len(p.lines) for p in split_chunk(chunk, 20)] == [1] * 10  # never an empty piece
    assert pieces_per_chunk(17_565, 2) == 4 and pieces_per_chunk(175_650, 2) == 4  # two per worker
    assert pieces_per_chunk(17_565, 16) == 9 and pieces_per_chunk(500, 8) == 1  # but not tiny pieces


def test_eflomal_defaults_are_the_librarys():
    # eflomal 2.0's align(): iters = max(2, round(5000 / sqrt(n))); model 3 -> (max(2, iters//4), iters//4, iters)
    assert eflomal_iterations(17_565) == (9, 9, 38) and eflomal_iterations(175_650) == (3, 3, 12)
    assert eflomal_iterations(100) == (125, 125, 500)
    assert chunk_seed(0, 0) != chunk_seed(0, 1) != chunk_seed(1, 0) and len(chunk_seed(0, 0)) == 8


def _toy_tokenised() -> tuple[list[str], list[str]]:
    corpora = discover_corpora(OPUS, "deu", "eng")
    (chunk,) = iter_chunks(corpora, "deu", "eng", 10_000)
    tok_s, tok_t = get_tokenizer("de"), get_tokenizer("en")
    return [" ".join(tok_s(s)) for s in chunk.source], [" ".join(tok_t(t)) for t in chunk.target]


def test_seeded_eflomal_gives_the_same_links_every_time(tmp_path, monkeypatch):
    """eflomal has no seed option: the aligner runs a copy of its binary that reads the seed from a file
    (made once under $BENCHSMITH_HOME/tools), with each direction's samplers in a fixed order."""
    monkeypatch.setenv("BENCHSMITH_HOME", str(tmp_path))
    src, tgt = _toy_tokenised()
    aligner = EflomalAligner(seed=0)
    first = aligner(src, tgt, 0)
    assert first == aligner(src, tgt, 0) and first[2] is True
    assert len(first[0]) == len(first[1]) == len(src)
    (copy,) = (tmp_path / "tools").glob("eflomal-*-seeded/eflomal")
    assert b"/dev/urandom\x00" not in copy.read_bytes() and b"eflomal.seed\x00" in copy.read_bytes()
    d = aligner.describe()
    assert d["deterministic"] is True and d["seed"] == 0 and "OMP_NUM_THREADS=2,1" in d["how"]
    assert (d["model"], d["samplers"], d["null_prior"]) == (3, 3, 0.2)


def test_eflomal_that_cannot_be_seeded_says_so(tmp_path, monkeypatch):
    monkeypatch.setattr("benchsmith.builders.mucow.aligner.seeded_binary", lambda: None)
    src, tgt = _toy_tokenised()
    aligner = EflomalAligner(seed=0)
    fwd, rev, deterministic = aligner(src[:50], tgt[:50], 0)
    assert deterministic is False and len(fwd) == len(rev) == 50
    d = aligner.describe()
    assert d["deterministic"] is False and "/dev/urandom" in d["how"] and "can differ" in d["how"]


def test_fixed_alignment_refuses_output_of_another_length():
    with pytest.raises(ValueError, match="chunk 0: 2 pairs, but 1/1 lines of links"):
        FixedAlignment({0: (["0-0"], ["0-0"])})(["a b", "c"], ["a b", "c"], 0)


# ----------------------------------------------------------------------------- same items as before


def test_pieces_on_worker_processes_give_what_one_process_gives(monkeypatch):
    """The fixture in three alignment chunks (chunk_size 100), each cut into four pieces on two worker
    processes: the same words and items as one process with whole chunks (eflomal seeded alike)."""
    opts = HarvestOptions("deu", "eng", chunk_size=100)
    one = run_harvest([OPUS], OMW, opts, workers=1)
    assert one.words and one.scoring and one.translation
    monkeypatch.setattr(align_module, "MIN_PIECE", 30)  # read by the client: 100 pairs -> 4 pieces
    assert pieces_per_chunk(100, 2) == 4
    two = run_harvest([OPUS], OMW, opts, workers=2)
    assert (two.words, two.counts["candidate_words"]) == (one.words, one.counts["candidate_words"])
    assert (two.scoring, two.translation) == (one.scoring, one.translation)


# ----------------------------------------------------------------------------- reproducible releases


def _fingerprints(release: Release) -> dict:
    m = release.info.to_dict()
    files = {p.relative_to(release.path).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
             for p in sorted(release.path.rglob("*.parquet"))}
    return {"splits": {c: {s: i["fingerprint"] for s, i in v["splits"].items()} for c, v in m["configs"].items()},
            "files": files}


def _harvest(registry: Path, *extra: str) -> Release:
    code = main(["-q", "harvest", "mucow", "--parallel", str(OPUS), "--inventory", str(OMW), "--src", "deu",
                 "--tgt", "eng", "--registry", str(registry), "--json", *extra])
    assert code == 0
    return Release(registry / "mucow-harvest-deu-eng" / "1.0.0")


def test_a_harvest_repeated_is_byte_identical_and_says_so(tmp_path, capsys, toy_harvest, toy_harvest_again):
    a = toy_harvest  # _harvest's command with the default options, shared read-only (tests/conftest.py)
    b = toy_harvest_again  # the same command again with --workers 1 (tests/conftest.py)
    assert _fingerprints(a) == _fingerprints(b)
    meta = a.info.to_dict()["configs"]["scoring"]["metadata"]
    assert meta["alignment"]["deterministic"] is True and meta["alignment"]["seed"] == 0
    assert a.info.to_dict()["seed"] == 0 and meta["options"]["seed"] == 0
    card = (a.path / "README.md").read_text(encoding="utf-8")
    assert "## Reproducibility" in card and "Reproducible: harvesting the same inputs" in card
    other = _harvest(tmp_path / "c", "--seed", "7")
    out = json.loads(capsys.readouterr().out)
    assert other.info.to_dict()["seed"] == 7 and out["alignment"]["seed"] == 7


def test_a_harvest_on_a_distributed_scheduler_is_the_local_one(tmp_path, capsys, toy_harvest):
    from dask.distributed import LocalCluster

    local = toy_harvest  # _harvest's command on the local scheduler (tests/conftest.py)
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=False, protocol="tcp", dashboard_address=":0") as cl:
        remote = _harvest(tmp_path / "remote", "--scheduler", cl.scheduler_address)
    capsys.readouterr()
    assert _fingerprints(remote) == _fingerprints(local)


# ----------------------------------------------------------------------------- the POS probe


def test_no_tagger_is_remembered_until_the_environment_changes(tmp_path, monkeypatch):
    """Asking for a German tagger imports spaCy and stanza and finds none: the answer is cached, keyed by
    the installed distributions and stanza's models; a found tagger or a named backend is never cached."""
    from benchsmith.builders.mucow import pos

    monkeypatch.setenv("BENCHSMITH_HOME", str(tmp_path))
    calls = []

    def get_tagger(lang, backend="auto"):
        calls.append((lang, backend))
        raise ConfigError(f"no POS tagger installed for language {lang!r}")

    monkeypatch.setattr(pos, "get_tagger", get_tagger)  # the name pos looks up
    first = pos.probe("deu", "auto")
    assert isinstance(first, ConfigError) and calls == [("de", "auto")]
    second = pos.start_probe("deu", "auto").result()
    assert isinstance(second, ConfigError) and second.message == first.message and len(calls) == 1
    cached = json.loads((tmp_path / "cache" / "mucow-pos-probe.json").read_text(encoding="utf-8"))
    assert [v["lang"] for v in cached.values()] == ["de"]
    monkeypatch.setattr(pos, "environment_key", lambda lang, backend: "something was installed")
    assert isinstance(pos.probe("deu", "auto"), ConfigError) and len(calls) == 2
    assert isinstance(pos.probe("deu", "spacy"), ConfigError) and isinstance(pos.probe("deu", "spacy"), ConfigError)
    assert len(calls) == 4  # a named backend's failure is an error to show, not cached


def test_a_bad_pos_backend_is_still_a_config_error(tmp_path, capsys):
    code = main(["-q", "harvest", "mucow", "--parallel", str(OPUS), "--inventory", str(OMW), "--src", "deu",
                 "--tgt", "eng", "--registry", str(tmp_path), "--pos-backend", "spacy"])
    assert code == 2 and "POS backend 'spacy' has no model for language 'de'" in capsys.readouterr().err
    assert not any(tmp_path.rglob("*.parquet"))
