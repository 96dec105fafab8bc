"""What the command line says, as a user reads it (issue 15): messages name the real dataset,
`sources --checksums` does not warn about what it registers, a GitHub-zip source layout is
accepted or refused in one line, suggestions ignore case, skipped splits read as prose, an audit
of a published version has one outcome, and a harvest's card and drift say what is true."""

from __future__ import annotations

import json
import logging
import shutil
from pathlib import Path

import pytest
from conftest import one_json, run_cli
from toy_builder import FIXTURES, RegisteredToyBuilder, ToyBuilder

from benchsmith.builder import register, unregister

PLACEHOLDERS = ("sources NAME", "DATASET", "<name>")


@pytest.fixture
def toy():
    register(ToyBuilder)
    yield ToyBuilder
    unregister("toy")


@pytest.fixture
def source_log():
    """benchsmith.source logs at WARNING (other tests' helpers silence it for unregistered fixtures);
    main() routes warnings to stderr as ``WARNING benchsmith.source: ...``."""
    logger = logging.getLogger("benchsmith.source")
    level = logger.level
    logger.setLevel(logging.WARNING)
    yield
    logger.setLevel(level)


def _warnings(err: str) -> list[str]:
    return [ln.split(": ", 1)[1] for ln in err.splitlines() if ln.startswith("WARNING benchsmith.source:")]


def _one_line_error(code: int, out: str, err: str) -> str:
    assert code == 2 and out == "", (code, out, err)
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in err, err
    assert not any(p in err for p in PLACEHOLDERS), err
    return lines[0]


def _toy_sources(tmp_path: Path, layout: str = "items.tsv") -> Path:
    """A --sources folder holding the toy's items.tsv at ``toy/<layout>``."""
    root = tmp_path / "raw"
    (root / "toy" / layout).parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(FIXTURES / "toy" / "items.tsv", root / "toy" / layout)
    return root


# ----------------------------------------------------------------------------- no literal placeholders


def test_a_missing_source_names_the_dataset_to_ask(capsys, toy, tmp_path):
    (tmp_path / "raw" / "toy").mkdir(parents=True)
    line = _one_line_error(*run_cli(capsys, "build", "toy", "--sources", str(tmp_path / "raw"),
                                    "--registry", str(tmp_path / "reg")))
    assert "source 'toy' is missing 'items.tsv'" in line and "`benchsmith sources toy`" in line
    line = _one_line_error(*run_cli(capsys, "build", "toy", "--sources", str(tmp_path / "nowhere"),
                                    "--registry", str(tmp_path / "reg")))
    assert "no folder for source 'toy'" in line and "`benchsmith sources toy` lists the files" in line


def test_a_checksum_mismatch_names_the_dataset_and_the_folder_to_register(capsys, tmp_path):
    tables = tmp_path / "tables"
    tables.mkdir()
    (tables / "checksums.tsv").write_text("source\tpath\tsize\tsha256\ntoy\titems.tsv\t1\t" + "0" * 64 + "\n",
                                          encoding="utf-8")

    class Registered(ToyBuilder):
        @classmethod
        def data_path(cls, filename: str) -> Path:
            return tables / filename

    register(Registered)
    try:
        raw = _toy_sources(tmp_path)
        line = _one_line_error(*run_cli(capsys, "build", "toy", "--sources", str(raw),
                                        "--registry", str(tmp_path / "reg")))
        assert "sha256 mismatch for source 'toy'" in line
        assert "(see `benchsmith sources toy`)" in line and f"`benchsmith sources toy --checksums {raw}`" in line
    finally:
        unregister("toy")


def test_a_malformed_checksums_table_names_its_dataset(tmp_path):
    from benchsmith.errors import SourceError
    from benchsmith.source import read_checksums

    path = tmp_path / "xcopa" / "checksums.tsv"
    path.parent.mkdir()
    path.write_text("source\tpath\n", encoding="utf-8")
    with pytest.raises(SourceError, match=r"`benchsmith sources xcopa --checksums DIR --write`"):
        read_checksums(path)
    with pytest.raises(SourceError, match=r"`benchsmith sources comve --checksums DIR --write`"):
        read_checksums(path, dataset="comve")


def test_no_message_of_the_source_module_keeps_a_placeholder():
    from benchsmith import source

    text = Path(source.__file__).read_text(encoding="utf-8")
    code = text.split('"""', 2)[2]  # after the module docstring
    assert "sources NAME" not in code
    from benchsmith.loaders import rawfile

    assert "sources NAME" not in Path(rawfile.__file__).read_text(encoding="utf-8")


