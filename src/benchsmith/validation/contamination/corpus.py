"""What a contamination scan reads: SOURCE arguments -> partitions -> batches of lines.

A SOURCE is one of:

* another release: a release folder, or ``NAME`` / ``NAME/VERSION`` in the registry; each
  matched value (the other release's own policy decides which fields) is one "line",
  located by ``NAME/VERSION/config/split``, the item's id and the field;
* a Hub dataset: ``hf://datasets/ORG/NAME@REV``, optionally ``?config=C&field=F`` (the
  data files under a folder or with a name starting with ``C``; the text column ``F``,
  default ``--text-field``); the files are downloaded once with ``huggingface_hub`` into
  its cache (offline: what the cache holds) and read from there;
* text files, folders or globs: ``.jsonl`` / ``.json`` (one object a line, the text
  field), ``.csv`` / ``.tsv`` (a header, the text columns joined by a space: default
  every column), ``.parquet`` (the text column), and anything else as plain text, one
  line an item; each may be ``.gz``. Located by file and 1-based line (for parquet, which
  has no lines: ``row``, 0-based as ``datasets`` indexes it).

Everything is streamed in bounded memory. Plain text and JSON lines are cut into
byte ranges of at most :data:`CHUNK_BYTES` at line ends (the line number where each range
starts is counted while cutting), parquet into row groups; CSV and ``.gz`` files are one
partition each (a quoted field may hold a newline; gzip cannot seek). A corpus is
untrusted: regular files only, undecodable bytes or malformed JSON are a
:class:`~benchsmith.errors.ParseError` naming the file and line.
"""

from __future__ import annotations

import csv
import glob
import gzip
import json
import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qs, urlsplit

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
from huggingface_hub.errors import HfHubHTTPError, OfflineModeIsEnabled

from benchsmith.errors import ConfigError, ParseError, SourceError

if TYPE_CHECKING:
    from benchsmith.release import Release

#: largest byte range of a plain-text or JSON-lines file read by one task
CHUNK_BYTES = 8 << 20
#: lines handed to the matcher at a time (csv, jsonl, parquet, releases)
BATCH_LINES = 8192
#: bytes of plain text handed to the matcher at a time
BATCH_BYTES = 1 << 20
_SKIP_SUFFIXES = (".md", ".py", ".sha256", ".gitattributes", ".lock")
_DATA_SUFFIXES = (".jsonl", ".json", ".csv", ".tsv", ".parquet", ".txt")
#: a corpus CSV's longest field (a document); csv's own default is 128 KiB. Set only while a
#: corpus CSV is read and restored after: the limit is process-global, and the loaders rely on
#: the default to call a runaway quote a malformed file.
CSV_FIELD_LIMIT = 1 << 24


@dataclass(frozen=True)
class Part:
    """One task's share of a source.

    ``kind`` is ``lines`` | ``jsonl`` | ``csv`` | ``parquet`` | ``release``; ``path`` the file
    (for a release: its folder); ``start``/``end`` a byte range (``end`` -1: to the end) or
    row groups (parquet) ; ``first`` the line number at ``start``; ``fields`` the text
    fields; ``where`` how locations name the file; ``config``/``split`` of a release.
    """

    source: str
    kind: str
    path: str
    where: str
    start: int = 0
    end: int = -1
    first: int = 1
    fields: tuple[str, ...] = ()
    config: str = ""
    split: str = ""


def _kind(path: str) -> str:
    name = path.removesuffix(".gz")
    suffix = os.path.splitext(name)[1].lower()
    return {".jsonl": "jsonl", ".json": "jsonl", ".csv": "csv", ".tsv": "csv", ".parquet": "parquet"}.get(
        suffix, "lines")


def _regular_files(arg: str) -> list[str]:
    """The files a path, folder or glob names (sorted; regular files only)."""
    if any(c in arg for c in "*?["):
        found = sorted(glob.glob(arg, recursive=True))
    elif os.path.isdir(arg):
        # a folder: its regular files, never one reached through a link out of it
        root = os.path.realpath(arg) + os.sep
        found = sorted(str(p) for p in Path(arg).rglob("*") if os.path.realpath(p).startswith(root))
    else:
        found = [arg] if os.path.exists(arg) else []
    files = [f for f in found if os.path.isfile(f) and not os.path.islink(f)
             and not os.path.basename(f).startswith(".") and not f.endswith(_SKIP_SUFFIXES)]
    if not files:
        raise SourceError(f"no corpus file matches {arg!r}", path=arg,
                          hint="Pass an existing file, folder or glob (quote globs so the shell leaves them to benchsmith)")
    return files


