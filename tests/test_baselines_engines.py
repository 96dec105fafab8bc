"""The baseline engine registry: a declaration names a registered engine and its typed options;
an engine is one module that registers itself (here: one defined in this test module, run end
to end through ``run_spec`` on a programmatic release); unknown names get suggestions.
No model is trained here."""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

import pytest
from conftest import one_json, run_cli
from validation_helpers import make_release, mc_features, mc_rows

from benchsmith.builder import get_builder
from benchsmith.errors import ConfigError
from benchsmith.validation.baselines.engine import (
    EngineCall,
    EngineOutput,
    LabelIssuesOptions,
    accuracy_row,
    mc_items,
)
from benchsmith.validation.baselines.multiple_choice import MCOptions
from benchsmith.validation.baselines.run import run_spec
from benchsmith.validation.baselines.spec import BaselineSpec, engine_names, get_engine, register_engine


@dataclass(frozen=True)
class PickOptions:
    """Pick option ``index`` of every item (a model-free engine, for the registry's tests)."""

    index: int = 0


@register_engine("pick_option", options=PickOptions, accuracy=True, multiple_choice=True)
def pick_option(call: EngineCall) -> EngineOutput:
    out = EngineOutput(model=f"pick option {call.options.index}")
    for config, split in call.evaluations:
        items = mc_items(call.spec, call.release, config, split)
        right = sum(it.label == call.options.index for it in items) / len(items)
        out.rows.append(accuracy_row(config, split, right, items))
    return out


@pytest.fixture(scope="module")
def release(tmp_path_factory):
    """A two-option multiple-choice release (seeded random labels)."""
    splits = {"train": mc_rows(8, "tr", 1), "test": mc_rows(40, "te", 3)}
    meta = {"task": "multiple_choice", "choices": ["choice1", "choice2"], "label": "label", "context": ["premise"]}
    return make_release(tmp_path_factory.mktemp("reg") / "reg", splits, mc_features(), meta, name="enginefx")


def test_a_registered_engine_runs_from_a_declaration(release):
    labels = [r["label"] for r in release.examples("default", "test")]
    spec = BaselineSpec("pick-first", "pick_option", "default", options={"index": 0})
    assert spec.options == PickOptions(0) and "pick_option" in engine_names()
    result = run_spec(spec, release, seed=0)
    [row] = result.scores
    assert row.value == round(100 * labels.count(0) / len(labels), 2) and row.n == len(labels)
    assert result.spec.engine == "pick_option" and result.model == "pick option 0"
    # --set reaches the engine's typed options; a key meant for another engine is noted, not applied
    other = run_spec(spec, release, overrides={"index": 1, "lr": 1e-3})
    assert other.scores[0].value == round(100 * labels.count(1) / len(labels), 2)
    assert any("--set lr does not apply to pick_option" in n for n in other.notes)
    assert result.to_dict()["engine"] == "pick_option" and "kind" not in result.to_dict()


def test_unknown_engines_and_options_get_suggestions():
    with pytest.raises(ConfigError, match="unknown engine 'pick_optoin'") as exc:
        BaselineSpec("x", "pick_optoin", "default")
    assert "Did you mean 'pick_option'" in str(exc.value.hint) and "cross_encoder" in str(exc.value.hint)
    with pytest.raises(ConfigError, match="engine 'pick_option' has no option 'indx'") as exc:
        BaselineSpec("x", "pick_option", "default", options={"indx": 1})
    assert "Did you mean 'index'" in str(exc.value.hint)
    # the run supplies the model, device and seed (--model-path, --device, --seed): no engine option
    with pytest.raises(ConfigError, match="no option 'device'"):
        BaselineSpec("x", "cross_encoder", "default", options={"device": "cpu"})
    # an options object of another engine is refused; the engine's own is kept as it is
    with pytest.raises(ConfigError, match="takes MCOptions"):
        BaselineSpec("x", "cross_encoder", "default", options=PickOptions())
    mine = MCOptions(lr=1e-4)
    assert BaselineSpec("x", "cross_encoder", "default", options=mine).options == mine
    # the options' own checks run at declaration time
    with pytest.raises(ConfigError, match="lr=0"):
        BaselineSpec("x", "cross_encoder", "default", options={"lr": 0})


