"""Reading prediction files for ``benchsmith evaluate``: one policy for every scorer.

Every scorer (XCOPA, ComVE, CoGnition, MuCoW) reads its predictions through these
helpers, so a file is judged the same way whichever dataset it is for:

* **Streamed.** :func:`lines` reads one line at a time and a scorer checks each
  line as it comes (against the gold it loaded first), so the first bad line is
  reported as soon as it is read, and memory is bounded by the gold data, never
  by the file: a 10M-line file whose line 5,501 is bad stops at line 5,501.
* **Bytes.** UTF-8 only (a BOM on line 1, as spreadsheet programs write it, is
  dropped); a line ends at ``\\n`` (``\\r\\n`` too). Invalid UTF-8 or a NUL byte
  (a binary or truncated file) is an error at its line.
* **Numbers.** A score is a plain decimal number (``-12.5``, ``3e-4``): ``inf``,
  ``-inf``, ``nan`` (in any spelling, also JSON's ``Infinity``/``NaN``), a number
  too large for a float (``1e999``, a 5,000-digit integer), ``1_000`` and non-ASCII
  digits are refused, never taken as infinity: a score of infinity ties every
  other, so it silently moves accuracy. A log-probability of a zero probability
  has to be written as a large finite number. An integer field (an id, an index)
  must fit a signed 64-bit integer (what the release stores).
* **Bounded.** A line holds one prediction: a line over :data:`MAX_LINE_BYTES` is an error at its
  line, found after reading that many bytes (a 50 MB line never reaches memory whole); only a
  regular file is read (a FIFO would block, ``/dev/zero`` never ends).
* **Errors.** Each of these is a :class:`~benchsmith.errors.PredictionError`
  naming the file and the 1-based line, with a hint; an unreadable path is one too.
"""

from __future__ import annotations

import json
import math
import os
import re
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from benchsmith.errors import PredictionError
from benchsmith.loaders.rawfile import json_error, short

#: a plain decimal number: what every scorer accepts as a score
_NUMBER = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?", re.ASCII)
_INTEGER = re.compile(r"[+-]?\d+", re.ASCII)
INT64 = (-(2**63), 2**63 - 1)
#: the longest prediction line read: a translation, a JSON object with a few scores or a CSV row
#: is well under a kilobyte, so 64 KiB leaves room while bounding memory by lines x 64 KiB
MAX_LINE_BYTES = 1 << 16


def open_predictions(path: Path, hint: str) -> Any:
    """``path`` opened for reading bytes; a missing or unreadable path is a PredictionError."""
    try:
        mode = os.stat(path).st_mode
        if not stat.S_ISREG(mode) and not stat.S_ISDIR(mode):
            raise PredictionError("is not a regular file (a pipe, device or socket); expected a predictions file",
                                  path=path, hint=hint)
        return open(path, "rb")
    except FileNotFoundError:
        raise PredictionError("predictions file not found", path=path, hint=hint) from None
    except OSError as exc:  # a folder, no permission ...
        raise PredictionError(f"cannot read the predictions file ({exc.strerror or exc})", path=path,
                              hint=hint) from None


def lines(path: str | Path, hint: str = "Write the predictions as UTF-8 text") -> Iterator[tuple[int, str]]:
    """``(line number, text)`` of each line of ``path``, streamed, terminator stripped.

    Raises:
        PredictionError: the path cannot be read, or a line is not UTF-8 or holds a NUL byte.
    """
    path = Path(path)
    with open_predictions(path, hint) as fh:
        lineno = 0
        try:
            while raw := fh.readline(MAX_LINE_BYTES + 1):
                lineno += 1
                if len(raw) > MAX_LINE_BYTES:
                    raise PredictionError(f"line is longer than {MAX_LINE_BYTES:,} bytes; expected one prediction "
                                          "per line", path=path, line=lineno,
                                          hint="Check that the file has one prediction per line (line breaks lost?)")
                yield lineno, decode(raw, path, lineno)
        except OSError as exc:  # EIO and the like while reading: still the user's file
            raise PredictionError(f"cannot read the predictions file ({exc.strerror or exc})", path=path,
                                  line=lineno + 1, hint=hint) from None


