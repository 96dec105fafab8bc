"""CoGnition builder: the shared builder test base on the fixture, fixture builds, malformed input,
published figures, dataset checks (both outcomes), and the real release."""

from __future__ import annotations

import shutil
from collections import Counter, defaultdict
from typing import ClassVar

import datasets
import pytest
from conftest import FIXTURES

from benchsmith.builder import get_builder
from benchsmith.builders.cognition import CognitionBuilder
from benchsmith.builders.cognition.atoms import CATEGORIES, INVENTORY, MODIFIERS, PATTERNS, lexicon_roles
from benchsmith.builders.cognition.checks import CGTestProfile, CGTestStructure
from benchsmith.errors import MissingSourceError, ParseError
from benchsmith.loaders.cognition_files import read_lexicon
from benchsmith.release import Release, ReleaseWriter
from benchsmith.source import resolve_sources
from benchsmith.testing import BuilderTestBase
from benchsmith.validation.check import Status
from benchsmith.validation.fidelity import FidelityCheck


class TestCognitionBuilder(BuilderTestBase):
    """The shared checks on tests/fixtures/cognition (no train files there: skip_missing)."""

    builder = CognitionBuilder
    sources = FIXTURES / "cognition"
    counts: ClassVar[dict[str, dict[str, int]]] = {
        "parallel": {"validation": 3, "test": 2}, "cg_test": {"test": 15},
        "lexicon": {"test": 19},  # 20 lexicon lines, `building` twice
    }
    features: ClassVar[dict[str, list[str]]] = {"parallel": ["id", "en", "zh", "zh_tokens"],
                "cg_test": ["id", "en", "zh", "compound", "category", "pattern", "atoms", "context"],
                "lexicon": ["id", "translations", "optional"]}

    def test_train_recorded_as_skipped(self, release):
        assert list(release.info.to_dict()["configs"]["parallel"]["skipped_splits"]) == ["train"]

    def test_policies(self, release):
        policy = {c: release.info.to_dict()["configs"][c]["policy"] for c in release.configs()}
        assert policy["parallel"]["task"] == policy["cg_test"]["task"] == "translation"
        assert policy["cg_test"]["label"] is None  # category / pattern are attributes, not labels
        assert policy["lexicon"]["allow_empty"] == ["translations"]
        assert release.info.to_dict()["configs"]["parallel"]["metadata"] == {"source": "en", "target": "zh"}


def _build(root, registry, **kw) -> Release:
    b = get_builder("cognition")
    sources = resolve_sources(b.sources, {}, root, allow_missing=True)  # fixtures have no registered checksums
    return ReleaseWriter(b, registry, sources, skip_missing=True, **kw).write()


def test_fixture_build(fixtures, tmp_path):
    r = _build(fixtures / "cognition", tmp_path / "reg")
    assert r.num_examples("parallel", "validation") == 3 and r.num_examples("cg_test", "test") == 15
    assert "train" in r.info.to_dict()["configs"]["parallel"]["skipped_splits"]
    ex = list(r.examples("cg_test", "test"))
    first = ex[0]
    assert first["id"] == "cg-test-00001" and first["context"] == 0
    assert [a["role"] for a in first["atoms"]] == ["DET", "ADJ", "N", "MOD"]
    names = r.features("cg_test")["pattern"].names
    assert [names[e["pattern"]] for e in ex[::5]] == ["1.4", "2.3", "3.2"]
    par = next(iter(r.examples("parallel", "validation")))
    assert par["zh"] == "我的朋友跳了，然后轮到我了。"
    assert par["zh_tokens"] == ["我", "的", "朋友", "跳", "了", "，", "然后", "轮到", "我", "了", "。"]
    ds = datasets.load_dataset(str(r.path), "cg_test", split="test")
    assert ds.features["category"].names == list(CATEGORIES) and len(ds) == 15


def test_missing_train_without_skip_names_files(raw):
    b = get_builder("cognition")
    with pytest.raises(MissingSourceError) as ei:
        resolve_sources(b.sources, b.checksums(), raw)
    assert "data/train.en" in str(ei.value) and "--skip-missing" in str(ei.value)


