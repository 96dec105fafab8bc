"""Mojibake (issue 29): an XML file whose declared encoding contradicts its bytes is an error naming
the file and line; a genuine single-byte file still reads. Only XML declares an encoding: every
other raw reader decodes strict UTF-8 (see loaders/rawfile.py)."""

from __future__ import annotations

import gzip

import pytest
from xcopa_helpers import COPA_FIX, build_fixture, sources_with

from benchsmith.errors import ParseError
from benchsmith.loaders.copa_xml import read_copa_xml
from benchsmith.loaders.rawfile import check_declared_encoding
from benchsmith.loaders.tmx import iter_tmx

TEXT = "M\u00fd b\u00f6dy cast a shadow."  # Mý bödy: read as latin-1 its UTF-8 bytes are "MÃ½ bÃ¶dy"


def _copa(premise: str, encoding: str) -> str:
    return (f'<?xml version="1.0" encoding="{encoding}"?>\n<!DOCTYPE copa-corpus SYSTEM "copa.dtd">\n'
            '<copa-corpus version="1.0">\n  <item id="1" asks-for="cause" most-plausible-alternative="1">\n'
            f"    <p>{premise}</p>\n    <a1>a</a1>\n    <a2>b</a2>\n  </item>\n</copa-corpus>\n")


# declared encoding, the encoding of the bytes, outcome: the premise read, or the error's line
COPA_TABLE = [
    ("latin-1", "utf-8", 5),
    ("ISO-8859-1", "utf-8", 5),
    ("windows-1252", "utf-8", 5),
    ("us-ascii", "utf-8", 5),
    ("latin-1", "latin-1", TEXT),  # genuine latin-1: still reads
    ("windows-1252", "cp1252", TEXT),
    ("UTF-8", "utf-8", TEXT),
]


@pytest.mark.parametrize("declared, actual, outcome", COPA_TABLE)
def test_copa_xml_declared_encoding_table(tmp_path, declared, actual, outcome):
    path = tmp_path / "copa-dev.xml"
    path.write_bytes(_copa(TEXT, declared).encode(actual))
    if isinstance(outcome, str):
        [item] = read_copa_xml(path)
        assert item.premise == outcome
        return
    with pytest.raises(ParseError) as err:
        read_copa_xml(path)
    msg = str(err.value)
    assert msg.startswith(f"{path}:{outcome}: ") and "\n" not in msg
    assert f"encoding={declared!r}" in msg and "bytes are UTF-8" in msg and 'encoding="UTF-8"' in msg


def test_ascii_text_declared_latin1_reads(tmp_path):
    path = tmp_path / "copa-dev.xml"
    path.write_bytes(_copa("My body cast a shadow.", "latin-1").encode("ascii"))
    assert read_copa_xml(path)[0].premise == "My body cast a shadow."


def test_the_first_non_utf8_byte_ends_the_check_early(tmp_path):
    """A latin-1 file whose first non-ASCII byte is not UTF-8 is believed, whatever follows."""
    path = tmp_path / "x.xml"
    path.write_bytes(b'<?xml version="1.0" encoding="latin-1"?>\n<x>\xe9\n' + "\u00fd".encode() * 10 + b"</x>\n")
    check_declared_encoding(path)  # no error: \xe9 alone is not UTF-8


def test_a_mislabelled_copa_file_stops_the_build_and_leaves_nothing(tmp_path):
    """The issue's case: it built with `MÃ½ bÃ¶dy` and exit 0."""
    good = (COPA_FIX / "datasets" / "copa-dev.xml").read_text(encoding="utf-8")
    lines = good.replace('encoding="UTF-8"', 'encoding="latin-1"').splitlines(keepends=True)
    k = next(i for i, ln in enumerate(lines) if "<p>" in ln)
    lines[k] = lines[k].replace("<p>", "<p>M\u00fd b\u00f6dy: ")
    twin = tmp_path / "twin.xml"
    twin.write_text("".join(lines), encoding="utf-8")
    sources = sources_with(tmp_path, {"copa/datasets/copa-dev.xml": twin})
    registry = tmp_path / "registry"
    with pytest.raises(ParseError, match="bytes are UTF-8") as err:
        build_fixture(registry, "1.1.0", sources)
    assert f"{sources / 'copa/datasets/copa-dev.xml'}:{k + 1}: " in str(err.value)
    assert not (registry / "xcopa").exists() or list((registry / "xcopa").iterdir()) == []


def _tmx(text: str, encoding: str) -> str:
    return (f'<?xml version="1.0" encoding="{encoding}"?>\n<tmx version="1.4">\n<header/>\n<body>\n'
            f'<tu>\n<tuv xml:lang="de"><seg>{text}</seg></tuv>\n<tuv xml:lang="en"><seg>a</seg></tuv>\n</tu>\n'
            "</body>\n</tmx>\n")


@pytest.mark.parametrize("gz", [False, True])
@pytest.mark.parametrize("actual, outcome", [("utf-8", 6), ("latin-1", TEXT)])
def test_tmx_declared_encoding(tmp_path, gz, actual, outcome):
    data = _tmx(TEXT, "ISO-8859-1").encode(actual)
    path = tmp_path / ("o.tmx.gz" if gz else "o.tmx")
    path.write_bytes(gzip.compress(data) if gz else data)
    if isinstance(outcome, str):
        [unit] = list(iter_tmx(path))
        assert unit.get("de") == outcome
        return
    with pytest.raises(ParseError, match="bytes are UTF-8") as err:
        list(iter_tmx(path))
    assert str(err.value).startswith(f"{path}:{outcome}: ")
