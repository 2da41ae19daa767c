"""Real MCP servers from the registries through the real `k1412 run` CLI and a scripted model.

`mcp-server-time` and `mcp-server-git` (PyPI), `@modelcontextprotocol/server-everything` and
`@modelcontextprotocol/server-filesystem` (npm; .ci/run installs them into ``$K1412_MCP_NPM``, default
``~/.cache/k1412-mcp-npm``). Every server runs in K1412's sandbox with the network off.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.support.cli import CliRun, config_for, k1412
from tests.support.scripted_server import ScriptedServer

pytestmark = pytest.mark.e2e
NPM = Path(os.environ.get("K1412_MCP_NPM") or Path.home() / ".cache" / "k1412-mcp-npm")
PACKAGES = NPM / "node_modules" / "@modelcontextprotocol"


def _missing() -> str | None:
    if shutil.which("node") is None:
        return "node is not installed"
    for package in ("server-everything", "server-filesystem"):
        if not (PACKAGES / package / "dist" / "index.js").is_file():
            return f"@modelcontextprotocol/{package} is not installed under {NPM} (.ci/run installs it)"
    for module in ("mcp_server_git", "mcp_server_time"):
        if importlib.util.find_spec(module) is None:
            return f"the PyPI package {module.replace('_', '-')} is not installed (pip install -e '.[dev]')"
    return None


needs_servers = pytest.mark.skipif(_missing() is not None, reason=_missing() or "")


def _servers(ws: Path, extra: str = "") -> str:
    python = sys.executable
    home = Path.home()
    readable = f"~/{NPM.relative_to(home)}" if NPM.is_relative_to(home) else str(NPM)
    return f'''
[sandbox]
readable = ["{readable}"]
[mcp.servers.time]
command = "{python}"
args = ["-m", "mcp_server_time", "--local-timezone", "UTC"]
[mcp.servers.git]
command = "{python}"
args = ["-m", "mcp_server_git", "--repository", "{ws}"]
[mcp.servers.everything]
command = "node"
args = ["{PACKAGES / 'server-everything' / 'dist' / 'index.js'}", "stdio"]
[mcp.servers.fs]
command = "node"
args = ["{PACKAGES / 'server-filesystem' / 'dist' / 'index.js'}", "{ws}"]
{extra}'''


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    path = tmp_path / "ws"
    path.mkdir()
    (path / "a.txt").write_text("alpha 41\n")
    subprocess.run(["git", "init", "-q", str(path)], check=True)
    return path


def _run(tmp_path: Path, ws: Path, task: str, script: list[dict[str, Any]], extra: str = "",
         sent: list[dict[str, Any]] | None = None) -> CliRun:
    tmp_path.mkdir(parents=True, exist_ok=True)
    with ScriptedServer(script) as server:
        config = config_for(tmp_path, server.base_url, extra=_servers(ws, extra))
        run = k1412("run", task, "--config", str(config), "--json", "--workspace", str(ws), cwd=ws, timeout=180)
        if sent is not None:
            sent.extend(server.chat_requests)
        return run


def _completed(run: CliRun) -> dict[str, dict[str, Any]]:
    return {e["payload"]["tool"]: e["payload"] for e in run.events() if e["type"] == "tool.completed"}


@needs_servers
def test_four_real_servers_answer_through_k1412_run(tmp_path: Path, ws: Path) -> None:
    calls = [
        {"name": "mcp__time__get_current_time", "arguments": {"timezone": "UTC"}},
        {"name": "mcp__everything__get-sum", "arguments": {"a": 2, "b": 3}},
        {"name": "mcp__everything__get-structured-content", "arguments": {"location": "Chicago"}},
        {"name": "mcp__everything__trigger-long-running-operation", "arguments": {"duration": 1, "steps": 2}},
        {"name": "mcp__git__git_status", "arguments": {"repo_path": str(ws)}},
        {"name": "mcp__fs__read_text_file", "arguments": {"path": str(ws / "a.txt")}},
    ]
    script = [{"tool_calls": calls}, {"content": "The sum of 2 and 3 is 5.", "repeat": True}]
    sent: list[dict[str, Any]] = []
    run = _run(tmp_path, ws, "What is the sum of 2 and 3? Use the tools and tell me.", script, sent=sent)
    assert run.code in (0, 3), run.stderr
    events = run.events()
    servers = {e["payload"]["server"]: e["payload"] for e in events if e["type"] == "mcp.server"}
    assert {name: s["state"] for name, s in servers.items()} == dict.fromkeys(("time", "git", "everything", "fs"),
                                                                               "running")
    assert all(s["sandbox"].startswith("bwrap") and "network off" in s["sandbox"] for s in servers.values())
    done = _completed(run)
    assert all(done[c["name"]]["ok"] for c in calls), {k: v.get("error") for k, v in done.items()}
    assert {done[c["name"]]["server"] for c in calls} == {"time", "everything", "git", "fs"}
    assert "5" in done["mcp__everything__get-sum"]["facts"]["output"]
    assert done["mcp__everything__trigger-long-running-operation"]["facts"]["progress"] >= 1
    assert "alpha 41" in done["mcp__fs__read_text_file"]["facts"]["output"]
    started = [e["payload"] for e in events if e["type"] == "tool.started"]
    assert {p["tool"] for p in started} == {c["name"] for c in calls} and all("server" in p for p in started)
    # The four servers have 41 tools, over the default 40: the provider got the mcp_tools search step
    # instead of 41 schemas, and the calls by name still ran.
    offered = {t["function"]["name"]: t["function"]["parameters"] for t in sent[0]["body"]["tools"]}
    assert "mcp_tools" in offered and not [name for name in offered if name.startswith("mcp__")]


@needs_servers
def test_a_filesystem_write_asks_and_is_tracked_and_stays_in_the_workspace(tmp_path: Path, ws: Path) -> None:
    canary = tmp_path / "outside-canary.txt"
    write = [{"name": "mcp__fs__write_file", "arguments": {"path": str(ws / "notes.txt"), "content": "hello\n"}},
             {"name": "mcp__fs__write_file", "arguments": {"path": str(canary), "content": "escaped\n"}}]
    script = [{"tool_calls": write}, {"tool_calls": [{"name": "read_file", "arguments": {"path": "notes.txt"}}]},
              {"content": "Created notes.txt containing hello.", "repeat": True}]
    task = "Create notes.txt containing hello."
    # No approver in a headless run: a tool not marked read-only is refused (nobody was asked).
    denied = _run(tmp_path / "denied", ws, task, script)
    decided = [e["payload"] for e in denied.events() if e["type"] == "approval.decided"]
    assert decided and all(d["decision"] == "deny" for d in decided) and not (ws / "notes.txt").exists()
    # The user's rule allows it: the write happens, is the run's change, and the one outside is refused.
    rule = '[[approval.rules]]\nprefix = "mcp__fs__write_file"\ndecision = "allow"\n'
    run = _run(tmp_path, ws, task, script, extra=rule)
    assert (ws / "notes.txt").read_text() == "hello\n" and not canary.exists()
    result = run.result
    assert result["files_changed"] == ["notes.txt"] and result["status"] == "completed", result["message"]
    outside = [e["payload"] for e in run.events() if e["type"] == "tool.completed" and not e["payload"]["ok"]]
    assert len(outside) == 1 and outside[0]["server"] == "fs"
    # What the server wrote is undone like a command's write.
    undone = k1412("undo", result["run_id"], "--json", cwd=ws, timeout=60)
    assert undone.code == 0 and undone.result["restored"] == ["notes.txt"], undone.stdout + undone.stderr
    assert not (ws / "notes.txt").exists()


@needs_servers
def test_k1412_mcp_list_shows_the_real_servers(tmp_path: Path, ws: Path) -> None:
    config = config_for(tmp_path, "http://127.0.0.1:9/v1", extra=_servers(ws))
    listed = k1412("mcp", "list", "--config", str(config), "--workspace", str(ws), "--json", cwd=ws, timeout=120)
    assert listed.code == 0, listed.stderr
    rows = {row["server"]: row for row in listed.result}
    assert {name: row["state"] for name, row in rows.items()} == dict.fromkeys(("time", "git", "everything", "fs"),
                                                                                "running")
    tools = {t["name"]: t["read_only"] for t in rows["git"]["tools"]}
    assert tools["mcp__git__git_status"] is True and tools["mcp__git__git_commit"] is False
    text = k1412("mcp", "list", "--config", str(config), "--workspace", str(ws), cwd=ws, timeout=120)
    assert "fs: running" in text.stdout and "mcp__fs__write_file" in text.stdout


def test_k1412_mcp_list_says_in_one_sentence_when_a_server_cannot_start(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    extra = '[mcp.servers.ghost]\ncommand = "/nonexistent/mcp-server"\nstartup_timeout_s = 10\n'
    config = config_for(tmp_path, "http://127.0.0.1:9/v1", extra=extra)
    listed = k1412("mcp", "list", "--config", str(config), "--workspace", str(ws), cwd=ws, timeout=60)
    assert listed.code == 0 and "ghost: failed" in listed.stdout, listed.stderr
    assert "Traceback" not in listed.stderr and "the run goes on without its tools" in listed.stdout


@needs_servers
def test_a_small_catalogue_is_listed_to_the_provider_with_object_schemas(tmp_path: Path, ws: Path) -> None:
    sent: list[dict[str, Any]] = []
    script = [{"tool_calls": [{"name": "mcp__time__convert_time", "arguments": {
        "source_timezone": "UTC", "time": "12:00", "target_timezone": "Asia/Tokyo"}}]},
              {"content": "12:00 UTC is 21:00 in Tokyo.", "repeat": True}]
    extra = '[mcp]\ndisabled = ["git", "everything", "fs"]\n'
    run = _run(tmp_path, ws, "What time is 12:00 UTC in Tokyo?", script, extra=extra, sent=sent)
    offered = {t["function"]["name"]: t["function"]["parameters"] for t in sent[0]["body"]["tools"]}
    assert {"mcp__time__get_current_time", "mcp__time__convert_time"} <= set(offered) and "mcp_tools" not in offered
    assert offered["mcp__time__convert_time"]["type"] == "object"
    done = _completed(run)["mcp__time__convert_time"]
    assert done["ok"] and "21:00" in done["facts"]["output"] and done["server"] == "time"
    states = {e["payload"]["server"]: e["payload"]["state"] for e in run.events() if e["type"] == "mcp.server"}
    assert states == {"time": "running", "git": "disabled", "everything": "disabled", "fs": "disabled"}


@needs_servers
async def test_through_k1412_lsp_the_editor_approves_a_filesystem_write(tmp_path: Path) -> None:
    from lsprotocol import types

    from k1412_ls.lsp import constants as c
    from tests.support.lsp_client import lsp_session

    ws = tmp_path / "ws"
    ws.mkdir()
    script = [{"tool_calls": [{"name": "mcp__fs__write_file",
                               "arguments": {"path": str(ws / "todo.txt"), "content": "ship it\n"}},
                              {"name": "mcp__time__get_current_time", "arguments": {"timezone": "UTC"}}]},
              {"tool_calls": [{"name": "read_file", "arguments": {"path": "todo.txt"}}]},
              {"content": "Created todo.txt containing ship it.", "repeat": True}]
    asked: list[types.ShowMessageRequestParams] = []
    async with lsp_session(tmp_path, script, config_extra=_servers(ws, '[mcp]\ndisabled = ["git", "everything"]\n')) \
            as session:
        def on_request(params: types.ShowMessageRequestParams) -> types.MessageActionItem:
            asked.append(params)
            return types.MessageActionItem(title="Allow once")

        session.client.feature(types.WINDOW_SHOW_MESSAGE_REQUEST)(on_request)
        result = await session.command(c.CMD_RUN_TASK, {"task": "Create todo.txt containing ship it."}, timeout=120)
    events = [json.loads(line) for line in Path(result["events_path"]).read_text().splitlines()]
    completed = {e["payload"]["tool"]: e["payload"] for e in events if e["type"] == "tool.completed"}
    assert len(asked) == 1 and "mcp__fs__write_file" in asked[0].message
    assert (ws / "todo.txt").read_text() == "ship it\n"
    assert completed["mcp__fs__write_file"]["ok"] and completed["mcp__fs__write_file"]["server"] == "fs"
    assert completed["mcp__time__get_current_time"]["ok"]
    assert result["status"] == "completed" and result["files_changed"] == ["todo.txt"], result
