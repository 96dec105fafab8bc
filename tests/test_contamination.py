"""``benchsmith contamination``: planted overlaps found exactly (items and positions) at 13-grams
and shorter n, nothing in clean text, normalisation (case, punctuation, width, CJK), every
reader, the gate, another release as a source, the local Hub, local processes and a real
Dask cluster giving the same report as one process."""

from __future__ import annotations

import contextlib
import io
import json
import pickle
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import datasets
import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from conftest import one_json, run_cli
from hypothesis import given
from hypothesis import strategies as st

from benchsmith import progress
from benchsmith.builder import Builder, Config, register, unregister
from benchsmith.cli import main
from benchsmith.errors import ParseError
from benchsmith.policy import Policy
from benchsmith.release import Release
from benchsmith.validation.contamination import corpus, scan, task
from benchsmith.validation.contamination.ngrams import Item, ItemIndex, normalise

LONG = "The quick brown fox jumps over the lazy dog while the old farmer sleeps under a tree"  # 17 words
SHORT = "The man turned on the faucet."  # 6 words: matched whole
TINY = "He laughed."  # 2 words: too short to match
ZH = "我们明天一起去公园散步吧"  # 12 characters

ITEMS = {
    "test": [("t-long", LONG, "She smiled at him.", "It rained all day long."),
             ("t-short", SHORT, "The sink filled with water.", "Water flowed from the spout."),
             ("t-tiny", TINY, "Yes.", "No.")],
    "train": [("tr-1", "A completely different training premise about boats", "Row.", "Sail.")],
}


class Planted(Builder):
    name = "planted"
    description = "Items for the contamination tests."
    release_notes = {"1.0.0": "first", "1.1.0": "t-short moves from train to test"}  # noqa: RUF012
    license = "CC0-1.0"
    sources = ()

    def configs(self):
        mc = datasets.Features({"id": datasets.Value("string"), "premise": datasets.Value("string"),
                                "choice1": datasets.Value("string"), "choice2": datasets.Value("string"),
                                "label": datasets.ClassLabel(names=["choice1", "choice2"])})
        zh = datasets.Features({"id": datasets.Value("string"), "text": datasets.Value("string")})
        return [
            Config("mc", "multiple choice", mc, ("train", "test"), policy=Policy(
                task="multiple_choice", choices=("choice1", "choice2"), context=("premise",), label="label",
                contamination_fields=("premise", "choice1", "choice2"),
                contamination_by_design=("by-design-*.txt",), contamination_against=("otherset",))),
            Config("zh", "chinese", zh, ("test",), ("zh",),
                   policy=Policy(label=None, contamination_against=("otherset",))),
        ]

    def examples(self, config: Config, split: str, sources) -> Iterator[dict]:
        if config.name == "zh":
            yield {"id": "zh-1", "text": ZH}
            return
        items = ITEMS[split]
        if self.version == "1.0.0":  # t-short was a training item
            moving = [i for i in ITEMS["test"] if i[0] == "t-short"]
            items = [i for i in items if i[0] != "t-short"] + (moving if split == "train" else [])
        for ident, premise, c1, c2 in items:
            yield {"id": ident, "premise": premise, "choice1": c1, "choice2": c2, "label": 0}


class Other(Builder):
    """Another dataset in the same registry, whose test holds the long premise."""

    name = "otherset"
    description = "Another benchmark."
    release_notes = {"1.0.0": "first"}  # noqa: RUF012
    license = "CC0-1.0"
    sources = ()

    def configs(self):
        return [Config("default", "sentences", datasets.Features(
            {"id": datasets.Value("string"), "sentence": datasets.Value("string")}), ("test",),
            policy=Policy(label=None))]

    def examples(self, config: Config, split: str, sources) -> Iterator[dict]:
        yield {"id": "o-1", "sentence": f"Once upon a time: {LONG}."}
        yield {"id": "o-2", "sentence": "Nothing to see in this one, it is a plain sentence."}
        # the 6-word test premise SHORT, whole, at the start of a sentence: too little evidence to gate on
        yield {"id": "o-3", "sentence": f"{SHORT} Then he washed the dishes."}


