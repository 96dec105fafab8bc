"""The word aligner of the harvest: eflomal, run so that a seed fixes its output.

eflomal 2.0 has no seed option (neither ``eflomal.Aligner`` nor the ``eflomal`` binary's
``-s -t -p -f -r -S -F -R -1 -2 -3 -n -N -q -M -m``). Its sampler takes its state from
eight bytes of ``/dev/urandom`` (``random_system_state`` in ``src/random.c``), once per
direction, and the samplers of a direction draw their states from it inside an OpenMP
critical section, in whatever order the threads arrive. Two runs therefore differ in a
few links, and so a harvest in a few borderline words and items (issue 15: 13-15
ambiguous words over four Tatoeba deu-eng runs).

:class:`EflomalAligner` fixes both, and nothing else:

* **the seed**: it runs a copy of eflomal's own binary in which the path ``/dev/urandom``
  is replaced by ``eflomal.seed``, a name of the same length, relative to the working
  directory; each call runs in a fresh directory holding that file: eight bytes derived
  from the harvest's seed and the chunk number (:func:`chunk_seed`). The copy is made once
  per binary (by its sha256) under ``$BENCHSMITH_HOME/tools/``. The bytes of the binary
  are otherwise untouched, so the sampler, its iterations and its output format are
  eflomal's;
* **the order of the samplers**: ``OMP_NUM_THREADS=2,1``: the two directions still run in
  parallel, each direction's samplers one after the other, so each gets the same state
  every time. The CPU work is the same as eflomal's default; only its spread over more
  than two cores is given up.

The arguments are eflomal's defaults as ``Aligner().align`` passes them (model 3, three
samplers, null prior 0.2, iterations from the corpus size: :func:`eflomal_iterations`), so
a seeded run is one of the runs the unseeded library could have made. Where the copy
cannot be made (no binary found, or the path not found exactly once in it), the aligner
falls back to ``eflomal.Aligner().align`` and says so: ``describe()["deterministic"]`` is
false, which the harvest records in ``release.json`` and the card.

:class:`FixedAlignment` returns alignment output given in advance (tests and benchmarks
compare everything after alignment on the same links).
"""

from __future__ import annotations

import errno
import hashlib
import logging
import math
import os
import resource
import shutil
import signal
import subprocess
import tempfile
import threading
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from types import ModuleType
from typing import Any, Protocol

from benchsmith.errors import ConfigError, EnvironmentFault, writing
from benchsmith.lifeline import pdeathsig_hook
from benchsmith.source import benchsmith_home

log = logging.getLogger(__name__)

#: eflomal.Aligner's defaults (eflomal 2.0): HMM + fertility model, three samplers, NULL prior
MODEL, SAMPLERS, NULL_PRIOR = 3, 3, 0.2
URANDOM = b"/dev/urandom\x00"
SEED_FILE = "eflomal.seed"
#: outer team: the two directions in parallel; inner teams: each direction's samplers in order
OMP_THREADS = "2,1"


class Aligner(Protocol):
    """``(source lines, target lines, chunk number) -> (forward links, reverse links, deterministic)``:
    one Moses-style ``i-j`` line per input pair (input: space-separated tokens), and whether this call's
    output is fixed by its input and seed. ``describe()``: what is recorded in the release."""

    def __call__(self, source: Sequence[str], target: Sequence[str], chunk: int) -> tuple[list[str], list[str], bool]: ...

    def describe(self) -> dict[str, Any]: ...


def require_eflomal() -> ModuleType:
    """The eflomal module; any failure to import it (absent, or a broken install: an ImportError from a
    missing symbol, an OSError from a shared library) is the one "not installed" ConfigError."""
    try:
        import eflomal
    except (ImportError, OSError) as exc:
        why = "" if isinstance(exc, ModuleNotFoundError) else f" (importing it failed: {type(exc).__name__}: {exc})"
        raise ConfigError(
            f"the word aligner eflomal is not installed{why} (it is GPLv3, so it is an optional extra)",
            hint="pip install 'benchsmith[mucow]' (add --force-reinstall eflomal for a broken install)",
        ) from exc
    return eflomal


