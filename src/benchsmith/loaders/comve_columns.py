"""ComVE's six files of a split as columns, on the build's path: :func:`load_columns`.

The bulk path of :mod:`benchsmith.loaders.comve_csv` (whose docstring gives the files' layout and
the checks), split from it so that a build imports none of the record-by-record path's eight
frozen dataclasses (``Row``, ``StatementPair``... ``Instance``): defining them cost ~8 ms CPU of
every ComVE build (2026-11-27, ``dataclasses._process_class`` timed in a build). This module
imports nothing of ``comve_csv``; where :func:`bulk_columns` gives None the builder calls
``comve_csv.load_columns``, whose exact path names the file and line.
"""

from __future__ import annotations

import codecs
import csv
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

A_HEADER = ("id", "sent0", "sent1")
B_HEADER = ("id", "FalseSent", "OptionA", "OptionB", "OptionC")
C_HEADER = ("id", "FalseSent")
A_LABELS = ("0", "1")
B_LABELS = ("A", "B", "C")


@dataclass(frozen=True)
class SplitFiles:
    """The six files of one split (data + answers for subtasks A, B and C)."""

    a_data: Path
    a_answers: Path
    b_data: Path
    b_answers: Path
    c_data: Path
    c_answers: Path


#: the columns of :func:`load_columns`: :class:`Instance`'s fields, options and references one each
COLUMNS = ("id", "sent0", "sent1", "a_label", "b_false_sent", "option_a", "option_b", "option_c", "b_label",
           "c_false_sent", "reference1", "reference2", "reference3")


#: the columns :func:`load_columns` gives as Python lists (ids and labels); the others are Arrow
_PYTHON_COLUMNS = frozenset(["id", "a_label", "b_label"])


#: a quote that opens a field (not after a byte inside the field: the lookbehind), the quoted field
#: up to its closing quote, and that quote with the byte after it: group 1, empty where the field is
#: never closed. Strict ``csv`` refuses any byte there but a delimiter, a line end or the end of
#: the file, while ``pyarrow.csv`` would read ``"abc"x`` as ``abcx``. A quote inside an unquoted
#: field (literal to both) does not match. Possessive, so an escaped ``""`` is never taken for the
#: closing quote; a literal prefix (the quote), so the scan skips to the next quote at C speed (a
#: lookbehind first cost 80 ms a split). Bytes: UTF-8 never puts these ASCII bytes inside a
#: multi-byte character.
_QUOTED = re.compile(rb'"(?<![^,\r\n]")[^"]*+(?:""[^"]*+)*+("[\s\S]?|)')
#: group 1 of a field closed where strict ``csv`` lets it close
_CLOSED = frozenset([b'"', b'",', b'"\r', b'"\n'])


def _strict_quotes(data: bytes) -> bool:
    """Whether every quoted field of ``data`` (no BOM) is closed where strict ``csv`` lets it close.

    ``findall`` collects each quoted field's ending in C (ComVE's 24 files: ~45,000 quoted fields,
    0.012 s CPU in a Python loop over ``finditer``'s matches, 0.005-0.008 s here; the two agreed on
    200,000 random strings of quotes, delimiters, line ends and text, 2026-11-27). ``data``: any
    bytes-like object (the build's is an Arrow buffer, :func:`_read`)."""
    return set(_QUOTED.findall(data)) <= _CLOSED


#: a NUL byte: ``re`` scans any bytes-like object at C speed (``in`` on an Arrow buffer or a
#: memoryview would step through it item by item)
_NUL = re.compile(rb"\x00")


def _read(path: Path) -> Any | None:
    """The bytes of ``path`` as a ``pyarrow.Buffer``, or None where it cannot be read (the exact path
    then names the file and why).

    Read into Arrow's memory pool (mimalloc), which reuses the memory of the files parsed before it,
    where a fresh ``bytes`` a file (``Path.read_bytes``) touched new pages each time: ComVE's 24 files,
    each read and parsed in one process, 1,772 page faults that way against 110 (0.07-0.09 s CPU in
    all for both, three runs each at load ~5, 2026-11-27). The buffer is reference-counted: nothing
    reuses it while an array still points into it.
    """
    import pyarrow as pa

    try:
        with pa.OSFile(str(path)) as fh:
            return fh.read_buffer()
    except (OSError, pa.ArrowException):
        return None


