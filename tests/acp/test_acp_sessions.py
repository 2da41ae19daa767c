"""Sessions across `k1412 acp` restarts (session/list, session/load, the conversation going on), the /undo and
/replay commands, and cancellation mid-command (the process tree dies, stopReason ``cancelled``)."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest
from acp import RequestError, text_block

from k1412_ls.tools.sandbox.command_sandbox import bubblewrap
from tests.support.acp_client import RecordingClient, RoutedModel, acp_agent

needs_sandbox = pytest.mark.skipif(not bubblewrap().active, reason="bubblewrap is not usable here")


@pytest.mark.e2e  # two agent processes, one after the other
async def test_a_session_is_listed_and_loaded_after_a_restart_and_goes_on(tmp_path: Path) -> None:
    model = RoutedModel()
    model.add("[s1]", [
        {"tool_calls": [{"name": "write_file", "arguments": {"path": "notes.txt", "content": "first\n"}}]},
        {"tool_calls": [{"name": "read_file", "arguments": {"path": "notes.txt"}}]},
        {"content": "Wrote notes.txt and read it back."},
        {"content": "We wrote notes.txt before.", "repeat": True},
    ])
    ws = tmp_path / "ws"
    ws.mkdir()
    home = tmp_path / "home"
    try:
        first = RecordingClient(fs=False)
        async with acp_agent(home, model.base_url, first) as (conn, _process):
            session_id = (await conn.new_session(cwd=str(ws), mcp_servers=[])).session_id
            done = await conn.prompt(session_id=session_id, prompt=[text_block("[s1] Create notes.txt saying first")])
            assert done.field_meta["k1412"]["verdict"]["status"] == "completed"
        assert (ws / "notes.txt").read_text() == "first\n" and first.writes == []  # no fs/*: the disk

        second = RecordingClient(fs=False)
        async with acp_agent(home, model.base_url, second) as (conn, _process):
            listed = await conn.list_sessions(cwd=str(ws))
            assert [s.session_id for s in listed.sessions] == [session_id]
            assert listed.sessions[0].cwd == str(ws.resolve()) and "Create notes.txt" in listed.sessions[0].title
            assert (await conn.list_sessions(cwd=str(tmp_path))).sessions == []
            with pytest.raises(RequestError) as unknown:
                await conn.load_session(cwd=str(ws), session_id="c-ffffffffffff", mcp_servers=[])
            assert unknown.value.code == -32602 and "Unknown session" in str(unknown.value)

            await conn.load_session(cwd=str(ws), session_id=session_id, mcp_servers=[])
            replayed = [(u.session_update, u.content.text) for s, u in second.updates
                        if u.session_update in ("user_message_chunk", "agent_message_chunk")]
            assert replayed[0] == ("user_message_chunk", "[s1] Create notes.txt saying first")
            assert replayed[1][0] == "agent_message_chunk" and "Wrote notes.txt" in replayed[1][1]
            assert "K1412 verdict (recorded): completed" in replayed[1][1]

            again = await conn.prompt(session_id=session_id, prompt=[text_block("[s1] What did we write?")])
            assert again.stop_reason == "end_turn"
            history = model.chat_requests[-1]["body"]["messages"]
            assert any(m["role"] == "user" and "Create notes.txt" in str(m["content"]) for m in history)

            replay = await conn.prompt(session_id=session_id, prompt=[text_block("/replay")])
            assert replay.field_meta["k1412"]["replay"]["ok"] is True
            undo = await conn.prompt(session_id=session_id, prompt=[text_block(
                "/undo " + done.field_meta["k1412"]["verdict"]["run_id"])])
            assert undo.field_meta["k1412"]["undo"]["restored"] == ["notes.txt"], undo.field_meta
        assert not (ws / "notes.txt").exists()
        commands = [u for _s, u in second.updates if u.session_update == "available_commands_update"]
        assert commands and [c.name for c in commands[0].available_commands] == ["undo", "replay"]
    finally:
        model.close()


def _marked(marker: str) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if marker in cmdline and "pytest" not in cmdline:
            found.append(int(entry.name))
    return found


@pytest.mark.e2e
@needs_sandbox
async def test_cancel_mid_command_kills_the_process_tree_and_says_cancelled(tmp_path: Path) -> None:
    marker = "61.4142"
    model = RoutedModel()
    model.add("[c1]", [{"tool_calls": [{"name": "run_command", "arguments": {
        "command": f"sleep {marker} & sleep {marker}; wait", "timeout_s": 120}}]},
        {"content": "Done.", "repeat": True}])
    ws = tmp_path / "ws"
    ws.mkdir()
    client = RecordingClient()
    try:
        async with acp_agent(tmp_path / "home", model.base_url, client) as (conn, _process):
            session_id = (await conn.new_session(cwd=str(ws), mcp_servers=[])).session_id
            prompt = asyncio.create_task(conn.prompt(session_id=session_id,
                                                     prompt=[text_block("[c1] Wait a minute")]))
            for _ in range(300):
                if len(_marked(marker)) >= 2:
                    break
                await asyncio.sleep(0.05)
            assert len(_marked(marker)) >= 2, "the command never started"
            await conn.cancel(session_id=session_id)
            response = await asyncio.wait_for(prompt, timeout=30)
            assert response.stop_reason == "cancelled"
            assert response.field_meta["k1412"]["verdict"]["status"] == "cancelled"
            for _ in range(100):
                if not _marked(marker):
                    break
                await asyncio.sleep(0.05)
            assert _marked(marker) == []
            assert client.of(session_id, "agent_message_chunk")[-1].content.text.startswith(
                "K1412 verdict: cancelled")
            ends = client.of(session_id, "tool_call_update")
            assert ends and ends[-1].status == "failed"
    finally:
        model.close()
    assert os.path.isdir(ws)


@pytest.mark.e2e
@needs_sandbox
async def test_a_client_that_goes_away_mid_command_leaves_no_process(tmp_path: Path) -> None:
    """stdin closes while a command runs: the agent cancels the run, its processes die, the agent exits 0."""
    import json
    import sys

    from tests.conftest import REPO_ROOT, write_config
    from tests.support.acp_client import agent_env

    marker = "62.7182"
    model = RoutedModel()
    model.add("[g1]", [{"tool_calls": [{"name": "run_command", "arguments": {
        "command": f"sleep {marker}", "timeout_s": 120}}]}, {"content": "Done.", "repeat": True}])
    ws = tmp_path / "ws"
    ws.mkdir()
    home = tmp_path / "home"
    home.mkdir()
    config = write_config(home / "config.toml", model.base_url)
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "k1412_ls.cli", "acp", "--config", str(config), stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.DEVNULL, env=agent_env(home), cwd=str(REPO_ROOT))
    assert process.stdin is not None and process.stdout is not None
    try:
        lines = [{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": 1}},
                 {"jsonrpc": "2.0", "id": 2, "method": "session/new", "params": {"cwd": str(ws), "mcpServers": []}}]
        process.stdin.write("".join(json.dumps(m) + "\n" for m in lines).encode())
        while True:
            reply = json.loads(await asyncio.wait_for(process.stdout.readline(), timeout=30))
            if reply.get("id") == 2:
                break
        prompt = {"jsonrpc": "2.0", "id": 3, "method": "session/prompt", "params": {
            "sessionId": reply["result"]["sessionId"], "prompt": [{"type": "text", "text": "[g1] wait"}]}}
        process.stdin.write((json.dumps(prompt) + "\n").encode())
        await process.stdin.drain()
        for _ in range(300):
            if _marked(marker):
                break
            await asyncio.sleep(0.05)
        assert _marked(marker), "the command never started"
        process.stdin.close()
        assert await asyncio.wait_for(process.wait(), timeout=30) == 0
        for _ in range(100):
            if not _marked(marker):
                break
            await asyncio.sleep(0.05)
        assert _marked(marker) == []
    finally:
        if process.returncode is None:
            process.kill()
        model.close()
