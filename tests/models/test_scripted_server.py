"""The scripted OpenAI-compatible server behaves like a real provider on the wire."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from tests.support.scripted_server import ScriptedServer

REPO = Path(__file__).resolve().parents[2]


def post(base_url: str, body: dict[str, Any]) -> tuple[int, bytes]:
    request = urllib.request.Request(
        f"{base_url}/chat/completions", data=json.dumps(body).encode(), headers={"Content-Type": "application/json"}
    )
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read()


def sse_events(raw: bytes) -> list[Any]:
    events = []
    for block in raw.decode().split("\n\n"):
        if block.startswith("data: "):
            data = block[len("data: "):]
            events.append(data if data == "[DONE]" else json.loads(data))
    return events


def chat(stream: bool = False, include_usage: bool = False) -> dict[str, Any]:
    body: dict[str, Any] = {"model": "m", "messages": [{"role": "user", "content": "hi"}], "stream": stream}
    if include_usage:
        body["stream_options"] = {"include_usage": True}
    return body


def test_stream_splits_content_and_tool_arguments_like_real_providers() -> None:
    script = [{"content": "Writing the file now.",
               "tool_calls": [{"name": "write_file", "arguments": {"path": "a.txt", "content": "hello"}},
                              {"name": "read_file", "arguments": {"path": "a.txt"}, "id": "call_custom"}]}]
    with ScriptedServer(script) as server:
        status, raw = post(server.base_url, chat(stream=True, include_usage=True))
    assert status == 200
    events = sse_events(raw)
    assert events[-1] == "[DONE]"
    usage_chunk = events[-2]
    assert usage_chunk["choices"] == [] and usage_chunk["usage"]["prompt_tokens"] > 0
    deltas = [choice["delta"] for event in events[:-2] for choice in event["choices"]]
    content_pieces = [d["content"] for d in deltas if d.get("content")]
    assert len(content_pieces) >= 2 and "".join(content_pieces) == "Writing the file now."
    tool_deltas = [t for d in deltas for t in d.get("tool_calls", [])]
    first_call = [t for t in tool_deltas if t["index"] == 0]
    assert first_call[0]["id"] == "call_1" and first_call[0]["function"]["name"] == "write_file"
    assert all("id" not in t and "name" not in t["function"] for t in first_call[1:])
    assert len(first_call) >= 3
    assert json.loads("".join(t["function"]["arguments"] for t in first_call)) == {"path": "a.txt", "content": "hello"}
    assert [t["id"] for t in tool_deltas if "id" in t] == ["call_1", "call_custom"]
    finish = [event["choices"][0]["finish_reason"] for event in events[:-2] if event["choices"][0]["finish_reason"]]
    assert finish == ["tool_calls"]


def test_stream_without_include_usage_has_no_usage_chunk() -> None:
    with ScriptedServer([{"content": "ok"}]) as server:
        _, raw = post(server.base_url, chat(stream=True))
    assert all(event == "[DONE]" or event["choices"] for event in sse_events(raw))


def test_cut_stream_has_no_finish_reason_and_no_done() -> None:
    with ScriptedServer([{"cut": "mid_tool_call"}]) as server:
        _, raw = post(server.base_url, chat(stream=True))
    events = sse_events(raw)
    assert "[DONE]" not in events
    assert all(event["choices"][0]["finish_reason"] is None for event in events)
    arguments = "".join(t["function"]["arguments"] for e in events for t in e["choices"][0]["delta"].get("tool_calls", []))
    with pytest.raises(json.JSONDecodeError):
        json.loads(arguments)


def test_cut_plain_body_is_truncated_json_with_matching_length() -> None:
    with ScriptedServer([{"cut": "mid_tool_call"}]) as server:
        status, raw = post(server.base_url, chat())
    assert status == 200
    with pytest.raises(json.JSONDecodeError):
        json.loads(raw)


def test_script_is_consumed_in_order_then_exhausted() -> None:
    with ScriptedServer([{"content": "one"}, {"status": 503, "headers": {"Retry-After": "7"}}, {"content": "two"}]) as server:
        answers = [post(server.base_url, chat()) for _ in range(4)]
        assert server.remaining_steps == 0
        assert len(server.chat_requests) == 4
        assert server.chat_requests[0]["headers"]["content-type"] == "application/json"
        assert server.chat_requests[0]["headers"].get("Content-Type") == "application/json"
        assert "CONTENT-TYPE" in server.chat_requests[0]["headers"]
    assert json.loads(answers[0][1])["choices"][0]["message"]["content"] == "one"
    assert answers[1][0] == 503
    assert json.loads(answers[2][1])["choices"][0]["message"]["content"] == "two"
    assert answers[3][0] == 500
    assert "script exhausted" in json.loads(answers[3][1])["error"]["message"]


def test_repeat_step_answers_every_remaining_request() -> None:
    with ScriptedServer([{"content": "first"}, {"content": "again", "repeat": True}]) as server:
        contents = [json.loads(post(server.base_url, chat())[1])["choices"][0]["message"]["content"] for _ in range(4)]
    assert contents == ["first", "again", "again", "again"]


def test_forced_mode_refuses_the_other_mode() -> None:
    with ScriptedServer([{"content": "ok"}], stream=True) as server:
        status, raw = post(server.base_url, chat(stream=False))
        assert server.remaining_steps == 1
    assert status == 400
    assert "expects stream=True" in json.loads(raw)["error"]["message"]


def test_models_endpoint_lists_the_scripted_model() -> None:
    with ScriptedServer([]) as server, urllib.request.urlopen(f"{server.base_url}/models", timeout=10) as response:
        data = json.loads(response.read())
    assert [model["id"] for model in data["data"]] == ["scripted-model"]


def test_cli_serves_a_script_file_until_terminated(tmp_path: Path) -> None:
    script = tmp_path / "script.json"
    script.write_text(json.dumps([{"content": "from the subprocess"}]), encoding="utf-8")
    port_file = tmp_path / "port"
    log = tmp_path / "requests.jsonl"
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    proc = subprocess.Popen(
        [sys.executable, "-m", "tests.support.scripted_server", "--script", str(script),
         "--port-file", str(port_file), "--requests-file", str(log)],
        cwd=REPO, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
    )
    try:
        deadline = time.monotonic() + 20
        while not port_file.exists() and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.05)
        assert port_file.exists(), "the scripted server never wrote its port file"
        base_url = f"http://127.0.0.1:{port_file.read_text()}/v1"
        status, raw = post(base_url, chat())
        assert status == 200
        assert json.loads(raw)["choices"][0]["message"]["content"] == "from the subprocess"
        logged = [json.loads(line) for line in log.read_text().splitlines()]
        assert logged[0]["body"]["messages"] == [{"role": "user", "content": "hi"}]
    finally:
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=10) == 0
        if proc.stderr:
            proc.stderr.close()
