"""The MCP client against a hostile stdio server (tests/tools/mcp/attack_server.py), through the tool source.

Each attack has its positive control: the same server with the defence off (``sandbox = false``, no
redaction, a name that is not scrubbed …) shows the attack would work.
"""

from __future__ import annotations

import json
import logging
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from k1412_ls.config import McpSpec
from k1412_ls.text.redact import Redactor
from k1412_ls.tools.approval.approval_policy import ApprovalGate, ApprovalPolicy, ApprovalRequest, Decision
from k1412_ls.tools.files.documents import DiskDocumentStore
from k1412_ls.tools.files.workspace import Workspace
from k1412_ls.tools.mcp.mcp_tools import SEARCH_TOOL, McpTool
from k1412_ls.tools.mcp.schemas import SchemaProblem, normalise_schema, tool_name
from k1412_ls.tools.mcp.source import McpToolSet, McpToolSource
from k1412_ls.tools.ports import RunServices
from k1412_ls.tools.registry import ToolContext, ToolRegistry, ToolResult
from k1412_ls.tools.sandbox.bubblewrap import bubblewrap
from k1412_ls.tools.sandbox.command_sandbox import RunSandbox

SERVER = str(Path(__file__).with_name("attack_server.py"))
needs_bwrap = pytest.mark.skipif(bubblewrap().path is None, reason="no working bubblewrap on this machine")


class Opened:
    def __init__(self, ctx: ToolContext, tool_set: McpToolSet, events: list[tuple[str, dict[str, Any]]]) -> None:
        self.ctx = ctx
        self.tool_set = tool_set
        self.events = events
        self.registry = ToolRegistry(tool_set.tools)

    def call(self, tool: str, /, **arguments: Any) -> ToolResult:
        result = self.registry.execute(tool, arguments, self.ctx)
        json.loads(result.to_message())
        return result

    def server(self, name: str = "atk") -> dict[str, Any]:
        return next(p for k, p in self.events if k == "mcp.server" and p["server"] == name)


@pytest.fixture
def open_source(tmp_path: Path) -> Iterator[Any]:
    opened: list[tuple[McpToolSet, RunSandbox]] = []

    def start(entries: dict[str, dict[str, Any]] | None = None, mode: str = "normal", env: dict[str, str] | None = None,
              budget: int = 400_000, answer: Decision | None = Decision.ALLOW_ONCE, policy: str = "on-request",
              **mcp: Any) -> Opened:
        ws = tmp_path / "ws"
        (ws / ".git").mkdir(parents=True, exist_ok=True)  # before the server starts: its sandbox is fixed then
        servers = entries or {"atk": {"command": sys.executable, "args": [SERVER, mode], "timeout_s": 5}}
        spec = McpSpec.model_validate({"servers": servers, **mcp})
        sandbox = RunSandbox()
        events: list[tuple[str, dict[str, Any]]] = []
        asked: list[ApprovalRequest] = []

        def approver(request: ApprovalRequest, cancel: threading.Event) -> Decision | None:
            asked.append(request)
            return answer

        gate = ApprovalGate(policy=ApprovalPolicy(policy), approver=approver, workspace=ws,
                            emit=lambda kind, payload: events.append((kind, payload)))
        ctx = ToolContext(workspace=Workspace(ws), documents=DiskDocumentStore(ws.resolve()), env=env,
                          redactor=Redactor(), services=RunServices(sandbox=sandbox, approval=gate))
        tool_set = McpToolSource(spec, frozenset({"run_command", "read_file"})).open(
            ctx, budget, lambda kind, payload: events.append((kind, payload)))
        opened.append((tool_set, sandbox))
        return Opened(ctx, tool_set, events)

    yield start
    for tool_set, sandbox in opened:
        tool_set.close()
        sandbox.close()


def _entry(mode: str = "normal", **extra: Any) -> dict[str, Any]:
    return {"command": sys.executable, "args": [SERVER, mode], "timeout_s": 5, **extra}


@needs_bwrap
def test_tools_are_namespaced_and_a_shadowing_name_stays_in_its_namespace(open_source: Any) -> None:
    opened = open_source()
    names = opened.registry.names()
    assert "mcp__atk__echo" in names and "mcp__atk__run_command" in names
    assert "run_command" not in names  # the server's "run_command" cannot stand in for K1412's
    assert opened.server()["state"] == "running" and opened.server()["sandbox"].startswith("bwrap")
    echo = opened.registry.get("mcp__atk__echo")
    assert echo is not None and echo.read_only and echo.is_parallel_safe({}) and echo.server == "atk"
    writer = opened.registry.get("mcp__atk__write_file")
    assert writer is not None and not writer.read_only and not writer.is_parallel_safe({})
    result = opened.call("mcp__atk__echo", text="hello")
    assert result.ok and result.data["content"] == "hello" and result.facts["kind"] == "mcp"


