"""Every raw reader refuses what is not a regular file, naming it, before reading a byte: a FIFO
would block it forever and ``/dev/zero`` would fill memory (what builders, plug-ins and the
harvest call directly, without the ``build`` command's own checks)."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

from benchsmith.errors import SourceError
from benchsmith.loaders import (
    comve_csv,
    copa_xml,
    moses,
    mucow_json,
    rawfile,
    rocstories,
    sense_inventory,
    tmx,
    xcopa_jsonl,
)

READERS = {
    "read_bytes": rawfile.read_bytes,
    "read_text": rawfile.read_text,
    "comve_csv": comve_csv.read_subtask_a,
    "copa_xml": copa_xml.read_copa_xml,
    "moses.read_lines": moses.read_lines,
    "moses.count_lines": moses.count_lines,
    "mucow_json": mucow_json.read_mucow_json,
    "rocstories": rocstories.read_rocstories,
    "xcopa_jsonl": xcopa_jsonl.read_xcopa_jsonl,
    "tmx": lambda p: list(tmx.iter_tmx(p)),
    "omw_tab": lambda p: list(sense_inventory.iter_omw_tab(p)),
}


def call(reader, path: Path, fifo: Path | None = None) -> BaseException | None:
    """Run the reader in a thread; a reader still blocked after 10 s is released (a writer opens
    and closes the FIFO) and the test fails."""
    out: list[BaseException | None] = [None]

    def run() -> None:
        try:
            reader(path)
        except BaseException as exc:  # noqa: BLE001 - returned to the test
            out[0] = exc

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(10)
    if thread.is_alive():
        assert fifo is not None
        os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
        thread.join(10)
        pytest.fail(f"the reader blocked on {path}")
    return out[0]


@pytest.mark.parametrize("name", sorted(READERS))
def test_a_fifo_is_refused_naming_it(name, tmp_path):
    (tmp_path / "et").mkdir()  # a layout every reader accepts (XCOPA's names the language twice)
    fifo = tmp_path / "et" / "val.et.jsonl"
    os.mkfifo(fifo)
    (tmp_path / "link" / "et").mkdir(parents=True)
    link = tmp_path / "link" / "et" / "val.et.jsonl"
    link.symlink_to(fifo)
    for path in (fifo, link):
        exc = call(READERS[name], path, fifo)
        assert isinstance(exc, SourceError), exc
        assert str(exc).startswith(f"{path}: is a named pipe (FIFO); expected a regular file")


@pytest.mark.parametrize("name", sorted(READERS))
def test_a_device_is_refused_naming_it(name, tmp_path):
    (tmp_path / "et").mkdir()
    link = tmp_path / "et" / "val.et.jsonl"
    link.symlink_to("/dev/null")
    exc = call(READERS[name], link)
    assert isinstance(exc, SourceError) and str(exc).startswith(f"{link}: is a character device"), exc


def test_a_directory_is_refused_naming_it(tmp_path):
    with pytest.raises(SourceError, match=f"^{tmp_path}: is a directory; expected a file"):
        rawfile.read_bytes(tmp_path)