def eflomal_version() -> str:
    try:
        return version("eflomal")
    except PackageNotFoundError:
        return "unknown"


def eflomal_iterations(n_sentences: int, model: int = MODEL, rel_iterations: float = 1.0) -> tuple[int, int, int]:
    """eflomal's default iterations per model for a corpus of ``n_sentences`` (its ``align()``)."""
    iters = max(2, round(rel_iterations * 5000 / math.sqrt(n_sentences)))
    iters4 = max(1, iters // 4)
    if model == 1:
        return iters, 0, 0
    if model == 2:
        return max(2, iters4), iters, 0
    return max(2, iters4), iters4, iters


def chunk_seed(seed: int, chunk: int) -> bytes:
    """The eight bytes eflomal reads as its state for chunk ``chunk`` of a harvest seeded ``seed``
    (never all zero: xorshift would stay at zero)."""
    digest = hashlib.blake2b(f"mucow-eflomal\t{seed}\t{chunk}".encode(), digest_size=8).digest()
    return digest if any(digest) else b"\x01" + digest[1:]


def eflomal_binary() -> Path | None:
    """The ``eflomal`` executable the library runs (inside the package since 2.0, else on PATH)."""
    eflomal = require_eflomal()
    packaged = Path(eflomal.__file__).parent / "bin" / "eflomal"
    if packaged.is_file():
        return packaged
    found = shutil.which("eflomal")
    return Path(found) if found else None


def seeded_binary() -> Path | None:
    """A copy of eflomal's binary that reads its seed from ``./eflomal.seed`` (None if it cannot be made)."""
    original = eflomal_binary()
    if original is None:
        return None
    data = original.read_bytes()
    if data.count(URANDOM) != 1:
        return None
    target = benchsmith_home() / "tools" / f"eflomal-{hashlib.sha256(data).hexdigest()[:16]}-seeded" / "eflomal"
    if target.is_file():
        return target
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=".eflomal-")
        with os.fdopen(fd, "wb") as f:
            f.write(data.replace(URANDOM, SEED_FILE.encode() + b"\x00"))
        os.chmod(tmp, 0o755)
        os.replace(tmp, target)  # atomic: two workers making it at once both end with a whole file
    except OSError as exc:
        log.warning("cannot write a seeded copy of eflomal under %s (%s)", target.parent, exc)
        return None
    return target


def _prepare(eflomal: ModuleType, source: Sequence[str], target: Sequence[str], tmp: Path) -> tuple[Path, Path]:
    src, tgt = tmp / "source.efl", tmp / "target.efl"
    with src.open("wb") as sf, tgt.open("wb") as tf:
        eflomal.Aligner().prepare_files(source, sf, target, tf, None, None)
    return src, tgt


