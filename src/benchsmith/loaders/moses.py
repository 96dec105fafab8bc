"""Line-aligned parallel text (Moses / WMT style: ``corpus.en`` + ``corpus.zh``).

Two plain UTF-8 files hold one segment per line; line *i* of one file is the
translation of line *i* of the other. Nothing else is assumed: tokenisation,
casing and BPE are whatever the files carry, and each line is only stripped of
its line terminator (``\\n`` or ``\\r\\n``) and, on line 1, of a BOM. A file
whose name ends in ``.gz`` is read through gzip.

Everything here streams (:func:`iter_lines`, :func:`iter_parallel`): memory does
not grow with the file. :func:`read_lines` / :func:`read_parallel` are the same
readers collected into lists, for the small files that want random access.

Errors are :class:`~benchsmith.errors.ParseError`\\ s that name the file and the
1-based line: invalid UTF-8, a NUL byte (a binary or truncated file), a corrupt
gzip stream, and two files with different line counts (both files and both
counts are named; the error points at the first line the shorter file lacks).
A path that cannot be read (missing, a directory) is a
:class:`~benchsmith.errors.SourceError`.
"""

from __future__ import annotations

import gzip
import io
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from itertools import zip_longest
from pathlib import Path

from benchsmith.errors import ParseError
from benchsmith.loaders.rawfile import regular_file, unreadable

ALIGN_HINT = "The files must be line-aligned translations of each other; re-download or re-align them"


@dataclass(frozen=True)
class ParallelPair:
    """One aligned pair; ``line`` is the 1-based line number in both files."""

    line: int
    source: str
    target: str


def open_binary(path: Path) -> io.BufferedIOBase:
    """``path`` opened for reading bytes, through gzip when it ends in ``.gz``."""
    return gzip.open(regular_file(path), "rb") if path.suffix == ".gz" else open(regular_file(path), "rb")


def decode_line(raw: bytes, path: Path, lineno: int) -> str:
    """One raw line as text, terminator stripped (and a BOM on line 1).

    Raises:
        ParseError: invalid UTF-8 or a NUL byte, naming the file and line.
    """
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ParseError(f"invalid UTF-8 at byte {exc.start} of the line", path=path, line=lineno,
                         hint="Re-encode the file as UTF-8") from None
    if "\x00" in text:
        raise ParseError("NUL byte in a text line (binary or truncated file)", path=path, line=lineno,
                         hint="Re-download the file")
    if lineno == 1 and text.startswith("\ufeff"):
        text = text[1:]  # a BOM is an editor artefact, not part of the segment
    return text.rstrip("\r\n")


GZIP_ERRORS = (gzip.BadGzipFile, EOFError, zlib.error)


def gzip_error(path: Path, exc: Exception, line: int) -> ParseError:
    """The ParseError for one of :data:`GZIP_ERRORS` met while reading ``path``."""
    return ParseError(f"corrupt gzip stream ({exc})", path=path, line=line,
                      hint="The file is truncated or not gzip; re-download it")


def _raw_lines(path: Path) -> Iterator[bytes]:
    """The raw lines of ``path``; a corrupt or truncated gzip stream is a ParseError."""
    lineno = 0
    try:
        with open_binary(path) as fh:
            for lineno, raw in enumerate(fh, start=1):
                yield raw
    except GZIP_ERRORS as exc:
        raise gzip_error(path, exc, lineno + 1) from None
    except OSError as exc:
        raise unreadable(path, exc) from None


def iter_lines(path: str | Path) -> Iterator[str]:
    """The lines of a UTF-8 text file, streamed, terminators stripped.

    Raises:
        ParseError: invalid UTF-8, a NUL byte or a corrupt gzip stream, naming the file and line.
    """
    path = Path(path)
    for lineno, raw in enumerate(_raw_lines(path), start=1):
        yield decode_line(raw, path, lineno)


def read_lines(path: str | Path) -> list[str]:
    """All lines of a UTF-8 text file (:func:`iter_lines` as a list)."""
    return list(iter_lines(path))


def count_lines(path: str | Path) -> int:
    """Lines of a file as :func:`iter_lines` counts them (a last line without ``\\n`` counts), without decoding."""
    path = Path(path)
    n, last = 0, b"\n"
    try:
        with open_binary(path) as fh:
            while block := fh.read(1 << 20):
                n += block.count(b"\n")
                last = block[-1:]
    except GZIP_ERRORS as exc:
        raise gzip_error(path, exc, n + 1) from None
    except OSError as exc:
        raise unreadable(path, exc) from None
    return n + (last != b"\n")


def line_count_error(source: str | Path, n_source: int, target: str | Path, n_target: int,
                     hint: str = ALIGN_HINT) -> ParseError:
    """The error for two files that should be line-aligned but are not (both files and counts named)."""
    return ParseError(
        f"line counts differ: {source} has {n_source} lines, {target} has {n_target}",
        path=Path(source if n_source > n_target else target),
        line=min(n_source, n_target) + 1,
        hint=hint,
    )


def iter_parallel(source: str | Path, target: str | Path) -> Iterator[ParallelPair]:
    """The pairs of two line-aligned files, streamed.

    Raises:
        ParseError: a line is not valid UTF-8, or the files differ in line count
            (raised when the shorter file ends, after the pairs before it).
    """
    source, target = Path(source), Path(target)
    src, tgt = iter_lines(source), iter_lines(target)
    for lineno, (s, t) in enumerate(zip_longest(src, tgt), start=1):
        if s is None or t is None:  # one file ended at line lineno - 1: count what is left of the other
            left = 1 + sum(1 for _ in (src if t is None else tgt))
            n_src, n_tgt = (lineno - 1 + left, lineno - 1) if t is None else (lineno - 1, lineno - 1 + left)
            raise line_count_error(source, n_src, target, n_tgt)
        yield ParallelPair(lineno, s, t)


def read_parallel(source: str | Path, target: str | Path) -> list[ParallelPair]:
    """All pairs of two line-aligned files (:func:`iter_parallel` as a list).

    Raises:
        ParseError: the files differ in line count (both named, with counts), or a
            line is not valid UTF-8.
    """
    return list(iter_parallel(source, target))
