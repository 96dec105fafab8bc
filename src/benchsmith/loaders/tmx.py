"""TMX 1.4 translation memories (the format OPUS ships as ``*.tmx``), streamed.

Each ``<tu>`` becomes a :class:`TmxUnit` with the text of its ``<seg>`` per
language (``xml:lang``, or ``lang`` in TMX 1.1). Inline markup inside a segment
(``<bpt>``, ``<ept>``, ``<ph>``, ``<it>``, ``<ut>``) is formatting code, not text:
its content is dropped while the text around it is kept; ``<hi>``/``<sub>`` keep
their text. Parsing is incremental (``xml.parsers.expat``), so memory stays flat
whatever the file size. Errors are :class:`~benchsmith.errors.ParseError` naming
the file and line: malformed XML, an encoding the parser cannot read, a declared
single-byte encoding whose bytes are UTF-8 (mojibake, see
:func:`~benchsmith.loaders.rawfile.check_declared_encoding`), a DTD entity
declaration or an undeclared entity (as defusedxml forbids them: they can expand
without bound or pull in outside files; OPUS uses none), a ``<tuv>`` without a
language, a ``<seg>`` outside a ``<tuv>``, a unit with two segments in one language.
An unreadable path is a :class:`~benchsmith.errors.SourceError`.
"""

from __future__ import annotations

import xml.parsers.expat
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from benchsmith.errors import BenchsmithError, ParseError
from benchsmith.loaders.moses import GZIP_ERRORS, gzip_error, open_binary
from benchsmith.loaders.rawfile import check_declared_encoding, short, unreadable
from benchsmith.nlp.tokenize import same_language

#: inline elements whose content is markup code, not text
CODE_ELEMENTS = frozenset({"bpt", "ept", "ph", "it", "ut"})
XML_LANG = "http://www.w3.org/XML/1998/namespace lang"


@dataclass(frozen=True)
class TmxUnit:
    """One translation unit; ``line`` is where its ``<tu>`` starts."""

    line: int
    segments: dict[str, str] = field(default_factory=dict)

    def get(self, lang: str) -> str | None:
        """The segment in ``lang`` (``de`` matches ``de``, ``de-DE``, ``DE``; ``deu`` matches ``de``)."""
        for code, text in self.segments.items():
            if same_language(code, lang):
                return text
        return None


def iter_tmx(path: str | Path, chunk: int = 1 << 20) -> Iterator[TmxUnit]:
    """Stream the translation units of a TMX file (``.tmx`` or ``.tmx.gz``)."""
    path = Path(path)
    # UTF-8 bytes declared latin-1 would parse into mojibake (one pass more, only for such a declaration)
    check_declared_encoding(path, opener=lambda p, _mode: open_binary(p))
    parser = xml.parsers.expat.ParserCreate(namespace_separator=" ")
    done: list[TmxUnit] = []
    state: dict = {"tu": None, "lang": None, "seg": None, "code_depth": 0, "tuv_line": 0}

    def start(name: str, attrs: dict) -> None:
        line = parser.CurrentLineNumber
        if name == "tu":
            state["tu"] = (line, {})
        elif name == "tuv":
            lang = attrs.get(XML_LANG) or attrs.get("lang") or attrs.get("xml:lang")
            if not lang:
                raise ParseError("<tuv> has no xml:lang attribute", path=path, line=line,
                                 hint="Every TMX variant must name its language")
            state["lang"], state["tuv_line"] = lang, line
        elif name == "seg":
            if state["lang"] is None:
                raise ParseError("<seg> outside a <tuv>; expected <tu><tuv xml:lang=...><seg>", path=path,
                                 line=line, hint="The file is not TMX; re-download it")
            state["seg"] = []
        elif state["seg"] is not None and name in CODE_ELEMENTS:
            state["code_depth"] += 1

    def end(name: str) -> None:
        if name == "seg" and state["seg"] is not None:
            tu = state["tu"]
            if tu is None:
                raise ParseError("<seg> outside a <tu>", path=path, line=parser.CurrentLineNumber)
            lang = state["lang"]
            if lang in tu[1]:
                raise ParseError(f"two segments in language {short(lang)} in one unit", path=path,
                                 line=state["tuv_line"])
            tu[1][lang] = " ".join("".join(state["seg"]).split())
            state["seg"] = None
        elif name in CODE_ELEMENTS and state["seg"] is not None:
            state["code_depth"] -= 1
        elif name == "tuv":
            state["lang"] = None
        elif name == "tu" and state["tu"] is not None:
            done.append(TmxUnit(state["tu"][0], state["tu"][1]))
            state["tu"] = None

    def text(data: str) -> None:
        if state["seg"] is not None and state["code_depth"] == 0:
            state["seg"].append(data)

    def entity_decl(name: str, *_: object) -> None:
        raise ParseError(f"DTD declares entity {short(name)}; expected no entity declarations (they can "
                         "expand without bound or pull in outside files)", path=path,
                         line=parser.CurrentLineNumber, hint="The file is not an OPUS TMX; re-download it")

    def skipped_entity(name: str, is_parameter_entity: bool) -> None:
        raise ParseError(f"reference to undeclared entity &{name}; (expat would drop it)", path=path,
                         line=parser.CurrentLineNumber, hint="The file is not an OPUS TMX; re-download it")

    parser.StartElementHandler = start
    parser.EndElementHandler = end
    parser.CharacterDataHandler = text
    parser.EntityDeclHandler = entity_decl
    parser.UnparsedEntityDeclHandler = entity_decl
    parser.SkippedEntityHandler = skipped_entity
    try:
        fh = open_binary(path)
    except OSError as exc:
        raise unreadable(path, exc) from None
    with fh:
        while True:
            try:
                block = fh.read(chunk)
            except GZIP_ERRORS as exc:
                raise gzip_error(path, exc, parser.CurrentLineNumber) from None
            except OSError as exc:
                raise unreadable(path, exc) from None
            try:
                parser.Parse(block, not block)
            except BenchsmithError:
                raise
            except xml.parsers.expat.ExpatError as exc:
                raise ParseError(f"malformed XML: {xml.parsers.expat.errors.messages[exc.code]}", path=path,
                                 line=exc.lineno, hint="The file is truncated or not TMX; re-download it") from None
            except (LookupError, ValueError) as exc:  # encoding="bogus"; multi-byte encodings (utf-32)
                raise ParseError(f"cannot read the XML declaration's encoding ({exc}); expected UTF-8",
                                 path=path, line=parser.CurrentLineNumber,
                                 hint="Re-download the file; OPUS ships TMX as UTF-8") from None
            yield from done
            done.clear()
            if not block:
                break


def iter_tmx_pairs(path: str | Path, src: str, tgt: str) -> Iterator[tuple[int, str, str]]:
    """``(line, source, target)`` for every unit that has both languages (others are skipped)."""
    for unit in iter_tmx(path):
        s, t = unit.get(src), unit.get(tgt)
        if s is not None and t is not None:
            yield unit.line, s, t