@pytest.fixture(scope="module")
def release(tmp_path_factory) -> Iterator[Release]:
    reg = tmp_path_factory.mktemp("contamreg")
    register(Planted)
    register(Other)
    progress.set_enabled(False)
    try:
        with pytest.MonkeyPatch.context() as mp, contextlib.redirect_stdout(io.StringIO()):
            mp.setenv("BENCHSMITH_HOME", str(tmp_path_factory.mktemp("bshome")))
            assert main(["-q", "build", "planted", "--registry", str(reg)]) == 0
            assert main(["-q", "build", "planted", "--version", "1.0.0", "--registry", str(reg)]) == 0
            assert main(["-q", "build", "otherset", "--registry", str(reg)]) == 0
        yield Release(reg / "planted" / "1.1.0")
    finally:
        unregister("planted")
        unregister("otherset")
        progress.set_enabled(None)


CLEAN = [
    "A quick dog and a brown fox were lazy over the tree while jumps sleeps.",  # the words, not in order
    "The man turned the faucet on.",  # the short premise's words, another order
    "The man turned on the",  # five of its six words
    "我们明天一起去公园",  # a prefix of the Chinese item
    "He laughed. Yes. No.",  # too short to count
]


def scan_text(release: Release, lines: list[str], tmp: Path, *, ngram: int = 13, name: str = "corpus.txt",
              **kw) -> dict:
    path = tmp / name
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    parts, sources = scan.source_parts([str(path)], **kw)
    index = scan.build_index(release, ngram=ngram)
    counts, locations, n, per_source, ran = scan.run(index, parts, workers=1)
    return scan.report(release, index, counts, locations, sources=sources, lines=n, seconds=1.0, ran=ran,
                       per_source=per_source)


def found(rep: dict) -> dict[str, set[tuple[int, int, str, int]]]:
    """item id -> {(line, word, matched field, n)} of its kept locations."""
    return {it["id"]: {(loc["line"], loc["word"], loc["item_field"], loc["n"]) for loc in it["locations"]}
            for it in rep["items"]}


def test_normalise_case_punctuation_width_and_cjk():
    assert normalise("The MAN, turned-on the faucet!!") == ["the", "man", "turned", "on", "the", "faucet"]
    assert normalise("ＴＨＥ Ｍａｎ") == ["the", "man"]  # full-width letters (NFKC)
    assert normalise("Straße") == normalise("STRASSE")  # case folding, not lower()
    assert normalise("x我们走吧y") == ["x", "我", "们", "走", "吧", "y"]
    assert normalise("don't") == ["don", "t"]


def test_planted_13_grams_and_short_fields_found_exactly(release, tmp_path):
    lines = [*CLEAN,
             f"noise words here {LONG.upper()}!!! and more",  # line 6: the 16-word premise at word 3
             f"she said: {SHORT.lower().rstrip('.')}, then left",  # line 7: the 6-word premise at word 2
             f"今天{ZH}。"]  # line 8: the Chinese item inside other characters, at token 2
    rep = scan_text(release, lines, tmp_path)
    got = found(rep)
    # 17 words give five 13-grams (at words 3 to 7 of the line)
    assert got["t-long"] == {(6, w, "premise", 13) for w in (3, 4, 5, 6, 7)}
    assert {it["id"]: it["matches"] for it in rep["items"]} == {"t-long": 5, "t-short": 1, "zh-1": 1}
    assert got["t-short"] == {(7, 2, "premise", 6)}
    assert got["zh-1"] == {(8, 2, "text", 12)}
    loc = next(it for it in rep["items"] if it["id"] == "t-long")["locations"][0]
    assert loc["ngram"] == "the quick brown fox jumps over the lazy dog while the old farmer"
    assert loc["file"] == str(tmp_path / "corpus.txt")
    rates = {(r["config"], r["split"]): (r["contaminated"], r["items"], r["status"]) for r in rep["splits"]}
    assert rates == {("mc", "train"): (0, 1, "pass"), ("mc", "test"): (2, 3, "fail"), ("zh", "test"): (1, 1, "fail")}
    # values under 5 words (TINY, "Yes.", "No.", "She smiled at him.") are not matched; the report counts them
    assert next(r for r in rep["splits"] if r["split"] == "test" and r["config"] == "mc")["too_short"] == 4


