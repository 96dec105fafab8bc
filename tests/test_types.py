"""Plain ``mypy`` from the repository root is clean (``[tool.mypy]`` in pyproject.toml names
what it checks: the core, loaders, validation and cards; builders are followed where they are
called, their own errors not reported yet).

A cold cache costs about a minute of CPU (mypy reads torch's and transformers' types), so the
check is in the slow run; the typed-``release`` check below stays in the default run.
"""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "src" / "benchsmith"


@pytest.mark.slow
def test_plain_mypy_is_clean():
    pytest.importorskip("mypy", reason="mypy is in the dev extra: pip install -e '.[dev]'")
    out = subprocess.run([sys.executable, "-m", "mypy"], cwd=ROOT, capture_output=True, text=True, check=False)
    assert out.returncode == 0, (out.stdout + out.stderr)[-6000:]
    assert "Success: no issues found" in out.stdout


def test_no_public_release_parameter_is_any():
    """A ``release`` parameter is typed ``Release`` (mypy checks the rest)."""
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        if not re.search(r"\brelease\s*:\s*Any\b", text):  # parse only the candidates
            continue
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                for a in (*node.args.posonlyargs, *node.args.args, *node.args.kwonlyargs):
                    if a.arg == "release" and a.annotation is not None and ast.unparse(a.annotation) == "Any":
                        found.append(f"{path.relative_to(ROOT)}:{node.lineno} {node.name}")
    assert found == []
