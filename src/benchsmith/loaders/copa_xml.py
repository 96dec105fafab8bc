"""Reader for the COPA-resources XML (``datasets/copa-dev.xml``, ``datasets/copa-test.xml``).

Upstream layout (Roemmele et al. 2011, ``COPA-resources.tgz``)::

    <copa-corpus version="1.0">
      <item id="1" asks-for="cause" most-plausible-alternative="1">
        <p>My body cast a shadow over the grass.</p>
        <a1>The sun was rising.</a1>
        <a2>The grass was cut.</a2>
      </item>
      ...

Ids run 1-500 in the dev file and 501-1000 in the test file. The reader is a SAX
parser so every record carries the line of its ``<item>`` tag and every error names
``file:line``. The ``<!DOCTYPE ... SYSTEM "copa.dtd">`` is accepted and never fetched
(external entities are off): the DTD is not shipped in every copy and we check the
structure ourselves. The parser is defusedxml's SAX parser: an entity declaration
in a DTD (``<!DOCTYPE x [<!ENTITY e "...">]>``, the door to "billion laughs" and
external-entity attacks) is a :class:`~benchsmith.errors.ParseError`, and so is a
reference to an entity nobody declared (expat would skip it silently, dropping text
when the document names an external DTD). Upstream uses neither.
"""

from __future__ import annotations

import xml.sax
import xml.sax.handler
from dataclasses import dataclass
from pathlib import Path
from typing import NoReturn

import defusedxml.sax
from defusedxml import DefusedXmlException, EntitiesForbidden

from benchsmith.errors import BenchsmithError, ParseError
from benchsmith.loaders.rawfile import check_declared_encoding, open_raw, unreadable

ASKS_FOR = ("cause", "effect")
_HINT = "Restore the file from COPA-resources.tgz (datasets/copa-*.xml)"


@dataclass(frozen=True)
class CopaItem:
    """One COPA item. ``label`` is 0-based (``most-plausible-alternative`` - 1)."""

    id: int
    asks_for: str
    label: int
    premise: str
    alternative1: str
    alternative2: str
    line: int


class _Handler(xml.sax.handler.ContentHandler):
    def __init__(self, path: Path) -> None:
        super().__init__()
        self.path = path
        self.items: list[CopaItem] = []
        self.locator: xml.sax.xmlreader.Locator | None = None
        self._item: dict | None = None
        self._field: str | None = None
        self._text: list[str] = []
        self._seen: dict[int, int] = {}
        self._root_seen = False

    def setDocumentLocator(self, locator) -> None:
        self.locator = locator

    @property
    def lineno(self) -> int | None:
        return self.locator.getLineNumber() if self.locator else None

    def _fail(self, message: str, line: int | None = None) -> NoReturn:
        raise ParseError(message, path=self.path, line=line or self.lineno, hint=_HINT)

    def startElement(self, name: str, attrs) -> None:
        if not self._root_seen:
            if name != "copa-corpus":
                self._fail(f"root element is <{name}>; expected <copa-corpus>")
            self._root_seen = True
            return
        if name == "item":
            if self._item is not None:
                self._fail("<item> nested inside another <item>")
            self._item = {"attrs": dict(attrs), "line": self.lineno, "fields": {}}
            return
        if name in ("p", "a1", "a2"):
            if self._item is None:
                self._fail(f"<{name}> outside an <item>")
            if name in self._item["fields"]:
                self._fail(f"<{name}> appears twice in item {self._item['attrs'].get('id')!r}")
            self._field, self._text = name, []
            return
        self._fail(f"unexpected element <{name}>; expected <item>, <p>, <a1> or <a2>")

    def skippedEntity(self, name: str) -> None:
        self._fail(f"reference to undeclared entity &{name}; (expat would drop it); expected plain text "
                   "or a predefined entity (&amp; &lt; &gt; &quot; &apos;)")

    def characters(self, content: str) -> None:
        if self._field is not None:
            self._text.append(content)

    def endElement(self, name: str) -> None:
        if name in ("p", "a1", "a2") and self._item is not None:
            self._item["fields"][name] = "".join(self._text)
            self._field = None
        elif name == "item" and self._item is not None:
            self.items.append(self._finish(self._item))
            self._item = None

    def _finish(self, item: dict) -> CopaItem:
        attrs, line, fields = item["attrs"], item["line"], item["fields"]
        raw_id = attrs.get("id")
        if raw_id is None or not (raw_id.isascii() and raw_id.isdigit()):  # int() rejects e.g. "²"
            self._fail(f"item id is {raw_id!r}; expected a positive integer", line)
        ident = int(raw_id)
        if ident in self._seen:
            self._fail(f"item id {ident} repeats the item at line {self._seen[ident]}", line)
        self._seen[ident] = line
        asks = attrs.get("asks-for")
        if asks not in ASKS_FOR:
            self._fail(f"item {ident}: asks-for is {asks!r}; expected one of {list(ASKS_FOR)}", line)
        mpa = attrs.get("most-plausible-alternative")
        if mpa not in ("1", "2"):
            self._fail(f"item {ident}: most-plausible-alternative is {mpa!r}; expected '1' or '2'", line)
        for f in ("p", "a1", "a2"):
            if not fields.get(f, "").strip():
                state = "is empty" if f in fields else "is missing"
                self._fail(f"item {ident}: <{f}> {state}; every item needs <p>, <a1> and <a2>", line)
        return CopaItem(ident, asks, int(mpa) - 1, fields["p"], fields["a1"], fields["a2"], line)


