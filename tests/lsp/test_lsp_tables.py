"""A long-lived server keeps nothing of finished requests and runs (pygls 2.1.1 keeps some forever)."""

from __future__ import annotations

import asyncio
import json
import re
from importlib.metadata import version
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types
from pygls.lsp.server import LanguageServer
from pygls.protocol import LanguageServerProtocol

from k1412_ls.lsp.protocol import K1412Protocol
from k1412_ls.lsp.pygls_private import table_sizes
from tests.conftest import write_config
from tests.support.raw_lsp import RawServer, frame
from tests.support.scripted_server import ScriptedServer


class _Sink:
    def __init__(self) -> None:
        self.sent: list[dict[str, Any]] = []

    def write(self, data: bytes) -> None:
        self.sent.append(json.loads(data.split(b"\r\n\r\n", 1)[1]))

    def close(self) -> None:
        pass


def _server(protocol_cls: type[LanguageServerProtocol]) -> tuple[LanguageServer, _Sink]:
    server = LanguageServer("pin", "1", protocol_cls=protocol_cls)

    @server.command("pin.work")
    async def work(ls: LanguageServer, *args: Any) -> dict[str, int]:
        await asyncio.sleep(0)
        return {"done": 1}

    @server.feature(types.INITIALIZED)
    async def initialized(ls: LanguageServer, params: Any) -> None:
        await asyncio.sleep(0)

    sink = _Sink()
    server.protocol.set_writer(sink)  # type: ignore[arg-type]
    return server, sink


def _receive(server: LanguageServer, message: dict[str, Any]) -> None:
    protocol = server.protocol
    protocol.handle_message(protocol.structure_message({"jsonrpc": "2.0", **message}))


async def _settle() -> None:
    for _ in range(5):
        await asyncio.sleep(0)


@pytest.mark.parametrize(("protocol_cls", "kept"), [(LanguageServerProtocol, 15), (K1412Protocol, 0)],
                         ids=["pygls", "k1412"])
async def test_finished_commands_notifications_and_abandoned_requests_leave_no_entry(
        tmp_path: Path, protocol_cls: type[LanguageServerProtocol], kept: int) -> None:
    server, sink = _server(protocol_cls)
    _receive(server, {"id": "init", "method": "initialize",
                      "params": {"processId": None, "rootUri": tmp_path.as_uri(), "capabilities": {}}})
    _receive(server, {"method": "initialized", "params": {}})
    await _settle()
    for index in range(10):
        _receive(server, {"id": f"cmd-{index}", "method": "workspace/executeCommand",
                          "params": {"command": "pin.work", "arguments": []}})
        await _settle()
    # A server request the caller stopped waiting for (it timed out), and one the client refused.
    abandoned = server.protocol.send_request(types.WORKSPACE_CONFIGURATION, types.ConfigurationParams(items=[]))
    abandoned.cancel()
    server.protocol.send_request(types.WORKSPACE_APPLY_EDIT,
                                 types.ApplyWorkspaceEditParams(edit=types.WorkspaceEdit()))
    sink_id = sink.sent[-1]["id"]
    _receive(server, {"id": sink_id, "error": {"code": -32603, "message": "refused"}})
    await _settle()
    assert [m["result"] for m in sink.sent if str(m.get("id", "")).startswith("cmd-")] == [{"done": 1}] * 10
    sizes = table_sizes(server)
    # pygls 2.1.1 keeps 13 futures (each command's inner task, the initialized notification's handler and
    # its inner coroutine, the abandoned request) and 2 result types (the abandoned and the refused request). Another pygls
    # version may differ: check k1412_ls.lsp.pygls_private.py against it before changing this number.
    assert version("pygls") == "2.1.1"
    assert sizes["requests"] + sizes["result_types"] == kept, sizes


TABLES = re.compile(r"in flight: requests=(\d+) result_types=(\d+) progress_tokens=(\d+) runs=(\d+) active=(\d+)")


def _script(index: int) -> list[dict[str, Any]]:
    name = f"f{index}.txt"
    return [{"tool_calls": [{"name": "write_file", "arguments": {"path": name, "content": f"{index}\n"}}]},
            {"tool_calls": [{"name": "read_file", "arguments": {"path": name}}]},
            {"content": f"Wrote {name} and read it back."}]


def test_a_server_running_task_after_task_keeps_no_entry_of_finished_runs(tmp_path: Path) -> None:
    runs = 25
    root = tmp_path / "ws"
    root.mkdir()
    with ScriptedServer([step for index in range(runs) for step in _script(index)]) as model:
        config = write_config(tmp_path / "k1412.toml", model.base_url)
        server = RawServer(root, env={"K1412_CONFIG": str(config)})
        try:
            for index in range(runs):
                server.send(frame({"jsonrpc": "2.0", "id": f"run-{index}", "method": "workspace/executeCommand",
                                   "params": {"command": "k1412.runTask", "workDoneToken": f"tok-{index}",
                                              "arguments": [{"task": f"Create f{index}.txt holding {index}."}]}}))
                server.wait_for(f"run-{index}", timeout=60)
                (reply,) = server.answers(f"run-{index}")
                assert reply["result"]["status"] == "completed", reply
            tables = [tuple(map(int, m.groups())) for m in TABLES.finditer(server.log())]
        finally:
            server.close()
    assert len(tables) == runs
    # At each start: this request, its command task and its progress token, nothing of the runs before it.
    assert set(tables) == {(2, 0, 1, 0, 0)}, tables
