"""Readers for the ComVE (SemEval-2020 Task 4) CSV files, as upstream ships them.

Upstream (``ALL data/`` of the task repository) has, per split, one data file
and one answers file per subtask:

* subtask A data: header ``id,sent0,sent1``; answers: ``id,label`` rows, no header,
  label ``0``/``1`` = the index of the statement that does NOT make sense;
* subtask B data: header ``id,FalseSent,OptionA,OptionB,OptionC``; answers
  ``id,A|B|C``, no header;
* subtask C data: header ``id,FalseSent``; answers ``id,ref1,ref2,ref3``, no header.

Upstream's ``train.csv``/``dev.csv``/``test.csv`` (one 7-column row per instance, no
id) are not read here: the builder declares them as optional sources only, and the
findings about them are re-derived by ``tests/test_comve_real.py``.

Every reader decodes strictly (invalid UTF-8 is an error, not a replacement
character; a NUL byte, which ``csv`` would keep inside a cell, is an error too), uses ``csv`` in strict mode, checks the header (an empty file has
none) and the number of columns of every row, and rejects empty or duplicate
ids. Errors are :class:`~benchsmith.errors.ParseError` naming the file and the
1-based line of the offending row. :func:`load_instances` joins the six files of a split by id,
and rejects answers for ids the data lacks and data ids without an answer.

**A file cut mid-row.** A cut inside a quoted field is a ``csv`` error; a cut inside the last,
unquoted field of the last row parses as a whole (shorter) row, which only the file's end can
tell apart. Upstream's train, dev and test files (all 21, the combined ``*.csv`` too) end with
``\n`` and quote no last field, so a file of theirs that does not end with a newline was cut:
a :class:`~benchsmith.errors.ParseError` naming the file and the last record's line, that record
never yielded. The six ``Trial Data`` files are shipped without a final newline, so their
readers are told so (``final_newline=False``, :attr:`SplitFiles.final_newline`) and cannot tell a
cut there; the builder's sha256 of every source (``checksums.tsv``) does. A cut at a row boundary
leaves whole rows; :func:`load_instances` reports the ids one file then lacks.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchsmith.errors import ParseError
from benchsmith.loaders.rawfile import check_no_nul, read_bytes

A_HEADER = ("id", "sent0", "sent1")
B_HEADER = ("id", "FalseSent", "OptionA", "OptionB", "OptionC")
C_HEADER = ("id", "FalseSent")
A_LABELS = ("0", "1")
B_LABELS = ("A", "B", "C")

_REDOWNLOAD = "Re-download the file from the official ComVE repository (or fix the row)"


@dataclass(frozen=True)
class SplitFiles:
    """The six files of one split (data + answers for subtasks A, B and C)."""

    a_data: Path
    a_answers: Path
    b_data: Path
    b_answers: Path
    c_data: Path
    c_answers: Path
    #: upstream ends each file with a newline (train, dev, test; not the trial files): see the module docstring
    final_newline: bool = True


@dataclass(frozen=True)
class Row:
    """One CSV record: ``line`` is the 1-based line where the record starts."""

    line: int
    cells: tuple[str, ...]


def read_rows(
    path: str | Path,
    columns: Sequence[str],
    *,
    header: bool,
    final_newline: bool = True,
) -> Iterator[Row]:
    """Yield the records of a ComVE CSV file, checked for shape.

    Args:
        path: the file.
        columns: the expected column names (the header when ``header`` is true,
            otherwise only used for messages and the column count).
        header: whether the first record is a header that must equal ``columns``.
        final_newline: the file ends with a newline as upstream ships it, so one that does not
            was cut inside its last record (see the module docstring).

    Raises:
        ParseError: invalid encoding, a NUL byte, an unterminated quoted field or no final
            newline where one is expected (a truncated file), a header other than ``columns`` (or none: an empty file)
            or a record with another number of columns; each names the file and line.
        SourceError: the path cannot be read (missing, a directory).
    """
    path = Path(path)
    data = read_bytes(path)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise ParseError(
            f"invalid utf-8 byte {data[exc.start:exc.start + 1]!r} "
            f"(byte {exc.start} of the file); expected utf-8 text",
            path=path,
            line=line,
            hint="Re-encode the file as UTF-8, or re-download it from upstream",
        ) from None
    check_no_nul(text, path)
    text = text.removeprefix("\ufeff")  # a BOM is an editor artefact, not part of the first id
    reader = csv.reader(io.StringIO(text, newline=""), strict=True)
    expected = tuple(columns)
    end = 0  # line on which the previous record ended
    first = True
    pending: Row | None = None  # held back until the file is known not to end inside it
    try:
        for cells in reader:
            start, end = end + 1, reader.line_num
            if not cells:  # blank line
                continue
            if first and header:
                first = False
                if tuple(c.strip() for c in cells) != expected:
                    missing = [c for c in expected if c not in cells]
                    raise ParseError(
                        f"header is {cells!r}; expected {list(expected)!r}"
                        + (f" (missing column {', '.join(map(repr, missing))})" if missing else ""),
                        path=path,
                        line=start,
                        hint=_REDOWNLOAD,
                    )
                continue
            first = False
            if len(cells) != len(expected):
                raise ParseError(
                    f"record has {len(cells)} column(s); expected {len(expected)} ({', '.join(expected)})",
                    path=path,
                    line=start,
                    hint="A column is missing or the file is truncated. " + _REDOWNLOAD,
                )
            if pending is not None:
                yield pending
            pending = Row(start, tuple(cells))
    except csv.Error as exc:
        truncated = "end of data" in str(exc)
        raise ParseError(
            ("file ends inside a quoted field (truncated file?)" if truncated else f"malformed CSV: {exc}")
            + "; expected complete comma-separated records",
            path=path,
            line=end + 1 if truncated else reader.line_num,
            hint=_REDOWNLOAD,
        ) from None
    if first and header:
        raise ParseError(
            f"file is empty; expected the header {list(expected)!r}", path=path, line=1, hint=_REDOWNLOAD
        )
    if final_newline and text and not text.endswith(("\n", "\r")):
        raise ParseError(
            "the file ends mid-row (no newline after its last record); expected complete records, each "
            "ending with a newline as upstream's file does",
            path=path,
            line=pending.line if pending is not None else end,
            hint="The file was cut (an interrupted download or copy): re-download it from the official ComVE "
                 "repository",
        )
    if pending is not None:
        yield pending


# --------------------------------------------------------------------------- typed records


@dataclass(frozen=True)
class StatementPair:
    """Subtask A data: two statements, one of which does not make sense."""

    id: str
    sent0: str
    sent1: str
    line: int


@dataclass(frozen=True)
class ReasonChoice:
    """Subtask B data: the nonsensical statement and three candidate reasons."""

    id: str
    false_sent: str
    options: tuple[str, str, str]
    line: int


@dataclass(frozen=True)
class FalseStatement:
    """Subtask C data: the nonsensical statement whose reason is to be generated."""

    id: str
    false_sent: str
    line: int


@dataclass(frozen=True)
class Answer:
    """A line of a subtask A/B answers file."""

    id: str
    answer: str
    line: int


@dataclass(frozen=True)
class References:
    """A line of a subtask C answers file: the three reference reasons (may be empty)."""

    id: str
    references: tuple[str, str, str]
    line: int


def _rows(path: str | Path, columns: Sequence[str], header: bool, final_newline: bool = True) -> list[Row]:
    """The records of a file whose first column is a unique, non-empty id."""
    path = Path(path)
    rows = list(read_rows(path, columns, header=header, final_newline=final_newline))
    seen: dict[str, int] = {}
    for row in rows:
        rid = row.cells[0].strip()
        if not rid:
            raise ParseError("empty id; expected a non-empty instance id", path=path, line=row.line,
                             hint=_REDOWNLOAD)
        if rid in seen:
            raise ParseError(
                f"duplicate id {rid!r} (first on line {seen[rid]}); expected unique ids",
                path=path,
                line=row.line,
                hint=_REDOWNLOAD,
            )
        seen[rid] = row.line
    return rows


def read_subtask_a(path: str | Path, *, final_newline: bool = True) -> list[StatementPair]:
    return [StatementPair(r.cells[0].strip(), r.cells[1], r.cells[2], r.line)
            for r in _rows(path, A_HEADER, True, final_newline)]


def read_subtask_b(path: str | Path, *, final_newline: bool = True) -> list[ReasonChoice]:
    return [
        ReasonChoice(r.cells[0].strip(), r.cells[1], (r.cells[2], r.cells[3], r.cells[4]), r.line)
        for r in _rows(path, B_HEADER, True, final_newline)
    ]


def read_subtask_c(path: str | Path, *, final_newline: bool = True) -> list[FalseStatement]:
    return [FalseStatement(r.cells[0].strip(), r.cells[1], r.line)
            for r in _rows(path, C_HEADER, True, final_newline)]


def read_answers(path: str | Path, allowed: Sequence[str], *, final_newline: bool = True) -> list[Answer]:
    """A subtask A or B answers file (``id,answer``, no header); answers must be in ``allowed``."""
    path = Path(path)
    out = []
    for r in _rows(path, ("id", "answer"), False, final_newline):
        answer = r.cells[1].strip()
        if answer not in allowed:
            raise ParseError(
                f"id {r.cells[0].strip()!r} has label {r.cells[1]!r}; expected one of {list(allowed)}",
                path=path,
                line=r.line,
                hint=_REDOWNLOAD,
            )
        out.append(Answer(r.cells[0].strip(), answer, r.line))
    return out


def read_references(path: str | Path, *, final_newline: bool = True) -> list[References]:
    """A subtask C answers file (``id,ref1,ref2,ref3``, no header). Empty references are
    kept as ``""`` (upstream's trial file has some); a row with no reference is an error."""
    path = Path(path)
    out = []
    for r in _rows(path, ("id", "reference1", "reference2", "reference3"), False, final_newline):
        refs = (r.cells[1], r.cells[2], r.cells[3])
        if not any(x.strip() for x in refs):
            raise ParseError(
                f"id {r.cells[0].strip()!r} has no reference reason; expected 1 to 3 non-empty references",
                path=path,
                line=r.line,
                hint=_REDOWNLOAD,
            )
        out.append(References(r.cells[0].strip(), refs, r.line))
    return out


# --------------------------------------------------------------------------- joining


@dataclass(frozen=True)
class Instance:
    """One ComVE instance joined across the three subtasks by id.

    ``a_label`` is the index (0/1) of the statement that does not make sense,
    ``b_label`` the letter of the correct reason.
    """

    id: str
    sent0: str
    sent1: str
    a_label: int
    b_false_sent: str
    options: tuple[str, str, str]
    b_label: str
    c_false_sent: str
    references: tuple[str, str, str]

    @property
    def nonsensical(self) -> str:
        return (self.sent0, self.sent1)[self.a_label]

    @property
    def sensical(self) -> str:
        return (self.sent0, self.sent1)[1 - self.a_label]

    @property
    def correct_reason(self) -> str:
        return self.options[B_LABELS.index(self.b_label)]

    @property
    def confusing_reasons(self) -> tuple[str, str]:
        i = B_LABELS.index(self.b_label)
        return tuple(o for k, o in enumerate(self.options) if k != i)  # type: ignore[return-value]


def _by_id(reference: Sequence[Any], other: Sequence[Any], ref_path: Path, other_path: Path, *,
           answers: bool) -> dict[str, Any]:
    """``{id: record of other}``, where ``other`` must hold exactly the ids of ``reference``.

    ``answers``: ``other`` is the answers file of the data file ``reference``;
    otherwise both are data files of one split (subtask A's is the reference).
    """
    if answers:
        extra = ("answer for id {id!r}, which is not in the data file {ref!r}; "
                 "expected answers only for ids the data holds")
        missing = "id {id!r} has no answer in {other!r}; expected one answer per instance"
        extra_hint = f"Use the answers file that belongs to {ref_path}, or re-download both"
    else:
        same = "expected the three subtask files of a split to hold the same instances"
        extra = "id {id!r} is not in {ref!r}; " + same
        missing = "id {id!r} is missing from {other!r}; " + same
        extra_hint = _REDOWNLOAD
    ref_ids = {r.id for r in reference}
    for o in other:
        if o.id not in ref_ids:
            raise ParseError(extra.format(id=o.id, ref=ref_path.name), path=other_path, line=o.line,
                             hint=extra_hint)
    by_id = {o.id: o for o in other}
    for r in reference:
        if r.id not in by_id:
            raise ParseError(missing.format(id=r.id, other=other_path.name), path=ref_path, line=r.line,
                             hint=f"{other_path} may be truncated; re-download it")
    return by_id


def load_instances(files: SplitFiles) -> list[Instance]:
    """Read and join the six files of a split, in the order of the subtask A data file.

    The answers files are the truth for labels; ids are kept as upstream spells them.
    """
    nl = files.final_newline
    a = read_subtask_a(files.a_data, final_newline=nl)
    a_ans = _by_id(a, read_answers(files.a_answers, A_LABELS, final_newline=nl), files.a_data, files.a_answers,
                   answers=True)
    b = read_subtask_b(files.b_data, final_newline=nl)
    b_ans = _by_id(b, read_answers(files.b_answers, B_LABELS, final_newline=nl), files.b_data, files.b_answers,
                   answers=True)
    c = read_subtask_c(files.c_data, final_newline=nl)
    c_ans = _by_id(c, read_references(files.c_answers, final_newline=nl), files.c_data, files.c_answers,
                   answers=True)
    b_by_id = _by_id(a, b, files.a_data, files.b_data, answers=False)
    c_by_id = _by_id(a, c, files.a_data, files.c_data, answers=False)
    return [
        Instance(
            id=pair.id,
            sent0=pair.sent0,
            sent1=pair.sent1,
            a_label=int(a_ans[pair.id].answer),
            b_false_sent=b_by_id[pair.id].false_sent,
            options=b_by_id[pair.id].options,
            b_label=b_ans[pair.id].answer,
            c_false_sent=c_by_id[pair.id].false_sent,
            references=c_ans[pair.id].references,
        )
        for pair in a
    ]
