"""Registered fingerprints (``builders/<name>/fingerprints.tsv``): a released version's content
never changes, and every OSError is an EnvironmentFault.

The toy tests register the toy fixture's checksums in a temporary builder home, so its sources
are "verified" as real data is. The real-data tests build every registered version of XCOPA and
ComVE from ``$BENCHSMITH_RAW`` (all four datasets in the slow run) and compare with the
committed ``fingerprints.tsv``; the tamper and round-trip tests work on a copy of it.
"""

from __future__ import annotations

import errno
import json
import os
import resource
import shutil
import signal
import subprocess
import sys
from pathlib import Path
from typing import ClassVar

import pytest
from conftest import run_cli
from toy_builder import FIXTURES, ToyBuilder

from benchsmith import fingerprint_registry as fr
from benchsmith.builder import get_builder, register, unregister
from benchsmith.errors import EnvironmentFault, ReleaseError, VersionChangedError
from benchsmith.release import Release, ReleaseWriter
from benchsmith.source import resolve_sources, verify_source

TOY_DATA = FIXTURES / "_builder"


# ----------------------------------------------------------------------------- the file


def test_reading_a_missing_file_is_nothing_registered(tmp_path):
    assert fr.read_fingerprints(tmp_path / "fingerprints.tsv") == {}


@pytest.mark.parametrize(("text", "line", "what"), [
    ("version\tconfig\tfingerprint\n", 1, "header"),
    ("version\tconfig\tsplit\tfingerprint\n1.0.0\tplain\ttrain\tabc\n", 2, "malformed"),
    ("version\tconfig\tsplit\tfingerprint\n1.0\tplain\ttrain\t" + "a" * 64 + "\n", 2, "malformed"),
    ("version\tconfig\tsplit\tfingerprint\n1.0.0\tplain\ttrain\t" + "A" * 64 + "\n", 2, "malformed"),
    ("version\tconfig\tsplit\tfingerprint\n1.0.0\tplain\ttrain\t" + "a" * 64 + "\n1.0.0\tplain\ttrain\t"
     + "b" * 64 + "\n", 3, r"registered twice \(first on line 2\)"),
])
def test_a_bad_file_is_a_typed_error_naming_its_line(tmp_path, text, line, what):
    path = tmp_path / "toy" / "fingerprints.tsv"
    path.parent.mkdir()
    path.write_text(text)
    with pytest.raises(ReleaseError, match=what) as info:
        fr.read_fingerprints(path)
    assert info.value.path == path and info.value.line == line
    assert "--register-fingerprints" in str(info.value)


def test_rows_are_sorted_by_semver_then_config_then_split():
    fp = "0" * 64
    text = fr.render([("1.10.0", "b", "test", fp), ("1.9.0", "b", "train", fp), ("1.9.0", "a", "x", fp)])
    assert [line.split("\t")[:3] for line in text.splitlines()] == [
        ["version", "config", "split"], ["1.9.0", "a", "x"], ["1.9.0", "b", "train"], ["1.10.0", "b", "test"]]


# ----------------------------------------------------------------------------- the toy


class HomedToy(ToyBuilder):
    """The toy with its data files in a temporary folder (``home``), its checksums registered."""

    home: ClassVar[Path]

    @classmethod
    def data_path(cls, filename: str) -> Path:
        return cls.home / filename


@pytest.fixture
def toy(tmp_path, monkeypatch):
    home = tmp_path / "builder"
    shutil.copytree(TOY_DATA, home)
    b = ToyBuilder()
    checksum = verify_source(b.sources[0], FIXTURES / "toy", {}, allow_missing=True)
    (home / "checksums.tsv").write_text("source\tpath\tsize\tsha256\n" + "".join(
        f"toy\t{r.path}\t{r.size}\t{r.sha256}\n" for r in checksum.records.values() if r.sha256))
    monkeypatch.setattr(HomedToy, "home", home, raising=False)
    register(HomedToy)
    yield HomedToy
    unregister("toy")


def write(reg: Path, *, version: str = "1.1.0", configs=None, register_fps: bool = False, overwrite: bool = False,
          verified: bool = True) -> ReleaseWriter:
    b = HomedToy(version)
    srcs = resolve_sources(b.sources, b.checksums() if verified else {}, FIXTURES)
    writer = ReleaseWriter(b, reg, srcs, configs=configs, register_fingerprints=register_fps, overwrite=overwrite)
    writer.write()
    return writer