def test_an_engine_name_is_registered_once():
    with pytest.raises(ConfigError, match="registered twice"):
        @register_engine("cross_encoder", options=PickOptions)
        def other(call: EngineCall) -> EngineOutput:  # pragma: no cover - never registered
            return EngineOutput()
    assert get_engine("cross_encoder").options is MCOptions


def test_engine_properties_are_declared_with_the_engine():
    engines = {n: get_engine(n) for n in ("cross_encoder", "label_issues", "generation", "copy")}
    assert engines["cross_encoder"].accuracy and not engines["label_issues"].accuracy
    assert engines["generation"].needs_model_path and not engines["copy"].trains
    assert "folds" in engines["label_issues"].option_names and "device" not in engines["label_issues"].option_names
    assert LabelIssuesOptions().folds == 5
    # dataset engines register from their builder folder when its baseline.py is imported
    for dataset, engine in (("mucow", "lm_scoring"), ("cognition", "nmt"), ("xcopa", "use_zero_shot")):
        get_builder(dataset).baselines()
        assert get_engine(engine).run.__module__.startswith(f"benchsmith.builders.{dataset}."), engine
    assert get_engine("lm_scoring").needs_model_path and "max_examples" in get_engine("lm_scoring").ignores
    nmt = get_engine("nmt")
    assert nmt.make_options({"d_model": 32}).d_model == 32 and nmt.make_options().d_model is None
    with pytest.raises(ConfigError, match="unknown seq2seq preset 'smal'"):
        nmt.make_options({"preset": "smal"})


def test_cli_lists_each_baseline_with_its_engine_and_typed_options(capsys):
    code, out, err = run_cli(capsys, "--quiet", "baseline", "xcopa", "--list", "--json")
    assert code == 0, err
    listed = {s["name"]: s for s in one_json(out)["baselines"]}
    assert listed["use-co-tlv"]["engine"] == "use_zero_shot" and listed["use-co-tlv"]["options"]["selection"] == "target"
    assert listed["use-co-zs"]["options"]["lrs"] == [1e-3, 1e-4, 1e-5]  # the engine's defaults, typed
    assert listed["copa-en"]["options"]["lr"] == MCOptions().lr and listed["copa-en"]["language"] == "source_language"
    code, out, err = run_cli(capsys, "--quiet", "baseline", "xcopa", "--list")
    assert code == 0 and "use-co-tlv" in out  # the human table (column widths depend on the terminal)


DATASET_WORDS = ("xcopa", "copa", "comve", "cognition", "mucow", "jieba", "contrastive_translations",
                 "source_language")


def code_words(path: Path) -> set[str]:
    """The identifiers and non-docstring string constants of a module, lower-cased: its code,
    not its prose (docstrings may cite a dataset as an example or a measurement)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    docstrings = {id(node.body[0].value) for node in ast.walk(tree)
                  if isinstance(node, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
                  and node.body and isinstance(node.body[0], ast.Expr) and isinstance(node.body[0].value, ast.Constant)}
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            out.add(node.id)
        elif isinstance(node, ast.Attribute):
            out.add(node.attr)
        elif isinstance(node, (ast.FunctionDef, ast.ClassDef, ast.arg)):
            out.add(getattr(node, "name", None) or node.arg)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings:
            out.add(node.value)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            out.update(a.name for a in node.names)
            out.add(getattr(node, "module", None) or "")
    return {w.lower() for w in out}


@pytest.mark.parametrize("folder", ["validation/baselines"])
def test_generic_code_names_no_dataset(folder):
    """Generic code knows no dataset: an engine that serves one lives in its builder folder."""
    root = Path(__file__).resolve().parents[1]
    hits = sorted(f"{p.relative_to(root)}: {w!r}" for p in (root / folder).glob("*.py") for w in code_words(p)
                  if any(d in w for d in DATASET_WORDS))
    assert not hits, hits