@needs_bwrap
def test_a_schema_that_would_break_the_provider_request_drops_only_that_tool(open_source: Any,
                                                                             caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, "k1412.mcp"):
        opened = open_source()
    names = opened.registry.names()
    assert "mcp__atk__bad_schema" not in names and "mcp__atk__loop_schema" not in names
    assert "mcp__atk__echo" in names  # the others survive the bad listing (the SDK alone rejects all of it)
    dropped = [r.getMessage() for r in caplog.records if "left out" in r.getMessage()]
    assert len([m for m in dropped if "bad_schema" in m]) == 1 and len([m for m in dropped if "loop_schema" in m]) == 1
    for tool in opened.registry:
        parameters = tool.schema()["function"]["parameters"]
        assert parameters["type"] == "object" and "$ref" not in json.dumps(parameters)


def test_schema_normalisation_rules() -> None:
    loop = {"type": "object", "properties": {"a": {"$ref": "#/$defs/a"}}, "$defs": {"a": {"$ref": "#/$defs/a"}}}
    for bad in ({"type": "string"}, loop, {"type": "object", "properties": {"a": 3}}, "nope",
                {"type": "object", "properties": {"a": {"type": "no-such-type"}}}):
        with pytest.raises(SchemaProblem):
            normalise_schema(bad)
    inlined = normalise_schema({"$schema": "x", "type": "object", "title": "T", "required": ["p", "ghost"],
                                "properties": {"p": {"$ref": "#/$defs/P"}}, "$defs": {"P": {"type": "integer"}}})
    assert inlined == {"type": "object", "required": ["p"], "properties": {"p": {"type": "integer"}}}
    assert tool_name("my server", "do.it") == "mcp__my_server__do_it"
    long_a, long_b = tool_name("s", "x" * 80 + "a"), tool_name("s", "x" * 80 + "b")
    assert len(long_a) == 64 and long_a != long_b


@needs_bwrap
def test_arguments_are_checked_against_the_servers_schema(open_source: Any) -> None:
    opened = open_source()
    result = opened.call("mcp__atk__echo", text=3)
    assert not result.ok and "Invalid arguments for mcp__atk__echo" in result.data["error"]


@needs_bwrap
def test_a_50_mb_answer_is_refused_and_the_server_goes_on(open_source: Any) -> None:
    opened = open_source()
    big = opened.call("mcp__atk__big")
    assert not big.ok and "over K1412's limit" in big.data["error"] and len(big.to_message()) < 2000
    assert opened.call("mcp__atk__echo", text="still here").data["content"] == "still here"


@needs_bwrap
def test_a_hanging_call_times_out_and_a_cancelled_one_ends(open_source: Any, tmp_path: Path) -> None:
    opened = open_source(entries={"atk": _entry(timeout_s=0.5)})
    hung = opened.call("mcp__atk__hang")
    assert not hung.ok and hung.facts["timed_out"] and "did not answer within 0.5 s" in hung.data["error"]
    log = tmp_path / "ws" / "methods.log"  # the server's own record of what it was sent
    slow = open_source(entries={"atk2": _entry(timeout_s=60, env={"ATTACK_LOG": str(log)})})
    threading.Timer(0.3, slow.ctx.cancel.set).start()
    cancelled = slow.call("mcp__atk2__hang")
    assert not cancelled.ok and cancelled.facts["cancelled"] and cancelled.facts["progress"] == 0
    slow.tool_set.close()
    assert "notifications/cancelled" in log.read_text().split()  # the server was told to stop


@needs_bwrap
def test_a_crash_is_one_sentence_and_the_process_is_reaped(open_source: Any) -> None:
    opened = open_source()
    crashed = opened.call("mcp__atk__crash")
    assert not crashed.ok and "stopped mid-run (exit code 3)" in crashed.data["error"]
    assert "crashing on purpose" in crashed.data["error"]
    after = opened.call("mcp__atk__echo", text="x")
    assert not after.ok and "stopped mid-run" in after.data["error"]
    hub = opened.tool_set.hub
    assert hub is not None
    process = hub.connections["atk"].process
    assert process is not None
    opened.tool_set.close()
    assert process.popen.returncode is not None  # waited for: no zombie left


@needs_bwrap
def test_a_server_that_dies_at_start_is_one_sentence(open_source: Any) -> None:
    opened = open_source(mode="die")
    entry = opened.server()
    assert entry["state"] == "failed" and opened.registry.names() == []
    assert "missing configuration file" in entry["error"] and "the run goes on" in entry["error"]
    assert entry["error"].count(".") <= 3


