"""ComVE loader and builder on hand-written fixtures, and every malformed twin.

Each malformed case must raise a ParseError that names the broken file and the
line, and leave no release directory (nor a temporary one) behind.
"""

from __future__ import annotations

import csv
import random
from pathlib import Path

import datasets
import pytest
from comve_helpers import FIXTURE_DATA, GOOD, MALFORMED, build, malformed_sources

from benchsmith.errors import ParseError
from benchsmith.loaders import comve_csv
from benchsmith.loaders.comve_csv import SplitFiles, load_instances, read_answers, read_rows, read_subtask_b

RAW = GOOD / "comve" / "ALL data"


def _files(split_dir: str, stem: str, answers: str) -> SplitFiles:
    d = RAW / split_dir
    return SplitFiles(
        *(d / n for t in "ABC" for n in (stem.format(t=t), answers.format(t=t)))  # type: ignore[arg-type]
    )


def test_quoted_commas_and_typed_records():
    recs = read_subtask_b(RAW / "Training  Data" / "subtaskB_data_all.csv")
    assert [r.id for r in recs] == ["0", "1", "2", "3"]
    jeff = recs[2]
    assert jeff.false_sent == "Jeff ran 100,000 miles today"
    assert jeff.options[2] == "Jeff likes running, swimming, and cycling."
    assert jeff.line == 4


def test_join_across_subtasks_keeps_upstream_order_and_labels():
    inst = load_instances(_files("Dev Data", "subtask{t}_dev_data.csv", "subtask{t}_gold_answers.csv"))
    assert [i.id for i in inst] == ["1363", "392", "540"]  # upstream order, not sorted
    first = inst[0]
    assert first.a_label == 0 and first.nonsensical == "Summer is great for skiing and making a snowman."
    assert first.b_label == "C" and first.correct_reason == "It is too hot to snow in summer."
    assert first.confusing_reasons == ("Snowmen can melt.", "You would not eat a snowman.")
    assert first.references[0] == first.correct_reason


def test_trial_files_without_final_newline_and_empty_reference():
    d = RAW / "Trial Data"
    assert not (d / "taskA_trial_answer.csv").read_bytes().endswith(b"\n")  # as upstream
    files = (d / "taskA_trial_data.csv", d / "taskA_trial_answer.csv", d / "taskB_trial_data.csv",
             d / "taskB_trial_answer.csv", d / "taskC_trial_data.csv", d / "taskC_trial_references.csv")
    inst = load_instances(SplitFiles(*files, final_newline=False))  # how upstream ships its trial files
    assert [i.id for i in inst] == ["1", "2"]
    assert inst[1].b_label == "B" and inst[1].correct_reason == "no one eats stones"
    assert inst[0].references[2] == ""  # kept as upstream has it


def test_answers_reject_label_outside_allowed(tmp_path: Path):
    p = tmp_path / "answers.csv"
    p.write_text("1,0\n2,B\n", encoding="utf-8")
    with pytest.raises(ParseError) as exc:
        read_answers(p, comve_csv.A_LABELS)
    assert exc.value.line == 2 and "'B'" in str(exc.value) and str(p) in str(exc.value)


def test_read_rows_tolerates_bom_but_not_missing_header(tmp_path: Path):
    p = tmp_path / "a.csv"
    p.write_text("\ufeffid,sent0,sent1\n1,x,y\n", encoding="utf-8")
    assert [r.cells for r in read_rows(p, comve_csv.A_HEADER, header=True)] == [("1", "x", "y")]
    p.write_text("1,x,y\n", encoding="utf-8")
    with pytest.raises(ParseError, match="header"):
        list(read_rows(p, comve_csv.A_HEADER, header=True))


def test_empty_data_file_is_an_error_not_an_empty_split(tmp_path: Path):
    p = tmp_path / "subtaskA_dev_data.csv"
    p.write_bytes(b"")  # e.g. a failed download: there is no header, so no instance either
    with pytest.raises(ParseError, match="file is empty") as exc:
        list(read_rows(p, comve_csv.A_HEADER, header=True))
    assert exc.value.line == 1 and str(p) in str(exc.value)
    assert list(read_rows(p, ("id", "answer"), header=False)) == []  # a headerless file may be empty


def test_nul_byte_is_a_parse_error_naming_the_line(tmp_path: Path):
    p = tmp_path / "subtaskA_dev_data.csv"
    p.write_bytes(b"id,sent0,sent1\n1,x,y\n2,he\x00llo,z\n")  # was kept inside the statement
    with pytest.raises(ParseError, match="NUL byte") as exc:
        comve_csv.read_subtask_a(p)
    assert exc.value.line == 3 and str(exc.value).startswith(f"{p}:3: ")