def hidden(reg: Path) -> list[str]:
    return sorted(p.name for p in (reg / "toy").iterdir() if p.name.startswith("."))


def test_an_unregistered_version_builds_with_a_note(tmp_path, toy):
    writer = write(tmp_path / "reg")
    assert writer.fingerprint_outcome.status == "not-registered"
    assert "--register-fingerprints" in writer.fingerprint_outcome.note


def test_register_then_rebuild_matches_and_a_changed_row_fails_before_the_commit(tmp_path, toy):
    reg = tmp_path / "reg"
    writer = write(reg, register_fps=True)
    assert writer.fingerprint_outcome.status == "registered"
    tsv = toy.home / "fingerprints.tsv"
    built = Release(reg / "toy" / "1.1.0").fingerprints()
    rows = fr.read_fingerprints(tsv)
    assert {(c, s): fp for (_, c, s), (fp, _) in rows.items()} == {
        (c, s): fp for c, splits in built.items() for s, fp in splits.items()}
    assert write(reg, overwrite=True).fingerprint_outcome.status == "match"
    # one registered fingerprint changed: the rebuild fails, naming the line, config and split
    before = (reg / "toy" / "1.1.0" / "release.json").read_bytes()
    text = tsv.read_text()
    line = next(n for n, row in enumerate(text.splitlines(), 1) if row.startswith("1.1.0\tplain\ttest\t"))
    tsv.write_text(text.replace(f"1.1.0\tplain\ttest\t{built['plain']['test']}", "1.1.0\tplain\ttest\t" + "0" * 64))
    with pytest.raises(VersionChangedError) as info:
        write(reg, overwrite=True)
    err = info.value
    assert (err.config, err.split, err.path, err.line) == ("plain", "test", tsv, line)
    assert "config 'plain' split 'test'" in str(err) and "bump the version" in str(err)
    assert err.exit_code == 2
    # nothing replaced, no staging left
    assert (reg / "toy" / "1.1.0" / "release.json").read_bytes() == before
    assert hidden(reg) == []


def test_a_missing_or_extra_split_is_a_change(tmp_path, toy):
    reg = tmp_path / "reg"
    write(reg, register_fps=True)
    tsv = toy.home / "fingerprints.tsv"
    original = tsv.read_text()
    tsv.write_text(original + "1.1.0\tplain\textra\t" + "1" * 64 + "\n")  # registered, not built
    with pytest.raises(VersionChangedError, match="'extra' .* was not built") as info:
        write(reg, overwrite=True)
    assert info.value.split == "extra"
    tsv.write_text("".join(r + "\n" for r in original.splitlines() if "\tshort\t" not in r))  # built, not registered
    with pytest.raises(VersionChangedError, match="config 'short' split 'train' is not registered"):
        write(reg, overwrite=True)


def test_a_partial_build_compares_the_splits_it_has(tmp_path, toy):
    reg = tmp_path / "reg"
    write(reg, register_fps=True)
    tsv = toy.home / "fingerprints.tsv"
    text = tsv.read_text()
    short = next(r for r in text.splitlines() if r.startswith("1.1.0\tshort\t"))
    tsv.write_text(text.replace(short, short.rsplit("\t", 1)[0] + "\t" + "0" * 64))
    writer = write(reg, configs=["plain"], overwrite=True)  # `short` not built: its changed row not compared
    assert writer.fingerprint_outcome.status == "match"
    assert sorted(writer.fingerprint_outcome.compared) == ["plain/test", "plain/train", "plain/validation"]
    with pytest.raises(VersionChangedError, match="'short'"):
        write(reg, configs=["short"], overwrite=True)


def test_register_keeps_other_versions_and_a_partial_register_keeps_other_splits(tmp_path, toy):
    reg = tmp_path / "reg"
    write(reg, version="1.0.0", register_fps=True)
    write(reg, version="1.1.0", register_fps=True)
    tsv = toy.home / "fingerprints.tsv"
    both = tsv.read_text()
    versions = {k[0] for k in fr.read_fingerprints(tsv)}
    assert versions == {"1.0.0", "1.1.0"}
    assert both == fr.render((*k, fp) for k, (fp, _) in fr.read_fingerprints(tsv).items())  # sorted on disk
    # 1.0.0 and 1.1.0 differ (erratum drop-30): their plain/test fingerprints differ
    rows = fr.read_fingerprints(tsv)
    assert rows[("1.0.0", "plain", "test")][0] != rows[("1.1.0", "plain", "test")][0]
    # re-registering 1.1.0's `plain` alone keeps `short` and every 1.0.0 row: same file, byte for byte
    writer = write(reg, version="1.1.0", configs=["plain"], register_fps=True, overwrite=True)
    assert tsv.read_text() == both
    assert "replace" not in writer.fingerprint_outcome.note
    assert [p.name for p in toy.home.iterdir() if p.name.startswith(".")] == []  # no temporary file left


