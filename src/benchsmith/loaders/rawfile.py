"""What every raw reader needs before it parses: the file's bytes, its text, its JSON values.

Each helper turns the ways a raw file can be bad into a typed one-line error naming
the file (and the 1-based line where it is known), so no reader leaks a builtin
exception:

* the path cannot be read (missing, a directory, no permission): :class:`SourceError`
  (:class:`MissingSourceError` when it does not exist), both ``OSError``\\ s;
* the path is not a regular file (a FIFO would block the reader forever, ``/dev/zero`` would
  fill memory): :class:`SourceError` naming it, before anything is read (:func:`regular_file`,
  which every reader's opener, :func:`open_raw`, calls first);
* invalid UTF-8 or a NUL character (a binary or truncated file): ``error``
  (:class:`ParseError` unless the caller names another family, e.g. ``PredictionError``);
* JSON that Python cannot hold: an integer literal over 4,300 digits (Python's
  int/str conversion limit, a ``ValueError``), nesting deeper than the recursion
  limit (a ``RecursionError``), and strings with a lone surrogate (``"\\ud800"``:
  valid JSON, but not encodable as UTF-8, so Arrow would fail on it later) or a NUL;
* mojibake: a file whose declared encoding contradicts its bytes
  (:func:`check_declared_encoding`). Only XML declares an encoding (``<?xml ...
  encoding="latin-1"?>``): every other raw format is read as strict UTF-8, so it cannot
  be misread. An XML file that declares a single-byte encoding (latin-1, cp1252, ascii
  ...) while its non-ASCII bytes are all valid multi-byte UTF-8 was saved as UTF-8 and
  mislabelled: read as declared, ``Mý`` would become ``MÃ½`` in the release. The
  readers (COPA XML, TMX) refuse it, naming the file and the line of the first
  multi-byte character. The test is the usual one (text in a single-byte encoding
  with non-ASCII letters is almost never valid UTF-8: ``é`` alone is ``\\xe9``), so a
  genuine latin-1 file still reads; it stops at the file's first byte that is not UTF-8.
"""

from __future__ import annotations

import codecs
import json
import os
import re
import reprlib
import stat
import sys
import zlib
from pathlib import Path
from typing import IO, Any

from benchsmith.errors import BenchsmithError, MissingSourceError, ParseError, SourceError

_REPR = reprlib.Repr()
_REPR.maxstring = 80
_REPR.maxother = 80
_REPR.maxlevel = 3

#: values kept in an error message are cut to this shape (one short line)
short = _REPR.repr


_KINDS = ((stat.S_ISFIFO, "a named pipe (FIFO)"), (stat.S_ISCHR, "a character device"),
          (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"))


def regular_file(path: str | Path) -> Path:
    """``path`` when it is a regular file (or a link to one); else a :class:`SourceError` naming it."""
    path = Path(path)
    try:
        mode = os.stat(path).st_mode
    except OSError as exc:
        raise unreadable(path, exc) from None
    if stat.S_ISDIR(mode):
        raise unreadable(path, IsADirectoryError(path))
    if not stat.S_ISREG(mode):
        kind = next((name for test, name in _KINDS if test(mode)), "not a regular file")
        raise SourceError(f"is {kind}; expected a regular file", path=path,
                          hint="Point at the file itself, as upstream ships it (a copy, not a pipe or device)")
    return path


def open_raw(path: str | Path, mode: str = "rb", **kwargs: Any) -> IO[Any]:
    """``open(path, mode, **kwargs)`` for reading a raw file, once :func:`regular_file` accepted it."""
    return open(regular_file(path), mode, **kwargs)


def unreadable(path: Path, exc: OSError) -> SourceError:
    """The typed error for an ``OSError`` met while opening or reading ``path`` (a
    :class:`SourceError` already, e.g. from :func:`regular_file`, is returned as it is)."""
    if isinstance(exc, SourceError):
        return exc
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
        with open_raw(path) as fh:
            return fh.read()
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


#: ``<?xml ... encoding="NAME"`` at the very start of a file (after an optional UTF-8 BOM)
_XML_ENCODING = re.compile(rb"\A(?:\xef\xbb\xbf)?<\?xml\s[^>]*?encoding\s*=\s*[\"']([A-Za-z0-9._:-]+)[\"']")
_UNICODE = {"utf-8", "utf-8-sig", "utf-16", "utf-16-le", "utf-16-be", "utf-32", "utf-32-le", "utf-32-be"}


def declared_encoding(head: bytes) -> str | None:
    """The encoding an XML declaration at the start of ``head`` names (as written), or ``None``."""
    m = _XML_ENCODING.match(head)
    return m.group(1).decode("ascii") if m else None


def check_declared_encoding(path: Path, *, opener: Any = open_raw, chunk: int = 1 << 20) -> None:
    """Refuse a file whose XML declaration names a single-byte encoding while its bytes are UTF-8.

    Reads nothing past the declaration when it names UTF-8 or none; otherwise streams the file
    until its first byte that is not UTF-8 (a genuine single-byte file: fine) or to its end.

    Raises:
        ParseError: the non-ASCII bytes are all valid multi-byte UTF-8 (file and line named).
            A file that cannot be read is left to the reader that follows (its own typed error).
    """
    try:
        with opener(path, "rb") as fh:
            head = fh.read(1024)
            declared = declared_encoding(head)
            if declared is None:
                return
            try:
                name = codecs.lookup(declared).name
            except LookupError:
                return  # the parser reports an unknown encoding itself
            if name in _UNICODE:
                return
            decoder = codecs.getincrementaldecoder("utf-8")()
            line, first = 1, None
            block = head
            while block:
                if first is None and max(block, default=0) >= 0x80:
                    pos = next(i for i, b in enumerate(block) if b >= 0x80)
                    first = line + block.count(b"\n", 0, pos)
                try:
                    decoder.decode(block)
                except UnicodeDecodeError:
                    return  # not UTF-8: the declared encoding is believable
                line += block.count(b"\n")
                block = fh.read(chunk)
            try:
                decoder.decode(b"", final=True)
            except UnicodeDecodeError:
                return
    except (OSError, EOFError, zlib.error):
        return  # unreadable, corrupt gzip ...: the reader that follows reports it in its own words
    if first is not None:
        raise ParseError(
            f"the XML declaration says encoding={declared!r}, but the file's bytes are UTF-8 (read as "
            f"{declared} its text would be mojibake, e.g. 'M\u00c3\u00bd' for 'M\u00fd')",
            path=path, line=first,
            hint='The file was saved as UTF-8: change the declaration to encoding="UTF-8", '
                 f"or re-encode the file as {declared}",
        )
