"""One prediction-file policy for every scorer (issues 22 and 29), as tables per scorer.

NUL bytes, non-finite numbers (inf, -inf, nan, 1e999) and out-of-range integers (a 5,000-digit
one) are one typed PredictionError naming file and line, in XCOPA, ComVE, CoGnition and MuCoW. The
readers stream: the first bad line is reported as soon as it is read, so a bad line 2 wins over
undecodable bytes further down (a reader that decodes the whole file first names the later line).
Peak memory on 1M- and 10M-line files is measured by benchmarks/evaluate_memory.py, not here.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from comve_helpers import GOOD
from comve_helpers import build as build_comve
from xcopa_helpers import build_fixture

from benchsmith.builder import get_builder
from benchsmith.builders.mucow.metric import read_lines_exact, read_scores
from benchsmith.errors import PredictionError
from benchsmith.release import ReleaseWriter
from benchsmith.scoring import evaluate
from benchsmith.source import resolve_sources
from benchsmith.validation import predictions


def score_xcopa(release, path: Path) -> dict:
    return evaluate(get_builder("xcopa"), release, path)["scores"]["xcopa-accuracy"]


def evaluate_comve(release, subtask: str, path: Path) -> dict:
    return evaluate(get_builder("comve"), release, path, options={"subtask": subtask})["scores"]


def evaluate_cognition(release, path: Path) -> dict:
    return evaluate(get_builder("cognition"), release, path)["scores"]

FIXTURES = Path(__file__).parent / "fixtures"
HUGE = b"1" * 5000  # over Python's 4,300-digit int/str limit, and over a float's range


def _write(tmp_path: Path, lines: list[bytes], name: str) -> Path:
    p = tmp_path / name
    p.write_bytes(b"".join(line + b"\n" for line in lines))
    return p


def _raises(call, path: Path, line: int, fragment: str) -> None:
    with pytest.raises(PredictionError) as exc:
        call()
    assert fragment in str(exc.value), str(exc.value)
    assert exc.value.path == path and exc.value.line == line, str(exc.value)
    assert f"{path}:{line}: " in str(exc.value)  # one line that names the file and line


# ----------------------------------------------------------------------------- the shared helper

NUMBERS = [
    # text, value or error fragment
    ("-12.5", -12.5), ("3e-4", 3e-4), (" 7 ", 7.0), ("-1e300", -1e300),
    ("inf", "not a finite number"), ("-inf", "not a finite number"), ("nan", "not a finite number"),
    ("Infinity", "not a finite number"), ("-NaN", "not a finite number"),
    ("1e999", "out of range"), (HUGE.decode(), "out of range"),
    ("1_000", "not a number"), ("\u0663", "not a number"), ("", "not a number"), ("0x10", "not a number"),
]


@pytest.mark.parametrize("text, expected", NUMBERS)
def test_number_policy(text, expected):
    if isinstance(expected, float):
        assert predictions.number(text, Path("s.txt"), 3) == expected
    else:
        _raises(lambda: predictions.number(text, Path("s.txt"), 3), Path("s.txt"), 3, expected)


INTEGERS = [
    ("12", 12), (12, 12), (3.0, 3), ("-9223372036854775808", -(2**63)),
    ("9223372036854775808", "out of range"), (2**63, "out of range"), (HUGE.decode(), "out of range"),
    (1.5, "not an integer"), (True, "not an integer"), (float("inf"), "not an integer"), ([0], "not an integer"),
    ("1e3", "not an integer"), ("\u0663", "not an integer"),
]


@pytest.mark.parametrize("value, expected", INTEGERS)
def test_integer_policy(value, expected):
    if isinstance(expected, int):
        assert predictions.integer(value, Path("p.csv"), 2, "idx") == expected
    else:
        _raises(lambda: predictions.integer(value, Path("p.csv"), 2, "idx"), Path("p.csv"), 2, expected)


# ----------------------------------------------------------------------------- XCOPA


@pytest.fixture(scope="module")
def xcopa(tmp_path_factory):
    r = build_fixture(tmp_path_factory.mktemp("xreg"), "1.1.0")
    gold = [(x["idx"], x["label"]) for x in r.examples("et", "test")]
    return r, gold


def _xcopa_jsonl(gold) -> list[bytes]:
    return [json.dumps({"lang": "et", "idx": i, "label": y}).encode() for i, y in gold]


XCOPA_JSONL = [
    # line 2 replaced by, error fragment
    (b'{"lang": "et", "idx": 1, "label": 0}\x00', "NUL byte"),
    (b'{"lang": "et\x00", "idx": 1, "label": 0}', "NUL byte"),
    (b'{"lang": "et", "idx": 1, "label": NaN}', "NaN is not a finite number"),
    (b'{"lang": "et", "idx": Infinity, "label": 0}', "Infinity is not a finite number"),
    (b'{"lang": "et", "idx": -Infinity, "label": 0}', "-Infinity is not a finite number"),
    (b'{"lang": "et", "idx": 1e999, "label": 0}', "out of range"),
    (b'{"lang": "et", "idx": ' + HUGE + b', "label": 0}', "more than 4300 digits"),
    (b'{"lang": "et", "idx": 9223372036854775808, "label": 0}', "out of range"),
    (b'{"lang": "et", "idx": 9, "label": 0}', "et has no idx 9"),  # checked against the gold as read
]


@pytest.mark.parametrize("bad, fragment", XCOPA_JSONL)
def test_xcopa_jsonl_table(xcopa, tmp_path, bad, fragment):
    r, gold = xcopa
    lines = _xcopa_jsonl(gold)
    assert score_xcopa(r, _write(tmp_path, lines, "ok.jsonl"))["languages"]["et"]["accuracy"] == 1.0
    lines[1] = bad
    path = _write(tmp_path, lines + [b"\xff"] * 3, "p.jsonl")  # undecodable bytes after the bad line
    _raises(lambda: score_xcopa(r, path), path, 2, fragment)


XCOPA_CSV = [
    (b"et,1,0\x00", "NUL byte"),
    (b"et," + HUGE + b",0", "out of range"),
    (b"et,inf,0", "idx 'inf' is not an integer"),
    (b"et,nan,0", "idx 'nan' is not an integer"),
    (b"et,1,inf", "label 'inf'"),
    (b"et,42,0", "et has no idx 42"),
]


@pytest.mark.parametrize("bad, fragment", XCOPA_CSV)
def test_xcopa_csv_table(xcopa, tmp_path, bad, fragment):
    r, gold = xcopa
    lines = [b"lang,idx,label"] + [f"et,{i},{y}".encode() for i, y in gold]
    assert score_xcopa(r, _write(tmp_path, lines, "ok.csv"))["languages"]["et"]["accuracy"] == 1.0
    lines[2] = bad
    path = _write(tmp_path, lines + [b"\xff"], "p.csv")
    _raises(lambda: score_xcopa(r, path), path, 3, fragment)


# ----------------------------------------------------------------------------- ComVE


@pytest.fixture(scope="module")
def comve(tmp_path_factory):
    return build_comve(GOOD, tmp_path_factory.mktemp("creg") / "reg")


COMVE_IDS = ("1175", "452", "275")
COMVE = [
    # subtask, line 2 replaced by, error fragment
    ("c", b'452,"An inverter \x00cannot power"', "NUL byte"),
    ("c", b"452,An inverter cannot power an entire continent.\x00", "NUL byte"),
    ("a", b"452,1\x00", "NUL byte"),
    ("a", b"452,inf", "has answer 'inf'"),
    ("a", b"452," + HUGE, "has answer"),
    ("a", b"9999,1", "id '9999', which is not in the test split"),  # checked against the gold as read
]


@pytest.mark.parametrize("subtask, bad, fragment", COMVE)
def test_comve_table(comve, tmp_path, subtask, bad, fragment):
    good = [f"{i},1".encode() if subtask == "a" else f'{i},"a reason"'.encode() for i in COMVE_IDS]
    (score,) = evaluate_comve(comve, subtask, _write(tmp_path, good, "ok.csv")).values()
    assert score["total"] == 3 if subtask == "a" else score["sys_len"] == 6  # 3 ids scored
    lines = list(good)
    lines[1] = bad
    path = _write(tmp_path, lines + [b"\xff"], "p.csv")
    _raises(lambda: evaluate_comve(comve, subtask, path), path, 2, fragment)


# ----------------------------------------------------------------------------- CoGnition


@pytest.fixture(scope="module")
def cognition(tmp_path_factory):
    b = get_builder("cognition")
    sources = resolve_sources(b.sources, {}, FIXTURES / "cognition", allow_missing=True)
    r = ReleaseWriter(b, tmp_path_factory.mktemp("greg"), sources, skip_missing=True).write()
    return r, [x["zh"] for x in r.examples("cg_test", "test")]


COGNITION = [
    # line replaced (1-based), its bytes, error fragment
    (2, "\u6211\u7231\x00\u4f60".encode(), "NUL byte"),
    (2, b"\xff\xfe", "invalid UTF-8"),
    (3, b"   ", "empty translation for id"),
    (16, "\u4f60\u597d".encode(), "more than 15 translations"),  # one line too many: stops there
]


@pytest.mark.parametrize("line, bad, fragment", COGNITION)
def test_cognition_table(cognition, tmp_path, line, bad, fragment):
    r, refs = cognition
    good = [t.encode() for t in refs]
    assert evaluate_cognition(r, _write(tmp_path, good, "ok.txt"))["bleu"]["score"] == pytest.approx(100.0)
    lines = good + [b"\xe4\xbd\xa0"] if line > len(good) else list(good)
    lines[line - 1] = bad
    path = _write(tmp_path, lines + [b"\x00\xff"], "p.txt")
    _raises(lambda: evaluate_cognition(r, path), path, line, fragment)


# ----------------------------------------------------------------------------- MuCoW

MUCOW_SCORES = [
    # line 3 replaced by, error fragment
    (b"inf", "not a finite number"), (b"-inf", "not a finite number"), (b"nan", "not a finite number"),
    (b"Infinity", "not a finite number"), (b"1e999", "out of range"), (b"-" + HUGE, "out of range"),
    (HUGE, "out of range"), (b"-1.5\x00", "NUL byte"), (b"\xff", "invalid UTF-8"), (b"1,5", "not a number"),
]


@pytest.mark.parametrize("bad, fragment", MUCOW_SCORES)
def test_mucow_scores_table(tmp_path, bad, fragment):
    good = [b"-1.5", b"-2", b"-1e300", b"0.25"]
    assert read_scores(_write(tmp_path, good, "ok.txt"), 4) == [-1.5, -2.0, -1e300, 0.25]
    lines = list(good)
    lines[2] = bad
    path = _write(tmp_path, lines + [b"\xff"], "s.txt")
    _raises(lambda: read_scores(path, 4), path, 3, fragment)


def test_mucow_scores_stop_at_the_first_extra_line(tmp_path):
    path = _write(tmp_path, [b"1"] * 4 + [b"2"] * 1000 + [b"\xff"], "s.txt")
    _raises(lambda: read_scores(path, 4), path, 5, "more than 4 scores")


@pytest.mark.parametrize("bad, line, fragment", [
    (b"ein Satz\x00", 2, "NUL byte"), (b"\xc3", 2, "invalid UTF-8"), (None, 4, "more than 3 lines")])
def test_mucow_translations_table(tmp_path, bad, line, fragment):
    good = [b"die Bank", b"ein Satz", b"noch einer"]
    assert read_lines_exact(_write(tmp_path, good, "ok.txt"), 3, "translations") == [g.decode() for g in good]
    lines = list(good) + [b"zu viel", b"\xff"]
    if bad is not None:
        lines[line - 1] = bad
    path = _write(tmp_path, lines, "t.txt")
    _raises(lambda: read_lines_exact(path, 3, "translations"), path, line, fragment)


# ----------------------------------------------------------------------------- bounds

MEMORY_CAPPED = """
import resource, sys
from pathlib import Path
from benchsmith.errors import PredictionError
from benchsmith.validation import predictions

