"""The agent loop end to end in-process: scripted model, real tools, temp workspace."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

import pytest

from k1412_ls.catalog import default_registry
from k1412_ls.config import build_config
from k1412_ls.core.events import read_events
from k1412_ls.core.run_request import RunRequest
from k1412_ls.core.runtime import Runtime
from k1412_ls.state.store import StateStore
from tests.support.scripted_model import ScriptedChatModel

HELLO = [
    {"tool_calls": [{"name": "write_file", "arguments": {"path": "hello.py", "content": "print('hello world')\n"}}]},
    {"tool_calls": [{"name": "run_command", "arguments": {"command": f"{sys.executable} hello.py"}}]},
    {"content": "Created hello.py and ran it: it prints hello world."},
]


def make_runtime(tmp_path: Path, model: ScriptedChatModel) -> Runtime:
    config = build_config({})
    state = StateStore(tmp_path / "state" / "k1412.sqlite3")
    return Runtime(config, lambda _c, _s: model, tmp_path / "state", default_registry(), state)


def run(runtime: Runtime, task: str, ws: Path, **kw: Any):  # type: ignore[no-untyped-def]
    return asyncio.run(runtime.run(RunRequest(task=task, workspace=ws, **kw)))


def test_write_then_run_completes_with_a_faithful_log(tmp_path: Path, ws: Path) -> None:
    model = ScriptedChatModel(list(HELLO))
    result = run(make_runtime(tmp_path, model), "Create hello.py that prints hello world and run it", ws)
    assert result.status == "completed", result
    assert result.files_changed == ["hello.py"]
    assert (ws / "hello.py").read_text() == "print('hello world')\n"
    events = read_events(Path(result.events_path))
    assert [e.seq for e in events] == list(range(1, len(events) + 1))
    assert {e.run_id for e in events} == {result.run_id}
    assert events[0].type == "run.created" and events[-1].type == "run.completed"
    assert "print('hello world')" not in Path(result.events_path).read_text()
    # The tool results went back to the model with matching ids, in order.
    tool_messages = [m for m in model.requests[1]["messages"] if m["role"] == "tool"]
    assert [m["tool_call_id"] for m in tool_messages] == ["call_1"]
    assert json.loads(tool_messages[0]["content"])["ok"] is True


def test_claims_without_work_end_unverified_after_bounded_retries(tmp_path: Path, ws: Path) -> None:
    model = ScriptedChatModel([{"content": "Done! hello.py is created.", "repeat": True}])
    result = run(make_runtime(tmp_path, model), "Create hello.py that prints hello world", ws)
    assert result.status == "unverified"
    assert result.evidence["missing"]
    assert len(model.requests) == 3  # first claim + two rejections with recovery instructions
    types = [e.type for e in read_events(Path(result.events_path))]
    assert types.count("completion.rejected") == 2 and "completion.unverified" in types
    assert types[-1] == "run.unverified"
    assert not (ws / "hello.py").exists()


def test_rejected_claim_then_real_work_completes(tmp_path: Path, ws: Path) -> None:
    model = ScriptedChatModel([{"content": "All done."}, *HELLO])
    result = run(make_runtime(tmp_path, model), "Create hello.py that prints hello world and run it", ws)
    assert result.status == "completed"
    recovery = model.requests[1]["messages"][-1]
    assert recovery["role"] == "user" and "hello.py" in recovery["content"]


def test_ten_reads_in_one_response_are_limited_to_eight(tmp_path: Path, ws: Path) -> None:
    (ws / "a.txt").write_text("alpha\n")
    calls = [{"id": f"c{i}", "name": "read_file", "arguments": {"path": "a.txt"}} for i in range(10)]
    model = ScriptedChatModel([{"tool_calls": calls}, {"content": "a.txt says alpha."}])
    result = run(make_runtime(tmp_path, model), "What does a.txt say?", ws)
    tool_messages = [m for m in model.requests[1]["messages"] if m["role"] == "tool"]
    assert [m["tool_call_id"] for m in tool_messages] == [f"c{i}" for i in range(10)]
    oks = [json.loads(m["content"])["ok"] for m in tool_messages]
    assert oks == [True] * 8 + [False] * 2
    events = read_events(Path(result.events_path))
    limited = [e for e in events if e.type == "tool.batch_limited"]
    assert len(limited) == 1 and limited[0].payload["requested"] == 10
    assert result.status == "completed"


def test_model_error_fails_the_run(tmp_path: Path, ws: Path) -> None:
    model = ScriptedChatModel([{"error": "HTTP 500 from provider 'test'"}])
    result = run(make_runtime(tmp_path, model), "Create x.txt", ws)
    assert result.status == "failed" and "HTTP 500" in result.message
    assert read_events(Path(result.events_path))[-1].type == "run.failed"


@pytest.mark.e2e
def test_cancel_kills_the_command_and_ends_cancelled(tmp_path: Path, ws: Path) -> None:
    model = ScriptedChatModel([{"tool_calls": [{"name": "run_command",
                                                "arguments": {"command": "sleep 121.5; echo k1412-survivor"}}]}])
    runtime = make_runtime(tmp_path, model)

    async def scenario():  # type: ignore[no-untyped-def]
        task = asyncio.create_task(runtime.run(RunRequest(task="Run the slow script", workspace=ws),
                                               run_id="run-cancel-test"))
        await asyncio.sleep(1.0)
        assert runtime.cancel("run-cancel-test")
        return await asyncio.wait_for(task, 5)

    result = asyncio.run(scenario())
    assert result.status == "cancelled" and result.exit_code == 130
    assert read_events(Path(result.events_path))[-1].type == "run.cancelled"
    import subprocess

    assert subprocess.run(["pgrep", "-f", "sleep 121.5"], capture_output=True).returncode == 1


def test_generation_length_is_capped_whatever_the_config_says(tmp_path: Path, ws: Path) -> None:
    model = ScriptedChatModel([{"content": "Hello!"}])
    runtime = make_runtime(tmp_path, model)
    runtime.config.models["luna"].max_output_tokens = 10_000_000
    result = run(runtime, "hello", ws)
    assert result.status == "completed"
    assert model.requests[0]["max_output_tokens"] == runtime.limits.max_output_tokens == 131_072


def test_routing_is_not_permission(tmp_path: Path, ws: Path) -> None:
    (ws / "a.txt").write_text("alpha\n")
    model = ScriptedChatModel([
        {"tool_calls": [{"id": "r", "name": "read_file", "arguments": {"path": "a.txt"}},
                        {"id": "m", "name": "recall", "arguments": {}}]},
        {"content": "a.txt says alpha."},
    ])
    result = run(make_runtime(tmp_path, model), "What does a.txt say?", ws)
    assert "recall" not in model.requests[0]["tools"]  # not offered for this request…
    read, recalled = (json.loads(m["content"]) for m in model.requests[1]["messages"] if m["role"] == "tool")
    assert read["ok"] and recalled["ok"]  # …but permitted, so it runs
    assert result.status == "completed"
