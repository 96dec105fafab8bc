"""The two raw readers on hand-written fixtures and their malformed twins."""

from __future__ import annotations

import json
import shutil

import pytest
from xcopa_helpers import COPA_FIX, XCOPA_FIX

from benchsmith.errors import ParseError, SourceError
from benchsmith.loaders.copa_xml import read_copa_xml
from benchsmith.loaders.xcopa_jsonl import read_xcopa_jsonl, xcopa_relpath

MALFORMED_JSONL = XCOPA_FIX / "_malformed"
MALFORMED_XML = COPA_FIX / "_malformed"


def test_copa_xml_items_labels_and_lines():
    items = read_copa_xml(COPA_FIX / "datasets/copa-dev.xml")
    assert [(i.id, i.line) for i in items] == [(1, 4), (2, 9), (401, 14), (402, 19), (403, 24)]
    faucet = items[2]
    assert (faucet.asks_for, faucet.label) == ("effect", 1)  # most-plausible-alternative="2" -> 1
    assert faucet.premise == "The man turned on the faucet."
    assert (faucet.alternative1, faucet.alternative2) == ("The toilet filled with water.", "Water flowed from the spout.")
    assert items[4].label == 1


@pytest.mark.parametrize(
    "twin, line, fragment",
    [
        ("copa-dev.bad-asks-for.xml", 19, "asks-for is 'reason'"),
        ("copa-dev.bad-label.xml", 24, "most-plausible-alternative is '3'"),
        ("copa-dev.missing-a2.xml", 19, "<a2> is missing"),
        ("copa-dev.truncated.xml", 18, "malformed XML"),
        ("copa-test.duplicate-id.xml", 9, "item id 501 repeats the item at line 4"),
    ],
)
def test_copa_xml_malformed_twins(twin, line, fragment):
    path = MALFORMED_XML / twin
    with pytest.raises(ParseError) as err:
        read_copa_xml(path)
    assert err.value.line == line
    assert fragment in str(err.value)
    assert str(err.value).startswith(f"{path}:{line}: ")


def test_copa_xml_non_ascii_digit_id_is_a_parse_error(tmp_path):
    path = tmp_path / "copa-dev.xml"
    path.write_text('<copa-corpus version="1.0">\n<item id="\u00b2" asks-for="cause" most-plausible-alternative="1">'
                    "<p>p</p><a1>a</a1><a2>b</a2></item>\n</copa-corpus>\n", encoding="utf-8")
    with pytest.raises(ParseError, match="expected a positive integer") as err:  # int("²") would be a ValueError
        read_copa_xml(path)
    assert err.value.line == 2


def test_xcopa_jsonl_keeps_upstream_values():
    path = XCOPA_FIX / xcopa_relpath("et", "validation")
    records = read_xcopa_jsonl(path)
    upstream = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    assert [r.to_example() for r in records] == upstream
    assert [r.line for r in records] == [1, 2, 3]


def _placed(tmp_path, twin: str):
    """Put a twin where upstream's file would be (the reader checks the layout)."""
    target = tmp_path / "data" / "et" / "val.et.jsonl"
    target.parent.mkdir(parents=True)
    shutil.copyfile(MALFORMED_JSONL / twin, target)
    return target


@pytest.mark.parametrize(
    "twin, line, fragment",
    [
        ("bad-label.val.et.jsonl", 2, "label is 2; expected 0 (choice1) or 1 (choice2)"),
        ("missing-field.val.et.jsonl", 3, "missing fields ['choice2']"),
        ("extra-field.val.et.jsonl", 2, "extra fields ['lang']"),
        ("duplicate-idx.val.et.jsonl", 2, "idx 0 repeats line 1"),
        ("truncated.val.et.jsonl", 3, "invalid JSON"),
    ],
)
def test_xcopa_jsonl_malformed_twins(tmp_path, twin, line, fragment):
    path = _placed(tmp_path, twin)
    with pytest.raises(ParseError) as err:
        read_xcopa_jsonl(path)
    assert err.value.line == line
    assert fragment in str(err.value)
    assert str(err.value).startswith(f"{path}:{line}: ")


def test_xcopa_jsonl_invalid_utf8_names_the_line(tmp_path):
    target = tmp_path / "data" / "et" / "val.et.jsonl"
    target.parent.mkdir(parents=True)
    good = (XCOPA_FIX / "data/et/val.et.jsonl").read_bytes().splitlines(keepends=True)
    target.write_bytes(good[0] + good[1].replace(b'"premise": "', b'"premise": "\xff', 1) + good[2])
    with pytest.raises(ParseError, match="invalid UTF-8 byte") as err:
        read_xcopa_jsonl(target)
    assert err.value.line == 2 and str(err.value).startswith(f"{target}:2: ")


def test_xcopa_jsonl_unknown_language():
    path = MALFORMED_JSONL / "data" / "xx" / "val.xx.jsonl"
    with pytest.raises(ParseError) as err:
        read_xcopa_jsonl(path)
    assert "unknown XCOPA language 'xx'" in str(err.value)
    assert str(err.value).startswith(str(path))


def test_xcopa_jsonl_file_in_wrong_folder(tmp_path):
    wrong = tmp_path / "data" / "th" / "val.et.jsonl"
    wrong.parent.mkdir(parents=True)
    shutil.copyfile(XCOPA_FIX / "data/et/val.et.jsonl", wrong)
    with pytest.raises(ParseError, match="sits in folder 'th'"):
        read_xcopa_jsonl(wrong)