def _line_ranges(path: str, chunk: int) -> Iterator[tuple[int, int, int]]:
    """(start, end, first line) byte ranges of at most ``chunk`` bytes, cut after a newline."""
    size = os.path.getsize(path)
    start, line = 0, 1
    with open(path, "rb") as f:
        while start < size:
            f.seek(start)
            block = f.read(chunk)
            cut = block.rfind(b"\n")
            if cut < 0 or start + len(block) >= size:
                if start + len(block) < size:  # a line longer than a chunk: read on to its end
                    rest = f.readline()
                    block += rest
                end = start + len(block)
            else:
                block = block[: cut + 1]
                end = start + cut + 1
            yield start, end, line
            line += block.count(b"\n")
            start = end


def file_parts(source: str, files: Sequence[str], fields: tuple[str, ...], chunk: int = CHUNK_BYTES,
               where: dict[str, str] | None = None) -> list[Part]:
    """The partitions of some corpus files (see module docstring)."""
    parts = []
    for f in files:
        label = (where or {}).get(f, f)
        kind = _kind(label)  # by the name it was given: a Hub cache blob has no suffix
        if kind == "parquet":
            try:
                groups = pq.ParquetFile(f).num_row_groups
            except Exception as exc:  # noqa: BLE001 - any reader error is a bad file
                raise ParseError(f"not a readable parquet file ({exc})", path=f,
                                 hint="Pass a parquet file, or a text/jsonl/csv file") from None
            parts += [Part(source, kind, f, label, g, g + 1, 0, fields) for g in range(groups)]
        elif kind in ("lines", "jsonl") and not label.endswith(".gz"):
            parts += [Part(source, kind, f, label, s, e, first, fields) for s, e, first in _line_ranges(f, chunk)]
        else:
            parts.append(Part(source, kind, f, label, 0, -1, 1, fields))
    return parts


# --------------------------------------------------------------------------- reading


def _decoded(raw: bytes, path: str, first: int) -> str:
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = first + raw[: exc.start].count(b"\n")
        raise ParseError(f"bytes that are not UTF-8 ({exc.reason})", path=path, line=line,
                         hint="Convert the corpus to UTF-8") from None


def _gz(part: Part) -> bool:
    return part.where.endswith(".gz")


def _raw_lines(part: Part) -> Iterator[tuple[int, str]]:
    if _gz(part):
        try:
            with gzip.open(part.path, "rb") as f:
                for number, raw in enumerate(f, part.first):
                    yield number, _decoded(raw, part.path, number).rstrip("\r\n")
        except (OSError, EOFError) as exc:
            raise ParseError(f"a broken gzip stream ({exc})", path=part.path, hint="Download the file again") from None
        return
    with open(part.path, "rb") as f:
        f.seek(part.start)
        text = _decoded(f.read(part.end - part.start), part.path, part.first)
    for number, line in enumerate(text.splitlines(), part.first):
        yield number, line


def _jsonl(part: Part) -> Iterator[tuple[int, str]]:
    fields = part.fields or ("text",)
    for number, line in _raw_lines(part):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as exc:
            raise ParseError(f"not a JSON object ({exc.msg})", path=part.path, line=number,
                             hint="Each line of a .jsonl corpus must be one JSON object") from None
        if not isinstance(obj, dict) or not any(k in obj for k in fields):
            raise ParseError(f"no text field {' / '.join(fields)} in this line", path=part.path, line=number,
                             hint="Name the text field with --text-field")
        yield number, " ".join(_text(obj.get(k)) for k in fields if k in obj)


def _text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, (list, tuple)):
        return " ".join(_text(v) for v in value)
    return str(value)


def _csv(part: Part) -> Iterator[tuple[int, str]]:
    delimiter = "\t" if part.where.removesuffix(".gz").endswith(".tsv") else ","
    opener = gzip.open if _gz(part) else open
    before = csv.field_size_limit(CSV_FIELD_LIMIT)
    try:
        with opener(part.path, "rt", encoding="utf-8", newline="") as f:  # type: ignore[operator]
            reader = csv.reader(f, delimiter=delimiter)
            header = next(reader, None)
            if header is None:
                return
            if part.fields:
                missing = [c for c in part.fields if c not in header]
                if missing:
                    raise ParseError(f"no column {', '.join(missing)} (the header has {', '.join(header)})",
                                     path=part.path, line=1, hint="Name existing columns with --text-field")
                cols = [header.index(c) for c in part.fields]
            else:
                cols = list(range(len(header)))
            for row in reader:
                yield reader.line_num, " ".join(row[c] for c in cols if c < len(row))
    except UnicodeDecodeError as exc:
        raise ParseError(f"bytes that are not UTF-8 ({exc.reason})", path=part.path,
                         hint="Convert the corpus to UTF-8") from None
    except csv.Error as exc:
        raise ParseError(f"malformed CSV ({exc})", path=part.path, hint="Check the file's quoting") from None
    finally:
        csv.field_size_limit(before)


