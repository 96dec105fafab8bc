"""One error tree for benchsmith.

Every error a user can cause is a :class:`BenchsmithError`. Families mirror the
stages of the data path (sources, parsing/schema, configuration, release,
prediction files, gate, publishing) and each also inherits the builtin a caller
would naturally catch (``OSError`` for sources, ``ValueError`` for bad content,
``LookupError`` for unknown names), as Hugging Face ``datasets`` does.

Messages follow one shape, printed by the CLI on a single line::

    <where>: <what was found>; <what was expected>. <what to do>

``where`` is ``file`` or ``file:line`` when the error comes from a file.
"""

from __future__ import annotations

import difflib
import errno
import os
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import ClassVar


class BenchsmithError(Exception):
    """Root of every error benchsmith raises on purpose.

    Args:
        message: what went wrong (found vs expected).
        path: the file (or directory) at fault, if any.
        line: 1-based line (or record) number inside ``path``, if known.
        hint: what the user should do about it.
    """

    #: CLI exit status for this family (2 = bad input, 1 = failed gate, 3 = environment fault).
    exit_code: int = 2

    def __init__(
        self,
        message: str,
        *,
        path: str | Path | None = None,
        line: int | None = None,
        hint: str | None = None,
    ) -> None:
        self.message = message
        self.path = Path(path) if path is not None else None
        self.line = line
        self.hint = hint
        super().__init__(self.__str__())

    @property
    def where(self) -> str | None:
        if self.path is None:
            return None
        return f"{self.path}:{self.line}" if self.line is not None else str(self.path)

    def __str__(self) -> str:
        text = self.message
        if self.where:
            text = f"{self.where}: {text}"
        if self.hint:
            text = f"{text.rstrip('.')}. {self.hint}"
        return text

    def __reduce__(self):  # keep pickling (dask, multiprocessing) working with kw-only args
        return (_rebuild, (type(self), self.message, self.path, self.line, self.hint))


def _rebuild(cls, message, path, line, hint):
    return cls(message, path=path, line=line, hint=hint)


class SourceError(BenchsmithError, OSError):
    """A raw source is missing, unreadable, or fails its sha256 check."""


class MissingSourceError(SourceError, FileNotFoundError):
    """A declared source file is not where it was expected."""


class ChecksumError(SourceError):
    """A source file's sha256 differs from the declared one."""


class ParseError(BenchsmithError, ValueError):
    """A raw file is malformed (bad row, bad label, encoding, truncation)."""


class SchemaError(BenchsmithError, ValueError):
    """Examples or a release do not match the declared features."""


class ConfigError(BenchsmithError, LookupError):
    """Unknown builder, config, split, version or option value."""

    def __str__(self) -> str:  # LookupError subclasses would otherwise repr() the args
        return BenchsmithError.__str__(self)


class ReleaseError(BenchsmithError, RuntimeError):
    """A release cannot be written or read (exists already, corrupt manifest...)."""


class PredictionError(BenchsmithError, ValueError):
    """A predictions file for ``benchsmith evaluate`` is malformed or does not match the data."""


class VersionChangedError(ReleaseError):
    """A build's content differs from the fingerprints registered for its version
    (``builders/<name>/fingerprints.tsv``, see ``benchsmith.fingerprint_registry``)."""

    def __init__(self, message: str, *, config: str | None = None, split: str | None = None, **kw) -> None:
        self.config, self.split = config, split
        super().__init__(message, **kw)


class GateError(BenchsmithError, RuntimeError):
    """Validation failed: the release must not be published."""

    exit_code = 1


class PublishError(BenchsmithError, RuntimeError):
    """Publishing to a registry or the Hub failed or would overwrite a version."""


