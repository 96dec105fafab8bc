"""Every Hub request benchsmith makes has a time limit.

huggingface_hub's shared HTTP client waits forever by default (``timeout=None``), so a Hub or
proxy that stops answering, or drips its answer a byte at a time, would hang ``diff hf://...``,
``audit --previous`` or ``publish``. :func:`install` gives huggingface_hub (through its public
``set_client_factory``) a client with two limits:

* ``BENCHSMITH_HUB_TIMEOUT`` (seconds, default 60): the longest silence while connecting,
  sending or receiving (httpx's per-operation timeout). Calls that pass their own timeout
  (huggingface_hub's downloads) keep theirs.
* ``BENCHSMITH_HUB_DEADLINE`` (seconds, default 900): the longest an answer may take, its
  headers and its body together, however steadily their bytes trickle in (a per-read timeout
  never fires on a server that sends a byte every few seconds). The clock starts when the
  request has been sent (httpx's public ``trace`` extension says when the client starts
  waiting for the headers), so a long upload does not count against the short answer that
  follows it.

The headers are awaited in a helper thread, as httpx has no total timeout of its own: when
the deadline passes, the caller gets the timeout at once and the thread, left to its
connection, closes whatever answer still comes (it ends with the connection, at the latest
after ``BENCHSMITH_HUB_TIMEOUT`` of silence, or with the process). A limit that is hit is an
``httpx`` timeout, which the callers report as one line naming what was being done
(:func:`benchsmith.hub_errors.explain`).
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
    """(seconds of silence, seconds per answer: headers and body) from the environment, or the defaults."""
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


def _late(request: httpx2.Request, seconds: float) -> httpx2.ReadTimeout:
    return httpx2.ReadTimeout(f"the answer to {request.method} {request.url.path} took longer than {seconds:g}s",
                              request=request)


class _Deadline(httpx2.SyncByteStream):
    """A response body that must be read completely by ``end`` (a ``time.monotonic()``)."""

    def __init__(self, stream: Iterable[bytes], end: float, seconds: float, request: httpx2.Request) -> None:
        self._stream, self._end, self._seconds, self._request = stream, end, seconds, request

    def __iter__(self) -> Iterator[bytes]:
        for chunk in self._stream:
            if time.monotonic() > self._end:
                raise _late(self._request, self._seconds)
            yield chunk

    def close(self) -> None:
        if isinstance(self._stream, httpx2.SyncByteStream):
            self._stream.close()


class _Exchange:
    """One request sent by a helper thread, so that waiting for its headers can end at a deadline."""

    def __init__(self, transport: httpx2.BaseTransport, request: httpx2.Request) -> None:
        self.waiting = threading.Event()  # the request is sent: the headers are awaited
        self.done = threading.Event()
        self._lock = threading.Lock()
        self._abandoned = False
        self._outcome: httpx2.Response | BaseException | None = None
        outer = request.extensions.get("trace")

        def trace(event: str, info: dict) -> None:  # httpx's public trace extension (httpcore events)
            if event.endswith(".receive_response_headers.started"):
                self.waiting.set()
            if outer is not None:
                outer(event, info)

        request.extensions = {**request.extensions, "trace": trace}
        self._transport, self._request = transport, request
        threading.Thread(target=self._send, name="benchsmith-hub-request", daemon=True).start()

    def _send(self) -> None:
        try:
            response = self._transport.handle_request(self._request)
        except BaseException as exc:  # noqa: BLE001 - handed to the caller's thread
            with self._lock:
                self._outcome = exc
        else:
            with self._lock:
                self._outcome = response
                late = self._abandoned
            if late:  # the caller gave up on it: free the connection
                response.close()
        finally:
            self.done.set()

    def abandon(self) -> None:
        with self._lock:
            self._abandoned = True
            response = self._outcome if isinstance(self._outcome, httpx2.Response) else None
        if response is not None:
            response.close()

    def outcome(self) -> httpx2.Response:
        if isinstance(self._outcome, BaseException):
            raise self._outcome
        assert self._outcome is not None  # done is set
        return self._outcome


class _DeadlineTransport(httpx2.BaseTransport):
    def __init__(self, deadline: float) -> None:
        self._inner = httpx2.HTTPTransport()
        self._deadline = deadline

    def handle_request(self, request: httpx2.Request) -> httpx2.Response:
        exchange = _Exchange(self._inner, request)
        while not exchange.waiting.wait(0.1) and not exchange.done.is_set():
            pass  # sending: each write has the per-operation timeout
        end = time.monotonic() + self._deadline
        if not exchange.done.wait(max(0.0, end - time.monotonic())):
            exchange.abandon()
            raise _late(request, self._deadline)
        response = exchange.outcome()
        if isinstance(response.stream, httpx2.SyncByteStream):  # always, from the sync transport
            response.stream = _Deadline(response.stream, end, self._deadline, request)
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