# --------------------------------------------------------------------------- issue 12: no bad input crashes

_GOOD_LINE = ('{"premise": "p", "choice1": "a", "choice2": "b", "question": "cause", "label": 0, "idx": %s, '
              '"changed": false}\n')


def _jsonl(tmp_path, *lines: str):
    target = tmp_path / "data" / "et" / "val.et.jsonl"
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text("".join(lines), encoding="utf-8")
    return target


@pytest.mark.parametrize(
    "second_line, fragment",
    [
        (_GOOD_LINE % ("1" * 4301), "JSON integer with more than 4300 digits"),  # was a raw ValueError
        ("[" * 100_000 + "\n", "JSON nested too deeply"),  # was a raw RecursionError
        (_GOOD_LINE % (2**63), "expected a non-negative integer below 2**63"),  # was accepted: Arrow int64 overflow
        (_GOOD_LINE.replace('"p"', '"\\ud800"') % 1, "field 'premise' holds a lone surrogate U+D800"),  # accepted
        (_GOOD_LINE.replace('"p"', '"a\\u0000b"') % 1, "field 'premise' holds a NUL character"),  # accepted
        (_GOOD_LINE.replace('"p"', '"a\x00b"') % 1, "NUL byte"),
    ],
)
def test_xcopa_jsonl_json_python_cannot_hold_is_a_parse_error(tmp_path, second_line, fragment):
    path = _jsonl(tmp_path, _GOOD_LINE % 0, second_line)
    with pytest.raises(ParseError) as err:
        read_xcopa_jsonl(path)
    assert fragment in str(err.value)
    assert str(err.value).startswith(f"{path}:2: ") and "\n" not in str(err.value)


def test_xcopa_jsonl_directory_is_a_source_error(tmp_path):
    target = tmp_path / "data" / "et" / "val.et.jsonl"
    target.mkdir(parents=True)
    with pytest.raises(SourceError, match="is a directory; expected a file") as err:  # was IsADirectoryError
        read_xcopa_jsonl(target)
    assert err.value.path == target


_COPA_BODY = ('<copa-corpus version="1.0">\n<item id="1" asks-for="cause" most-plausible-alternative="1">\n'
              "<p>{p}</p><a1>a</a1><a2>b</a2>\n</item>\n</copa-corpus>\n")


@pytest.mark.parametrize(
    "head, premise, line, fragment",
    [
        # an encoding expat cannot use: a raw LookupError / ValueError before
        ('<?xml version="1.0" encoding="bogus"?>\n', "p", 1, "unknown encoding: bogus"),
        ('<?xml version="1.0" encoding="utf-32"?>\n', "p", 1, "multi-byte encodings are not supported"),
        ('<?xml version="1.0" encoding="shift_jis"?>\n', "p", 1, "multi-byte encodings are not supported"),
        # an entity declared in the DTD: expanded silently before (billion laughs, external entities)
        ('<!DOCTYPE copa-corpus [<!ENTITY e "text">]>\n', "a &e; b", 1, "DTD declares entity 'e'"),
        ('<!DOCTYPE copa-corpus SYSTEM "copa.dtd" [<!ENTITY e "text">]>\n', "a &e; b", 1, "DTD declares entity"),
        ('<!DOCTYPE copa-corpus [<!ENTITY x SYSTEM "file:///etc/hostname">]>\n', "&x;", 1, "DTD declares entity"),
        ('<!DOCTYPE copa-corpus [<!ENTITY a "aa"><!ENTITY b "&a;&a;">]>\n', "&b;", 1, "DTD declares entity 'a'"),
        # with the external DTD named, expat skipped an undeclared entity: the text lost a word silently
        ('<!DOCTYPE copa-corpus SYSTEM "copa.dtd">\n', "a &foo; b", 4, "undeclared entity &foo;"),
    ],
)
def test_copa_xml_encodings_and_dtd_entities_are_parse_errors(tmp_path, head, premise, line, fragment):
    path = tmp_path / "copa-dev.xml"
    path.write_text(head + _COPA_BODY.format(p=premise), encoding="utf-8")
    with pytest.raises(ParseError) as err:
        read_copa_xml(path)
    assert fragment in str(err.value)
    assert str(err.value).startswith(f"{path}:{line}: ") and "\n" not in str(err.value)


def test_copa_xml_external_dtd_stays_accepted_and_unfetched(tmp_path):
    path = tmp_path / "copa-dev.xml"
    path.write_text('<?xml version="1.0" encoding="UTF-8"?>\n<!DOCTYPE copa-corpus SYSTEM "copa.dtd">\n'
                    + _COPA_BODY.format(p="a &amp; b &#65;"), encoding="utf-8")
    (tmp_path / "copa.dtd").write_text('<!ENTITY amp "FETCHED">', encoding="utf-8")  # would show if fetched
    [item] = read_copa_xml(path)
    assert item.premise == "a & b A" and item.line == 4


def test_copa_xml_directory_is_a_source_error(tmp_path):
    with pytest.raises(SourceError, match="is a directory") as err:  # was IsADirectoryError
        read_copa_xml(tmp_path)
    assert err.value.path == tmp_path
