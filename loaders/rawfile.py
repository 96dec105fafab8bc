"""What every raw reader needs before it parses: the file's bytes, its text, its JSON values.

Each helper turns the ways a raw file can be bad into a typed one-line error naming
the file (and the 1-based line where it is known), so no reader leaks a builtin
exception:

* the path cannot be read (missing, a directory, no permission): :class:`SourceError`
  (:class:`MissingSourceError` when it does not exist), both ``OSError``\\ s;
* invalid UTF-8 or a NUL character (a binary or truncated file): ``error``
  (:class:`ParseError` unless the caller names another family, e.g. ``PredictionError``);
* JSON that Python cannot hold: an integer literal over 4,300 digits (Python's
  int/str conversion limit, a ``ValueError``), nesting deeper than the recursion
  limit (a ``RecursionError``), and strings with a lone surrogate (``"\\ud800"``:
  valid JSON, but not encodable as UTF-8, so Arrow would fail on it later) or a NUL.
"""

from __future__ import annotations

import json
import reprlib
import sys
from pathlib import Path
from typing import Any

from benchsmith.errors import BenchsmithError, MissingSourceError, ParseError, SourceError

_REPR = reprlib.Repr()
_REPR.maxstring = 80
_REPR.maxother = 80
_REPR.maxlevel = 3

#: values kept in an error message are cut to this shape (one short line)
short = _REPR.repr


def unreadable(path: Path, exc: OSError) -> SourceError:
    """The typed error for an ``OSError`` met while opening or reading ``path``."""
    if isinstance(exc, FileNotFoundError):
        return MissingSourceError("file not found; expected a raw source file here", path=path,
                                  hint="Check the path; the files a build needs are listed by `benchsmith sources` "
                                       "followed by the dataset's name (see `benchsmith list`)")
    if isinstance(exc, IsADirectoryError):
        return SourceError("is a directory; expected a file", path=path,
                           hint="Point at the file itself, laid out as upstream ships it")
    reason = exc.strerror or type(exc).__name__
    return SourceError(f"cannot read the file ({reason})", path=path,
                       hint="Check that the file exists and is readable")


def read_bytes(path: Path) -> bytes:
    """All bytes of ``path``; an unreadable path is a :class:`SourceError` naming it."""
    try:
        return path.read_bytes()
    except OSError as exc:
        raise unreadable(path, exc) from None


def decode_utf8(data: bytes, path: Path, *, error: type[BenchsmithError] = ParseError,
                hint: str = "Re-encode the file as UTF-8, or re-download it") -> str:
    """``data`` decoded strictly as UTF-8, with no NUL character; else ``error`` at file:line."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise error(
            f"invalid UTF-8 byte {data[exc.start:exc.start + 1]!r} ({exc.reason}); expected UTF-8 text",
            path=path,
            line=data.count(b"\n", 0, exc.start) + 1,
            hint=hint,
        ) from None
    check_no_nul(text, path, error=error)
    return text


def check_no_nul(text: str, path: Path, *, error: type[BenchsmithError] = ParseError, first_line: int = 1) -> None:
    """Raise ``error`` at the line of the first NUL character of ``text`` (if any)."""
    pos = text.find("\x00")
    if pos >= 0:
        raise error("NUL byte in a text file (a binary or truncated file?); expected text",
                    path=path, line=first_line + text.count("\n", 0, pos), hint="Re-download the file")


def read_text(path: Path, *, error: type[BenchsmithError] = ParseError,
              hint: str = "Re-encode the file as UTF-8, or re-download it") -> str:
    """The whole text of a UTF-8 file (see :func:`read_bytes` and :func:`decode_utf8`)."""
    return decode_utf8(read_bytes(path), path, error=error, hint=hint)


def json_error(exc: Exception) -> str | None:
    """What is wrong, when ``exc`` is one of the errors ``json`` raises on bad input; else ``None``."""
    if isinstance(exc, json.JSONDecodeError):
        return f"invalid JSON ({exc.msg} at column {exc.colno})"
    if isinstance(exc, RecursionError):
        return "JSON nested too deeply to read"
    if isinstance(exc, ValueError) and "integer string conversion" in str(exc):
        return f"JSON integer with more than {sys.get_int_max_str_digits()} digits (Python's int limit)"
    return None


def loads_json(text: str, path: Path, line: int, *, error: type[BenchsmithError] = ParseError,
               hint: str | None = None) -> Any:
    """``json.loads(text)``; every way the text can be bad JSON is ``error`` at ``path:line``."""
    try:
        return json.loads(text)
    except (ValueError, RecursionError) as exc:
        what = json_error(exc)
        if what is None:
            raise
        raise error(what, path=path, line=line, hint=hint) from None


def bad_string(value: str) -> str | None:
    """Why a string read from JSON cannot go into a release (a NUL or a lone surrogate), or ``None``."""
    if "\x00" in value:
        return "holds a NUL character"
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as exc:
        return f"holds a lone surrogate U+{ord(value[exc.start]):04X} (not encodable as UTF-8)"
    return None
