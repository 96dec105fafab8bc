"""builders/mucow/suite_columns.py: the per-suite figures on Arrow columns equal the row-dict figures
of builders/mucow/schema.py (key for key, in order), on tables made here: edge cases of the values,
several chunks, and the values Python and Arrow would treat differently (nulls, an unexpected domain),
which take the row-dict path. The real release: tests/test_mucow_builder.py."""

from __future__ import annotations

import pyarrow as pa
import pytest
from benchsmith.builders.mucow import schema, suite_columns

SCORING = [
    {"ambiguous_word": "bank", "corpus": "europarl", "sense": "bn:1", "contrastive_translations": ["a", "b"]},
    {"ambiguous_word": "bank", "corpus": "europarl", "sense": "bn:2", "contrastive_translations": []},
    {"ambiguous_word": "bank", "corpus": "Tatoeba", "sense": "bn:1", "contrastive_translations": ["c"]},
    {"ambiguous_word": "Bank", "corpus": "europarl", "sense": "bn:1", "contrastive_translations": ["d"]},
    # the same letters, composed and decomposed: two words for Python, two for Arrow
    {"ambiguous_word": "caf\u00e9", "corpus": "\u00e9", "sense": "", "contrastive_translations": ["x", "x"]},
    {"ambiguous_word": "cafe\u0301", "corpus": "e\u0301", "sense": "", "contrastive_translations": ["y"]},
]
TRANSLATION = [
    {"ambiguous_word": "bank", "corpus": "OpenSubtitles", "correct_words": ["Bank", "Ufer"], "domain": 1},
    {"ambiguous_word": "bank", "corpus": "europarl", "correct_words": ["Bank Ufer"], "domain": 0},  # joins alike
    {"ambiguous_word": "bank", "corpus": "europarl", "correct_words": [], "domain": 0},
    {"ambiguous_word": "bank", "corpus": "europarl", "correct_words": [""], "domain": 0},
    {"ambiguous_word": "seal", "corpus": "europarl", "correct_words": ["Siegel"], "domain": 1},
]


def table(rows: list[dict], chunks: int = 1) -> pa.Table:
    """The rows as a table of ``chunks`` record batches (as a release read from several shards)."""
    if not rows:
        return pa.Table.from_pylist(rows, schema=pa.schema([(k, pa.string()) for k in ("ambiguous_word", "corpus")]))
    step = max(1, -(-len(rows) // chunks))
    parts = [pa.Table.from_pylist(rows[i:i + step]) for i in range(0, len(rows), step)]
    return pa.concat_tables(parts)


def both(rows: list[dict], variant: str, chunks: int = 1) -> tuple[dict, dict]:
    return schema.suite_statistics(rows, variant), suite_columns.suite_statistics(table(rows, chunks), variant)


@pytest.mark.parametrize("chunks", [1, 3])
@pytest.mark.parametrize("variant, rows", [("scoring", SCORING), ("translation", TRANSLATION)])
def test_statistics_equal_the_row_dict_figures(variant, rows, chunks):
    rows_figures, columns_figures = both(rows, variant, chunks)
    assert columns_figures == rows_figures and list(columns_figures) == list(rows_figures)


def test_a_string_domain_counts_as_its_names():
    rows = [{**r, "domain": ("in", "out")[r["domain"]]} for r in TRANSLATION]
    a, b = both(rows, "translation")
    assert a == b and (b["in_domain"], b["out_of_domain"]) == (3, 2)


@pytest.mark.parametrize("variant, rows", [
    ("scoring", [{**SCORING[0], "sense": None}]),
    ("scoring", [{**SCORING[0], "contrastive_translations": ["a", None]}]),
    ("translation", [{**TRANSLATION[0], "domain": -1}, TRANSLATION[1]]),  # Python's ("in", "out")[-1]: "out"
])
def test_values_python_reads_otherwise_take_the_row_dict_path(variant, rows):
    a, b = both(rows, variant)
    assert a == b


@pytest.mark.parametrize("variant, rows, error", [
    ("scoring", [{**SCORING[0], "contrastive_translations": None}], TypeError),
    ("translation", [{**TRANSLATION[0], "domain": 2}], IndexError),
    ("translation", [{**TRANSLATION[0], "correct_words": ["Bank", None]}], TypeError),  # " ".join
])
def test_what_the_row_dict_path_refuses_is_refused_alike(variant, rows, error):
    with pytest.raises(error):
        schema.suite_statistics(rows, variant)
    with pytest.raises(error):
        suite_columns.suite_statistics(table(rows), variant)


def test_list_items_counts_every_list_item():
    column = table(SCORING, 2).column("contrastive_translations")
    assert suite_columns.list_items(column) == sum(len(v) for v in column.to_pylist()) == 7
    with pytest.raises(TypeError):
        suite_columns.list_items(pa.chunked_array([pa.array([["a"], None])]))


def test_distinct_pairs_is_group_by_on_the_two_columns():
    """``distinct_pairs`` counts what ``Table.group_by([...]).aggregate([])`` did (its rows), on
    several chunks with repeats and composed/decomposed letters; a count off by one is caught."""
    import random

    rng = random.Random(3)
    words = [rng.choice(["bank", "Bank", "caf\u00e9", "cafe\u0301", ""]) for _ in range(300)]
    senses = [rng.choice(["bn:1", "bn:2", "", "e\u0301"]) for _ in range(300)]
    t = pa.concat_tables([pa.table({"w": words[i:i + 70], "s": senses[i:i + 70]}) for i in range(0, 300, 70)])
    expected = t.group_by(["w", "s"]).aggregate([]).num_rows
    got = suite_columns.distinct_pairs(t.column("w"), t.column("s"))
    assert got == expected == len(set(zip(words, senses)))
    assert suite_columns.distinct_pairs(t.column("w")[:0], t.column("s")[:0]) == 0
    assert got + 1 != expected


def test_the_statistics_import_neither_acero_nor_pyarrow_compute_nor_pandas():
    """What a build's card runs (``suite_statistics`` of both variants, after the build's pandas
    probe) leaves ``pyarrow.acero``, ``pyarrow.dataset``, ``pyarrow.compute`` and pandas unimported
    (``group_by`` imported the first two and pandas: ~0.6 s CPU of a MuCoW build)."""
    import subprocess
    import sys

    code = """if True:
        import sys
        import pyarrow as pa
        from benchsmith.pandas_probe import skip_pandas_probe
        skip_pandas_probe()
        from benchsmith.builders.mucow import suite_columns
        s, l = pa.string(), pa.list_(pa.string())
        scoring = pa.table([pa.array(["bank", "bank"], s), pa.array(["ep", "ep"], s), pa.array(["1", "2"], s),
                            pa.array([["a"], []], l)], names=list(suite_columns.STATISTICS_COLUMNS["scoring"]))
        translation = pa.table([pa.array(["bank", "seal"], s), pa.array(["ep", "ep"], s),
                                pa.array([["Bank"], ["Siegel", "x"]], l), pa.array([0, 1], pa.int64())],
                               names=list(suite_columns.STATISTICS_COLUMNS["translation"]))
        assert suite_columns.suite_statistics(scoring, "scoring")["senses"] == 2
        assert suite_columns.suite_statistics(translation, "translation")["in_domain"] == 1
        print(sorted(m for m in sys.modules if m.startswith(("pandas", "pyarrow.acero", "pyarrow.dataset",
                                                             "pyarrow.compute"))))
    """
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