def test_compound_outside_inventory_fails_cleanly(fixtures, tmp_path):
    root = tmp_path / "src"
    shutil.copytree(fixtures / "cognition", root)
    cg = root / "cognition" / "data" / "cg-test"
    for f in (cg / "cg-test.compound", cg / "PP" / "PP.compound"):
        f.write_text(f.read_text(encoding="utf-8").replace("another large chair", "another purple chair"), "utf-8")
    for f in (cg / "cg-test.en", cg / "PP" / "PP.en"):
        f.write_text(f.read_text(encoding="utf-8").replace("another large chair", "another purple chair"), "utf-8")
    with pytest.raises(ParseError) as ei:
        _build(root, tmp_path / "reg")
    assert "cg-test.compound:11" in str(ei.value) and "matches no pattern" in str(ei.value)
    assert not (tmp_path / "reg" / "cognition" / "1.0.0").exists()
    assert not any(p.name.startswith(".") for p in (tmp_path / "reg" / "cognition").iterdir())


def test_combined_file_must_equal_categories(fixtures, tmp_path):
    root = tmp_path / "src"
    shutil.copytree(fixtures / "cognition", root)
    zh = root / "cognition" / "data" / "cg-test" / "VP" / "VP.zh"
    zh.write_text(zh.read_text(encoding="utf-8").replace("笑了", "哭了"), encoding="utf-8")
    with pytest.raises(ParseError, match=r"cg-test\.compound:7: cg-test\.\* line 7 is not line 2 of VP"):
        _build(root, tmp_path / "reg")
    assert not (tmp_path / "reg" / "cognition" / "1.0.0").exists()


# ------------------------------------------------------------------------- real data


@pytest.fixture(scope="module")
def real(real_cognition) -> Release:
    """CoGnition built from ../shared/raw (tests/conftest.py: shared read-only with test_cards_interop)."""
    return real_cognition


@pytest.mark.realdata
def test_real_counts(real):
    assert real.num_examples("parallel", "validation") == 10_000
    assert real.num_examples("parallel", "test") == 10_000
    assert real.num_examples("cg_test", "test") == 10_800
    assert real.info.to_dict()["configs"]["parallel"]["skipped_splits"].keys() == {"train"}
    t = real.table("cg_test", "test")
    assert len(set(t.column("compound").to_pylist())) == 2_160
    assert Counter(t.column("category").to_pylist()) == {0: 3_600, 1: 3_600, 2: 3_600}
    assert Counter(t.column("context").to_pylist()) == {k: 2_160 for k in range(5)}


FIGURES = {
    "parallel/train/num_examples": 196_246, "parallel/validation/num_examples": 10_000,
    "parallel/test/num_examples": 10_000, "cg_test/test/num_examples": 10_800,
    "cg_test/test/num_compounds": 2_160,
    "cg_test/test/NP": 3_600, "cg_test/test/VP": 3_600, "cg_test/test/PP": 3_600,
}
#: figures validate cannot measure here (train split, parser, model baseline): skipped with their `needs`
NEEDS = {"parallel/train/num_examples", "train/seen_compounds_pct", "train/atom_frequency_range",
         "train/np_vp_pp_share_pct", "table7/ROC-Filter", "table8/ROC-Filter",
         "table6/random-test/Transformer", "table6/cg-test/Transformer", "section5.1/bpe_vocabulary",
         "table7/ROC-Original", "table8/ROC-Original", "section4.1/roc_stories", "section4.4/evaluation_tool"}
#: ... of which these need data outside the release, not the train split
EXTERNAL = {"table7/ROC-Original", "table8/ROC-Original", "section4.1/roc_stories", "section4.4/evaluation_tool"}
MEASURED = set(FIGURES) - NEEDS | {"cg_test/test/compound_extent", "cg_test/test/atom_inventory",
                                  "stage/stats/frequency_buckets"}


