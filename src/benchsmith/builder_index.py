"""What ``benchsmith list`` shows, without importing every builder on each run.

Listing needs each builder's configs, and importing every builder (its loaders, the nlp
adapters, an entry-point builder that may still declare ``datasets.Features``) costs more than
the rest of ``list``. The first ``list`` discovers every builder
as before and writes its summaries to ``$BENCHSMITH_HOME/cache/builder-index.json``
under a key that changes with anything the summaries can depend on:

* benchsmith's version and the Python interpreter (resolved, and its prefix: one venv's
  ``python`` and ``python3.11`` share an index);
* the size and mtime of every file under the ``benchsmith``, ``benchsmith.builders``
  and ``benchsmith.loaders`` packages (a builder's code, its ``languages.tsv`` ...);
* every installed distribution that provides ``benchsmith.builders`` entry points: its
  name and version, and for an editable install (``direct_url.json`` says ``editable``)
  the size and mtime of every file in the packages its entry points name. An editable
  plugin is found through an import hook, not ``sys.path``, so neither of the other keys
  sees a new version in its ``release_notes``. Which distributions those are is itself
  remembered (``builder-index-plugins.json``, :func:`_plugins`) while the ``sys.path``
  folders and the plugins' metadata files are unchanged, not scanned on every ``list``;
* the mtime of every ``sys.path`` directory but the working directory and the running
  script's folder (installing or removing a package, an entry-point builder among them,
  changes its site-packages folder).

A later ``list`` with the same key reads the file instead (a few ms). Builders
registered in this process (a test's toy builder, a plugin imported by hand) are
always summarised live and win over the file; once discovery has run in this
process, the live registry is used alone. A cache that cannot be read or written
(read-only home) is ignored: ``list`` then discovers, as it always did.
"""

from __future__ import annotations

import hashlib
import os
import sys
from pathlib import Path
from typing import Any

from benchsmith import cache

FILE = "builder-index.json"
#: the installed plugin distributions as last scanned (:func:`_plugins`)
PLUGINS_FILE = "builder-index-plugins.json"


def summary(name: str, cls: Any) -> dict[str, Any]:
    """One builder as ``list`` shows it."""
    b = cls()
    return {
        "pretty_name": cls.pretty_name or name,
        "versions": cls.versions(),
        "default_version": b.version,
        "configs": [c.name for c in b.configs()],
        "license": cls.license,
    }


def _package_dirs() -> list[Path]:
    import importlib.util

    import benchsmith

    dirs = [Path(p) for p in benchsmith.__path__]
    for pkg in ("benchsmith.builders", "benchsmith.loaders"):
        spec = importlib.util.find_spec(pkg)
        if spec is not None and spec.submodule_search_locations:
            dirs.extend(Path(p) for p in spec.submodule_search_locations)
    return dirs


def _walk(h: Any, root: Path) -> None:
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d != "__pycache__")
        for f in sorted(filenames):
            try:
                st = os.stat(os.path.join(dirpath, f))
            except OSError:
                continue
            h.update(f"{dirpath}/{f}\0{st.st_size}\0{st.st_mtime_ns}\n".encode())


def plugin_distributions() -> list[tuple[str, str, list[Path]]]:
    """``(name, version, package folders)`` of every installed distribution with a
    ``benchsmith.builders`` entry point; the folders only for editable installs."""
    return [d[:3] for d in _scan_distributions()]


def _scan_distributions() -> list[tuple[str, str, list[Path], str | None]]:
    """:func:`plugin_distributions` with each one's metadata folder (None where unknown)."""
    import importlib.util
    import json
    from importlib.metadata import distributions

    out = []
    for dist in distributions():
        eps = [ep for ep in dist.entry_points if ep.group == "benchsmith.builders"]
        if not eps:
            continue
        folders: list[Path] = []
        try:
            direct = json.loads(dist.read_text("direct_url.json") or "{}")
        except ValueError:
            direct = {}
        if isinstance(direct, dict) and (direct.get("dir_info") or {}).get("editable"):
            for top in sorted({ep.value.split(":")[0].split(".")[0] for ep in eps}):
                try:
                    spec = importlib.util.find_spec(top)  # a top-level name: nothing is imported
                except (ImportError, ValueError):
                    spec = None
                if spec is not None and spec.submodule_search_locations:
                    folders.extend(Path(p) for p in spec.submodule_search_locations)
                elif spec is not None and spec.origin:
                    folders.append(Path(spec.origin))
        where = getattr(dist, "_path", None)  # PathDistribution's folder (no public name for it)
        out.append((dist.metadata["Name"] or "", dist.version or "", folders, str(where) if where else None))
    return sorted(out, key=lambda d: (d[0], d[1]))


