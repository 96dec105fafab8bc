"""How an out-of-tree dataset declares its metric: ``METRICS`` here, found by ``Builder.metrics()``
(the ``metric`` module beside the builder's package), scored by the generic
``benchsmith evaluate superglue_copa PREDICTIONS [--split test]`` with no CLI code of ours.

Predictions: SuperGLUE's submission format for COPA, one JSON object a line,
``{"idx": 0, "label": 1}`` (``label`` 0: choice1, 1: choice2). The file is read through
``benchsmith.validation.predictions`` (streamed, UTF-8, NUL bytes and non-integers refused) and
checked row by row against the gold labels, so the first bad line is a ``PredictionError`` naming
the file and line, whatever the file's size.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from benchsmith.errors import PredictionError
from benchsmith.validation import predictions as pred_files
from benchsmith.validation.metrics.accuracy import Accuracy

HINT = 'Write one JSON object per line: {"idx": 0, "label": 1}'


class CopaAccuracy(Accuracy):
    """The generic exact-match accuracy over ``idx`` (keys and answers as strings)."""

    description = "accuracy of the chosen alternative (SuperGLUE's COPA metric)"

    def references(self, release: Any, config: str | None, split: str) -> dict[str, str]:
        t = release.table(str(config), split, ["idx", "label"])
        return {str(i): str(y) for i, y in zip(t.column("idx").to_pylist(), t.column("label").to_pylist())}

    def read_predictions(self, path: Path, references: dict[str, str]) -> dict[str, str]:
        out: dict[str, str] = {}
        for line, text in pred_files.lines(path, HINT):
            if not text.strip():
                continue
            row = pred_files.loads(text, path, line, hint=HINT)
            if not isinstance(row, dict) or "idx" not in row or "label" not in row:
                raise PredictionError("expected an object with idx and label", path=path, line=line, hint=HINT)
            idx = str(pred_files.integer(row["idx"], path, line, "idx", hint=HINT))
            label = str(pred_files.integer(row["label"], path, line, "label", hint=HINT, bounds=(0, 1)))
            if idx not in references:
                raise PredictionError(f"no item with idx {idx} in the split", path=path, line=line, hint=HINT)
            if idx in out:
                raise PredictionError(f"idx {idx} is predicted twice", path=path, line=line, hint=HINT)
            out[idx] = label
        if len(out) != len(references):
            missing = next(i for i in references if i not in out)
            raise PredictionError(f"no prediction for idx {missing} ({len(references) - len(out)} missing)",
                                  path=path, hint="Predict every item of the split")
        return out


#: what ``benchsmith evaluate superglue_copa`` scores with
METRICS = (CopaAccuracy,)
