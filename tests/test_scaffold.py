"""`benchsmith new NAME` writes an out-of-tree package that builds, validates and passes its tests as
generated, found through its `benchsmith.builders` entry point once installed (issue 28)."""

from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import one_json, run_cli

from benchsmith.builder import unregister
from benchsmith.errors import ConfigError


def test_new_writes_the_package_and_refuses_to_overwrite(capsys, tmp_path):
    code, out, err = run_cli(capsys, "new", "my_bench", "--dir", str(tmp_path / "pkg"), "--json")
    assert code == 0, err
    made = one_json(out)
    assert sorted(made["files"]) == sorted([
        "README.md", "pyproject.toml", "src/benchsmith_my_bench/__init__.py",
        "src/benchsmith_my_bench/checksums.tsv", "src/benchsmith_my_bench/errata.tsv",
        "src/benchsmith_my_bench/published.yaml", "tests/fixtures/my_bench/items.tsv", "tests/test_my_bench.py"])
    pyproject = (tmp_path / "pkg" / "pyproject.toml").read_text()
    assert '[project.entry-points."benchsmith.builders"]\nmy_bench = "benchsmith_my_bench"' in pyproject
    assert [p.name for p in tmp_path.iterdir()] == ["pkg"]  # no temporary folder left
    code, _, err = run_cli(capsys, "new", "my_bench", "--dir", str(tmp_path / "pkg"))
    assert code == 2 and "already exists and is not an empty folder" in err
    code, _, err = run_cli(capsys, "new", "My-Bench", "--dir", str(tmp_path / "other"))
    assert code == 2 and "is not a dataset name" in err and not (tmp_path / "other").exists()


def test_the_generated_builder_builds_verifies_its_checksums_and_validates(tmp_path, monkeypatch):
    """The quick stand-in of the slow test below: the generated module imported from its src/."""
    from benchsmith.scaffold import scaffold
    from benchsmith.testing import build_release
    from benchsmith.validation.runner import validate

    pkg = scaffold("quick_bench", tmp_path / "pkg")
    monkeypatch.syspath_prepend(str(pkg / "src"))
    try:
        module = importlib.import_module("benchsmith_quick_bench")
        builder = module.QuickBench
        assert builder.checksums()  # the generated checksums.tsv registers the fixture file ...
        release = build_release(builder, pkg / "tests" / "fixtures", tmp_path / "registry", checksums=True)
        assert {s: release.num_examples("default", s) for s in release.splits("default")} == {
            "train": 12, "validation": 4, "test": 4}
        v = validate(release, builder=builder(), previous=None)
        assert v.passed, [r.summary for r in v.results if r.status.value == "fail"]
        fidelity = [r for r in v.results if r.check == "fidelity"]
        assert len(fidelity) == 3 and all(r.status.value == "pass" for r in fidelity)
        # ... and a changed raw file is caught by it
        items = tmp_path / "raw" / "quick_bench" / "items.tsv"
        items.parent.mkdir(parents=True)
        items.write_text((pkg / "tests" / "fixtures" / "quick_bench" / "items.tsv").read_text() + "x\ttrain\tx\tno\n")
        with pytest.raises(Exception, match="sha256|size"):
            build_release(builder, tmp_path / "raw", tmp_path / "registry2", checksums=True)
    finally:
        unregister("quick_bench")
        sys.modules.pop("benchsmith_quick_bench", None)


def test_render_rejects_bad_names():
    from benchsmith.scaffold import render

    for bad in ("", "A", "My-Bench", "-x", "_x", "a b", "é", "x" * 101):
        with pytest.raises(ConfigError, match="is not a dataset name"):
            render(bad)


def test_new_accepts_every_release_name_and_derives_python_names(capsys, tmp_path):
    """A release name may hold '-' (manifest.NAME_RE): `new e-snli` makes package benchsmith_e_snli."""
    from benchsmith.scaffold import render

    code, out, err = run_cli(capsys, "new", "e-snli", "--dir", str(tmp_path / "pkg"), "--json")
    assert code == 0, err
    assert sorted(one_json(out)["files"]) == sorted([
        "README.md", "pyproject.toml", "src/benchsmith_e_snli/__init__.py", "src/benchsmith_e_snli/checksums.tsv",
        "src/benchsmith_e_snli/errata.tsv", "src/benchsmith_e_snli/published.yaml",
        "tests/fixtures/e-snli/items.tsv", "tests/test_e_snli.py"])
    pyproject = (tmp_path / "pkg" / "pyproject.toml").read_text()
    assert 'name = "benchsmith-e-snli"' in pyproject and 'e-snli = "benchsmith_e_snli"' in pyproject
    assert 'class ESnli(Builder):\n    name = "e-snli"' in (tmp_path / "pkg/src/benchsmith_e_snli/__init__.py").read_text()
    assert "class Dataset3lc(Builder)" in render("3lc")["src/benchsmith_3lc/__init__.py"]


def _generated_test(pkg: Path, module: str):
    """The generated package's test module, imported from its tests/ with its src/ on the path."""
    sys.path[:0] = [str(pkg / "src"), str(pkg / "tests")]
    try:
        return importlib.import_module(module)
    finally:
        del sys.path[:2]


