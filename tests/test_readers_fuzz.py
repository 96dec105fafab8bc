"""Property-based fuzzing of every raw-format reader (issue 12: no bad input crashes).

Each reader gets structured garbage shaped like its format: JSON records whose fields
are random JSON values, 4,300+ digit integers, deep nesting or lone surrogates; XML
with odd encodings, DTDs, entities and misplaced elements; CSV/TSV rows with quotes,
tabs and NUL bytes; line files; all of it then garbled (bytes such as NUL, invalid
UTF-8 or a BOM inserted, the file cut short, gzip streams truncated). The property:
a reader returns, or raises a :class:`BenchsmithError` whose message is one line and
which names the file. Any other exception fails the test.

The budgets are the hypothesis profiles of tests/conftest.py: the default run draws 500
examples per reader (the ``benchsmith`` profile; issue 26: it keeps the default run under 3
minutes on 2 cores, and issue 12's inputs that crashed a reader are replayed below on every
run); a run that selects the slow tests (``pytest -m slow``, or
``BENCHSMITH_HYPOTHESIS_PROFILE=benchsmith-slow``, which ``.ci/run`` sets) loads the
``benchsmith-slow`` profile and adds a 5,000-example run of each. With ``CI`` set the
examples are derandomised, so a CI run is reproducible. Each example rewrites its files in one
folder on tmpfs (``fast_tmp_path``, tests/conftest.py): 500 mucow_txt examples took 6.7-8.1 s
on the shared machine's disk, 3.8-4.1 s on /dev/shm (side by side, under load). Inputs hypothesis found to
crash a reader are kept in ``REGRESSIONS`` below and replayed on every run.
"""

from __future__ import annotations

import csv
import gzip
import io
import json
from collections.abc import Callable
from pathlib import Path

import pytest
from benchsmith.loaders import cognition_files, comve_csv, moses, mucow_txt, rocstories, sense_inventory, tmx
from benchsmith.loaders.copa_xml import read_copa_xml
from benchsmith.loaders.mucow_json import read_mucow_json
from benchsmith.loaders.xcopa_jsonl import read_xcopa_jsonl
from conftest import DEFAULT_PROFILE, SLOW_PROFILE
from hypothesis import given, settings
from hypothesis import strategies as st

from benchsmith.errors import BenchsmithError

#: the examples per reader of the default run and of the slow run (the two profiles' budgets)
DEFAULT_EXAMPLES = settings.get_profile(DEFAULT_PROFILE).max_examples
SLOW_EXAMPLES = settings.get_profile(SLOW_PROFILE).max_examples


def fuzz_settings(examples: int) -> settings:
    """The loaded profile (deadline, health checks, derandomised under CI) with ``examples``."""
    return settings(settings.default, max_examples=examples)


def only_typed_errors(read: Callable[[], object]) -> None:
    """Run ``read``; a BenchsmithError must be one line and name a file; anything else propagates."""
    try:
        read()
    except BenchsmithError as exc:
        assert "\n" not in str(exc) and "\r" not in str(exc), repr(str(exc))
        assert exc.path is not None, str(exc)


# --------------------------------------------------------------------------- shared strategies

# Strategies draw mostly from small pools of awkward values (cheap to generate: 20,000
# examples per reader must stay within seconds) and sometimes from free text.
SPECIAL_TEXT = ["", " ", "a b", "ü", "中文", "\t", "x,y", 'a"b', "\x00", "\u2028", "\ufeff", "\r", "\n", "\\",
                "&", "<", "]]>", "\U0001f600", "a\u0301", "The dog ran.", "dog", "bank", "1", "-1", "0", "cause",
                "x" * 300, "  lead", "trail  ", "\x1b", "\x7f", "\ud7ff\ue000", "\U0010ffff", "#", "A", "\"q\""]
TEXT = st.one_of(st.sampled_from(SPECIAL_TEXT), st.sampled_from(SPECIAL_TEXT), st.text(max_size=5))
#: text a field expects, most of the time (so that records get past the first check)
SENTENCE = st.one_of(*[st.sampled_from(["The dog ran.", "Il cane corse.", "狗跑了。", "It rained, so we stayed.",
                                        'He said "no".', "x"])] * 3, TEXT)
NASTY_BYTES = [b"\x00", b"\xff", b"\xfe", b"\xc3", b"\xed\xa0\x80", b"\xef\xbb\xbf", b"\r", b"\n", b"\r\n",
               b"\t", b",", b'"', b"\\", b"<", b">", b"&", b"[", b"]", b"{", b"}", b"\x1f\x8b", b"\x80abc"]