def read_copa_xml(path: str | Path) -> list[CopaItem]:
    """Parse one COPA XML file into items in file order.

    Raises:
        ParseError: malformed XML, an encoding the XML parser cannot read (an unknown
            or multi-byte one in the declaration), a declared single-byte encoding whose
            file is UTF-8 (mojibake: :func:`~benchsmith.loaders.rawfile.check_declared_encoding`), a DTD entity declaration or an
            undeclared entity, an unknown element, a bad or repeated id, an
            ``asks-for`` other than cause/effect, a label other than 1/2, or a
            missing/empty premise or alternative (``path`` and ``line`` set).
        SourceError: the path cannot be read (missing, a directory).
    """
    path = Path(path)
    check_declared_encoding(path)  # UTF-8 bytes declared latin-1 would parse into mojibake
    handler = _Handler(path)
    parser = defusedxml.sax.make_parser()
    # The external DTD subset (copa.dtd) is reported to the external-entity handler; with
    # external general entities off the stock handler accepts it without fetching anything,
    # where defusedxml's would reject upstream's own DOCTYPE. Entity declarations stay forbidden,
    # so no external entity can be declared, let alone fetched.
    parser.forbid_external = False
    parser.setFeature(xml.sax.handler.feature_external_ges, False)  # never fetch copa.dtd
    parser.setFeature(xml.sax.handler.feature_external_pes, False)
    parser.setContentHandler(handler)
    try:
        with open_raw(path) as fh:
            parser.parse(fh)
    except BenchsmithError:
        raise
    except xml.sax.SAXParseException as exc:
        raise ParseError(
            f"malformed XML: {exc.getMessage()}", path=path, line=exc.getLineNumber(), hint=_HINT
        ) from None
    except EntitiesForbidden as exc:
        raise ParseError(
            f"DTD declares entity {exc.name!r}; expected no entity declarations (they can expand "
            "without bound or pull in outside files)", path=path, line=handler.lineno, hint=_HINT
        ) from None
    except DefusedXmlException as exc:  # pragma: no cover - forbid_dtd and forbid_external are off
        raise ParseError(f"forbidden XML construct: {exc}", path=path, line=handler.lineno, hint=_HINT) from None
    except OSError as exc:
        raise unreadable(path, exc) from None
    except (LookupError, ValueError) as exc:  # encoding="bogus"; multi-byte encodings (utf-32, shift_jis)
        raise ParseError(
            f"cannot read the XML declaration's encoding ({exc}); expected UTF-8",
            path=path, line=handler.lineno or 1, hint=_HINT,
        ) from None
    if not handler.items:
        raise ParseError("no <item> found; expected COPA items", path=path, hint=_HINT)
    return handler.items