def test_register_refuses_unregistered_sources_and_they_are_not_compared(tmp_path, toy):
    reg = tmp_path / "reg"
    with pytest.raises(ReleaseError, match="no registered sha256"):
        write(reg, register_fps=True, verified=False)
    assert not (toy.home / "fingerprints.tsv").exists() and not (reg / "toy" / "1.1.0").exists()
    write(reg, register_fps=True)
    tsv = toy.home / "fingerprints.tsv"
    tsv.write_text(_tamper(tsv.read_text(), "plain", "train"))  # would fail a build from the registered sources
    writer = write(reg, overwrite=True, verified=False)
    assert writer.fingerprint_outcome.status == "not-compared" and "toy/items.tsv" in writer.fingerprint_outcome.note


def test_a_non_reproducible_builder_is_never_registered(tmp_path, toy, monkeypatch):
    monkeypatch.setattr(HomedToy, "reproducible", False)
    with pytest.raises(ReleaseError, match="reproducible = False"):
        write(tmp_path / "reg", register_fps=True)
    assert write(tmp_path / "reg").fingerprint_outcome.status == "not-compared"


def test_cli_register_round_trip_and_refusal(tmp_path, toy, capsys):
    reg = tmp_path / "reg"
    args = ["build", "toy", "--sources", str(FIXTURES), "--registry", str(reg)]
    code, out, err = run_cli(capsys, *args, "--register-fingerprints", "--json")
    assert code == 0, err
    assert json.loads(out)["registered_fingerprints"]["status"] == "registered"
    code, out, err = run_cli(capsys, *args, "--overwrite", "--json")
    assert code == 0, err
    assert json.loads(out)["registered_fingerprints"] == {
        "status": "match", "note": "4 split fingerprints match fingerprints.tsv", "compared": 4}
    tsv = toy.home / "fingerprints.tsv"
    tsv.write_text(_tamper(tsv.read_text(), "short", "train"))
    before = Release(reg / "toy" / "1.1.0").fingerprints()
    code, out, err = run_cli(capsys, *args, "--overwrite")
    assert code == 2 and out == ""
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"error: {tsv}:")
    assert "config 'short' split 'train'" in err and "--register-fingerprints --overwrite" in err
    assert Release(reg / "toy" / "1.1.0").fingerprints() == before and hidden(reg) == []


def _tamper(text: str, config: str, split: str) -> str:
    """``text`` with the fingerprint of ``config``/``split`` (every version) replaced by another."""
    out = []
    for row in text.splitlines():
        cells = row.split("\t")
        if cells[1:3] == [config, split]:
            cells[3] = ("1" if cells[3][0] == "0" else "0") + cells[3][1:]
        out.append("\t".join(cells))
    return "\n".join(out) + "\n"


# ----------------------------------------------------------------------------- real data


def registered_versions(name: str) -> list[str]:
    b = get_builder(name)
    return sorted({v for v, _, _ in fr.read_fingerprints(b.data_path(fr.FILENAME))})


def build_real(name: str, version: str, raw: Path, reg: Path, **kw) -> ReleaseWriter:
    b = get_builder(name, version)
    skip = name == "cognition"  # the shared raw data has no train files (see its README)
    srcs = resolve_sources(b.sources, b.checksums(), raw, allow_missing=skip)
    writer = ReleaseWriter(b, reg, srcs, skip_missing=skip, **kw)
    writer.write()
    return writer


def _assert_matches(name: str, version: str, raw: Path, reg: Path) -> None:
    writer = build_real(name, version, raw, reg)
    rows = {(c, s): fp for (v, c, s), (fp, _) in
            fr.read_fingerprints(get_builder(name).data_path(fr.FILENAME)).items() if v == version}
    built = Release(reg / name / version).fingerprints()
    assert writer.fingerprint_outcome.status == "match"
    assert {(c, s): fp for c, splits in built.items() for s, fp in splits.items()} == rows


