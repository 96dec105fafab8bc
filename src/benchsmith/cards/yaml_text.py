"""YAML text of the card's front matter and the lm-eval task files: libyaml's emitter where it
writes what PyYAML's writes, PyYAML's pure-Python emitter elsewhere.

PyYAML's emitter was ~0.1 s CPU of an XCOPA build (24 documents: the card's metadata and 23 task
files). libyaml's emitter (``yaml.CDumper``; the representer stays PyYAML's, so numbers and keys
are the same) writes other text in three cases, found by comparing the two on random documents:
it escapes characters outside the Basic Multilingual Plane (emoji) that PyYAML writes as they
are; it folds long double-quoted scalars otherwise (a string holding a newline, at the default
width 80); it ends a document holding a scalar that keeps its final newlines (``|+``) with ``...``
where PyYAML does not always. So a
document goes through libyaml only when every string in it (keys included) holds nothing but
printable BMP characters and newlines, ends without a newline, and, where ``newlines`` is false
(the card's default-width front matter), holds no newline. tests/test_cards_yaml.py holds the
two emitters equal on that set (random documents) and on every real release's documents.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import yaml

#: printable characters of the Basic Multilingual Plane (PyYAML's and libyaml's) but the line and
#: paragraph separators (U+2028, U+2029: line breaks to both, escaped alike or not), and the newline
PLAIN = "\n\x20-\x7e\xa0-\u2027\u202a-\ud7ff\ue000-\ufefe\uff00-\ufffd"
#: any character outside :data:`PLAIN`, code point for code point (tests/test_cards_yaml.py: every
#: BMP code point, and samples of the one range past it). Searched for rather than
#: ``fullmatch``-ing ``[PLAIN]*``: ``re`` compiles a class of wide BMP ranges by walking every code
#: point in them (3.6-4.8 ms CPU of every build, once a process), this complement in 0.75 ms
#: (2026-11-27).
NOT_PLAIN = "\x00-\x09\x0b-\x1f\x7f-\x9f\u2028\u2029\ud800-\udfff\ufeff\ufffe\uffff\U00010000-\U0010ffff"
_NOT_PLAIN = re.compile(f"[{NOT_PLAIN}]")


def _strings(obj: Any) -> Iterator[str | None]:
    """Every string in ``obj``, keys included; None for a value of another type than the
    scalars both emitters write the same (it sends the document to PyYAML)."""
    if isinstance(obj, str):
        yield obj
    elif isinstance(obj, dict):
        for k, v in obj.items():
            # a short key, written as a simple key by both (libyaml writes an empty one as `? ''`,
            # and their length limits differ near 128)
            yield k if isinstance(k, str) and 0 < len(k.encode("utf-8")) <= 64 and "\n" not in k else None
            yield from _strings(v)
    elif isinstance(obj, list):
        for v in obj:
            yield from _strings(v)
    elif not (obj is None or isinstance(obj, (bool, int, float))):
        yield None


def libyaml_writes_the_same(obj: Any, *, newlines: bool) -> bool:
    """Whether libyaml's emitter writes ``obj`` as PyYAML's does (the module docstring)."""
    if not getattr(yaml, "__with_libyaml__", False):
        return False
    for s in _strings(obj):
        if s is None or _NOT_PLAIN.search(s) is not None or s.endswith("\n") or (not newlines and "\n" in s):
            return False
    return True


def dump(obj: Any, python: type, libyaml: type | None, *, newlines: bool, **options: Any) -> str:
    """``yaml.dump(obj, Dumper=python, **options)``, through ``libyaml`` (the same dumper on
    libyaml's emitter) when that writes the same text. ``newlines``: whether ``python`` writes a
    string with a newline as a literal block (``|``), which both emitters write alike."""
    fast = libyaml is not None and libyaml_writes_the_same(obj, newlines=newlines)
    return yaml.dump(obj, Dumper=libyaml if fast else python, **options)


def card_yaml(data: dict[str, Any]) -> str:
    """``huggingface_hub.DatasetCardData.to_yaml()`` of the card data whose ``to_dict()`` is ``data``
    (``yaml.dump(data, allow_unicode=True, sort_keys=False)``, stripped)."""
    c_dumper = getattr(yaml, "CDumper", None)
    return dump(data, yaml.Dumper, c_dumper, newlines=False, stream=None, allow_unicode=True,
                sort_keys=False).strip()