with open("/proc/self/status") as fh:
    size = next(int(line.split()[1]) * 1024 for line in fh if line.startswith("VmSize:"))
resource.setrlimit(resource.RLIMIT_AS, (size + (40 << 20), resource.RLIM_INFINITY))  # 40 MB more
try:
    for _ in predictions.lines(Path(sys.argv[1])):
        pass
except PredictionError as exc:
    print(exc)
"""


def test_a_50_mb_line_is_an_error_at_its_line_in_bounded_memory(tmp_path):
    path = tmp_path / "predictions.txt"
    with open(path, "wb") as fh:
        fh.write(b"a fine first translation\n")
        fh.write(b"x" * (50 << 20) + b"\n")
    proc = subprocess.run([sys.executable, "-c", MEMORY_CAPPED, str(path)], capture_output=True, text=True,
                          timeout=120, check=False)
    assert proc.returncode == 0 and "MemoryError" not in proc.stderr, proc.stderr[-2000:]
    assert proc.stdout.startswith(f"{path}:2: line is longer than {predictions.MAX_LINE_BYTES:,} bytes")


def test_a_fifo_is_refused_as_a_predictions_file(tmp_path):
    fifo = tmp_path / "predictions.txt"
    os.mkfifo(fifo)
    raised: list[BaseException] = []

    def read() -> None:
        try:
            next(predictions.lines(fifo))
        except BaseException as exc:  # noqa: BLE001 - checked below
            raised.append(exc)

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    reader.join(10)
    if reader.is_alive():  # blocked opening the FIFO: release it (a writer opens and closes it), then fail
        os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
        reader.join(10)
        pytest.fail("reading a FIFO blocked")
    assert isinstance(raised[0], PredictionError) and str(raised[0]).startswith(f"{fifo}: is not a regular file")