def test_published_figures_are_data():
    exps = {e.key: e for e in get_builder("cognition").expectations()}
    assert set(exps) == set(FIGURES) | NEEDS | MEASURED
    assert all(exps[k].published == v for k, v in FIGURES.items())
    assert all(e.reference and e.description for e in exps.values())
    assert {k for k, e in exps.items() if e.needs} == NEEDS
    assert "Table 5" in exps["cg_test/test/num_examples"].reference
    # the per-category sizes are not the paper's and say so
    assert exps["cg_test/test/NP"].reference.startswith("not stated in")
    # every figure that needs the train split names the command that computes it
    for key in NEEDS - {"parallel/train/num_examples"} - EXTERNAL:
        assert "benchsmith " in exps[key].needs and "train" in exps[key].needs, key
    for key in EXTERNAL:  # and says what is missing and which command (if any) would compute it
        assert "not in ../shared/raw" in exps[key].needs or "not released" in exps[key].needs, key
        assert "benchsmith " in exps[key].needs, key


def test_fidelity_on_the_fixture_fails_and_skips_train(fixtures, tmp_path):
    r = _build(fixtures / "cognition", tmp_path / "reg")
    res = {x.details["key"]: x for x in FidelityCheck(get_builder("cognition").expectations()).run(r)}
    assert all(res[k].status == Status.SKIP for k in NEEDS)
    assert res["cg_test/test/num_examples"].status == Status.FAIL  # 15 fixture lines, not 10,800
    assert res["cg_test/test/num_examples"].metrics == {"published": 10_800, "measured": 15,
                                                         "difference": -10_785}
    assert res["cg_test/test/num_compounds"].metrics["measured"] == 3
    assert res["cg_test/test/NP"].metrics["measured"] == 5
    assert res["stage/stats/frequency_buckets"].status == Status.PASS  # a property of the code, not the data


@pytest.mark.realdata
def test_real_expectations_hold(real):
    b = get_builder("cognition")
    results = {e.key: e.check(real) for e in b.expectations() if not e.needs}
    assert set(results) == MEASURED
    assert all(ok for ok, _ in results.values()), results
    fidelity = {x.details["key"]: x.status for x in FidelityCheck(b.expectations()).run(real)}
    assert fidelity == {k: Status.SKIP if k in NEEDS else Status.PASS for k in MEASURED | NEEDS}


@pytest.mark.realdata
def test_real_every_compound_parsed_and_slots_match_inventory(real):
    rows = list(real.examples("cg_test", "test"))
    pats = Counter(PATTERNS[r["pattern"]] for r in rows[::5])
    # 5 DET x 8 N x (1 | 5 ADJ) x (1 | 2 MOD) per category
    assert pats == {f"{c}.{k}": n for c in (1, 2, 3) for k, n in zip((1, 2, 3, 4), (40, 200, 80, 400))}
    seen = defaultdict(set)
    for r in rows:
        assert " ".join(a["text"] for a in r["atoms"]) == r["compound"]
        for a in r["atoms"]:
            seen[(CATEGORIES[r["category"]], a["role"])].add(a["text"])
    for cat, inv in INVENTORY.items():
        head = {"VP": "V", "PP": "P"}.get(cat)
        assert seen[(cat, "DET")] == set(inv.determiners)
        assert seen[(cat, "ADJ")] == set(inv.adjectives)
        assert seen[(cat, "N")] == set(inv.nouns)
        assert seen[(cat, "MOD")] == set(inv.modifiers)
        if head:
            assert seen[(cat, head)] == set(inv.head)


@pytest.mark.realdata
def test_real_lexicon_covers_inventory(raw, real):
    lex = read_lexicon(raw / "cognition" / "eval" / "lexicon")
    assert set(lexicon_roles()) == set(lex), set(lexicon_roles()) ^ set(lex)
    assert set(MODIFIERS.values()) <= set(lex)
    assert real.num_examples("lexicon", "test") == len(lex) == 74


@pytest.mark.realdata
def test_real_jieba_reproduces_released_segmentation(real, raw):
    released = (raw / "cognition" / "data" / "valid.zh").read_text(encoding="utf-8").splitlines()
    ours = [r["zh_tokens"] for r in real.examples("parallel", "validation")]
    same = sum(o == line.split() for o, line in zip(ours, released))
    assert same >= 9_990, same


