"""MuCoW's per-suite figures and rule predicates on Arrow columns (Arrow's compute kernels).

The same figures as the row-dict functions of :mod:`.schema` and the same offending rows as the
Python predicates of :mod:`.checks`, without turning a suite into one dict per item: the card's
"Suite statistics" section (rendered at build and again by every ``validate``), the
``mucow_suite_statistics`` check, and the offending rows of ``mucow_contrastive_present``,
``_aligned``, ``_differs``, ``mucow_senses_per_word`` and ``mucow_items_per_sense`` (checks.py;
``mucow_target_words`` and ``mucow_domain_rule`` stay row by row, ~0.05 s each). Real release,
in-process CPU s of one cold ``validate`` (two runs each, the trees interleaved, load ~4,
2026-11-27): ``MucowBuilder.card_sections`` 0.28-0.43 -> 0.12-0.16, ``mucow_suite_statistics``
0.15-0.16 -> 0.05-0.07, the seven suite checks but ``mucow_source_length`` 0.53-0.54 -> 0.29-0.35
together (builders/mucow/README.md, "Checks").

Exactness: a value Python would treat differently from Arrow never reaches Arrow. A suite with a
null anywhere in the columns used (a null list, a null item in a list, a null string), or a
``domain`` that is neither ``in``/``out`` nor ``0``/``1``, takes the row-dict path
(:func:`.schema.suite_statistics`), which is what ran before, errors included. Otherwise strings
are compared byte for byte by both (Arrow's hash grouping and Python's ``set``/``==`` on ``str``),
and list lengths are the same numbers. Both paths are held equal on made-up suites, edge cases
included (tests/test_mucow_suite_columns.py, tests/test_mucow_checks.py), and on every suite of
the real release (tests/test_mucow_builder.py, slow).

The kernels are called through :func:`benchsmith.loaders.arrow_kernels.kernel`, not
``pyarrow.compute``, and the distinct (word, sense) pairs are counted on dictionary codes, not with
``Table.group_by``: a build renders the card, and ``group_by`` imported ``pyarrow.acero`` and
``pyarrow.dataset`` (0.25 s CPU, ``python -X importtime``) and ``pyarrow.compute`` 0.045 s more, of a
MuCoW build of ~3 CPU s (2026-11-27, seventh pass, README "Benchmarks"). ``group_by``'s
``pyarrow.dataset`` also imported pandas (0.57 s cumulative with it), and so does any conversion of a
Python string whose Arrow type is inferred (``pa.scalar(" ")``, or a ``str`` given to ``call_function``
or ``pyarrow.compute``: pyarrow 26 asks pandas whether strings default to its string dtype, which
:mod:`benchsmith.pandas_probe` does not answer): every constant here is a ``pa.scalar`` of an explicit
type (the column's), which asks nothing.
"""

from __future__ import annotations

from typing import Any

import pyarrow as pa
from benchsmith.loaders.arrow_kernels import kernel

from .schema import suite_statistics as suite_statistics_rows

SCORING = "scoring"

#: the columns :func:`suite_statistics` reads, per variant
STATISTICS_COLUMNS = {
    "scoring": ("ambiguous_word", "corpus", "sense", "contrastive_translations"),
    "translation": ("ambiguous_word", "corpus", "correct_words", "domain"),
}


def has_nulls(table: pa.Table) -> bool:
    """Whether any column, or any list column's items, holds a null (then the row-dict path runs)."""
    for column in table.columns:
        if column.null_count:
            return True
        listed = pa.types.is_list(column.type) or pa.types.is_large_list(column.type)
        if listed and kernel("list_flatten", column).null_count:
            return True
    return False


def sense_column(table: pa.Table, variant: str) -> pa.ChunkedArray:
    """Each item's sense as :func:`.schema.sense_of` gives it: ``sense`` (scoring), the correct
    words joined by one space (translation; ``" ".join([])`` and Arrow's join of an empty list are
    both ``""``)."""
    if variant == SCORING:
        return table.column("sense")
    return kernel("binary_join", table.column("correct_words"), pa.scalar(" ", pa.string()))


def _domain_counts(column: pa.ChunkedArray) -> tuple[int, int] | None:
    """``(in, out)``, or None when a value is not one of ``in``/``out``/``0``/``1`` (Python's
    ``("in", "out")[d]`` would index from the end or raise)."""
    if pa.types.is_string(column.type) or pa.types.is_large_string(column.type):
        values = ("in", "out")
    elif pa.types.is_integer(column.type):
        values = (0, 1)
    else:
        return None
    counts = [int(kernel("sum", kernel("equal", column, pa.scalar(v, column.type))).as_py() or 0)
              for v in values]
    if sum(counts) != len(column):
        return None
    return counts[0], counts[1]


def senses_per_word(table: pa.Table, variant: str) -> tuple[int, int]:
    """``(ambiguous words, senses)``: :func:`.schema.senses_per_word` of the table's rows."""
    words = table.column("ambiguous_word")
    return int(kernel("count_distinct", words).as_py()), distinct_pairs(words, sense_column(table, variant))


def distinct_pairs(first: pa.ChunkedArray, second: pa.ChunkedArray) -> int:
    """How many distinct ``(first[i], second[i])`` pairs (no nulls): ``Table.group_by`` on the two
    columns, ``.num_rows``, without ``pyarrow.acero`` (module docstring). Each column is
    dictionary-encoded (equal values, one index: the byte equality ``group_by`` hashes by) and a pair
    is the one int64 code ``index1 * len(dictionary2) + index2``."""
    a = kernel("dictionary_encode", first.combine_chunks())
    b = kernel("dictionary_encode", second.combine_chunks())
    codes = kernel("add", kernel("multiply", a.indices, pa.scalar(len(b.dictionary), pa.int64())), b.indices)
    return int(kernel("count_distinct", codes).as_py())


def suite_statistics(table: pa.Table, variant: str) -> dict[str, Any]:
    """:func:`.schema.suite_statistics` of the table's rows (the columns of
    :data:`STATISTICS_COLUMNS`; others are ignored), computed on the columns.

    Equal, key for key and in the same key order, to the row-dict function (which runs instead
    when the suite holds a null or an unexpected ``domain``). Real release, 16 suites, in-process
    CPU s at load ~3: 0.15 with ``to_pylist`` + the row-dict function, 0.05 here."""
    table = table.select(list(STATISTICS_COLUMNS[variant]))
    domains = None if variant == SCORING else _domain_counts(table.column("domain"))
    if has_nulls(table) or (variant != SCORING and domains is None):
        return suite_statistics_rows(table.to_pylist(), variant)
    words, senses = senses_per_word(table, variant)
    out: dict[str, Any] = {
        "items": table.num_rows,
        "ambiguous_words": words,
        "senses": senses,
        "senses_per_word": round(senses / words, 3) if words else 0.0,
    }
    counts = kernel("value_counts", table.column("corpus"))
    out["corpora"] = dict(sorted(zip(counts.field("values").to_pylist(), counts.field("counts").to_pylist())))
    if variant == SCORING:
        out["contrastive_pairs"] = list_items(table.column("contrastive_translations"))
    else:
        assert domains is not None
        out["in_domain"], out["out_of_domain"] = domains
    return out


def list_items(column: pa.ChunkedArray) -> int:
    """Items over every list of a list column: ``sum(len(v) for v in column.to_pylist())``, which
    runs instead when a list is null (and raises the TypeError it always raised)."""
    if column.null_count:
        return sum(len(v) for v in column.to_pylist())
    return int(kernel("sum", kernel("list_value_length", column)).as_py() or 0)
