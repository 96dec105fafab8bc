"""Drop-in for the tools researchers use: Croissant (mlcroissant), lm-eval and the card.

* croissant.json validates with mlcroissant without a warning and every record set loads,
  nested features included (a list of structs, lists of strings, class labels);
* the lm-eval task configs of a release run in lm-eval itself (its ``dummy`` model, 3
  examples) and reproduce lm-eval's built-in copa/xcopa prompts;
* the card's loading snippet runs as written, from the folder it names; the card holds no
  local path of the build machine, declares the builder's Hub metadata, and renders the
  validation outcomes from the report.

Fixture releases are built with the real builders on the repository's fixtures, plus one
small builder here for the shapes the datasets lack; ``realdata`` repeats the checks on
XCOPA and CoGnition built from ``$BENCHSMITH_RAW``.
"""

from __future__ import annotations

import contextlib
import dataclasses
import importlib.util
import io
import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any, ClassVar

import datasets
import pytest
import yaml
from comve_helpers import GOOD as COMVE_GOOD
from comve_helpers import build as build_comve
from conftest import FIXTURES
from xcopa_helpers import build_fixture

from benchsmith.builder import Builder, Config, Policy, get_builder
from benchsmith.builders.xcopa.lm_eval import CONNECTORS
from benchsmith.cards import croissant as croissant_mod
from benchsmith.cards import lm_eval as lm_eval_mod
from benchsmith.cards.card import FULL_TABLE_MAX, render_card, render_files, write_card_files
from benchsmith.manifest import ReleaseInfo
from benchsmith.release import Release, ReleaseWriter
from benchsmith.source import Sources, resolve_sources

mlc = pytest.importorskip("mlcroissant")
pytest.importorskip("lm_eval")

S = datasets.Value("string")


# --------------------------------------------------------------------------- fixtures


class Shapes(Builder):
    """Shapes the four datasets do not all have: a struct, a list of structs holding a class
    label, a multiple-choice config over a list field, and a COPA-shaped config whose
    ``question`` is a string (not a ClassLabel)."""

    name = "shapes"
    pretty_name = "Shapes"
    description = "Feature shapes for the interop tests."
    release_notes: ClassVar[dict[str, str]] = {"1.0.0": "fixture"}
    license = "CC0-1.0"
    homepage = "https://example.org/shapes"
    citation = "@misc{shapes, title={Shapes}, year={2024}}"
    task_categories = ("multiple-choice",)
    task_ids = ("multiple-choice-qa",)
    multilinguality = ("monolingual",)
    source_datasets = ("original",)
    paperswithcode_id = "shapes"

    def configs(self):
        nested = datasets.Features({
            "id": S,
            "spans": datasets.List({"text": S, "start": datasets.Value("int32"),
                                    "kind": datasets.ClassLabel(names=["ent", "rel"])}),
            "meta": {"source": S, "score": datasets.Value("float32")},
            "tags": datasets.List(S),
            "flag": datasets.Value("bool"),
        })
        listmc = datasets.Features({"id": S, "context": S, "options": datasets.List(S),
                                    "label": datasets.ClassLabel(names=["a", "b", "c"])})
        copa = datasets.Features({"id": S, "premise": S, "choice1": S, "choice2": S, "question": S,
                                  "label": datasets.ClassLabel(names=["choice1", "choice2"])})
        return [
            Config("nested", "Nested features.", nested, ("train", "test")),
            Config("list-mc", "Which option follows the {context}?", listmc, ("validation", "test"),
                   policy=Policy(task="multiple_choice", choices="options", context=("context",))),
            Config("copa_str", "COPA-shaped, question as a string.", copa, ("test",),
                   policy=Policy(task="multiple_choice", choices=("choice1", "choice2"),
                                 context=("premise", "question"), label="label")),
        ]

    def errata(self):
        return []

    def expectations(self):
        return []

    def examples(self, config, split, sources):
        for i in range(4):
            if config.name == "nested":
                yield {"id": f"{split}-{i}", "spans": [{"text": f"w{j}", "start": j, "kind": j % 2} for j in range(i)],
                       "meta": {"source": f"s{i}", "score": i / 2}, "tags": [f"t{j}" for j in range(i)],
                       "flag": bool(i % 2)}
            elif config.name == "list-mc":
                yield {"id": f"{split}-{i}", "context": f"Context {i} with 'quotes' and {{braces}}.",
                       "options": [f"option {k} of {i}" for k in range(3)], "label": i % 3}
            else:
                yield {"id": f"{split}-{i}", "premise": f"The man number {i} opened the tap.",
                       "choice1": "The toilet filled with water.", "choice2": "Water flowed from the spout.",
                       "question": ("cause", "effect")[i % 2], "label": i % 2}


