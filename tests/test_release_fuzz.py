"""Hypothesis fuzzers over what a release folder may hold (issue 22): release.json content, and
the folder's layout. Property: opening the release and reading every split either works, on
exactly the files release.json records, or raises a BenchsmithError subclass; never another
exception, and nothing outside the release is ever read.

Each example is cheap: the fixture release is built once per module, and each example works on
hard links to its files (nothing here writes to a data file, only replaces or removes
directory entries). Budgets: the default run draws the ``benchsmith`` hypothesis
profile's 500 examples per fuzzer; the slow run (``-m slow``, which CI runs on every submission)
repeats both with 2,000 (``BENCHSMITH_FUZZ_EXAMPLES`` raises it).
"""

from __future__ import annotations

import contextlib
import copy
import json
import os
import shutil
import stat
import tempfile
from collections.abc import Iterator
from pathlib import Path
from unittest import mock

import pyarrow.parquet as pq
import pytest
from conftest import DEFAULT_PROFILE, FuzzCases
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from toy_builder import FIXTURES, ToyBuilder

import benchsmith.release.reader as release_module  # the reader: what opens a release's files
from benchsmith.errors import BenchsmithError
from benchsmith.release import Release, ReleaseWriter
from benchsmith.source import resolve_sources

#: examples per fuzzer: the default run's (the benchsmith profile's, 500) and the slow run's
DEFAULT_EXAMPLES = settings.get_profile(DEFAULT_PROFILE).max_examples
SLOW_EXAMPLES = int(os.environ.get("BENCHSMITH_FUZZ_EXAMPLES", "2000"))


