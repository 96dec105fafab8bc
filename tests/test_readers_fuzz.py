"""Property-based fuzzing of every raw-format reader (issue 12: no bad input crashes).

Each reader gets structured garbage shaped like its format: JSON records whose fields
are random JSON values, 4,300+ digit integers, deep nesting or lone surrogates; XML
with odd encodings, DTDs, entities and misplaced elements; CSV/TSV rows with quotes,
tabs and NUL bytes; line files; all of it then garbled (bytes such as NUL, invalid
UTF-8 or a BOM inserted, the file cut short, gzip streams truncated). The property:
a reader returns, or raises a :class:`BenchsmithError` whose message is one line and
which names the file. Any other exception fails the test.

The budgets are the hypothesis profiles of tests/conftest.py: the default run draws 500
examples per reader (the ``benchsmith`` profile; the inputs that once crashed a reader are
replayed below on every run); a run that selects the slow tests (``pytest -m slow``, or
``BENCHSMITH_HYPOTHESIS_PROFILE=benchsmith-slow``, which ``.ci/run`` sets) loads the
``benchsmith-slow`` profile and adds a 5,000-example run of each. With ``CI`` set the
examples are derandomised, so a CI run is reproducible. Each example rewrites its files in one
folder on tmpfs (``fast_tmp_path``, tests/conftest.py). Inputs hypothesis found to crash a
reader are kept in ``REGRESSIONS`` below and replayed on every run.

How the inputs are drawn. Hypothesis spends most of a passing run generating, at a cost per
choice it draws (an integer, a string); a ``one_of`` over strategies repeated for weight draws the
branch, then the value; ``.map`` and nested composites add spans; a list draws a "one more?" per
item. So:

* every random decision is one pick from a flat pool (:class:`Pool`, one ``sampled_from``): a value
  repeated for its weight; :func:`mix` builds the pool that draws as ``one_of`` over weighted parts
  would (same probabilities), :class:`Joint` puts independent decisions (garble? cut? gzip? writer,
  row count, which file breaks...) in one pick over their product; a strategy (free text, integers)
  in a pool is drawn only when picked. JSON and XML escaping are applied once to the pools'
  constants instead of a ``.map`` per draw. Pools hold at most ``POOL_LIMIT`` items (why: there).
* list lengths are a count drawn over a range (hypothesis' lists lean shorter), and JSON values
  are a small recursion (:func:`json_value`) shaped like ``st.recursive(..., max_leaves=4)``'s.
* the hypothesis settings are the defaults: a passing run only generates (no ``@example``, no
  database, no ``target()``; shrink and explain run only on a failure), and shrinking is kept:
  a pool shrinks towards its first, plainest item.
"""

from __future__ import annotations

import csv
import gzip
import io
import itertools
import json
import math
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import DEFAULT_PROFILE, SLOW_PROFILE
from hypothesis import given, settings
from hypothesis import strategies as st

from benchsmith.errors import BenchsmithError
from benchsmith.loaders import cognition_files, comve_csv, moses, mucow_txt, rocstories, sense_inventory, tmx
from benchsmith.loaders.copa_xml import read_copa_xml
from benchsmith.loaders.mucow_json import read_mucow_json
from benchsmith.loaders.xcopa_jsonl import read_xcopa_jsonl

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

# Every random decision is a pick from a flat pool (``Pool``): a list of values, a value repeated
# for its weight; a strategy or another pool in it is drawn when picked. A ``one_of`` over parts
# repeated for weight costs a choice for the part and one for the value; the pool one (module docstring).

#: the most items a pool holds: hypothesis draws an index uniformly up to about 300 items (each tenth
#: of the list got 8.6-11.4% of 2,000 draws), and leans towards the first ones above (of 360 items the
#: last tenth got 6%, of 1,800 the first tenth 27%, of 16,128 63%), which would skew the weights
POOL_LIMIT = 300


def _resolve(draw, value):
    """``value``, or a draw of it if it is a strategy or a pool."""
    if isinstance(value, Deferred):
        return draw(value.strategy)
    if isinstance(value, st.SearchStrategy):
        return draw(value)
    if isinstance(value, (Pool, Joint)):
        return value(draw)
    return value


class Deferred:
    """A strategy in a pool, drawn when picked (wrapped: ``sampled_from``, when it draws a strategy,
    scans its whole list to warn if every item is one: 2.5 million isinstance calls, 1.4 s, in 500
    copa_xml examples)."""

    __slots__ = ("strategy",)

    def __init__(self, strategy: st.SearchStrategy) -> None:
        self.strategy = strategy

    def __repr__(self) -> str:
        return repr(self.strategy)