@pytest.fixture(scope="module")
def regs(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("interop")


@pytest.fixture(scope="module")
def xcopa_fx(regs) -> Release:
    return build_fixture(regs / "xcopa-reg", "1.1.0")


@pytest.fixture(scope="module")
def comve_fx(regs) -> Release:
    return build_comve(COMVE_GOOD, regs / "comve-reg", "1.1.0")


@pytest.fixture(scope="module")
def cognition_fx(regs) -> Release:
    b = get_builder("cognition")
    sources = resolve_sources(b.sources, {}, FIXTURES / "cognition", allow_missing=True)
    return ReleaseWriter(b, regs / "cognition-reg", sources, skip_missing=True).write()


@pytest.fixture(scope="module")
def shapes(regs) -> Release:
    return ReleaseWriter(Shapes(), regs / "shapes-reg", Sources({})).write()


FIXTURE_RELEASES = ["xcopa_fx", "comve_fx", "cognition_fx", "shapes"]


# --------------------------------------------------------------------------- helpers


def check_croissant(release: Release, only: tuple[str, ...] | None = None) -> dict[str, list[dict[str, Any]]]:
    """Validate croissant.json with mlcroissant (no warning, no error) and load every record set
    in full (those of the configs ``only`` names, when given); returns the records per record set."""
    ds = mlc.Dataset(release.path / "croissant.json")
    issues = ds.metadata.ctx.issues
    assert not issues.errors and not issues.warnings, (issues.errors, issues.warnings)
    records = {rs.uuid: list(ds.records(rs.uuid)) for rs in ds.metadata.record_sets
               if only is None or rs.uuid.split("/", 1)[0] in only}
    configs = release.configs() if only is None else only
    assert {uuid.split("/", 1)[0] for uuid in records} >= set(configs)
    for config in configs:
        for split in release.splits(config):
            assert len(records[f"{config}/{split}/records"]) == release.num_examples(config, split)
        for name, feature in release.features(config).items():
            if isinstance(feature, datasets.ClassLabel):
                rs = f"{config}/{name}/classes"
                assert [(r[f"{rs}/index"], r[f"{rs}/name"]) for r in records[rs]] == list(enumerate(feature.names))
    return records


def decoded(value: Any) -> Any:
    """mlcroissant's record values as plain Python (text comes back as bytes)."""
    if isinstance(value, bytes):
        return value.decode("utf-8")
    if isinstance(value, list):
        return [decoded(v) for v in value]
    if isinstance(value, dict):
        return {k.rsplit("/", 1)[-1]: decoded(v) for k, v in value.items()}
    return value


def loading_snippet(card: str) -> str:
    section = card.split("## Loading", 1)[1]
    return re.search(r"```python\n(.*?)```", section, re.DOTALL).group(1)


#: runs a snippet (argv[1]) from each folder (argv[2:]) in one fresh interpreter, each in a fresh
#: namespace, so a missing import still fails
_FRESH_RUNNER = """import os, sys
for cwd in sys.argv[2:]:
    os.chdir(cwd)
    exec(compile(sys.argv[1], "<card snippet>", "exec"), {"__name__": "__main__"})
    print("\\n--- end of snippet ---", flush=True)
"""


def run_snippet(code: str, *cwds: Path, fresh: bool = True) -> list[str]:
    """Run the snippet from each of ``cwds`` in turn: in a fresh interpreter, or (faster) in this one;
    what it printed, per folder."""
    if not fresh:
        outs = []
        old = Path.cwd()
        for cwd in cwds:
            out = io.StringIO()
            try:
                os.chdir(cwd)
                with contextlib.redirect_stdout(out):
                    exec(compile(code, "<card snippet>", "exec"), {"__name__": "__main__"})  # noqa: S102 - the test
            finally:
                os.chdir(old)
            outs.append(out.getvalue())
        return outs
    env = {**os.environ, "HF_DATASETS_OFFLINE": "1", "HF_HUB_OFFLINE": "1"}
    done = subprocess.run([sys.executable, "-c", _FRESH_RUNNER, code, *map(str, cwds)], cwd=cwds[0],
                          env=env, capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    outs = done.stdout.split("\n--- end of snippet ---\n")
    assert len(outs) == len(cwds) + 1 and outs[-1] == "", done.stdout
    return outs[:-1]


def published_files(release: Release) -> dict[str, str]:
    """The text files the cards module writes into a release."""
    out = {}
    for p in sorted(release.path.rglob("*")):
        rel = p.relative_to(release.path).as_posix()
        if p.is_file() and (rel in ("README.md", "croissant.json") or rel.startswith("lm_eval/")):
            out[rel] = p.read_text(encoding="utf-8")
    return out


def builtin_utils(relpath: str):
    """A utils module of lm-eval's own task folders (they are not packages)."""
    import lm_eval

    spec = importlib.util.spec_from_file_location("lm_eval_builtin_" + relpath.replace("/", "_"),
                                                  Path(lm_eval.__file__).parent / "tasks" / relpath)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def run_lm_eval(release: Release, tasks: list[str], monkeypatch) -> dict[str, Any]:
    """lm-eval's own evaluator on the release's lm_eval/ tasks: the dummy model, 3 examples each,
    from the release folder (the tasks' data_files are relative to it)."""
    from lm_eval import simple_evaluate
    from lm_eval.tasks import TaskManager

    monkeypatch.chdir(release.path)
    manager = TaskManager(include_path=str(release.path / "lm_eval"), include_defaults=False)
    out = simple_evaluate(model="dummy", tasks=tasks, limit=3, task_manager=manager, log_samples=True,
                          bootstrap_iters=0)
    assert out is not None
    for t in tasks:
        assert "acc,none" in out["results"][t], out["results"][t]
        assert len(out["samples"][t]) == min(3, _scored_size(release, t))
    return out


def _scored_size(release: Release, task: str) -> int:
    config = next(c for c in release.configs() if lm_eval_mod.task_name(release.name, c) == task)
    splits = release.splits(config)
    return release.num_examples(config, "test" if "test" in splits else "validation")


def requests(sample: dict[str, Any]) -> list[tuple[str, str]]:
    """(context, continuation) of each loglikelihood request of one logged sample."""
    args = sample["arguments"]
    if isinstance(args, dict):  # the layout of the written samples file
        return [(a["arg_0"], a["arg_1"]) for _, a in sorted(args.items())]
    return [(ctx, cont) for ctx, cont in args]


# --------------------------------------------------------------------------- Croissant


def test_context_is_the_standard_croissant_1_0_one():
    written = mlc.Metadata(name="x").to_json()  # what mlcroissant itself writes
    assert written["conformsTo"] == "http://mlcommons.org/croissant/1.0"
    assert croissant_mod.CONTEXT == written["@context"]


@pytest.mark.parametrize("name", FIXTURE_RELEASES)
def test_croissant_validates_and_every_record_set_loads(name, request):
    release = request.getfixturevalue(name)
    check_croissant(release)
    doc = json.loads((release.path / "croissant.json").read_text())
    assert doc["conformsTo"] == "http://mlcommons.org/croissant/1.0" and doc["datePublished"]
    for fs in (d for d in doc["distribution"] if d["@type"] == "cr:FileSet"):
        config, split = fs["@id"].split("/")
        includes = fs["includes"] if isinstance(fs["includes"], list) else [fs["includes"]]
        assert includes == release.split_info(config, split)["files"]  # that split's shards, no other


def test_croissant_loads_nested_features_as_the_data_holds_them(cognition_fx, shapes):
    records = check_croissant(cognition_fx)
    rows = cognition_fx.table("cg_test", "test").to_pylist()
    got = [decoded(r) for r in records["cg_test/test/records"]]
    assert [g["atoms"] for g in got] == [r["atoms"] for r in rows]  # a list of {role, text}
    assert got[0]["atoms"] and set(got[0]["atoms"][0]) == {"role", "text"}
    assert [g["category"] for g in got] == [r["category"] for r in rows]
    lex = [decoded(r) for r in records["lexicon/test/records"]]
    assert [g["translations"] for g in lex] == cognition_fx.table("lexicon", "test").column("translations").to_pylist()

    records = check_croissant(shapes)
    got = [decoded(r) for r in records["nested/train/records"]]
    rows = shapes.table("nested", "train").to_pylist()
    assert [g["spans"] for g in got] == [r["spans"] for r in rows]
    assert [g["meta"]["source"] for g in got] == [r["meta"]["source"] for r in rows]
    assert [g["tags"] for g in got] == [r["tags"] for r in rows]
    label = json.loads((shapes.path / "croissant.json").read_text())
    copa_label = next(f for rs in label["recordSet"] if rs["@id"] == "copa_str/test/records"
                      for f in rs["field"] if f["name"] == "label")
    assert copa_label["references"] == {"field": {"@id": "copa_str/label/classes/index"}}
    assert copa_label["description"] == "ClassLabel: 0=choice1, 1=choice2"


def test_date_published_is_deterministic(shapes, monkeypatch):
    m = shapes.info
    monkeypatch.delenv("SOURCE_DATE_EPOCH", raising=False)
    assert croissant_mod.date_published(m) == "2024"  # the citation's year: no clock involved
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1700000000")
    assert croissant_mod.date_published(m) == "2023-11-14"
    assert croissant_mod.date_published(dataclasses.replace(m, release_date="2025-01-31")) == "2025-01-31"


# --------------------------------------------------------------------------- the card


@pytest.mark.parametrize("name", FIXTURE_RELEASES)
def test_card_loading_snippet_runs_as_written(name, request):
    release = request.getfixturevalue(name)
    card = (release.path / "README.md").read_text()
    code = loading_snippet(card)
    assert f'"./{release.name}/{release.version}"' in code and f'load_dataset(str(release), "{release.configs()[0]}")' in code
    # from the registry folder and from the release folder (where lm_eval/README.md says to cd), as the
    # card says; one release in a fresh interpreter, the others here
    for out in run_snippet(code, release.path.parent.parent, release.path, fresh=name == "xcopa_fx"):
        assert "DatasetDict" in out
        for split in release.splits(release.configs()[0]):
            assert f"{split}: Dataset" in out
    # the per-split pattern the card gives to readers without the card
    first = release.configs()[0]
    splits = release.splits(first)
    if len(splits) > 1:
        assert f"`data/{first}/*.parquet` mixes {' and '.join(splits)}." in card
    else:  # not "mixes test."
        assert f"`data/{first}/` holds one split, {splits[0]}, in this version" in card and " mixes " not in card
    assert f"data/{first}/{release.splits(first)[-1]}-*.parquet" in card


def test_card_for_a_published_release_loads_from_the_hub(xcopa_fx):
    hub = {"repo": "org/xcopa", "revision": "1.1.0"}
    card = render_card(xcopa_fx, hub=hub)
    assert 'load_dataset("org/xcopa", "et", revision="1.1.0")' in loading_snippet(card)
    files = render_files(xcopa_fx, hub=hub)
    task = yaml.safe_load(files["lm_eval/et.yaml"])
    assert (task["dataset_path"], task["dataset_name"], task["dataset_kwargs"]) == ("org/xcopa", "et",
                                                                                    {"revision": "1.1.0"})
    assert json.loads(files["croissant.json"])["url"] == "https://huggingface.co/datasets/org/xcopa"
    # rendering for the Hub does not touch the release folder
    assert "org/xcopa" not in (xcopa_fx.path / "README.md").read_text()


@pytest.mark.parametrize("name", FIXTURE_RELEASES)
def test_no_local_path_in_what_a_release_publishes(name, request, regs):
    release = request.getfixturevalue(name)
    for rel, text in published_files(release).items():
        for local in (str(regs), str(FIXTURES), str(Path.home()), "/tmp/", str(release.path)):
            assert local not in text, (rel, local)


def test_a_skipped_split_is_explained_without_its_path(cognition_fx):
    reason = cognition_fx.info.to_dict()["configs"]["parallel"]["skipped_splits"]["train"]
    assert str(FIXTURES) not in reason and "data/train.en" in reason  # release.json is published too
    card = (cognition_fx.path / "README.md").read_text()
    assert "- `parallel`: train (source file 'data/train.en' of 'cognition' is missing)" in card


def test_card_metadata_comes_from_the_manifest(shapes, cognition_fx):
    meta = yaml.safe_load((shapes.path / "README.md").read_text().split("---")[1])
    assert meta["task_categories"] == ["multiple-choice"] and meta["task_ids"] == ["multiple-choice-qa"]
    assert meta["multilinguality"] == ["monolingual"] and meta["source_datasets"] == ["original"]
    assert meta["paperswithcode_id"] == "shapes"
    meta = yaml.safe_load((cognition_fx.path / "README.md").read_text().split("---")[1])
    assert meta["multilinguality"] == ["translation"] and meta["source_datasets"] == ["original"]
    assert not {"task_ids", "paperswithcode_id"} & set(meta)  # CoGnition declares neither


def _report(results: list[dict[str, Any]]) -> dict[str, Any]:
    counts = {s: sum(r["status"] == s for r in results) for s in ("pass", "warn", "fail", "skip", "stat")}
    return {"name": "x", "version": "1", "baselines": "none", "notes": ["a note"], "summary": counts,
            "passed": counts["fail"] == 0, "results": results}


def _write_report(release: Release, results: list[dict[str, Any]]) -> str:
    release.reports_dir.mkdir(parents=True, exist_ok=True)
    (release.reports_dir / "validation.json").write_text(json.dumps(_report(results)))
    try:
        return render_card(release)
    finally:
        (release.reports_dir / "validation.json").unlink()


def test_validation_outcomes_come_from_the_report(shapes):
    dup = {"check": "exact_duplicates", "family": "leakage", "status": "warn", "config": "nested",
           "summary": "2 of 4 test items repeat train (0.5%; fails above 0.6%)"}
    rows = [{"check": "schema", "family": "integrity", "status": "pass", "config": f"c{i}", "summary": "ok"}
            for i in range(FULL_TABLE_MAX + 10)]
    rows += [dup, {**dup, "config": "list-mc"},
             {"check": "fidelity", "family": "fidelity", "status": "fail", "config": "nested",
              "summary": "published 10, measured 4 (see /tmp/build-xyz/raw/file.tsv)"},
             {"check": "baselines", "family": "baselines", "status": "stat", "config": "nested", "summary": "s"}]
    card = _write_report(shapes, rows)
    section = card.split("## Validation", 1)[1].split("## Sources", 1)[0]
    assert "Gate: **failed**. 44 results: 1 fail, 2 warn, 40 pass, 1 stat." in section
    assert "| exact_duplicates | leakage | 0 | 2 | 0 | 0 |" in section  # it warned: it does not "fail"
    assert "| **all** | | **1** | **2** | **40** | **1** |" in section
    assert "Warnings (2; one row per check and summary)" in section
    assert "| exact_duplicates | nested, list-mc | 2 of 4 test items repeat train (0.5%; fails above 0.6%) |" in section
    assert "Failures (1;" in section and "…/raw/file.tsv" in section and "/tmp/build-xyz" not in section
    assert "| schema | c0 | pass |" not in section  # passing results stay in the report
    assert len(card.splitlines()) < 1000

    card = _write_report(shapes, rows[:3] + [dup])  # a short report is listed in full
    section = card.split("## Validation", 1)[1]
    assert "Gate: **passed**. 4 results: 1 warn, 3 pass." in section
    assert "| schema | c0 | pass | ok |" in section and "| exact_duplicates | nested | warn |" in section


def test_two_builds_write_the_same_card_files(shapes, tmp_path):
    again = ReleaseWriter(Shapes(), tmp_path / "elsewhere", Sources({})).write()
    assert published_files(again) == published_files(shapes)


def test_rewriting_removes_lm_eval_files_of_configs_that_are_gone(shapes):
    stale = shapes.path / "lm_eval" / "gone.yaml"
    stale.write_text("task: gone\n")
    write_card_files(shapes)
    assert not stale.exists() and (shapes.path / "lm_eval" / "copa_str.yaml").is_file()


# --------------------------------------------------------------------------- lm-eval


def test_connectors_are_lm_evals_own():
    xcopa = builtin_utils("xcopa/utils.py")
    for lang, (cause, effect) in CONNECTORS.items():
        if lang == "en":
            continue
        assert getattr(xcopa, f"doc_to_text_{lang}").keywords["connector"] == {"cause": cause, "effect": effect}
    copa = builtin_utils("super_glue/copa/utils.py")
    doc = {"premise": "It rained.", "question": "effect", "choice1": "A", "choice2": "B", "label": 0}
    assert copa.doc_to_text(doc) == "It rained " + lm_eval_mod.ENGLISH[1] and CONNECTORS["en"] == lm_eval_mod.ENGLISH


def test_lm_eval_tasks_of_every_kind_of_config(xcopa_fx, comve_fx, shapes, cognition_fx):
    assert sorted(p.name for p in (xcopa_fx.path / "lm_eval").iterdir()) == sorted(
        ["README.md", "_benchsmith_xcopa.yaml"] + [f"{c}.yaml" for c in xcopa_fx.configs()])
    assert sorted(p.name for p in (comve_fx.path / "lm_eval").iterdir()) == [
        "README.md", "_benchsmith_comve.yaml", "subtask_a.yaml", "subtask_b.yaml"]
    assert not (cognition_fx.path / "lm_eval").exists()  # translation configs are not lm-eval tasks
    task = yaml.safe_load((xcopa_fx.path / "lm_eval" / "translation-et.yaml").read_text())
    assert task["task"] == "benchsmith_xcopa_translation_et"
    assert task["dataset_kwargs"] == {"data_files": {"validation": "data/translation-et/validation-*.parquet",
                                                     "test": "data/translation-et/test-*.parquet"}}
    readme = (xcopa_fx.path / "lm_eval" / "README.md").read_text()
    assert "--include_path lm_eval --tasks benchsmith_xcopa_et" in readme


def test_lm_eval_runs_xcopa_and_copa_with_the_builtin_prompts(xcopa_fx, monkeypatch):
    tasks = ["benchsmith_xcopa_et", "benchsmith_xcopa_th", "benchsmith_xcopa_translation_et", "benchsmith_xcopa_en"]
    out = run_lm_eval(xcopa_fx, tasks, monkeypatch)
    xcopa, copa = builtin_utils("xcopa/utils.py"), builtin_utils("super_glue/copa/utils.py")
    for task in tasks:
        for sample in out["samples"][task]:
            doc = sample["doc"]
            assert doc["question"] in ("cause", "effect")  # stored as the string, as lm-eval reads it
            if task.endswith(("_et", "_th")) and "translation" not in task:
                text = getattr(xcopa, f"doc_to_text_{task[-2:]}")(doc)
                choices = xcopa.doc_to_choice(doc)
            else:
                text, choices = copa.doc_to_text(doc), copa.doc_to_choice(doc)
            assert requests(sample) == [(text, " " + c) for c in choices], task
            assert str(sample["target"]) == str(doc["label"])


def test_lm_eval_runs_comve_and_generic_multiple_choice(comve_fx, shapes, monkeypatch):
    out = run_lm_eval(comve_fx, ["benchsmith_comve_subtask_a", "benchsmith_comve_subtask_b"], monkeypatch)
    sample = out["samples"]["benchsmith_comve_subtask_b"][0]
    doc = sample["doc"]
    context = requests(sample)[0][0]
    assert context.startswith(doc["false_sent"] + "\n") and context.endswith("\nAnswer:")
    assert f"\nA. {doc['option_a']}\nB. {doc['option_b']}\nC. {doc['option_c']}\n" in context
    assert [c for _, c in requests(sample)] == [" A", " B", " C"]

    monkeypatch.undo()
    out = run_lm_eval(shapes, ["benchsmith_shapes_list_mc", "benchsmith_shapes_copa_str"], monkeypatch)
    sample = out["samples"]["benchsmith_shapes_list_mc"][1]
    assert requests(sample)[0][0] == ("Context 1 with 'quotes' and {braces}.\nWhich option follows the {context}?\n"
                                      "A. option 0 of 1\nB. option 1 of 1\nC. option 2 of 1\nAnswer:")
    copa = builtin_utils("super_glue/copa/utils.py")
    for sample in out["samples"]["benchsmith_shapes_copa_str"]:  # question stored as the string itself
        doc = sample["doc"]
        assert requests(sample) == [(copa.doc_to_text(doc), " " + c) for c in copa.doc_to_choice(doc)]


def test_copa_prompt_reads_question_as_lm_eval_does():
    """The COPA prompt looks ``question`` up as lm-eval does (``connector[doc["question"]]``): no
    integer workaround; a COPA-shaped config whose question is a ClassLabel (a release built before
    XCOPA stored the string) gets the lettered prompt, which shows the class name."""
    def manifest(question: Any) -> ReleaseInfo:
        feats = datasets.Features({"premise": S, "choice1": S, "choice2": S, "question": question,
                                   "label": datasets.ClassLabel(names=["choice1", "choice2"])})
        policy = Policy(task="multiple_choice", choices=("choice1", "choice2"), context=("premise", "question"),
                        label="label")
        return ReleaseInfo.from_dict({"name": "x", "version": "1.0.0", "configs": {"et": {
            "features": feats.to_dict(), "policy": policy.to_dict(), "languages": ["et"],
            "splits": {"test": {"num_examples": 1, "fingerprint": "0" * 64,
                                "files": ["data/et/test-00000-of-00001.parquet"]}}, "description": "d"}},
            "tool_versions": {"benchsmith": "0", "datasets": "0", "pyarrow": "0"}})

    (task,) = lm_eval_mod.tasks(manifest(S), CONNECTORS)
    assert task["yaml"]["doc_to_text"] == "{{ premise.strip()[:-1] }} {{ {'cause': 'sest', 'effect': 'seetõttu'}[question] }}"
    assert "is string" not in task["yaml"]["doc_to_text"] and task["what"].startswith("lm-eval's built-in `xcopa_et`")
    (task,) = lm_eval_mod.tasks(manifest(datasets.ClassLabel(names=["cause", "effect"])), CONNECTORS)
    assert task["what"].startswith("lettered options")
    assert "['cause', 'effect'][question] if question is number else question" in task["yaml"]["doc_to_text"]
    # the connector words are the builder's (XCOPA's, builders/xcopa/lm_eval.py): without them, English
    (task,) = lm_eval_mod.tasks(manifest(S))
    assert "'because'" in task["yaml"]["doc_to_text"] and "no connectors for 'et'" in task["what"]


@pytest.mark.slow
def test_lm_eval_command_line_as_the_readme_says(xcopa_fx):
    env = {**os.environ, "HF_DATASETS_OFFLINE": "1", "HF_HUB_OFFLINE": "1"}
    done = subprocess.run(
        [sys.executable, "-m", "lm_eval", "--model", "dummy", "--include_path", "lm_eval",
         "--tasks", "benchsmith_xcopa", "--limit", "3"],
        cwd=xcopa_fx.path, env=env, capture_output=True, text=True, timeout=600, check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert "benchsmith_xcopa_et" in done.stdout and "benchsmith_xcopa_en" in done.stdout


# --------------------------------------------------------------------------- real data


@pytest.fixture(scope="module")
def real(real_xcopa, real_cognition) -> dict[str, Release]:
    """XCOPA and CoGnition from ../shared/raw (tests/conftest.py: shared read-only)."""
    return {"xcopa": real_xcopa, "cognition": real_cognition}


# The default run loads the real CoGnition's cg_test and lexicon records (10,874 rows, the nested
# atoms among them); its 20,000 parallel rows and XCOPA's 22 configs (seconds each for mlcroissant)
# in the slow run, the fixture releases' every record set in the default run
@pytest.mark.realdata
def test_real_croissant_validates_and_loads(real):
    cognition = real["cognition"]
    records = check_croissant(cognition, only=("cg_test", "lexicon"))
    got = [decoded(r)["atoms"] for r in records["cg_test/test/records"]]
    assert got == cognition.table("cg_test", "test").column("atoms").to_pylist()


@pytest.mark.realdata
@pytest.mark.slow
@pytest.mark.parametrize("name", ["xcopa", "cognition"])
def test_real_croissant_loads_every_record_set(real, name):
    check_croissant(real[name])


@pytest.mark.realdata
def test_real_cards_run_as_written_and_hold_no_local_path(real, raw):
    # both here: a fresh interpreter runs the same template's snippet of the XCOPA fixture release
    # (test_card_loading_snippet_runs_as_written[xcopa_fx])
    for release in real.values():
        (out,) = run_snippet(loading_snippet((release.path / "README.md").read_text()), release.path.parent.parent,
                             fresh=False)
        assert "DatasetDict" in out
        for rel, text in published_files(release).items():
            for local in (str(raw), str(release.path.parent.parent), "/tmp/"):
                assert local not in text, (release.name, rel, local)


@pytest.mark.realdata
def test_real_xcopa_lm_eval_tasks_run(real, monkeypatch):
    run_lm_eval(real["xcopa"], ["benchsmith_xcopa_qu", "benchsmith_xcopa_translation_zh", "benchsmith_xcopa_en"],
                monkeypatch)


@pytest.mark.parametrize("name", ["xcopa_fx", "comve_fx"])
def test_croissant_carries_the_responsible_ai_fields_mlcroissant_reads(name, request):
    """NeurIPS asks for the Croissant RAI fields: filled from the manifest, read back by
    mlcroissant's own Metadata (no warning: check_croissant), nothing typed by hand."""
    release = request.getfixturevalue(name)
    check_croissant(release)
    meta = mlc.Dataset(release.path / "croissant.json").metadata
    m = release.info.to_dict()
    assert all(src in meta.data_collection for src in m["sources"])
    digests = [f["sha256"] for s in m["sources"].values() for f in (s.get("files") or {}).values() if f.get("sha256")]
    assert digests and all(d in meta.data_collection_raw_data for d in digests)
    assert len(meta.data_preprocessing_protocol) == 1 + len(m["errata_applied"])
    assert [e["id"] for e in m["errata_applied"]] == [p.split(":")[0].removeprefix("Erratum ")
                                                      for p in meta.data_preprocessing_protocol[1:]]
    assert meta.data_use_cases and "semantic versioning" in meta.data_release_maintenance_plan


def test_croissant_rai_limitations_follow_the_manifest(tmp_path, xcopa_fx):
    from benchsmith.cards.croissant import responsible_ai

    m = json.loads((xcopa_fx.path / "release.json").read_text())
    assert ("rai:dataLimitations" not in responsible_ai(ReleaseInfo.from_dict(m)) or m["errata_pending"]
            or m["skipped_configs"])
    m["errata_pending"] = [{"id": "later-fix", "version": "2.0.0", "what": "three mislabelled items", "items": []}]
    m["reproducible"] = False
    m["rai"] = {"dataAnnotationProtocol": "translated by one professional translator per language"}
    rai = responsible_ai(ReleaseInfo.from_dict(m))
    assert any("later-fix" in x for x in rai["rai:dataLimitations"])
    assert any("not reproducible" in x for x in rai["rai:dataLimitations"])
    assert rai["rai:dataAnnotationProtocol"].startswith("translated")


def test_a_single_split_config_is_not_said_to_mix_splits(tmp_path):
    """MuCoW's configs have one split: the card said "`data/scoring-cs-en/*.parquet` mixes test."."""
    from validation_helpers import MC_META, make_release, mc_features, mc_rows

    release = make_release(tmp_path / "reg", {"test": mc_rows(20, "te", 1)}, mc_features(), MC_META, name="one")
    card = render_card(release)
    assert "mixes" not in card
    assert "`data/default/` holds one split, test, in this version, and a later one may\nadd others." in card
    two = make_release(tmp_path / "reg2", {"train": mc_rows(20, "tr", 1), "test": mc_rows(20, "te", 2)},
                       mc_features(), MC_META, name="two")
    assert "`data/default/*.parquet` mixes train and test." in render_card(two)