def test_planted_at_a_shorter_n(release, tmp_path):
    lines = [*CLEAN, f"x {LONG} y", f"{ZH}"]
    rep = scan_text(release, lines, tmp_path, ngram=8)
    got = found(rep)
    # 17 words: ten 8-grams, the first five locations kept in line order; the count has all ten
    assert got["t-long"] == {(6, w, "premise", 8) for w in range(1, 6)}
    assert {it["id"]: it["matches"] for it in rep["items"]}["t-long"] == 10
    # 12 characters: five 8-grams on line 7; at n=8 the 9-character prefix in CLEAN (line 4) holds two
    assert got["zh-1"] == {(4, 0, "text", 8), (4, 1, "text", 8), (7, 0, "text", 8), (7, 1, "text", 8), (7, 2, "text", 8)}
    assert {it["id"]: it["matches"] for it in rep["items"]}["zh-1"] == 7
    # the 6-word premise is shorter than 8: still matched whole, and it is not in these lines
    assert "t-short" not in got


def test_clean_text_has_no_match(release, tmp_path):
    rep = scan_text(release, CLEAN * 50, tmp_path)
    assert rep["items"] == []
    assert all(r["contaminated"] == 0 and r["status"] == "pass" for r in rep["splits"])
    assert rep["lines"] == len(CLEAN) * 50


def test_by_design_overlap_is_reported_not_gated(release, tmp_path):
    rep = scan_text(release, [SHORT], tmp_path, name="by-design-copa.txt")
    row = next(r for r in rep["splits"] if r["config"] == "mc" and r["split"] == "test")
    assert (row["contaminated"], row["gated"], row["status"]) == (1, 0, "pass")
    assert rep["passed"] and rep["items"][0]["by_design"]


def test_readers_locate_lines_and_rows(release, tmp_path):
    (tmp_path / "a.jsonl").write_text(json.dumps({"body": "nothing"}) + "\n\n" + json.dumps({"body": SHORT, "text": "x"})
                                      + "\n", encoding="utf-8")
    (tmp_path / "b.csv").write_text(f'id,story\n1,"clean, quoted\nover two lines"\n2,"{SHORT}"\n', encoding="utf-8")
    pq.write_table(pa.table({"text": ["a", "b", LONG]}), tmp_path / "c.parquet", row_group_size=2)
    for name, field, where in (("a.jsonl", "body", 3), ("b.csv", "story", 4), ("c.parquet", "text", 2)):
        parts, _ = scan.source_parts([str(tmp_path / name)], text_fields=(field,))
        index = scan.build_index(release)
        _, locations, *_ = scan.run(index, parts, workers=1)
        lines = {loc.get("line", loc.get("row")) for locs in locations.values() for loc in locs}
        assert lines == {where}, name
        assert all(("row" in loc) == (name == "c.parquet") for locs in locations.values() for loc in locs)