# ----------------------------------------------------------------------------- checksums, unregistered files


def test_checksums_prints_the_lines_and_no_false_warnings(capsys, toy, source_log):
    code, out, err = run_cli(capsys, "sources", "toy", "--checksums", str(FIXTURES))
    assert code == 0
    assert out.splitlines()[1].startswith("toy\titems.tsv\t")
    assert _warnings(err) == [] and "recorded in release.json" not in err
    assert "absent: toy/extra.tsv" in err  # the optional file it did not find is still named


def test_a_build_warns_once_per_source_about_unregistered_files(capsys, toy, tmp_path, source_log):
    code, _, err = run_cli(capsys, "build", "toy", "--sources", str(FIXTURES), "--registry", str(tmp_path))
    assert code == 0, err
    (msg,) = _warnings(err)
    assert msg.startswith("source toy: 1 file without a registered sha256 (items.tsv)")
    assert f"`benchsmith sources toy --checksums {FIXTURES}`" in msg


# ----------------------------------------------------------------------------- GitHub-zip layout


def test_a_github_zip_layout_is_accepted(capsys, toy, tmp_path):
    raw = _toy_sources(tmp_path, "toy-main/items.tsv")
    (raw / "toy" / "__MACOSX").mkdir()  # a stray folder beside it does not matter
    code, _, err = run_cli(capsys, "build", "toy", "--sources", str(raw), "--registry", str(tmp_path / "a"),
                             "--json")
    assert code == 0, err
    flat = _toy_sources(tmp_path / "flat")
    assert run_cli(capsys, "build", "toy", "--sources", str(flat), "--registry", str(tmp_path / "b"),
                   "--json")[0] == 0
    a = json.loads((tmp_path / "a" / "toy" / "1.1.0" / "release.json").read_text(encoding="utf-8"))
    b = json.loads((tmp_path / "b" / "toy" / "1.1.0" / "release.json").read_text(encoding="utf-8"))
    assert a["sources"] == b["sources"] and str(tmp_path) not in json.dumps(a)
    fp = {c: {s: i["fingerprint"] for s, i in v["splits"].items()} for c, v in a["configs"].items()}
    assert fp == {c: {s: i["fingerprint"] for s, i in v["splits"].items()} for c, v in b["configs"].items()}


def test_two_extracted_downloads_side_by_side_are_one_line_error(capsys, toy, tmp_path):
    raw = _toy_sources(tmp_path, "toy-main/items.tsv")
    shutil.copytree(raw / "toy" / "toy-main", raw / "toy" / "toy-master")
    for extra in ([], ["--skip-missing"]):
        line = _one_line_error(*run_cli(capsys, "build", "toy", "--sources", str(raw),
                                        "--registry", str(tmp_path / "reg"), *extra))
        assert "2 folders in it have them (toy-main, toy-master)" in line
        assert "a single top folder as a GitHub zip extracts" in line


def test_a_top_folder_without_the_files_is_named_in_the_error(capsys, toy, tmp_path):
    (tmp_path / "raw" / "toy" / "toy-main" / "docs").mkdir(parents=True)
    line = _one_line_error(*run_cli(capsys, "build", "toy", "--sources", str(tmp_path / "raw"),
                                    "--registry", str(tmp_path / "reg")))
    assert "is missing 'items.tsv' (nor under its folder toy-main/" in line


# ----------------------------------------------------------------------------- names, skipped splits, audit


def test_did_you_mean_ignores_case_on_the_command_line(capsys, tmp_path):
    line = _one_line_error(*run_cli(capsys, "build", "XCOPA"))
    assert "unknown dataset 'XCOPA'. Did you mean 'xcopa'?" in line
    (tmp_path / ".staging").mkdir()
    (tmp_path / "xcopa").mkdir()
    line = _one_line_error(*run_cli(capsys, "show", "nothing", "--registry", str(tmp_path)))
    assert ".staging" not in line
    assert "`benchsmith build nothing`" not in line and "No dataset is named 'nothing'" in line
    line = _one_line_error(*run_cli(capsys, "show", "XCOPA", "--registry", str(tmp_path)))
    assert "Did you mean 'xcopa'?" in line
    line = _one_line_error(*run_cli(capsys, "show", "comve", "--registry", str(tmp_path)))
    assert "Build it with `benchsmith build comve`" in line