def _metadata_stamp(folder: str | None) -> str | None:
    """Size and mtime of a distribution's files, or None (unknown folder, unreadable)."""
    if folder is None:
        return None
    try:
        return ";".join(f"{e.name}:{e.stat().st_size}:{e.stat().st_mtime_ns}"
                        for e in sorted(os.scandir(folder), key=lambda e: e.name))
    except OSError:
        return None


def _plugins(site: str) -> list[tuple[str, str, list[Path]]]:
    """:func:`plugin_distributions`, remembered in ``PLUGINS_FILE`` while the ``sys.path`` folders
    (``site``: their mtimes) and the plugins' own metadata files are unchanged.

    Scanning reads the metadata of every installed distribution (168 here: ~0.05 s CPU, an
    eighth of ``list``). A plugin appears or goes only with a change to a ``sys.path`` folder
    (pip adds or removes its ``.dist-info``); a plugin reinstalled or rewritten in place changes
    its own metadata files, which are compared one by one."""
    data = cache.read_json(cache.cache_path(PLUGINS_FILE))
    if (isinstance(data, dict) and data.get("site") == site and isinstance(data.get("plugins"), list)
            and all(isinstance(p, list) and len(p) == 4 and p[3] is not None
                    and _metadata_stamp(p[3][0]) == p[3][1] for p in data["plugins"])):
        return [(n, v, [Path(f) for f in folders]) for n, v, folders, _ in data["plugins"]]
    scanned = _scan_distributions()
    remembered = [[n, v, [str(f) for f in folders],
                   None if where is None else [where, _metadata_stamp(where)]]
                  for n, v, folders, where in scanned]
    cache.write_json(cache.cache_path(PLUGINS_FILE), {"site": site, "plugins": remembered})
    return [d[:3] for d in scanned]


def stamp() -> str:
    """The key the cached summaries are valid for (see module docstring)."""
    import benchsmith

    # the interpreter by what it is (python and python3.11 of one venv are the same one)
    exe = os.path.realpath(sys.executable)
    h = hashlib.sha256(f"{benchsmith.__version__}\0{sys.version}\0{exe}\0{sys.prefix}".encode())
    for root in _package_dirs():
        _walk(h, root)
    site = _site_stamp()
    h.update(site.encode())
    for name, version, folders in _plugins(site):
        h.update(f"dist\0{name}\0{version}\n".encode())
        for folder in folders:
            if folder.is_file():
                st = folder.stat()
                h.update(f"{folder}\0{st.st_size}\0{st.st_mtime_ns}\n".encode())
            else:
                _walk(h, folder)
    return h.hexdigest()


def _site_stamp() -> str:
    """The mtime of every ``sys.path`` folder but the working directory and the script's."""
    lines = []
    cwd = os.getcwd()
    script_dir = os.path.dirname(os.path.abspath(sys.argv[0])) if sys.argv and sys.argv[0] else None
    for i, p in enumerate(sys.path):
        # `python -c`/`-m` put the working directory first, a script (the `benchsmith` console
        # script) its own folder: neither is where builders are installed, and keying on them
        # would make `benchsmith list` and `python -m benchsmith.cli list` evict each other's index
        if not p or os.path.abspath(p) == cwd or (i == 0 and os.path.abspath(p) == script_dir):
            continue
        try:
            lines.append(f"{p}\0{os.stat(p).st_mtime_ns}\n")
        except OSError:
            lines.append(f"{p}\0-\n")
    return "".join(lines)


def _read(key: str) -> dict[str, Any] | None:
    data = cache.read_json(cache.cache_path(FILE))
    if not isinstance(data, dict) or data.get("key") != key or not isinstance(data.get("builders"), dict):
        return None
    return data["builders"]


def _write(key: str, summaries: dict[str, Any]) -> None:
    cache.write_json(cache.cache_path(FILE), {"key": key, "builders": summaries})


def summaries() -> dict[str, dict[str, Any]]:
    """Every builder's summary, sorted by name (see module docstring)."""
    from benchsmith import builder

    if builder._DISCOVERED:
        return {n: summary(n, c) for n, c in builder.builders().items()}
    key = stamp()
    cached = _read(key)
    live = dict(builder._REGISTRY)  # registered in this process before any discovery
    if cached is None:
        builder.discover()
        out = {n: summary(n, c) for n, c in builder.builders().items()}
        # only what discovery finds goes to the file, not this process's own registrations
        _write(key, {n: s for n, s in out.items() if n not in live or live[n] is not builder._REGISTRY[n]
                     or builder._REGISTRY[n].__module__.startswith("benchsmith.builders.")})
        return out
    merged = dict(cached)
    merged.update({n: summary(n, c) for n, c in live.items()})
    return dict(sorted(merged.items()))
