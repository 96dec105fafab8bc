"""The two raw readers on hand-written fixtures and their malformed twins."""

from __future__ import annotations

import json
import shutil

import pytest
from benchsmith.loaders.copa_xml import read_copa_xml
from benchsmith.loaders.xcopa_jsonl import read_xcopa_jsonl, xcopa_relpath
from xcopa_helpers import COPA_FIX, XCOPA_FIX

from benchsmith.errors import ParseError

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
