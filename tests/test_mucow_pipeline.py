"""The harvest's faster paths give exactly what the sequential pipeline gave, and a seed fixes eflomal.

* ``reference_harvest`` is the pipeline as it was before the work was spread over worker processes
  (one task per alignment chunk: tokenise the chunk, align it, symmetrise every pair with the
  previous grow-diag-final-and, count and select on the whole chunk), kept here verbatim where the
  code changed. Given the same alignment output (:class:`FixedAlignment` of the links the reference
  used), ``run_harvest`` on a local cluster of worker processes, with chunks cut into pieces,
  must give the same words, scoring items and translation items, on the fixture (in several
  chunks and pieces) and on Tatoeba deu-eng.
* eflomal seeded (:class:`EflomalAligner`): the same input and seed give the same links; a whole
  harvest is byte-identical when repeated, locally and on a ``distributed`` scheduler.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from functools import lru_cache
from pathlib import Path

import pytest
from benchsmith.builders.mucow import align as align_module
from benchsmith.builders.mucow.align import (
    AlignedChunk,
    candidate_words,
    count_links,
    grow_diag_final_and,
    one_to_one,
    pieces_per_chunk,
    split_chunk,
)
from benchsmith.builders.mucow.aligner import EflomalAligner, FixedAlignment, chunk_seed, eflomal_iterations
from benchsmith.builders.mucow.corpora import Chunk, discover_corpora, iter_chunks
from benchsmith.builders.mucow.harvest import HarvestOptions, run_harvest
from benchsmith.builders.mucow.senses import build_senses
from benchsmith.builders.mucow.suites import merge_pools, scoring_items, select_candidates, translation_items
from benchsmith.loaders.sense_inventory import load_inventory
from hypothesis import given, settings
from hypothesis import strategies as st

from benchsmith.cli import main
from benchsmith.errors import ConfigError
from benchsmith.nlp.tokenize import get_tokenizer
from benchsmith.release import Release

FIX = Path(__file__).parent / "fixtures"
OPUS = FIX / "opus" / "toy-deu-eng"
OMW = FIX / "sense-inventory" / "omw"


# ----------------------------------------------------------------------------- the previous pipeline


def previous_grow_diag_final_and(fwd: set, rev: set) -> set:
    """grow-diag-final-and as the harvest computed it before (verbatim)."""
    neighbours = ((-1, 0), (0, -1), (1, 0), (0, 1), (-1, -1), (-1, 1), (1, -1), (1, 1))
    union = fwd | rev
    links = fwd & rev
    src_done = {i for i, _ in links}
    tgt_done = {j for _, j in links}
    grew = True
    while grew:
        grew = False
        for i, j in sorted(links):
            for di, dj in neighbours:
                p = (i + di, j + dj)
                if p in union and p not in links and (p[0] not in src_done or p[1] not in tgt_done):
                    links.add(p)
                    src_done.add(p[0])
                    tgt_done.add(p[1])
                    grew = True
    for direction in (fwd, rev):
        for i, j in sorted(direction):
            if (i, j) not in links and i not in src_done and j not in tgt_done:
                links.add((i, j))
                src_done.add(i)
                tgt_done.add(j)
    return links


def previous_one_to_one(links: set) -> list:
    """one_to_one as the harvest computed it before (verbatim)."""
    src_deg = Counter(i for i, _ in links)
    tgt_deg = Counter(j for _, j in links)
    return sorted((i, j) for i, j in links if src_deg[i] == 1 and tgt_deg[j] == 1)


def _parse(line: str) -> set:
    return {(int(i), int(j)) for i, _, j in (p.partition("-") for p in line.split())}


def previous_align_chunk(chunk: Chunk, opts: HarvestOptions, aligner) -> tuple[AlignedChunk, tuple[list, list]]:
    """One chunk as the previous ``align_chunk`` task did it (tokenise, align, symmetrise), with ``aligner``."""
    tok_s, tok_t = get_tokenizer(opts.src), get_tokenizer(opts.tgt)
    src_tokens = [tok_s(s) for s in chunk.source]
    tgt_tokens = [tok_t(t) for t in chunk.target]
    keep = [k for k, (a, b) in enumerate(zip(src_tokens, tgt_tokens))
            if a and b and len(a) <= opts.max_tokens and len(b) <= opts.max_tokens]
    links = [[] for _ in chunk.lines]
    fwd, rev, _ = aligner([" ".join(src_tokens[k]) for k in keep], [" ".join(tgt_tokens[k]) for k in keep], chunk.index)
    for k, fl, rl in zip(keep, fwd, rev):
        links[k] = previous_one_to_one(previous_grow_diag_final_and(_parse(fl), _parse(rl)))
    aligned = AlignedChunk(chunk.index, chunk.corpora, chunk.lines, chunk.source, chunk.target,
                           [" ".join(t) for t in src_tokens], [" ".join(t) for t in tgt_tokens], links)
    assert aligned.src_tokens == src_tokens and aligned.tgt_tokens == tgt_tokens  # the compact form is lossless
    return aligned, (fwd, rev)


def reference_harvest(parallel: Path, inventory_dir: Path, opts: HarvestOptions, aligner=None) -> dict:
    """Stages 1-5 in one process, chunk by chunk, as before; ``links`` holds the alignment output used."""
    aligner = aligner or EflomalAligner(opts.seed)
    corpora = discover_corpora(parallel, opts.src, opts.tgt)
    aligned, links = [], {}
    for chunk in iter_chunks(corpora, opts.src, opts.tgt, opts.chunk_size):
        a, links[chunk.index] = previous_align_chunk(chunk, opts, aligner)
        aligned.append(a)
    totals = sum((count_links(a) for a in aligned), Counter())
    candidates = candidate_words(totals, opts.min_links, opts.min_targets)
    inventory = load_inventory(inventory_dir, [opts.src, opts.tgt])
    words = build_senses(candidates, inventory, opts.src, opts.tgt)
    parts = [select_candidates(a, words, opts.seed, opts.scoring_min_words, opts.scoring_per_sense,
                               opts.translation_pool) for a in aligned]
    scoring = merge_pools((p[0] for p in parts), opts.scoring_per_sense)
    translation = merge_pools((p[1] for p in parts), opts.translation_pool)
    # no German tagger is installed here: the previous noun test fell back to the inventory's POS

    def by_inventory(occs):
        return [words[o.word].sense(o.sense).is_noun for o in occs]

    return {
        "words": words, "candidates": len(candidates), "links": links,
        "scoring": scoring_items(scoring, words, opts.scoring_per_sense),
        "translation": translation_items(translation, words, by_inventory, min_per_sense=opts.translation_min_per_sense,
                                         max_per_sense=opts.translation_max_per_sense,
                                         subtitle_labels=opts.subtitle_labels),
    }


@lru_cache(maxsize=2)
def tatoeba_reference(raw: Path) -> dict:
    """Tatoeba deu-eng through the previous pipeline, eflomal seeded with 0 (shared with test_mucow_harvest)."""
    return reference_harvest(raw / "opus" / "tatoeba" / "deu-eng", raw / "sense-inventory" / "omw-wikt",
                             HarvestOptions("deu", "eng"))


def assert_same_harvest(result, reference: dict) -> None:
    assert result.words == reference["words"]
    assert result.counts["candidate_words"] == reference["candidates"]
    assert result.scoring == reference["scoring"]
    assert result.translation == reference["translation"]


# ----------------------------------------------------------------------------- units


pairs = st.sets(st.tuples(st.integers(0, 7), st.integers(0, 7)), max_size=20)


def _same_symmetrisation(fwd: set, rev: set) -> None:
    links = grow_diag_final_and(set(fwd), set(rev))
    assert links == previous_grow_diag_final_and(set(fwd), set(rev))
    assert one_to_one(links) == previous_one_to_one(links)
    assert one_to_one(set(fwd)) == previous_one_to_one(set(fwd))


# An equality test of an internal rewrite, not a reader of files: 100 random link sets in the
# default run, 1,000 in the slow run (tests/conftest.py: budgets)
@settings(max_examples=100, deadline=None)
@given(pairs, pairs)
def test_symmetrisation_is_the_previous_one(fwd, rev):
    _same_symmetrisation(fwd, rev)


@pytest.mark.slow
@settings(max_examples=1_000, deadline=None)
@given(pairs, pairs)
def test_symmetrisation_is_the_previous_one_long_run(fwd, rev):
    _same_symmetrisation(fwd, rev)


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


def test_fixture_parallel_pieces_give_the_previous_items(monkeypatch):
    """The fixture in three alignment chunks (chunk_size 100), each cut into several pieces, on two worker
    processes: the same words and items as the previous sequential pipeline with the same links."""
    opts = HarvestOptions("deu", "eng", chunk_size=100)
    reference = reference_harvest(OPUS, OMW, opts)
    assert len(reference["links"]) == 3 and reference["scoring"] and reference["translation"]
    monkeypatch.setattr(align_module, "MIN_PIECE", 30)  # read by the client: 100 pairs -> 4 pieces
    result = run_harvest([OPUS], OMW, opts, aligner=FixedAlignment(reference["links"]), workers=2)
    assert_same_harvest(result, reference)
    assert result.alignment == {"aligner": "fixed", "how": "alignment output given in advance", "deterministic": True}


@pytest.mark.realdata
@pytest.mark.slow
def test_tatoeba_parallel_pieces_give_the_previous_items(raw):
    """Tatoeba deu-eng (17,565 pairs: one alignment chunk, four pieces on two workers) given the links
    of the previous pipeline's run: the same words and items."""
    reference = tatoeba_reference(raw)
    assert len(reference["words"]) >= 5 and len(reference["scoring"]) > 50 and len(reference["translation"]) > 20
    result = run_harvest([raw / "opus" / "tatoeba" / "deu-eng"], raw / "sense-inventory" / "omw-wikt",
                         HarvestOptions("deu", "eng"), aligner=FixedAlignment(reference["links"]), workers=2)
    assert pieces_per_chunk(result.counts["sentence_pairs"], 2) == 4
    assert_same_harvest(result, reference)


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

    monkeypatch.setattr("benchsmith.nlp.tag.get_tagger", get_tagger)
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
