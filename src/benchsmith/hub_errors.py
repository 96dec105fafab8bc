"""What a failed Hub request means to a user, and the settings every Hub session runs under.

Shared by publishing (:mod:`benchsmith.publish`) and every Hub read (:mod:`benchsmith.reference`,
:mod:`benchsmith.hub_guard`): :func:`explain` turns an exception from huggingface_hub into one
line saying what was being done and what to do; :func:`hub_session` gives each request a time
limit (:mod:`benchsmith.hub_http`), xet off for a Hub without it, and quiet progress bars.
"""

from __future__ import annotations

import os
import traceback
from collections.abc import Iterator
from contextlib import contextmanager
from urllib.parse import urlsplit

from huggingface_hub import constants
from huggingface_hub.errors import HfHubHTTPError, OfflineModeIsEnabled
from huggingface_hub.utils import are_progress_bars_disabled, disable_progress_bars, enable_progress_bars

from benchsmith import hub_http, progress

_XET_HOSTS = ("huggingface.co",)  # Hubs known to serve xet; another endpoint gets plain HTTP/LFS uploads


@contextmanager
def hub_session(endpoint: str) -> Iterator[None]:
    """For one publish: xet off for a Hub without xet (unless ``HF_HUB_DISABLE_XET`` is set),
    huggingface_hub's progress bars off when benchsmith's are (``--quiet``, not a terminal)."""
    hub_http.install()  # every request of this publish (or read) has a time limit
    xet_before = constants.HF_HUB_DISABLE_XET
    host = urlsplit(endpoint).hostname or ""
    if "HF_HUB_DISABLE_XET" not in os.environ and not any(host == h or host.endswith("." + h) for h in _XET_HOSTS):
        constants.HF_HUB_DISABLE_XET = True
    bars_off = not progress.enabled() and not are_progress_bars_disabled()
    if bars_off:
        disable_progress_bars()
    try:
        yield
    finally:
        constants.HF_HUB_DISABLE_XET = xet_before
        if bars_off:
            enable_progress_bars()


def explain(exc: Exception, endpoint: str, *, token_sent: bool = True, doing: str = "publishing",
             again: str = "publish again") -> tuple[str, str]:
    """(what went wrong, what to do) for an exception from huggingface_hub: ``doing`` names the
    operation (a read says "reading the Hub repo ... failed", never "publishing"), ``again`` what
    to do once fixed; ``token_sent`` False when no token was found, so a 401 says that rather
    than blaming a token nobody sent."""
    if isinstance(exc, OfflineModeIsEnabled):
        return "HF_HUB_OFFLINE is set", f"Unset HF_HUB_OFFLINE (or set it to 0) and {again}"
    if isinstance(exc, HfHubHTTPError):
        status = exc.response.status_code if exc.response is not None else None
        said = brief(exc, exc.server_message or str(exc))
        if status == 401 and not token_sent:
            return (f"no Hub token was found, and the Hub needs one (401: {said})",
                    ("Give a token with write access: set HF_TOKEN, or run `hf auth login` "
                     f"(`huggingface-cli login` in older versions), then {again}"))
        if status == 401:
            return (f"the Hub refused the token (401: {said})",
                    "Check the token (HF_TOKEN, or `hf auth login`) and that it may write to the organisation")
        if status == 403:
            return f"the token may not write there (403: {said})", "Use a token with write access to the repo"
        if status in (409, 412):
            return (f"the repo changed while {doing} ({status}: {said})",
                    f"Someone else pushed or tagged meanwhile: check the repo, then {again}")
        if status is not None and status >= 500:
            return f"the Hub failed ({status}: {said})", f"{again.capitalize()} later"
        return f"the Hub answered {status}: {said}", f"Check the repo name and --endpoint, then {again}"
    if from_xet(exc):
        return (f"the xet upload failed ({brief(exc)})",
                "A Hub other than huggingface.co may not serve xet: set HF_HUB_DISABLE_XET=1 and publish again")
    if isinstance(exc, TimeoutError) or type(exc).__name__.endswith("Timeout"):
        timeout, deadline = hub_http.limits()
        return (f"{doing} failed: the Hub did not answer in time ({brief(exc)})",
                (f"Check --endpoint / HF_ENDPOINT ({endpoint}) and the network, then {again} (the limits: "
                 f"BENCHSMITH_HUB_TIMEOUT={timeout:g}s of silence, BENCHSMITH_HUB_DEADLINE={deadline:g}s per answer)"))
    if isinstance(exc, ConnectionError | TimeoutError) or type(exc).__module__.split(".")[0] in (
        "httpx", "httpx2", "httpcore", "httpcore2"
    ):
        return (f"cannot reach the Hub ({brief(exc)})",
                f"Check --endpoint / HF_ENDPOINT ({endpoint}) and the network, then {again}")
    return f"{doing} failed ({brief(exc)})", f"Run with -v for the details, then {again}"


def network(exc: BaseException) -> bool:
    """The Hub could not be reached or did not answer in time (:func:`explain`'s "did not answer in
    time" and "cannot reach the Hub"): the machine's network, not the input, so a read reports it
    as an :class:`~benchsmith.errors.EnvironmentFault` (exit 3). ``HF_HUB_OFFLINE`` is a setting."""
    if isinstance(exc, OfflineModeIsEnabled | HfHubHTTPError) or from_xet(exc):
        return False
    return (isinstance(exc, TimeoutError | ConnectionError) or type(exc).__name__.endswith("Timeout")
            or type(exc).__module__.split(".")[0] in ("httpx", "httpx2", "httpcore", "httpcore2"))


def from_xet(exc: BaseException) -> bool:
    return any("xet" in frame.name for frame in traceback.extract_tb(exc.__traceback__))


def brief(exc: BaseException, detail: str | None = None) -> str:
    """One line: the exception's type and the first line of its message, or ``detail`` alone
    (what a Hub said about an HTTP error)."""
    text = (detail or str(exc) or "").strip().splitlines()
    line = " ".join(text[0].split()) if text else ""
    if len(line) > 240:
        line = line[:237] + "..."
    if detail:
        return line
    return f"{type(exc).__name__}: {line}" if line else type(exc).__name__
