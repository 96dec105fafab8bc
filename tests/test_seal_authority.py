"""Where the seal lives and what trusts it (issue 43, rows 1, 5 and 12).

* A seal kept only inside the folder it seals can be re-forged by whoever edits the folder: a
  release in a registry is checked against the registry's seal record (``.sealed/``), and a
  folder outside any registry also against its builder's registered ``fingerprints.tsv``.
* ``evaluate`` scores a release that was never validated, or whose validation failed, only with
  ``--allow-unvalidated``; a link or special file in ``reports/`` is refused.
* ``reports/validation.json`` is never read through a link, and validating or publishing a
  folder outside a registry writes nothing outside it.

Each test works on a copy of test_core_seal's sealed toy release.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import stat
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from conftest import one_json, run_cli
from test_core_seal import VALIDATE, flip_gold_labels, one_line, publish, reg_of, release, sealed, toy  # noqa: F401
from toy_builder import RegisteredToyBuilder

from benchsmith import fingerprint_registry, registry, seal
from benchsmith.errors import GateError, ReleaseError
from benchsmith.lookup import gold_release
from benchsmith.release import Release


def forge_seal(r: Release) -> None:
    """The probe's attacker: reseal the edited folder and write that seal into reports/validation.json."""
    path = r.path / "reports" / "validation.json"
    report = json.loads(path.read_text())
    report["seal"] = seal.compute(r.path).to_dict()
    path.write_text(json.dumps(report))


@pytest.fixture
def outside(sealed, tmp_path, toy) -> Release:  # noqa: F811
    """A copy of the sealed release in a folder that is no registry (a download)."""
    target = tmp_path / "download" / "toy" / "1.1.0"
    shutil.copytree(sealed, target)
    return Release(target)


@pytest.fixture
def registered(monkeypatch, tmp_path, sealed):  # noqa: F811
    """The toy's 1.1.0 fingerprints registered, as `build --register-fingerprints` writes them."""
    rows = [("1.1.0", c, s, fp) for c, splits in Release(sealed).fingerprints().items() for s, fp in splits.items()]
    path = tmp_path / "builder" / fingerprint_registry.FILENAME
    path.parent.mkdir()
    path.write_text(fingerprint_registry.render(rows))
    monkeypatch.setattr(RegisteredToyBuilder, "data_path", classmethod(lambda cls, name: path.parent / name))
    return path


def evaluate(capsys, r: Release, tmp_path: Path, *extra: str) -> tuple[int, str, str]:
    """ComVE's evaluate command pointed at the toy (every evaluate runs the same gold check first)."""
    preds = tmp_path / "subtaskA_answers.csv"
    preds.write_text("toy-1,0\n")
    return run_cli(capsys, "evaluate", "comve", str(preds), "--subtask", "a", "--release", str(r.path), *extra)


# ------------------------------------------------------------------------ row 1: a forged seal


def test_validate_in_a_registry_records_the_seal_outside_the_folder(release):  # noqa: F811
    record = registry.seal_record(release.path)
    assert record is not None and record["passed"] is True
    assert record["seal"] == json.loads((release.path / "reports" / "validation.json").read_text())["seal"]
    assert seal.recorded(release.path)[1] == seal.FROM_REGISTRY


def test_a_rewritten_seal_entry_is_refused_in_a_registry(release, capsys, tmp_path):  # noqa: F811
    rel = flip_gold_labels(release)
    forge_seal(release)
    code, out, err = run_cli(capsys, "show", str(release.path), "--verify", "--json")
    assert code == 2 and one_json(out)["seal"]["source"] == seal.FROM_REGISTRY and rel in one_line(err)
    with pytest.raises(ReleaseError, match="not the release that was validated"):
        gold_release(str(release.path))
    code, _, err = evaluate(capsys, release, tmp_path)
    assert code == 2 and "not the release that was validated" in one_line(err)
    code, _, err = publish(capsys, release, "--allow-partial")
    assert code == 2 and "not the release that was validated" in one_line(err) and rel in err
    assert not (release.path.parent / ".published").exists()


