"""Fault injection: a release, once built, validated or published, survives crashes, races,
full disks, read-only registries and tampering.

Crashes are real: a child process builds the toy and SIGKILLs itself at a chosen point
(while writing examples, or between the two renames of an overwriting commit). Races are
real: two child processes build the same version at once, or a build runs while the
parent publishes. Disk-full is injected (an ``OSError(ENOSPC)`` from the parquet writer),
so it runs everywhere.
"""

from __future__ import annotations

import errno
import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from conftest import run_cli
from toy_builder import FIXTURES, RegisteredToyBuilder, ToyBuilder

from benchsmith.builder import register, unregister
from benchsmith.errors import EnvironmentFault, PublishError, ReleaseError
from benchsmith.release import Release, ReleaseWriter
from benchsmith.source import resolve_sources

TESTS = Path(__file__).parent

CHILD = textwrap.dedent(
    """
    import os, signal, sys, time
    sys.path.insert(0, {tests!r})
    import toy_builder
    from benchsmith import registry
    from benchsmith.release import ReleaseWriter
    from benchsmith.source import resolve_sources

    point, reg, overwrite, delay = sys.argv[1], sys.argv[2], sys.argv[3] == "1", float(sys.argv[4])

    class Toy(toy_builder.RegisteredToyBuilder):
        def examples(self, config, split, sources):
            open(reg + ".started", "w").close()  # the parent waits for this: the lock is held now
            for i, ex in enumerate(super().examples(config, split, sources)):
                if point == "writing" and i == 3:
                    os.kill(os.getpid(), signal.SIGKILL)
                time.sleep(delay)
                yield ex

    if point == "between-renames":
        real = os.replace
        calls = []
        def replace(src, dst):
            calls.append(dst)
            real(src, dst)
            if ".old-" in str(dst):  # the old release is aside, the new one not yet in place
                os.kill(os.getpid(), signal.SIGKILL)
        registry.os.replace = replace

    b = Toy("1.1.0")
    srcs = resolve_sources(b.sources, b.checksums(), {fixtures!r})
    try:
        ReleaseWriter(b, reg, srcs, overwrite=overwrite).write()
    except Exception as exc:
        print(f"{{type(exc).__name__}}: {{exc}}", file=sys.stderr)
        sys.exit(2)
    """
).format(tests=str(TESTS), fixtures=str(FIXTURES))


