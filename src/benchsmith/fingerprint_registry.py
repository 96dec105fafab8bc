"""Registered split fingerprints: a released version's content never changes.

``builders/<name>/fingerprints.tsv`` (data, not code, like ``checksums.tsv``) records the
split fingerprints (``benchsmith.fingerprint``) of every released version, one row per
``version``, ``config``, ``split``, ``fingerprint``, under a header, sorted by version
(semver), config and split. ``benchsmith build NAME [--version V] --sources DIR
--register-fingerprints`` writes the rows of the version it builds.

The guard (:func:`check`) runs in ``ReleaseWriter.write`` after the staging folder is
complete and before it is committed, so a refused build replaces nothing and leaves no
staging behind. The rules:

* The fingerprints are a function of the builder's code and the *registered* sources: they
  are compared only when every source file read was verified against ``checksums.tsv``.
  A build from files without a registered sha256 (a fixture, a new upstream copy) is not
  compared and says so; ``--register-fingerprints`` refuses it (register the checksums
  first), so a registered row always describes the registered upstream files.
* A version with no rows builds with a note (not compared).
* A builder that declares ``reproducible = False`` (a MuCoW harvest whose aligner seeded
  itself) is never registered nor compared: a rebuild may differ by design. Harvests are not
  registered in any case: their inputs are whatever corpora the user gives (sources without a
  registered sha256), not a fixed upstream release.
* Otherwise every built split must have a row with the same fingerprint, and every row of
  the version must be built, except the splits a partial build left out on purpose (configs
  not named by ``--config``, splits skipped by ``--skip-missing``). Anything else is a
  :class:`~benchsmith.errors.VersionChangedError` naming ``fingerprints.tsv:LINE``, the
  config and the split, and saying to bump the version.
* **Releases are checked against it too** (:func:`registered_differences`): ``publish`` of a
  registered version (and ``evaluate`` / ``show --verify`` of a folder whose only seal is the
  copy inside it) recomputes each split's fingerprint from its data files and compares it with
  the registered row, never with ``release.json``'s (which travels with the data): a forged seal
  over edited data is refused, whatever the folder says about itself.
* Registering a full build replaces every row of its version (a config the code no longer
  declares disappears with it); registering a partial build replaces the rows of the splits
  it built and keeps the others. Rows of other versions are always kept. The file is written
  through a temporary sibling renamed into place, never truncated first.
"""

from __future__ import annotations

import csv
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from benchsmith.builder import get_builder, is_registered
from benchsmith.errors import BenchsmithError, ConfigError, ReleaseError, VersionChangedError
from benchsmith.fingerprint import fingerprint_table
from benchsmith.registry import write_text_atomic
from benchsmith.semver import parse_version

if TYPE_CHECKING:
    from benchsmith.builder import Builder
    from benchsmith.release import Release
    from benchsmith.source import Sources

FILENAME = "fingerprints.tsv"
COLUMNS = ("version", "config", "split", "fingerprint")
_SHA256 = re.compile(r"[0-9a-f]{64}")

#: ``{(version, config, split): (fingerprint, line)}``
Rows = dict[tuple[str, str, str], tuple[str, int]]
#: ``{config: {split: fingerprint}}``, as ``Release.fingerprints()`` gives it
Built = Mapping[str, Mapping[str, str]]


def read_fingerprints(path: Path, *, dataset: str | None = None) -> Rows:
    """Read a fingerprints TSV (``{}`` when the file does not exist: nothing registered yet).

    Raises:
        ReleaseError: a bad header, a malformed or repeated row (naming ``path:line``).
    """
    path = Path(path)
    if not path.exists():
        return {}
    name = dataset or path.parent.name
    regenerate = (f"Fix the row, or re-register the version with `benchsmith build {name} --version V "
                  "--sources DIR --register-fingerprints`")
    out: Rows = {}
    with open(path, encoding="utf-8", newline="") as fh:
        rows = csv.reader(fh, delimiter="\t")
        header = next(rows, None)
        if header is None or tuple(header) != COLUMNS:
            raise ReleaseError(f"fingerprints header is {header!r}; expected {list(COLUMNS)!r}",
                               path=path, line=1, hint=regenerate)
        for lineno, row in enumerate(rows, start=2):
            if not row or row[0].startswith("#"):
                continue
            if len(row) != 4 or not _SHA256.fullmatch(row[3]) or not row[1] or not row[2] or not _semver(row[0]):
                raise ReleaseError(
                    f"malformed fingerprint row {row!r}; expected version (x.y.z), config, split, 64 lowercase hex",
                    path=path, line=lineno, hint=regenerate)
            key = (row[0], row[1], row[2])
            if key in out:
                raise ReleaseError(f"{row[0]} {row[1]}/{row[2]} is registered twice (first on line {out[key][1]})",
                                   path=path, line=lineno, hint=regenerate)
            out[key] = (row[3], lineno)
    return out


