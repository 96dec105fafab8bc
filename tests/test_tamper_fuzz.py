"""Tampering fuzzer (issue 43, the probe's first class): any change to the sealed bytes of a
validated or published release is refused by ``show --verify``, ``evaluate``, ``publish`` and
``publish --hub``, each with a typed one-line error and a non-zero exit; nothing is scored and
nothing is published.

Each case (a seeded draw, one test id per case) copies test_core_seal's sealed toy release to
one of three places (a registry, the same published locally, a download outside any registry
with the toy's fingerprints registered), applies one to three tamperings (gold labels flipped
with release.json updated to vouch for them, a parquet re-encoded with release.json's sha256 left
stale, a manifest field edited, a byte of the card, croissant.json, lm_eval/ or a data file
flipped, a file added or removed), and half the time rewrites the seal entry of
``reports/validation.json`` to the tampered bytes (and says it passed), as the probe's attacker did.

Outside a registry nothing but the registered fingerprints can tell a re-forged seal from a real
one, so there the forged cases tamper with the data (what ``fingerprints.tsv`` pins).
"""

from __future__ import annotations

import json
import random
import shutil
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from conftest import run_cli
from hub_server import LocalHub, go_online
from test_core_seal import copy_sealed, flip_gold_labels, sealed, toy  # noqa: F401 - fixtures
from test_seal_authority import evaluate, forge_seal
from toy_builder import RegisteredToyBuilder

from benchsmith import fingerprint_registry, registry
from benchsmith.release import Release

CASES = 60
SEED = 43
PLACES = ("registry", "published", "outside")
TAMPERS = ("flip-gold", "reencode", "manifest", "card", "croissant", "lm-eval", "data-byte", "add", "remove")
DATA_TAMPERS = ("flip-gold", "reencode", "data-byte")


def draw(case: int) -> tuple[str, list[str], bool, int]:
    """(place, tamperings, forge the seal entry, seed of the tamperings' own choices)."""
    rng = random.Random(SEED * 1000 + case)
    place, forge = PLACES[case % len(PLACES)], rng.random() < 0.5
    pool = DATA_TAMPERS if place == "outside" and forge else TAMPERS
    chosen = sorted(rng.sample(pool, rng.randint(1, 3)), key=TAMPERS.index)  # rewrites before byte flips
    return place, chosen, forge, rng.randrange(2**32)


def _flip_byte(path: Path, rng: random.Random) -> None:
    data = bytearray(path.read_bytes())
    data[rng.randrange(len(data))] ^= 1 << rng.randrange(8)
    path.write_bytes(bytes(data))


def _manifest_edit(r: Release, rng: random.Random) -> None:
    path = r.path / "release.json"
    m = json.loads(path.read_text())
    split = m["configs"]["plain"]["splits"]["test"]
    edits = [
        lambda: m.__setitem__("description", m.get("description", "") + " (edited)"),
        lambda: split.__setitem__("num_examples", split.get("num_examples", 0) + rng.choice([-1, 1, 1000])),
        lambda: split.__setitem__("fingerprint", "0" * 64),
        lambda: m.__setitem__("version", "1.1.1"),
        lambda: m.setdefault("tool_versions", {}).__setitem__("benchsmith", "0.0.0-forged"),
    ]
    rng.choice(edits)()
    path.write_text(json.dumps(m, indent=2, ensure_ascii=False) + "\n")


def tamper(r: Release, what: str, rng: random.Random) -> None:
    data = sorted(p for p in (r.path / "data").rglob("*.parquet"))
    if what == "flip-gold":
        flip_gold_labels(r)
    elif what == "reencode":  # the same rows in other bytes, release.json's sha256 stale
        path = rng.choice(data)
        pq.write_table(pq.read_table(path), path, compression=rng.choice(["gzip", "none", "zstd"]))
    elif what == "manifest":
        _manifest_edit(r, rng)
    elif what in ("card", "croissant"):
        _flip_byte(r.path / ("README.md" if what == "card" else "croissant.json"), rng)
    elif what == "lm-eval":
        files = sorted((r.path / "lm_eval").rglob("*.yaml")) if (r.path / "lm_eval").is_dir() else []
        if files:
            _flip_byte(rng.choice(files), rng)
        else:
            (r.path / "lm_eval").mkdir(exist_ok=True)
            (r.path / "lm_eval" / "extra.yaml").write_text("task: extra\n")
    elif what == "data-byte":
        _flip_byte(rng.choice(data), rng)
    elif what == "add":
        (r.path / rng.choice(["NOTES.txt", "data/plain/test-00001-of-00001.parquet", "lm_eval.yaml"])).write_bytes(
            b"added after validation\n")
    elif what == "remove":
        rng.choice([r.path / "croissant.json", r.path / "README.md", *data]).unlink(missing_ok=True)


