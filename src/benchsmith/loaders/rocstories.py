"""ROCStories CSV files (Mostafazadeh et al., 2016).

Two layouts are read, recognised by their header:

* the story corpus: ``storyid, storytitle, sentence1 .. sentence5``;
* the Story Cloze Test: ``InputStoryid, InputSentence1 .. InputSentence4,
  RandomFifthSentenceQuiz1, RandomFifthSentenceQuiz2, AnswerRightEnding``.

A :class:`Story` keeps the id and the sentences in column order (for the cloze
files the four context sentences, then both candidate endings: each is a
sentence of the corpus). Errors name the file and the 1-based physical line.
"""

from __future__ import annotations

import csv
import io
import re
from dataclasses import dataclass
from pathlib import Path

from benchsmith.errors import ParseError
from benchsmith.loaders.rawfile import check_no_nul, read_bytes, short

_SENTENCE_COL = re.compile(r"^(?:Input)?[Ss]entence\d$|^RandomFifthSentenceQuiz\d$")
_ID_COLS = ("storyid", "InputStoryid")


@dataclass(frozen=True)
class Story:
    id: str
    sentences: tuple[str, ...]
    line: int


def read_rocstories(path: str | Path) -> list[Story]:
    """Read one ROCStories-format CSV.

    Raises:
        ParseError: not UTF-8, a NUL byte, no id or sentence columns in the header,
            a row with the wrong number of fields, or an empty sentence.
        SourceError: the path cannot be read (missing, a directory).
    """
    path = Path(path)
    data = read_bytes(path)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ParseError(f"not UTF-8 ({exc.reason})", path=path, line=data.count(b"\n", 0, exc.start) + 1,
                         hint="Re-encode the file as UTF-8") from None
    check_no_nul(text, path)
    reader = csv.reader(io.StringIO(text.removeprefix("\ufeff"), newline=""))
    try:
        header = next(reader, None)
        if header is None:
            raise ParseError("empty file; expected a ROCStories CSV header", path=path, line=1,
                             hint="Pass a ROCStories or Story Cloze Test CSV")
        id_col = next((header.index(c) for c in _ID_COLS if c in header), None)
        sent_cols = [i for i, h in enumerate(header) if _SENTENCE_COL.match(h.strip())]
        if id_col is None or not sent_cols:
            raise ParseError(
                f"header {short(header)} has no story id column ({' or '.join(_ID_COLS)}) or no sentence columns",
                path=path, line=1,
                hint="Expected storyid,storytitle,sentence1..5 or the Story Cloze Test header",
            )
        stories: list[Story] = []
        for row in reader:
            lineno = reader.line_num
            if not row:
                continue
            if len(row) != len(header):
                raise ParseError(f"{len(row)} fields, expected {len(header)}", path=path, line=lineno,
                                 hint="Quote fields that contain commas")
            sents = tuple(row[i].strip() for i in sent_cols)
            if any(not s for s in sents):
                raise ParseError(f"empty sentence in story {short(row[id_col])}", path=path, line=lineno,
                                 hint="Every sentence column needs text")
            stories.append(Story(row[id_col], sents, lineno))
        return stories
    except csv.Error as exc:
        raise ParseError(f"malformed CSV: {exc}", path=path, line=reader.line_num,
                         hint="Check the quoting") from None
