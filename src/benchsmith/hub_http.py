"""Every Hub request benchsmith makes has a time limit.

huggingface_hub's shared HTTP client waits forever by default (``timeout=None``), so a Hub or
proxy that stops answering, or drips its answer a byte at a time, would hang ``diff hf://...``,
``audit --previous`` or ``publish``. :func:`install` gives huggingface_hub (through its public
``set_client_factory``) a client with two limits:

* ``BENCHSMITH_HUB_TIMEOUT`` (seconds, default 60): the longest silence while connecting,
  sending or receiving (httpx's per-operation timeout). Calls that pass their own timeout
  (huggingface_hub's downloads) keep theirs.
* ``BENCHSMITH_HUB_DEADLINE`` (seconds, default 900): the longest a response body may take
  once its headers arrived, however steadily its bytes trickle in. The clock starts at the
  headers, so a long upload does not count against the short answer that follows it.

A limit that is hit is an ``httpx`` timeout, which the callers report as one line naming what
was being done (:func:`benchsmith.hub_errors.explain`).
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Iterable, Iterator

import httpx2
from huggingface_hub import set_client_factory

from benchsmith.errors import ConfigError

DEFAULT_TIMEOUT = 60.0
DEFAULT_DEADLINE = 900.0

_lock = threading.Lock()
_installed: tuple[float, float] | None = None


def limits() -> tuple[float, float]:
    """(seconds of silence, seconds per response body) from the environment, or the defaults."""
    out = []
    for name, default in (("BENCHSMITH_HUB_TIMEOUT", DEFAULT_TIMEOUT), ("BENCHSMITH_HUB_DEADLINE", DEFAULT_DEADLINE)):
        text = os.environ.get(name, "").strip()
        try:
            value = float(text) if text else default
        except ValueError:
            value = -1.0
        if not value > 0:
            raise ConfigError(f"{name}={text!r} is not a number of seconds above 0",
                              hint=f"Set it to seconds (e.g. {default:g}) or leave it unset")
        out.append(value)
    return out[0], out[1]


class _Deadline(httpx2.SyncByteStream):
    """A response body that must be read completely within ``seconds``."""

    def __init__(self, stream: Iterable[bytes], seconds: float, request: httpx2.Request) -> None:
        self._stream, self._seconds, self._request = stream, seconds, request
        self._end = time.monotonic() + seconds

    def __iter__(self) -> Iterator[bytes]:
        for chunk in self._stream:
            if time.monotonic() > self._end:
                raise httpx2.ReadTimeout(f"the answer to {self._request.method} {self._request.url.path} took longer "
                                         f"than {self._seconds:g}s", request=self._request)
            yield chunk

    def close(self) -> None:
        if isinstance(self._stream, httpx2.SyncByteStream):
            self._stream.close()


class _DeadlineTransport(httpx2.BaseTransport):
    def __init__(self, deadline: float) -> None:
        self._inner = httpx2.HTTPTransport()
        self._deadline = deadline

    def handle_request(self, request: httpx2.Request) -> httpx2.Response:
        response = self._inner.handle_request(request)
        if isinstance(response.stream, httpx2.SyncByteStream):  # always, from the sync transport
            response.stream = _Deadline(response.stream, self._deadline, request)
        return response

    def close(self) -> None:
        self._inner.close()


def install() -> None:
    """Make huggingface_hub's shared client the limited one (again when the limits changed)."""
    global _installed
    timeout, deadline = limits()
    with _lock:
        if _installed == (timeout, deadline):
            return

        def client() -> httpx2.Client:
            return httpx2.Client(transport=_DeadlineTransport(deadline), follow_redirects=True,
                                 timeout=httpx2.Timeout(timeout))

        set_client_factory(client)
        _installed = (timeout, deadline)