def test_directory_instead_of_a_file_is_a_source_error(tmp_path: Path):
    from benchsmith.errors import SourceError

    with pytest.raises(SourceError, match="is a directory") as exc:  # was IsADirectoryError
        comve_csv.read_subtask_a(tmp_path)
    assert exc.value.path == tmp_path


def test_fixture_release_builds_and_loads(tmp_path: Path):
    release = build(GOOD, tmp_path / "reg")
    assert release.num_examples("subtask_a", "train") == 4
    assert release.num_examples("tuples", "validation") == 3
    assert release.splits("subtask_c") == ["train", "validation", "test", "trial"]
    ds = datasets.load_dataset(str(release.path), "subtask_b", split="test")
    assert ds.features["label"].names == ["A", "B", "C"]
    assert [ds.features["label"].int2str(v) for v in ds["label"]] == ["A", "B", "C"]
    a = list(release.examples("subtask_a", "train"))
    assert [e["label"] for e in a] == [1, 0, 1, 0]  # index of the statement that does NOT make sense
    t = next(release.examples("tuples", "train"))
    assert t["nonsensical_statement"] == "He poured orange juice on his cereal."
    assert t["correct_reason"] == "Orange juice doesn't taste good on cereal."
    assert (t["confusing_reason1"], t["confusing_reason2"]) == (
        "Orange juice is usually bright orange.", "Orange juice is sticky if you spill it.")


# case -> (broken file relative to ALL data, line named in the message, text in the message)
MALFORMED_CASES = {
    "missing_column": ("Training  Data/subtaskB_data_all.csv", 1, "missing column 'OptionC'"),
    "bad_label": ("Dev Data/subtaskA_gold_answers.csv", 2, "label '2'"),
    "duplicate_id": ("Test Data/subtaskB_test_data.csv", 4, "duplicate id '1175'"),
    "answer_not_in_data": ("Training  Data/subtaskC_answers_all.csv", 5, "id '99', which is not in the data file"),
    "encoding_error": ("Dev Data/subtaskC_gold_answers.csv", 2, "invalid utf-8 byte b'\\x92'"),
    "truncated": ("Test Data/subtaskC_gold_answers.csv", 2, "ends inside a quoted field"),
    # the answers file lost its last line: the error points at the data row left without an answer
    "truncated_answers": ("Test Data/subtaskA_test_data.csv", 4, "id '275' has no answer"),
}


def test_every_malformed_twin_has_a_case():
    assert {p.name for p in MALFORMED.iterdir()} == set(MALFORMED_CASES)


@pytest.mark.parametrize("case", sorted(MALFORMED_CASES))
def test_malformed_input_is_a_parse_error_and_writes_nothing(case: str, tmp_path: Path):
    rel, line, text = MALFORMED_CASES[case]
    sources = malformed_sources(case, tmp_path)
    registry = tmp_path / "reg"
    with pytest.raises(ParseError) as exc:
        build(sources, registry)
    err = exc.value
    assert err.path == sources / "comve" / "ALL data" / rel
    assert err.line == line
    message = str(err)
    assert f"{rel}:{line}:" in message  # file and line, as the CLI prints them
    assert text in message
    assert err.hint  # says what to do
    leftovers = list((registry / "comve").iterdir()) if (registry / "comve").exists() else []
    assert leftovers == []


def test_malformed_input_through_the_cli_is_one_line_exit_2(tmp_path: Path, capsys, monkeypatch):
    from benchsmith.cli import main

    sources = malformed_sources("bad_label", tmp_path)
    monkeypatch.setattr("benchsmith.builders.comve.ComVE.checksums", classmethod(lambda cls: {}))
    # the real errata.tsv names upstream items the fixture lacks (a stale row is an error): use the fixture's
    monkeypatch.setattr("benchsmith.builders.comve.ComVE.generated_errata_path", classmethod(lambda cls: FIXTURE_DATA / "errata.generated.tsv"))
    code = main(["-q", "build", "comve", "--sources", str(sources), "--registry", str(tmp_path / "reg")])
    err = capsys.readouterr().err
    assert code == 2
    assert "subtaskA_gold_answers.csv:2" in err and "Traceback" not in err
    assert not (tmp_path / "reg" / "comve" / "1.1.0").exists()


# --------------------------------------------------------------------------- defects of one file