class Pool:
    """One ``sampled_from`` over ``items``; an item that is a strategy or a pool is drawn when picked,
    and with ``joint`` every item is a tuple of such values (several decisions in one choice)."""

    def __init__(self, items, joint: bool = False) -> None:
        self.items = list(items)
        assert len(self.items) <= POOL_LIMIT, len(self.items)
        self.joint = joint
        wrapped: dict[int, Deferred] = {}
        self.strategy = st.sampled_from([wrapped.setdefault(id(v), Deferred(v))
                                         if isinstance(v, st.SearchStrategy) else v for v in self.items])

    def __call__(self, draw):
        value = draw(self.strategy)
        if self.joint:
            return tuple(_resolve(draw, v) for v in value)
        return _resolve(draw, value)

    def map(self, f: Callable) -> Pool:
        """``f`` of every value: applied now to a constant, as ``.map`` to a strategy or a nested pool."""
        mapped: dict[int, object] = {}

        def one(v):
            if isinstance(v, (st.SearchStrategy, Pool)):
                return mapped.setdefault(id(v), v.map(f))
            return f(v)
        return Pool([one(v) for v in self.items])


class Joint:
    """Several pools' decisions drawn as one tuple: their product (each pool's weights kept) in as few
    pools of at most ``POOL_LIMIT`` items as the sizes allow, one choice each."""

    def __init__(self, *pools: Pool | list) -> None:
        groups: list[list[list]] = [[]]
        for p in pools:
            items = p.items if isinstance(p, Pool) else list(p)
            if math.prod(len(g) for g in groups[-1]) * len(items) > POOL_LIMIT:
                groups.append([])
            groups[-1].append(items)
        self.pools = [Pool(itertools.product(*g), joint=True) for g in groups]

    def __call__(self, draw) -> tuple:
        return tuple(v for pool in self.pools for v in pool(draw))


