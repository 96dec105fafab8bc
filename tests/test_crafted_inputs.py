"""Crafted input is a typed one-line error, never a traceback: a 5,000-digit version part, a file
name that is not UTF-8, folders nested deeper than a release is (1,000 deep exhausted the stack;
the walk stops at :data:`benchsmith.seal.MAX_DEPTH`, so 100 levels show it without leaving a tree
that pytest's own clean-up cannot remove)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from conftest import run_cli

from benchsmith.errors import ConfigError, ReleaseError
from benchsmith.seal import MAX_DEPTH, walk
from benchsmith.semver import parse_version


@pytest.mark.parametrize("version", ["1.0." + "9" * 5000, "1.\u0661.0", "1.0.0." + "1" * 20])
def test_a_version_python_cannot_hold_is_a_config_error(version):
    with pytest.raises(ConfigError) as exc:
        parse_version(version)
    assert "is not semantic" in str(exc.value) and len(str(exc.value)) < 300


def test_a_file_name_that_is_not_utf8_is_a_release_error(tmp_path):
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "ok.parquet").write_bytes(b"x")
    with open(os.path.join(os.fsencode(tmp_path / "data"), b"bad\xff.parquet"), "wb") as fh:
        fh.write(b"x")
    with pytest.raises(ReleaseError, match=r"b'data/bad\\xff.parquet' has a name that is not UTF-8"):
        list(walk(tmp_path))


def test_folders_nested_too_deep_are_a_release_error(tmp_path, capsys):
    deep = Path(tmp_path)
    fd = os.open(tmp_path, os.O_RDONLY)
    try:  # made relative to the last level (an absolute path would outgrow PATH_MAX sooner)
        for _ in range(100):
            os.mkdir("d", dir_fd=fd)
            nfd = os.open("d", os.O_RDONLY, dir_fd=fd)
            os.close(fd)
            fd = nfd
    finally:
        os.close(fd)
    with pytest.raises(ReleaseError, match=f"nested more than {MAX_DEPTH} folders deep"):
        list(walk(deep))
    code, _, err = run_cli(capsys, "validate", str(tmp_path))
    assert code == 2 and "Traceback" not in err and len(err.strip().splitlines()) == 1, err