@dataclass(frozen=True)
class EflomalAligner:
    """eflomal with its defaults; seeded (deterministic) unless ``seed`` is None or the seeded copy
    of the binary cannot be made (see the module docstring)."""

    seed: int | None = 0

    def _binary(self) -> Path | None:
        return seeded_binary() if self.seed is not None else None

    def describe(self) -> dict[str, Any]:
        binary = self._binary()
        out: dict[str, Any] = {
            "aligner": "eflomal", "version": eflomal_version(), "model": MODEL, "samplers": SAMPLERS,
            "null_prior": NULL_PRIOR, "iterations": "eflomal's default for the chunk size",
            "symmetrisation": "grow-diag-final-and", "deterministic": binary is not None,
        }
        if binary is not None:
            out.update(seed=self.seed, seed_per_chunk="blake2b-64('mucow-eflomal<TAB>seed<TAB>chunk')",
                       how=f"eflomal's binary with /dev/urandom read from ./{SEED_FILE}, OMP_NUM_THREADS={OMP_THREADS}")
        else:
            out["how"] = ("eflomal.Aligner().align, seeded by eflomal from /dev/urandom: "
                          "two harvests of the same input can differ")
        return out

    def __call__(self, source: Sequence[str], target: Sequence[str], chunk: int) -> tuple[list[str], list[str], bool]:
        eflomal = require_eflomal()
        binary = self._binary()
        with scratch_dir(ALIGN_PREFIX) as tmp, writing(tmp):  # its files: a full $TMPDIR names the folder
            fwd, rev = tmp / "fwd", tmp / "rev"
            if binary is None:
                if self.seed is not None:
                    log.warning("eflomal cannot be seeded here: this alignment is not reproducible")
                try:
                    eflomal.Aligner().align(list(source), list(target), links_filename_fwd=str(fwd),
                                            links_filename_rev=str(rev), quiet=True)
                except subprocess.CalledProcessError as exc:
                    raise _write_fault(exc.returncode, str(exc.stderr or ""), tmp) or exc
            else:
                src, tgt = _prepare(eflomal, source, target, tmp)
                (tmp / SEED_FILE).write_bytes(chunk_seed(self.seed, chunk))
                i1, i2, i3 = eflomal_iterations(len(source))
                args = [str(binary), "-m", str(MODEL), "-s", str(src), "-t", str(tgt), "-n", str(SAMPLERS),
                        "-N", str(NULL_PRIOR), "-1", str(i1), "-2", str(i2), "-3", str(i3), "-q",
                        "-f", str(fwd), "-r", str(rev)]
                code, err = run_child(args, cwd=tmp, env={**os.environ, "OMP_NUM_THREADS": OMP_THREADS})
                if code != 0:
                    raise _write_fault(code, err, tmp) or RuntimeError(
                        f"eflomal exited with status {code}: {err.strip()[-2000:]}")
            with fwd.open(encoding="utf-8") as f, rev.open(encoding="utf-8") as r:
                return f.read().splitlines(), r.read().splitlines(), binary is not None


def _write_fault(code: int, err: str, where: Path) -> EnvironmentFault | None:
    """eflomal's failure when it could not write its files: killed by SIGXFSZ (``ulimit -f``; a child
    gets the default action back), failing under a file-size limit (its input files are written by
    eflomal's ``prepare_files``, which does not report a short write: eflomal then reads a cut file)
    or out of space. Any other failure is eflomal's own."""
    if code == -signal.SIGXFSZ:
        return EnvironmentFault.writing(OSError(errno.EFBIG, os.strerror(errno.EFBIG)), where)
    limit = resource.getrlimit(resource.RLIMIT_FSIZE)[0]
    if limit != resource.RLIM_INFINITY:
        return EnvironmentFault(f"eflomal failed (status {code}) under a file-size limit of {limit:,} bytes: the "
                                "files it reads and writes may have been cut", path=where,
                                hint=EnvironmentFault.HINTS["EFBIG"])
    if os.strerror(errno.ENOSPC) in err:
        return EnvironmentFault.writing(OSError(errno.ENOSPC, os.strerror(errno.ENOSPC)), where)
    return None


# --------------------------------------------------------------------------- kills and leftovers
#
# A harvest killed with SIGKILL runs no cleanup of its own (issue 29: eflomal children ran on,
# ``mucow-align-*`` folders stayed in $TMPDIR). What happens instead:
#
# * a local Dask worker is SIGKILLed by the kernel when the harvest (its parent) dies: the harvest
#   gives each forked worker a plugin that sets ``PR_SET_PDEATHSIG`` first thing (Linux;
#   ``harvest.DieWithHarvest``). distributed's own guard (``AsyncProcess`` watches a pipe whose write
#   end only the parent holds, and calls ``os._exit`` when it closes) fails with fork: the write ends
#   of the pipes made before a fork are copied into the forked worker, and when both workers' pipes
#   exist before either fork, each worker keeps the other's pipe open; both then outlived a killed
#   harvest, parent 1, forever (2 of 8 killed runs on a quiet machine);
# * each eflomal child is started with ``PR_SET_PDEATHSIG`` (Linux, :func:`run_child`): the kernel
#   kills it when the worker that started it dies, however it dies;
# * ``os._exit`` runs no ``finally``, so scratch folders are named ``<prefix><owner pid>-...`` and the
#   next harvest removes those whose owner is dead (:func:`remove_stale_scratch`).