def _parquet(part: Part) -> Iterator[tuple[int, str]]:
    pf = pq.ParquetFile(part.path)
    fields = part.fields or ("text",)
    names = pf.schema_arrow.names
    missing = [c for c in fields if c not in names]
    if missing:
        raise ParseError(f"no column {', '.join(missing)} (columns: {', '.join(names)})", path=part.path,
                         hint="Name the text column with --text-field (or ?field= for a Hub dataset)")
    row = sum(pf.metadata.row_group(g).num_rows for g in range(part.start))
    for batch in pf.iter_batches(batch_size=BATCH_LINES, row_groups=list(range(part.start, part.end)),
                                 columns=list(fields)):
        cols = [batch.column(c).to_pylist() for c in fields]
        for values in zip(*cols):
            yield row, " ".join(_text(v) for v in values)
            row += 1


def _release(part: Part) -> Iterator[tuple[Any, str, str]]:
    """(item id, field, text) of every matched value of a release's split (without an id
    field: the item's 1-based position)."""
    # imported here: a worker reading text files never loads ``datasets``
    from benchsmith.release import Release
    from benchsmith.validation.dataview import ConfigView

    view = ConfigView(Release(part.path), part.config)
    ident = view.id_field
    row = 0
    try:
        for batch in view.batches(part.split, [ident, *part.fields] if ident else list(part.fields)):
            cols = {c: batch.column(c).to_pylist() for c in part.fields}
            ids = batch.column(ident).to_pylist() if ident else range(row + 1, row + batch.num_rows + 1)
            for i, item in enumerate(ids):
                for c in part.fields:
                    value = cols[c][i]
                    for v in (value if isinstance(value, list) else [value]):
                        yield item, c, _text(v)
            row += batch.num_rows
    except (pa.ArrowException, OSError) as exc:
        if isinstance(exc, OSError) and exc.errno is not None:
            raise  # the machine (EIO, ...), not the file: an environment fault
        raise _corrupt(_shards(part)[0] if _shards(part) else Path(part.path), exc) from None


def _shards(part: Part) -> list[Path]:
    return sorted((Path(part.path) / "data" / str(part.config)).glob(f"{part.split}-*.parquet"))


def _corrupt(shard: Path, exc: BaseException) -> ParseError:
    detail = " ".join(str(exc).split())[:200]
    return ParseError(f"not a readable parquet file ({type(exc).__name__}: {detail})", path=shard,
                      hint="The release is damaged: rebuild it, or download it again")


def _text_batches(part: Part) -> Iterator[tuple[pa.Array, range]]:
    """A plain-text range as Arrow string arrays of about BATCH_BYTES, one element per line (a
    line keeps its ``\n``, which is no word character), straight over the bytes read."""
    with open(part.path, "rb") as f:
        f.seek(part.start)
        raw = f.read(part.end - part.start if part.end >= 0 else -1)
    data = np.frombuffer(raw, dtype=np.uint8)
    offsets = np.flatnonzero(data == 10) + 1
    if not len(offsets) or offsets[-1] != len(data):  # the last line without a newline
        offsets = np.append(offsets, len(data))
    offsets = np.concatenate([[0], offsets]).astype(np.int64) if len(data) else np.zeros(1, dtype=np.int64)
    lines = pa.LargeStringArray.from_buffers(len(offsets) - 1, pa.py_buffer(offsets), pa.py_buffer(raw))
    try:
        lines.validate(full=True)
    except pa.ArrowInvalid:
        _decoded(raw, part.path, part.first)  # names the line that is not UTF-8
        raise
    i = 0
    while i < len(lines):
        step = max(1, int(np.searchsorted(offsets, offsets[i] + BATCH_BYTES) - i))
        yield lines[i : i + step], range(part.first + i, part.first + min(i + step, len(lines)))
        i += step