@pytest.mark.realdata
def test_real_structure_check_passes(real):
    (res,) = CGTestStructure().run(real)
    assert res.status.value == "pass" and res.metrics["compounds"] == 2_160


@pytest.mark.realdata
def test_real_profile_is_a_stat_with_the_upstream_issues(real):
    (res,) = CGTestProfile().run(real)
    assert res.status == Status.STAT
    assert res.metrics == {"compounds": 2_160, "lines_NP": 3_600, "lines_VP": 3_600, "lines_PP": 3_600,
                           "identical_contexts": 1, "longer_compound_lines": 12}
    assert res.details["identical_contexts"] == ["cg-test-08817 = cg-test-08818"]
    assert "cg-test-02780" in res.details["longer_compound_lines"]


def test_checks_are_declared():
    assert [type(c) for c in get_builder("cognition").checks()] == [CGTestStructure, CGTestProfile]


def test_structure_check_passes_on_the_fixture(fixtures, tmp_path):
    (res,) = CGTestStructure().run(_build(fixtures / "cognition", tmp_path / "reg"))
    assert res.status == Status.PASS and res.metrics == {"compounds": 3, "bad_rows": 0, "bad_context_sets": 0}


def test_checks_skip_without_cg_test(fixtures, tmp_path):
    r = _build(fixtures / "cognition", tmp_path / "reg", configs=["parallel"])
    assert [x.status for x in CGTestStructure().run(r) + CGTestProfile().run(r)] == [Status.SKIP, Status.SKIP]


def test_profile_is_a_stat_even_when_upstream_issues_appear(fixtures, tmp_path):
    root = tmp_path / "src"
    shutil.copytree(fixtures / "cognition", root)
    cg = root / "cognition" / "data" / "cg-test"
    for name in ("cg-test", "NP/NP"):  # line 2 repeats line 1 (same sentence, reference, compound)
        for ext in ("en", "zh"):
            f = cg / f"{name}.{ext}"
            lines = f.read_text(encoding="utf-8").splitlines()
            lines[1] = lines[0]
            f.write_text("\n".join(lines) + "\n", encoding="utf-8")
    clean = CGTestProfile().run(_build(fixtures / "cognition", tmp_path / "clean"))[0]
    (res,) = CGTestProfile().run(_build(root, tmp_path / "reg"))
    assert clean.status == res.status == Status.STAT  # descriptive: never a verdict
    assert clean.metrics["identical_contexts"] == 0 and clean.details["identical_contexts"] == []
    assert res.metrics["identical_contexts"] == 1
    assert res.details["identical_contexts"] == ["cg-test-00001 = cg-test-00002"]
    assert res.metrics["lines_NP"] == res.metrics["lines_VP"] == res.metrics["lines_PP"] == 5


def test_card_sections_come_from_the_profile(fixtures, tmp_path):
    r = _build(fixtures / "cognition", tmp_path / "reg")
    sections = get_builder("cognition").card_sections(r)
    assert sections["CG-test compounds"].startswith("Lines per category: NP: 5, VP: 5, PP: 5.")
    assert "| 1.4 | DET+ADJ+N+MOD | 5 |" in sections["CG-test compounds"]
    assert "Identical contexts of one compound (same sentence, reference and compound): 0 (none)" in \
        sections["Known upstream issues (kept as released)"]
    scoring = sections["Scoring (benchsmith evaluate cognition)"]
    assert "69.58" in scoring and "character-level" in scoring and "`--rule paper` (default)" in scoring


def test_structure_check_fails_on_tampered_release(fixtures, tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    r = _build(fixtures / "cognition", tmp_path / "reg")
    (f,) = (r.path / "data" / "cg_test").glob("test-*.parquet")
    t = pq.read_table(f)
    ctx = t.column("context").to_pylist()
    ctx[1] = 0  # two lines claim context 0
    t = t.set_column(t.schema.get_field_index("context"), "context", pa.array(ctx, type=pa.int8()))
    pq.write_table(t, f)
    (res,) = CGTestStructure().run(Release(r.path))
    assert res.status.value == "fail" and res.details["compounds"] == ["the small dog he liked"]