def test_outside_a_registry_a_forged_seal_is_refused_by_the_registered_fingerprints(outside, registered, capsys,
                                                                                     tmp_path):
    # the untouched download: certified, and publishable
    assert gold_release(str(outside.path)).path == outside.path
    code, out, err = run_cli(capsys, "show", str(outside.path), "--verify", "--json")
    assert code == 0 and one_json(out)["seal"]["source"] == seal.FROM_REPORT, err
    flip_gold_labels(outside)
    forge_seal(outside)
    code, out, err = run_cli(capsys, "show", str(outside.path), "--verify", "--json")
    assert code == 2 and "plain/test holds data with fingerprint" in one_line(err)
    with pytest.raises(ReleaseError, match="not the registered content of its version"):
        gold_release(str(outside.path))
    code, _, err = run_cli(capsys, "publish", str(outside.path), "--registry", str(tmp_path / "reg"))
    line = one_line(err)
    assert code == 2 and "not the registered content of its version: plain/test" in line
    assert f"{registered.name}:" in line
    assert not (tmp_path / "reg" / "toy").exists()


def reencode(r: Release) -> str:
    """The same rows in other parquet bytes (another compression), release.json left as it was."""
    rel = r.split_info("plain", "test")["files"][0]
    table = pq.read_table(r.path / rel)
    pq.write_table(table, r.path / rel, compression="gzip")
    return rel


def test_a_reencoded_parquet_with_a_stale_sha256_is_neither_sealed_nor_published(outside, capsys, tmp_path):
    report = outside.path / "reports" / "validation.json"
    before = report.read_bytes()
    rel = reencode(outside)
    code, out, err = run_cli(capsys, "-q", "validate", str(outside.path), *VALIDATE, "--json")
    assert code == 1 and "release_files" in err
    failed = [r for r in one_json(out)["results"] if r["check"] == "release_files"]
    assert failed[0]["status"] == "fail" and f"{rel}: sha256 differs from release.json" in failed[0]["summary"]
    assert report.read_bytes() != before  # the failed report, sealed as failed
    code, _, err = run_cli(capsys, "publish", str(outside.path), "--registry", str(tmp_path / "reg"))
    assert code == 1 and "release_files" in one_line(err)
    forge_seal(outside)  # the attacker seals it by hand and says it passed
    path = outside.path / "reports" / "validation.json"
    path.write_text(json.dumps(json.loads(path.read_text()) | {"passed": True, "results": []}))
    code, _, err = run_cli(capsys, "publish", str(outside.path), "--registry", str(tmp_path / "reg"))
    assert code == 2 and f"{rel}: its sha256 in release.json is not the sealed file's" in one_line(err)


# ------------------------------------------------------------------------ row 5: unvalidated gold


def test_evaluate_scores_an_unsealed_release_only_when_allowed(outside, capsys, tmp_path):
    (outside.path / "reports" / "validation.json").unlink()
    code, _, err = evaluate(capsys, outside, tmp_path)
    assert code == 1 and "has no seal (not validated)" in one_line(err) and "--allow-unvalidated" in err
    with pytest.raises(GateError, match="not certified"):
        gold_release(str(outside.path))
    assert gold_release(str(outside.path), allow_unvalidated=True).path == outside.path
    assert "scoring against gold data nobody certified" in seal.require_gold(outside, allow_unvalidated=True)
    _, _, err = evaluate(capsys, outside, tmp_path, "--allow-unvalidated")
    assert "has no seal" not in err.splitlines()[-1] and "nobody certified" in err  # past the gold check
    # allowed, a changed data file is still refused (checked against release.json)
    rel = reencode(outside)
    with pytest.raises(ReleaseError, match=f"{rel}: sha256 differs from release.json"):
        gold_release(str(outside.path), allow_unvalidated=True)


