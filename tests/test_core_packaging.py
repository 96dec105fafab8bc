"""The wheel installs benchsmith and its sub-packages outside the checkout, with every data file
(checksums, errata, card templates) the code reads at run time."""

from __future__ import annotations

import subprocess
import sys
import venv
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).parent.parent
SRC = ROOT / "src"


def expected_data_files() -> set[str]:
    out = set()
    for path in (SRC / "benchsmith").rglob("*"):
        rel = path.relative_to(SRC)
        if path.is_file() and path.suffix not in {".py", ".pyc"} and "__pycache__" not in rel.parts:
            out.add(rel.as_posix())
    return out


@pytest.mark.slow
def test_wheel_installs_every_package_and_data_file(tmp_path):
    wheels = tmp_path / "wheels"
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(wheels), str(ROOT)],
        check=True,
        cwd=tmp_path,
    )
    (wheel,) = wheels.glob("benchsmith-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    missing = expected_data_files() - names
    assert not missing, f"data files missing from the wheel: {sorted(missing)}"
    env_dir = tmp_path / "venv"
    venv.create(env_dir, with_pip=True)
    py = env_dir / "bin" / "python"
    subprocess.run([str(py), "-m", "pip", "install", "-q", "--no-deps", str(wheel)], check=True, cwd=tmp_path)
    # Run from an unrelated folder so ./benchsmith of the checkout cannot be found; print where each
    # package and the data files the builders read at run time were found.
    code = (
        "import benchsmith, benchsmith.builders, benchsmith.loaders, benchsmith.validation, benchsmith.cards, pathlib\n"
        "for m in (benchsmith, benchsmith.builders, benchsmith.loaders, benchsmith.validation, benchsmith.cards):\n"
        "    print(pathlib.Path(m.__file__).resolve())\n"
        "b = pathlib.Path(benchsmith.builders.__file__).parent\n"
        "for rel in ('xcopa/published.yaml', 'xcopa/errata.generated.tsv', 'comve/errata.generated.tsv', 'xcopa/errata.tsv', 'cognition/checksums.tsv'):\n"
        "    print((b / rel).resolve())\n"
        "print((pathlib.Path(benchsmith.cards.__file__).parent / 'templates' / 'dataset_card.md.j2').resolve())\n"
    )
    out = subprocess.run([str(py), "-c", code], check=True, cwd=tmp_path, capture_output=True, text=True).stdout
    paths = [Path(line) for line in out.split()]
    assert len(paths) == 11  # five packages, five data files, the card template
    site = next(env_dir.glob("lib/python*/site-packages")).resolve()
    for p in paths:
        assert p.is_relative_to(site), f"{p} was not imported from the installed wheel"
        assert not p.is_relative_to(ROOT), p
        assert p.is_file(), p
    assert [p.parent.name for p in paths[:5]] == ["benchsmith", "builders", "loaders", "validation", "cards"]
