"""MuCoW / ContraWSD JSON test suites (``<pair>.mucow.scoring.json``, ``<pair>.mucow.tts.json``).

One JSON array of objects::

    {"source": ..., "reference": ..., "ambig word": ..., "original translation": ...,
     "sense": ..., "origin": <corpus>, ["id": <int>,]
     "errors": [{"contrastive": ..., "replacement": ..., "type": "word_sense"}, ...]}

``id`` (the OPUS sentence id) is present in the translation-suite JSON only and is
not unique there. Items are returned in file order, which is the order a
ContraWSD score file follows (reference, then each contrastive). Each record
carries the 1-based line where its object starts, so an error names
``file:line``; a malformed item is a :class:`~benchsmith.errors.ParseError`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from benchsmith.errors import ParseError
from benchsmith.loaders.rawfile import bad_string, decode_utf8, json_error, read_bytes, short

REQUIRED = ("source", "reference", "ambig word", "original translation", "sense", "origin", "errors")
ERROR_REQUIRED = ("contrastive", "replacement")
#: ``id`` (the OPUS sentence id) is written as an Arrow int64
_ID_RANGE = range(-(2**63), 2**63)


@dataclass(frozen=True)
class Contrast:
    contrastive: str
    replacement: str
    type: str = "word_sense"


@dataclass(frozen=True)
class MucowItem:
    """One test item; ``index`` is its 0-based position in the file, ``line`` where it starts."""

    index: int
    line: int
    source: str
    reference: str
    ambiguous_word: str
    original_translation: str
    sense: str
    corpus: str
    errors: tuple[Contrast, ...]
    sentence_id: int | None = None


def _line_of(text: str, pos: int) -> int:
    return text.count("\n", 0, pos) + 1


def read_mucow_json(path: str | Path) -> list[MucowItem]:
    """Read a MuCoW JSON suite.

    Raises:
        ParseError: invalid UTF-8, a NUL, invalid JSON (including integers over
            Python's 4,300-digit limit and nesting too deep to read), not an array of
            objects, a missing or non-string field, a string with a NUL or lone
            surrogate, an ``id`` that is not an int64, or a malformed ``errors``
            entry (file and line named).
        SourceError: the path cannot be read (missing, a directory).
    """
    path = Path(path)
    text = decode_utf8(read_bytes(path), path, hint="Re-download the file")
    dec = json.JSONDecoder()
    pos = _skip_ws(text, 0)
    if pos >= len(text) or text[pos] != "[":
        raise ParseError("expected a JSON array of test items", path=path, line=_line_of(text, pos),
                         hint="Pass a MuCoW *.mucow.scoring.json or *.mucow.tts.json file")
    pos = _skip_ws(text, pos + 1)
    items: list[MucowItem] = []
    if pos < len(text) and text[pos] == "]":
        return items
    line, counted = _line_of(text, pos), pos  # counted incrementally: rescanning from 0 per item is quadratic
    while True:
        line += text.count("\n", counted, pos)
        counted = pos
        try:
            obj, pos = dec.raw_decode(text, pos)
        except json.JSONDecodeError as exc:
            raise ParseError(f"invalid JSON: {exc.msg}", path=path, line=exc.lineno,
                             hint="The file is truncated or edited; re-download it") from None
        except (ValueError, RecursionError) as exc:  # a 4,300+ digit integer, nesting too deep
            what = json_error(exc)
            if what is None:
                raise
            raise ParseError(f"item #{len(items)}: {what}", path=path, line=line,
                             hint="The file is corrupt or not a MuCoW suite; re-download it") from None
        items.append(_item(obj, len(items), line, path))
        pos = _skip_ws(text, pos)
        if pos < len(text) and text[pos] == ",":
            pos = _skip_ws(text, pos + 1)
            continue
        if pos < len(text) and text[pos] == "]":
            break
        raise ParseError("expected ',' or ']' after a test item", path=path, line=_line_of(text, pos),
                         hint="The file is truncated or edited; re-download it")
    return items


def _skip_ws(text: str, pos: int) -> int:
    while pos < len(text) and text[pos] in " \t\r\n\ufeff":
        pos += 1
    return pos


def _item(obj: object, index: int, line: int, path: Path) -> MucowItem:
    """The checked item: the first failure is a ParseError naming it."""
    def fail(message: str, hint: str | None = None) -> ParseError:
        return ParseError(f"item #{index} {message}", path=path, line=line, hint=hint)

    if not isinstance(obj, dict):
        raise fail(f"is a {type(obj).__name__}; expected an object")
    missing = [k for k in REQUIRED if k not in obj]
    if missing:
        raise fail(f"lacks field(s) {missing}; expected {list(REQUIRED)}",
                   "Re-download the file; MuCoW items carry all of these fields")
    for k in REQUIRED[:-1]:
        if not isinstance(obj[k], str):
            raise fail(f"field {k!r} is {short(obj[k])}; expected a string")
        if why := bad_string(obj[k]):
            raise fail(f"field {k!r} {why}; expected plain text")
    if not isinstance(obj["errors"], list):
        raise fail("field 'errors' is not a list")
    errors = []
    for j, e in enumerate(obj["errors"]):
        if not isinstance(e, dict) or any(not isinstance(e.get(k), str) for k in ERROR_REQUIRED) \
                or not isinstance(e.get("type", ""), str):
            raise fail(f"errors[{j}] is {short(e)}; expected an object with string "
                       f"'contrastive' and 'replacement' (and 'type', if any)")
        for k in (*ERROR_REQUIRED, "type"):
            if k in e and (why := bad_string(e[k])):
                raise fail(f"errors[{j}] field {k!r} {why}; expected plain text")
        errors.append(Contrast(e["contrastive"], e["replacement"], e.get("type", "word_sense")))
    sid = obj.get("id")
    if sid is not None and (isinstance(sid, bool) or not isinstance(sid, int) or sid not in _ID_RANGE):
        raise fail(f"id is {short(sid)}; expected an integer that fits in 64 bits")
    return MucowItem(index, line, obj["source"], obj["reference"], obj["ambig word"], obj["original translation"],
                     obj["sense"], obj["origin"], tuple(errors), sid)