class _TestFromExtra(ToyBuilder):
    """The toy, its test split read from the optional extra.tsv (absent from the fixture)."""

    def examples(self, config, split, sources):
        if split == "test":
            sources.path("toy", "extra.tsv")
        yield from super().examples(config, split, sources)


def test_a_skipped_split_reads_as_prose(capsys, tmp_path):
    register(_TestFromExtra)
    try:
        code, out, err = run_cli(capsys, "build", "toy", "--sources", str(FIXTURES), "--registry", str(tmp_path),
                                 "--skip-missing")
    finally:
        unregister("toy")
    assert code == 0, err
    (line,) = [ln for ln in out.splitlines() if ln.startswith("skipped")]
    assert line == "skipped plain: test: source file 'extra.tsv' of 'toy' is missing"
    assert "{" not in line


def test_an_audit_of_the_published_version_has_one_outcome(capsys, toy, tmp_path):
    register(RegisteredToyBuilder)  # publishable: its source's checksum is registered
    reg = tmp_path / "reg"
    assert run_cli(capsys, "-q", "build", "toy", "--sources", str(FIXTURES), "--registry", str(reg))[0] == 0
    release = reg / "toy" / "1.1.0"
    assert run_cli(capsys, "-q", "validate", str(release), "--near-dup-threshold", "0.95",
                   "--baselines", "none")[0] == 0
    assert run_cli(capsys, "publish", str(release), "--registry", str(reg))[0] == 0
    code, out, err = run_cli(capsys, "-q", "audit", "toy", "--sources", str(FIXTURES), "--registry", str(reg),
                             "--near-dup-threshold", "0.95", "--baselines", "none")
    assert code == 0, err
    assert f"identical to the published release, verified: {release}" in out
    assert "not committed" not in out and "committed to" not in out
    # the report it names outlives the staged build (kept beside the published release)
    (report,) = [ln.removeprefix("report: ") for ln in out.splitlines() if ln.startswith("report: ")]
    assert Path(report).is_file() and Path(report).parent == reg / "toy" / ".reports" / "1.1.0" / "audit"
    assert ".staging" not in report


def test_an_audit_that_commits_names_the_committed_report(capsys, toy, tmp_path):
    reg = tmp_path / "reg"
    code, out, err = run_cli(capsys, "-q", "audit", "toy", "--sources", str(FIXTURES), "--registry", str(reg),
                             "--near-dup-threshold", "0.95", "--baselines", "none")
    assert code == 0, err
    assert f"committed to {reg / 'toy' / '1.1.0'}" in out
    (report,) = [ln.removeprefix("report: ") for ln in out.splitlines() if ln.startswith("report: ")]
    assert Path(report) == reg / "toy" / "1.1.0" / "reports" / "validation.html" and Path(report).is_file()


# ----------------------------------------------------------------------------- harvests


@pytest.fixture(scope="module")
def harvests(toy_harvest, toy_harvest_again):
    """Two harvests of the toy corpus with the same inputs and seed, the second on one worker
    (tests/conftest.py: both shared read-only; the worker count changes no byte of a harvest)."""
    return [toy_harvest, toy_harvest_again]


def test_a_harvest_card_does_not_claim_upstream(harvests):
    a, _ = harvests
    card = (a.path / "README.md").read_text(encoding="utf-8")
    errata = card.split("## Errata", 1)[1].split("\n## ", 1)[0]
    assert "reproduces upstream as released" not in card
    assert "harvested by benchsmith's pipeline" in errata and "see Reproducibility" in errata
    assert "Reproducible: harvesting the same inputs" in card
    assert "/dev/urandom" in card and "…/dev" not in card  # a system path is not a local path to hide
    m = a.info.to_dict()
    assert {s["origin"] for s in m["sources"].values()} == {"harvest-input"}
    assert all(c["metadata"]["alignment"]["deterministic"] is True for c in m["configs"].values())
    assert m["seed"] == 0


def test_a_seeded_harvest_rebuilt_is_verified_identical(capsys, harvests):
    a, b = harvests
    code, out, err = run_cli(capsys, "-q", "validate", str(b.path), "--previous", str(a.path),
                             "--baselines", "none", "--json")
    assert code == 0, err
    drift = [r for r in one_json(out)["results"] if r["family"] == "drift"]
    assert {r["config"] for r in drift} == {"scoring", "translation"}
    assert all(r["status"] == "pass" and "identical (all fingerprints match)" in r["summary"] for r in drift)
