"""Scorer input files: an unreadable predictions file is a PredictionError naming it, never a traceback."""

from __future__ import annotations

import pytest

from benchsmith.builders.mucow.metric import read_lines_exact, read_scores
from benchsmith.errors import PredictionError


def test_absent_or_undecodable_prediction_files_are_prediction_errors(tmp_path):
    with pytest.raises(PredictionError, match="predictions file not found") as exc:
        read_scores(tmp_path / "absent.txt", 2)
    assert exc.value.path == tmp_path / "absent.txt"
    with pytest.raises(PredictionError, match="cannot read the predictions file"):
        read_lines_exact(tmp_path, 2, "translations")  # a folder
    bad = tmp_path / "bad.txt"
    bad.write_bytes(b"1.0\n\xff\n")
    with pytest.raises(PredictionError, match="invalid UTF-8") as exc:
        read_scores(bad, 2)
    assert exc.value.where == f"{bad}:2"
    good = tmp_path / "good.txt"
    good.write_bytes(b"-1.5\r\n-1e300\r\n")
    assert read_scores(good, 2) == [-1.5, -1e300]
    good.write_bytes(b"-1.5\r\n-inf\r\n")  # one policy for all scorers: never an infinite score
    with pytest.raises(PredictionError, match="not a finite number") as exc:
        read_scores(good, 2)
    assert exc.value.where == f"{good}:2"
