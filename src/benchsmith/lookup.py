"""A local release named on the command line: a folder, or ``NAME[/VERSION]`` in a registry.

Every command that takes a RELEASE reads it here (``validate``, ``show``, ``publish``,
``evaluate``...); :mod:`benchsmith.reference` adds Hub revisions (``hf://datasets/ORG/NAME@REV``)
for the commands that compare releases.
"""

from __future__ import annotations

import logging
from pathlib import Path

from benchsmith import seal
from benchsmith.builder import is_registered
from benchsmith.cache import benchsmith_home
from benchsmith.errors import ConfigError, did_you_mean
from benchsmith.registry import in_registry, recover
from benchsmith.release import Release, find_releases

logger = logging.getLogger(__name__)


def default_registry() -> Path:
    """``$BENCHSMITH_HOME/registry``: the registry a command uses without ``--registry``."""
    return benchsmith_home() / "registry"


def registry_path(registry: Path | None) -> Path:
    """``--registry`` when given, else :func:`default_registry`."""
    return Path(registry) if registry is not None else default_registry()


def _how_to_get(name: str) -> str:
    """What to do about a release not in the registry: build it when ``name`` is a dataset
    (never "build nothing" for a name no builder has)."""
    if is_registered(name):
        return f"Build it with `benchsmith build {name}` or pass a release directory."
    return f"No dataset is named {name!r} either (`benchsmith list` shows them): pass a release directory."


def resolve_release(arg: str, registry: Path | None = None) -> Release:
    """A local release: a folder, or ``NAME`` / ``NAME/VERSION`` in the registry (newest version)."""
    p = Path(arg)
    if p.exists():
        if (p / "release.json").is_file() and in_registry(p):
            recover(p.resolve().parent)  # leftovers of an interrupted commit beside it go first
        return Release(p)
    reg = registry_path(registry)
    name, _, version = arg.partition("/")
    if not name or "/" in version or arg.startswith(("~", ".")) or p.is_absolute():
        # a path, not NAME[/VERSION]: never "no release of ''" (`show /nonexistent`)
        raise ConfigError(f"no release directory {arg!r}",
                          hint="Pass a folder that holds release.json, or NAME[/VERSION] of a release in the "
                          "registry (`benchsmith list` shows the datasets)")
    recover(reg / name)
    releases = find_releases(reg, name)
    if not releases:
        names = ([d.name for d in reg.iterdir() if d.is_dir() and not d.name.startswith(".")]
                 if reg.is_dir() else [])
        raise ConfigError(
            f"no release directory {arg!r} and no release of {name!r} in registry {reg}",
            hint=f"{_how_to_get(name)} {did_you_mean(name, names)}",
        )
    if not version:
        return releases[-1]
    for r in releases:
        if r.version == version:
            return r
    raise ConfigError(
        f"no version {version!r} of {name!r} in registry {reg}",
        hint=did_you_mean(version, [r.version for r in releases]),
    )


def gold_release(arg: str, registry: Path | None = None, *, allow_unvalidated: bool = False) -> Release:
    """:func:`resolve_release` for scoring, checked by :func:`benchsmith.seal.require_gold`: the
    bytes are the sealed ones and the validation passed, or ``allow_unvalidated`` says to score
    anyway (with a warning)."""
    release = resolve_release(arg, registry)
    warning = seal.require_gold(release, allow_unvalidated=allow_unvalidated)
    if warning:
        logger.warning("%s", warning)
    return release
