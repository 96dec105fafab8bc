"""The maintainer's loop on the XCOPA fixture: the generic ``untranslated`` check finds an option
left in English, a hand-written erratum (``errata.tsv``, beside the generated
``errata.generated.tsv``) fixes it from its version on, and earlier versions keep upstream's value
(the check then warns that a later version fixes it)."""

from __future__ import annotations

import dataclasses
import json
import shutil

import pytest
from xcopa_helpers import XCOPA_FIX, FixtureXcopa, build_fixture, sources_with

from benchsmith.builders.xcopa import HUMAN_POLICY
from benchsmith.erratum import read_errata
from benchsmith.errors import ConfigError, ParseError
from benchsmith.policy import Policy
from benchsmith.validation.check import Status
from benchsmith.validation.checks.translation import UntranslatedCheck, normalise

ROW = ("et-untranslated\t1.2.0\tet/validation/0\tchoice1\tThe toilet filled with WATER\t"
       "Tualett täitus veega.\tupstream keeps the English of COPA item 401 alternative 1\n")


def _planted(tmp_path):
    """The fixture's sources with et validation idx 0's choice1 left in English (COPA item 401's
    alternative 1, with another case and no full stop: normalised, it is still the source)."""
    lines = (XCOPA_FIX / "data/et/val.et.jsonl").read_text(encoding="utf-8").splitlines()
    first = json.loads(lines[0])
    assert first["idx"] == 0 and first["choice1"] == "Tualett täitus veega."
    first["choice1"] = "The toilet filled with WATER"
    twin = tmp_path / "val.et.jsonl"
    twin.write_text("\n".join([json.dumps(first, ensure_ascii=False), *lines[1:]]) + "\n", encoding="utf-8")
    return sources_with(tmp_path, {"xcopa/data/et/val.et.jsonl": twin})


def _by_config(results):
    return {r.config: r for r in results}


def _with_hand_written(tmp_path, rows: str):
    """FixtureXcopa reading the fixture's generated table and a hand-written errata.tsv of ``rows``."""
    tables = tmp_path / "tables"
    tables.mkdir()
    shutil.copy(XCOPA_FIX / "_tables/errata.generated.tsv", tables)
    (tables / "errata.tsv").write_text("id\tversion\titem\tfield\told\tnew\tevidence\n" + rows, encoding="utf-8")
    return type("HandWritten", (FixtureXcopa,), {"tables_dir": tables})


def test_clean_translations_pass(tmp_path):
    release = build_fixture(tmp_path / "reg", "1.1.0")
    results = _by_config(UntranslatedCheck().run(release))
    assert set(results) == {"et", "th"}  # the translations into English declare no source
    for r in results.values():
        assert r.status == Status.PASS
        assert r.metrics == {"untranslated": 0, "compared": 3 * 6}  # 3 fields x (3 validation + 3 test)


def test_a_planted_untranslated_option_fails_the_gate_naming_the_item(tmp_path):
    release = build_fixture(tmp_path / "reg", "1.1.0", sources_dir=_planted(tmp_path))
    results = _by_config(UntranslatedCheck().run(release))
    assert results["th"].status == Status.PASS
    et = results["et"]
    assert et.status == Status.FAIL and et.metrics["untranslated"] == 1
    assert et.details["items"] == [{"split": "validation", "id": "0", "field": "choice1",
                                    "value": "The toilet filled with WATER"}]
    assert "validation/0 choice1" in et.summary and "errata.tsv" in et.details["what_to_do"]


def test_the_policy_may_make_it_a_warning(tmp_path):
    warn = dataclasses.replace(HUMAN_POLICY, untranslated="warn")

    class Warning(FixtureXcopa):
        def configs(self):
            return [dataclasses.replace(c, policy=warn) if c.policy == HUMAN_POLICY else c for c in super().configs()]

    release = build_fixture(tmp_path / "reg", "1.1.0", sources_dir=_planted(tmp_path), builder=Warning)
    assert _by_config(UntranslatedCheck().run(release))["et"].status == Status.WARN


def test_without_its_source_config_the_check_says_it_skipped(tmp_path):
    from benchsmith.release import ReleaseWriter
    from benchsmith.source import resolve_sources

    b = FixtureXcopa("1.1.0")
    srcs = resolve_sources(b.sources, {}, XCOPA_FIX.parent, allow_missing=True)
    release = ReleaseWriter(b, tmp_path / "reg", srcs, configs=["et"]).write()
    (result,) = UntranslatedCheck().run(release)
    assert result.status == Status.SKIP and "'en' is not in this release" in result.summary


def test_a_hand_written_erratum_fixes_the_item_from_its_version_on(tmp_path):
    sources = _planted(tmp_path)
    builder = _with_hand_written(tmp_path, ROW)
    fixed = build_fixture(tmp_path / "reg", "1.2.0", sources_dir=sources, builder=builder)
    assert _by_config(UntranslatedCheck().run(fixed))["et"].status == Status.PASS
    assert fixed.table("et", "validation")["choice1"][0].as_py() == "Tualett täitus veega."
    applied = [e["id"] for e in fixed.info.errata_applied]
    assert applied == ["xcopa-th-question", "et-untranslated"]  # generated and hand-written, side by side
    earlier = build_fixture(tmp_path / "reg", "1.1.0", sources_dir=sources, builder=builder)
    assert earlier.table("et", "validation")["choice1"][0].as_py() == "The toilet filled with WATER"
    assert [e["id"] for e in earlier.info.errata_applied] == ["xcopa-th-question"]
    # in the earlier version the item is a known defect, fixed later: a warning that says where
    known = _by_config(UntranslatedCheck().run(earlier))["et"]
    assert known.status == Status.WARN and "fixed by erratum et-untranslated (1.2.0)" in known.summary


def test_an_erratum_id_in_both_tables_names_the_hand_written_line(tmp_path):
    builder = _with_hand_written(tmp_path, ROW.replace("et-untranslated", "xcopa-th-question"))
    with pytest.raises(ParseError) as err:
        read_errata(builder.errata_paths())
    assert err.value.path == builder.errata_path() and err.value.line == 2
    assert "'xcopa-th-question' is also defined in" in str(err.value)


def test_policy_rejects_a_bad_untranslated_setting():
    with pytest.raises(ConfigError, match="untranslated is 'error'"):
        Policy(untranslated="error")  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="neither a field name"):
        Policy(translated_fields=(("a", "b", "c"),))  # type: ignore[arg-type]
    assert Policy.from_dict(Policy(translated_fields=("a", ("b", "c"))).to_dict()).translated_fields == (
        "a", ("b", "c"))


def test_normalise_ignores_case_punctuation_and_spacing():
    assert normalise("The couple  behind me was whispering.") == normalise("the couple behind me, was WHISPERING")
    assert normalise("Arkamdaki çift fısıldaşıyordu.") != normalise("The couple behind me was whispering.")