def _bulk_file(path: Path, columns: Sequence[str], header: bool) -> list[Any] | None:
    """The columns of a file (header dropped), one ``pyarrow.StringArray`` each, if the file passes
    ``comve_csv.read_rows``' checks, else None (:func:`bulk_columns` checks the ids as
    ``comve_csv._rows`` does).

    Parsed by ``pyarrow.csv`` (a tenth of ``csv``'s CPU: 19 ms against ~170 ms for the training
    split's six files), on what it reads exactly as strict ``csv`` does: UTF-8 (every byte but the
    delimiters, quotes and line ends is in a cell, and Arrow validates every cell as UTF-8, refusing
    encoded surrogates, overlong forms and code points past U+10FFFF as Python's codec does: a
    Python ``decode`` first cost 3 ms more a build), no NUL, a leading BOM dropped, blank lines
    skipped, a quoted field closed only before a delimiter or a line end (:func:`_strict_quotes`;
    Arrow reads on past it), no field over ``csv.field_size_limit()`` characters, every record of
    the header's width (Arrow refuses others). Anything else makes Arrow fail or this return None,
    and the exact path names the file and line (tests/test_comve_loader.py, and the fuzzer with its
    invalid bytes, compare the two).
    """
    data = _read(path)
    if data is None:
        return None
    body = data.slice(len(codecs.BOM_UTF8)) if data[:3].to_pybytes() == codecs.BOM_UTF8 else data
    if _NUL.search(data) or not _strict_quotes(body):
        return None
    import pyarrow as pa
    import pyarrow.csv as pacsv
    from benchsmith.loaders.arrow_kernels import without_validity

    names = [f"c{i}" for i in range(len(columns))]
    try:
        table = pacsv.read_csv(
            body,
            # one thread: ComVE's files are small (1.3 MB at most), and Arrow's pool cost CPU without
            # a gain in wall time (24 files: 0.022 s CPU against 0.024-0.031 with threads, 2026-11-27)
            read_options=pacsv.ReadOptions(column_names=names, use_threads=False),
            parse_options=pacsv.ParseOptions(newlines_in_values=True),
            convert_options=pacsv.ConvertOptions(column_types=dict.fromkeys(names, pa.string()),
                                                 strings_can_be_null=False),
        )
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):  # another width, an unterminated quote
        return None
    cells = [without_validity(col.combine_chunks()) for col in table.columns]
    limit = csv.field_size_limit()
    # a field's bytes bound its characters: only a field of more bytes than the limit is counted
    if len(body) > limit and any(_longest(c, "binary_length") > limit and _longest(c, "utf8_length") > limit
                                 for c in cells):
        return None  # strict csv refuses a longer field
    if header:
        if not len(cells[0]) or tuple(c[0].as_py().strip() for c in cells) != tuple(columns):
            return None
        cells = [c.slice(1) for c in cells]
    return cells


def _longest(column: Any, length: str) -> int:
    """The largest ``length`` (``binary_length``: bytes, ``utf8_length``: characters) of a column."""
    from benchsmith.loaders.arrow_kernels import kernel

    return kernel("max", kernel(length, column)).as_py() or 0


def bulk_columns(files: SplitFiles) -> dict[str, Any] | None:
    """``comve_csv.load_columns`` without per-record objects, or None where any check fails (the
    builder then calls ``comve_csv.load_columns``, whose exact path raises the error naming the file
    and line).

    The ids (``list[str]``, stripped) and the labels (``list[int]`` for subtask A, ``list[str]``
    for B) are Python lists, which the writer hashes and maps; every text column is a
    ``pyarrow.StringArray`` as ``pyarrow.csv`` read it (no validity bitmap): a text never becomes
    a Python string on its way to the release (Arrow -> Python -> Arrow cost ~0.1 s CPU of a ComVE
    build; README "Benchmarks", sixth pass).
    """
    from benchsmith.loaders.arrow_kernels import int_array, kernel, without_validity

    aligned: list[list[Any]] = []
    ids: list[str] = []
    first = None  # the first file's ids, stripped, as Arrow: the five others are compared with it in C
    for path, columns, header in (
        (files.a_data, A_HEADER, True), (files.a_answers, ("id", "answer"), False),
        (files.b_data, B_HEADER, True), (files.b_answers, ("id", "answer"), False),
        (files.c_data, C_HEADER, True), (files.c_answers, ("id", "reference1", "reference2", "reference3"), False),
    ):
        cells = _bulk_file(Path(path), columns, header)
        if cells is None:
            return None
        stripped = kernel("utf8_trim_whitespace", cells[0])  # str.strip's whitespace (test_comve_stats.py)
        if aligned and stripped.equals(first):  # the first file's ids in its order (upstream's case): checked
            aligned.append(cells)
            continue
        rids = list(map(str.strip, cells[0].to_pylist()))  # a C-level map: no Python frame a record
        if not all(rids) or len(set(rids)) != len(rids):  # an empty or a repeated id
            return None
        if not aligned:
            ids, first = rids, stripped
        elif rids != ids:  # upstream's files agree in order; any other order is joined by id
            if set(rids) != set(ids):  # an extra or a missing id somewhere
                return None
            import numpy as np

            at = dict(zip(rids, range(len(rids))))
            order = int_array(np.fromiter(map(at.__getitem__, ids), dtype=np.int64, count=len(ids)))
            cells = [without_validity(kernel("take", col, order)) for col in cells]
        aligned.append(cells)
    a, a_ans, b, b_ans, c, c_ans = aligned
    a_labels = list(map(str.strip, a_ans[1].to_pylist()))
    b_labels = list(map(str.strip, b_ans[1].to_pylist()))
    if not set(a_labels) <= set(A_LABELS) or not set(b_labels) <= set(B_LABELS):
        return None
    # some reference not blank: the lengths of the trimmed references (whitespace is str.isspace's
    # in both, tests/test_comve_stats.py) do not add up to 0, on Arrow
    lengths = [kernel("utf8_length", kernel("utf8_trim_whitespace", r)) for r in c_ans[1:]]
    if len(ids) and kernel("min", kernel("add", kernel("add", *lengths[:2]), lengths[2])).as_py() == 0:
        return None
    return dict(zip(COLUMNS, (ids, a[1], a[2], list(map(int, a_labels)), b[1], b[2], b[3], b[4], b_labels,
                              c[1], c_ans[1], c_ans[2], c_ans[3])))
