"""The translation variant's noun test, and a cache of "no tagger for this language".

The noun test uses the source language's POS tagger (``benchsmith.nlp.tag.get_tagger``:
spaCy, else stanza; nothing is downloaded). Asking whether one exists imports spaCy and
stanza (2.5-5 s here) and, for every language but English in this environment, ends in
"none installed", after which the harvest uses the sense inventory's POS. That answer is
cached in ``$BENCHSMITH_HOME/cache/mucow-pos-probe.json``, keyed by the language, the
backend and what could change it: the names of the installed distributions (a spaCy
pipeline is a package: installing, removing or upgrading any package changes the key) and
the stanza models folder. A found tagger is never cached (it has to be loaded anyway).

:func:`start_probe` asks in a background thread, so the probe overlaps the alignment.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import sys
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any

from benchsmith import cache
from benchsmith.builders.mucow.senses import AmbiguousWord
from benchsmith.builders.mucow.suites import Occurrence
from benchsmith.errors import ConfigError
from benchsmith.nlp.tag import get_tagger, is_noun, stanza_dir
from benchsmith.nlp.tokenize import iso1

log = logging.getLogger(__name__)

NounTest = Callable[[list[Occurrence]], list[bool]]
CACHE_NAME = "mucow-pos-probe.json"


def cache_path() -> Path:
    return cache.cache_path(CACHE_NAME)


def environment_key(lang: str, backend: str) -> str:
    """What decides whether a tagger for ``lang`` exists: installed distributions and stanza's models."""
    dists = sorted({name for entry in sys.path if entry and os.path.isdir(entry)
                    for name in os.listdir(entry) if name.endswith((".dist-info", ".egg-info", ".egg-link"))})
    root = stanza_dir()
    stanza = [str(root), (root / "resources.json").is_file(), (root / lang / "pos").is_dir()]
    blob = json.dumps([lang, backend, dists, stanza], sort_keys=True)
    return hashlib.sha256(blob.encode()).hexdigest()


def _read_cache(path: Path) -> dict[str, Any]:
    data = cache.read_json(path)
    return data if isinstance(data, dict) else {}


def _remember_none(path: Path, key: str, lang: str, backend: str, message: str) -> None:
    entries = _read_cache(path)
    entries[key] = {"lang": lang, "backend": backend, "tagger": None, "message": message}
    if not cache.write_json(path, entries):  # a cache that cannot be written only costs time
        log.debug("POS probe cache %s not written", path)


def probe(lang: str, backend: str = "auto") -> Any:
    """The tagger for ``lang``, or the ConfigError that says there is none (cached: see module docstring)."""
    code = iso1(lang)
    path = cache_path()
    key = environment_key(code, backend)
    hit = _read_cache(path).get(key) if backend == "auto" else None
    if hit is not None and hit.get("tagger") is None:
        return ConfigError(hit["message"])
    try:
        return get_tagger(code, backend)
    except ConfigError as exc:
        if backend == "auto":
            _remember_none(path, key, code, backend, exc.message)
        return exc


def start_probe(lang: str, backend: str) -> Future:
    """:func:`probe` in a background thread."""
    pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="mucow-pos-probe")
    future = pool.submit(probe, lang, backend)
    pool.shutdown(wait=False)
    return future


def noun_test(found: Any, backend: str, words: dict[str, AmbiguousWord]) -> tuple[NounTest, str]:
    """Occurrence-level noun test from a probe's answer: the tagger, else (``auto``) the inventory's POS."""
    if isinstance(found, ConfigError):
        if backend != "auto":
            raise found
        log.warning("%s; falling back to the sense inventory's POS for the translation variant", found.message)

        def by_inventory(occs: list[Occurrence]) -> list[bool]:
            return [words[o.word].sense(o.sense).is_noun for o in occs]

        return by_inventory, "inventory"

    def by_tagger(occs: list[Occurrence]) -> list[bool]:
        tags = found.tag([list(o.src_tokens) for o in occs])
        return [is_noun(t[o.i]) for o, t in zip(occs, tags)]

    return by_tagger, f"{found.backend}:{found.model}"
