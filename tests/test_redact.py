"""Credentials never reach an output: the patterns benchsmith masks, as a table."""

from __future__ import annotations

import logging
import sys

import pytest

from benchsmith.redact import RedactingFilter, redact, safe_url


@pytest.mark.parametrize(("text", "masked"), [
    ("Authorization: Bearer abc.def-1", "Authorization: Bearer ***"),
    ("[(b'Authorization', b'Bearer abc'), (b'Accept', b'*/*')]", "[(b'Authorization', b'Bearer ***'), (b'Accept', b'*/*')]"),
    ('{"authorization": "Basic dXNlcjpwYXNz"}', '{"authorization": "Basic ***"}'),
    ("token hf_AbCdEfGh0123456789xyz in a message", "token hf_*** in a message"),
    ("GET http://user:pw@host:8/api", "GET http://user:***@host:8/api"),
    ("https://host/api?x=1 (no credential)", "https://host/api?x=1 (no credential)"),
])
def test_every_credential_shape_is_masked(text, masked):
    assert redact(text) == masked


def test_an_explicit_secret_is_masked_wherever_it_appears():
    assert redact("sent s3cr3t-value twice: s3cr3t-value", "s3cr3t-value") == "sent *** twice: ***"


def test_safe_url_keeps_the_user_and_drops_the_password():
    assert safe_url("http://user:tok@127.0.0.1:9/x") == "http://user:***@127.0.0.1:9/x"
    assert safe_url("https://huggingface.co") == "https://huggingface.co"


def test_the_filter_masks_arguments_and_tracebacks():
    try:
        raise RuntimeError("Authorization: Bearer hf_AbCdEfGh0123456789")
    except RuntimeError:
        record = logging.LogRecord("x", logging.DEBUG, __file__, 1, "sent %s", ("hf_ZyXwVuTs98765432",),
                                   exc_info=sys.exc_info())
    RedactingFilter().filter(record)
    text = logging.Formatter().format(record)
    assert "hf_ZyXw" not in text and "hf_AbCd" not in text and "sent hf_***" in text and "Bearer ***" in text