def one_in(n: int) -> st.SearchStrategy[bool]:
    """True one time in ``n`` (sampled_from draws uniformly; integers lean towards their bounds)."""
    return st.sampled_from([False] * (n - 1) + [True])


@st.composite
def garbled(draw, base: st.SearchStrategy[bytes]) -> bytes:
    """``base``'s bytes; one time in four with up to 2 nasty bytes inserted, one in five cut short."""
    data = draw(base)
    if draw(one_in(4)):
        for _ in range(draw(st.integers(1, 2))):
            pos = draw(st.integers(0, len(data)))
            data = data[:pos] + draw(st.sampled_from(NASTY_BYTES)) + data[pos:]
    if draw(one_in(5)):
        data = data[: draw(st.integers(0, len(data)))]
    return data


def lines_of(line: st.SearchStrategy[str], max_lines: int = 6, min_lines: int = 0) -> st.SearchStrategy[bytes]:
    """Lines joined by a random terminator (with or without a final one), as UTF-8."""
    return st.tuples(st.lists(line, min_size=min_lines, max_size=max_lines),
                     st.sampled_from(["\n", "\n", "\n", "\r\n", "\r"]), st.booleans()).map(
        lambda t: (t[1].join(t[0]) + (t[1] if t[2] else "")).encode("utf-8", "surrogatepass"))


def maybe_gzip(data: st.SearchStrategy[bytes]) -> st.SearchStrategy[tuple[bool, bytes]]:
    """``(gzipped?, bytes)``: one time in four the bytes are gzip-compressed, and then maybe truncated."""
    def pack(t):
        gz, raw, cut = t
        if not gz:
            return False, raw
        packed = gzip.compress(raw, mtime=0)
        return True, packed[: max(0, len(packed) - cut)]
    return st.tuples(one_in(4), data, st.sampled_from([0, 0, 0, 1, 20])).map(pack)


# JSON: random values plus raw tokens json.dumps never writes
JSON_LEAF = st.one_of(st.sampled_from([None, True, False, 0, 1, -1, 2**63, 2**64, 0.5, 1e300, -0.0]),
                      st.integers(), TEXT)
JSON_VALUE = st.recursive(JSON_LEAF, lambda c: st.lists(c, max_size=2) | st.dictionaries(TEXT, c, max_size=2),
                          max_leaves=4)
RAW_JSON = st.sampled_from([
    "1" * 4301, "-" + "9" * 5000, "1" * 4300, "[" * 100_000, "[" * 990 + "]" * 990, '{"a":' * 3000,
    '"\\ud800"', '"x\\udfff"', '"\\u0000"', "NaN", "Infinity", "-Infinity", "1e999", "9223372036854775808",
    "-1", "true", "0.5", "{}", "[]", '"' + "x" * 300 + '"',
])
JSON_TEXT = st.one_of(JSON_VALUE.map(lambda v: json.dumps(v, ensure_ascii=False)), RAW_JSON)


def json_object(fields: dict[str, st.SearchStrategy[str]]) -> st.SearchStrategy[str]:
    """An object text with ``fields`` (each value a JSON text): maybe one missing, one extra,
    one replaced by any JSON text."""
    names = list(fields)

    @st.composite
    def build(draw) -> str:
        values = {k: draw(v) for k, v in fields.items()}
        odd = draw(st.sampled_from([None] * len(names) + names))
        if odd is not None:
            action = draw(st.integers(0, 2))
            if action == 0:
                del values[odd]
            elif action == 1:
                values[odd] = draw(JSON_TEXT)
            else:
                values[draw(TEXT)] = draw(JSON_TEXT)
        return "{" + ", ".join(f"{json.dumps(k, ensure_ascii=False)}: {v}" for k, v in values.items()) + "}"
    return build()