def _semver(text: str) -> bool:
    try:
        parse_version(text)
    except ConfigError:
        return False
    return True


def render(rows: Iterable[tuple[str, str, str, str]]) -> str:
    """The TSV text of ``(version, config, split, fingerprint)`` rows: header, then sorted rows."""
    ordered = sorted(rows, key=lambda r: (parse_version(r[0]), r[1], r[2]))
    return "".join("\t".join(r) + "\n" for r in [COLUMNS, *ordered])


@dataclass
class Outcome:
    """What the guard found for one build (``build --json`` prints it as ``registered_fingerprints``)."""

    status: str  # "match" | "not-registered" | "not-compared" | "registered"
    note: str = ""
    compared: list[str] = field(default_factory=list)  # "config/split" checked against a row

    def to_dict(self) -> dict[str, object]:
        return {"status": self.status, "note": self.note, "compared": len(self.compared)}


def register_command(name: str, version: str, extra: str = "") -> str:
    return f"`benchsmith build {name} --version {version} --sources DIR --register-fingerprints{extra}`"


def _unverified(sources: Sources) -> list[str]:
    return sorted(f"{name}/{r.path}" for name, rs in sources.items() for r in rs.records.values()
                  if r.status == "unregistered")


def check(builder: Builder, built: Built, sources: Sources, *, selected: Iterable[str],
          skipped: Iterable[tuple[str, str]]) -> Outcome:
    """Compare a staged build with the registered fingerprints of its version (module docstring).

    Args:
        built: the fingerprints of the staged build, ``{config: {split: fingerprint}}``.
        selected: the configs this build was asked for (all declared ones unless ``--config``).
        skipped: ``(config, split)`` left out by ``--skip-missing``.

    Raises:
        VersionChangedError: the build differs from the registered content of its version.
    """
    name, version = builder.name, builder.version
    path = builder.data_path(FILENAME)
    rows = {(c, s): v for (ver, c, s), v in read_fingerprints(path, dataset=name).items() if ver == version}
    if not getattr(builder, "reproducible", True):
        return Outcome("not-compared", f"{name} declares reproducible = False: a rebuild may differ, so no "
                       "fingerprints are registered or compared (its release.json and seal identify a build)")
    unverified = _unverified(sources)
    if unverified:
        return Outcome("not-compared", f"built from source files without a registered sha256 ({unverified[0]}"
                       f"{f' and {len(unverified) - 1} more' if len(unverified) > 1 else ''}): "
                       f"the registered fingerprints of {name} {version} describe the registered sources only")
    if not rows:
        return Outcome("not-registered", f"no fingerprints registered for {name} {version} in {path}: not compared; "
                       f"register them with {register_command(name, version)}")
    bump = (f"A released version's content never changes: bump the version (add a release_notes entry to "
            f"{name}'s builder) and register it with {register_command(name, 'NEW')}; if {version} was never "
            f"released and the change is intended, re-register it with {register_command(name, version, ' --overwrite')}")
    changed: list[tuple[str, str, str]] = []
    for config, splits in built.items():
        for split, fp in splits.items():
            reg = rows.get((config, split))
            if reg is None:
                changed.append((config, split, f"config {config!r} split {split!r} is not registered for this version"))
            elif reg[0] != fp:
                changed.append((config, split, (f"config {config!r} split {split!r} has fingerprint {fp[:12]} "
                                f"(registered: {reg[0][:12]})")))
    chosen, left_out = set(selected), set(skipped)
    for (config, split), (_, line) in sorted(rows.items(), key=lambda kv: kv[1][1]):
        if config in chosen and split not in built.get(config, {}) and (config, split) not in left_out:
            changed.append((config, split, (f"registered config {config!r} split {split!r} (line {line}) "
                            "was not built")))
    if changed:
        config, split, what = changed[0]
        more = f" (and {len(changed) - 1} more split{'s' if len(changed) > 2 else ''})" if len(changed) > 1 else ""
        at_line = rows[(config, split)][1] if (config, split) in rows else None
        raise VersionChangedError(
            f"the build of {name} {version} differs from its registered content: {what}{more}",
            path=path, line=at_line, hint=bump, config=config, split=split)
    compared = [f"{c}/{s}" for c, splits in built.items() for s in splits]
    return Outcome("match", f"{len(compared)} split fingerprints match {path.name}", compared)