def test_each_defect_of_a_file_is_a_parse_error_naming_file_and_line(tmp_path: Path):
    """Each defect is a ParseError naming the file and line; a quoted field over two lines and a
    BOM read as upstream's text."""
    d = RAW / "Dev Data"
    good = _files("Dev Data", "subtask{t}_dev_data.csv", "subtask{t}_gold_answers.csv")
    names = ["a_data", "a_answers", "b_data", "b_answers", "c_data", "c_answers"]

    def variant(name: str, text: str) -> SplitFiles:
        paths = {n: getattr(good, n) for n in names}
        paths[name] = tmp_path / f"{name}-{len(list(tmp_path.iterdir()))}.csv"
        paths[name].write_text(text, encoding="utf-8")
        return SplitFiles(**paths)

    a_answers = (d / "subtaskA_gold_answers.csv").read_text(encoding="utf-8")
    a_data = (d / "subtaskA_dev_data.csv").read_text(encoding="utf-8")
    c_lines = (d / "subtaskC_gold_answers.csv").read_text(encoding="utf-8").splitlines(keepends=True)
    no_reference = "".join([c_lines[0].split(",")[0] + ", ,\t,  \n", *c_lines[1:]])  # three blank references
    bad = [
        ("c_answers", no_reference),
        ("a_answers", a_answers.replace(",0", ",2", 1)),  # a label outside 0/1
        ("a_answers", a_answers + a_answers.splitlines()[0] + "\n"),  # a duplicate id
        ("a_answers", "\n".join(a_answers.splitlines()[1:])),  # an id without an answer
        ("a_data", a_data.replace("id,", "ID,", 1)),  # a wrong header
        ("a_data", a_data + "999,only one statement\n"),  # a short record
        ("a_data", a_data + ',"x","y"\n'),  # an empty id
        ("a_data", a_data + '4,"unterminated\n'),  # a truncated quoted field
        ("a_data", a_data.replace("\n", "\x00\n", 1)),  # a NUL
        ("a_data", ""),  # empty
        # text after a closing quote (Arrow alone reads it on: "...fishing.x" and "...fishing. ")
        ("a_data", a_data.replace('fishing."\n', 'fishing."x\n', 1)),
        ("a_data", a_data.replace('fishing."\n', 'fishing." \n', 1)),
        ("a_data", a_data.replace("392,You", "392," + "x" * csv.field_size_limit() + "You", 1)),  # too long
    ]
    for name, text in bad:
        assert text != getattr(good, name).read_text(encoding="utf-8")
        files = variant(name, text)
        with pytest.raises(ParseError) as exc:
            load_instances(files)
        assert exc.value.path is not None and exc.value.line is not None, (name, text[:80])
    multi = variant("a_data", a_data.replace(",Summer is great", ',"Summer\nis great', 1).replace(
        "snowman.,", 'snowman.",', 1))
    assert load_instances(multi)[0].sent0.startswith("Summer\nis great")
    bom = variant("a_data", "\ufeff" + a_data)  # a BOM is dropped
    assert load_instances(bom) == load_instances(good)


# --------------------------------------------------------------------------- a real file cut anywhere

DEV_FILES = ("subtaskA_dev_data.csv", "subtaskA_gold_answers.csv", "subtaskB_dev_data.csv",
             "subtaskB_gold_answers.csv", "subtaskC_dev_data.csv", "subtaskC_gold_answers.csv")


def _dev_split(folder: Path) -> SplitFiles:
    return SplitFiles(*(folder / name for name in DEV_FILES))


def _last_field_offsets(data: bytes) -> list[int]:
    """Cuts inside the last, unquoted field of the last row, and the cut of the final newline alone."""
    body = data.rstrip(b"\n")
    start = body.rindex(b",") + 1
    return [start + 1, (start + len(body)) // 2, len(body) - 1, len(body)]


@pytest.mark.realdata
def test_a_real_file_cut_at_any_byte_is_a_parse_error_naming_file_and_line(raw, tmp_path: Path):
    """The dev split's six upstream files, each cut at the end of its last row (the case only the
    missing newline reveals) and at 40 seeded offsets: never a truncated row accepted."""
    src = raw / "comve" / "ALL data" / "Dev Data"
    assert len(load_instances(_dev_split(src))) == 997  # the intact files load
    rng = random.Random(43)
    for name in DEV_FILES:
        data = (src / name).read_bytes()
        assert data.endswith(b"\n")  # the convention the check relies on, as upstream ships it
        offsets = sorted({*_last_field_offsets(data), *(rng.randrange(1, len(data)) for _ in range(40))})
        for cut in offsets:
            folder = tmp_path / f"{name}-{cut}"
            folder.mkdir()
            for other in DEV_FILES:
                (folder / other).write_bytes(data[:cut] if other == name else (src / other).read_bytes())
            with pytest.raises(ParseError) as info:
                load_instances(_dev_split(folder))
            err = info.value
            assert err.path is not None and err.path.parent == folder and err.line is not None, (name, cut, err)
            assert name in str(err), (name, cut, str(err))  # the cut file is named (as the path or the join's)