def child(tmp_path: Path, point: str, reg: Path, *, overwrite: bool = False, delay: float = 0.0) -> subprocess.Popen:
    script = tmp_path / "child.py"
    script.write_text(CHILD)
    return subprocess.Popen([sys.executable, str(script), point, str(reg), "1" if overwrite else "0", str(delay)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def build(reg: Path, *, overwrite: bool = False, builder: ToyBuilder | None = None) -> Release:
    b = builder or RegisteredToyBuilder("1.1.0")  # registered checksums: publishable
    return ReleaseWriter(b, reg, resolve_sources(b.sources, b.checksums(), FIXTURES), overwrite=overwrite).write()


def hidden(reg: Path) -> list[str]:
    return sorted(p.name for p in (reg / "toy").iterdir() if p.name.startswith(".") and p.name != ".published")


@pytest.fixture
def toy():
    register(RegisteredToyBuilder)
    yield
    unregister("toy")


@pytest.mark.parametrize("point", ["writing", "between-renames"])
def test_sigkill_leaves_the_previous_release_intact_or_restored(tmp_path, toy, capsys, point):
    reg = tmp_path / "reg"
    before = build(reg).fingerprints()
    proc = child(tmp_path, point, reg, overwrite=True)
    proc.wait(timeout=120)
    assert proc.returncode == -signal.SIGKILL
    assert hidden(reg), "the kill should leave a staging or an old-aside folder behind"
    if point == "between-renames":
        assert not (reg / "toy" / "1.1.0").exists()  # the crash window the registry must recover from
    # the next command recovers: the previous release is back and nothing hidden remains
    code, _, err = run_cli(capsys, "show", "toy/1.1.0", "--registry", str(reg), "--json")
    assert code == 0, err
    assert Release(reg / "toy" / "1.1.0").fingerprints() == before
    assert Release(reg / "toy" / "1.1.0").verify_files() == []
    assert hidden(reg) == []


def test_two_concurrent_builds_exactly_one_wins(tmp_path):
    reg = tmp_path / "reg"
    procs = [child(tmp_path, "none", reg, delay=0.02) for _ in range(2)]
    results = [(p.wait(timeout=120), p.communicate()[1]) for p in procs]
    codes = sorted(code for code, _ in results)
    assert codes == [0, 2], results
    loser = next(err for code, err in results if code == 2)
    assert "ReleaseError" in loser and ("locked" in loser or "already exists" in loser)
    assert Release(reg / "toy" / "1.1.0").verify_files() == []


def test_a_build_racing_publish_never_replaces_the_published_release(tmp_path, toy, capsys):
    reg = tmp_path / "reg"
    release = build(reg)
    assert run_cli(capsys, "-q", "validate", str(release.path), "--near-dup-threshold", "0.95",
                   "--baselines", "none")[0] == 0
    slow = child(tmp_path, "none", reg, overwrite=True, delay=0.05)
    started = Path(str(reg) + ".started")
    deadline = time.monotonic() + 60
    while not started.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert started.exists()  # the child now holds the version's lock, mid-build
    code, _, err = run_cli(capsys, "publish", str(release.path), "--registry", str(reg))
    assert code == 2 and "locked by another build or publish" in err and "Traceback" not in err
    slow.wait(timeout=120)
    # and the other order: published first, then a build is refused under the lock
    assert run_cli(capsys, "-q", "validate", str(reg / "toy" / "1.1.0"), "--near-dup-threshold", "0.95",
                   "--baselines", "none")[0] == 0
    assert run_cli(capsys, "publish", str(reg / "toy" / "1.1.0"), "--registry", str(reg))[0] == 0
    published = Release(reg / "toy" / "1.1.0").fingerprints()
    with pytest.raises(PublishError, match="never overwritten"):
        build(reg, overwrite=True)
    assert Release(reg / "toy" / "1.1.0").fingerprints() == published


def test_disk_full_is_a_typed_error_and_leaves_nothing(tmp_path, toy, capsys, monkeypatch):
    import pyarrow.parquet as pq

    def full(self, *args, **kwargs):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(pq.ParquetWriter, "write_batch", full)
    reg = tmp_path / "reg"
    code, out, err = run_cli(capsys, "build", "toy", "--sources", str(FIXTURES), "--registry", str(reg))
    assert code == 3 and out == ""
    assert "No space left on device (ENOSPC)" in err and "Free disk space" in err and "Traceback" not in err
    assert not (reg / "toy" / "1.1.0").exists() and hidden(reg) == []
    fault = EnvironmentFault.from_os_error(OSError(errno.ENOSPC, "No space left on device", "x"))
    assert fault is not None and fault.exit_code == 3 and isinstance(fault, OSError)
    assert EnvironmentFault.from_os_error(OSError(errno.ENOENT, "missing")) is None


@pytest.mark.skipif(os.geteuid() == 0, reason="root ignores directory permissions")
def test_read_only_registry_is_a_typed_error(tmp_path, toy, capsys):
    reg = tmp_path / "reg"
    reg.mkdir()
    reg.chmod(0o555)
    try:
        code, _, err = run_cli(capsys, "build", "toy", "--sources", str(FIXTURES), "--registry", str(reg))
    finally:
        reg.chmod(0o755)
    assert code == 3 and "Permission denied" in err and "Traceback" not in err
    assert list(reg.iterdir()) == []


def test_read_only_registry_via_injected_erofs(tmp_path, toy, capsys, monkeypatch):
    from benchsmith import registry

    def erofs(*args, **kwargs):
        raise OSError(errno.EROFS, "Read-only file system", str(tmp_path / "reg"))

    monkeypatch.setattr(registry, "make_staging", erofs)
    code, _, err = run_cli(capsys, "build", "toy", "--sources", str(FIXTURES), "--registry", str(tmp_path / "reg"))
    assert code == 3 and "Read-only file system (EROFS)" in err and "writable" in err


def test_tampering_after_validate_is_caught_by_publish_audit_and_the_release(tmp_path, toy, capsys):
    reg = tmp_path / "reg"
    release = build(reg)
    assert run_cli(capsys, "-q", "validate", str(release.path), "--near-dup-threshold", "0.95",
                   "--baselines", "none")[0] == 0
    shard = release.files("plain", "test")[0]
    data = bytearray(shard.read_bytes())
    data[len(data) // 2] ^= 0xFF  # one flipped byte: the manifest's fingerprints are unchanged
    shard.write_bytes(bytes(data))
    code, _, err = run_cli(capsys, "publish", str(release.path), "--registry", str(reg))
    # the seal, not release.json, is the authority: the first differing file is named
    assert code == 2 and "not the release that was validated" in err and "sha256 differs from the seal" in err
    assert "data/plain/test-00000-of-00001.parquet: content changed" in err
    with pytest.raises(ReleaseError, match="changed on disk"):
        Release(release.path).require_intact()
    # a stray file is a change too
    shard.write_bytes(bytes(data))
    (shard.parent / "extra-00000-of-00001.parquet").write_bytes(b"PAR1")
    assert any("not in release.json" in p for p in Release(release.path).verify_files())


def test_audit_of_a_published_version_checks_the_files_on_disk(tmp_path, toy, capsys):
    reg = tmp_path / "reg"
    release = build(reg)
    assert run_cli(capsys, "-q", "validate", str(release.path), "--near-dup-threshold", "0.95",
                   "--baselines", "none")[0] == 0
    assert run_cli(capsys, "publish", str(release.path), "--registry", str(reg))[0] == 0
    args = ["audit", "toy", "--sources", str(FIXTURES), "--registry", str(reg), "--near-dup-threshold", "0.95",
            "--baselines", "none", "--json"]
    code, out, err = run_cli(capsys, *args)
    assert code == 0, err
    res = json.loads(out)
    assert res["outcome"].startswith("identical to the published release, verified")
    shard = release.files("plain", "train")[0]
    shard.write_bytes(shard.read_bytes()[:-10])  # truncated after publishing
    code, out, err = run_cli(capsys, *args)
    assert code == 1
    res = json.loads(out)
    assert "published_files" in [f["check"] for f in res["failures"]]
    assert res["committed"] is False


def test_validate_on_a_published_release_writes_its_report_elsewhere(tmp_path, toy, capsys):
    reg = tmp_path / "reg"
    release = build(reg)
    args = ["-q", "validate", str(release.path), "--near-dup-threshold", "0.95", "--baselines", "none"]
    assert run_cli(capsys, *args)[0] == 0
    assert run_cli(capsys, "publish", str(release.path), "--registry", str(reg))[0] == 0
    card = (release.path / "README.md").read_bytes()
    report = (release.path / "reports" / "validation.json").read_bytes()
    code, out, _ = run_cli(capsys, *args[1:], "--json")
    assert code == 0
    res = json.loads(out)
    assert res["reports"]["json"] == str(reg / "toy" / ".reports" / "1.1.0" / "validation.json")
    assert any("read-only" in n for n in res["notes"])
    assert (release.path / "README.md").read_bytes() == card
    assert (release.path / "reports" / "validation.json").read_bytes() == report


def test_a_partial_build_is_recorded_and_not_published_unless_allowed(tmp_path, toy, capsys):
    reg = tmp_path / "reg"
    code, _, err = run_cli(capsys, "-q", "build", "toy", "--config", "plain", "--sources", str(FIXTURES),
                           "--registry", str(reg))
    assert code == 0, err
    release = Release(reg / "toy" / "1.1.0")
    assert release.info.to_dict()["partial"] is True and release.info.to_dict()["missing_configs"] == ["short"]
    assert run_cli(capsys, "-q", "validate", str(release.path), "--near-dup-threshold", "0.95",
                   "--baselines", "none")[0] == 0
    code, _, err = run_cli(capsys, "publish", str(release.path), "--registry", str(reg))
    assert code == 2 and "partial build" in err and "short" in err and "--allow-partial" in err
    code, out, err = run_cli(capsys, "show", str(release.path), "--json")
    shown = json.loads(out)
    assert shown["partial"] is True and shown["status"] == "validated"
    assert run_cli(capsys, "publish", str(release.path), "--registry", str(reg), "--allow-partial")[0] == 0
    code, out, _ = run_cli(capsys, "show", str(release.path), "--json")
    assert json.loads(out)["status"] == "published"


def test_show_on_a_manifest_without_splits_is_one_line(tmp_path, toy, capsys):
    release = build(tmp_path / "reg")
    manifest = json.loads((release.path / "release.json").read_text())
    del manifest["configs"]["plain"]["splits"]
    (release.path / "release.json").write_text(json.dumps(manifest))
    code, _, err = run_cli(capsys, "show", str(release.path))
    assert code == 2
    assert err.strip().splitlines()[-1].startswith("error: ") and "has no `splits` mapping" in err


def test_files_and_folders_respect_the_umask(tmp_path, toy):
    old = os.umask(0o022)
    try:
        release = build(tmp_path / "reg")
    finally:
        os.umask(old)
    assert oct(release.path.stat().st_mode & 0o777) == oct(0o755)
    assert oct((release.path / "README.md").stat().st_mode & 0o777) == oct(0o644)


def test_out_of_memory_is_exit_3_and_leaves_nothing(tmp_path, toy, capsys, monkeypatch):
    import pyarrow.parquet as pq

    def exhausted(self, *args, **kwargs):
        raise MemoryError

    monkeypatch.setattr(pq.ParquetWriter, "write_batch", exhausted)
    reg = tmp_path / "reg"
    code, out, err = run_cli(capsys, "build", "toy", "--sources", str(FIXTURES), "--registry", str(reg))
    assert code == 3 and out == ""
    assert err.startswith("error: out of memory (MemoryError)") and "free memory" in err and "Traceback" not in err
    assert not (reg / "toy" / "1.1.0").exists() and hidden(reg) == []
