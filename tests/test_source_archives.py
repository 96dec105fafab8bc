"""Downloaded archives (issue 12): a malicious, truncated or corrupt archive is a SourceError and is never cached.

Archives are built here with tarfile/zipfile and served from ``file://`` urls, as
``fetch`` serves any url; nothing touches the network.
"""

from __future__ import annotations

import io
import random
import tarfile
import zipfile
from pathlib import Path

import pytest
from conftest import run_cli
from toy_builder import FIXTURES, ToyBuilder

from benchsmith.builder import register, unregister
from benchsmith.errors import SourceError
from benchsmith.source import Source, fetch

ITEMS = (FIXTURES / "toy" / "items.tsv").read_bytes()


def member(name: str, kind: bytes = tarfile.REGTYPE, data: bytes = b"x", linkname: str = "") -> tuple:
    info = tarfile.TarInfo(name)
    info.type, info.linkname = kind, linkname
    info.size = len(data) if kind == tarfile.REGTYPE else 0
    return info, data if kind == tarfile.REGTYPE else None


def write_tar(path: Path, members: list[tuple], mode: str = "w:gz") -> Path:
    with tarfile.open(path, mode) as tf:
        for info, data in members:
            tf.addfile(info, io.BytesIO(data) if data is not None else None)
    return path


def cache_entries(cache: Path) -> list[str]:
    """What a failed fetch left in the cache (must be nothing: no source folder, no temporary one)."""
    return sorted(str(p.relative_to(cache)) for p in cache.rglob("*")) if cache.exists() else []


def fetch_fails(archive: Path, cache: Path, match: str) -> SourceError:
    with pytest.raises(SourceError, match=match) as exc:
        fetch(Source("toy", url=archive.as_uri(), files=("items.tsv",)), cache)
    assert "\n" not in str(exc.value)
    assert cache_entries(cache) == []
    return exc.value


# ----------------------------------------------------------------------------- good archives still work


@pytest.mark.parametrize("suffix", [".tar", ".tar.gz", ".tgz", ".tar.bz2", ".tar.xz", ".zip"])
def test_good_archives_are_extracted(tmp_path, suffix):
    archive = tmp_path / f"toy-1.0{suffix}"
    if suffix == ".zip":
        with zipfile.ZipFile(archive, "w") as zf:
            zf.writestr("toy-1.0/items.tsv", ITEMS)
    else:
        mode = {".tar": "w", ".tar.gz": "w:gz", ".tgz": "w:gz", ".tar.bz2": "w:bz2", ".tar.xz": "w:xz"}[suffix]
        write_tar(archive, [member("toy-1.0", tarfile.DIRTYPE), member("toy-1.0/items.tsv", data=ITEMS),
                            member("toy-1.0/latest", tarfile.SYMTYPE, linkname="items.tsv")], mode)
    root = fetch(Source("toy", url=archive.as_uri(), files=("items.tsv",), archive_root="toy-1.0"), tmp_path / "c")
    assert (root / "items.tsv").read_bytes() == ITEMS


def test_plain_files_are_stored_as_they_are(tmp_path):
    import gzip

    plain = tmp_path / "corpus.en.gz"  # a gzip that is not a tar is a data file, not an archive
    plain.write_bytes(gzip.compress(b"one\ntwo\n"))
    root = fetch(Source("corpus", url=plain.as_uri()), tmp_path / "c")
    assert (root / "corpus.en.gz").read_bytes() == plain.read_bytes()


# ----------------------------------------------------------------------------- malicious tar entries


@pytest.mark.parametrize(
    "entry, words",
    [
        (member("/etc/benchsmith-evil"), "is an absolute path"),  # the data filter would strip the "/" silently
        (member("../benchsmith-evil"), "has a '..' component"),
        (member("toy/../../benchsmith-evil"), "has a '..' component"),
        (member("link", tarfile.SYMTYPE, linkname="/etc/passwd"), "is a link to an absolute path"),
        (member("link", tarfile.SYMTYPE, linkname="../../outside"), "outside the destination"),
        (member("hard", tarfile.LNKTYPE, linkname="../../outside"), "outside the destination"),
        (member("dev", tarfile.CHRTYPE), "is a special file"),
        (member("blk", tarfile.BLKTYPE), "is a special file"),
        (member("fifo", tarfile.FIFOTYPE), "is a special file"),
    ],
)
def test_malicious_tar_entries_are_source_errors(tmp_path, entry, words):
    # before: tarfile.FilterError subclasses escaped as raw exceptions, and the absolute name was extracted
    archive = write_tar(tmp_path / "evil.tar.gz", [member("items.tsv", data=ITEMS), entry])
    err = fetch_fails(archive, tmp_path / "cache", "unsafe member")
    assert words in str(err) and str(archive.as_uri()) in str(err)
    assert not (tmp_path / "benchsmith-evil").exists() and not (tmp_path / "outside").exists()


