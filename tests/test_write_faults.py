"""Every file benchsmith writes, when the write fails, is one line naming that file, exit 3, and
nothing half-written: the temporary sibling is gone and the previous file is as it was.

The faults are real: ``RLIMIT_FSIZE`` (``ulimit -f``) set in this process makes the kernel fail
the write with EFBIG (Python ignores SIGXFSZ, so the write returns the error instead of the
process dying), and a tiny tmpfs gives a real ENOSPC where this user may mount one.
"""

from __future__ import annotations

import errno
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import run_cli
from process_helpers import file_size_limit
from test_core_seal import release, sealed, toy  # noqa: F401 - fixtures: the validated toy 1.1.0 in tmp_path/reg

from benchsmith.errors import EnvironmentFault
from benchsmith.registry import write_text_atomic
from benchsmith.source import Source, fetch


def leftovers(folder: Path) -> list[str]:
    """Temporary or staging files and folders under ``folder``."""
    return sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*")
                  if p.name.endswith(".tmp") or ".tmp-" in p.name or ".publish-" in p.name)


def one_line(err: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in err, err
    return lines[0]


def test_an_atomic_write_past_the_file_size_limit_names_the_file_and_keeps_the_old_one(tmp_path):
    path = tmp_path / "report.json"
    path.write_text("the previous report\n", encoding="utf-8")
    with file_size_limit(4096), pytest.raises(EnvironmentFault) as info:
        write_text_atomic(path, "x" * 10_000)
    fault = info.value
    assert fault.exit_code == 3 and fault.path == path and isinstance(fault.__cause__, OSError)
    assert fault.__cause__.errno == errno.EFBIG
    assert str(fault).startswith(f"{path}: cannot write: File too large (EFBIG). ") and "ulimit -f" in str(fault)
    assert path.read_text(encoding="utf-8") == "the previous report\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["report.json"]  # no temporary sibling left


def test_validate_that_cannot_write_its_report_names_it_and_keeps_the_previous_one(tmp_path, release, capsys):  # noqa: F811
    folder = release.path
    report = folder / "reports" / "validation.json"
    before = {p: p.read_bytes() for p in folder.rglob("*") if p.is_file()}
    assert report.stat().st_size > 4096
    with file_size_limit(4096):
        code, _out, err = run_cli(capsys, "-q", "validate", str(folder), "--near-dup-threshold", "0.95",
                                 "--baselines", "none", "--no-cache")
    line = one_line(err)
    assert code == 3 and f"{report}: cannot write: File too large (EFBIG)" in line, line
    assert {p: p.read_bytes() for p in folder.rglob("*") if p.is_file()} == before
    assert leftovers(tmp_path) == []


def test_publish_that_cannot_copy_names_the_version_and_leaves_no_copy(tmp_path, release, capsys):  # noqa: F811
    folder = release.path
    other = tmp_path / "other"
    biggest = max(p.stat().st_size for p in folder.rglob("*") if p.is_file())
    with file_size_limit(biggest // 2):
        code, _out, err = run_cli(capsys, "publish", str(folder), "--registry", str(other))
    line = one_line(err)
    target = other / "toy" / "1.1.0"
    assert code == 3 and f"{target}: cannot write: File too large (EFBIG)" in line, line
    assert not target.exists() and leftovers(other) == []
    assert not (other / "toy" / ".published").exists()


def test_publish_that_cannot_write_its_marker_names_it(tmp_path, release, capsys):  # noqa: F811
    folder = release.path
    marker = tmp_path / "reg" / "toy" / ".published" / "1.1.0.json"
    with file_size_limit(16):  # the release is in place already: only the marker is written
        code, _out, err = run_cli(capsys, "publish", str(folder), "--registry", str(tmp_path / "reg"))
    assert code == 3 and f"{marker}: cannot write: File too large (EFBIG)" in one_line(err)
    assert not marker.exists() and leftovers(tmp_path / "reg") == []


def test_new_that_cannot_write_names_the_package_folder_and_leaves_nothing(tmp_path, capsys):
    dest = tmp_path / "pkg"
    with file_size_limit(16):
        code, _out, err = run_cli(capsys, "new", "mydata", "--dir", str(dest))
    assert code == 3 and f"{dest}: cannot write: File too large (EFBIG)" in one_line(err)
    assert list(tmp_path.iterdir()) == []


def test_contamination_report_that_cannot_be_written_names_it(tmp_path, release, capsys):  # noqa: F811
    folder = release.path
    out_file = tmp_path / "contamination.json"
    out_file.write_text("{}\n", encoding="utf-8")
    with file_size_limit(64):
        code, _out, err = run_cli(capsys, "-q", "contamination", str(folder), "--against", str(folder),
                                 "--workers", "1", "--out", str(out_file))
    assert code == 3 and f"{out_file}: cannot write: File too large (EFBIG)" in one_line(err)
    assert out_file.read_text(encoding="utf-8") == "{}\n" and leftovers(tmp_path) == []


def test_a_download_that_cannot_be_stored_names_the_cache_folder_and_caches_nothing(tmp_path):
    plain = tmp_path / "corpus.txt"
    plain.write_text("a line of text\n" * 1000, encoding="utf-8")
    cache = tmp_path / "cache"
    with file_size_limit(4096), pytest.raises(EnvironmentFault) as info:
        fetch(Source("corpus", url=plain.as_uri()), cache)
    assert str(info.value).startswith(f"{cache / 'corpus'}: cannot write: File too large (EFBIG)")
    assert list(cache.iterdir()) == []  # no partial download is ever taken for the source


@pytest.fixture
def tiny_disk(tmp_path) -> Iterator[Path]:
    """A 64 KiB tmpfs: a real ENOSPC (needs a user allowed to mount; skipped elsewhere)."""
    mount = tmp_path / "tiny"
    mount.mkdir()
    try:
        done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(mount)],
                              capture_output=True, text=True, timeout=30, check=False)
    except OSError as exc:
        pytest.skip(f"cannot run mount: {exc}")
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.strip()}")
    try:
        yield mount
    finally:
        subprocess.run(["umount", str(mount)], check=True, timeout=30)


def test_a_full_disk_names_the_file_and_keeps_the_old_one(tiny_disk):
    path = tiny_disk / "README.md"
    path.write_text("the previous card\n", encoding="utf-8")
    with pytest.raises(EnvironmentFault) as info:
        write_text_atomic(path, "x" * 1_000_000)
    assert str(info.value).startswith(f"{path}: cannot write: No space left on device (ENOSPC). Free disk space")
    assert path.read_text(encoding="utf-8") == "the previous card\n"
    assert sorted(p.name for p in tiny_disk.iterdir()) == ["README.md"]