def register(builder: Builder, built: Built, sources: Sources, *, full: bool) -> Outcome:
    """Write the build's fingerprints as its version's rows of ``fingerprints.tsv`` (atomically).

    ``full``: the build has every declared config and no skipped split, so its rows replace
    all of the version's; a partial build replaces only the rows of the splits it built.

    Raises:
        ReleaseError: the build read source files without a registered sha256.
    """
    name, version = builder.name, builder.version
    if not getattr(builder, "reproducible", True):
        raise ReleaseError(f"cannot register the fingerprints of {name} {version}: its builder declares "
                           "reproducible = False (a rebuild from the same inputs may differ)",
                           hint="Make the build reproducible (seed every random step) before registering it")
    unverified = _unverified(sources)
    if unverified:
        raise ReleaseError(
            f"cannot register the fingerprints of {name} {version}: {len(unverified)} source file(s) have no "
            f"registered sha256 ({unverified[0]})",
            hint=f"Register the sources first (`benchsmith sources {name} --checksums DIR --write`): "
            "registered fingerprints describe the registered sources")
    path = builder.data_path(FILENAME)
    rows = read_fingerprints(path, dataset=name)
    new = {(version, c, s): fp for c, splits in built.items() for s, fp in splits.items()}
    kept = [(*k, fp) for k, (fp, _) in rows.items()
            if k[0] != version or (not full and k not in new)]
    replaced = sorted(f"{c}/{s}" for (v, c, s), fp in new.items() if (v, c, s) in rows and rows[(v, c, s)][0] != fp)
    write_text_atomic(path, render([*kept, *((*k, fp) for k, fp in new.items())]))
    changed = f"; {len(replaced)} replace a different registered fingerprint ({', '.join(replaced[:3])}" \
        f"{' ...' if len(replaced) > 3 else ''})" if replaced else ""
    return Outcome("registered", f"registered {len(new)} split fingerprints of {name} {version} in {path}{changed}",
                   [f"{c}/{s}" for _, c, s in new])


def registered_differences(release: Release) -> tuple[list[str], str]:
    """``(problems, note)``: each split of ``release`` whose fingerprint, recomputed from its data
    files, differs from the row its builder registered for the version (``[]``: all match, or
    nothing to compare, as ``note`` says). Splits the release does not hold are not compared
    (a partial build says so itself)."""
    name, version = release.name, release.version
    if not is_registered(name):
        return [], f"no builder {name!r} installed: no registered fingerprints to compare"
    builder = get_builder(name)
    if not getattr(builder, "reproducible", True):
        return [], f"{name} declares reproducible = False: no registered fingerprints"
    path = builder.data_path(FILENAME)
    rows = {(c, s): v for (ver, c, s), v in read_fingerprints(path, dataset=name).items() if ver == version}
    if not rows:
        return [], f"no fingerprints registered for {name} {version}: not compared"
    problems = []
    for config, split, _ in release.info.iter_splits():
        reg = rows.get((config, split))
        if reg is None:
            problems.append(f"{config}/{split} is not registered for {version} in {path.name}")
            continue
        got = fingerprint_table(release.table(config, split))
        if got != reg[0]:
            problems.append(f"{config}/{split} holds data with fingerprint {got[:12]}, registered "
                            f"{reg[0][:12]} ({path.name}:{reg[1]})")
    return problems, f"{len(rows)} registered split fingerprints of {name} {version} compared"


def require_registered(release: Release, *, error: type[BenchsmithError] = ReleaseError) -> str:
    """Raise ``error`` when :func:`registered_differences` finds a split whose data is not the
    registered content of its version; returns the note otherwise."""
    problems, note = registered_differences(release)
    if problems:
        more = f" (+{len(problems) - 1} more)" if len(problems) > 1 else ""
        raise error(
            f"{release.name} {release.version} is not the registered content of its version: {problems[0]}{more}",
            path=release.path,
            hint=f"Rebuild it (`benchsmith build {release.name} --version {release.version} --overwrite`) "
            "and validate it; a released version's data never changes",
        )
    return note
