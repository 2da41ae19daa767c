"""The run machinery is ready before the first task once the editor goes idle; never built twice."""

from __future__ import annotations

import time
from pathlib import Path

from tests.conftest import write_config
from tests.support.raw_lsp import RawServer, frame
from tests.support.scripted_server import ScriptedServer

SCRIPT = [{"tool_calls": [{"name": "write_file", "arguments": {"path": "a.txt", "content": "a\n"}}]},
          {"tool_calls": [{"name": "read_file", "arguments": {"path": "a.txt"}}]},
          {"content": "Wrote a.txt and read it back."}]


def _run(server: RawServer, msg_id: str) -> dict[str, object]:
    server.send(frame({"jsonrpc": "2.0", "id": msg_id, "method": "workspace/executeCommand",
                       "params": {"command": "k1412.runTask", "arguments": [{"task": "Create a.txt holding a."}]}}))
    server.wait_for(msg_id, timeout=60)
    (reply,) = server.answers(msg_id)
    return reply


def _wait_for_log(server: RawServer, text: str, timeout: float = 20) -> None:
    deadline = time.monotonic() + timeout
    while text not in server.log():
        assert time.monotonic() < deadline, f"{text!r} never logged: {server.log()[-2000:]}"
        time.sleep(0.05)


def test_an_idle_editor_gets_the_runtime_built_before_its_first_task(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    with ScriptedServer(SCRIPT) as model:
        server = RawServer(root, env={"K1412_CONFIG": str(write_config(tmp_path / "k1412.toml", model.base_url))})
        try:
            _wait_for_log(server, "run machinery ready")
            assert server.log().count("runtime built") == 1
            reply = _run(server, "first")
        finally:
            server.close()
    assert reply["result"]["status"] == "completed", reply  # type: ignore[index]
    assert server.log().count("runtime built") == 1


def test_a_task_sent_at_once_runs_and_the_runtime_is_built_once(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    with ScriptedServer(SCRIPT) as model:
        server = RawServer(root, env={"K1412_CONFIG": str(write_config(tmp_path / "k1412.toml", model.base_url))})
        try:
            reply = _run(server, "at-once")  # before the client was ever idle
            time.sleep(2.0)  # the warm-up, if it starts now, must not build a second runtime
        finally:
            server.close()
    assert reply["result"]["status"] == "completed", reply  # type: ignore[index]
    assert server.log().count("runtime built") == 1


def test_progress_shows_at_once_and_cancelling_it_before_the_runtime_is_ready_runs_nothing(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    with ScriptedServer(SCRIPT) as model:
        server = RawServer(root, env={"K1412_CONFIG": str(write_config(tmp_path / "k1412.toml", model.base_url))})
        try:
            server.send(frame({"jsonrpc": "2.0", "id": "early", "method": "workspace/executeCommand",
                               "params": {"command": "k1412.runTask", "workDoneToken": "tok-early",
                                          "arguments": [{"task": "Create a.txt holding a."}]}}))
            time.sleep(0.1)  # the runtime is still being built (the editor was never idle)
            server.send(frame({"jsonrpc": "2.0", "method": "window/workDoneProgress/cancel",
                               "params": {"token": "tok-early"}}))
            server.wait_for("early", timeout=60)
            (reply,) = server.answers("early")
        finally:
            server.close()
    assert reply["result"]["status"] == "cancelled", reply  # type: ignore[index]
    assert model.chat_requests == []
    kinds = [m["params"]["value"]["kind"] for m in server.replies
             if m.get("method") == "$/progress" and m["params"]["token"] == "tok-early"]
    assert kinds[0] == "begin" and kinds[-1] == "end"