ALIGN_PREFIX = "mucow-align-"
#: the harvest's own scratch folder (Dask's ``temporary-directory``: its workers' spill space)
HARVEST_PREFIX = "mucow-harvest-"
_LOCK = threading.Lock()
#: the children :func:`run_child` is waiting for (a test looks at them)
_CHILDREN: set[subprocess.Popen] = set()


@contextmanager
def scratch_dir(prefix: str) -> Iterator[Path]:
    """A fresh folder ``$TMPDIR/<prefix><this pid>-XXXX``, removed on exit (or, if this process is
    killed, by the next harvest: :func:`remove_stale_scratch`)."""
    name = tempfile.mkdtemp(prefix=f"{prefix}{os.getpid()}-")
    try:
        yield Path(name)
    finally:
        shutil.rmtree(name, ignore_errors=True)


def run_child(args: Sequence[str], cwd: Path, env: Mapping[str, str]) -> tuple[int, str]:
    """Run a child process to its end: ``(exit status, stderr)``; it dies with this process."""
    # preexec_fn although threads run: the hook is one prctl(2) call through ctypes, taking no lock
    # another thread could hold; it is how a child gets PR_SET_PDEATHSIG (it dies with the harvest)
    proc = subprocess.Popen(list(args), cwd=cwd, env=dict(env), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            text=True, preexec_fn=pdeathsig_hook())  # noqa: PLW1509
    with _LOCK:
        _CHILDREN.add(proc)
    try:
        _, err = proc.communicate()
    finally:
        with _LOCK:
            _CHILDREN.discard(proc)
    return proc.returncode, err or ""


def _alive(pid: int) -> bool:
    """Whether process ``pid`` runs (a zombie, dead but not yet reaped, does not)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass  # someone else's process
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return True  # no /proc: trust kill()
    return stat.rpartition(")")[2].split()[:1] != ["Z"]


def remove_stale_scratch(prefixes: Sequence[str] = (ALIGN_PREFIX, HARVEST_PREFIX)) -> list[Path]:
    """Remove the scratch folders in ``$TMPDIR`` whose owner process is dead (a killed harvest's)."""
    removed = []
    root = Path(tempfile.gettempdir())
    for prefix in prefixes:
        for d in root.glob(f"{prefix}*"):
            pid = d.name[len(prefix):].split("-", 1)[0]
            if pid.isdigit() and d.is_dir() and not d.is_symlink() and not _alive(int(pid)):
                shutil.rmtree(d, ignore_errors=True)
                removed.append(d)
    if removed:
        log.info("removed %d scratch folder(s) of killed harvests from %s", len(removed), root)
    return removed


@dataclass(frozen=True)
class FixedAlignment:
    """Alignment output given in advance: ``links[chunk] = (forward lines, reverse lines)``."""

    links: Mapping[int, tuple[list[str], list[str]]] = field(default_factory=dict)
    note: str = "alignment output given in advance"

    def describe(self) -> dict[str, Any]:
        return {"aligner": "fixed", "how": self.note, "deterministic": True}

    def __call__(self, source: Sequence[str], target: Sequence[str], chunk: int) -> tuple[list[str], list[str], bool]:
        fwd, rev = self.links[chunk]
        if not len(fwd) == len(rev) == len(source) == len(target):
            raise ValueError(f"chunk {chunk}: {len(source)} pairs, but {len(fwd)}/{len(rev)} lines of links")
        return list(fwd), list(rev), True
