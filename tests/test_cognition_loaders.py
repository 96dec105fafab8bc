"""Raw-format readers used by CoGnition: moses parallel text, CG-test triples, lexicon, ROCStories."""

from __future__ import annotations

import gzip
import shutil

import pytest

from benchsmith.errors import ParseError
from benchsmith.loaders.cognition_files import read_cg_test, read_lexicon
from benchsmith.loaders.moses import iter_parallel, read_lines, read_parallel
from benchsmith.loaders.rocstories import read_rocstories


def test_parallel_pairs_lines(tmp_path):
    (tmp_path / "a.en").write_text("one\r\ntwo\n", encoding="utf-8")
    (tmp_path / "a.zh").write_text("\ufeff一\n二\n", encoding="utf-8")
    pairs = read_parallel(tmp_path / "a.en", tmp_path / "a.zh")
    assert [(p.line, p.source, p.target) for p in pairs] == [(1, "one", "一"), (2, "two", "二")]


def test_parallel_count_mismatch_names_both_files(tmp_path):
    (tmp_path / "a.en").write_text("one\ntwo\nthree\n", encoding="utf-8")
    (tmp_path / "a.zh").write_text("一\n二\n", encoding="utf-8")
    with pytest.raises(ParseError) as ei:
        read_parallel(tmp_path / "a.en", tmp_path / "a.zh")
    msg = str(ei.value)
    assert "a.en has 3 lines" in msg and "a.zh has 2" in msg and ":3:" in msg


def test_parallel_bad_utf8_names_line(tmp_path):
    (tmp_path / "a.en").write_text("one\ntwo\n", encoding="utf-8")
    (tmp_path / "a.zh").write_bytes("一\n".encode() + b"\xff\xfe\n")
    with pytest.raises(ParseError, match=r"a\.zh:2: invalid UTF-8"):
        read_parallel(tmp_path / "a.en", tmp_path / "a.zh")


def test_parallel_streams_and_counts_both_files_when_target_is_shorter(tmp_path):
    (tmp_path / "a.en").write_text("one\ntwo\nthree\nfour\n", encoding="utf-8")
    (tmp_path / "a.zh").write_text("一\n二\n", encoding="utf-8")
    pairs = iter_parallel(tmp_path / "a.en", tmp_path / "a.zh")
    assert next(pairs).target == "一"  # streamed: pairs come before the count check
    with pytest.raises(ParseError) as ei:
        list(pairs)
    msg = str(ei.value)
    assert "a.en has 4 lines" in msg and "a.zh has 2" in msg and ei.value.line == 3