@needs_bwrap
def test_a_fake_k1412_event_is_only_text_in_a_result(open_source: Any) -> None:
    opened = open_source()
    result = opened.call("mcp__atk__fake_event")
    assert result.ok and json.loads(result.data["content"])["type"] == "run.completed"
    assert [k for k, _ in opened.events] == ["mcp.server"]  # nothing the server printed became an event
    hub = opened.tool_set.hub
    assert hub is not None and hub.connections["atk"].process is not None
    assert hub.connections["atk"].process.dropped_lines == 1  # the stray stdout line was read as nothing


@needs_bwrap
def test_the_environment_is_scrubbed_and_a_named_key_is_redacted(open_source: Any) -> None:
    host_env = {"PATH": "/usr/bin:/bin", "HOME": "/nonexistent", "K1412_TEST_TOKEN": "tok-4f9a8c7b6d5e4f3a2b1c"}
    token = "correct-horse-battery-staple-42"  # no key shape: only the entry's secret-looking name gives it away
    opened = open_source(entries={"atk": _entry(env={"SERVICE_API_KEY": token})}, env=host_env)
    scrubbed = opened.call("mcp__atk__env", name="K1412_TEST_TOKEN")
    assert scrubbed.data["content"] == "K1412_TEST_TOKEN -> <unset>"
    leaked = opened.call("mcp__atk__env", name="SERVICE_API_KEY")
    assert token not in leaked.to_message() and token not in json.dumps(leaked.facts)
    # Controls: named by env_vars, K1412's variable does reach the server; unredacted, the key is what it prints.
    control = open_source(entries={"ctl": _entry(env_vars=["K1412_TEST_TOKEN"])}, env=host_env)
    assert control.call("mcp__ctl__env", name="K1412_TEST_TOKEN").data["content"] != "K1412_TEST_TOKEN -> <unset>"
    raw = open_source(entries={"raw": _entry(env={"SERVICE_API_KEY": token})}, env=host_env)
    raw.ctx.redactor = Redactor()
    assert token in raw.call("mcp__raw__env", name="SERVICE_API_KEY").data["content"]


@needs_bwrap
def test_a_write_outside_the_workspace_never_reaches_the_host(open_source: Any, tmp_path: Path) -> None:
    target = tmp_path / "outside-canary.txt"  # beside the workspace, in the test's own lab root
    opened = open_source()
    hook = opened.ctx.workspace.root / ".git" / "canary-hook"
    outside = opened.call("mcp__atk__write_file", path=str(target), text="escaped")
    assert not target.exists()  # the write went to the run's private /tmp at most
    refused = opened.call("mcp__atk__write_file", path=str(hook), text="escaped")
    assert not refused.ok and not hook.exists()  # .git is read-only in the sandbox
    assert outside.facts["sandbox"].startswith("bwrap")
    inside = opened.call("mcp__atk__write_file", path=str(opened.ctx.workspace.root / "made.txt"), text="in")
    assert inside.ok and [c["path"] for c in inside.facts["changes"]] == ["made.txt"]
    assert inside.facts["changes"][0]["by"] == "command"
    # Control: the user's explicit sandbox = false lets the same calls write there, and every result says so.
    host = open_source(entries={"host": _entry(sandbox=False)})
    written = host.call("mcp__host__write_file", path=str(target), text="escaped")
    assert written.ok and target.read_text() == "escaped"
    assert host.call("mcp__host__write_file", path=str(hook), text="escaped").ok and hook.exists()
    assert "without K1412's sandbox" in written.data["sandbox"]
    assert "without K1412's sandbox" in host.call("mcp__host__echo", text="x").data["sandbox"]
    assert "runs without the sandbox" in host.registry.get("mcp__host__echo").description  # type: ignore[union-attr]


@needs_bwrap
def test_two_hundred_tools_sit_behind_a_search_step(open_source: Any) -> None:
    opened = open_source(mode="many")
    offered = [t for t in opened.registry if "core" in t.tags]
    assert [t.name for t in offered] == [SEARCH_TOOL]
    hidden = [t for t in opened.registry if isinstance(t, McpTool)]
    assert len(hidden) == 200 and all("core" not in t.tags for t in hidden)
    assert len(json.dumps([t.schema() for t in offered])) < 1000
    found = opened.call(SEARCH_TOOL, query="t017")
    assert found.ok and [t["name"] for t in found.data["tools"]] == ["mcp__atk__t017"]
    assert opened.call("mcp__atk__t017", text="go").data["content"] == "t017 ran"
    # The count limit alone does not decide: 200 schemas are more than 15 % of a 400,000-character budget.
    over_budget = open_source(max_listed_tools=1000, entries={"big": _entry("many")})
    assert [t.name for t in over_budget.registry if "core" in t.tags] == [SEARCH_TOOL]
    # Control: with room in the budget and a high enough limit, the same 200 are listed up front.
    listed = open_source(max_listed_tools=1000, budget=10_000_000, entries={"big": _entry("many")})
    assert sum("core" in t.tags for t in listed.registry) == 200 and SEARCH_TOOL not in listed.registry


