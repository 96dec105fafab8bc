"""The one generic ``benchsmith evaluate NAME PREDICTIONS`` keeps every option of the four
per-dataset commands it replaced (issue 24), shown here on fixture releases, one command line each.

The options before (``benchsmith evaluate NAME --help`` on main before the change):

* xcopa: PREDICTIONS, --split, --release, --registry, --json
* comve: PREDICTIONS, --subtask (required), --split, --release, --registry, --json
* cognition: PREDICTIONS, --split (cg_test | test), --release, --details, --rule, --bleu, --registry, --json
* mucow: --pair (required), --release, --scores, --maximize, --translations, --lemmatized, --registry, --json
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from comve_helpers import GOOD
from comve_helpers import build as build_comve
from conftest import FIXTURES, run_cli
from xcopa_helpers import build_fixture

from benchsmith.builder import get_builder
from benchsmith.release import ReleaseWriter
from benchsmith.source import resolve_sources

OLD_OPTIONS = {
    "xcopa": ["--split", "--release", "--registry", "--json"],
    "comve": ["--subtask", "--split", "--release", "--registry", "--json"],
    "cognition": ["--split", "--release", "--details", "--rule", "--bleu", "--registry", "--json"],
    "mucow": ["--pair", "--release", "--scores", "--maximize", "--translations", "--lemmatized", "--registry",
              "--json"],
}


@pytest.fixture(scope="module")
def reg(tmp_path_factory) -> Path:
    """One registry holding a fixture release of each dataset (so ``--registry`` alone finds it)."""
    root = tmp_path_factory.mktemp("evaluate-cli")
    reg = root / "reg"
    build_fixture(reg, "1.1.0")
    build_comve(GOOD, reg)
    for name, fixture in (("cognition", "cognition"), ("mucow", "mucow")):
        b = get_builder(name)
        ReleaseWriter(b, reg, resolve_sources(b.sources, {}, FIXTURES / fixture, allow_missing=True),
                      skip_missing=True).write()
    _write_predictions(reg, root)
    return reg


def _release(reg: Path, name: str):
    from benchsmith.release import find_releases

    return find_releases(reg, name)[-1]


def _write_predictions(reg: Path, root: Path) -> None:
    x = _release(reg, "xcopa")
    for split in ("test", "validation"):
        rows = [{"lang": c, "idx": r["idx"], "label": r["label"]}
                for c in x.configs() if split in x.splits(c) for r in x.examples(c, split)]
        (root / f"xcopa-{split}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    c = _release(reg, "comve")
    for sub in "abc":
        rows = list(c.examples(f"subtask_{sub}", "test"))
        names = c.features(f"subtask_{sub}")["label"].names if sub == "b" else None
        text = "".join(f'{r["id"]},"{r["references"][0]}"\n' if sub == "c" else
                       f'{r["id"]},{names[r["label"]] if names else r["label"]}\n' for r in rows)
        (root / f"comve-{sub}.csv").write_text(text, encoding="utf-8")
    g = _release(reg, "cognition")
    for config, name in (("cg_test", "cg_test"), ("parallel", "test")):
        (root / f"cognition-{name}.txt").write_text("".join(r["zh"] + "\n" for r in g.examples(config, "test")),
                                                    encoding="utf-8")
    m = _release(reg, "mucow")
    items = list(m.examples("scoring-cs-en", "test"))
    # the reference scores best (lowest): accuracy 1.0; --maximize turns that into 0.0 but for items
    # without contrastives (vacuously correct)
    (root / "mucow.scores").write_text("".join(f"{s}\n" for it in items for s in [0.0] + [1.0] * len(
        it["contrastive_translations"])), encoding="utf-8")
    items = list(m.examples("translation-en-de", "test"))
    (root / "mucow.de").write_text("".join(it["correct_words"][0] + "\n" for it in items), encoding="utf-8")
    (root / "mucow.de.lem").write_text("".join(it["correct_words"][0] + "\n" for it in items), encoding="utf-8")


def _run(capsys, reg: Path, argv: list[str]) -> dict:
    root = reg.parent
    argv = [str(root / a[1:]) if a.startswith("@") else a for a in argv]
    argv = [str(_release(reg, a[4:]).path) if a.startswith("REL:") else a for a in argv]
    argv = [str(reg) if a == "REG" else a for a in argv]
    code, out, err = run_cli(capsys, "evaluate", *argv, "--allow-unvalidated")
    assert code == 0, err
    return json.loads(out) if "--json" in argv else {"human": out}


# (command line: @file under the registry's parent, REL:name for a release path, REG the registry),
# what the output must say
TABLE = [
    (["xcopa", "@xcopa-test.jsonl", "--registry", "REG", "--json"],
     lambda o: o["scores"]["xcopa-accuracy"]["average"] == 1.0 and o["split"] == "test"),
    (["xcopa", "@xcopa-validation.jsonl", "--split", "validation", "--release", "REL:xcopa", "--json"],
     lambda o: o["scores"]["xcopa-accuracy"]["score"] == 1.0 and o["split"] == "validation"),
    (["xcopa", "@xcopa-test.jsonl", "--registry", "REG"],
     lambda o: "signature: xcopa-accuracy:1|" in o["human"]),
    (["comve", "@comve-a.csv", "--subtask", "a", "--registry", "REG", "--json"],
     lambda o: o["scores"]["accuracy"]["score"] == 1.0 and o["config"] == "subtask_a"),
    (["comve", "--subtask", "b", "@comve-b.csv", "--split", "test", "--release", "REL:comve", "--json"],
     lambda o: o["scores"]["accuracy"]["score"] == 1.0 and o["config"] == "subtask_b"),
    (["comve", "@comve-c.csv", "--subtask", "C", "--registry", "REG", "--json"],
     lambda o: o["scores"]["bleu"]["score"] == pytest.approx(100.0)),
    (["cognition", "@cognition-cg_test.txt", "--registry", "REG", "--json"],
     lambda o: o["scores"]["bleu"]["score"] == 100.0 and o["scores"]["cter"]["score"] == 0.0),
    (["cognition", "@cognition-cg_test.txt", "--split", "cg_test", "--rule", "cter-v2", "--bleu", "jieba",
      "--details", "@details.jsonl", "--release", "REL:cognition", "--json"],
     lambda o: "rule:cter-v2" in o["scores"]["cter"]["signature"] and o["scores"]["bleu"]["tokenisation"] == "jieba"
     and Path(o["details"]).read_text(encoding="utf-8").count("\n") == 15),
    (["cognition", "@cognition-test.txt", "--split", "test", "--registry", "REG", "--json"],
     lambda o: list(o["scores"]) == ["bleu"] and o["config"] == "parallel"),
    (["mucow", "--pair", "cs-en", "--scores", "@mucow.scores", "--registry", "REG", "--json"],
     lambda o: o["scores"]["mucow-scoring-accuracy"]["score"] == 1.0),
    (["mucow", "--pair", "cs-en", "--scores", "@mucow.scores", "--maximize", "--release", "REL:mucow", "--json"],
     lambda o: o["scores"]["mucow-scoring-accuracy"]["score"] < 1.0
     and "better:higher" in o["scores"]["mucow-scoring-accuracy"]["signature"]),
    (["mucow", "--pair", "en-de", "--translations", "@mucow.de", "--lemmatized", "@mucow.de.lem", "--registry", "REG",
      "--json"],
     lambda o: o["scores"]["mucow-translation-prf"]["positive"] >= 1 and o["config"] == "translation-en-de"),
]


@pytest.mark.parametrize("argv, check", TABLE, ids=[" ".join(a[:4]) for a, _ in TABLE])
def test_every_old_command_line_still_scores(reg, capsys, argv, check):
    assert check(_run(capsys, reg, argv))


def test_the_table_uses_every_old_option():
    used = {(argv[0], a) for argv, _ in TABLE for a in argv if a.startswith("--")}
    assert {(name, o) for name, opts in OLD_OPTIONS.items() for o in opts} <= used


@pytest.mark.parametrize("name", sorted(OLD_OPTIONS))
def test_help_lists_every_old_option_and_no_rest_markup(capsys, name):
    code, out, err = run_cli(capsys, "evaluate", name, "--help")
    assert code == 0, err
    for option in [*OLD_OPTIONS[name], "--config", "--metric", "--details"]:
        assert f"  {option} " in out, (name, option)
    assert "``" not in out and "Usage: benchsmith evaluate " + name in out


@pytest.mark.parametrize("argv, fragment", [
    (["xcopaa", "x"], "unknown dataset 'xcopaa'"),
    (["comve", "@comve-a.csv", "--registry", "REG"], "say which ComVE subtask"),
    (["comve", "@comve-a.csv", "--subtask", "a", "--metric", "blue", "--registry", "REG"], "no metric 'blue'"),
    (["cognition", "@cognition-cg_test.txt", "--rule", "eval", "--registry", "REG"], "--rule 'eval' is not one of"),
    (["xcopa", "@nope.jsonl", "--registry", "REG"], "predictions file not found"),
])
def test_mistakes_are_one_line_exit_2(reg, capsys, argv, fragment):
    root = reg.parent
    argv = [str(root / a[1:]) if a.startswith("@") else str(reg) if a == "REG" else a for a in argv]
    code, out, err = run_cli(capsys, "evaluate", *argv, "--allow-unvalidated")
    lines = [line for line in err.splitlines() if not line.startswith("WARNING ")]
    assert code == 2 and out == "" and len(lines) == 1 and fragment in lines[0], err


def test_every_metric_scores_with_the_one_signature():
    """One scoring method for every metric, generic or a dataset's: ``score(predictions, references)``."""
    import inspect

    from benchsmith.builder import builders
    from benchsmith.validation.metric import Metric
    from benchsmith.validation.metrics.accuracy import Accuracy
    from benchsmith.validation.metrics.bleu import CorpusBLEU, SacreBLEU

    declared = [m for name in ("comve", "xcopa", "cognition", "mucow") for m in get_builder(name).metrics().values()]
    assert len(declared) == 7 and set(builders()) >= {"comve", "xcopa", "cognition", "mucow"}
    for cls in [*declared, Accuracy, CorpusBLEU, SacreBLEU]:
        assert issubclass(cls, Metric)
        params = list(inspect.signature(cls.score).parameters)
        assert params == ["self", "predictions", "references"], (cls, params)
        assert "Score" in str(inspect.signature(cls.score).return_annotation), cls