def test_the_generated_validate_test_survives_real_figures_and_nothing_else(tmp_path):
    """With published.yaml holding the paper's figures (which the fixture cannot reproduce), the
    generated validate test passes; a failure of any other kind (here an empty text) still fails it."""
    from benchsmith.scaffold import scaffold

    pkg = scaffold("real-bench", tmp_path / "pkg")
    published = pkg / "src" / "benchsmith_real_bench" / "published.yaml"
    real = published.read_text().replace("value: 4,", "value: 1000,").replace("value: 12,", "value: 9000,")
    published.write_text(real)
    try:
        test = _generated_test(pkg, "test_real_bench")
        test.test_validate_passes_on_the_fixture(tmp_path / "real")  # 3 figures not reproduced: allowed
        items = pkg / "tests" / "fixtures" / "real-bench" / "items.tsv"
        lines = items.read_text().splitlines(keepends=True)
        first = lines[1].split("\t")
        items.write_text(lines[0] + "\t".join([*first[:2], "", first[3]]) + "".join(lines[2:]))  # an empty text
        with pytest.raises(AssertionError, match="empty_fields"):
            test.test_validate_passes_on_the_fixture(tmp_path / "broken")
    finally:
        unregister("real-bench")
        for module in ("test_real_bench", "benchsmith_real_bench"):
            sys.modules.pop(module, None)


def _run(cmd: list[str], env: dict[str, str], cwd: Path, timeout: int = 240) -> subprocess.CompletedProcess:
    proc = subprocess.run(cmd, check=False, env=env, cwd=cwd, capture_output=True, text=True, timeout=timeout)
    assert proc.returncode == 0, (cmd, proc.stdout[-3000:], proc.stderr[-3000:])
    return proc


@pytest.mark.slow
def test_scaffold_installs_without_the_network_and_builds_validates_and_tests(tmp_path):
    """As a user would: `benchsmith new`, `pip install` (no index, no build isolation), then the
    installed entry point makes `benchsmith list/build/validate` see it, and its own tests pass."""
    exe = Path(sys.executable).parent / "benchsmith"
    env = {**os.environ, "BENCHSMITH_HOME": str(tmp_path / "home"), "PIP_NO_INDEX": "1",
           "PIP_DISABLE_PIP_VERSION_CHECK": "1"}
    _run([str(exe), "new", "demo_bench", "--dir", str(tmp_path / "pkg")], env, tmp_path)
    site = tmp_path / "site"
    _run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--no-build-isolation", "--target", str(site),
          str(tmp_path / "pkg")], env, tmp_path)
    assert (site / "benchsmith_demo_bench" / "checksums.tsv").is_file()  # package data installed
    env["PYTHONPATH"] = str(site)
    listed = json.loads(_run([str(exe), "list", "--json"], env, tmp_path).stdout)["builders"]
    assert listed["demo_bench"]["configs"] == ["default"]  # found through the entry point alone
    reg = tmp_path / "registry"
    _run([str(exe), "-q", "build", "demo_bench", "--sources", str(tmp_path / "pkg" / "tests" / "fixtures"),
          "--registry", str(reg)], env, tmp_path)  # checksums verified against the installed checksums.tsv
    report = json.loads(_run([str(exe), "-q", "validate", "demo_bench", "--registry", str(reg), "--json"],
                             env, tmp_path).stdout)
    assert report["passed"], [r for r in report["results"] if r["status"] == "fail"]
    tests = _run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"], env, tmp_path / "pkg", timeout=400)
    assert " passed" in tests.stdout and "failed" not in tests.stdout


_LIST = """\
import contextlib, io, json, site, sys
site.addsitedir(sys.argv[1])  # where the editable install's .pth is: as in a venv's site-packages
from benchsmith.cli import main
out = io.StringIO()
with contextlib.redirect_stdout(out):
    main(["list", "--json"])
print(json.dumps(json.loads(out.getvalue())["builders"]["edit_bench"]["versions"]))
"""


@pytest.mark.slow
def test_list_follows_an_editable_plugins_edits(tmp_path):
    """A new version in an editable plugin's release_notes shows at once (no index to go stale)."""
    from benchsmith.scaffold import scaffold

    pkg = scaffold("edit_bench", tmp_path / "pkg")
    env = {**os.environ, "BENCHSMITH_HOME": str(tmp_path / "home"), "PIP_NO_INDEX": "1",
           "PIP_DISABLE_PIP_VERSION_CHECK": "1"}
    _run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--no-build-isolation", "--prefix",
          str(tmp_path / "prefix"), "-e", str(pkg)], env, tmp_path)
    [site_dir] = (tmp_path / "prefix" / "lib").glob("python3*/site-packages")
    listed = [sys.executable, "-c", _LIST, str(site_dir)]
    assert json.loads(_run(listed, env, tmp_path).stdout) == ["1.0.0"]
    assert json.loads(_run(listed, env, tmp_path).stdout) == ["1.0.0"]
    module = pkg / "src" / "benchsmith_edit_bench" / "__init__.py"
    module.write_text(module.read_text().replace('{"1.0.0": "upstream as released"}',
                                                 '{"1.0.0": "upstream as released", "1.1.0": "errata"}'))
    assert json.loads(_run(listed, env, tmp_path).stdout) == ["1.0.0", "1.1.0"]
