"""Moses tokenisation (sacremoses) behind one small adapter.

Language codes are accepted as ISO 639-1 (``de``) or ISO 639-3 (``deu``), since
OPUS/Tatoeba and Open Multilingual Wordnet use the latter; sacremoses itself is
asked with the two-letter code (it falls back to its generic rules for a
language it has no special rules for, which is what Moses does).
"""

from __future__ import annotations

from functools import lru_cache

from benchsmith.errors import ConfigError

#: ISO 639-3 -> ISO 639-1 for the languages MuCoW, OPUS and OMW use here.
ISO3_TO_1: dict[str, str] = {
    "ces": "cs", "deu": "de", "eng": "en", "est": "et", "fin": "fi", "fra": "fr", "lav": "lv",
    "lit": "lt", "ron": "ro", "rus": "ru", "spa": "es", "tur": "tr", "ita": "it", "nld": "nl",
    "por": "pt", "pol": "pl", "zho": "zh", "cmn": "zh", "jpn": "ja", "ukr": "uk", "swe": "sv",
}
ISO1_TO_3: dict[str, str] = {v: k for k, v in ISO3_TO_1.items() if k != "cmn"}


def _code(lang: str, width: int, table: dict[str, str]) -> str:
    """``lang``'s primary subtag when it is ``width`` letters long, else its entry in ``table``."""
    code = lang.strip().lower().replace("_", "-").split("-")[0]
    if len(code) == width:
        return code
    if code in table:
        return table[code]
    raise ConfigError(
        f"unknown language code {lang!r}",
        hint=f"Use an ISO 639-1 or 639-3 code, e.g. {', '.join(sorted(table)[:6])}...",
    )


def iso1(lang: str) -> str:
    """``deu``/``de``/``de-DE``/``de_DE`` -> ``de`` (unknown 3-letter codes are refused)."""
    return _code(lang, 2, ISO3_TO_1)


def iso3(lang: str) -> str:
    """``de``/``deu``/``de-DE`` -> ``deu``."""
    return _code(lang, 3, ISO1_TO_3)


def same_language(a: str, b: str) -> bool:
    """Whether two codes (any of the accepted spellings) name one language."""
    try:
        return iso1(a) == iso1(b)
    except ConfigError:
        return a.lower() == b.lower()


class Tokenizer:
    """Moses tokeniser for one language; ``escape`` is off so tokens stay as written."""

    def __init__(self, lang: str) -> None:
        try:
            from sacremoses import MosesTokenizer
        except ModuleNotFoundError as exc:  # pragma: no cover - exercised only without the extra
            raise ConfigError(
                "sacremoses is not installed", hint="pip install 'benchsmith[nlp]'"
            ) from exc
        self.lang = iso1(lang)
        self._moses = MosesTokenizer(lang=self.lang)

    def tokenize(self, text: str) -> list[str]:
        return self._moses.tokenize(text, escape=False, aggressive_dash_splits=False)

    def __call__(self, text: str) -> list[str]:
        return self.tokenize(text)


@lru_cache(maxsize=32)
def get_tokenizer(lang: str) -> Tokenizer:
    """A cached :class:`Tokenizer` (building one compiles many regexes)."""
    return Tokenizer(lang)