def test_truncated_gzip_is_a_parse_error(tmp_path):
    data = gzip.compress("".join(f"line {i}\n" for i in range(2000)).encode())
    (tmp_path / "a.en.gz").write_bytes(data[: len(data) // 2])
    with pytest.raises(ParseError, match=r"a\.en\.gz:\d+: corrupt gzip stream"):
        read_lines(tmp_path / "a.en.gz")


@pytest.fixture
def cg_copy(tmp_path, fixtures):
    src = fixtures / "cognition" / "cognition" / "data" / "cg-test"
    dst = tmp_path / "cg"
    shutil.copytree(src, dst)
    return dst


def test_cg_test_blocks_and_contexts(cg_copy):
    rows = read_cg_test(cg_copy / "cg-test.en", cg_copy / "cg-test.zh", cg_copy / "cg-test.compound")
    assert len(rows) == 15
    assert [r.context for r in rows[:6]] == [0, 1, 2, 3, 4, 0]
    assert rows[5].compound == "found every car on the floor"


def test_cg_test_broken_block_names_line(cg_copy):
    lines = (cg_copy / "cg-test.compound").read_text(encoding="utf-8").splitlines()
    lines[3], lines[6] = lines[6], lines[3]
    (cg_copy / "cg-test.compound").write_text("\n".join(lines) + "\n", encoding="utf-8")
    with pytest.raises(ParseError, match=r"cg-test\.compound:4: compound 'found every car on the floor' breaks"):
        read_cg_test(cg_copy / "cg-test.en", cg_copy / "cg-test.zh", cg_copy / "cg-test.compound")


def test_cg_test_truncated_file(cg_copy):
    lines = (cg_copy / "cg-test.zh").read_text(encoding="utf-8").splitlines()
    (cg_copy / "cg-test.zh").write_text("\n".join(lines[:-1]) + "\n", encoding="utf-8")
    with pytest.raises(ParseError, match=r"cg-test\.zh:15: CG-test files are not line-aligned"):
        read_cg_test(cg_copy / "cg-test.en", cg_copy / "cg-test.zh", cg_copy / "cg-test.compound")


def test_lexicon_optional_and_duplicate_merge(fixtures):
    lex = read_lexicon(fixtures / "cognition" / "cognition" / "eval" / "lexicon")
    assert lex["the"].optional and lex["the"].translations == ()
    assert not lex["dog"].optional and lex["dog"].translations == ("狗", "犬")
    assert lex["building"].translations == ("建筑", "楼", "房子") and lex["building"].line == 15


def test_lexicon_bad_line(tmp_path):
    (tmp_path / "lexicon").write_text("dog\t狗\ncat 猫\n", encoding="utf-8")
    with pytest.raises(ParseError, match=r"lexicon:2: lexicon line 'cat 猫'"):
        read_lexicon(tmp_path / "lexicon")


def test_rocstories_both_layouts(fixtures):
    d = fixtures / "rocstories" / "rocstories"
    stories = read_rocstories(d / "stories.csv")
    assert [s.id for s in stories] == ["s1", "s2"] and len(stories[0].sentences) == 5
    assert stories[0].sentences[2] == "He played with the ball, and ran home."
    cloze = read_rocstories(d / "cloze.csv")
    assert len(cloze[0].sentences) == 6  # 4 context sentences + both endings


def test_rocstories_bad_bytes_and_bad_csv_name_the_line(tmp_path):
    header = "storyid,storytitle,sentence1,sentence2,sentence3,sentence4,sentence5\n"
    (tmp_path / "bytes.csv").write_bytes((header + "s1,t,a,b,c,d,e\ns2,t,a,b,").encode() + b"\xff,d,e\n")
    with pytest.raises(ParseError, match=r"bytes\.csv:3: not UTF-8"):
        read_rocstories(tmp_path / "bytes.csv")
    (tmp_path / "big.csv").write_text(header + "s1,t,a,b,c,d,e\ns2,t,a,b,\"" + "x" * 200_000 + "\",d,e\n",
                                      encoding="utf-8")
    with pytest.raises(ParseError, match=r"big\.csv:3: malformed CSV"):
        read_rocstories(tmp_path / "big.csv")


def test_rocstories_bad_row(fixtures):
    with pytest.raises(ParseError, match=r"bad_fields\.csv:3: 5 fields, expected 7"):
        read_rocstories(fixtures / "rocstories" / "rocstories" / "bad_fields.csv")


# ----------------------------------------------------------------------------- issue 12: no bad input crashes


@pytest.mark.parametrize("text", ["", "\n\n", "  \n"])
def test_empty_lexicon_is_a_parse_error(tmp_path, text):
    (tmp_path / "lexicon").write_text(text, encoding="utf-8")
    with pytest.raises(ParseError, match=r"lexicon:1: lexicon has no entries"):  # was {} (a 0-row config)
        read_lexicon(tmp_path / "lexicon")


def test_empty_cg_test_is_a_parse_error(tmp_path):
    for k in ("en", "zh", "compound"):
        (tmp_path / f"cg-test.{k}").write_bytes(b"")
    with pytest.raises(ParseError, match=r"cg-test\.en:1: CG-test files are empty"):  # was [] (a 0-row config)
        read_cg_test(tmp_path / "cg-test.en", tmp_path / "cg-test.zh", tmp_path / "cg-test.compound")


def test_rocstories_nul_byte_names_the_line(tmp_path):
    header = "storyid,storytitle,sentence1,sentence2,sentence3,sentence4,sentence5\n"
    (tmp_path / "s.csv").write_bytes((header + "s1,t,a,b,c,d,e\ns2,t,a,b\x00,c,d,e\n").encode())
    with pytest.raises(ParseError, match=r"s\.csv:3: NUL byte"):  # was kept inside the sentence
        read_rocstories(tmp_path / "s.csv")


@pytest.mark.parametrize("read", [read_lines, read_lexicon, read_rocstories,
                                  lambda p: read_parallel(p, p), lambda p: read_cg_test(p, p, p)])
def test_directory_instead_of_a_file_is_a_source_error(tmp_path, read):
    from benchsmith.errors import SourceError

    with pytest.raises(SourceError, match="is a directory; expected a file") as ei:  # was IsADirectoryError
        read(tmp_path)
    assert ei.value.path == tmp_path