def jstr(values: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    return values.map(lambda v: json.dumps(v, ensure_ascii=False))


# --------------------------------------------------------------------------- XCOPA jsonl

XCOPA_RECORD = json_object({
    "premise": jstr(SENTENCE), "choice1": jstr(SENTENCE), "choice2": jstr(SENTENCE),
    "question": jstr(st.sampled_from(["cause", "effect"] * 4 + ["reason", "Cause", ""])),
    "label": st.sampled_from(["0", "1"] * 5 + ["2", "-1", "true", '"1"', "1.0"]),
    "idx": st.one_of(*[st.integers(0, 10**6).map(str)] * 3, st.integers(-2, 6).map(str),
                     st.sampled_from(["9223372036854775807", "9223372036854775808", "1" * 40, "1" * 4301])),
    "changed": st.sampled_from(["true", "false"] * 4 + ["0", "null"]),
})
XCOPA = garbled(st.one_of(*[lines_of(XCOPA_RECORD, 3, 1)] * 2, lines_of(st.one_of(XCOPA_RECORD, JSON_TEXT, TEXT), 3, 1)))


def read_xcopa(tmp: Path, data: bytes) -> None:
    path = tmp / "et" / "val.et.jsonl"
    path.parent.mkdir(exist_ok=True)
    path.write_bytes(data)
    only_typed_errors(lambda: read_xcopa_jsonl(path))


# --------------------------------------------------------------------------- MuCoW JSON

_MUCOW_STRINGS = {k: jstr(SENTENCE) for k in ("source", "reference", "ambig word", "original translation", "sense",
                                           "origin")}
MUCOW_ERROR = json_object({"contrastive": jstr(TEXT), "replacement": jstr(TEXT),
                           "type": jstr(st.sampled_from(["word_sense", ""]))})
MUCOW_ITEM = json_object({
    **_MUCOW_STRINGS,
    "errors": st.lists(MUCOW_ERROR, max_size=2).map(lambda es: "[" + ", ".join(es) + "]"),
    "id": st.one_of(st.integers(-3, 10**6).map(str), st.sampled_from(["9223372036854775808", "1" * 4301, "true",
                                                                     '"7"', "null"])),
})
_MUCOW_ARRAY = st.tuples(st.lists(MUCOW_ITEM, min_size=1, max_size=3), st.sampled_from([",", ",\n", " ,\n  "])).map(
    lambda t: ("[\n" + t[1].join(t[0]) + "\n]").encode("utf-8", "surrogatepass"))
MUCOW = garbled(st.one_of(_MUCOW_ARRAY, _MUCOW_ARRAY, _MUCOW_ARRAY,
                          JSON_TEXT.map(lambda t: t.encode("utf-8", "surrogatepass"))))


def read_mucow(tmp: Path, data: bytes) -> None:
    path = tmp / "en-de.mucow.scoring.json"
    path.write_bytes(data)
    only_typed_errors(lambda: read_mucow_json(path))


# --------------------------------------------------------------------------- XML (COPA, TMX)

ENCODINGS = ["UTF-8", "utf-8", "UTF-16", "utf-32", "bogus", "latin-1", "ISO-8859-1", "shift_jis", "ascii", "cp1252",
             "UTF-7", ""]
_PLAIN_PROLOG = st.sampled_from(["", "", '<?xml version="1.0" encoding="UTF-8"?>\n', '<?xml version="1.0"?>\n'])
PROLOG = st.one_of(_PLAIN_PROLOG, _PLAIN_PROLOG, _PLAIN_PROLOG,
                   st.sampled_from(ENCODINGS).map(lambda e: f'<?xml version="1.0" encoding="{e}"?>\n'))
XML_REFS = ["&amp;", "&lt;", "&quot;", "&#65;", "&#x1F600;", "<![CDATA[x<y]]>", "<!-- c -->", "<?pi x?>"] * 2 + [
    "&e;", "&foo;", "&#0;", "&#xD800;", "&ext;", "&b;", "&", "<", "]]>"]


def doctypes(root: str) -> st.SearchStrategy[str]:
    return st.sampled_from([
        "", "", "", "", "", "", f'<!DOCTYPE {root} SYSTEM "{root}.dtd">\n', f'<!DOCTYPE {root} SYSTEM "{root}.dtd">\n', f'<!DOCTYPE {root} [<!ENTITY e "text">]>\n',
        f'<!DOCTYPE {root} SYSTEM "{root}.dtd" [<!ENTITY e "text">]>\n', f'<!DOCTYPE {root} [<!ENTITY % pe "x">]>\n',
        f"<!DOCTYPE {root} [<!ELEMENT {root} ANY>]>\n", f'<!DOCTYPE {root} [<!ATTLIST item id CDATA "7">]>\n',
        f'<!DOCTYPE {root} [<!ENTITY ext SYSTEM "file:///nonexistent/benchsmith-fuzz">]>\n',
        f'<!DOCTYPE {root} [<!ENTITY a "aaaa"><!ENTITY b "&a;&a;&a;">]>\n', f"<!DOCTYPE {root}>\n",
    ])


def xml_escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&quot;")


XML_TEXT = st.one_of(*[SENTENCE.map(xml_escape)] * 6, st.sampled_from(XML_REFS),
                     st.tuples(TEXT.map(xml_escape), st.sampled_from(XML_REFS)).map("".join))


@st.composite
def xml_document(draw, root: str, body: st.SearchStrategy[str]) -> bytes:
    """``body`` in UTF-8 with a plain prolog two times in three; else any prolog, DOCTYPE and encoding."""
    if not draw(one_in(3)):
        prolog = draw(_PLAIN_PROLOG) + draw(st.sampled_from(["", f'<!DOCTYPE {root} SYSTEM "{root}.dtd">\n']))
        return (prolog + draw(body)).encode("utf-8", "surrogatepass")
    text = draw(PROLOG) + draw(doctypes(root)) + draw(body)
    enc = draw(st.sampled_from(["utf-8"] * 4 + ["utf-16", "utf-32", "latin-1"]))
    return text.encode(enc, "xmlcharrefreplace" if enc == "latin-1" else "surrogatepass")


def rarely(draw, usual: st.SearchStrategy, odd: st.SearchStrategy, n: int = 6):
    """A draw from ``odd`` one time in ``n``, else from ``usual``."""
    return draw(odd) if draw(one_in(n)) else draw(usual)


COPA_ATTRS = {  # (usual, odd) value strategies; None leaves the attribute out
    "id": (st.integers(1, 1000).map(str), st.one_of(st.integers(-1, 1002).map(str), TEXT,
                                                      st.sampled_from([None, "", "²", "1.0", " 1", "0x1"]))),
    "asks-for": (st.sampled_from(["cause", "effect"]), st.sampled_from(["reason", "", None])),
    "most-plausible-alternative": (st.sampled_from(["1", "2"]), st.sampled_from(["3", "0", "", None])),
    "x": (st.none(), st.just("y")),
}
_COPA_CHILDREN = (st.just(("p", "a1", "a2")),
                  st.one_of(st.sampled_from([("p", "a1"), ()]),
                            st.lists(st.sampled_from(["p", "a1", "a2", "item", "b"]), max_size=4)))


@st.composite
def copa_body(draw) -> str:
    root = rarely(draw, st.just("copa-corpus"), st.sampled_from(["copa", "item"]), 10)
    items = []
    for _ in range(rarely(draw, st.integers(1, 3), st.just(0), 10)):
        tag = rarely(draw, st.just("item"), st.sampled_from(["p", "q"]), 10)
        children = "".join(f"<{c}>{draw(XML_TEXT)}</{c}>" for c in rarely(draw, *_COPA_CHILDREN))
        attrs = "".join(f' {k}="{xml_escape(v)}"' for k, (usual, odd) in COPA_ATTRS.items()
                        if (v := rarely(draw, usual, odd, 8)) is not None)
        items.append(f"<{tag}{attrs}>{children}</{tag}>")
    close = "" if draw(one_in(10)) else f"\n</{root}>\n"
    return f'<{root} version="1.0">\n' + "\n".join(items) + close


COPA = garbled(xml_document("copa-corpus", copa_body()))


def read_copa(tmp: Path, data: bytes) -> None:
    path = tmp / "copa-dev.xml"
    path.write_bytes(data)
    only_typed_errors(lambda: read_copa_xml(path))


_LANG = st.sampled_from(["en", "de", "de-DE", "deu", "DE", "", "xx-yy", "ü", "zh_CN", "eng", None])
_LANG_ATTR = st.sampled_from(["xml:lang"] * 4 + ["lang", "x"])
_INLINE = st.sampled_from([None, None, "bpt", "ept", "ph", "hi", "it", "ut", "sub", "seg"])


@st.composite
def tmx_body(draw) -> str:
    units = []
    for _ in range(draw(st.integers(0, 3))):
        tag = draw(st.sampled_from(["tu"] * 6 + ["tuv", "body"]))
        variants = []
        for _ in range(draw(st.integers(0, 3))):
            inline = draw(_INLINE)
            seg = draw(XML_TEXT) + (f"<{inline}>{draw(XML_TEXT)}</{inline}>" if inline else "")
            seg_tag = draw(st.sampled_from(["seg"] * 6 + ["tuv", None]))
            seg = f"<{seg_tag}>{seg}</{seg_tag}>" if seg_tag else seg
            lang = draw(_LANG)
            variants.append(f'<tuv {draw(_LANG_ATTR)}="{lang}">{seg}</tuv>' if lang is not None else seg)
        units.append(f"<{tag}>" + "".join(variants) + f"</{tag}>")
    close = "" if draw(one_in(5)) else "\n</body></tmx>\n"
    return '<tmx version="1.4"><header srclang="de"/><body>\n' + "\n".join(units) + close


TMX = maybe_gzip(garbled(xml_document("tmx", tmx_body())))


def read_tmx(tmp: Path, packed: tuple[bool, bytes]) -> None:
    gz, data = packed
    path = tmp / ("corpus.tmx.gz" if gz else "corpus.tmx")
    path.write_bytes(data)
    only_typed_errors(lambda: list(tmx.iter_tmx_pairs(path, "de", "en")))


# --------------------------------------------------------------------------- CSV (ComVE, ROCStories)


@st.composite
def csv_text(draw, header: st.SearchStrategy[list[str]], cells: st.SearchStrategy[str], width: int) -> bytes:
    """A header and rows of about ``width`` cells, written by ``csv`` (random quoting) or joined raw."""
    rows = [] if draw(one_in(6)) else [draw(header)]
    for _ in range(draw(st.integers(0, 4))):
        n = width + draw(st.sampled_from([0, 0, 0, 0, -1, 1]))
        rows.append([draw(cells) for _ in range(max(n, 0))])
    if draw(st.booleans()):
        out = io.StringIO()
        csv.writer(out, quoting=draw(st.sampled_from([csv.QUOTE_MINIMAL, csv.QUOTE_ALL])),
                   lineterminator=draw(st.sampled_from(["\n", "\r\n"]))).writerows(rows)
        text = out.getvalue()
    else:
        text = "".join(",".join(r) + "\n" for r in rows)
    return text.encode("utf-8", "surrogatepass")


COMVE_READERS = {
    "a": (comve_csv.read_subtask_a, list(comve_csv.A_HEADER)),
    "b": (comve_csv.read_subtask_b, list(comve_csv.B_HEADER)),
    "c": (comve_csv.read_subtask_c, list(comve_csv.C_HEADER)),
    "answers_a": (lambda p: comve_csv.read_answers(p, comve_csv.A_LABELS), None),
    "answers_b": (lambda p: comve_csv.read_answers(p, comve_csv.B_LABELS), None),
    "references": (comve_csv.read_references, None),
}
_COMVE_CELL = st.one_of(SENTENCE, st.sampled_from(["0", "1", "A", "B", "C", "D", "1363", " 1", ""]))


@st.composite
def comve_file(draw) -> tuple[str, bytes]:
    name = draw(st.sampled_from(sorted(COMVE_READERS)))
    header = COMVE_READERS[name][1]
    width = len(header) if header else {"answers_a": 2, "answers_b": 2, "references": 4}[name]
    headers = st.sampled_from([header or ["1", "0"], ["id", "sent0"], ["\ufeffid", "sent0", "sent1"]])
    return name, draw(garbled(csv_text(headers, _COMVE_CELL, width)))


def read_comve(tmp: Path, drawn: tuple[str, bytes]) -> None:
    name, data = drawn
    path = tmp / "subtask.csv"
    path.write_bytes(data)
    only_typed_errors(lambda: COMVE_READERS[name][0](path))


_COMVE_IDS = st.sampled_from(["1", "2", "3", "4", "5", "6", "7", " 2", "x", ""])
_COMVE_LABELS = (st.sampled_from(["0", "1"] * 4 + ["2", " 1", ""]), st.sampled_from(["A", "B", "C"] * 3 + ["D", ""]))


@st.composite
def comve_split(draw) -> list[bytes]:
    """The six files of a split over a small id pool, so joins meet missing, extra and repeated ids."""
    rows = [(draw(_COMVE_IDS), draw(SENTENCE), draw(SENTENCE), *(draw(lab) for lab in _COMVE_LABELS))
            for _ in range(draw(st.integers(0, 3)))]
    shapes = [  # (header, cells of a row) for a_data, a_answers, b_data, b_answers, c_data, c_answers
        (comve_csv.A_HEADER, lambda r: [r[0], r[1], r[2]]), (None, lambda r: [r[0], r[3]]),
        (comve_csv.B_HEADER, lambda r: [r[0], r[1], r[2], r[1], r[2]]), (None, lambda r: [r[0], r[4]]),
        (comve_csv.C_HEADER, lambda r: [r[0], r[1]]), (None, lambda r: [r[0], r[2], "", r[1]]),
    ]
    broken = draw(st.sampled_from(range(9)))  # one file (or none) is reordered, gets an extra id, or is garbled
    files = []
    for n, (header, cells) in enumerate(shapes):
        out = io.StringIO()
        writer = csv.writer(out, lineterminator="\n")
        if header:
            writer.writerow(header)
        mine = list(rows)
        if n == broken:
            mine = draw(st.permutations(mine)) + [(draw(_COMVE_IDS), "t", "u", "0", "A")]
        writer.writerows(cells(r) for r in mine)
        data = out.getvalue().encode("utf-8", "surrogatepass")
        files.append(draw(garbled(st.just(data))) if n == broken else data)
    return files


def read_comve_split(tmp: Path, files: list[bytes]) -> None:
    paths = [tmp / f"{n}.csv" for n in ("a", "a_ans", "b", "b_ans", "c", "c_ans")]
    for p, data in zip(paths, files):
        p.write_bytes(data)
    split = comve_csv.SplitFiles(*paths)
    bulk = comve_csv._bulk_instances(split)  # the fast path, where it accepts, equals the exact one
    if bulk is not None:
        assert bulk == comve_csv._load_instances_exact(split)
    only_typed_errors(lambda: comve_csv.load_instances(split))


ROC_HEADERS = st.sampled_from([
    ["storyid", "storytitle", "sentence1", "sentence2", "sentence3", "sentence4", "sentence5"],
    ["InputStoryid", "InputSentence1", "InputSentence2", "InputSentence3", "InputSentence4",
     "RandomFifthSentenceQuiz1", "RandomFifthSentenceQuiz2", "AnswerRightEnding"],
    ["storyid"], ["sentence1"], ["\ufeffstoryid", "sentence1"], ["id", "text"],
])
ROCSTORIES = garbled(csv_text(ROC_HEADERS, SENTENCE, 7))


def read_roc(tmp: Path, data: bytes) -> None:
    path = tmp / "stories.csv"
    path.write_bytes(data)
    only_typed_errors(lambda: rocstories.read_rocstories(path))


# --------------------------------------------------------------------------- line files (Moses, MuCoW txt, CoGnition)

MOSES = st.tuples(maybe_gzip(garbled(lines_of(TEXT))), maybe_gzip(garbled(lines_of(TEXT))))


def read_moses(tmp: Path, pair: tuple[tuple[bool, bytes], tuple[bool, bytes]]) -> None:
    paths = []
    for name, (gz, data) in zip(("corpus.en", "corpus.zh"), pair):
        path = tmp / (name + (".gz" if gz else ""))
        path.write_bytes(data)
        paths.append(path)
    only_typed_errors(lambda: moses.read_parallel(*paths))
    only_typed_errors(lambda: moses.count_lines(paths[0]))


def tsv_row(fields: list[st.SearchStrategy[str]]) -> st.SearchStrategy[str]:
    """Tab-joined fields; one time in six a field is dropped or one is added."""
    return st.tuples(st.tuples(*fields), st.sampled_from([0, 0, 0, 0, -1, 1])).map(
        lambda t: "\t".join(list(t[0])[: len(t[0]) + t[1]] if t[1] < 0 else list(t[0]) + ["x"] * t[1]))


_INT_TEXT = st.one_of(st.integers(-2, 10**6).map(str),
                      st.sampled_from(["x", "", " 1", "١٢", "1_0", "12345678901234567890123", "9" * 5000, "+1"]))
_WORDS = st.sampled_from(["bank", "Bank", "bench", "shore", "bank shore", "", " "])
_KEY_ROW = tsv_row([_INT_TEXT, st.sampled_from(["opensubs", "europarl", ""]), _WORDS, _WORDS, _WORDS])
_DOMAIN_ROW = tsv_row([_WORDS, _WORDS, st.sampled_from(["in", "out", "x", ""]), _INT_TEXT, _INT_TEXT])


@st.composite
def mucow_txt_files(draw) -> list[bytes]:
    """text/ref/key/domain, mostly of one length; one file (or none) garbled."""
    n = draw(st.integers(0, 3))
    files = [
        "".join(draw(TEXT) + "\n" for _ in range(n)),
        "".join(draw(TEXT) + "\n" for _ in range(n + draw(st.sampled_from([0, 0, 0, -1, 1])))),
        "".join(draw(_KEY_ROW) + "\n" for _ in range(n)),
        "".join(draw(_DOMAIN_ROW) + "\n" for _ in range(draw(st.integers(0, 3)))),
    ]
    data = [f.encode("utf-8", "surrogatepass") for f in files]
    broken = draw(st.sampled_from(range(6)))
    if broken < 4:
        data[broken] = draw(garbled(st.just(data[broken])))
    return data


MUCOW_TXT = mucow_txt_files()


def read_mucow_txt(tmp: Path, files: list[bytes]) -> None:
    paths = [tmp / f"en-de.{k}.txt" for k in ("text", "ref", "key", "domain")]
    for p, data in zip(paths, files):
        p.write_bytes(data)
    only_typed_errors(lambda: mucow_txt.read_translation_suite(*paths))


_COMPOUNDS = st.sampled_from(["the dog", "the dog", "red car", "dog", "", " the dog "])


@st.composite
def cg_triple(draw) -> list[bytes]:
    """en/zh/compound files, mostly in blocks of 5 lines per compound; one file (or none) garbled."""
    compounds = [c for _ in range(draw(st.sampled_from([0, 1, 1, 2]))) for c in [draw(_COMPOUNDS)] * 5]
    if compounds and draw(one_in(3)):
        compounds[draw(st.integers(0, len(compounds) - 1))] = draw(_COMPOUNDS)
    cut = draw(st.sampled_from([0, 0, 0, 1, 5]))
    en = [f"I saw {c} ." for c in compounds]
    zh = ["我看见了。"] * (len(compounds) - (cut if draw(st.booleans()) else 0))
    if en and draw(one_in(3)):
        en[draw(st.integers(0, len(en) - 1))] = draw(TEXT)
    data = ["".join(x + "\n" for x in f).encode("utf-8", "surrogatepass") for f in (en, zh, compounds)]
    broken = draw(st.sampled_from(range(5)))
    if broken < 3:
        data[broken] = draw(garbled(st.just(data[broken])))
    return data


def read_cg(tmp: Path, files: list[bytes]) -> None:
    paths = [tmp / f"cg-test.{k}" for k in ("en", "zh", "compound")]
    for p, data in zip(paths, files):
        p.write_bytes(data)
    only_typed_errors(lambda: cognition_files.read_cg_test(*paths))


LEXICON = garbled(lines_of(tsv_row([st.sampled_from(["dog", "the", "mod0", "", " "]) | TEXT,
                                    st.lists(st.sampled_from(["狗", "犬", "", " "]) | TEXT, max_size=3).map("/".join)])))


def read_lex(tmp: Path, data: bytes) -> None:
    path = tmp / "lexicon"
    path.write_bytes(data)
    only_typed_errors(lambda: cognition_files.read_lexicon(path))


# --------------------------------------------------------------------------- sense inventories

_OMW_ROW = tsv_row([st.sampled_from(["00004171-a", "00004171-s", "00000001-n", "0000417-a", "x", "00004171-x",
                                     "٠٠٠٠٠٠٠١-n", ""]),
                    st.tuples(st.sampled_from(["deu", "eng", "de", "xx", "", "q!", "zzz"]),
                              st.sampled_from(["lemma", "def", "exe", ""])).map(":".join),
                    TEXT])
_OMW_HEADER = st.sampled_from(["# Wiktionary\tdeu\thttp://wiktionary.org/\tCC BY-SA", "# x", "#\t\t", "# h\tq!"])
OMW = garbled(st.tuples(_OMW_HEADER, lines_of(_OMW_ROW, 5)).map(lambda t: t[0].encode() + b"\n" + t[1]))
_BN_ROW = tsv_row([st.sampled_from(["bn:00008364n", "", " "]) | TEXT,
                   st.sampled_from(["DE", "de", "deu", "EN", "x", "", "de-DE"]), TEXT,
                   st.sampled_from(["n", "NOUN", "adj", "ADV", "X", "", "s"])])
BABELNET = garbled(lines_of(st.one_of(_BN_ROW, st.just("synset\tlanguage\tlemma\tpos")), 5))


def read_inventory(tmp: Path, files: tuple[bytes, bytes]) -> None:
    (tmp / "wikt-deu.tab").write_bytes(files[0])
    (tmp / "export.tsv").write_bytes(files[1])
    only_typed_errors(lambda: sense_inventory.load_inventory(tmp, ["de"]))  # the .tab first, then the .tsv
    only_typed_errors(lambda: list(sense_inventory.iter_babelnet_tsv(tmp / "export.tsv")))  # even if .tab failed


# --------------------------------------------------------------------------- the table and the tests

READERS: dict[str, tuple[st.SearchStrategy, Callable[[Path, object], None]]] = {
    "xcopa_jsonl": (XCOPA, read_xcopa),
    "mucow_json": (MUCOW, read_mucow),
    "copa_xml": (COPA, read_copa),
    "tmx": (TMX, read_tmx),
    "comve_csv": (comve_file(), read_comve),
    "comve_join": (comve_split(), read_comve_split),
    "rocstories": (ROCSTORIES, read_roc),
    "moses": (MOSES, read_moses),
    "mucow_txt": (MUCOW_TXT, read_mucow_txt),
    "cognition_cg_test": (cg_triple(), read_cg),
    "cognition_lexicon": (LEXICON, read_lex),
    "sense_inventory": (st.tuples(OMW, BABELNET), read_inventory),
}


def _fuzz(name: str, tmp_path: Path, examples: int) -> None:
    strategy, read = READERS[name]
    tmp = tmp_path / "fuzz"
    tmp.mkdir()

    @fuzz_settings(examples)
    @given(strategy)
    def check(drawn) -> None:
        read(tmp, drawn)

    check()


@pytest.mark.parametrize("name", READERS)
def test_reader_raises_only_typed_errors(name, fast_tmp_path):
    _fuzz(name, fast_tmp_path, DEFAULT_EXAMPLES)


@pytest.mark.slow
@pytest.mark.parametrize("name", READERS)
def test_reader_raises_only_typed_errors_long_run(name, fast_tmp_path):
    if settings.default.max_examples < SLOW_EXAMPLES:  # BENCHSMITH_HYPOTHESIS_PROFILE=benchsmith forced it
        pytest.skip(f"{SLOW_EXAMPLES:,} examples per reader: the {SLOW_PROFILE} hypothesis profile is not loaded")
    _fuzz(name, fast_tmp_path, SLOW_EXAMPLES)


# --------------------------------------------------------------------------- regressions

_TMX_HEAD = '<tmx version="1.4"><header srclang="de"/><body>\n'
_MUCOW_ID = ('[\n{"source": "s", "reference": "r", "ambig word": "w", "original translation": "o", "sense": "x", '
             '"origin": "c", "errors": [], "id": %s}\n]')
_COPA_ITEM = ('<copa-corpus version="1.0">\n<item id="1" asks-for="cause" most-plausible-alternative="1">'
              "<p>The dog ran.</p><a1>a</a1><a2>b</a2></item>\n</copa-corpus>\n")

#: inputs the fuzzer above found crashing the readers of issue 12 (before the fix: the exception)
REGRESSIONS: list[tuple[str, object]] = [
    ("xcopa_jsonl", b"[" * 100_000),  # RecursionError
    ("xcopa_jsonl", b"1" * 4301),  # ValueError: Exceeds the limit (4300 digits) for integer string conversion
    ("mucow_json", b"[" * 100_000),  # RecursionError
    ("mucow_json", (_MUCOW_ID % ("1" * 4301)).encode()),  # ValueError: Exceeds the limit (4300 digits)
    ("sense_inventory", (b"# Wiktionary\tdeu\thttp://wiktionary.org/\tCC BY-SA\n", b"")),  # ConfigError without path
    ("copa_xml", ('<?xml version="1.0" encoding="UTF-7"?>\n' + _COPA_ITEM).encode()),  # ValueError: multi-byte
    ("copa_xml", ('<?xml version="1.0" encoding="bogus"?>\n' + _COPA_ITEM).encode()),  # LookupError
    ("tmx", (False, f'<?xml version="1.0" encoding="UTF-7"?>\n{_TMX_HEAD}</body></tmx>\n'.encode())),  # ValueError
    ("tmx", (False, f"{_TMX_HEAD}<tu></tu>\n<tu><seg>The dog ran.</seg></tu>\n</body></tmx>\n".encode())),
    # ^ AttributeError: 'NoneType' object has no attribute 'strip' (a <seg> outside a <tuv> had language None)
]


@pytest.mark.parametrize("name, drawn", REGRESSIONS)
def test_regressions(name, drawn, tmp_path):
    tmp = tmp_path / "fuzz"
    tmp.mkdir()
    READERS[name][1](tmp, drawn)
