"""ComVE's errata: derived from the 1.0.0 data (builders/comve/errata.py), applied by the core.

On the fixture: the committed errata.tsv is what the derivation gives, 1.1.0 differs from
1.0.0 by exactly its rows, the builder itself yields upstream values in every version, and
every rule and its failure modes (a U+FFFD without a restoration, a stale restoration, A and
B disagreeing) on tiny in-memory releases. The real errata.tsv is re-derived from the raw
files in test_comve_real.py.
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import datasets
import pytest
from comve_helpers import FIXTURE_DATA, GOOD, FixtureComVE, build, derive_fixture_errata

from benchsmith.builders.comve import FEATURES, ComVE
from benchsmith.builders.comve import errata as comve_errata
from benchsmith.builders.comve.errata import Restoration, derive_rows
from benchsmith.erratum import read_errata_tsv, write_errata_tsv
from benchsmith.errors import ParseError, SchemaError
from benchsmith.manifest import ReleaseInfo
from benchsmith.source import resolve_sources


@pytest.fixture(scope="module")
def releases(tmp_path_factory):
    reg = tmp_path_factory.mktemp("comve-errata") / "reg"
    return {v: build(GOOD, reg, v) for v in ("1.0.0", "1.1.0")}


def _all(release, config: str, split: str) -> dict[str, dict]:
    return {e["id"]: e for e in release.examples(config, split)}


# ------------------------------------------------------------------ the files


def test_fixture_errata_tsv_is_the_derivation():
    assert comve_errata.same_rows(FIXTURE_DATA / "errata.generated.tsv", derive_fixture_errata())


def test_real_errata_tsv_declares_the_four_errata_of_1_1_0():
    errata = read_errata_tsv(ComVE.generated_errata_path())
    assert [(e.id, e.version) for e in errata] == [(i, "1.1.0") for i in comve_errata.ERRATA]
    rows = {e.id: len(e.rows) for e in errata}
    # 1 statement in 3 configs; 7 lost characters in 12 fields; 9 + 1 and 5 dropped items
    assert rows == {"test-1698-statement": 3, "replacement-characters": 12, "train-degenerate-options": 10,
                    "train-identical-statements": 5}
    assert [r.item for r in errata[2].rows if r.split == "trial"] == ["1998"]
    assert all(r.evidence for e in errata for r in e.rows)
    assert (ComVE.module_dir() / "errata.yaml").exists() is False  # one format only


# ------------------------------------------------------------------ applied by the core


def test_builder_yields_upstream_values_in_every_version():
    def examples(version: str) -> list:
        b = FixtureComVE(version)
        srcs = resolve_sources(b.sources, {}, GOOD)
        return [list(b.examples(c, s, srcs)) for c in b.configs() for s in c.splits]

    assert examples("1.0.0") == examples("1.1.0")


def test_1_1_0_differs_from_1_0_0_by_exactly_the_rows(releases):
    old, new = releases["1.0.0"], releases["1.1.0"]
    assert old.info.to_dict()["errata_applied"] == []
    assert [e["id"] for e in old.info.to_dict()["errata_pending"]] == [
        "test-1698-statement", "replacement-characters", "train-degenerate-options"]
    applied = new.info.to_dict()["errata_applied"]
    assert [e["id"] for e in applied] == [e["id"] for e in old.info.to_dict()["errata_pending"]]
    assert applied[2]["items"] == ["subtask_b/trial/2"] and "drop 1 item(s)" in applied[2]["fix"]
    rows = [r for e in read_errata_tsv(FIXTURE_DATA / "errata.generated.tsv") for r in e.rows]
    expected = {}
    for r in rows:
        expected[r.config, r.split, r.item] = expected.get((r.config, r.split, r.item), set()) | {r.field}
    changed = {}
    for config in old.configs():
        for split in old.splits(config):
            a, b = _all(old, config, split), _all(new, config, split)
            for i, ex in a.items():
                if i not in b:
                    changed[config, split, i] = {"*"}
                    continue
                diff = {f for f in ex if ex[f] != b[i][f]}
                if diff:
                    changed[config, split, i] = diff
                    for r in rows:
                        if (r.config, r.split, r.item) == (config, split, i) and r.field in diff:
                            cell = b[i][r.field]
                            cell = json.dumps(cell, ensure_ascii=False) if isinstance(cell, list) else cell
                            assert cell == r.new
    assert changed == expected
    assert _all(new, "tuples", "trial")["1"]["nonsensical_statement"] == "he put an elephant into the fridge"
    assert _all(new, "subtask_c", "trial")["2"]["references"][2] == "the stone is not edible"


def test_a_stale_row_stops_the_build_naming_the_tsv_line(tmp_path: Path, monkeypatch):
    rows = [r for e in read_errata_tsv(FIXTURE_DATA / "errata.generated.tsv") for r in e.rows]
    bad = tmp_path / "errata.tsv"
    write_errata_tsv(bad, [replace(rows[0], old="he put a giraffe in the fridge"), *rows[1:]])
    monkeypatch.setattr(FixtureComVE, "generated_errata_path", classmethod(lambda cls: bad))
    with pytest.raises(ParseError) as exc:
        build(GOOD, tmp_path / "reg", "1.1.0")
    assert exc.value.path == bad and exc.value.line == 2
    assert "'he put a giraffe in the fridge', but the source has 'he put an elephant in the fridge'" in str(exc.value)
    assert not (tmp_path / "reg" / "comve" / "1.1.0").exists()


# ------------------------------------------------------------------ the rules, on tiny releases


class TinyRelease:
    """What derive_rows reads of a release: configs, splits, features, examples, info."""

    version = "1.0.0"

    def __init__(self, data: dict[str, dict[str, list[dict]]]) -> None:
        self.data = data
        self.info = ReleaseInfo(name="comve", version="1.0.0", configs={})

    def configs(self) -> list[str]:
        return list(self.data)

    def splits(self, config: str) -> list[str]:
        return list(self.data[config])

    def features(self, config: str) -> datasets.Features:
        return FEATURES[config]

    def examples(self, config: str, split: str):
        yield from (dict(e) for e in self.data[config][split])


def _instance(i: str, s0: str, s1: str, a: int, b_fs: str, opts: tuple[str, str, str], b: int, c_fs: str,
              refs: list[str]) -> dict[str, dict]:
    conf = [o for k, o in enumerate(opts) if k != b]
    return {
        "subtask_a": {"id": i, "sent0": s0, "sent1": s1, "label": a},
        "subtask_b": {"id": i, "false_sent": b_fs, "option_a": opts[0], "option_b": opts[1], "option_c": opts[2],
                      "label": b},
        "subtask_c": {"id": i, "false_sent": c_fs, "references": refs},
        "tuples": {"id": i, "sensical_statement": (s0, s1)[1 - a], "nonsensical_statement": (s0, s1)[a],
                   "correct_reason": opts[b], "confusing_reason1": conf[0], "confusing_reason2": conf[1],
                   "references": refs},
    }


def _tiny(*instances: dict[str, dict], split: str = "train") -> TinyRelease:
    return TinyRelease({c: {split: [inst[c] for inst in instances]} for c in FEATURES})


OK = ("Ice is cold", "Ice is hot", 1, "Ice is hot", ("Ice is frozen water", "Ice floats", "Fire is hot"), 0,
      "Ice is hot", ["Ice is frozen water", "Ice is below zero", "Frozen water is cold"])


def test_a_clean_release_has_no_errata():
    assert derive_rows(_tiny(_instance("1", *OK)), restorations=()) == []


@pytest.mark.parametrize(("options", "why"), [
    (("Ice is frozen water", "Ice floats", ""), "option C is empty"),
    (("Ice is frozen water", "ice is frozen water ", "Fire is hot"), "option B repeats the correct option A"),
    (("Ice is frozen water", "Fire is hot", "Fire is hot"), "the two confusing options are the same sentence"),
])
def test_degenerate_options_are_dropped_from_subtask_b(options, why):
    fields = list(OK)
    fields[4] = options
    (row,) = derive_rows(_tiny(_instance("7", *fields)), restorations=())
    assert (row.id, row.key, row.field, row.old, row.new) == ("train-degenerate-options", "subtask_b/train/7", "*",
                                                             "*", "<drop>")
    assert why in row.evidence


def test_identical_statements_are_dropped_from_subtask_a():
    fields = list(OK)
    fields[1] = fields[0]  # sent1 == sent0
    fields[3] = fields[6] = fields[0]
    (row,) = derive_rows(_tiny(_instance("3", *fields)), restorations=())
    assert (row.id, row.key, row.new) == ("train-identical-statements", "subtask_a/train/3", "<drop>")


def test_statement_of_subtask_c_wins_in_every_config():
    fields = list(OK)
    fields[1] = fields[3] = "Ice is warm"  # A and B; C keeps "Ice is hot"
    rows = derive_rows(_tiny(_instance("5", *fields), split="test"), restorations=())
    assert [(r.id, r.key, r.field, r.old, r.new) for r in rows] == [
        ("test-1698-statement", f"{c}/test/5", f, "Ice is warm", "Ice is hot")
        for c, f in (("subtask_a", "sent1"), ("subtask_b", "false_sent"), ("tuples", "nonsensical_statement"))]


def test_a_b_c_disagreeing_is_an_error():
    fields = list(OK)
    fields[3] = "Ice is warm"  # B alone
    with pytest.raises(SchemaError, match="no rule picks one"):
        derive_rows(_tiny(_instance("5", *fields)), restorations=())


def test_lost_characters_are_restored_in_every_field_that_holds_them():
    fields = list(OK)
    fields[4] = ("Ice is 0 \ufffdC", "Ice floats", "Fire is hot")  # the correct option, also reference 1
    fields[7] = ["Ice is 0 \ufffdC", "Ice is below zero", "Frozen water is cold"]
    fix = Restoration("train", "9", "0 \ufffdC", "0 \u00b0C", "degree sign")
    rows = derive_rows(_tiny(_instance("9", *fields)), restorations=[fix])
    assert [(r.key, r.field) for r in rows] == [("subtask_b/train/9", "option_a"), ("subtask_c/train/9", "references"),
                                               ("tuples/train/9", "correct_reason"), ("tuples/train/9", "references")]
    assert rows[0].new == "Ice is 0 \u00b0C" and json.loads(rows[1].new)[0] == "Ice is 0 \u00b0C"
    assert all(r.id == "replacement-characters" and "degree sign" in r.evidence for r in rows)
    with pytest.raises(SchemaError, match="no restoration covers"):
        derive_rows(_tiny(_instance("9", *fields)), restorations=())
    with pytest.raises(SchemaError, match="matches no text"):
        derive_rows(_tiny(_instance("1", *OK)), restorations=[fix])


def test_derivation_refuses_a_release_with_errata_applied(releases):
    with pytest.raises(SchemaError, match="expected a 1.0.0 build"):
        derive_rows(releases["1.1.0"])
