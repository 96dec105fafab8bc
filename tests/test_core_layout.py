"""The architecture holds: no import cycles, and the core never reaches into a dataset.

The import graph is read with ``ast`` from ``src/benchsmith``. Every import counts, including
those inside functions (a lazy import that papers over a cycle is still a cycle);
imports under ``if TYPE_CHECKING:`` do not. Both properties are shown failing on a
planted example, so the tests cannot pass by reading nothing. The repository's graph is read
once per test process (``repo_graph``) and shared by the tests that read it.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent / "src"
FOLDERS = {"benchsmith": "benchsmith"}
#: packages that must stay dataset-agnostic
CORE = ("benchsmith", "benchsmith.validation", "benchsmith.cards", "benchsmith.nlp")


def modules(root: Path = ROOT, folders: dict[str, str] = FOLDERS) -> dict[str, Path]:
    out = {}
    for folder, package in folders.items():
        for path in (root / folder).rglob("*.py"):
            parts = list(path.relative_to(root / folder).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts = parts[:-1]
            out[".".join([package, *parts])] = path
    return out


def imports(name: str, path: Path, known: set[str]) -> set[str]:
    """Modules of ``known`` that ``name`` imports anywhere in its body (not under TYPE_CHECKING)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()

    def visit(node: ast.AST) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and "TYPE_CHECKING" in ast.unparse(child.test):
                continue
            if isinstance(child, ast.Import):
                found.update(a.name for a in child.names)
            elif isinstance(child, ast.ImportFrom):
                base = child.module or ""
                if child.level:
                    anchor = package
                    for _ in range(child.level - 1):
                        anchor = anchor.rpartition(".")[0]
                    base = f"{anchor}.{base}" if base else anchor
                found.add(base)
                found.update(f"{base}.{a.name}" for a in child.names)
            visit(child)

    visit(tree)
    out = set()
    for target in found:
        while target and target not in known:
            target = target.rpartition(".")[0]
        if target and target != name:
            out.add(target)
    return out


def graph(mods: dict[str, Path]) -> dict[str, set[str]]:
    known = set(mods)
    return {name: imports(name, path, known) for name, path in mods.items()}


def cycles(g: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: list[list[str]] = []
    counter = 0

    def strong(v: str) -> None:
        nonlocal counter
        index[v] = low[v] = counter
        counter += 1
        stack.append(v)
        on_stack.add(v)
        for w in g[v]:
            if w not in index:
                strong(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(g):
        if v not in index:
            strong(v)
    return out


def core_reaching_into_builders(g: dict[str, set[str]]) -> dict[str, list[str]]:
    def is_core(m: str) -> bool:
        return m == "benchsmith" or (m.startswith("benchsmith.") and not m.startswith(
            ("benchsmith.builders", "benchsmith.loaders")))

    # discovery imports the namespace package benchsmith.builders itself; a *builder* is a package in it
    return {m: sorted(d for d in deps if d.startswith("benchsmith.builders."))
            for m, deps in g.items() if is_core(m) and any(d.startswith("benchsmith.builders.") for d in deps)}


@pytest.fixture(scope="module")
def repo_graph() -> dict[str, set[str]]:
    """The repository's import graph; a test reads it and never changes it."""
    return graph(modules())


def test_no_import_cycles(repo_graph):
    assert cycles(repo_graph) == []


def test_core_never_imports_a_builder(repo_graph):
    assert core_reaching_into_builders(repo_graph) == {}


def test_the_checks_fail_on_planted_examples(tmp_path):
    pkg = tmp_path / "benchsmith"
    (pkg / "validation").mkdir(parents=True)
    (pkg / "builders" / "toy").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "a.py").write_text("def f():\n    from benchsmith import b\n")  # lazy, still a cycle
    (pkg / "b.py").write_text("from benchsmith.a import f\n")
    (pkg / "validation" / "__init__.py").write_text("")
    (pkg / "validation" / "c.py").write_text("from benchsmith.builders.toy import X\n")
    (pkg / "typed.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from benchsmith import a\n")
    (pkg / "builders" / "__init__.py").write_text("")
    (pkg / "builders" / "toy" / "__init__.py").write_text("X = 1\n")
    g = graph(modules(tmp_path))
    assert cycles(g) == [["benchsmith.a", "benchsmith.b"]]
    assert core_reaching_into_builders(g) == {"benchsmith.validation.c": ["benchsmith.builders.toy"]}
    assert g["benchsmith.typed"] == set()


@pytest.mark.parametrize("module", ["benchsmith.registry", "benchsmith.release", "benchsmith.validation.report",
                                    "benchsmith.validation.runner", "benchsmith.cards.card"])
def test_library_modules_do_not_import_cli_modules(module, repo_graph):
    cli = {m for m in repo_graph if m.endswith(".cli") or m.startswith("benchsmith.cli.")}
    assert repo_graph[module] & cli == set()