# The current version of each in the default run, on the real builds the other modules read
# (tests/conftest.py: real_xcopa, real_comve; their writer ran the same guard, which raises on a
# difference), the guard's outcome recomputed here; 1.0.0 (a build each, ~2 CPU s) in the slow
# run, beside the test below that rebuilds every version of every dataset
@pytest.mark.realdata
@pytest.mark.parametrize(("name", "version"), [
    pytest.param(n, v, marks=[pytest.mark.slow] if v == "1.0.0" else [])
    for n, versions in (("xcopa", ("1.0.0", "1.1.0", "1.2.0")), ("comve", ("1.0.0", "1.1.0"))) for v in versions])
def test_every_registered_version_of_xcopa_and_comve_rebuilds_identically(raw, tmp_path, request, name,
                                                                         version):
    assert version in registered_versions(name)
    if version != {"xcopa": "1.2.0", "comve": "1.1.0"}[name]:  # not the current version: built here
        _assert_matches(name, version, raw, tmp_path / "reg")
        return
    shared = {"xcopa": "real_xcopa", "comve": "real_comve"}[name]
    release = request.getfixturevalue(shared) if name == "xcopa" else request.getfixturevalue(shared)["1.1.0"]
    assert release.version == version
    b = get_builder(name, version)
    built = release.fingerprints()
    outcome = fr.check(b, built, resolve_sources(b.sources, b.checksums(), raw), selected=built, skipped=())
    assert outcome.status == "match" and len(outcome.compared) == sum(map(len, built.values()))
    registered = fr.read_fingerprints(b.data_path(fr.FILENAME))
    rows = {(c, s): fp for (v, c, s), (fp, _) in registered.items() if v == version}
    assert rows and {(c, s): fp for c, splits in built.items() for s, fp in splits.items()} == rows


@pytest.mark.realdata
@pytest.mark.slow
@pytest.mark.parametrize("name", ["xcopa", "comve", "cognition", "mucow"])
def test_every_registered_version_of_every_dataset_rebuilds_identically(raw, tmp_path, name):
    versions = registered_versions(name)
    assert versions == get_builder(name).versions()  # every declared version is registered
    for version in versions:
        _assert_matches(name, version, raw, tmp_path / "reg")


@pytest.fixture
def xcopa_copy(tmp_path, monkeypatch):
    """XCOPA with its fingerprints.tsv replaced by a copy in ``tmp_path`` (other data files as committed)."""
    from benchsmith.builders.xcopa import Xcopa

    real = Xcopa.data_path
    copy = tmp_path / "fingerprints.tsv"
    shutil.copyfile(real.__func__(Xcopa, fr.FILENAME), copy)
    monkeypatch.setattr(Xcopa, "data_path", classmethod(
        lambda cls, filename: copy if filename == fr.FILENAME else real.__func__(cls, filename)))
    return copy


@pytest.mark.realdata
def test_a_tampered_registered_fingerprint_fails_the_real_build_and_commits_nothing(raw, tmp_path, xcopa_copy,
                                                                                   capsys):
    xcopa_copy.write_text(_tamper(xcopa_copy.read_text(), "et", "test"))
    reg = tmp_path / "reg"
    code, out, err = run_cli(capsys, "-q", "build", "xcopa", "--sources", str(raw), "--registry", str(reg))
    assert code == 2 and out == ""
    assert len(err.strip().splitlines()) == 1
    assert "xcopa 1.2.0" in err and "config 'et' split 'test'" in err and "bump the version" in err
    assert not (reg / "xcopa" / "1.2.0").exists()
    assert [p.name for p in (reg / "xcopa").iterdir()] == []  # no staging folder left


@pytest.mark.realdata
def test_register_fingerprints_reproduces_the_committed_rows(raw, tmp_path, xcopa_copy, capsys):
    committed = xcopa_copy.read_text()
    xcopa_copy.write_text("".join(r + "\n" for r in committed.splitlines() if not r.startswith("1.2.0\t")))
    code, out, err = run_cli(capsys, "-q", "build", "xcopa", "--sources", str(raw), "--registry",
                             str(tmp_path / "reg"), "--register-fingerprints", "--json")
    assert code == 0, err
    assert json.loads(out)["registered_fingerprints"]["status"] == "registered"
    assert xcopa_copy.read_text() == committed  # deterministic: the same bytes as the committed file


