"""The four wire problems a real llama.cpp server showed, on its recorded bytes and scripted equivalents.

Recordings (tests/support/data/llama, made by scripts/record_llama_wire.py with llama.cpp's server and
SmolLM2-135M): a final answer cut by the output limit, an error event mid-stream, a server killed
while it read the prompt (only keep-alive comments, then the close). The tool-call replies cut by
``length`` are scripted in llama.cpp's shape: SmolLM2-135M does not produce tool calls.
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

from k1412_ls.catalog import default_registry
from k1412_ls.config import ProviderSpec, build_config
from k1412_ls.core.events import read_events
from k1412_ls.core.run_request import RunRequest
from k1412_ls.core.runtime import Runtime
from k1412_ls.models import OpenAIChatModel
from k1412_ls.state.store import StateStore
from tests.support.scripted_server import ScriptedServer

DATA = Path(__file__).resolve().parents[1] / "support" / "data" / "llama"
TASK = "Create hello.py that prints hello world and run it"
# What the issue saw: 261 tokens per reply cut mid tool call.
CUT_USAGE = {"prompt_tokens": 130, "completion_tokens": 131}


def recording(name: str) -> dict[str, Any]:
    return json.loads((DATA / f"{name}.json").read_text(encoding="utf-8"))


def run_against(server: ScriptedServer, tmp_path: Path, ws: Path, **kw: Any):  # type: ignore[no-untyped-def]
    config = build_config({})
    provider = ProviderSpec(base_url=server.base_url, max_retries=0)
    runtime = Runtime(config, lambda _c, _s: OpenAIChatModel(provider, "local", None), tmp_path / "state",
                      default_registry(), StateStore(tmp_path / "state" / "k1412.sqlite3"))
    return asyncio.run(runtime.run(RunRequest(task=TASK, workspace=ws, **kw)))


def responded(result: Any) -> list[dict[str, Any]]:
    return [e.payload for e in read_events(Path(result.events_path)) if e.type == "model.responded"]


def test_complete_tool_calls_cut_by_length_run_and_their_tokens_count(tmp_path: Path, ws: Path) -> None:
    hello = {"path": "hello.py", "content": "print('hello world')\n"}
    script = [
        {"tool_calls": [{"name": "write_file", "arguments": hello}], "finish_reason": "length", "usage": CUT_USAGE},
        {"tool_calls": [{"name": "run_command", "arguments": {"command": f"{sys.executable} hello.py"}}],
         "finish_reason": "length", "usage": CUT_USAGE},
        {"content": "Created hello.py and ran it: it prints hello world.", "usage": CUT_USAGE},
    ]
    with ScriptedServer(script) as server:
        result = run_against(server, tmp_path, ws)
    assert result.status == "completed", result.message
    assert (ws / "hello.py").read_text() == "print('hello world')\n"
    assert result.usage["prompt_tokens"] + result.usage["completion_tokens"] == 3 * 261


def test_refused_replies_are_paid_for_in_usage(tmp_path: Path, ws: Path) -> None:
    cut = {"tool_calls": [{"name": "write_file", "arguments": '{"path": "hello.py", "content": "print('}],
           "finish_reason": "length", "usage": CUT_USAGE, "repeat": True}
    with ScriptedServer([cut]) as server:
        result = run_against(server, tmp_path, ws)
    assert result.status == "failed" and "finish_reason length" in result.message
    assert result.usage["prompt_tokens"] + result.usage["completion_tokens"] == 2 * 261  # the reply and its retry
    assert [event["usage"]["completion_tokens"] for event in responded(result)] == [131, 131]
    assert not (ws / "hello.py").exists()


def test_a_refused_reply_counts_against_the_token_budget(tmp_path: Path, ws: Path) -> None:
    cut = {"tool_calls": [{"name": "write_file", "arguments": '{"path": "hello.py", "content": "print('}],
           "finish_reason": "length", "usage": CUT_USAGE, "repeat": True}
    with ScriptedServer([cut]) as server:
        result = run_against(server, tmp_path, ws, max_tokens=200)
        requests = len(server.chat_requests)
    assert result.status == "unverified" and "token budget (max_tokens 200)" in result.message
    assert requests == 1  # no retry once the refused reply used the budget up


def test_a_final_answer_cut_by_length_is_never_completed(tmp_path: Path, ws: Path) -> None:
    cut = recording("final_answer_cut_by_length")
    assert '"finish_reason":"length"' in cut["body"]
    with ScriptedServer([{"replay": cut, "repeat": True}]) as server:
        result = run_against(server, tmp_path, ws)
    assert result.status == "unverified"
    assert "cut by the output limit" in result.message
    events = read_events(Path(result.events_path))
    rejected = [e.payload for e in events if e.type == "completion.rejected"]
    assert rejected and all(data["cut"] == "length" for data in rejected)
    assert "cut off by the output limit" in rejected[0]["instruction"]
    # Every replayed reply's usage (126 prompt + 24 completion tokens, as the server reported) counts.
    assert result.usage["completion_tokens"] == 24 * len(responded(result))


def test_a_server_killed_mid_stream_gets_a_truthful_error(tmp_path: Path, ws: Path) -> None:
    died = recording("server_killed_mid_stream")
    assert "data:" not in died["body"] and died["body"].startswith(":")
    with ScriptedServer([{"replay": died}]) as server:
        result = run_against(server, tmp_path, ws)
    assert result.status == "failed"
    assert "closed its event stream before sending any reply" in result.message
    assert "base_url" not in result.message


def test_an_error_event_mid_stream_is_reported_as_the_server_said(tmp_path: Path, ws: Path) -> None:
    with ScriptedServer([{"replay": recording("error_event_mid_stream")}]) as server:
        result = run_against(server, tmp_path, ws)
    assert result.status == "failed"
    assert "reported an error" in result.message
    assert "does not match the expected peg-native format" in result.message


def test_a_recorded_tool_call_cut_by_length_is_refused_and_both_replies_are_paid(tmp_path: Path, ws: Path) -> None:
    cut = recording("tool_call_cut_by_length")
    assert '"finish_reason":"length"' in cut["body"] and '"tool_calls"' in cut["body"]
    with ScriptedServer([{"replay": cut}, {"replay": cut}]) as server:
        result = run_against(server, tmp_path, ws)
    assert result.status == "failed" and "finish_reason length" in result.message
    assert result.usage["prompt_tokens"] + result.usage["completion_tokens"] == 2 * 155  # as the server reported
    assert not (ws / "hello.py").exists()
