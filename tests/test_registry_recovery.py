"""Recovery of interrupted commits touches only the registry's own staging (issue 43, row 6):
a folder it made holds ``registry.STAGING_MARK``; any other name is left alone (a pid no process
can have included), and a release path outside a registry recovers nothing beside it."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

import pytest
from conftest import run_cli
from test_core_seal import release, sealed, toy  # noqa: F401

from benchsmith import registry


@pytest.fixture(scope="module")
def dead_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def leftover(parent, name: str, *, ours: bool) -> object:
    folder = parent / name
    folder.mkdir()
    (folder / "kept.txt").write_text("someone's file")
    if ours:
        (folder / registry.STAGING_MARK).touch()
    return folder


@pytest.mark.parametrize("pid", [2**31, 2**63, 10**30])
def test_a_leftover_named_with_an_impossible_pid_is_ignored(release, capsys, pid):  # noqa: F811
    odd = leftover(release.path.parent, f".1.1.0.tmp-{pid}-x", ours=True)
    code, _, err = run_cli(capsys, "show", "toy/1.1.0", "--registry", str(release.path.parent.parent))
    assert code == 0 and "Traceback" not in err, err
    assert (odd / "kept.txt").is_file()


def test_recovery_touches_only_the_folders_the_registry_made(release, capsys, dead_pid):  # noqa: F811
    dataset = release.path.parent
    foreign = leftover(dataset, f".1.1.0.tmp-{dead_pid}-abc", ours=False)
    foreign_old = leftover(dataset, f".2.0.0.old-{dead_pid}", ours=False)
    staging = registry.make_staging(dataset, "1.1.0")  # a real staging folder, of a process now dead
    ours = staging.rename(dataset / staging.name.replace(f"-{os.getpid()}-", f"-{dead_pid}-"))
    ours_old = leftover(dataset, f".3.0.0.old-{dead_pid}", ours=True)
    code, _, err = run_cli(capsys, "show", "toy/1.1.0", "--registry", str(dataset.parent))
    assert code == 0, err
    assert (foreign / "kept.txt").is_file() and (foreign_old / "kept.txt").is_file()
    assert not (dataset / "2.0.0").exists()
    assert not ours.exists()
    assert (dataset / "3.0.0" / "kept.txt").is_file() and not (dataset / "3.0.0" / registry.STAGING_MARK).exists()
    assert not ours_old.exists()


def test_a_release_path_outside_a_registry_recovers_nothing_beside_it(sealed, tmp_path, toy, capsys,  # noqa: F811
                                                                      dead_pid):
    target = tmp_path / "download" / "toy" / "1.1.0"
    shutil.copytree(sealed, target)
    staging = leftover(target.parent, f".1.1.0.tmp-{dead_pid}-x", ours=True)  # even one that looks like ours
    old = leftover(target.parent, f".2.0.0.old-{dead_pid}", ours=True)
    code, _, err = run_cli(capsys, "show", str(target))
    assert code == 0, err
    assert (staging / "kept.txt").is_file() and (old / "kept.txt").is_file()
    assert not (target.parent / "2.0.0").exists()