def batches(part: Part, size: int = BATCH_LINES) -> Iterator[tuple[pa.Array | list[str], Sequence[Any]]]:
    """(texts, where each is) in batches of ``size`` lines: ``where[i]`` is the line (or row)
    number, or an ``(item id, field)`` pair for a release."""
    if part.kind == "lines" and not _gz(part):  # the common case: Arrow arrays straight from the bytes
        yield from _text_batches(part)
        return
    if part.kind == "release":
        stream: Iterator[tuple[int, str, str]] = _release(part)
    else:
        reader = {"lines": _raw_lines, "jsonl": _jsonl, "csv": _csv, "parquet": _parquet}[part.kind]
        stream = ((n, "", t) for n, t in reader(part))
    texts: list[str] = []
    where: list[tuple[int, str]] = []
    for n, fld, text in stream:
        texts.append(text)
        where.append((n, fld))
        if len(texts) >= size:
            yield texts, where
            texts, where = [], []
    if texts:
        yield texts, where


# --------------------------------------------------------------------------- sources


def release_parts(release: Release, label: str, fields_of: Any) -> list[Part]:
    """One part per config and split of another release; ``fields_of(view)`` its matched fields."""
    from benchsmith.validation.dataview import configs

    parts = []
    for view in configs(release):
        fields = tuple(fields_of(view))
        if not fields:
            continue
        for split in view.splits:
            part = Part(label, "release", str(release.path), f"{label}/{view.config}/{split}",
                        fields=fields, config=view.config, split=split)
            for shard in _shards(part):  # a damaged footer is found here, before the scan starts
                try:
                    pq.read_metadata(shard)
                except (pa.ArrowException, OSError) as exc:
                    if isinstance(exc, OSError) and exc.errno is not None:
                        raise
                    raise _corrupt(shard, exc) from None
            parts.append(part)
    return parts


def hub_parts(spec: str, text_fields: tuple[str, ...]) -> list[Part]:
    """Download (into the huggingface_hub cache) and partition a ``hf://datasets/ORG/NAME@REV`` source."""
    from huggingface_hub import HfApi, hf_hub_download  # the client's: a worker reads the cached files

    url = urlsplit(spec)
    repo, _, revision = url.path.lstrip("/").partition("@")
    if url.netloc != "datasets" or repo.count("/") != 1:
        raise ConfigError(f"{spec!r} is not a Hub dataset address",
                          hint="Write hf://datasets/ORG/NAME@REVISION[?config=CONFIG&field=FIELD]")
    query = parse_qs(url.query)
    config = (query.get("config") or [""])[0]
    fields = tuple(query.get("field") or ()) or text_fields

    api = HfApi(endpoint=os.environ.get("HF_ENDPOINT") or None)  # read now: the library reads it at import
    try:
        listing = api.list_repo_files(repo, repo_type="dataset", revision=revision or None)
    except (HfHubHTTPError, OfflineModeIsEnabled, OSError) as exc:
        raise SourceError(f"cannot list {spec}: {str(exc).splitlines()[0]}", path=spec,
                          hint="Check the repo, the revision and the network (HF_ENDPOINT), then run it again") from None
    data = [f for f in listing if f.removesuffix(".gz").lower().endswith(_DATA_SUFFIXES)
            and not os.path.basename(f).startswith(".")]
    if config:
        chosen = [f for f in data if config in Path(f).parts[:-1] or Path(f).name.startswith(f"{config}")]
    else:
        chosen = data
    if not chosen:
        folders = sorted({p for f in data for p in Path(f).parts[:-1]})
        raise ConfigError(f"{spec}: no data file for config {config!r}" if config else f"{spec}: no data files",
                          hint=f"Folders there: {', '.join(folders[:20]) or 'none'}")
    local, where = [], {}
    for f in chosen:
        try:
            path = hf_hub_download(repo, f, repo_type="dataset", revision=revision or None, endpoint=api.endpoint)
        except (HfHubHTTPError, OfflineModeIsEnabled, OSError) as exc:
            raise SourceError(f"cannot download {f} of {spec}: {str(exc).splitlines()[0]}", path=spec,
                              hint="Check the network (HF_ENDPOINT), then run it again") from None
        # the cache links snapshot files to its blobs; read the blob, and only inside the cache
        real = os.path.realpath(path)
        cache_root = os.path.realpath(Path(path).parents[len(Path(f).parts) + 1])
        if not real.startswith(cache_root + os.sep) or not os.path.isfile(real):
            raise SourceError(f"{f} of {spec} resolves outside the download cache", path=path,
                              hint="Clear the huggingface_hub cache and run it again")
        local.append(real)
        where[real] = f"{spec.split('?')[0]}/{f}"
    return file_parts(spec, local, fields, where=where)