def test_evaluate_scores_a_failed_release_only_when_allowed(release, capsys, tmp_path):  # noqa: F811
    code, _, _ = run_cli(capsys, "-q", "validate", str(release.path), "--baselines", "none")  # 0.8: near duplicates
    assert code == 1 and registry.seal_record(release.path)["passed"] is False
    code, _, err = evaluate(capsys, release, tmp_path)
    assert code == 1 and "failed its validation" in one_line(err) and "--allow-unvalidated" in err
    with pytest.raises(GateError, match="failed its validation"):
        gold_release(str(release.path))
    assert gold_release(str(release.path), allow_unvalidated=True).path == release.path
    # a report edited to say it passed changes nothing: the registry's record says how validate ended
    path = release.path / "reports" / "validation.json"
    path.write_text(json.dumps(json.loads(path.read_text()) | {"passed": True}))
    with pytest.raises(GateError, match="failed its validation"):
        gold_release(str(release.path))


@pytest.mark.parametrize("kind", ["link", "fifo", "device"])
def test_a_special_reports_folder_is_refused_by_show_and_evaluate(outside, capsys, tmp_path, kind):
    reports = outside.path / "reports"
    shutil.move(reports, tmp_path / "reports_elsewhere")
    if kind == "link":
        reports.symlink_to(tmp_path / "reports_elsewhere", target_is_directory=True)
    elif kind == "fifo":
        os.mkfifo(reports)
    else:
        try:
            os.mknod(reports, stat.S_IFCHR | 0o600, os.makedev(1, 3))  # /dev/null's numbers
        except PermissionError:
            pytest.skip("creating a device needs CAP_MKNOD")
    code, _, err = run_cli(capsys, "show", str(outside.path))
    what = {"link": "a symbolic link", "fifo": "a FIFO", "device": "a device"}[kind]
    assert code == 2 and f"reports is {what}" in one_line(err) and "regular files only" in err
    code, _, err = evaluate(capsys, outside, tmp_path, "--allow-unvalidated")
    assert code == 2 and "reports is " in one_line(err)


# ------------------------------------------------------------------------ row 12: nothing outside the folder


def test_a_linked_report_is_refused_before_it_is_read(outside, capsys, tmp_path):
    elsewhere = tmp_path / "not-json.txt"
    elsewhere.write_text("root:x:0:0:root:/root:/bin/bash\n")  # what the probe linked: /etc/passwd
    report = outside.path / "reports" / "validation.json"
    report.unlink()
    report.symlink_to(elsewhere)
    for args in (["show", str(outside.path)], ["publish", str(outside.path), "--registry", str(tmp_path / "reg")]):
        code, _, err = run_cli(capsys, *args)
        line = one_line(err)
        assert code == 2 and "reports/validation.json is a symbolic link" in line, args
        assert "unreadable" not in line  # refused, not parsed
    with pytest.raises(ReleaseError, match="is a symbolic link"):
        gold_release(str(outside.path), allow_unvalidated=True)


def test_validate_and_publish_outside_a_registry_write_nothing_outside_the_folder(outside, capsys, tmp_path):
    above = outside.path.parent.parent  # <grandparent>, where a registry keeps .locks
    before = sorted(p.relative_to(above).as_posix() for p in above.rglob("*") if not p.is_relative_to(outside.path))
    assert run_cli(capsys, "-q", "validate", str(outside.path), *VALIDATE)[0] == 0
    assert seal.recorded(outside.path)[1] == seal.FROM_REPORT
    code, _, err = run_cli(capsys, "-q", "publish", str(outside.path), "--registry", str(tmp_path / "reg"))
    assert code == 0, err
    after = sorted(p.relative_to(above).as_posix() for p in above.rglob("*") if not p.is_relative_to(outside.path))
    assert after == before and not (above / registry.LOCK_DIR).exists()
    assert (tmp_path / "reg" / registry.LOCK_DIR).is_dir()  # the registry it went to is locked as ever
    published = Release(tmp_path / "reg" / "toy" / "1.1.0")
    assert seal.recorded(published.path)[1] == seal.FROM_MARKER
    assert hashlib.sha256((published.path / "release.json").read_bytes()).hexdigest() == \
        hashlib.sha256((outside.path / "release.json").read_bytes()).hexdigest()
