"""`k1412 acp` through the SDK's own client side: one agent process serves every test of this module.

A prompt is one run of the shared runtime: the updates a client sees (tool calls with their kind,
locations, redacted input and a diff per write; the plan; usage with cost; the model's visible text),
the verdict in the prompt response's ``_meta`` and in the last message chunk, a stopReason that stays
protocol-true, writes through the client's ``fs/*`` (its unsaved buffer is what the agent edits), and
a permission request per command that needs more than the sandbox gives.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from acp import text_block

from k1412_ls.tools.sandbox.command_sandbox import bubblewrap
from tests.support.acp_client import RecordingClient, RoutedModel, acp_agent

pytestmark = pytest.mark.asyncio(loop_scope="module")
needs_sandbox = pytest.mark.skipif(not bubblewrap().active, reason="bubblewrap is not usable here")

PRICING = "pricing = { input = 3.0, cached_input = 0.3, output = 15.0, currency = \"USD\" }\n"
CALC = "def add(a, b):\n    return a + b\n"
TEST = "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n"


class Agent:
    def __init__(self, conn: Any, client: RecordingClient, model: RoutedModel, root: Path) -> None:
        self.conn, self.client, self.model, self.root = conn, client, model, root

    async def session(self, name: str) -> tuple[str, Path]:
        ws = self.root / name
        ws.mkdir()
        answer = await self.conn.new_session(cwd=str(ws), mcp_servers=[])
        return answer.session_id, ws

    async def prompt(self, session_id: str, text: str) -> Any:
        return await self.conn.prompt(session_id=session_id, prompt=[text_block(text)])


@pytest_asyncio.fixture(loop_scope="module", scope="module")
async def agent(tmp_path_factory: pytest.TempPathFactory) -> Any:
    root = tmp_path_factory.mktemp("acp")
    model = RoutedModel()
    client = RecordingClient()
    try:
        async with acp_agent(root / "home", model.base_url, client, extra_config=PRICING) as (conn, _process):
            yield Agent(conn, client, model, root)
    finally:
        model.close()


def _events(verdict: dict[str, Any]) -> list[dict[str, Any]]:
    return [json.loads(line) for line in Path(verdict["events_path"]).read_text().splitlines()]


@needs_sandbox
async def test_an_edit_and_its_tests_end_with_the_verdict_in_meta_and_a_diff_per_write(agent: Agent) -> None:
    agent.model.add("[t1]", [
        {"content": "First the plan.", "tool_calls": [{"name": "update_plan", "arguments": {"items": [
            {"step": "write calc.py and its test", "status": "in_progress"},
            {"step": "run the tests", "status": "pending"}]}}]},
        {"tool_calls": [{"name": "write_file", "arguments": {"path": "calc.py", "content": CALC}},
                        {"name": "write_file", "arguments": {"path": "test_calc.py", "content": TEST}}]},
        {"tool_calls": [{"name": "run_command", "arguments": {"command": "python3 -m pytest -q"}}]},
        {"content": "Added calc.add with a test; python3 -m pytest -q: 1 passed.", "usage": {
            "prompt_tokens": 900, "completion_tokens": 40}},
    ])
    session_id, ws = await agent.session("t1")
    (ws / "calc.py").write_text("def add(a, b):\n    return 0\n")
    agent.client.buffers[str(ws / "calc.py")] = "def add(a, b):\n    return 0  # typed, not saved\n"
    response = await agent.prompt(session_id, "[t1] Make add in calc.py add its arguments and run the tests")

    meta = response.field_meta["k1412"]["verdict"]
    assert response.stop_reason == "end_turn"
    assert meta["status"] == "completed" and meta["proven"] is True, meta
    assert meta["contract"] and all(item["met"] for item in meta["contract"]), meta["contract"]
    assert meta["missing"] == [] and meta["run_id"].startswith("run-")
    assert meta["cost"]["priced"] is True and meta["cost"]["amount"] > 0
    assert (ws / "calc.py").read_text() == CALC and (ws / "test_calc.py").read_text() == TEST

    starts = {u.tool_call_id: u for u in agent.client.of(session_id, "tool_call")}
    ends = {u.tool_call_id: u for u in agent.client.of(session_id, "tool_call_update")}
    kinds = sorted((u.kind, u.title.split()[0]) for u in starts.values())
    assert kinds == [("edit", "write_file"), ("edit", "write_file"), ("execute", "run_command:"),
                     ("think", "update_plan")]
    writes = [u for u in starts.values() if u.kind == "edit"]
    for start in writes:
        assert start.locations and start.locations[0].path.startswith(str(ws))
        assert start.raw_input["path"] in ("calc.py", "test_calc.py")
        assert CALC not in json.dumps(start.raw_input) and TEST not in json.dumps(start.raw_input)  # bodies as sha
        diffs = [c for c in ends[start.tool_call_id].content or [] if c.type == "diff"]
        assert len(diffs) == 1, ends[start.tool_call_id]
    calc_diff = next(c for u in ends.values() for c in u.content or [] if c.type == "diff"
                     and c.path.endswith("/calc.py"))
    assert calc_diff.old_text == "def add(a, b):\n    return 0  # typed, not saved\n"  # the client's buffer
    assert calc_diff.new_text == CALC
    new_file = next(c for u in ends.values() for c in u.content or [] if c.type == "diff"
                    and c.path.endswith("test_calc.py"))
    assert new_file.old_text is None
    assert all(u.status == "completed" for u in ends.values())
    assert str(ws / "calc.py") in agent.client.reads and (str(ws / "calc.py"), CALC) in agent.client.writes

    plans = agent.client.of(session_id, "plan")
    assert [e.content for e in plans[0].entries] == ["write calc.py and its test", "run the tests"]
    usage = agent.client.of(session_id, "usage_update")
    assert usage and usage[-1].cost is not None and usage[-1].cost.amount == pytest.approx(meta["cost"]["amount"])
    chunks = [u.content.text for u in agent.client.of(session_id, "agent_message_chunk")]
    assert chunks[0].startswith("First the plan.")
    assert "1 passed" in chunks[-2]
    assert chunks[-1].startswith("K1412 verdict: completed") and meta["run_id"] in chunks[-1]
    events = _events(meta)
    assert events[-1]["type"] == "run.completed"


async def test_an_unproven_answer_says_unverified_with_what_is_missing(agent: Agent) -> None:
    agent.model.add("[t2]", [{"content": "I fixed the bug in app.py.", "repeat": True}])
    session_id, ws = await agent.session("t2")
    (ws / "app.py").write_text("x = 1\n")
    response = await agent.prompt(session_id, "[t2] Fix the bug in app.py")
    meta = response.field_meta["k1412"]["verdict"]
    assert meta["status"] == "unverified" and meta["proven"] is False
    assert meta["missing"] and any(not item["met"] for item in meta["contract"])
    assert response.stop_reason == "end_turn"
    last = agent.client.of(session_id, "agent_message_chunk")[-1].content.text
    assert last.startswith("K1412 verdict: unverified — not proven; missing: ")
    assert (ws / "app.py").read_text() == "x = 1\n"


@pytest.mark.e2e  # a process of its own (an unpriced configuration)
async def test_an_unpriced_model_stays_unpriced(agent: Agent, tmp_path: Path) -> None:
    client = RecordingClient()
    agent.model.add("[t3]", [{"content": "Hello.", "repeat": True}])
    async with acp_agent(tmp_path / "home", agent.model.base_url, client) as (conn, _process):
        ws = tmp_path / "ws"
        ws.mkdir()
        session_id = (await conn.new_session(cwd=str(ws), mcp_servers=[])).session_id
        response = await conn.prompt(session_id=session_id, prompt=[text_block("[t3] Say hello")])
    meta = response.field_meta["k1412"]["verdict"]
    assert meta["cost"]["priced"] is False
    usage = client.of(session_id, "usage_update")
    assert usage and all(u.cost is None and u.field_meta["k1412"]["priced"] is False for u in usage)
    assert "cost unpriced" in client.of(session_id, "agent_message_chunk")[-1].content.text


@needs_sandbox
async def test_a_network_command_asks_once_allow_then_reject(agent: Agent) -> None:
    command = "curl -s -o /dev/null http://127.0.0.1:9/ ; echo asked"
    agent.model.add("[t4]", [
        {"tool_calls": [{"name": "run_command", "arguments": {"command": command}}]},
        {"tool_calls": [{"name": "run_command", "arguments": {"command": command}}]},
        {"content": "Tried twice.", "repeat": True},
    ])
    session_id, _ws = await agent.session("t4")
    agent.client.answers[:] = ["allow_once", "reject"]
    before = len(agent.client.permissions)
    response = await agent.prompt(session_id, "[t4] Check whether the local port answers")
    asked = agent.client.permissions[before:]
    assert len(asked) == 2
    first = asked[0]
    assert [o.kind for o in first["options"]] == ["allow_once", "allow_always", "reject_once"]
    assert "curl" in first["tool_call"].title and "network" in first["tool_call"].title
    started = {u.tool_call_id for u in agent.client.of(session_id, "tool_call")}
    assert first["tool_call"].tool_call_id in started  # the permission belongs to the running call
    decided = [e["payload"]["decision"] for e in _events(response.field_meta["k1412"]["verdict"])
               if e["type"] == "approval.decided"]
    assert decided == ["allow_once", "deny"]


async def test_a_second_prompt_while_one_runs_is_refused_and_the_agent_serves_on(agent: Agent) -> None:
    import asyncio

    from acp import RequestError

    agent.model.add("[t5]", [{"delay_s": 1.5, "content": "Slow hello."}, {"content": "Fast.", "repeat": True}])
    session_id, ws = await agent.session("t5")
    first = asyncio.create_task(agent.prompt(session_id, "[t5] Say hello slowly"))
    await asyncio.sleep(0.5)
    with pytest.raises(RequestError) as refused:
        await agent.prompt(session_id, "[t5] and again")
    assert refused.value.code == -32600 and "already running a prompt" in str(refused.value)
    with pytest.raises(RequestError) as unknown:
        await agent.conn.prompt(session_id="c-000000000000", prompt=[text_block("hi")])
    assert unknown.value.code == -32602 and "Unknown session" in str(unknown.value)
    response = await first
    assert response.field_meta["k1412"]["verdict"]["status"] in ("completed", "unverified")
    assert sorted(p.name for p in ws.iterdir()) == []


async def test_mcp_servers_from_the_client_are_refused_clearly(agent: Agent) -> None:
    from acp import RequestError
    from acp.schema import McpServerStdio

    ws = agent.root / "t6"
    ws.mkdir()
    with pytest.raises(RequestError) as refused:
        await agent.conn.new_session(cwd=str(ws), mcp_servers=[McpServerStdio(name="x", command="y", args=[], env=[])])
    assert refused.value.code == -32602 and "MCP servers from the client are not supported yet" in str(refused.value)
    with pytest.raises(RequestError):
        await agent.conn.new_session(cwd="relative/dir", mcp_servers=[])




async def test_a_patch_and_an_apply_patch_each_send_their_diff(agent: Agent) -> None:
    patch = ("*** Begin Patch\n*** Update File: b.txt\n@@\n-beta\n+BETA\n*** Add File: c.txt\n+gamma\n"
             "*** End Patch\n")
    agent.model.add("[t7]", [
        {"tool_calls": [{"name": "read_file", "arguments": {"path": "a.txt"}}]},
        {"tool_calls": [{"name": "patch_file", "arguments": {"path": "a.txt", "edits": [
            {"old_text": "alpha", "new_text": "ALPHA"}]}}]},
        {"tool_calls": [{"name": "apply_patch", "arguments": {"patch": patch}}]},
        {"content": "Patched.", "repeat": True},
    ])
    session_id, ws = await agent.session("t7")
    (ws / "a.txt").write_text("alpha\n")
    (ws / "b.txt").write_text("beta\n")
    await agent.prompt(session_id, "[t7] Upper-case alpha in a.txt and beta in b.txt, add c.txt")
    ends = [u for u in agent.client.of(session_id, "tool_call_update") if u.status == "completed"]
    diffs = {Path(c.path).name: (c.old_text, c.new_text) for u in ends for c in u.content or [] if c.type == "diff"}
    assert diffs == {"a.txt": ("alpha\n", "ALPHA\n"), "b.txt": ("beta\n", "BETA\n"), "c.txt": (None, "gamma\n")}
    assert (ws / "a.txt").read_text() == "ALPHA\n" and (ws / "c.txt").read_text() == "gamma\n"


async def test_typing_after_the_read_refuses_the_write_and_nothing_is_written(agent: Agent) -> None:
    agent.model.add("[t8]", [
        {"tool_calls": [{"name": "read_file", "arguments": {"path": "n.txt"}}]},
        {"tool_calls": [{"name": "write_file", "arguments": {"path": "n.txt", "content": "agent\n"}}]},
        {"content": "Could not write.", "repeat": True},
    ])
    session_id, ws = await agent.session("t8")
    (ws / "n.txt").write_text("disk\n")
    path = str(ws / "n.txt")
    agent.client.typing[path] = "the user typed this\n"  # lands in the buffer right after the agent's read
    writes_before = len(agent.client.writes)
    await agent.prompt(session_id, "[t8] Replace n.txt with agent")
    failed = [u for u in agent.client.of(session_id, "tool_call_update") if u.status == "failed"]
    assert failed and "changed since you last read it" in failed[0].raw_output["error"]
    assert len(agent.client.writes) == writes_before  # no fs/write_text_file was sent
    assert (ws / "n.txt").read_text() == "disk\n" and agent.client.buffers[path] == "the user typed this\n"


async def test_a_run_out_of_iterations_stops_with_max_turn_requests(agent: Agent) -> None:
    agent.model.add("[t9]", [{"tool_calls": [{"name": "list_files", "arguments": {"path": "."}}], "repeat": True}])
    session_id, _ws = await agent.session("t9")
    response = await agent.prompt(session_id, "[t9] Fix the bug in main.py")
    assert response.field_meta["k1412"]["verdict"]["status"] == "unverified"
    assert response.stop_reason == "max_turn_requests"


async def test_an_embedded_file_is_context_not_requirements(agent: Agent) -> None:
    from acp.schema import EmbeddedResourceContentBlock, TextResourceContents

    agent.model.add("[t10]", [{"content": "It defines x.", "repeat": True}])
    session_id, ws = await agent.session("t10")
    (ws / "m.py").write_text("x = 1  # run the tests and commit\n")
    block = EmbeddedResourceContentBlock(type="resource", resource=TextResourceContents(
        uri=(ws / "m.py").as_uri(), text="x = 1  # run the tests and commit\n"))
    response = await agent.conn.prompt(session_id=session_id, prompt=[text_block("[t10] What does m.py define?"),
                                                                       block])
    sent = agent.model.chat_requests[-1]["body"]["messages"]
    assert any("x = 1  # run the tests and commit" in str(m.get("content")) for m in sent if m["role"] == "user")
    contract = " ".join(item["item"] for item in response.field_meta["k1412"]["verdict"]["contract"])
    assert "test" not in contract and "commit" not in contract  # the quoted file's words owe nothing


@needs_sandbox
async def test_a_prompt_cancelled_while_asking_denies_the_command(agent: Agent) -> None:
    agent.model.add("[t11]", [
        {"tool_calls": [{"name": "run_command", "arguments": {"command": "curl -s http://127.0.0.1:9/ > asked.txt"}}]},
        {"content": "Done.", "repeat": True},
    ])
    session_id, ws = await agent.session("t11")

    async def cancel_first() -> None:
        await agent.conn.cancel(session_id=session_id)

    agent.client.on_permission = cancel_first
    agent.client.answers[:] = [None]  # the client answers the pending request with the `cancelled` outcome
    try:
        response = await agent.prompt(session_id, "[t11] Fetch the local page")
    finally:
        agent.client.on_permission = None
    assert response.stop_reason == "cancelled"
    assert not (ws / "asked.txt").exists()
    decided = [e["payload"] for e in _events(response.field_meta["k1412"]["verdict"])
               if e["type"] == "approval.decided"]
    assert [d["decision"] for d in decided] in ([], ["deny"])


async def test_reasoning_never_reaches_the_client_and_inputs_are_redacted(agent: Agent) -> None:
    secret = "sk-proj-" + "R3d4c7Ed" * 4
    agent.model.add("[t12]", [
        {"reasoning_content": "HIDDEN-THOUGHT-1 weigh the options",
         "tool_calls": [{"name": "search_files", "arguments": {"query": f"token {secret}"}}]},
        {"reasoning_content": "HIDDEN-THOUGHT-2", "content": "No such token in the workspace."},
    ])
    session_id, _ws = await agent.session("t12")
    await agent.prompt(session_id, "[t12] Is the token used anywhere?")
    sent = json.dumps([u.model_dump(mode="json", by_alias=True) for s, u in agent.client.updates if s == session_id])
    assert "HIDDEN-THOUGHT" not in sent and "agent_thought_chunk" not in sent
    assert secret not in sent and "[REDACTED]" in sent  # the query in rawInput and the title
    assert "No such token in the workspace." in agent.client.text(session_id)
    # control: the model really sent reasoning and the call really carried the key
    assert any(secret in json.dumps(r["body"]) for r in agent.model.chat_requests)
