"""Malformed input gets exactly one sanitized reply and the server stays responsive.

The requests that leave the server as it was share one server process (``raw``, byte level: each
reply is checked as sent); shutdown, start-up order, cancellation and a busy run each get their own
server and are end to end (``-m e2e``).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types
from pygls.exceptions import (
    JsonRpcException,
    JsonRpcInvalidRequest,
    JsonRpcRequestCancelled,
    JsonRpcServerNotInitialized,
)
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities

from k1412_ls.lsp import constants as c
from k1412_ls.lsp.protocol import sanitize_error
from k1412_ls.text.redact import Redactor
from tests.support.lsp_client import SERVER_COMMAND, Session, lsp_session, make_editor_client, wait_until
from tests.support.raw_lsp import RawServer, frame, request, unreachable_model_server

PARSE_ERROR = {"code": -32700, "message": "The message is not valid JSON; resend it."}


@pytest.fixture(scope="module")
def raw(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RawServer]:
    """One server for every test whose input leaves it as it was."""
    with unreachable_model_server(tmp_path_factory.mktemp("robustness")) as server:
        yield server


def _reply(server: RawServer, msg_id: str, method: str = "workspace/executeCommand",
           params: Any = None) -> dict[str, Any]:
    """Send one request; return its only reply."""
    server.send(frame(request(msg_id, method, params)))
    server.wait_for(msg_id)
    replies = server.answers(msg_id)
    assert len(replies) == 1, replies
    return replies[0]


def _serving(server: RawServer, msg_id: str) -> None:
    """The server still answers a real request with the configured models."""
    assert _reply(server, msg_id)["result"], "listModels answered with the configured models"


def _refusals(server: RawServer) -> list[dict[str, Any]]:
    """The messages that told the client a frame was refused."""
    return [m for m in list(server.replies) if m.get("method") in ("window/showMessage", "window/logMessage")
            and "refused" in m["params"]["message"]]


def _command(command: str, *arguments: Any) -> dict[str, Any]:
    return {"command": command, "arguments": list(arguments)}


async def _request(session: Session, method: str, params: object, timeout: float = 10) -> object:
    return await asyncio.wait_for(session.client.protocol.send_request_async(method, params), timeout)


async def _raw_request(client: LanguageClient, msg_id: str, method: str, params: object,
                       timeout: float = 10) -> object:
    """Send a request the typed client would refuse to send; await its reply."""
    future: concurrent.futures.Future[object] = concurrent.futures.Future()
    client.protocol._request_futures[msg_id] = future
    body = json.dumps({"jsonrpc": "2.0", "id": msg_id, "method": method, "params": params}).encode()
    stdin = client._server.stdin
    stdin.write(b"Content-Length: %d\r\n\r\n%s" % (len(body), body))
    await stdin.drain()
    return await asyncio.wait_for(asyncio.wrap_future(future), timeout)


async def _responsive(session: Session) -> None:
    assert await session.command(c.CMD_LIST_MODELS, {}, timeout=10)


def test_wrongly_typed_params_get_invalid_params(raw: RawServer) -> None:
    bad = {"textDocument": 5, "range": "everything", "context": None}
    error = _reply(raw, "bad-1", types.TEXT_DOCUMENT_CODE_ACTION, bad)["error"]
    assert error["code"] == -32602 and "textDocument/codeAction" in error["message"], error
    _serving(raw, "after-bad-1")


def test_unknown_methods_get_method_not_found_and_unknown_notifications_are_ignored(raw: RawServer) -> None:
    raw.send(frame({"jsonrpc": "2.0", "method": "k1412/noSuchNotification", "params": {"x": 1}}))
    assert _reply(raw, "unknown-1", "k1412/noSuchMethod", {"x": 1})["error"]["code"] == -32601
    error = _reply(raw, "unknown-2", params=_command("k1412.noSuchCommand", {}))["error"]
    assert error["code"] == -32602 and "noSuchCommand" in error["message"], error
    _serving(raw, "after-unknown")
    assert not [r for r in raw.answers(None) if r.get("error", {}).get("code") == -32601], "notifications get no reply"


@pytest.mark.parametrize("declared", [99_999_999_999_999, 2_000_000_000, c.MAX_FRAME_BYTES + 1])
def test_oversized_frames_are_refused_without_crash_or_hang(raw: RawServer, declared: int) -> None:
    told = len(_refusals(raw))
    data = f"Content-Length: {declared}\r\n\r\n".encode()
    if declared == c.MAX_FRAME_BYTES + 1:  # a real oversized body follows its header
        head, tail = b'{"jsonrpc":"2.0","id":99,"method":"x","params":"', b'"}'
        data += head + b"x" * (declared - len(head) - len(tail)) + tail
    raw.send(data)
    _serving(raw, f"after-oversized-{declared}")
    assert len(_refusals(raw)) > told, "the client is told the frame was refused"
    assert raw.answers(99) == [], "the refused body was not run"


def test_a_body_that_is_not_json_gets_a_parse_error_and_the_server_goes_on(raw: RawServer) -> None:
    before = len(raw.answers(None))
    raw.send(frame(b"{this is not json"))
    _serving(raw, "after-parse-error")
    parse_errors = raw.answers(None)[before:]
    assert [r.get("error") for r in parse_errors] == [PARSE_ERROR], parse_errors  # one reply, id null
    assert parse_errors[0]["jsonrpc"] == "2.0" and parse_errors[0]["id"] is None


def test_error_replies_are_redacted(raw: RawServer) -> None:
    secret = "sk-proj-" + "A1b2C3d4" * 4
    error = _reply(raw, "secret-1", params=_command(c.CMD_RUN_TASK, {"task": "hi", "model": secret}))["error"]
    assert secret not in json.dumps(error) and "[REDACTED]" in error["message"], error
    assert error.get("data") is None
    # The server's own log (pygls logs the failed command, traceback included) is redacted too.
    deadline = time.monotonic() + 5
    while not any("Unknown model" in line for line in list(raw.stderr)) and time.monotonic() < deadline:
        time.sleep(0.05)
    log = "\n".join(raw.stderr)
    assert "Unknown model" in log, log[-2000:]  # control: the error was logged
    assert secret not in log and "[REDACTED]" in log, log[-2000:]


@pytest.mark.e2e
async def test_requests_after_shutdown_get_invalid_request(tmp_path: Path) -> None:
    async with lsp_session(tmp_path) as session:
        await asyncio.wait_for(session.client.shutdown_async(None), 10)
        with pytest.raises(JsonRpcInvalidRequest) as caught:
            await session.command(c.CMD_LIST_MODELS, {}, timeout=5)
        assert "shutting down" in caught.value.message
        with pytest.raises(JsonRpcInvalidRequest):
            await _request(session, types.SHUTDOWN, None, timeout=5)
        session.client.exit(None)
        process = session.client._server
        assert await asyncio.wait_for(process.wait(), 10) == 0


@pytest.mark.e2e
async def test_requests_before_initialize_get_server_not_initialized(tmp_path: Path) -> None:
    config = ClientServerConfig(server_command=SERVER_COMMAND, client_factory=make_editor_client,
                                server_env=dict(os.environ))
    client = await config.start()
    try:
        params = types.ExecuteCommandParams(command=c.CMD_LIST_MODELS, arguments=[{}])
        raw = {"command": c.CMD_LIST_MODELS, "arguments": [{}]}
        with pytest.raises(JsonRpcException) as caught:
            await _raw_request(client, "early-1", types.WORKSPACE_EXECUTE_COMMAND, raw)
        assert caught.value.code == JsonRpcServerNotInitialized.CODE
        await asyncio.wait_for(client.initialize_session(types.InitializeParams(
            capabilities=client_capabilities("visual-studio-code"), root_uri=tmp_path.as_uri())), 30)
        assert await asyncio.wait_for(client.workspace_execute_command_async(params), 10)
        await asyncio.wait_for(client.shutdown_session(), 10)
    finally:
        if client._server is not None and client._server.returncode is None:
            client._server.kill()
        await client.stop()


@pytest.mark.e2e
async def test_a_cancelled_request_gets_one_reply_and_later_requests_still_work(tmp_path: Path) -> None:
    script = [{"delay_s": 5, "content": "late"}]
    async with lsp_session(tmp_path, script) as session:
        replies: list[object] = []
        original = session.client.protocol._handle_response

        def count(msg_id: object, result: object = None, error: object = None) -> None:
            if msg_id == "slow-1":
                replies.append(error or result)
            original(msg_id, result, error)

        session.client.protocol._handle_response = count  # type: ignore[method-assign]
        _, pending = session.send_command(c.CMD_RUN_TASK, {"task": "Say hi."}, msg_id="slow-1")
        await wait_until(lambda: bool(session.events_of("model.requested")))
        session.client.cancel_request(types.CancelParams(id="slow-1"))
        with pytest.raises(JsonRpcRequestCancelled):
            await asyncio.wait_for(pending, 2.0)
        session.client.cancel_request(types.CancelParams(id="slow-1"))  # a second cancel is harmless
        await _responsive(session)
        await wait_until(lambda: bool(session.events_of("run.cancelled")), timeout=10)
        await asyncio.sleep(0.3)
        assert len(replies) == 1


@pytest.mark.e2e
async def test_a_flood_of_did_change_during_a_run_is_absorbed(tmp_path: Path) -> None:
    script = [
        {"delay_s": 1.0, "tool_calls": [{"name": "read_file", "arguments": {"path": "notes.txt"}}]},
        {"content": "Read the notes."},
    ]
    async with lsp_session(tmp_path, script) as session:
        notes = session.root / "notes.txt"
        notes.write_text("start\n", encoding="utf-8")
        uri = session.editor.open(notes)
        _, pending = session.send_command(c.CMD_RUN_TASK, {"task": "Read notes.txt and summarize it."})
        for number in range(400):
            session.editor.type_at_end(uri, f"line {number} 😀\n")
        await _responsive(session)
        result = await asyncio.wait_for(pending, 30)
        assert result["status"] == "completed", result
        tool_message = session.model.chat_requests[1]["body"]["messages"][-1]["content"]
        assert "line 399 😀" in tool_message  # the agent read the buffer after every keystroke


@pytest.mark.parametrize(("error", "expected"), [
    (types.ResponseError(code=-32603, message="ValueError: token sk-proj-abcdefghijklmnopqrstuvwx",
                         data={"traceback": ["File x.py, line 1"]}),
     "K1412 hit an internal error (ValueError); the details are in the server log."),
    (types.ResponseError(code=-32603, message="", data=None),
     "K1412 hit an internal error (error); the details are in the server log."),
    (types.ResponseError(code=-32602, message="Bad key Bearer abcdefghijklmnop", data={"x": 1}),
     "Bad key [REDACTED]"),
])
def test_sanitize_error_drops_data_and_secrets(error: types.ResponseError, expected: str) -> None:
    clean = sanitize_error(error, Redactor())
    assert clean.message == expected
    assert clean.data is None
    assert clean.code == error.code


@pytest.mark.e2e
def test_the_server_writes_nothing_but_protocol_to_stdout(tmp_path: Path) -> None:
    message = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "shutdown"}).encode()
    frames = b"Content-Length: %d\r\n\r\n%s" % (len(message), message)
    exit_message = json.dumps({"jsonrpc": "2.0", "method": "exit"}).encode()
    frames += b"Content-Length: %d\r\n\r\n%s" % (len(exit_message), exit_message)
    done = subprocess.run([sys.executable, "-m", "k1412_ls.cli", "lsp"], input=frames, capture_output=True,
                          timeout=30, check=False)
    # Not initialized: shutdown gets ServerNotInitialized; stdout holds only framed JSON.
    assert done.stdout.startswith(b"Content-Length: ")
    header, _, body = done.stdout.partition(b"\r\n\r\n")
    length = int(header.split(b"\r\n")[0].split(b":")[1])
    reply = json.loads(body[:length])
    assert body[length:] == b""
    assert reply["id"] == 1 and reply["error"]["code"] == -32002
