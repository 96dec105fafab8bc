"""Hypothesis over release folder layouts (issue 22): a sealed folder, then edits, extra, missing
and renamed files, hidden leftovers, links and FIFOs. The seal must say "the same bytes" exactly
when every visible file outside the by-rule reports is byte-for-byte the sealed one, name a
changed path otherwise, and refuse any link or special file with a one-line ReleaseError.

The folder is synthetic (a few small files laid out like a release), so 500 layouts run in the
default run (``SEAL_FUZZ_EXAMPLES`` raises it; derandomised under CI). Each layout is made and
removed on tmpfs where there is one (/dev/shm): on the shared machine's disk, making and
removing the 8-file tree cost more than the seal itself (200 layouts: 28 s on /tmp, 14 s on
/dev/shm, side by side under load).
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from benchsmith import seal
from benchsmith.errors import ReleaseError

#: tmpfs when there is one (only speed depends on it; as tests/test_release_fuzz.py)
FAST_TMP = "/dev/shm" if os.path.isdir("/dev/shm") and os.access("/dev/shm", os.W_OK) else None

# 500 in the default run: tests/test_release_fuzz.py already drives 2,000 folder layouts through the
# reader; this one checks the seal's own walk and digest over them (SEAL_FUZZ_EXAMPLES for more)
EXAMPLES = int(os.environ.get("SEAL_FUZZ_EXAMPLES", "500"))

BASE = {
    "README.md": b"---\nlicense: cc0-1.0\n---\n# toy\n",
    "release.json": b'{"name": "toy", "version": "1.1.0"}\n',
    "croissant.json": b"{}\n",
    "data/plain/train-00000-of-00001.parquet": b"PAR1" + bytes(range(64)) + b"PAR1",
    "lm_eval/plain.yaml": b"task: plain\n",
    "reports/baselines/cheap.json": b'{"accuracy": 0.5}\n',
    "reports/validation.json": b'{"passed": true}\n',
    "reports/validation.html": b"<html></html>\n",
}
SEALED = [p for p in BASE if p not in seal.BY_RULE]
NEW_NAMES = ["NOTES.txt", "data/plain/extra-00000-of-00001.parquet", "lm_eval/leak.yaml", "données é.txt",
             "we\nird.txt", "reports/validation.json", "reports/other.json", "data/x/y/z.bin", "release.json"]
HIDDEN_NAMES = [".cache", "data/.train-shard00000.parquet", ".README.md.abc.tmp", "lm_eval/.x/y.yaml"]

edit = st.one_of(
    st.tuples(st.just("append"), st.sampled_from(list(BASE)), st.binary(min_size=1, max_size=8)),
    st.tuples(st.just("flip"), st.sampled_from(list(BASE)), st.integers(0, 10_000)),
    st.tuples(st.just("same"), st.sampled_from(list(BASE))),  # rewritten with the same bytes
    st.tuples(st.just("remove"), st.sampled_from(list(BASE))),
    st.tuples(st.just("rename"), st.sampled_from(list(BASE)), st.sampled_from(NEW_NAMES)),
    st.tuples(st.just("add"), st.sampled_from(NEW_NAMES), st.binary(max_size=16)),
    st.tuples(st.just("hidden"), st.sampled_from(HIDDEN_NAMES), st.binary(max_size=16)),
    st.tuples(st.just("link"), st.sampled_from(NEW_NAMES + HIDDEN_NAMES + list(BASE)), st.booleans()),
    st.tuples(st.just("fifo"), st.sampled_from(NEW_NAMES + HIDDEN_NAMES)),
)


def _write(root: Path, rel: str, data: bytes) -> None:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.is_symlink() or path.exists():
        path.unlink()
    path.write_bytes(data)


def _apply(root: Path, outside: Path, model: dict[str, bytes], op: tuple) -> bool:
    """Apply one edit to the folder and to ``model`` (its visible regular files); False when the
    edit does not apply to the layout as it is now."""
    kind, rel = op[0], op[1]
    path = root / rel
    if kind in ("append", "flip", "same", "remove", "rename") and (rel not in model or path.is_symlink()):
        return False  # already gone (removed or renamed by an earlier edit)
    if kind in ("add", "rename", "link", "fifo"):
        target = op[2] if kind == "rename" else rel
        if (root / target).is_dir() or any((root / p).is_symlink() or (root / p).is_file() or
                                           (root / p).exists() and not (root / p).is_dir()
                                           for p in _parents(target)):
            return False  # a file where a folder must go, or the reverse: not a layout to try
    if kind == "append":
        model[rel] += op[2]
        _write(root, rel, model[rel])
    elif kind == "flip":
        if not model[rel]:
            return False  # an empty file (added empty under a release name): no byte to flip
        data = bytearray(model[rel])
        data[op[2] % len(data)] ^= 0x01
        model[rel] = bytes(data)
        _write(root, rel, model[rel])
    elif kind == "same":
        _write(root, rel, model[rel])
    elif kind == "remove":
        path.unlink()
        del model[rel]
    elif kind == "rename":
        new = op[2]
        if new == rel:
            return False
        data = model.pop(rel)
        path.unlink()
        model[new] = data
        _write(root, new, data)
    elif kind == "add":
        model[rel] = op[2]
        _write(root, rel, op[2])
    elif kind == "hidden":
        if any(not (root / p).is_dir() and (root / p).exists() for p in _parents(rel)):
            return False
        _write(root, rel, op[2])  # not part of the release: the model does not change
    elif kind == "link":
        if path.is_dir():
            return False
        model.pop(rel, None)
        if path.exists() or path.is_symlink():
            path.unlink()
        path.parent.mkdir(parents=True, exist_ok=True)
        path.symlink_to(outside if op[2] else root / "README.md")  # outside, or a file of the release
        return True
    elif kind == "fifo":
        if path.is_dir() or path.exists() or path.is_symlink():
            return False
        path.parent.mkdir(parents=True, exist_ok=True)
        os.mkfifo(path)
        return True
    return False


def _parents(rel: str) -> list[str]:
    parts = rel.split("/")
    return ["/".join(parts[:i]) for i in range(1, len(parts))]


@settings(max_examples=EXAMPLES, deadline=None, derandomize=bool(os.environ.get("CI")), database=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(edits=st.lists(edit, max_size=4))
@example(edits=[("add", "release.json", b""), ("flip", "release.json", 3)])  # an empty file: nothing to flip
def test_the_seal_over_release_folder_layouts(edits):
    with tempfile.TemporaryDirectory(prefix="benchsmith-seal-fuzz-", dir=FAST_TMP) as tmp:
        root, outside = Path(tmp) / "toy" / "1.1.0", Path(tmp) / "outside.txt"
        outside.write_bytes(b"secret\n")
        for rel, data in BASE.items():
            _write(root, rel, data)
        sealed = seal.compute(root)
        assert [e.path for e in sealed.files] == sorted(SEALED)
        model = dict(BASE)
        for op in edits:
            _apply(root, outside, model, op)
        # links and FIFOs anywhere (hidden ones too) are refused, whatever else changed
        if any(p.is_symlink() or (not p.is_dir() and not p.is_file()) for p in root.rglob("*")):
            for check in (lambda: seal.compute(root), lambda: seal.differences(root, sealed, full=True),
                          lambda: seal.differences(root, sealed, full=False)):
                try:
                    check()
                except ReleaseError as exc:
                    assert "regular files only" in exc.message and "\n" not in str(exc), str(exc)
                else:
                    raise AssertionError(f"a link or FIFO was not refused: {edits}")
            return
        expected = {p: d for p, d in model.items() if p not in seal.BY_RULE}
        sealed_bytes = {p: BASE[p] for p in SEALED}
        changed = {p for p in set(expected) | set(sealed_bytes) if expected.get(p) != sealed_bytes.get(p)}
        problems = seal.differences(root, sealed, full=True)
        assert (problems == []) == (not changed), (edits, problems)
        assert (seal.compute(root).digest == sealed.digest) == (not changed)
        # each line names a changed path, on one line
        assert {pr.split(": ", 1)[0] for pr in problems} == {seal.shown(p) for p in changed}, (edits, problems)
        assert not any("\n" in pr for pr in problems)
        # the cheap check misses only same-size content changes
        cheap = seal.differences(root, sealed, full=False)
        sizes_same = {p: len(d) for p, d in expected.items()} == {p: len(d) for p, d in sealed_bytes.items()}
        assert (cheap == []) == sizes_same, (edits, cheap)


# 200 in the default run: each layout is one registry (the seal's record outside the folder)
REWRITE_EXAMPLES = int(os.environ.get("SEAL_FUZZ_EXAMPLES", "200"))


@settings(max_examples=REWRITE_EXAMPLES, deadline=None, derandomize=bool(os.environ.get("CI")), database=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(edits=st.lists(edit, max_size=4), forge=st.booleans())
@example(edits=[("flip", "data/plain/train-00000-of-00001.parquet", 7)], forge=True)  # the probe's attack
def test_a_rewritten_seal_entry_never_vouches_for_edited_bytes_in_a_registry(edits, forge):
    """Issue 43 row 1 as a fuzzer: whatever the edits, and whether or not the attacker then reseals
    the folder into reports/validation.json, the seal a release in a registry is checked against is
    the registry's record, so the verdict follows the bytes the registry sealed."""
    from benchsmith import registry

    with tempfile.TemporaryDirectory(prefix="benchsmith-seal-fuzz-", dir=FAST_TMP) as tmp:
        root, outside = Path(tmp) / "toy" / "1.1.0", Path(tmp) / "outside.txt"
        outside.write_bytes(b"secret\n")
        (Path(tmp) / registry.LOCK_DIR).mkdir()  # a registry
        for rel, data in BASE.items():
            _write(root, rel, data)
        sealed = seal.compute(root)
        registry.record_seal(root, sealed.to_dict(), passed=True, fingerprints={})
        model = dict(BASE)
        for op in edits:
            _apply(root, outside, model, op)
        special = any(p.is_symlink() or (not p.is_dir() and not p.is_file()) for p in root.rglob("*"))
        if forge and not special and (root / "reports").is_dir() and not (root / "reports" / "validation.json").is_dir():
            _write(root, "reports/validation.json", json.dumps({"seal": seal.compute(root).to_dict()}).encode())
        try:
            got, source = seal.recorded(root)
            problems = seal.differences(root, got, full=True)
        except ReleaseError as exc:
            assert special or "validation report" in exc.message, (edits, exc.message)  # corrupt: typed, one line
            assert "\n" not in str(exc)
            return
        assert not special, edits  # a link or FIFO is never looked through
        assert source == seal.FROM_REGISTRY and got.digest == sealed.digest
        expected = {p: d for p, d in model.items() if p not in seal.BY_RULE}
        changed = {p for p in set(expected) | set(SEALED) if expected.get(p) != BASE.get(p)}
        assert (problems == []) == (not changed), (edits, forge, problems)