def test_a_bad_corpus_is_one_line_naming_file_and_line(release, tmp_path, capsys):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"text": "fine"}\n{"text": broken\n', encoding="utf-8")
    code, _, err = run_cli(capsys, "contamination", str(release.path), "--against", str(bad))
    assert code == 2 and f"{bad}:2: not a JSON object" in err and len(err.strip().splitlines()) == 1
    for missing in (str(tmp_path / "none*.txt"), "missing.txt"):
        code, _, err = run_cli(capsys, "contamination", str(release.path), "--against", missing)
        assert code == 2 and "no corpus file matches" in err
    code, _, err = run_cli(capsys, "contamination", str(release.path), "--against", "nosuchset/1.0.0")
    assert code == 2 and "no release of 'nosuchset'" in err
    latin = tmp_path / "latin1.txt"
    latin.write_bytes(b"fine\nno\xe9l\n")
    with pytest.raises(ParseError) as exc:
        list(corpus.batches(corpus.file_parts("x", [str(latin)], ())[0]))
    assert exc.value.line == 2


def test_cli_gate_json_and_markdown(release, tmp_path, capsys):
    path = tmp_path / "web.txt"
    path.write_text(f"{CLEAN[0]}\n{LONG}\n", encoding="utf-8")
    code, out, _ = run_cli(capsys, "contamination", str(release.path), "--against", str(path), "--json")
    rep = one_json(out)
    assert code == 1 and rep["failed"] == ["mc/test"] and rep["items"][0]["id"] == "t-long"
    code, out, _ = run_cli(capsys, "contamination", str(release.path), "--against", str(path), "--markdown")
    assert code == 1 and "| mc | test | 3 | 1 | 33.33% |" in out and "'t-long'" in out
    clean = tmp_path / "clean.txt"
    clean.write_text("\n".join(CLEAN) + "\n", encoding="utf-8")
    code, out, _ = run_cli(capsys, "contamination", str(release.path), "--against", str(clean), "--json")
    assert code == 0 and one_json(out)["passed"]


def test_the_terminal_view_starts_with_the_verdict_and_lists_only_what_was_found(release, tmp_path, capsys):
    path = tmp_path / "web.txt"
    path.write_text(f"{CLEAN[0]}\n{LONG}\n", encoding="utf-8")
    code, out, _ = run_cli(capsys, "contamination", str(release.path), "--against", str(path))
    lines = out.splitlines()
    assert code == 1 and lines[0] == "contamination of planted/1.1.0 (13-grams): fail: 1 item(s) found in 1 of 3 splits"
    assert [line for line in lines if line.startswith("│")] == [  # the clean splits are not listed
        next(line for line in lines if "1 of 3 (33.33%)" in line)]
    assert any(line.startswith("`mc/test` 't-long' (5 match(es)): premise \"the quick brown fox") for line in lines), out
    clean = tmp_path / "clean.txt"
    clean.write_text("\n".join(CLEAN) + "\n", encoding="utf-8")
    code, out, _ = run_cli(capsys, "contamination", str(release.path), "--against", str(clean))
    assert code == 0 and out.splitlines()[0].endswith(": pass: 0 item(s) found in 0 of 3 splits")
    assert "splits with contaminated items" not in out


def test_another_release_is_a_source(release, tmp_path):
    parts, sources = scan.source_parts([str(release.path)])
    assert sources[0]["source"] == "planted/1.1.0" and sources[0]["kind"] == "release"
    index = scan.build_index(release)
    counts, locations, *_ = scan.run(index, parts, workers=1)
    # against itself every matchable item is found, located by release, config, split, item id and field
    assert {index.items[i].id for i in counts} == {"t-long", "t-short", "tr-1", "zh-1"}
    loc = locations[next(i for i in counts if index.items[i].id == "t-short")][0]
    assert (loc["file"], loc["id"], loc["field"]) == ("planted/1.1.0/mc/test", "t-short", "premise")
    assert "line" not in loc


def test_partitions_and_processes_give_the_one_process_report(release, tmp_path):
    lines = [f"filler line {i} with some words" for i in range(3000)]
    lines[1234] = LONG
    lines[2999] = SHORT
    path = tmp_path / "big.txt"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    parts, _ = scan.source_parts([str(path)], chunk=4096)
    assert len(parts) > 10
    index = scan.build_index(release)
    one = scan.run(index, parts, workers=1)
    many = scan.run(index, parts, workers=2)
    assert one[:3] == many[:3] and many[4] == "2 local processes"
    assert {loc["line"] for locs in one[1].values() for loc in locs} == {1235, 3000}



@given(lines=st.lists(st.text(st.characters(codec="utf-8", exclude_characters="\n\r"), max_size=40), max_size=60),
       trailing=st.booleans(), chunk=st.integers(1, 200))
def test_byte_partitions_cover_every_line_once(tmp_path_factory, lines, trailing, chunk):
    """Cut at any size (a line longer than a chunk included), the partitions of a text file tile it
    at line starts, and the lines read through them are the file's lines, each once, numbered."""
    path = tmp_path_factory.mktemp("cut") / "c.txt"
    text = "\n".join(lines) + ("\n" if trailing and lines else "")
    path.write_bytes(text.encode("utf-8"))
    parts = corpus.file_parts("x", [str(path)], (), chunk)
    raw = path.read_bytes()
    bounds = [0] + [p.end for p in parts]
    assert [p.start for p in parts] == bounds[:-1] and bounds[-1] == len(raw)
    assert all(p.start == 0 or raw[p.start - 1 : p.start] == b"\n" for p in parts)
    got = [(n, t.rstrip("\n")) for p in parts for texts, where in corpus.batches(p)
           for t, n in zip(texts.to_pylist(), where)]
    expected = text.removesuffix("\n").split("\n") if text else []
    assert got == list(enumerate(expected, 1))

def test_index_verifies_hash_hits():
    """A forced hash collision (every word hashes alike) never reports a match."""

    class Colliding(ItemIndex):
        def _word_hashes(self, tokens) -> np.ndarray:
            return np.full(len(tokens.starts), 7, dtype=np.uint64)

    index = Colliding(ngram=3, min_tokens=3)
    index.add_item(Item("c", "test", 0, "x"), [("f", "alpha beta gamma")])
    index.freeze()
    hits = index.scan(["gamma beta alpha", "x alpha beta gamma", "beta beta beta"])
    assert [(h.line, h.word) for h in hits] == [(1, 1)]


def test_hub_dataset_source(release, tmp_path, monkeypatch):
    from hub_server import LocalHub, go_online
    from huggingface_hub import HfApi

    go_online(monkeypatch)
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hfcache"))
    monkeypatch.setattr("huggingface_hub.constants.HF_HUB_CACHE", str(tmp_path / "hfcache"))
    data = tmp_path / "repo"
    (data / "en").mkdir(parents=True)
    (data / "fr").mkdir()
    pq.write_table(pa.table({"sentence": ["clean", f"so {SHORT}"], "other": ["a", "b"]}), data / "en" / "train.parquet")
    pq.write_table(pa.table({"sentence": [LONG]}), data / "fr" / "train.parquet")
    with LocalHub() as hub:
        monkeypatch.setenv("HF_ENDPOINT", hub.url)
        api = HfApi(endpoint=hub.url)
        api.create_repo("org/corpus", repo_type="dataset")
        api.upload_folder(folder_path=str(data), repo_id="org/corpus", repo_type="dataset")
        spec = "hf://datasets/org/corpus@main?config=en&field=sentence"
        parts, sources = scan.source_parts([spec])
        index = scan.build_index(release)
        _, locations, n, *_ = scan.run(index, parts, workers=1)
    assert n == 2 and sources[0]["kind"] == "hub"
    assert [(index.items[i].id, locs[0]["file"], locs[0]["row"]) for i, locs in locations.items()] == [
        ("t-short", "hf://datasets/org/corpus@main/en/train.parquet", 1)]


def _dask_equals_local(release: Release, tmp_path: Path, processes: bool) -> None:
    from dask.distributed import LocalCluster

    lines = [f"filler {i}" for i in range(500)] + [LONG, SHORT, ZH]
    path = tmp_path / "d.txt"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    parts, _ = scan.source_parts([str(path)], chunk=1024)
    index = scan.build_index(release)
    local = scan.run(index, parts, workers=1)
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=processes, dashboard_address=":0") as cluster:
        remote = scan.run(index, parts, scheduler=cluster.scheduler_address)
    assert remote[:3] == local[:3] and "2 workers" in remote[4]
    assert len(local[0]) == 3