def place_release(place: str, sealed_path: Path, tmp_path: Path, capsys, monkeypatch) -> Release:
    """The sealed release copied to ``place``; a published one is published locally first."""
    if place == "outside":
        target = tmp_path / "download" / "toy" / "1.1.0"
        shutil.copytree(sealed_path, target)
        rows = [("1.1.0", c, s, fp) for c, splits in Release(target).fingerprints().items()
                for s, fp in splits.items()]
        tsv = tmp_path / "builder" / fingerprint_registry.FILENAME
        tsv.parent.mkdir()
        tsv.write_text(fingerprint_registry.render(rows))
        monkeypatch.setattr(RegisteredToyBuilder, "data_path", classmethod(lambda cls, name: tsv.parent / name))
        return Release(target)
    target = copy_sealed(sealed_path, tmp_path / "reg")
    if place == "published":
        code, _, err = run_cli(capsys, "-q", "publish", str(target), "--registry", str(tmp_path / "reg"))
        assert code == 0, err
    return Release(target)


def refused(code: int, out: str, err: str, what: str, *, quiet: bool = True) -> None:
    lines = err.strip().splitlines()
    assert code in (1, 2), (what, code, err)
    assert len(lines) == 1 and lines[0].startswith("error: ") and "Traceback" not in err, (what, err)
    assert not quiet or out.strip() == "", (what, out)  # nothing scored, nothing reported as published


@pytest.mark.slow
@pytest.mark.fuzz("tampering")
@pytest.mark.parametrize("case", range(CASES))
def test_tampered_sealed_bytes_are_refused_by_every_command(case, sealed, toy, tmp_path, capsys, monkeypatch):  # noqa: F811
    place, tamperings, forge, seed = draw(case)
    r = place_release(place, sealed, tmp_path, capsys, monkeypatch)
    marker = registry.marker_path(r.path)
    marker_before = marker.read_bytes() if marker.is_file() else None
    rng = random.Random(seed)
    for what in tamperings:
        tamper(r, what, rng)
    if forge:
        forge_seal(r)
        path = r.path / "reports" / "validation.json"
        path.write_text(json.dumps(json.loads(path.read_text()) | {"passed": True}))
    label = f"{place} {tamperings} forged={forge}"

    refused(*run_cli(capsys, "show", str(r.path), "--verify"), f"show --verify: {label}", quiet=False)
    refused(*evaluate(capsys, r, tmp_path), f"evaluate: {label}")
    target = tmp_path / ("reg" if place != "outside" else "elsewhere")
    refused(*run_cli(capsys, "publish", str(r.path), "--registry", str(target)), f"publish: {label}")
    assert (marker.read_bytes() if marker.is_file() else None) == marker_before, label
    assert not (tmp_path / "elsewhere" / "toy").exists(), label
    go_online(monkeypatch)
    with LocalHub() as hub:
        refused(*run_cli(capsys, "publish", str(r.path), "--hub", "org/toy", "--endpoint", hub.url,
                         "--registry", str(target)), f"publish --hub: {label}")
        assert hub.repos == {} and not any("/commit/" in q for q in hub.requests), label


def test_show_verify_refuses_what_publish_refuses_a_reencoded_parquet_under_a_forged_seal(sealed, toy, tmp_path,  # noqa: F811
                                                                                        capsys, monkeypatch):
    """The fuzzer's case 41: outside a registry, a parquet re-encoded (same rows, so the registered
    fingerprints hold) with release.json's sha256 left stale, and the seal re-forged over it:
    ``publish`` and ``evaluate`` refused it, ``show --verify`` said the bytes matched the seal."""
    r = place_release("outside", sealed, tmp_path, capsys, monkeypatch)
    tamper(r, "reencode", random.Random(0))
    forge_seal(r)
    code, _, err = run_cli(capsys, "show", str(r.path), "--verify")
    assert code == 2 and "its sha256 in release.json is not the sealed file's" in err, err
    refused(*evaluate(capsys, r, tmp_path), "evaluate")
