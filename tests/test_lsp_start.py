"""What a server costs before anyone asks it for anything: the redaction patterns load only when needed."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from lsprotocol import types

from k1412_ls.lsp import protocol
from k1412_ls.lsp.server import build_server


@pytest.fixture
def no_redactor() -> Iterator[None]:
    saved = protocol.K1412Protocol._redactor
    protocol.K1412Protocol._redactor = None
    try:
        yield
    finally:
        protocol.K1412Protocol._redactor = saved


def test_a_new_server_has_not_built_the_redactor(no_redactor: None) -> None:
    # pygls reads every attribute of the protocol when it makes it; a property that built the redactor
    # made every start pay for it (~60 ms and ~1.5 MiB before the initialize reply).
    server = build_server()
    assert server.protocol is not None
    assert protocol.K1412Protocol._redactor is None


def test_the_first_error_reply_builds_it_and_redacts(no_redactor: None, monkeypatch: pytest.MonkeyPatch) -> None:
    key = "sk-proj-" + "Zq7" * 16
    monkeypatch.setenv("OPENAI_API_KEY", key)
    server = build_server()
    error = types.ResponseError(code=-32602, message=f"unknown model {key}")
    sent = server.protocol.filter_error(error)
    assert protocol.K1412Protocol._redactor is not None
    assert key not in sent.message and "unknown model" in sent.message
