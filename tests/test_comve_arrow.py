"""ComVE's texts stay Arrow from the CSV reader to the release (README "Benchmarks", sixth pass).

The builder's Arrow columns are held equal, value for value and byte for byte (what
``RecordBatch.nbytes``, release.json's ``num_bytes``, counts), to the Python lists the build
wrote before: every config of every real split, encoded, and with the real errata applied.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest
from benchsmith.builders.comve import FEATURES, SPLITS, ComVE, split_files
from benchsmith.loaders import comve_csv
from benchsmith.loaders.arrow_kernels import int_array, kernel, without_validity
from comve_helpers import GOOD, FixtureComVE

from benchsmith.builder import get_builder
from benchsmith.erratum import ErrataApplier
from benchsmith.release.encoding import SplitEncoder
from benchsmith.release.writer import _errata_on_columns, _spliced
from benchsmith.source import resolve_sources


def _lists(columns: dict) -> dict:
    return {n: v.to_pylist() if isinstance(v, pa.Array) else v for n, v in columns.items()}


def _rows_of(instances: list, config: str) -> dict[str, list]:
    """The config's columns from the record-by-record loader's instances (the row truth)."""
    refs = [list(i.references) for i in instances]
    rows = {
        "subtask_a": {"sent0": [i.sent0 for i in instances], "sent1": [i.sent1 for i in instances],
                      "label": [i.a_label for i in instances]},
        "subtask_b": {"false_sent": [i.b_false_sent for i in instances],
                      **{f"option_{k}": [i.options[n] for i in instances] for n, k in enumerate("abc")},
                      "label": [i.b_label for i in instances]},
        "subtask_c": {"false_sent": [i.c_false_sent for i in instances], "references": refs},
        "tuples": {"sensical_statement": [i.sensical for i in instances],
                   "nonsensical_statement": [i.nonsensical for i in instances],
                   "correct_reason": [i.correct_reason for i in instances],
                   "confusing_reason1": [i.confusing_reasons[0] for i in instances],
                   "confusing_reason2": [i.confusing_reasons[1] for i in instances], "references": refs},
    }[config]
    return {"id": [i.id for i in instances], **rows}


def _encoded(config, split: str, columns: dict) -> pa.RecordBatch:
    enc = SplitEncoder(config, split, "id")
    try:
        return enc.encode_columns(columns, 0)
    finally:
        enc.ids.close()


def _same_batches(arrow: pa.RecordBatch, lists: pa.RecordBatch) -> None:
    assert arrow.equals(lists)
    assert arrow.nbytes == lists.nbytes  # release.json's num_bytes
    assert [c.buffers()[0] for c in arrow.columns] == [None] * arrow.num_columns


def test_fixture_columns_equal_the_record_by_record_instances():
    b = FixtureComVE()
    sources = resolve_sources(b.sources, {}, GOOD)
    for split in SPLITS:
        files = {k: sources.path("comve", rel) for k, rel in split_files(split).items()}
        instances = comve_csv._load_instances_exact(comve_csv.SplitFiles(**files))
        for config in b.configs():
            columns = b.columns(config, split, sources)
            assert any(isinstance(v, pa.Array) for v in columns.values())
            assert _lists(columns) == _rows_of(instances, config.name), (config.name, split)
            examples = list(b.examples(config, split, sources))
            assert all(type(v) in (str, int, list) for e in examples for v in e.values())


def test_where_the_bulk_reader_gives_up_the_record_reader_gives_the_same_columns(monkeypatch):
    """The builder's fallback (``comve_csv.load_columns``, record by record, which also raises the
    file-and-line errors) gives the bulk reader's columns, Arrow texts included."""
    from benchsmith.builders import comve

    b = FixtureComVE()
    sources = resolve_sources(b.sources, {}, GOOD)
    bulk = {(c.name, s): _lists(b.columns(c, s, sources)) for c in b.configs() for s in SPLITS}
    monkeypatch.setattr(comve, "bulk_columns", lambda files: None)
    monkeypatch.setattr(comve_csv, "bulk_columns", lambda files: None)  # its exact path, then
    exact = FixtureComVE()
    for config in exact.configs():
        for split in SPLITS:
            columns = exact.columns(config, split, sources)
            assert all(isinstance(columns[n], pa.Array) for n in columns if n not in ("id", "label"))
            assert _lists(columns) == bulk[config.name, split]


