"""The tolerance rule of every builder's published.yaml: a pass means the printed digits are
reproduced. A number's tolerance is at most half a unit of its last printed digit (7.67: 0.005;
0.5: 0.05; 500: 0.5) unless the figure names a ``discrepancy:`` that says why it is wider."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path

import pytest
import yaml

BUILDERS = Path(__file__).resolve().parent.parent / "src" / "benchsmith" / "builders"
FILES = sorted(BUILDERS.glob("*/published.yaml"))


class _Printed(yaml.SafeLoader):
    """Keeps each number as printed: 7.80 stays '7.80' (two decimals), not the float 7.8."""


def _number(loader, node):
    return Decimal(node.value.replace("_", ""))


_Printed.add_constructor("tag:yaml.org,2002:float", _number)
_Printed.add_constructor("tag:yaml.org,2002:int", _number)


def half_unit(value) -> Decimal | None:
    """Half a unit of the last printed digit; the finest over a list's or mapping's numbers."""
    if isinstance(value, Decimal):
        return Decimal(5).scaleb(min(value.as_tuple().exponent, 0) - 1)
    parts = value.values() if isinstance(value, dict) else value if isinstance(value, list) else []
    halves = [h for v in parts if (h := half_unit(v)) is not None]
    return min(halves, default=None)


def too_wide(path: Path) -> list[str]:
    doc = yaml.load(path.read_text(encoding="utf-8"), Loader=_Printed)
    out = []
    for f in doc["figures"]:
        half = half_unit(f.get("value"))
        tol = Decimal(f.get("tolerance", 0))
        if half is not None and tol > half and not f.get("discrepancy"):
            out.append(f"{f['id']}: printed {f['value']}, tolerance {tol} > {half}")
    return out


def test_half_unit_of_the_printed_digits():
    doc = yaml.load("figures: [{id: a, value: 7.80}, {id: b, value: 0.5}, {id: c, value: 500}, "
                    "{id: d, value: {x: 0.41, y: 1}}]", Loader=_Printed)
    assert [str(half_unit(f["value"])) for f in doc["figures"]] == ["0.005", "0.05", "0.5", "0.005"]


def test_the_rule_catches_a_wide_tolerance(tmp_path):
    p = tmp_path / "published.yaml"
    p.write_text("figures:\n- {id: a, value: 7.67, tolerance: 0.01}\n- {id: b, value: 7.67, tolerance: 0.005}\n"
                 "- {id: c, value: 0.41, tolerance: 0.02, discrepancy: named}\n")
    assert too_wide(p) == ["a: printed 7.67, tolerance 0.01 > 0.005"]


@pytest.mark.parametrize("path", FILES, ids=[p.parent.name for p in FILES])
def test_every_tolerance_is_the_printed_digits_or_a_named_discrepancy(path):
    assert too_wide(path) == []