@needs_bwrap
def test_allow_list_and_disabled_tools(open_source: Any) -> None:
    opened = open_source(entries={"atk": _entry(tools=["echo", "env"])}, disabled_tools=["atk.env"])
    assert opened.registry.names() == ["mcp__atk__echo"]
    off = open_source(entries={"atk": _entry(enabled=False), "b": _entry()}, disabled=["b"])
    assert off.registry.names() == [] and {p["state"] for _, p in off.events} == {"disabled"}


@needs_bwrap
def test_a_tool_not_marked_read_only_asks_and_a_read_only_one_does_not(open_source: Any, tmp_path: Path) -> None:
    denied = open_source(answer=Decision.DENY)
    target = denied.ctx.workspace.root / "denied.txt"
    refused = denied.call("mcp__atk__write_file", path=str(target), text="no")
    assert not refused.ok and "denied" in refused.data["error"] and not target.exists()
    assert [k for k, _ in denied.events].count("approval.requested") == 1
    asked = next(p for k, p in denied.events if k == "approval.requested")
    assert asked["command"].startswith("mcp__atk__write_file") and "read-only" in asked["reasons"][0]
    assert denied.call("mcp__atk__echo", text="free").ok  # read-only: no question
    assert [k for k, _ in denied.events].count("approval.requested") == 1
    never = open_source(policy="never")
    assert "'never'" in never.call("mcp__atk__write_file", path=str(target), text="no").data["error"]
    assert not target.exists()


def _free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_a_streamable_http_server_on_loopback(open_source: Any) -> None:
    import socket
    import subprocess
    import time

    port = _free_port()
    proc = subprocess.Popen([sys.executable, str(Path(__file__).with_name("http_server.py")), str(port)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            with socket.socket() as sock:
                if sock.connect_ex(("127.0.0.1", port)) == 0:
                    break
            time.sleep(0.1)
        opened = open_source(entries={"web": {"url": f"http://127.0.0.1:{port}/mcp", "timeout_s": 10}})
        assert opened.server("web")["state"] == "running", opened.server("web")
        added = opened.call("mcp__web__add", a=2, b=40)
        assert added.ok and added.data["structured"] == {"sum": 42} and "sandbox" not in added.data
        assert opened.registry.get("mcp__web__add").read_only  # type: ignore[union-attr]
        note = opened.registry.get("mcp__web__note")
        assert note is not None and not note.read_only
    finally:
        proc.kill()
        proc.wait()


@needs_bwrap
def test_a_tool_the_server_withdraws_is_refused_after_list_changed(open_source: Any) -> None:
    opened = open_source()
    assert opened.call("mcp__atk__echo", text="before").ok
    assert opened.call("mcp__atk__shrink").ok
    hub = opened.tool_set.hub
    assert hub is not None
    deadline = time.monotonic() + 10
    while "echo" in hub.connections["atk"].tools and time.monotonic() < deadline:
        time.sleep(0.05)
    gone = opened.call("mcp__atk__echo", text="after")
    assert not gone.ok and "no longer offers 'echo'" in gone.data["error"]


def test_content_blocks_become_text_the_model_can_read() -> None:
    import mcp_types

    from k1412_ls.tools.mcp.mcp_tools import render_content

    result = mcp_types.CallToolResult(content=[
        mcp_types.TextContent(type="text", text="first"),
        mcp_types.ImageContent(type="image", data="aGVsbG8gd29ybGQh", mime_type="image/png"),
        mcp_types.EmbeddedResource(type="resource", resource=mcp_types.TextResourceContents(
            uri="file:///x.txt", text="inside")),
        mcp_types.ResourceLink(type="resource_link", uri="file:///y.txt", name="y"),
    ])
    text = render_content(result)
    assert text.splitlines() == ["first", "[image: image/png, 12 bytes, not shown]", "[resource file:///x.txt]",
                                 "inside", "[resource link file:///y.txt: y]"]
    structured = mcp_types.CallToolResult(content=[], structured_content={"sum": 5})
    assert render_content(structured) == '{"sum": 5}'
