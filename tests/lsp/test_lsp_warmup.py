"""The run machinery is ready before the first task: loaded when the editor opens the task prompt
(``k1412.prepare``), or once the editor is idle with ``warmUpAtStart``; never built twice."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from tests.conftest import write_config
from tests.support.raw_lsp import RawServer, frame
from tests.support.scripted_server import ScriptedServer

pytestmark = pytest.mark.e2e

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


def _prepare(server: RawServer, msg_id: str, arguments: list[object] | None = None) -> dict[str, object]:
    server.send(frame({"jsonrpc": "2.0", "id": msg_id, "method": "workspace/executeCommand",
                       "params": {"command": "k1412.prepare", "arguments": [] if arguments is None else arguments}}))
    server.wait_for(msg_id, timeout=10)
    (reply,) = server.answers(msg_id)
    return reply


def test_with_warm_up_at_start_an_idle_editor_gets_the_runtime_built_before_its_first_task(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    with ScriptedServer(SCRIPT) as model:
        server = RawServer(root, env={"K1412_CONFIG": str(write_config(tmp_path / "k1412.toml", model.base_url))},
                           init_options={"warmUpAtStart": True})
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


def test_an_idle_server_loads_nothing_until_the_prompt_opens_then_prepare_warms_it_once(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    with ScriptedServer(SCRIPT) as model:
        server = RawServer(root, env={"K1412_CONFIG": str(write_config(tmp_path / "k1412.toml", model.base_url))})
        try:
            _wait_for_log(server, "loads when the editor opens the task prompt")
            time.sleep(2.0)  # idle well past the idle warm-up's delay: by default nothing loads
            assert "run machinery ready" not in server.log() and "runtime built" not in server.log()
            maps = Path(f"/proc/{server.proc.pid}/maps").read_text()
            assert "pydantic_core" not in maps and "watchfiles" not in maps  # nothing of it is in memory
            first = _prepare(server, "p1", [{}])
            second = _prepare(server, "p2")  # the prompt opened again while the first warm-up runs
            _wait_for_log(server, "run machinery ready")
            third = _prepare(server, "p3")
            reply = _run(server, "first")
        finally:
            server.close()
    assert first["result"] == {"ready": False, "warming": True}, first
    assert second["result"] == {"ready": False, "warming": True}, second
    assert third["result"] == {"ready": True, "warming": False}, third
    assert reply["result"]["status"] == "completed", reply  # type: ignore[index]
    log = server.log()
    assert log.count("run machinery ready") == 1 and log.count("runtime built") == 1, log[-2000:]


def test_a_failed_warm_up_is_tried_again_by_the_next_prepare(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    config = tmp_path / "k1412.toml"
    config.write_text("default_model = [unclosed\n", encoding="utf-8")  # the user is still writing it
    with ScriptedServer(SCRIPT) as model:
        server = RawServer(root, env={"K1412_CONFIG": str(config)})
        try:
            failed = _prepare(server, "p1")
            _wait_for_log(server, "warm-up stopped early")
            assert "run machinery ready" not in server.log()
            write_config(config, model.base_url)
            retried = _prepare(server, "p2")
            _wait_for_log(server, "run machinery ready")
            reply = _run(server, "first")
        finally:
            server.close()
    assert failed["result"] == {"ready": False, "warming": True}, failed
    assert retried["result"] == {"ready": False, "warming": True}, retried
    assert reply["result"]["status"] == "completed", reply  # type: ignore[index]
    assert server.log().count("runtime built") == 1


def test_prepare_with_arguments_is_refused_in_one_sentence(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    server = RawServer(root)
    try:
        reply = _prepare(server, "bad", [{"task": "x"}])
        after = _prepare(server, "good")  # the server is still there and the command still works
    finally:
        server.close()
    assert reply["error"]["code"] == -32602, reply  # type: ignore[index]
    assert reply["error"]["message"] == "k1412.prepare takes no arguments; send [{}] or nothing.", reply  # type: ignore[index]
    assert after["result"] == {"ready": False, "warming": True}, after