def fuzz_settings(examples: int) -> settings:
    """The loaded profile (derandomised under CI, no database) with ``examples``."""
    return settings(max_examples=examples, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


#: tmpfs when there is one: each example creates and removes a small tree, which on a busy disk
#: costs more than the reading under test (only speed depends on it)
FAST_TMP = "/dev/shm" if os.path.isdir("/dev/shm") and os.access("/dev/shm", os.W_OK) else None


@pytest.fixture(scope="module")
def base(tmp_path_factory) -> Iterator[Path]:
    """The toy release (4 parquet files in 2 configs), and real parquet files outside it."""
    b = ToyBuilder()
    src = resolve_sources(b.sources, b.checksums(), FIXTURES, allow_missing=False)
    built = ReleaseWriter(b, tmp_path_factory.mktemp("fuzzbase") / "reg", src).write()
    root = Path(tempfile.mkdtemp(prefix="benchsmith-fuzz-", dir=FAST_TMP))
    try:
        release = root / "reg" / "toy" / "1.1.0"
        shutil.copytree(built.path, release)
        shutil.copy(built.files("plain", "train")[0], root / "outside.parquet")  # reads fine if followed
        shutil.copytree(built.path / "data", root / "outside" / "data")  # what a linked folder would reach
        yield release
    finally:
        shutil.rmtree(root, ignore_errors=True)


def link_copy(src: Path, dest: Path) -> None:
    """``dest`` holding hard links to ``src``'s release.json and data files (cheap; the data is
    never written; the card and croissant.json play no part in reading)."""
    for dirpath, _, filenames in os.walk(src):
        rel = Path(dirpath).relative_to(src)
        (dest / rel).mkdir(parents=True, exist_ok=True)
        for f in filenames:
            if rel.parts or f == "release.json":
                os.link(Path(dirpath) / f, dest / rel / f)


@contextlib.contextmanager
def reads_recorded(root: Path) -> Iterator[set[str]]:
    """Record every file benchsmith.release opens for data, and fail before the open on one
    outside ``root`` or not a regular file (a FIFO would block the read forever)."""
    opened: set[str] = set()
    real_root = os.path.realpath(root) + os.sep
    parquet_file, sha256_file = pq.ParquetFile, release_module.sha256_file

    def check(path) -> None:
        assert os.path.realpath(path).startswith(real_root), f"read outside the release: {path}"
        assert stat.S_ISREG(os.lstat(path).st_mode), f"read a non-regular file: {path}"
        opened.add(os.path.realpath(path))

    def guarded_parquet_file(path, *a, **kw):
        check(path)
        return parquet_file(path, *a, **kw)

    def guarded_sha(path, *a, **kw):
        check(path)
        return sha256_file(path, *a, **kw)

    with mock.patch.object(pq, "ParquetFile", guarded_parquet_file), \
            mock.patch.object(pq, "read_table", None), \
            mock.patch.object(release_module, "sha256_file", guarded_sha):
        yield opened


def read_everything(path: Path) -> tuple[Release | None, set[Path]]:
    """Open, read every split, stream one, verify the files, summarise; (release or None on a
    BenchsmithError, the files read). Any other exception fails the test, and so does a read
    outside the release or of anything but a regular file inside it."""
    r = None
    with reads_recorded(path) as opened:
        try:
            r = Release(path)
            for c in r.configs():
                for s in r.splits(c):
                    r.table(c, s)
            c = r.configs()[0]  # the streamed path once (it checks the same files() as table())
            for _ in r.examples(c, r.splits(c)[0]):
                pass
            r.verify_files()
            r.summary()
        except BenchsmithError as exc:
            assert "\n" not in str(exc), f"not one line: {exc}"
            r = None
    return r, {Path(f) for f in opened}


def recorded_files(r: Release) -> set[Path]:
    return {(r.path / f).resolve() for _, _, info in r.info.iter_splits() for f in info.files}


# ----------------------------------------------------------------- release.json content


PATHS = [
    "../../outside.parquet", "../outside.parquet", "/etc/passwd", "data/../../outside.parquet", "data/plain",
    "data/plain/train-00000-of-00001.parquet", "data/short/train-00000-of-00001.parquet",
    "data/plain/missing.parquet", "data\\plain\\train-00000-of-00001.parquet", "data/plain/\x00.parquet",
    "README.md", "release.json", "data//plain/test-00000-of-00001.parquet", "./data/plain/test-00000-of-00001.parquet",
    "data/plain/test-00000-of-00001.parquet/", "", "data", "../../reg/toy/1.1.0/data/plain/test-00000-of-00001.parquet",
]
FEATURES = [
    {"_type": "Value", "dtype": "string"}, {"_type": "Value", "dtype": "int64"}, {"_type": "Value", "dtype": "nope"},
    {"_type": "Value"}, {"_type": "ClassLabel", "names": ["no", "yes"]}, {"_type": "ClassLabel", "names": "ab"},
    {"_type": "ClassLabel", "names": [1, 2]}, {"_type": "ClassLabel", "num_classes": -1}, {"_type": "ClassLabel"},
    {"_type": "NoSuchType"}, {"_type": "Features"}, {"_type": "List"}, {"_type": "List", "feature": "string"},
    {"_type": "List", "feature": {"_type": "Value", "dtype": "string"}, "length": "x"}, [], [{"_type": "Value"}],
    {"_type": {"_type": "Value", "dtype": "string"}}, {"dtype": "string"}, {}, "string", None, 3,
]


def scalars() -> st.SearchStrategy:
    return st.one_of(
        st.none(), st.booleans(), st.integers(min_value=-2, max_value=2), st.sampled_from([2**63, -(2**70), 20, 1e300]),
        st.floats(allow_nan=False), st.text(max_size=12), st.sampled_from(PATHS),
        st.sampled_from(["toy", "Toy", "../../pwned", "1.1.0", "1.0", "01.0.0", "a" * 64, "A" * 64, "plain", "train"]),
    )


def values() -> st.SearchStrategy:
    return st.one_of(
        scalars(), st.sampled_from(FEATURES),
        st.lists(scalars(), max_size=3), st.lists(st.sampled_from(PATHS), min_size=1, max_size=3),
        st.dictionaries(st.sampled_from(["_type", "names", "files", "splits", "features", "x", "train"]), scalars(),
                        max_size=3),
    )


VALUES = values()  # built once: building strategies per draw cost more than the rest of an example
ACTIONS = st.sampled_from(["set", "set", "set", "delete", "add", "rename"])
NEW_KEYS = st.sampled_from(["extra", "../x", "", "files", "sha256", "name"])
RENAMED = st.sampled_from(["../x", "x/y", "new", "", "train", "Test", "a.b"])


def _nodes(node, path=()) -> Iterator[tuple]:
    yield path
    if isinstance(node, dict):
        for k, v in node.items():
            yield from _nodes(v, (*path, k))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            yield from _nodes(v, (*path, i))


def _walk(m, path):
    """The container holding ``path``'s last key, or None when an earlier mutation removed it."""
    node = m
    for k in path[:-1]:
        if isinstance(node, dict) and k in node or isinstance(node, list) and isinstance(k, int) and k < len(node):
            node = node[k]
        else:
            return None
    last = path[-1]
    ok = isinstance(node, dict) and last in node or isinstance(node, list) and isinstance(last, int) and last < len(node)
    return node if ok else None


@st.composite
def mutated_manifests(draw, text: str) -> dict:
    """1-3 mutations of the manifest: set a value, delete or rename a key, add a key or item."""
    m = json.loads(text)  # a fresh copy, cheaper than deepcopy
    nodes = MUTABLE_NODES[text]
    for _ in range(draw(st.integers(1, 3))):
        where = nodes[draw(st.integers(0, len(nodes) - 1))]
        parent = _walk(m, where)
        if parent is None:
            continue
        action = draw(ACTIONS)
        last = where[-1]
        if action == "set":
            parent[last] = copy.deepcopy(draw(VALUES))  # FEATURES' dicts are shared: never mutate them
        elif action == "delete":
            parent.pop(last)
        elif action == "add" and isinstance(parent, dict):
            parent[draw(NEW_KEYS)] = copy.deepcopy(draw(VALUES))
        elif action == "add":
            parent.append(copy.deepcopy(draw(VALUES)))
        elif action == "rename" and isinstance(parent, dict):
            parent[draw(RENAMED)] = parent.pop(last)
    return m


#: manifest text -> the paths a mutation may target: inside an object the schema keeps opaque
#: (policy, metadata, tool_versions) only the object as a whole
MUTABLE_NODES: dict[str, list[tuple]] = {}


def test_release_json_fuzz(base):
    fuzz_release_json(base, DEFAULT_EXAMPLES)


@pytest.mark.slow
@pytest.mark.fuzz("crafted-folders")
def test_release_json_fuzz_long_run(base, fuzz_cases):
    fuzz_release_json(base, SLOW_EXAMPLES, fuzz_cases)


def fuzz_release_json(base: Path, examples: int, cases: FuzzCases | None = None) -> None:
    text = (base / "release.json").read_text()
    MUTABLE_NODES[text] = [p for p in _nodes(json.loads(text))
                           if p and not {"policy", "metadata", "tool_versions"} & set(p[:-1])]
    work = Path(tempfile.mkdtemp(dir=base.parent.parent.parent))  # a sibling of outside.parquet's folder
    release_dir = work / "toy" / "1.1.0"
    link_copy(base, release_dir)
    outcomes = {"read": 0, "refused": 0}

    @fuzz_settings(examples)
    @given(m=mutated_manifests(text))
    def fuzz(m):
        with cases.case() if cases else contextlib.nullcontext():
            one_manifest(m)

    def one_manifest(m):
        target = release_dir / "release.json"
        target.unlink()  # a hard link: never write through it
        target.write_text(json.dumps(m, ensure_ascii=False), encoding="utf-8")
        r, opened = read_everything(release_dir)
        if r is None:
            outcomes["refused"] += 1
            return
        outcomes["read"] += 1
        assert opened == recorded_files(r), "read other files than release.json records"

    try:
        fuzz()
    finally:
        shutil.rmtree(work, ignore_errors=True)
    # the fuzzer is not vacuous: both outcomes occur
    assert outcomes["read"] > 0 and outcomes["refused"] > 0, outcomes


# ----------------------------------------------------------------- release folder layouts


DATA_FILES = ["data/plain/train-00000-of-00001.parquet", "data/plain/validation-00000-of-00001.parquet",
              "data/plain/test-00000-of-00001.parquet", "data/short/train-00000-of-00001.parquet"]
ENTRIES = [*DATA_FILES, "data/plain", "data/short", "data", "release.json"]


#: (operation, entry, argument) applied to a fresh copy of the release
LAYOUT_CHANGE = st.tuples(
    st.sampled_from(["symlink", "delete", "rename", "dir", "extra", "fifo", "swap"]),
    st.sampled_from(ENTRIES),
    st.sampled_from(["outside", "inside", "dangling", "data/plain/x.parquet", "data/extra.txt",
                     "data/plain/train-00000-of-00001.parquet.bak", *DATA_FILES]),
)
LAYOUT_CHANGES = st.lists(LAYOUT_CHANGE, min_size=1, max_size=3)


def apply_layout(root: Path, outside: Path, ops: list[tuple[str, str, str]]) -> None:
    for op, entry, arg in ops:
        p = root / entry
        if not os.path.lexists(p) and op != "extra":
            continue
        if op == "symlink":  # the entry replaced by a symlink
            target = {"outside": outside / entry if (outside / entry).exists() else outside.parent / "outside.parquet",
                      "inside": root / DATA_FILES[2], "dangling": root / "nowhere"}.get(arg, root / arg)
            _remove(p)
            p.symlink_to(target)
        elif op == "delete":
            _remove(p)
        elif op == "rename":
            dest = root / (arg if "/" in arg else f"{entry}.moved")
            if dest.parent.is_dir() and not os.path.lexists(dest) and not str(dest).startswith(str(p) + "/"):
                os.rename(p, dest)
        elif op == "dir":  # a folder where a file was (or an empty one where a folder was)
            _remove(p)
            p.mkdir()
        elif op == "fifo":
            _remove(p)
            os.mkfifo(p)
        elif op == "swap" and entry in DATA_FILES and os.path.lexists(root / arg) and root / arg != p:
            tmp = p.with_name(p.name + ".swap")
            os.rename(p, tmp)
            os.rename(root / arg, p)
            os.rename(tmp, root / arg)
        elif op == "extra":
            dest = root / arg
            if dest.parent.is_dir() and not os.path.lexists(dest):
                shutil.copy(outside.parent / "outside.parquet", dest)


def _remove(p: Path) -> None:
    if p.is_dir() and not p.is_symlink():
        shutil.rmtree(p)
    else:
        p.unlink()


def layout_is_sound(root: Path, r_files: list[str]) -> bool:
    """What the property expects independently of benchsmith: release.json and every recorded
    file regular files, and no folder on their way a symlink."""
    for rel in ["release.json", *r_files]:
        p = root
        for part in rel.split("/"):
            p = p / part
            try:
                mode = os.lstat(p).st_mode
            except OSError:
                return False
            if stat.S_ISLNK(mode):
                return False
        if not stat.S_ISREG(mode):
            return False
    return True


def test_release_layout_fuzz(base):
    fuzz_layouts(base, DEFAULT_EXAMPLES)


@pytest.mark.slow
@pytest.mark.fuzz("crafted-folders")
def test_release_layout_fuzz_long_run(base, fuzz_cases):
    fuzz_layouts(base, SLOW_EXAMPLES, fuzz_cases)


def fuzz_layouts(base: Path, examples: int, cases: FuzzCases | None = None) -> None:
    recorded = [f for _, _, info in Release(base).info.iter_splits() for f in info.files]
    outside = base.parent.parent.parent / "outside"
    work = Path(tempfile.mkdtemp(dir=base.parent.parent.parent))
    outcomes = {"read": 0, "refused": 0}
    counter = iter(range(10**9))

    @fuzz_settings(examples)
    @given(ops=LAYOUT_CHANGES)
    def fuzz(ops):
        with cases.case() if cases else contextlib.nullcontext():
            one_layout(ops)

    def one_layout(ops):
        root = work / str(next(counter))
        link_copy(base, root)
        try:
            apply_layout(root, outside, ops)
            sound = layout_is_sound(root, recorded)
            r, opened = read_everything(root)
            if r is None:
                outcomes["refused"] += 1
                assert not sound, f"a sound layout was refused: {ops}"
                return
            outcomes["read"] += 1
            assert sound, f"an unsound layout was read: {ops}"
            assert opened == recorded_files(r)
        finally:
            shutil.rmtree(root, ignore_errors=True)

    try:
        fuzz()
    finally:
        shutil.rmtree(work, ignore_errors=True)
    assert outcomes["read"] > 0 and outcomes["refused"] > 0, outcomes
