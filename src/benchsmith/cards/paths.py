"""Keep the build machine's paths out of everything a release publishes.

A manifest or a report can carry an absolute path of the machine that built it (a skipped
split's reason is ``str(MissingSourceError)``, which starts with the missing file's full
path). The card, croissant.json and the lm-eval configs are read on other machines and
published to the Hub, so every string they take from the manifest or the report goes
through :func:`scrub`: an absolute path becomes ``…/<parent>/<name>`` (its last two
components), which still says which file was meant and is the same on every machine.
"""

from __future__ import annotations

import re
from typing import Any

#: an absolute POSIX path of two components or more (``/a/b``), not the path part of a URL
#: (``https://host/x``: the first slash follows ``:``/``/``) nor a ratio or ``and/or`` (the
#: slash follows a word character); or a Windows drive path (``C:\\x``).
_ABSOLUTE = re.compile(
    r"(?<![\w.:/~\\-])(?:/[^\s/'\"`|()\[\]<>,;:*?]+){2,}/?"
    r"|\b[A-Za-z]:\\(?:[^\s\\'\"`|()\[\]<>,;:*?]+\\?)+"
)
#: ``<absolute path>[:<line>]: `` at the start of a message (``BenchsmithError.__str__``).
_LEADING = re.compile(r"^\s*(?:" + _ABSOLUTE.pattern + r")(?::\d+)?:\s+")


#: paths that name the same thing on every machine (``/dev/urandom``): kept as written
_SYSTEM = ("/dev/", "/proc/", "/sys/")


def _shorten(match: re.Match[str]) -> str:
    if match.group(0).startswith(_SYSTEM):
        return match.group(0)
    parts = [p for p in re.split(r"[/\\]", match.group(0)) if p]
    return "…/" + "/".join(parts[-2:])


def scrub(text: Any) -> Any:
    """``text`` with every absolute local path shortened to ``…/<parent>/<name>``; non-strings
    are returned unchanged (so it can serve as a Jinja ``finalize``)."""
    if not isinstance(text, str) or ("/" not in text and "\\" not in text):
        return text
    return _ABSOLUTE.sub(_shorten, text)


def reason(text: str) -> str:
    """A one-line reason (a skipped split's) without the leading ``<path>: `` of an error message."""
    return scrub(_LEADING.sub("", text, count=1))


def scrub_tree(obj: Any) -> Any:
    """:func:`scrub` applied to every string of a JSON-like tree (keys included)."""
    if isinstance(obj, str):
        return scrub(obj)
    if isinstance(obj, dict):
        return {scrub(k): scrub_tree(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [scrub_tree(v) for v in obj]
    return obj