@pytest.mark.slow
def test_dask_cluster_of_processes_gives_the_local_report(release, tmp_path):
    """A real local cluster (scheduler + 2 worker processes over TCP): ~25 s on the shared machine."""
    _dask_equals_local(release, tmp_path, processes=True)


def test_dask_cluster_in_process_gives_the_local_report(release, tmp_path):
    """The default run's stand-in: the same scheduler, scatter and map with in-process workers."""
    _dask_equals_local(release, tmp_path, processes=False)


def test_workers_with_dask_s_slow_defaults_are_named(release, tmp_path, caplog, monkeypatch):
    """Dask's default profiler (and a nanny's MALLOC_TRIM_THRESHOLD_) roughly double a scan's CPU:
    the scan names them in one warning; workers configured as docs/commands.md says get none."""
    import dask
    from dask.distributed import LocalCluster

    monkeypatch.delenv("MALLOC_TRIM_THRESHOLD_", raising=False)  # a nanny of an earlier test may have set it
    path = tmp_path / "d.txt"
    path.write_text(f"filler\n{LONG}\n", encoding="utf-8")
    parts, _ = scan.source_parts([str(path)])
    index = scan.build_index(release)
    warned = {}
    with LocalCluster(n_workers=1, threads_per_worker=1, processes=False, dashboard_address=":0") as cluster:
        for profiler in (True, False):
            caplog.clear()
            with dask.config.set({"distributed.worker.profile.enabled": profiler}):
                counts, *_ = scan.run(index, parts, scheduler=cluster.scheduler_address)
            assert len(counts) == 1
            warned[profiler] = [r.getMessage() for r in caplog.records if r.name == scan.__name__]
    assert warned[True] == ["the Dask workers' profiler can double a scan's time (docs/commands.md)"]
    assert warned[False] == []


