"""The documentation runs: every command of README.md and of the pages in docs/, and the site builds.

How a page's fenced blocks are run (the convention CONTRIBUTING.md, "Documentation", states):

* ```` ```bash ```` or ```` ```sh ````: the whole block is one bash script (``-euo pipefail``),
  in a fresh shell, so a block sets the variables it uses;
* ```` ```console ````: the lines that start with ``$ `` are the commands, the rest is output;
* ```` ```python ````: the block is a script run by this interpreter;
* ``<!-- skip-test: REASON -->`` on the line before a block leaves that block out; only for what
  cannot run offline in a test (installing packages, the test suite itself).

A page's blocks run in order in one folder, ``<tmp>/work``, where ``../shared/raw`` is the real
raw data (``$BENCHSMITH_RAW``), ``$BENCHSMITH_HOME`` is empty, and ``HF_ENDPOINT`` is a local
test Hub (:class:`benchsmith.testing.hub.LocalHub`, fresh for each page) whose token is
``HF_TOKEN``: the commands are the ones a user types, and ``my-org/xcopa`` is a repo on that Hub.
The blocks run in a throwaway virtual environment layered over the test's (:func:`page_venv`):
it sees every package installed there, and what a page installs (the plugin guide's
``pip install -e``) goes into it and is deleted with the folder, never into the test's
environment.
A block fails the test with its page, line, exit status and output. The README and ci.md run in
the default run (~25-50 s each on 2 cores: real XCOPA builds and validations), and so do the
two guides, maintainer.md and plugins.md (a builder package on its fixture, ~20 CPU s each:
the end-to-end test of the maintainer's loop and of a plugin); the quickstart, which repeats
the README's commands on more of the data, in the slow run.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import sysconfig
import venv
from dataclasses import dataclass
from importlib.metadata import distribution
from pathlib import Path

import pytest

from benchsmith.testing.hub import LocalHub

ROOT = Path(__file__).resolve().parent.parent
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
RUNNABLE = {"bash", "sh", "console", "python"}
FENCE = re.compile(r"^```(\w*)\s*$")
SKIP = re.compile(r"^<!--\s*skip-test:\s*(\S.*?)\s*-->$")
TOKEN = "hf_docsTestToken0123456789"
# in the slow run (CI runs it): the quickstart repeats the README's commands on more of the real
# data; the plugin guide repeats the maintainer guide's scaffold, install and build; the CI guide's
# workflow also runs in the default run as tests/test_ci_example.py (the maintainer guide, the loop
# end to end, stays in the default run)
SLOW_PAGES = {"docs/quickstart.md", "docs/plugins.md", "docs/ci.md"}
BLOCK_SECONDS = 300


@dataclass(frozen=True)
class Block:
    page: Path
    line: int  # of the opening fence, 1-based
    lang: str
    code: str
    skip: str | None  # the reason given by a skip-test marker

    @property
    def where(self) -> str:
        return f"{self.page.relative_to(ROOT)}:{self.line}"

    def script(self) -> str:
        if self.lang == "console":
            return "\n".join(line[2:] for line in self.code.splitlines() if line.startswith("$ "))
        return self.code


def blocks(page: Path) -> list[Block]:
    """The fenced blocks of a page with a runnable language, in order."""
    found: list[Block] = []
    lines = page.read_text(encoding="utf-8").splitlines()
    i = 0
    while i < len(lines):
        opening = FENCE.match(lines[i])
        if not opening:
            i += 1
            continue
        start, lang = i, opening.group(1)
        i += 1
        while i < len(lines) and lines[i].rstrip() != "```":
            i += 1
        if lang in RUNNABLE:
            marker = SKIP.match(lines[start - 1].strip()) if start else None
            found.append(Block(page, start + 1, lang, "\n".join(lines[start + 1:i]) + "\n",
                               marker.group(1) if marker else None))
        i += 1
    return found


def run_block(block: Block, work: Path, env: dict[str, str], python: str = sys.executable) -> subprocess.CompletedProcess:
    if block.lang == "python":
        command = [python, "-c", block.script()]
    else:
        command = ["bash", "--noprofile", "--norc", "-euo", "pipefail", "-c", block.script()]
    return subprocess.run(command, check=False, cwd=work, env=env, capture_output=True, text=True, timeout=BLOCK_SECONDS)


def page_venv(where: Path) -> Path:
    """A virtual environment at ``where`` layered over the test's interpreter; returns its ``bin``.

    A ``.pth`` line adds the test's site-packages as a site directory (its own ``.pth`` files,
    an editable benchsmith among them, apply), so the page sees every installed package while
    ``pip install`` (the venv's ``python -m pip``, or ``pip``, a wrapper of it) writes into the
    venv. benchsmith's console scripts are written for the venv's interpreter, so ``benchsmith``
    finds a builder the page installed through its entry point."""
    venv.create(where, with_pip=False, symlinks=True)
    site = next(where.glob("lib/python*/site-packages"))
    (site / "_layered_over_test_env.pth").write_text(
        f"import site; site.addsitedir({sysconfig.get_paths()['purelib']!r})\n", encoding="utf-8")
    bin_dir = where / "bin"
    python = bin_dir / "python"
    scripts = {"pip": f'#!/bin/sh\nexec "{python}" -m pip "$@"\n'} | {
        ep.name: f"#!{python}\nimport sys\nfrom {ep.module} import {ep.attr}\nsys.exit({ep.attr}())\n"
        for ep in distribution("benchsmith").entry_points if ep.group == "console_scripts"}
    for name, text in scripts.items():
        (bin_dir / name).write_text(text, encoding="utf-8")
        (bin_dir / name).chmod(0o755)
    return bin_dir


def page_env(tmp: Path, hub_url: str, bin_dir: Path | None = None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("HF_", "BENCHSMITH_", "GITHUB_", "PYTEST_", "PIP_"))}
    paths = [str(bin_dir)] if bin_dir else []
    env.update({
        "PATH": os.pathsep.join([*paths, str(Path(sys.executable).parent), os.environ.get("PATH", "")]),
        "PIP_DISABLE_PIP_VERSION_CHECK": "1",
        "BENCHSMITH_HOME": str(tmp / "home"), "HOME": str(tmp / "user"),
        "HF_ENDPOINT": hub_url, "HF_TOKEN": TOKEN, "HF_HOME": str(tmp / "hf"),
        "HF_HUB_DISABLE_TELEMETRY": "1", "HF_HUB_DISABLE_PROGRESS_BARS": "1",
        "HF_DATASETS_DISABLE_PROGRESS_BARS": "1", "BENCHSMITH_HUB_RETRY_DELAYS": "0",
    })
    return env


def runnable_pages() -> list[Path]:
    return [page for page in PAGES if any(b.skip is None for b in blocks(page))]


def page_params() -> list:
    return [pytest.param(page, id=name, marks=[pytest.mark.slow] if name in SLOW_PAGES else [])
            for page in runnable_pages() for name in [str(page.relative_to(ROOT))]]


def test_the_convention_finds_the_walkthroughs():
    """The parser sees what a reader sees: the README's commands and its two skipped blocks."""
    readme = blocks(ROOT / "README.md")
    assert [b.skip is not None for b in readme][:2] == [True, False]
    assert any("benchsmith publish" in b.code for b in readme if b.skip is None)
    assert any(b.lang == "python" for b in readme)
    tests = [b for b in readme if "python -m pytest" in b.code]
    assert [b.code.strip() for b in tests] == ["BENCHSMITH_RAW=../shared/raw python -m pytest -q"], \
        ".ci/run runs the README's test command: keep it exactly this"
    assert all(b.skip for b in tests)
    assert {p.name for p in runnable_pages()} >= {"README.md", "quickstart.md", "ci.md"}


def test_a_failing_command_names_its_page_and_line(tmp_path):
    page = tmp_path / "page.md"
    page.write_text("text\n\n```bash\ntrue\n```\n\n<!-- skip-test: offline -->\n```sh\nexit 3\n```\n"
                    "```console\n$ echo one\noutput\n$ false\n```\n", encoding="utf-8")
    found = blocks(page)
    assert [(b.line, b.lang, b.skip) for b in found] == [(3, "bash", None), (8, "sh", "offline"),
                                                          (11, "console", None)]
    assert found[2].script() == "echo one\nfalse"
    assert run_block(found[0], tmp_path, dict(os.environ)).returncode == 0
    assert run_block(found[2], tmp_path, dict(os.environ)).returncode == 1


@pytest.mark.realdata
@pytest.mark.parametrize("page", page_params())
def test_every_command_of_the_page_runs(page, raw, tmp_path):
    (tmp_path / "shared").mkdir()
    (tmp_path / "shared" / "raw").symlink_to(raw.resolve(), target_is_directory=True)
    work = tmp_path / "work"
    work.mkdir()
    bin_dir = page_venv(tmp_path / "venv")
    site_packages = Path(sysconfig.get_paths()["purelib"])
    installed = sorted(site_packages.glob("*.dist-info")) + sorted(site_packages.glob("*.pth"))
    with LocalHub(token=TOKEN, max_seconds=1200, max_requests=20000) as hub:
        env = page_env(tmp_path, hub.url, bin_dir)
        for block in blocks(page):
            if block.skip:
                continue
            done = run_block(block, work, env, python=str(bin_dir / "python"))
            assert done.returncode == 0, (
                f"{block.where}: exit {done.returncode}\n--- block\n{block.script()}"
                f"--- stdout\n{done.stdout[-3000:]}\n--- stderr\n{done.stderr[-3000:]}")
    assert sorted(site_packages.glob("*.dist-info")) + sorted(site_packages.glob("*.pth")) == installed, \
        f"{page.name} installed into the test's environment ({site_packages}), not into its own venv"


LINK = re.compile(r"\]\(([^)#\s]+)(?:#[^)]*)?\)")


@pytest.mark.parametrize("page", ["README.md", "CONTRIBUTING.md", "benchmarks/README.md"])
def test_the_relative_links_of_the_pages_outside_the_site_resolve(page):
    """mkdocs checks docs/; these pages are read on GitHub, where a moved file is a dead link."""
    path = ROOT / page
    targets = [t for t in LINK.findall(path.read_text(encoding="utf-8")) if "://" not in t]
    missing = [t for t in targets if not (path.parent / t).exists()]
    assert targets or page != "README.md"
    assert not missing, f"{page}: links to missing files {missing}"


def test_the_site_builds_with_every_link_resolved(tmp_path):
    """``mkdocs build --strict``: a link to a page or anchor that does not exist fails."""
    if shutil.which("mkdocs", path=str(Path(sys.executable).parent)) is None:
        if os.environ.get("CI"):
            pytest.fail("CI: mkdocs is missing, but it is in the `docs` extra that `all` installs")
        pytest.skip("mkdocs is not installed (pip install -e '.[docs]')")
    done = subprocess.run([str(Path(sys.executable).parent / "mkdocs"), "build", "--strict",
                           "--site-dir", str(tmp_path / "site")],
                          check=False, cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-4000:]
    assert (tmp_path / "site" / "quickstart" / "index.html").is_file()
    api = (tmp_path / "site" / "api" / "index.html").read_text(encoding="utf-8")
    assert 'id="benchsmith.builder.Builder.measures"' in api, "the API reference lost its generated entries"


EXCERPT = re.compile(r"^```\n# (benchsmith-my-bench/\S+) .*?\n(.*?)^```", flags=re.DOTALL | re.MULTILINE)


def test_the_plugin_guides_excerpts_are_what_benchsmith_new_writes():
    """plugins.md shows parts of generated files in plain (not run) blocks: each line is in the file."""
    from benchsmith.scaffold import render

    files = render("my_bench")
    excerpts = EXCERPT.findall((ROOT / "docs" / "plugins.md").read_text(encoding="utf-8"))
    assert len(excerpts) >= 2
    for path, body in excerpts:
        generated = files[path.removeprefix("benchsmith-my-bench/")]
        stale = [line for line in body.splitlines() if line.strip() and line not in generated]
        assert not stale, f"docs/plugins.md: the excerpt of {path} has lines `benchsmith new` does not write: {stale}"