def decode(raw: bytes, path: Path, lineno: int) -> str:
    """One raw line as text without its terminator (and without a BOM on line 1)."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise PredictionError(f"invalid UTF-8 byte {raw[exc.start:exc.start + 1]!r} at byte {exc.start} of the line",
                              path=path, line=lineno, hint="Save the predictions as UTF-8") from None
    if "\x00" in text:
        raise PredictionError("NUL byte in the line (a binary or truncated file?); expected text", path=path,
                              line=lineno, hint="Write the predictions as plain UTF-8 text")
    if lineno == 1:
        text = text.removeprefix("\ufeff")
    return text.removesuffix("\n").removesuffix("\r")


def number(text: str, path: Path, line: int, what: str = "score", hint: str | None = None) -> float:
    """``text`` (surrounding spaces ignored) as a finite float; else a PredictionError at ``path:line``."""
    s = text.strip()
    if not _NUMBER.fullmatch(s):
        special = s.lower().lstrip("+-") in ("inf", "infinity", "nan")
        raise PredictionError(
            f"{what} {short(s)} is not a finite number" if special else f"{what} {short(s)} is not a number",
            path=path, line=line, hint=hint or "Write a plain decimal number (inf, -inf and nan are refused)")
    value = float(s)
    if not math.isfinite(value):
        raise PredictionError(f"{what} {short(s)} is out of range (larger than a float holds)", path=path, line=line,
                              hint=hint or "Write a number between -1.8e308 and 1.8e308")
    return value


def integer(value: Any, path: Path, line: int, what: str, hint: str | None = None,
            bounds: tuple[int, int] = INT64) -> int:
    """A whole number from CSV text (its digits) or JSON (an int, or a whole finite float) within ``bounds``.

    Raises:
        PredictionError: anything else (``1.5``, ``true``, ``[0]``, a 5,000-digit integer ...).
    """
    if isinstance(value, str):
        s = value.strip()
        if _INTEGER.fullmatch(s) is None:
            raise PredictionError(f"{what} {short(s)} is not an integer", path=path, line=line, hint=hint)
        # int() of a 5,000-digit string raises (Python's int/str limit): such a number is out of range anyway
        result = int(s) if len(s.lstrip("+-").lstrip("0")) <= 4000 else None
    elif isinstance(value, bool) or not isinstance(value, (int, float)):
        raise PredictionError(f"{what} {short(value)} is not an integer", path=path, line=line, hint=hint)
    elif isinstance(value, float):
        if not value.is_integer():  # also inf and nan
            raise PredictionError(f"{what} {short(value)} is not an integer", path=path, line=line, hint=hint)
        result = int(value)
    else:
        result = value
    if result is None or not bounds[0] <= result <= bounds[1]:
        raise PredictionError(f"{what} {short(value)} is out of range; expected {bounds[0]} to {bounds[1]}",
                              path=path, line=line, hint=hint)
    return result


def loads(text: str, path: Path, line: int, hint: str | None = None) -> Any:
    """One JSON value of a prediction line: non-finite numbers (``NaN``, ``Infinity``, ``1e999``) and
    integers over Python's digit limit are PredictionErrors at ``path:line``, like bad JSON."""

    def constant(name: str) -> Any:
        raise PredictionError(f"JSON value {name} is not a finite number", path=path, line=line, hint=hint)

    def finite(s: str) -> float:
        v = float(s)
        if not math.isfinite(v):
            raise PredictionError(f"JSON number {short(s)} is out of range (larger than a float holds)", path=path,
                                  line=line, hint=hint)
        return v

    try:
        return json.loads(text, parse_constant=constant, parse_float=finite)
    except PredictionError:
        raise
    except (ValueError, RecursionError) as exc:
        what = json_error(exc)
        if what is None:
            raise
        raise PredictionError(what, path=path, line=line, hint=hint) from None
