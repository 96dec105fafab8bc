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
from collections.abc import Iterable
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
        "EROFS": "The file system is read-only: use a writable --registry / $BENCHSMITH_HOME",
        "EACCES": "Check the permissions of the path (or use a --registry you can write to)",
        "EPERM": "Check the permissions of the path (or use a --registry you can write to)",
    }

    @classmethod
    def from_os_error(cls, exc: OSError) -> EnvironmentFault | None:
        """The fault for an ``OSError`` whose errno is an environment fault, else None."""
        import errno

        name = errno.errorcode.get(exc.errno or -1)
        if name not in cls.HINTS:
            return None
        what = exc.strerror or name
        return cls(f"{what} ({name})", path=exc.filename, hint=cls.HINTS[name])


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