@pytest.mark.parametrize("name, words", [("/etc/benchsmith-evil", "is an absolute path"),
                                         ("../benchsmith-evil", "has a '..' component")])
def test_malicious_zip_entries_are_source_errors(tmp_path, name, words):
    archive = tmp_path / "evil.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        zf.writestr("items.tsv", ITEMS)
        zf.writestr(zipfile.ZipInfo(name), b"x")  # before: zipfile rewrote the name and extracted it
    err = fetch_fails(archive, tmp_path / "cache", "member")
    assert words in str(err)


# ----------------------------------------------------------------------------- truncated and corrupt archives


def _big_tar_gz(path: Path) -> Path:
    payload = random.Random(0).randbytes(200_000)  # incompressible: a cut file is a cut stream
    return write_tar(path, [member("items.tsv", data=ITEMS), member("big.bin", data=payload)])


@pytest.mark.parametrize("keep", [0.5, 0.98, 30])
def test_truncated_tar_gz_is_a_source_error(tmp_path, keep):
    archive = _big_tar_gz(tmp_path / "toy.tar.gz")
    data = archive.read_bytes()
    archive.write_bytes(data[: int(len(data) * keep)] if keep < 1 else data[:keep])
    # before: EOFError ("Compressed file ended before the end-of-stream marker was reached")
    fetch_fails(archive, tmp_path / "cache", r"is truncated or corrupt \(EOFError")


def test_truncated_tar_gz_through_the_cli_is_exit_2_not_aborted(tmp_path, capsys, monkeypatch):
    # click turns an EOFError raised inside a command into Abort: the CLI said "aborted" and exited 130
    archive = _big_tar_gz(tmp_path / "toy.tar.gz")
    archive.write_bytes(archive.read_bytes()[:30_000])
    monkeypatch.setenv("BENCHSMITH_HOME", str(tmp_path / "home"))

    class DownloadedToy(ToyBuilder):
        name = "toy-download"
        sources = (Source("toy", url=archive.as_uri(), license="CC0-1.0", files=("items.tsv",)),)

    register(DownloadedToy)
    try:
        code, _, err = run_cli(capsys, "--quiet", "build", "toy-download", "--registry", str(tmp_path / "reg"))
    finally:
        unregister("toy-download")
    assert code == 2, err
    assert err.startswith("error: archive source 'toy' from file://") and "truncated or corrupt" in err
    assert "aborted" not in err and len(err.strip().splitlines()) == 1
    assert cache_entries(tmp_path / "home" / "downloads") == []


@pytest.mark.parametrize("name", ["toy.zip", "toy-download"])  # the zip signature betrays it without a suffix
def test_truncated_zip_is_a_source_error_and_is_not_cached(tmp_path, name):
    archive = tmp_path / name
    with zipfile.ZipFile(archive, "w") as zf:
        zf.writestr("items.tsv", ITEMS)
    archive.write_bytes(archive.read_bytes()[:-30])  # the central directory is cut off
    # before: not recognised as a zip, cached as a plain file and reused by every later build
    fetch_fails(archive, tmp_path / "cache", r"is truncated or corrupt \(BadZipFile")


def test_corrupt_zip_member_is_a_source_error(tmp_path):
    archive = tmp_path / "toy.zip"
    with zipfile.ZipFile(archive, "w", compression=zipfile.ZIP_STORED) as zf:
        zf.writestr("items.tsv", ITEMS)
    archive.write_bytes(archive.read_bytes().replace(ITEMS[:20], b"X" * 20, 1))  # CRC no longer matches
    fetch_fails(archive, tmp_path / "cache", r"truncated or corrupt \(BadZipFile: Bad CRC-32")


def test_extract_archive_directly(tmp_path):
    from benchsmith.source import extract_archive

    archive = write_tar(tmp_path / "ok.tgz", [member("a/items.tsv", data=ITEMS)])
    extract_archive(archive, tmp_path / "out")
    assert (tmp_path / "out" / "a" / "items.tsv").read_bytes() == ITEMS
    not_archive = tmp_path / "notes.txt"
    not_archive.write_text("hello", encoding="utf-8")
    with pytest.raises(SourceError, match="is not a zip or tar archive"):
        extract_archive(not_archive, tmp_path / "out2")
    evil = write_tar(tmp_path / "evil.tar", [member("../x")], "w")
    with pytest.raises(SourceError, match=r"evil\.tar: unsafe member \(member '\.\./x' has a '\.\.' component\)"):
        extract_archive(evil, tmp_path / "out3")
