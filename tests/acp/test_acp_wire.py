"""`k1412 acp` on its wire: malformed input gets a JSON-RPC error, the agent serves on, nothing is written.

One agent process for the module, spoken to line by line (no SDK on the client side, so the bytes are
exactly what a broken client would send).
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from acp import PROTOCOL_VERSION
from acp.schema import InitializeResponse

from k1412_ls.acp.capabilities import PROTOCOL_VERSION as OURS
from k1412_ls.acp.capabilities import ClientState, initialize_reply
from tests.conftest import REPO_ROOT
from tests.support.acp_client import agent_env

pytestmark = pytest.mark.asyncio(loop_scope="module")


class Wire:
    def __init__(self, process: asyncio.subprocess.Process, home: Path) -> None:
        self.process = process
        self.home = home
        self.next_id = 100

    async def send(self, data: bytes) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(data)
        await self.process.stdin.drain()

    async def read(self) -> dict[str, Any]:
        assert self.process.stdout is not None
        line = await asyncio.wait_for(self.process.stdout.readline(), timeout=30)
        assert line, "the agent closed its output"
        return json.loads(line)

    async def until_id(self, request_id: Any) -> dict[str, Any]:
        while True:
            message = await self.read()
            if "method" not in message and message.get("id") == request_id:
                return message

    async def request(self, method: str, params: Any) -> dict[str, Any]:
        self.next_id += 1
        await self.send(json.dumps({"jsonrpc": "2.0", "id": self.next_id, "method": method,
                                    "params": params}).encode() + b"\n")
        return await self.until_id(self.next_id)


@pytest_asyncio.fixture(loop_scope="module", scope="module")
async def wire(tmp_path_factory: pytest.TempPathFactory) -> Any:
    home = tmp_path_factory.mktemp("acp-wire")
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "k1412_ls.cli", "acp", stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL, env=agent_env(home), cwd=str(REPO_ROOT))
    try:
        yield Wire(process, home)
    finally:
        if process.stdin is not None:
            process.stdin.close()
        try:
            await asyncio.wait_for(process.wait(), timeout=10)
        except TimeoutError:
            process.kill()


async def test_initialize_is_answered_honestly_and_validates_against_the_sdk(wire: Wire) -> None:
    reply = await wire.request("initialize", {"protocolVersion": 1, "clientCapabilities": {
        "fs": {"readTextFile": True, "writeTextFile": True}, "terminal": True}})
    result = InitializeResponse.model_validate(reply["result"])
    assert OURS == PROTOCOL_VERSION and result.protocol_version == PROTOCOL_VERSION
    caps = result.agent_capabilities
    assert caps is not None and caps.load_session is True
    assert caps.prompt_capabilities is not None and not caps.prompt_capabilities.image
    assert not caps.prompt_capabilities.audio and caps.prompt_capabilities.embedded_context
    assert caps.mcp_capabilities is not None and not caps.mcp_capabilities.http and not caps.mcp_capabilities.sse
    assert caps.session_capabilities is not None and caps.session_capabilities.list is not None
    assert caps.session_capabilities.fork is None and caps.session_capabilities.resume is None
    assert result.auth_methods == [] and result.agent_info is not None and result.agent_info.name == "k1412"


async def test_the_early_and_the_sdk_initialize_say_the_same() -> None:
    """The reply the wire sends before the SDK loads is the reply of the SDK agent's handler."""
    from k1412_ls.acp.acp_agent import K1412Agent
    from k1412_ls.acp.acp_server import AcpOptions

    params = {"protocolVersion": 1, "clientCapabilities": {"fs": {"readTextFile": True}}}
    early = initialize_reply(params, ClientState())
    client = ClientState()
    agent = K1412Agent(AcpOptions(), client)
    from acp.schema import ClientCapabilities

    late = await agent.initialize(1, ClientCapabilities.model_validate(params["clientCapabilities"]))
    # what the SDK's connection puts on the wire for it (exclude_unset, as acp.connection does)
    assert late.model_dump(mode="json", by_alias=True, exclude_none=True, exclude_unset=True) == early
    assert client.read_text_file and not client.write_text_file


@pytest.mark.parametrize(("line", "code"), [
    (b"this is not json\n", -32700),
    (b'{"jsonrpc": "2.0", "id": 7, "method": \n', -32700),
    (b"[1, 2, 3]\n", -32600),
    (b'"a string"\n', -32600),
    (b'{"jsonrpc": "2.0", "id": 8, "method": 42}\n', -32600),
    (b'{"jsonrpc": "2.0", "id": 9, "method": "session/prompt", "params": "text"}\n', -32600),
    (b'{"jsonrpc": "2.0", "id": 10, "method": "no/such/method", "params": {}}\n', -32601),
    (b'{"jsonrpc": "2.0", "id": 11, "method": "_k1412/unknown", "params": {}}\n', -32601),
    (b'{"jsonrpc": "2.0", "id": 12, "method": "session/new", "params": {"cwd": 5}}\n', -32602),
    (b'{"jsonrpc": "2.0", "id": 13, "method": "session/prompt", "params": {"sessionId": "c-000000000000", '
     b'"prompt": [{"type": "text", "text": "delete everything"}]}}\n', -32602),
    (b'\xff\xfe not utf-8\n', -32700),
])
async def test_malformed_input_gets_an_error_and_the_agent_serves_on(wire: Wire, line: bytes, code: int) -> None:
    before = sorted(p.relative_to(wire.home).as_posix() for p in wire.home.rglob("*"))
    await wire.send(line)
    reply = await wire.read()
    assert reply["error"]["code"] == code, reply
    assert reply["error"]["message"]
    # still serving: a well-formed request right after is answered
    listed = await wire.request("session/list", {})
    assert listed["result"] == {"sessions": []}
    assert sorted(p.relative_to(wire.home).as_posix() for p in wire.home.rglob("*")) == before  # nothing written


async def test_a_wrong_parameter_is_named_without_echoing_the_input(wire: Wire) -> None:
    reply = await wire.request("session/new", {"cwd": ["SECRET-LOOKING-INPUT"], "mcpServers": []})
    error = reply["error"]
    assert error["code"] == -32602 and error["message"].startswith("Invalid params: cwd: ")
    assert "SECRET-LOOKING-INPUT" not in json.dumps(reply)
    unknown = await wire.request("session/teleport", {})
    assert unknown["error"]["message"] == "Method not found: K1412 does not implement 'session/teleport'."


async def test_an_image_prompt_is_refused_with_one_sentence(wire: Wire, tmp_path: Path) -> None:
    created = await wire.request("session/new", {"cwd": str(tmp_path), "mcpServers": []})
    session_id = created["result"]["sessionId"]
    reply = await wire.request("session/prompt", {"sessionId": session_id, "prompt": [
        {"type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png"}]})
    assert reply["error"]["code"] == -32602 and "not image content" in reply["error"]["message"]
    assert list(tmp_path.iterdir()) == []


async def test_a_notification_for_an_unknown_method_gets_no_reply(wire: Wire) -> None:
    await wire.send(b'{"jsonrpc": "2.0", "method": "no/such/notification", "params": {}}\n')
    await wire.send(b'{"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": "c-000000000000"}}\n')
    listed = await wire.request("session/list", {})
    assert "result" in listed  # the first reply after the notifications is the list's own