def mix(*parts: tuple[int, object]) -> Pool:
    """A pool that picks part ``p`` with probability ``weight/sum`` and then uniformly among its items
    (a part: a list of values, a Pool, a Joint or one strategy), as ``one_of`` over parts each repeated
    ``weight`` times would. One choice, unless the flat pool would pass ``POOL_LIMIT``: then some parts
    go in as one nested pool each (a second choice when picked), those that add the fewest choices."""
    lists = [(w, p.items if isinstance(p, Pool) else p if isinstance(p, list) else [p]) for w, p in parts]

    def flat(nested: tuple[bool, ...]) -> list:
        shaped = [(w, [Pool(items)] if nest else items) for nest, (w, items) in zip(nested, lists)]
        size = math.lcm(*(len(items) for _, items in shaped))
        counts = [w * size // len(items) for w, items in shaped]  # repeats of each part's items
        return [v for n, (_, items) in zip(counts, shaped) for v in items * (n // math.gcd(*counts))]
    options = [n for n in itertools.product([False, True], repeat=len(lists))
               if not any(nest and len(items) == 1 for nest, (_, items) in zip(n, lists))]
    sizes = {n: len(flat(n)) for n in options}
    best = min((n for n in options if sizes[n] <= POOL_LIMIT),
               key=lambda n: (sum(w for nest, (w, _) in zip(n, lists) if nest), sizes[n]))
    return Pool(flat(best))


# Strategies draw mostly from small pools of awkward values (cheap to generate: 5,000 examples
# per reader must stay within seconds) and sometimes from free text.
SPECIAL_TEXT = ["", " ", "a b", "ü", "中文", "\t", "x,y", 'a"b', "\x00", "\u2028", "\ufeff", "\r", "\n", "\\",
                "&", "<", "]]>", "\U0001f600", "a\u0301", "The dog ran.", "dog", "bank", "1", "-1", "0", "cause",
                "x" * 300, "  lead", "trail  ", "\x1b", "\x7f", "\ud7ff\ue000", "\U0010ffff", "#", "A", "\"q\""]
TEXT = mix((2, SPECIAL_TEXT), (1, st.text(max_size=5)))  # a special string two times in three
#: text a field expects, three times in four (so that records get past the first check)
SENTENCE = mix((3, ["The dog ran.", "Il cane corse.", "狗跑了。", "It rained, so we stayed.", 'He said "no".',
                    "x"]), (1, TEXT))
NASTY_BYTES = [b"\x00", b"\xff", b"\xfe", b"\xc3", b"\xed\xa0\x80", b"\xef\xbb\xbf", b"\r", b"\n", b"\r\n",
               b"\t", b",", b'"', b"\\", b"<", b">", b"&", b"[", b"]", b"{", b"}", b"\x1f\x8b", b"\x80abc"]


def one_in(n: int) -> list[bool]:
    """True one time in ``n``, as pool items (sampled_from draws uniformly up to ``POOL_LIMIT``)."""
    return [False] * (n - 1) + [True]


# garbled: (nasty bytes inserted, cut short): 1 or 2 insertions one time in four, a cut one in five
_GARBLE = Joint([0] * 6 + [1, 2], one_in(5))
_NASTY = Pool(NASTY_BYTES)


def garble(draw, data: bytes) -> bytes:
    """``data``; one time in four with up to 2 nasty bytes inserted, one in five cut short."""
    inserts, cut = _GARBLE(draw)
    for _ in range(inserts):
        pos = draw(st.integers(0, len(data)))
        data = data[:pos] + _NASTY(draw) + data[pos:]
    if cut:
        data = data[: draw(st.integers(0, len(data)))]
    return data


def garbled(base: Callable) -> st.SearchStrategy[bytes]:
    """The strategy of ``garble(base(draw))`` (``base`` draws the bytes)."""
    return st.composite(lambda draw: garble(draw, base(draw)))()


# the line terminator, and whether the last line has one
_ENDINGS = Joint(["\n", "\n", "\n", "\r\n", "\r"], [False, True])


def lines(draw, line: Callable, max_lines: int = 6, min_lines: int = 0) -> bytes:
    """``min_lines``-``max_lines`` draws of ``line`` joined by a random terminator (with or without a
    final one), as UTF-8."""
    items = [line(draw) for _ in range(draw(st.integers(min_lines, max_lines)))]
    end, final = _ENDINGS(draw)
    return (end.join(items) + (end if final else "")).encode("utf-8", "surrogatepass")


_GZIP = Joint(one_in(4), [0, 0, 0, 1, 20])  # gzipped?, bytes cut from the end of the gzip stream


def maybe_gzip(draw, data: Callable) -> tuple[bool, bytes]:
    """``(gzipped?, bytes)``: one time in four the bytes are gzip-compressed, and then maybe truncated."""
    gz, cut = _GZIP(draw)
    raw = data(draw)
    if not gz:
        return False, raw
    packed = gzip.compress(raw, mtime=0)
    return True, packed[: max(0, len(packed) - cut)]


# JSON: random values plus raw tokens json.dumps never writes
_JSON_LEAF = mix((1, [None, True, False, 0, 1, -1, 2**63, 2**64, 0.5, 1e300, -0.0]), (1, st.integers()),
                 (1, TEXT))


class Marker:
    """A pool item that stands for a decision, not a value (its name is its repr)."""

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return self.name


_LIST, _DICT = Marker("list"), Marker("dict")
# the container shapes st.recursive(leaf, lists | dictionaries, max_leaves=4) draws (2,000 draws):
# 89% a list or an object at the top, 35% nested, 2% three deep
_JSON_TOP = mix((1, _JSON_LEAF), (8, [_LIST, _DICT]))
_JSON_INNER = mix((5, _JSON_LEAF), (2, [_LIST, _DICT]))
_SIZES = Pool([0, 1, 2])


def json_value(draw, depth: int = 0):
    """A JSON value: nested lists and objects (depth at most 3, up to 2 members each) of awkward leaves."""
    value = (_JSON_TOP if depth == 0 else _JSON_INNER if depth < 3 else _JSON_LEAF)(draw)
    if value is _LIST:
        return [json_value(draw, depth + 1) for _ in range(_SIZES(draw))]
    if value is _DICT:
        return {TEXT(draw): json_value(draw, depth + 1) for _ in range(_SIZES(draw))}
    return value


RAW_JSON = [
    "1" * 4301, "-" + "9" * 5000, "1" * 4300, "[" * 100_000, "[" * 990 + "]" * 990, '{"a":' * 3000,
    '"\\ud800"', '"x\\udfff"', '"\\u0000"', "NaN", "Infinity", "-Infinity", "1e999", "9223372036854775808",
    "-1", "true", "0.5", "{}", "[]", '"' + "x" * 300 + '"',
]
_DUMPED = Marker("dumped")  # json.dumps of a json_value
_JSON_TEXT = mix((1, [_DUMPED]), (1, RAW_JSON))


def json_text(draw) -> str:
    """A JSON text: a random value dumped, or a raw token (half and half)."""
    text = _JSON_TEXT(draw)
    return json.dumps(json_value(draw), ensure_ascii=False) if text is _DUMPED else text


def json_object(fields: dict[str, Pool | Callable]) -> Callable:
    """A drawer of an object text with ``fields`` (each value a JSON text): maybe one missing, one
    extra, one replaced by any JSON text."""
    names = list(fields)
    # the odd field, half the time, and what happens to it: 0 deleted, 1 replaced, 2 another key added
    odd = Pool([None] * 3 * len(names) + [(k, action) for k in names for action in range(3)])

    def build(draw) -> str:
        values = {k: v(draw) for k, v in fields.items()}
        change = odd(draw)
        if change is not None:
            name, action = change
            if action == 0:
                del values[name]
            elif action == 1:
                values[name] = json_text(draw)
            else:
                values[TEXT(draw)] = json_text(draw)
        return "{" + ", ".join(f"{json.dumps(k, ensure_ascii=False)}: {v}" for k, v in values.items()) + "}"
    return build


def jstr(values: Pool) -> Pool:
    return values.map(lambda v: json.dumps(v, ensure_ascii=False))


# --------------------------------------------------------------------------- XCOPA jsonl

_JSENTENCE = jstr(SENTENCE)
xcopa_record = json_object({
    "premise": _JSENTENCE, "choice1": _JSENTENCE, "choice2": _JSENTENCE,
    "question": jstr(Pool(["cause", "effect"] * 4 + ["reason", "Cause", ""])),
    "label": Pool(["0", "1"] * 5 + ["2", "-1", "true", '"1"', "1.0"]),
    "idx": mix((3, st.integers(0, 10**6).map(str)), (1, st.integers(-2, 6).map(str)),
               (1, ["9223372036854775807", "9223372036854775808", "1" * 40, "1" * 4301])),
    "changed": Pool(["true", "false"] * 4 + ["0", "null"]),
})
_XCOPA_LINE = Pool([xcopa_record, json_text, TEXT.__call__])  # the drawer of a line, in a mixed file
_MIXED = Pool(one_in(3))  # a file of records two times in three, else of records, JSON texts and text


@st.composite
def xcopa_file(draw) -> bytes:
    line = (lambda d: _XCOPA_LINE(d)(d)) if _MIXED(draw) else xcopa_record
    return garble(draw, lines(draw, line, 3, 1))


XCOPA = xcopa_file()


def read_xcopa(tmp: Path, data: bytes) -> None:
    path = tmp / "et" / "val.et.jsonl"
    path.parent.mkdir(exist_ok=True)
    path.write_bytes(data)
    only_typed_errors(lambda: read_xcopa_jsonl(path))


# --------------------------------------------------------------------------- MuCoW JSON

_JTEXT = jstr(TEXT)
_mucow_error = json_object({"contrastive": _JTEXT, "replacement": _JTEXT,
                            "type": jstr(Pool(["word_sense", ""]))})
_MUCOW_STRINGS = ("source", "reference", "ambig word", "original translation", "sense", "origin")
_mucow_item = json_object({
    **dict.fromkeys(_MUCOW_STRINGS, _JSENTENCE),
    "errors": lambda draw: "[" + ", ".join(_mucow_error(draw) for _ in range(_SIZES(draw))) + "]",
    "id": mix((1, st.integers(-3, 10**6).map(str)),
              (1, ["9223372036854775808", "1" * 4301, "true", '"7"', "null"])),
})
# an array of 1-3 items (and its separator) three times in four, else any JSON text
_MUCOW_SHAPE = mix((3, [(n, sep) for n in (1, 2, 3) for sep in (",", ",\n", " ,\n  ")]), (1, [None]))


@st.composite
def mucow_file(draw) -> bytes:
    shape = _MUCOW_SHAPE(draw)
    if shape is None:
        return garble(draw, json_text(draw).encode("utf-8", "surrogatepass"))
    n, sep = shape
    text = "[\n" + sep.join(_mucow_item(draw) for _ in range(n)) + "\n]"
    return garble(draw, text.encode("utf-8", "surrogatepass"))


MUCOW = mucow_file()


def read_mucow(tmp: Path, data: bytes) -> None:
    path = tmp / "en-de.mucow.scoring.json"
    path.write_bytes(data)
    only_typed_errors(lambda: read_mucow_json(path))


# --------------------------------------------------------------------------- XML (COPA, TMX)

ENCODINGS = ["UTF-8", "utf-8", "UTF-16", "utf-32", "bogus", "latin-1", "ISO-8859-1", "shift_jis", "ascii", "cp1252",
             "UTF-7", ""]
_PLAIN_PROLOG = ["", "", '<?xml version="1.0" encoding="UTF-8"?>\n', '<?xml version="1.0"?>\n']
PROLOG = mix((3, _PLAIN_PROLOG), (1, [f'<?xml version="1.0" encoding="{e}"?>\n' for e in ENCODINGS]))
XML_REFS = ["&amp;", "&lt;", "&quot;", "&#65;", "&#x1F600;", "<![CDATA[x<y]]>", "<!-- c -->", "<?pi x?>"] * 2 + [
    "&e;", "&foo;", "&#0;", "&#xD800;", "&ext;", "&b;", "&", "<", "]]>"]


def doctypes(root: str) -> list[str]:
    return [
        "", "", "", "", "", "", f'<!DOCTYPE {root} SYSTEM "{root}.dtd">\n', f'<!DOCTYPE {root} SYSTEM "{root}.dtd">\n', f'<!DOCTYPE {root} [<!ENTITY e "text">]>\n',
        f'<!DOCTYPE {root} SYSTEM "{root}.dtd" [<!ENTITY e "text">]>\n', f'<!DOCTYPE {root} [<!ENTITY % pe "x">]>\n',
        f"<!DOCTYPE {root} [<!ELEMENT {root} ANY>]>\n", f'<!DOCTYPE {root} [<!ATTLIST item id CDATA "7">]>\n',
        f'<!DOCTYPE {root} [<!ENTITY ext SYSTEM "file:///nonexistent/benchsmith-fuzz">]>\n',
        f'<!DOCTYPE {root} [<!ENTITY a "aaaa"><!ENTITY b "&a;&a;&a;">]>\n', f"<!DOCTYPE {root}>\n",
    ]


def xml_escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&quot;")


_ESCAPED_TEXT = TEXT.map(xml_escape)
XML_TEXT = mix((6, SENTENCE.map(xml_escape)), (1, XML_REFS),
               (1, st.composite(lambda draw: _ESCAPED_TEXT(draw) + draw(st.sampled_from(XML_REFS)))()))


def xml_head(root: str) -> Pool:
    """(prolog, DOCTYPE, encoding): a plain prolog in UTF-8 two times in three; else any prolog,
    DOCTYPE and encoding."""
    plain = [(p, d, "utf-8") for p in _PLAIN_PROLOG for d in ["", f'<!DOCTYPE {root} SYSTEM "{root}.dtd">\n']]
    odd = Joint(PROLOG, doctypes(root), ["utf-8"] * 4 + ["utf-16", "utf-32", "latin-1"])
    return mix((2, plain), (1, odd))


def xml_document(draw, head: Pool, body: Callable) -> bytes:
    """``body`` after a ``head`` draw, encoded as it says."""
    prolog, doctype, enc = head(draw)
    text = prolog + doctype + body(draw)
    return text.encode(enc, "xmlcharrefreplace" if enc == "latin-1" else "surrogatepass")


def rarely(usual: Pool | list, odd: Pool | list | st.SearchStrategy, n: int = 6) -> Pool:
    """A draw from ``odd`` one time in ``n``, else from ``usual``."""
    return mix((n - 1, usual), (1, odd))


_COPA_ID = rarely([st.integers(1, 1000).map(str)], mix((1, [st.integers(-1, 1002).map(str)]), (1, TEXT),
                                                        (1, [None, "", "²", "1.0", " 1", "0x1"])), 8)
# the other attributes' values in one choice; None leaves the attribute out
_COPA_ATTR_NAMES = ("id", "asks-for", "most-plausible-alternative", "x")
_COPA_ATTRS = Joint(rarely(["cause", "effect"], ["reason", "", None], 8),
                    rarely(["1", "2"], ["3", "0", "", None], 8), rarely([None], ["y"], 8))
_CHILD_TAGS = st.lists(st.sampled_from(["p", "a1", "a2", "item", "b"]), max_size=4)
_COPA_CHILDREN = rarely([("p", "a1", "a2")], mix((1, [("p", "a1"), ()]), (1, _CHILD_TAGS)))
# the root, the number of items and whether the root is closed, in one choice
_COPA_FILE = Joint(rarely(["copa-corpus"], ["copa", "item"], 10), rarely([1, 2, 3], [0], 10),
                   [True] * 9 + [False])
_COPA_ELEMENT = Joint(rarely(["item"], ["p", "q"], 10), _COPA_CHILDREN)  # an item's tag and child elements


def copa_body(draw) -> str:
    root, count, closed = _COPA_FILE(draw)
    items = []
    for _ in range(count):
        tag, tags = _COPA_ELEMENT(draw)
        children = "".join(f"<{c}>{XML_TEXT(draw)}</{c}>" for c in tags)
        values = (_COPA_ID(draw), *_COPA_ATTRS(draw))
        attrs = "".join(f' {k}="{xml_escape(v)}"' for k, v in zip(_COPA_ATTR_NAMES, values) if v is not None)
        items.append(f"<{tag}{attrs}>{children}</{tag}>")
    close = f"\n</{root}>\n" if closed else ""
    return f'<{root} version="1.0">\n' + "\n".join(items) + close


_COPA_PROLOG = xml_head("copa-corpus")
COPA = st.composite(lambda draw: garble(draw, xml_document(draw, _COPA_PROLOG, copa_body)))()


def read_copa(tmp: Path, data: bytes) -> None:
    path = tmp / "copa-dev.xml"
    path.write_bytes(data)
    only_typed_errors(lambda: read_copa_xml(path))


# a translation variant's inline element, <seg> tag, language and language attribute, in one choice
_TUV = Joint([None, None, "bpt", "ept", "ph", "hi", "it", "ut", "sub", "seg"], ["seg"] * 6 + ["tuv", None],
             ["en", "de", "de-DE", "deu", "DE", "", "xx-yy", "ü", "zh_CN", "eng", None],
             ["xml:lang"] * 4 + ["lang", "x"])
_TMX_UNIT = Joint(["tu"] * 6 + ["tuv", "body"], [0, 1, 2, 3])  # tag, variants
_TMX_CLOSED = Pool(one_in(5))


def tmx_body(draw) -> str:
    units = []
    for _ in range(draw(st.integers(0, 3))):
        tag, n = _TMX_UNIT(draw)
        variants = []
        for _ in range(n):
            inline, seg_tag, lang, lang_attr = _TUV(draw)
            seg = XML_TEXT(draw) + (f"<{inline}>{XML_TEXT(draw)}</{inline}>" if inline else "")
            seg = f"<{seg_tag}>{seg}</{seg_tag}>" if seg_tag else seg
            variants.append(f'<tuv {lang_attr}="{lang}">{seg}</tuv>' if lang is not None else seg)
        units.append(f"<{tag}>" + "".join(variants) + f"</{tag}>")
    close = "" if _TMX_CLOSED(draw) else "\n</body></tmx>\n"
    return '<tmx version="1.4"><header srclang="de"/><body>\n' + "\n".join(units) + close


_TMX_PROLOG = xml_head("tmx")
TMX = st.composite(lambda draw: maybe_gzip(draw, lambda d: garble(d, xml_document(d, _TMX_PROLOG,
                                                                                   tmx_body))))()


def read_tmx(tmp: Path, packed: tuple[bool, bytes]) -> None:
    gz, data = packed
    path = tmp / ("corpus.tmx.gz" if gz else "corpus.tmx")
    path.write_bytes(data)
    only_typed_errors(lambda: list(tmx.iter_tmx_pairs(path, "de", "en")))


# --------------------------------------------------------------------------- CSV (ComVE, ROCStories)

_NO_HEADER = Marker("no header")
# rows, and how they are written: joined raw half the time, else by csv with a quoting and a line terminator
_CSV_SHAPE = Joint([0, 1, 2, 3, 4], [None] * 4 + [(q, t) for q in (csv.QUOTE_MINIMAL, csv.QUOTE_ALL)
                                                   for t in ("\n", "\r\n")])
_CSV_DELTA = Pool([0, 0, 0, 0, -1, 1])  # one row's cells minus the width


def csv_text(draw, header: Pool, cells: Pool, width: int) -> bytes:
    """A header (five times in six) and rows of about ``width`` cells, written by ``csv`` (random
    quoting) or joined raw."""
    head = header(draw)
    rows = [] if head is _NO_HEADER else [head]
    count, writer = _CSV_SHAPE(draw)
    for _ in range(count):
        rows.append([cells(draw) for _ in range(max(width + _CSV_DELTA(draw), 0))])
    if writer is not None:
        out = io.StringIO()
        csv.writer(out, quoting=writer[0], lineterminator=writer[1]).writerows(rows)
        text = out.getvalue()
    else:
        text = "".join(",".join(r) + "\n" for r in rows)
    return text.encode("utf-8", "surrogatepass")


def csv_headers(headers: list[list[str]]) -> Pool:
    return mix((5, headers), (1, [_NO_HEADER]))


COMVE_READERS = {
    "a": (comve_csv.read_subtask_a, list(comve_csv.A_HEADER)),
    "b": (comve_csv.read_subtask_b, list(comve_csv.B_HEADER)),
    "c": (comve_csv.read_subtask_c, list(comve_csv.C_HEADER)),
    "answers_a": (lambda p: comve_csv.read_answers(p, comve_csv.A_LABELS), None),
    "answers_b": (lambda p: comve_csv.read_answers(p, comve_csv.B_LABELS), None),
    "references": (comve_csv.read_references, None),
}
_COMVE_CELL = mix((1, SENTENCE), (1, ["0", "1", "A", "B", "C", "D", "1363", " 1", ""]))
_COMVE_FILE = Pool(sorted(COMVE_READERS))
_COMVE_HEADERS = {name: csv_headers([header or ["1", "0"], ["id", "sent0"], ["\ufeffid", "sent0", "sent1"]])
                  for name, (_, header) in COMVE_READERS.items()}


@st.composite
def comve_file(draw) -> tuple[str, bytes]:
    name = _COMVE_FILE(draw)
    header = COMVE_READERS[name][1]
    width = len(header) if header else {"answers_a": 2, "answers_b": 2, "references": 4}[name]
    return name, garble(draw, csv_text(draw, _COMVE_HEADERS[name], _COMVE_CELL, width))


def read_comve(tmp: Path, drawn: tuple[str, bytes]) -> None:
    name, data = drawn
    path = tmp / "subtask.csv"
    path.write_bytes(data)
    only_typed_errors(lambda: COMVE_READERS[name][0](path))


_COMVE_IDS = ["1", "2", "3", "4", "5", "6", "7", " 2", "x", ""]
# a row's id and both labels in one choice
_COMVE_ROW = Joint(_COMVE_IDS, ["0", "1"] * 4 + ["2", " 1", ""], ["A", "B", "C"] * 3 + ["D", ""])
_COMVE_SPLIT = Joint([0, 1, 2, 3], range(9))  # rows; the file (or none) reordered, extended or garbled


@st.composite
def comve_split(draw) -> list[bytes]:
    """The six files of a split over a small id pool, so joins meet missing, extra and repeated ids."""
    count, broken = _COMVE_SPLIT(draw)
    rows = []
    for _ in range(count):
        row_id, label_a, label_b = _COMVE_ROW(draw)
        rows.append((row_id, SENTENCE(draw), SENTENCE(draw), label_a, label_b))
    shapes = [  # (header, cells of a row) for a_data, a_answers, b_data, b_answers, c_data, c_answers
        (comve_csv.A_HEADER, lambda r: [r[0], r[1], r[2]]), (None, lambda r: [r[0], r[3]]),
        (comve_csv.B_HEADER, lambda r: [r[0], r[1], r[2], r[1], r[2]]), (None, lambda r: [r[0], r[4]]),
        (comve_csv.C_HEADER, lambda r: [r[0], r[1]]), (None, lambda r: [r[0], r[2], "", r[1]]),
    ]
    files = []
    for n, (header, cells) in enumerate(shapes):
        out = io.StringIO()
        writer = csv.writer(out, lineterminator="\n")
        if header:
            writer.writerow(header)
        mine = list(rows)
        if n == broken:
            mine = draw(st.permutations(mine)) + [(draw(st.sampled_from(_COMVE_IDS)), "t", "u", "0", "A")]
        writer.writerows(cells(r) for r in mine)
        data = out.getvalue().encode("utf-8", "surrogatepass")
        files.append(garble(draw, data) if n == broken else data)
    return files


def read_comve_split(tmp: Path, files: list[bytes]) -> None:
    paths = [tmp / f"{n}.csv" for n in ("a", "a_ans", "b", "b_ans", "c", "c_ans")]
    for p, data in zip(paths, files):
        p.write_bytes(data)
    split = comve_csv.SplitFiles(*paths)
    only_typed_errors(lambda: comve_csv.load_instances(split))


_ROC_HEADERS = csv_headers([
    ["storyid", "storytitle", "sentence1", "sentence2", "sentence3", "sentence4", "sentence5"],
    ["InputStoryid", "InputSentence1", "InputSentence2", "InputSentence3", "InputSentence4",
     "RandomFifthSentenceQuiz1", "RandomFifthSentenceQuiz2", "AnswerRightEnding"],
    ["storyid"], ["sentence1"], ["\ufeffstoryid", "sentence1"], ["id", "text"],
])
ROCSTORIES = st.composite(lambda draw: garble(draw, csv_text(draw, _ROC_HEADERS, SENTENCE, 7)))()


def read_roc(tmp: Path, data: bytes) -> None:
    path = tmp / "stories.csv"
    path.write_bytes(data)
    only_typed_errors(lambda: rocstories.read_rocstories(path))


# --------------------------------------------------------------------------- line files (Moses, MuCoW txt, CoGnition)

_moses_file = st.composite(lambda draw: maybe_gzip(draw, lambda d: garble(d, lines(d, TEXT))))()
MOSES = st.tuples(_moses_file, _moses_file)


def read_moses(tmp: Path, pair: tuple[tuple[bool, bytes], tuple[bool, bytes]]) -> None:
    paths = []
    for name, (gz, data) in zip(("corpus.en", "corpus.zh"), pair):
        path = tmp / (name + (".gz" if gz else ""))
        path.write_bytes(data)
        paths.append(path)
    only_typed_errors(lambda: moses.read_parallel(*paths))
    only_typed_errors(lambda: moses.count_lines(paths[0]))


_FIELDS = [0, 0, 0, 0, -1, 1]  # one time in six a row's field is dropped or one is added


def tsv(fields: list, extra: int) -> str:
    """Tab-joined fields, the last dropped (``extra`` -1) or an "x" added (1)."""
    return "\t".join(fields[:extra] if extra < 0 else fields + ["x"] * extra)


_INT_TEXT = mix((1, st.integers(-2, 10**6).map(str)),
                (1, ["x", "", " 1", "١٢", "1_0", "12345678901234567890123", "9" * 5000, "+1"]))
_WORDS = ["bank", "Bank", "bench", "shore", "bank shore", "", " "]
_KEY_ROW = Joint(_INT_TEXT, ["opensubs", "europarl", ""], _WORDS, _FIELDS)  # and two more words:
_WORD_PAIR = Joint(_WORDS, _WORDS)
_DOMAIN_WORDS = Joint(_WORDS, _WORDS, ["in", "out", "x", ""], _FIELDS)
# text lines; ref lines minus text lines; domain lines; the file (or none) garbled
_MUCOW_TXT_SHAPE = Joint([0, 1, 2, 3], [0, 0, 0, -1, 1], [0, 1, 2, 3], range(6))


def key_row(draw) -> str:
    number, source, word, extra = _KEY_ROW(draw)
    return tsv([number, source, word, *_WORD_PAIR(draw)], extra)


@st.composite
def mucow_txt_files(draw) -> list[bytes]:
    """text/ref/key/domain, mostly of one length; one file (or none) garbled."""
    n, ref_delta, domain_lines, broken = _MUCOW_TXT_SHAPE(draw)
    domain = []
    for _ in range(domain_lines):
        *words, extra = _DOMAIN_WORDS(draw)
        domain.append(tsv([*words, _INT_TEXT(draw), _INT_TEXT(draw)], extra))
    files = [
        "".join(TEXT(draw) + "\n" for _ in range(n)),
        "".join(TEXT(draw) + "\n" for _ in range(n + ref_delta)),
        "".join(key_row(draw) + "\n" for _ in range(n)),
        "".join(row + "\n" for row in domain),
    ]
    data = [f.encode("utf-8", "surrogatepass") for f in files]
    if broken < 4:
        data[broken] = garble(draw, data[broken])
    return data


MUCOW_TXT = mucow_txt_files()


def read_mucow_txt(tmp: Path, files: list[bytes]) -> None:
    paths = [tmp / f"en-de.{k}.txt" for k in ("text", "ref", "key", "domain")]
    for p, data in zip(paths, files):
        p.write_bytes(data)
    only_typed_errors(lambda: mucow_txt.read_translation_suite(*paths))


_COMPOUNDS = Pool(["the dog", "the dog", "red car", "dog", "", " the dog "])
# compounds; one compound line changed?; zh lines cut; zh cut at all?; one en line replaced?; file garbled
_CG_SHAPE = Joint([0, 1, 1, 2], one_in(3), [0, 0, 0, 1, 5], [False, True], one_in(3), range(5))


@st.composite
def cg_triple(draw) -> list[bytes]:
    """en/zh/compound files, mostly in blocks of 5 lines per compound; one file (or none) garbled."""
    blocks, changed, cut, cut_zh, replaced, broken = _CG_SHAPE(draw)
    compounds = [c for _ in range(blocks) for c in [_COMPOUNDS(draw)] * 5]
    if compounds and changed:
        compounds[draw(st.integers(0, len(compounds) - 1))] = _COMPOUNDS(draw)
    en = [f"I saw {c} ." for c in compounds]
    zh = ["我看见了。"] * (len(compounds) - (cut if cut_zh else 0))
    if en and replaced:
        en[draw(st.integers(0, len(en) - 1))] = TEXT(draw)
    data = ["".join(x + "\n" for x in f).encode("utf-8", "surrogatepass") for f in (en, zh, compounds)]
    if broken < 3:
        data[broken] = garble(draw, data[broken])
    return data


def read_cg(tmp: Path, files: list[bytes]) -> None:
    paths = [tmp / f"cg-test.{k}" for k in ("en", "zh", "compound")]
    for p, data in zip(paths, files):
        p.write_bytes(data)
    only_typed_errors(lambda: cognition_files.read_cg_test(*paths))


_LEX_WORD = mix((1, ["dog", "the", "mod0", "", " "]), (1, TEXT))
_LEX_TRANSLATION = mix((1, ["狗", "犬", "", " "]), (1, TEXT))
_LEX_ROW = Joint(_LEX_WORD, [0, 1, 1, 2, 3], _FIELDS)  # word, translations, extra field


def lexicon_line(draw) -> str:
    word, n, extra = _LEX_ROW(draw)
    return tsv([word, "/".join(_LEX_TRANSLATION(draw) for _ in range(n))], extra)


LEXICON = st.composite(lambda draw: garble(draw, lines(draw, lexicon_line)))()


def read_lex(tmp: Path, data: bytes) -> None:
    path = tmp / "lexicon"
    path.write_bytes(data)
    only_typed_errors(lambda: cognition_files.read_lexicon(path))


# --------------------------------------------------------------------------- sense inventories

_OMW_KEYS = Joint(["00004171-a", "00004171-s", "00000001-n", "0000417-a", "x", "00004171-x", "٠٠٠٠٠٠٠١-n",
                   ""], ["deu", "eng", "de", "xx", "", "q!", "zzz"], ["lemma", "def", "exe", ""], _FIELDS)
_OMW_HEADER = Pool(["# Wiktionary\tdeu\thttp://wiktionary.org/\tCC BY-SA", "# x", "#\t\t", "# h\tq!"])


def omw_line(draw) -> str:
    synset, lang, kind, extra = _OMW_KEYS(draw)
    return tsv([synset, f"{lang}:{kind}", TEXT(draw)], extra)


OMW = st.composite(lambda draw: garble(draw, _OMW_HEADER(draw).encode() + b"\n" + lines(draw, omw_line, 5)))()
_BN_KEYS = Joint(["DE", "de", "deu", "EN", "x", "", "de-DE"], ["n", "NOUN", "adj", "ADV", "X", "", "s"],
                 _FIELDS)
_BN_SYNSET = mix((1, ["bn:00008364n", "", " "]), (1, TEXT))
_BN_HEADER = Pool(one_in(2))  # the header line instead of a row, half the time


def babelnet_line(draw) -> str:
    if _BN_HEADER(draw):
        return "synset\tlanguage\tlemma\tpos"
    lang, pos, extra = _BN_KEYS(draw)
    return tsv([_BN_SYNSET(draw), lang, TEXT(draw), pos], extra)


BABELNET = st.composite(lambda draw: garble(draw, lines(draw, babelnet_line, 5)))()


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