# ----------------------------------------------------------------------------- OSError -> exit 3


@pytest.mark.parametrize("name", ["EFBIG", "EMFILE", "ENFILE", "EIO", "ENOMEM", "ENOSPC", "EDQUOT", "EROFS"])
def test_every_environment_errno_has_its_hint(name):
    code = getattr(errno, name)
    fault = EnvironmentFault.of(OSError(code, os.strerror(code), "/some/file"))
    assert fault.exit_code == 3 and f"({name})" in str(fault) and str(fault).startswith("/some/file: ")
    assert fault.hint == EnvironmentFault.HINTS[name]


def test_any_other_oserror_is_a_generic_fault_naming_the_path():
    fault = EnvironmentFault.of(FileNotFoundError(errno.ENOENT, "No such file or directory", "/gone"))
    assert fault.exit_code == 3 and str(fault).startswith("/gone: No such file or directory (ENOENT). ")
    assert fault.hint == EnvironmentFault.GENERIC_HINT
    assert EnvironmentFault.of(OSError("odd"), where="/reg/x/1.0.0").path == Path("/reg/x/1.0.0")
    assert str(EnvironmentFault.of(ConnectionResetError())).startswith("ConnectionResetError. ")


@pytest.mark.parametrize(("code", "expected"), [(errno.EMFILE, "Too many open files (EMFILE)"),
                                                (errno.ENOENT, "(ENOENT)")])
def test_cli_turns_an_injected_oserror_into_one_line_exit_3(tmp_path, toy, capsys, monkeypatch, code, expected):
    import pyarrow.parquet as pq

    def fail(self, *args, **kwargs):
        raise OSError(code, os.strerror(code))

    monkeypatch.setattr(pq.ParquetWriter, "write_batch", fail)
    reg = tmp_path / "reg"
    rc, out, err = run_cli(capsys, "build", "toy", "--sources", str(FIXTURES), "--registry", str(reg))
    assert rc == 3 and out == "" and "Traceback" not in err
    assert err.strip().splitlines() == [err.strip()] and expected in err
    assert str(reg / "toy" / "1.1.0") in err  # the error named no file: the release being written is named
    assert not (reg / "toy" / "1.1.0").exists() and hidden(reg) == []


def _limit_file_size() -> None:
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # as Python itself does: the write fails with EFBIG
    resource.setrlimit(resource.RLIMIT_FSIZE, (50 * 1024, 50 * 1024))  # `ulimit -f 50`


@pytest.mark.realdata
def test_ulimit_f_on_a_real_build_is_exit_3_one_line_and_nothing_half_written(raw, tmp_path):
    reg = tmp_path / "reg"
    env = {**os.environ, "BENCHSMITH_HOME": str(tmp_path / "home")}
    proc = subprocess.run([sys.executable, "-m", "benchsmith.cli", "build", "xcopa", "--sources", str(raw),
                           "--registry", str(reg)], check=False, preexec_fn=_limit_file_size, env=env,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 3, proc.stderr
    assert proc.stdout == ""
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "File too large (EFBIG)" in lines[0] and "ulimit -f" in lines[0], proc.stderr
    assert not (reg / "xcopa" / "1.1.0").exists()
    left = [p.relative_to(reg).as_posix() for p in reg.rglob("*") if p.is_file()]
    assert all(p.startswith(".locks/") for p in left), left  # only the (empty) lock file of the version


def test_a_failed_registration_keeps_the_file_and_commits_nothing(tmp_path, toy, capsys, monkeypatch):
    from benchsmith import registry

    reg = tmp_path / "reg"
    write(reg, version="1.0.0", register_fps=True)
    tsv = toy.home / "fingerprints.tsv"
    before = tsv.read_bytes()
    real = os.replace

    def full(src, dst):
        if Path(dst) == tsv:
            raise OSError(errno.ENOSPC, "No space left on device")
        return real(src, dst)

    monkeypatch.setattr(registry.os, "replace", full)
    code, out, err = run_cli(capsys, "build", "toy", "--sources", str(FIXTURES), "--registry", str(reg),
                             "--register-fingerprints")
    assert code == 3 and out == "" and "(ENOSPC)" in err and "Traceback" not in err
    assert tsv.read_bytes() == before  # never truncated: the old rows are all there
    assert [p.name for p in toy.home.iterdir() if p.name.startswith(".")] == []
    assert not (reg / "toy" / "1.1.0").exists() and hidden(reg) == []