def test_real_columns_encode_as_their_lists_did_with_the_errata(raw):
    """Every real config and split: the Arrow columns give the batch the lists gave (values,
    nbytes, no validity bitmap), before and after the real errata (drops and replacements)."""
    b = get_builder("comve")
    assert isinstance(b, ComVE)
    sources = resolve_sources(b.sources, {}, raw)
    dropped = replaced = 0
    for config in b.configs():
        for split in config.splits:
            columns = b.columns(config, split, sources)
            errata = ErrataApplier(b.errata_applied, config.name, split, "id", config.features)
            arrow = _errata_on_columns(errata, columns, "id")
            lists = _errata_on_columns(
                ErrataApplier(b.errata_applied, config.name, split, "id", config.features), _lists(columns), "id")
            dropped += len(columns["id"]) - len(arrow["id"])
            replaced += len(arrow["id"]) == len(columns["id"]) and any(
                not v.equals(columns[n]) for n, v in arrow.items() if isinstance(v, pa.Array))
            _same_batches(_encoded(config, split, arrow), _encoded(config, split, lists))
    # train-identical-statements (5) and train-degenerate-options (9 train, 1 trial) drop rows; the
    # other two errata replace values
    assert dropped == 15 and replaced


def test_spliced_replaces_and_drops_rows_as_lists_do():
    strings = pa.array(["a", "b", "c", "d", "e"])
    assert _spliced(strings, {0: "A", 2: None, 4: "E"}, {2}).to_pylist() == ["A", "b", "d", "E"]
    assert _spliced(strings, {4: None}, {4}).to_pylist() == ["a", "b", "c", "d"]
    assert _spliced(strings, {}, set()).equals(strings)
    lists = pa.array([["x"], ["y", "z"], []], pa.list_(pa.string()))
    got = _spliced(lists, {1: ["w"]}, set())
    assert got.to_pylist() == [["x"], ["w"], []]
    assert got.nbytes == pa.array(got.to_pylist(), lists.type).nbytes


def test_without_validity_drops_an_all_valid_bitmap_only():
    taken = kernel("take", pa.array(["a", "bb", "c"]), int_array(np.array([2, 0], dtype=np.int64)))
    assert taken.buffers()[0] is not None  # Arrow allocated one: the case the helper is for
    plain = without_validity(taken)
    assert plain.buffers()[0] is None and plain.equals(taken)
    assert plain.nbytes == pa.array(["c", "a"]).nbytes != taken.nbytes
    with_null = pa.array(["a", None])
    assert without_validity(with_null) is with_null  # a real null keeps its bitmap
    sliced = without_validity(kernel("take", pa.array(["a", "b", "c"]), int_array(np.arange(3))).slice(1))
    assert sliced.to_pylist() == ["b", "c"]


def test_int_array_shares_a_numpy_buffer_and_refuses_other_dtypes():
    values = np.array([3, -1, 7], dtype=np.int8)
    assert int_array(values).type == pa.int8() and int_array(values).to_pylist() == [3, -1, 7]
    assert int_array(np.arange(4, dtype=np.int32)).to_pylist() == [0, 1, 2, 3]
    with pytest.raises(TypeError):
        int_array(np.array([1.5]))
    with pytest.raises(TypeError):
        int_array(np.arange(6, dtype=np.int64)[::2])  # not contiguous: the buffer would be wrong


def test_an_arrow_column_of_another_type_takes_the_list_checks():
    """An Arrow id or label column, or one of another type than its feature, is read as Python
    values and checked as a list is: an array never skips a check."""
    config = ComVE().config("subtask_a")
    good = {"id": pa.array(["1", "2"]), "sent0": pa.array(["x", "y"]), "sent1": ["u", "v"],
            "label": pa.array([0, 1])}
    assert _encoded(config, "test", good).equals(_encoded(config, "test", _lists(good)))
    from benchsmith.errors import SchemaError

    with pytest.raises(SchemaError, match="duplicate id"):
        _encoded(config, "test", {**good, "id": pa.array(["1", "1"])})
    with pytest.raises(SchemaError, match="label"):
        _encoded(config, "test", {**good, "label": pa.array([0, 5])})
    with pytest.raises(SchemaError, match="does not fit"):
        _encoded(config, "test", {**good, "sent0": pa.array([1, 2])})
    assert FEATURES["subtask_a"]["sent0"].dtype == "string"


def test_strict_quotes_is_strict_csv_on_random_text():
    """The bulk reader's quote check (one ``findall``) accepts exactly what strict ``csv`` reads,
    on random strings of quotes, delimiters, line ends and text (where the two could part)."""
    import csv
    import io
    import random

    from benchsmith.loaders.comve_columns import _strict_quotes

    def reads(data: bytes) -> bool:
        try:
            list(csv.reader(io.StringIO(data.decode(), newline=""), strict=True))
        except csv.Error:
            return False
        return True

    pieces = ['"', ",", "\n", "\r", "a", " ", '""', "\r\n"]
    rnd = random.Random(2)
    samples = ["".join(rnd.choice(pieces) for _ in range(rnd.randint(0, 10))).encode() for _ in range(3000)]
    assert [s for s in samples if _strict_quotes(s) != reads(s)] == []
    assert not _strict_quotes(b'"abc"x,1') and not _strict_quotes(b'a,"open') and _strict_quotes(b'a"b,"c""d"\n')
