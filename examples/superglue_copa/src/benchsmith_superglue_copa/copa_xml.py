"""Reader of the COPA-resources XML (``datasets/copa-dev.xml``, ``datasets/copa-test.xml``).

The package keeps its own reader beside the builder: an out-of-tree builder has no
``benchsmith/loaders/``. Parsed with defusedxml (a benchsmith dependency): entity declarations
are refused, the ``<!DOCTYPE ... SYSTEM "copa.dtd">`` is never fetched. Every error is a
:class:`~benchsmith.errors.ParseError` naming the file (and the line where the parser knows it).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from xml.etree.ElementTree import ParseError as XMLParseError

import defusedxml.ElementTree as ET
from defusedxml import DefusedXmlException

from benchsmith.errors import ParseError

ASKS_FOR = ("cause", "effect")
HINT = "Restore the file from COPA-resources.tgz (datasets/copa-*.xml)"


@dataclass(frozen=True)
class Item:
    id: int
    asks_for: str
    answer: int  # 1 or 2, as upstream's most-plausible-alternative
    premise: str
    a1: str
    a2: str


def read_items(path: Path) -> Iterator[Item]:
    """The items of one COPA XML file, in file order."""
    try:
        root = ET.parse(path).getroot()
    except XMLParseError as exc:
        raise ParseError(f"not well-formed XML ({exc.msg if hasattr(exc, 'msg') else exc})", path=path,
                         line=exc.position[0], hint=HINT) from None
    except DefusedXmlException as exc:
        raise ParseError(f"refused: {exc}", path=path, hint=HINT) from None
    if root.tag != "copa-corpus":
        raise ParseError(f"root element is <{root.tag}>, expected <copa-corpus>", path=path, line=1, hint=HINT)
    for n, item in enumerate(root.iter("item"), start=1):
        where = f"item #{n} (id {item.get('id')!r})"
        texts = {t: (item.findtext(t) or "").strip() for t in ("p", "a1", "a2")}
        item_id, asks, answer = item.get("id", ""), item.get("asks-for"), item.get("most-plausible-alternative")
        if not item_id.isdigit() or asks not in ASKS_FOR or answer not in ("1", "2") or not all(texts.values()):
            raise ParseError(f"{where}: needs a numeric id, asks-for cause|effect, most-plausible-alternative 1|2 "
                             "and non-empty <p>, <a1>, <a2>", path=path, hint=HINT)
        yield Item(int(item_id), asks, int(answer), texts["p"], texts["a1"], texts["a2"])