def test_a_worker_scans_without_importing_datasets(release, tmp_path):
    """What a fresh Dask worker does before its first task (unpickle the index, the partition and
    the task function, then run it) imports numpy and pyarrow, not ``datasets`` (a second a worker)."""
    path = tmp_path / "c.txt"
    path.write_text(f"filler\n{LONG}\n", encoding="utf-8")
    parts, _ = scan.source_parts([str(path)])
    shipped = tmp_path / "task.pickle"
    shipped.write_bytes(pickle.dumps((task.scan_part, parts[0], scan.build_index(release).for_workers())))
    code = ("import pickle, sys; f, part, index = pickle.load(open(sys.argv[1], 'rb')); r = f(part, index); "
            "print(r.lines, len(r.counts), sorted(m for m in ('datasets', 'pandas', 'scipy') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code, str(shipped)], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["2", "1", "[]"]


def test_an_unreachable_scheduler_is_one_line(release, tmp_path, capsys):
    from hub_server import closed_port

    path = tmp_path / "c.txt"
    path.write_text("x\n", encoding="utf-8")
    code, _, err = run_cli(capsys, "contamination", str(release.path), "--against", str(path),
                           "--scheduler", f"tcp://127.0.0.1:{closed_port()}")
    assert code == 2 and "cannot reach the Dask scheduler" in err and len(err.strip().splitlines()) == 1


def test_validate_checks_the_declared_releases_and_the_previous_version(release, capsys):
    """The long premise inside otherset fails the gate; the 6-word premise that otherset holds
    whole (o-3) is under the policy's contamination_min_words (8) and is not counted."""
    code, out, _ = run_cli(capsys, "validate", str(release.path), "--baselines", "none", "--json")
    got = {(r["config"], r["summary"].split(":")[0]): r for r in one_json(out)["results"] if r["check"] == "contamination"}
    assert code == 1
    against = got[("mc", "checked against otherset/1.0.0")]
    assert against["status"] == "fail" and "test 33.3% (1/3)" in against["summary"]
    assert got[("zh", "checked against otherset/1.0.0")]["status"] == "pass"
    moved = got[("mc", "items moved between splits since 1.0.0")]
    assert moved["status"] == "fail" and moved["summary"].endswith("1 train->test")
    report = json.loads((release.reports_dir / "validation.json").read_text())
    details = next(r for r in report["results"] if r["check"] == "contamination" and r["status"] == "fail"
                   and "moved" not in r["summary"])["details"]
    assert details["items"][0]["id"] == "t-long" and details["items"][0]["locations"][0]["file"] == \
        "otherset/1.0.0/default/test"
    card = (release.path / "README.md").read_text(encoding="utf-8")
    assert "- Contamination: checked against otherset/1.0.0: 25.0% of test items (1 of 4) share a 13-gram" in card
    page = (release.reports_dir / "validation.html").read_text(encoding="utf-8")
    assert "<h2>Contamination</h2>" in page and "<td>33.33%</td>" in page


def test_validate_checks_only_what_the_policy_declares(release, capsys):
    """otherset declares no contamination_against: planted, in the same registry and sharing its
    sentence, is not checked, so the verdict does not depend on what else is built there."""
    other = release.path.parent.parent / "otherset" / "1.0.0"
    code, out, _ = run_cli(capsys, "validate", str(other), "--baselines", "none", "--json")
    found = [r for r in one_json(out)["results"] if r["check"] == "contamination"]
    assert code == 0 and [r["status"] for r in found] == ["skip"]
    assert "contamination_against" in found[0]["summary"]


def test_a_declared_dataset_missing_from_the_registry_is_named(release, tmp_path, capsys):
    copy = tmp_path / "reg" / "planted" / "1.1.0"
    shutil.copytree(release.path, copy)
    _, out, _ = run_cli(capsys, "validate", str(copy), "--baselines", "none", "--json")
    found = [r for r in one_json(out)["results"] if r["check"] == "contamination"]
    assert any(r["status"] == "skip" and "otherset, which has no release" in r["summary"] for r in found)


def test_shipped_lm_eval_tasks_decontaminate(release):
    import yaml

    task = yaml.safe_load((release.path / "lm_eval" / "mc.yaml").read_text(encoding="utf-8"))
    assert task["should_decontaminate"] is True
    assert task["doc_to_decontamination_query"] == "{{premise}} {{choice1}} {{choice2}}"


def test_near_duplicates_are_an_option_found_and_verified(release, tmp_path, capsys):
    near = LONG.replace("lazy", "sleepy")  # word 8 of 17: every 13-gram of the item holds it
    path = tmp_path / "near.txt"
    path.write_text(f"{CLEAN[0]}\n{near}\n{CLEAN[1]}\n", encoding="utf-8")
    code, out, _ = run_cli(capsys, "contamination", str(release.path), "--against", str(path), "--json")
    assert code == 0 and one_json(out)["items"] == []
    code, out, _ = run_cli(capsys, "contamination", str(release.path), "--against", str(path), "--json",
                           "--near-dup", "0.8")
    rep = one_json(out)
    assert code == 1 and [(it["id"], it["locations"][0]["line"]) for it in rep["items"]] == [("t-long", 2)]
    assert 0.8 <= rep["items"][0]["locations"][0]["jaccard"] < 1.0 and rep["near_duplicates"] == 0.8


@pytest.mark.parametrize("damage", ["garbled", "truncated"])
def test_a_release_with_a_corrupt_shard_is_one_parse_error(release, tmp_path, capsys, damage):
    """--against a copy of the release whose test shard is damaged: exit 2 naming the shard,
    never a traceback or an environment fault (exit 3)."""
    import shutil

    other = tmp_path / "planted" / "1.1.0"
    shutil.copytree(release.path, other)
    shard = next((other / "data" / "mc").glob("test-*.parquet"))
    data = shard.read_bytes()
    if damage == "garbled":
        middle = len(data) // 2
        shard.write_bytes(data[:8] + bytes(b ^ 0x5A for b in data[8:middle]) + data[middle:])
    else:
        shard.write_bytes(data[: len(data) // 2])
    code, out, err = run_cli(capsys, "contamination", str(release.path), "--against", str(other))
    assert code == 2 and out == "" and "Traceback" not in err, err
    assert len(err.strip().splitlines()) == 1 and str(shard) in err and "parquet" in err.lower(), err
