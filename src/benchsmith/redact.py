"""No output, log line or record holds a credential.

What a credential looks like in benchsmith's world: a Hugging Face token (``hf_`` and 30-odd
letters), the value of an ``Authorization`` header (httpx/httpcore debug logs print the
headers they send and receive, and a careless Hub or proxy echoes them in an error), and the
password of a URL (``--endpoint http://user:TOKEN@host``). :func:`redact` replaces each with
``***``; :class:`RedactingFilter` applies it to every log record (message, arguments,
traceback), installed on every handler of the root logger by :func:`install` (the CLI's
logging setup calls it), so ``-v`` adds detail but never a secret; :func:`safe_url` is the form
of a URL that records (``.published/*.json``) and messages keep.
"""

from __future__ import annotations

import logging
import re
from urllib.parse import urlsplit, urlunsplit

MASK = "***"

#: an Authorization header's value, as text (``Authorization: Bearer x``), JSON/dict
#: (``"authorization": "Bearer x"``) or httpcore's header tuples (``(b'Authorization', b'Bearer x')``)
_AUTH = re.compile(r"""(?i)(authorization['"]?\s*(?:[:=]|,)\s*(?:b?['"])?\s*(?:(?:bearer|basic|token)\s+)?)[^\s'",)}\]]+""")
#: a Hugging Face access token (user and organisation tokens, and the API's older ``api_`` form)
_HF_TOKEN = re.compile(r"\b(hf|api)_[A-Za-z0-9]{8,}")
#: the password part of a URL's user info: ``scheme://user:PASSWORD@host``
_URL_PASSWORD = re.compile(r"(\b[a-zA-Z][a-zA-Z0-9+.-]*://[^/\s:@]*):[^/\s@]*@")


def redact(text: str, *secrets: str | None) -> str:
    """``text`` with every credential (see the module docstring) and each of ``secrets`` masked."""
    for secret in secrets:
        if secret:
            text = text.replace(secret, MASK)
    text = _AUTH.sub(lambda m: m.group(1) + MASK, text)
    text = _HF_TOKEN.sub(lambda m: f"{m.group(1)}_{MASK}", text)
    return _URL_PASSWORD.sub(lambda m: f"{m.group(1)}:{MASK}@", text)


def safe_url(url: str) -> str:
    """``url`` without the password of its user info (``http://user:x@host`` -> ``http://user:***@host``)."""
    parts = urlsplit(url)
    if parts.password is None:
        return url
    netloc = parts.netloc.rsplit("@", 1)[1]
    user = parts.username or ""
    return urlunsplit(parts._replace(netloc=f"{user}:{MASK}@{netloc}"))


class RedactingFilter(logging.Filter):
    """Masks credentials in a record's text, arguments and traceback before any handler formats it."""

    _formatter = logging.Formatter()

    def filter(self, record: logging.LogRecord) -> bool:
        record.msg = redact(record.getMessage())
        record.args = None
        if record.exc_info and not record.exc_text:
            record.exc_text = self._formatter.formatException(record.exc_info)
        if record.exc_text:
            record.exc_text = redact(record.exc_text)
        if record.stack_info:
            record.stack_info = redact(record.stack_info)
        return True


def install(logger: logging.Logger | None = None) -> None:
    """Put one :class:`RedactingFilter` on every handler of ``logger`` (the root logger by default)."""
    target = logger or logging.getLogger()
    for handler in target.handlers:
        if not any(isinstance(f, RedactingFilter) for f in handler.filters):
            handler.addFilter(RedactingFilter())
