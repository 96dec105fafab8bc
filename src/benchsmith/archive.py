"""Archives of downloaded sources: which files are archives, and their safe extraction.

Apart from :mod:`benchsmith.source` (resolving and verifying sources), which
:func:`~benchsmith.source.fetch` calls for a downloaded archive.
"""

from __future__ import annotations

import lzma
import tarfile
import zipfile
import zlib
from pathlib import Path, PurePosixPath, PureWindowsPath

from benchsmith.errors import SourceError

#: file-name endings that promise an archive: such a file must extract, or the download is broken
ZIP_SUFFIXES = (".zip",)
TAR_SUFFIXES = (".tar", ".tar.gz", ".tgz", ".tar.bz2", ".tbz2", ".tbz", ".tar.xz", ".txz")
_ZIP_MAGIC = (b"PK\x03\x04", b"PK\x05\x06")
#: what reading a broken archive raises, besides tarfile.TarError and zipfile.BadZipFile:
#: a truncated gzip/bz2/xz stream (EOFError, which click would turn into "aborted"), a corrupt
#: one (zlib.error, lzma.LZMAError, OSError), an encrypted zip member (RuntimeError), an
#: unsupported zip compression method (NotImplementedError)
_ARCHIVE_ERRORS = (tarfile.TarError, zipfile.BadZipFile, EOFError, zlib.error, lzma.LZMAError, OSError,
                   RuntimeError, NotImplementedError)
_ARCHIVE_HINT = "Download it again (it may be truncated), or fetch it yourself and pass --sources DIR"


def archive_kind(path: Path) -> str | None:
    """``"zip"``, ``"tar"`` or ``None`` (a plain file), from the name first, then the content.

    A file named like an archive, or starting with a zip signature, counts as one even
    when it is truncated, so that extracting it fails instead of caching it as a file.
    """
    name = path.name.lower()
    if name.endswith(ZIP_SUFFIXES):
        return "zip"
    if name.endswith(TAR_SUFFIXES):
        return "tar"
    with open(path, "rb") as fh:
        head = fh.read(4)
    if head in _ZIP_MAGIC or zipfile.is_zipfile(path):
        return "zip"
    try:
        if tarfile.is_tarfile(path):
            return "tar"
    except _ARCHIVE_ERRORS:  # a compressed stream that breaks off inside the first tar header
        return "tar"
    return None


def _unsafe(member: str) -> str | None:
    """Why an archive member name may not be extracted (absolute, or with a ``..`` part), or ``None``."""
    if member.startswith(("/", "\\")) or PureWindowsPath(member).drive:
        return "is an absolute path"
    if ".." in PurePosixPath(member.replace("\\", "/")).parts:
        return "has a '..' component"
    return None


class _UnsafeNameError(tarfile.FilterError):
    """A tar member whose name is absolute or has a ``..`` part (the data filter would rewrite or allow it)."""

    def __init__(self, tarinfo: tarfile.TarInfo, why: str) -> None:
        self.tarinfo = tarinfo
        super().__init__(f"member {tarinfo.name!r} {why}")


def _tar_filter(member: tarfile.TarInfo, dest: str) -> tarfile.TarInfo | None:
    """tarfile's ``data`` filter, plus refusing the absolute names and ``..`` parts it would rewrite."""
    if why := _unsafe(member.name):
        raise _UnsafeNameError(member, why)
    # links outside dest, absolute links, device files and fifos raise tarfile.FilterError subclasses
    return tarfile.data_filter(member, dest)


def extract_archive(archive: Path, dest: Path, *, origin: str | None = None) -> None:
    """Extract a zip or tar archive (any compression tarfile reads) into the folder ``dest``.

    Only regular files and folders inside ``dest`` come out: tar members go through
    tarfile's ``data`` filter, and a member with an absolute name, a ``..`` part, a
    link leaving ``dest`` or pointing at an absolute path, or a device/fifo entry is
    refused (not silently rewritten). ``origin`` names the archive in messages
    (default: its path). ``dest`` may hold partial output after an error: callers
    extract into a temporary folder (as :func:`fetch` does).

    Raises:
        SourceError: a truncated or corrupt archive, or an unsafe member.
    """
    archive, dest = Path(archive), Path(dest)
    where = origin or str(archive)
    kind = archive_kind(archive)
    try:
        if kind == "zip":
            with zipfile.ZipFile(archive) as zf:
                for info in zf.infolist():
                    if why := _unsafe(info.filename):
                        raise SourceError(f"archive {where}: member {info.filename!r} {why}; expected paths "
                                          "inside the archive's folder", hint="Do not use this archive: it "
                                          "tries to write outside its folder. Check where it came from")
                zf.extractall(dest)
        elif kind == "tar":
            with tarfile.open(archive) as tf:
                tf.errorlevel = 1
                tf.extractall(dest, filter=_tar_filter)
        else:
            raise SourceError(f"{where} is not a zip or tar archive", hint=_ARCHIVE_HINT)
    except tarfile.FilterError as exc:
        raise SourceError(f"archive {where}: unsafe member ({exc}); expected regular files and folders "
                          "inside the archive's folder",
                          hint="Do not use this archive: it tries to write outside its folder or to create "
                          "links or device files. Check where it came from") from None
    except SourceError:
        raise
    except _ARCHIVE_ERRORS as exc:
        what = str(exc) or type(exc).__name__
        raise SourceError(f"archive {where} is truncated or corrupt ({type(exc).__name__}: {what}); "
                          f"expected a complete {kind} archive", hint=_ARCHIVE_HINT) from None
