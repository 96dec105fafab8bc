"""Reader for the XCOPA jsonl files (github.com/cambridgeltl/xcopa).

Upstream layout: ``data/<lang>/{val,test}.<lang>.jsonl`` (human translations) and
``data-gmt/<lang>/{val,test}.<lang>.jsonl`` (Google-translated back into English;
none for Quechua). One JSON object a line::

    {"premise": "...", "choice1": "...", "choice2": "...", "question": "effect",
     "label": 1, "idx": 0, "changed": false}

The reader keeps every string exactly as upstream wrote it (no stripping or
normalisation): version 1.0.0 of the release reproduces these values.
"""

from __future__ import annotations

import io
from dataclasses import dataclass
from pathlib import Path

from benchsmith.errors import BenchsmithError, ParseError, did_you_mean
from benchsmith.loaders.rawfile import bad_string, loads_json, read_text, short

#: The eleven XCOPA languages (ISO 639-1, as upstream names the folders).
LANGUAGES = ("et", "ht", "id", "it", "qu", "sw", "ta", "th", "tr", "vi", "zh")
#: Languages with a machine translation into English in ``data-gmt``.
GMT_LANGUAGES = tuple(lang for lang in LANGUAGES if lang != "qu")
#: Upstream file stem per benchsmith split name.
SPLIT_FILES = {"validation": "val", "test": "test"}
QUESTIONS = ("cause", "effect")
FIELDS = {
    "premise": str,
    "choice1": str,
    "choice2": str,
    "question": str,
    "label": int,
    "idx": int,
    "changed": bool,
}
_HINT = "Restore the file from github.com/cambridgeltl/xcopa"
#: ``idx`` is written as an Arrow int64
_MAX_IDX = 2**63 - 1


@dataclass(frozen=True)
class XcopaRecord:
    """One XCOPA line, values as upstream wrote them, plus where it came from."""

    premise: str
    choice1: str
    choice2: str
    question: str
    label: int
    idx: int
    changed: bool
    line: int

    def to_example(self) -> dict:
        return {
            "premise": self.premise,
            "choice1": self.choice1,
            "choice2": self.choice2,
            "question": self.question,
            "label": self.label,
            "idx": self.idx,
            "changed": self.changed,
        }


def xcopa_relpath(lang: str, split: str, *, translated: bool = False) -> str:
    """Relative path of a language's split inside the XCOPA source folder."""
    if lang not in LANGUAGES:
        raise ParseError(f"unknown XCOPA language {lang!r}", hint=did_you_mean(lang, LANGUAGES))
    if split not in SPLIT_FILES:
        raise ParseError(f"unknown XCOPA split {split!r}", hint=did_you_mean(split, SPLIT_FILES))
    folder = "data-gmt" if translated else "data"
    return f"{folder}/{lang}/{SPLIT_FILES[split]}.{lang}.jsonl"


def language_of(path: Path) -> str:
    """The language a file belongs to, from ``<lang>/<split>.<lang>.jsonl``; checked."""
    parts = path.name.split(".")
    if len(parts) != 3 or parts[2] != "jsonl" or parts[0] not in SPLIT_FILES.values():
        raise ParseError(
            f"file name {path.name!r} does not follow <val|test>.<lang>.jsonl",
            path=path,
            hint="Keep upstream's file names",
        )
    lang = parts[1]
    if path.parent.name != lang:
        raise ParseError(
            f"file for language {lang!r} sits in folder {path.parent.name!r}",
            path=path,
            hint="Keep upstream's layout data/<lang>/<split>.<lang>.jsonl",
        )
    if lang not in LANGUAGES:
        raise ParseError(
            f"unknown XCOPA language {lang!r}; expected one of {', '.join(LANGUAGES)}",
            path=path,
            hint=did_you_mean(lang, LANGUAGES),
        )
    return lang


def read_utf8(path: Path, error: type[BenchsmithError] = ParseError, hint: str = _HINT) -> str:
    """The whole text of a UTF-8 file; invalid UTF-8 or a NUL is ``error`` naming the file and line.

    An unreadable path (missing, a directory) is a :class:`~benchsmith.errors.SourceError`.
    """
    return read_text(Path(path), error=error, hint=hint)


def read_xcopa_jsonl(path: str | Path) -> list[XcopaRecord]:
    """Parse one XCOPA jsonl file, validating every field of every line.

    Raises:
        ParseError: unknown language in the file name, invalid UTF-8, a NUL, invalid
            JSON (including integers over Python's 4,300-digit limit and nesting too
            deep to read), a missing or extra field, a wrong type, a string with a NUL
            or lone surrogate, a question other than cause/effect, a label other than
            0/1, an idx that is negative, repeated or over int64 (``path`` and ``line`` set).
        SourceError: the path cannot be read (missing, a directory).
    """
    path = Path(path)
    language_of(path)
    lines = [(n, t) for n, t in enumerate(io.StringIO(read_utf8(path), newline=""), start=1) if t.strip()]
    if not lines:
        raise ParseError("file has no records", path=path, hint=_HINT)
    seen: dict[int, int] = {}
    return [_parse_line(path, lineno, text, seen) for lineno, text in lines]


def _parse_line(path: Path, lineno: int, text: str, seen: dict[int, int]) -> XcopaRecord:
    def fail(message: str) -> ParseError:
        return ParseError(message, path=path, line=lineno, hint=_HINT)

    obj = loads_json(text, path, lineno, hint=_HINT)
    if not isinstance(obj, dict):
        raise fail(f"line is a JSON {type(obj).__name__}; expected an object")
    missing = [f for f in FIELDS if f not in obj]
    extra = sorted(set(obj) - set(FIELDS))
    if missing or extra:
        raise fail(f"missing fields {missing} and extra fields {short(extra)}; expected exactly {list(FIELDS)}")
    for name, typ in FIELDS.items():
        value = obj[name]
        # bool is an int in Python: reject it where an int is meant and vice versa
        ok = isinstance(value, typ) and (typ is bool or not isinstance(value, bool))
        if not ok:
            raise fail(f"field {name!r} is {short(value)}; expected a JSON {typ.__name__}")
        if typ is str and (why := bad_string(value)):
            raise fail(f"field {name!r} {why}; expected plain text")
    if obj["question"] not in QUESTIONS:
        raise fail(f"question is {short(obj['question'])}; expected one of {list(QUESTIONS)}")
    if obj["label"] not in (0, 1):
        raise fail(f"label is {short(obj['label'])}; expected 0 (choice1) or 1 (choice2)")
    idx = obj["idx"]
    if not 0 <= idx <= _MAX_IDX:
        raise fail(f"idx is {short(idx)}; expected a non-negative integer below 2**63")
    if idx in seen:
        raise fail(f"idx {idx} repeats line {seen[idx]}")
    seen[idx] = lineno
    for name in ("premise", "choice1", "choice2"):
        if not obj[name].strip():
            raise fail(f"field {name!r} is empty")
    return XcopaRecord(line=lineno, **obj)