class EnvironmentFault(BenchsmithError, OSError):
    """The machine, not the input: disk full, read-only or unwritable registry, no permission.

    Exit status 3, so scripts can tell "fix your data" (2) and "a check failed" (1) from
    "fix the machine" (3). Whatever was being written is removed first.
    """

    exit_code = 3

    #: errno values that are environment faults, and what to do about each
    HINTS: ClassVar[dict[str, str]] = {
        "ENOSPC": "Free disk space (or point --registry / $BENCHSMITH_HOME at a larger disk) and run it again",
        "EDQUOT": "Free space within your disk quota and run it again",
        "EFBIG": "A file outgrew the file-size limit (`ulimit -f`, or the file system's own): raise the limit "
        "or use a --registry / $BENCHSMITH_HOME on a file system that allows larger files",
        "EROFS": "The file system is read-only: use a writable --registry / $BENCHSMITH_HOME",
        "EACCES": "Check the permissions of the path (or use a --registry you can write to)",
        "EPERM": "Check the permissions of the path (or use a --registry you can write to)",
        "EMFILE": "This process has too many open files: raise the limit (`ulimit -n`) and run it again",
        "ENFILE": "The system has too many open files: close other programs (or raise fs.file-max) and run it again",
        "EIO": "The disk reported an I/O error: check the device (dmesg, SMART) and run it again on a healthy disk",
        "ENOMEM": "The machine ran out of memory: free memory (or build fewer configs at once) and run it again",
        "ENOBUFS": "The machine ran out of buffer space: free memory and run it again",
        "ENAMETOOLONG": "A path is too long for the file system: use a shorter --registry / $BENCHSMITH_HOME path",
        "ELOOP": "A path has too many (or looping) symbolic links: fix the links on the path",
        "ETXTBSY": "The file is busy (in use by another program): stop that program and run it again",
        "EBUSY": "The file or device is busy (in use by another program): stop that program and run it again",
        "ESTALE": "A network file system handle went stale: remount it and run it again",
        "EXDEV": "The registry and its staging folder must be on one file system: use one --registry folder",
        "ENOTCONN": "A network file system is disconnected: reconnect it and run it again",
    }
    #: hint for every other ``OSError`` (a file removed while it was read, an unexpected errno)
    GENERIC_HINT: ClassVar[str] = ("An unexpected error from the operating system: check the path, the disk (or "
                                   "network) and that no other program is changing these files, then run it again")

    @classmethod
    def from_os_error(cls, exc: OSError) -> EnvironmentFault | None:
        """The fault for an ``OSError`` whose errno is a known environment fault (:attr:`HINTS`), else None."""
        name = errno.errorcode.get(exc.errno or -1)
        if name not in cls.HINTS:
            return None
        what = exc.strerror or name
        return cls(f"{what} ({name})", path=_os_path(exc), hint=cls.HINTS[name])

    @classmethod
    def of(cls, exc: OSError | MemoryError, *, where: str | Path | None = None) -> EnvironmentFault:
        """Every ``OSError`` as a fault (exit 3): a known errno with its hint, any other one (ENOENT of a
        file that vanished mid-run, an errno benchsmith has no advice for) named with the generic hint.

        An ``OSError`` that reaches the CLI is never bad input: every input path benchsmith is given
        is checked first and reported as a typed error of its own (exit 2). ``where`` names what
        was being written when the error names no file (``write()`` on an open file, pyarrow).
        """
        if isinstance(exc, MemoryError):  # a memory limit (ulimit -v, a cgroup) or a full machine
            return cls("out of memory (MemoryError)", path=where, hint=cls.HINTS["ENOMEM"])
        known = cls.from_os_error(exc)
        if known is not None:
            if known.path is None and where is not None:
                known.path = Path(where)
            return known
        name = errno.errorcode.get(exc.errno or -1)
        what = exc.strerror or str(exc)
        if name:
            what = f"{what or name} ({name})"
        elif type(exc) is not OSError:
            what = f"{type(exc).__name__}: {what}" if what else type(exc).__name__
        what = what or "operating-system error"
        return cls(what, path=_os_path(exc) or where, hint=cls.GENERIC_HINT)

    @classmethod
    def writing(cls, exc: OSError | MemoryError, path: str | Path) -> EnvironmentFault:
        """The fault of a failed write of ``path`` (a file, or a folder being filled), named by
        ``path``: the OS names a temporary sibling, a staging folder or nothing at all (``write()``
        on an open file), none of which the user knows."""
        fault = cls.of(exc, where=path)
        fault.path = Path(path)
        fault.message = f"cannot write: {fault.message}"
        return fault


@contextmanager
def writing(path: str | Path) -> Iterator[None]:
    """Write ``path`` inside this block: an ``OSError`` (disk full, ``ulimit -f``, EIO, a read-only
    folder) or ``MemoryError`` leaves it as the :class:`EnvironmentFault` naming ``path`` (exit 3).
    The block itself removes what it half-wrote (see ``registry.write_text_atomic``)."""
    try:
        yield
    except BenchsmithError:
        raise
    except (OSError, MemoryError) as exc:
        raise EnvironmentFault.writing(exc, path) from exc


def library_fault(exc: ImportError) -> EnvironmentFault | None:
    """The fault for an import that failed while loading a compiled library (the
    ``ImportError`` itself, or one in its ``__cause__``/``__context__`` chain, names a shared
    object in ``path``; or the chain holds a ``MemoryError``/``OSError``), else None (a missing
    module is a bug or a missing extra, not the machine). Such a load fails when the process
    cannot map the library (a memory limit: ``ulimit -v``, a cgroup) or the file is damaged;
    heavy libraries (scipy, torch) are imported when a command first needs them."""
    seen: set[int] = set()
    cur: BaseException | None = exc
    while cur is not None and id(cur) not in seen:
        seen.add(id(cur))
        if isinstance(cur, (MemoryError, OSError)):
            return EnvironmentFault.of(cur)
        library = getattr(cur, "path", None) if isinstance(cur, ImportError) else None
        if isinstance(library, str) and (library.endswith((".so", ".pyd")) or ".so." in library):
            reason = str(cur).split(": ")[-1]
            return EnvironmentFault(f"cannot load the compiled library ({reason})", path=library,
                                    hint="Under a memory limit (`ulimit -v`, a container's), raise it and run it again; "
                                    "otherwise reinstall the package that ships this file")
        cur = cur.__cause__ or cur.__context__
    return None


def _os_path(exc: OSError) -> str | None:
    """The path(s) an ``OSError`` names, as text (``filename`` may be bytes or a descriptor)."""
    names = [os.fsdecode(f) if isinstance(f, (bytes, os.PathLike)) else str(f)
             for f in (exc.filename, exc.filename2) if f is not None]
    return " -> ".join(names) or None


def did_you_mean(name: str, choices: Iterable[str]) -> str:
    """Return a hint naming the closest valid names and the full list.

    >>> did_you_mean("comv", ["comve", "xcopa"])
    "Did you mean 'comve'? Valid names: comve, xcopa"
    """
    choices = sorted(choices)
    # case never matters for a suggestion (`XCOPA` -> 'xcopa')
    by_lower = {c.lower(): c for c in choices}
    close = [by_lower[c] for c in difflib.get_close_matches(name.lower(), list(by_lower), n=3, cutoff=0.5)]
    valid = ", ".join(choices) if choices else "(none)"
    if close:
        return f"Did you mean {' or '.join(repr(c) for c in close)}? Valid names: {valid}"
    return f"Valid names: {valid}"
