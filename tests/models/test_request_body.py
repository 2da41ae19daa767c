"""Request bodies: what goes on the wire, and each message encoded once however long the run."""

from __future__ import annotations

import json
from typing import Any

import pytest

from k1412_ls.core.window import ContextBudget, ContextWindow
from k1412_ls.models.request_body import BodyEncoder
from tests.support.model_kit import DEEPSEEK, LOCAL, PLANTED_KEY, WRITE_TOOL, make_model
from tests.support.scripted_server import ScriptedServer

HISTORY: list[dict[str, Any]] = [
    {"role": "system", "content": "You are K1412."},
    {"role": "user", "content": "写 hello.txt ✓ with \"quotes\" and \\ backslashes"},
    {"role": "assistant", "content": "", "reasoning_content": "think", "tool_calls": [
        {"id": "call_1", "type": "function",
         "function": {"name": "write_file", "arguments": "{\"path\": \"hello.txt\", \"content\": \"hi\"}"}}]},
    {"role": "tool", "tool_call_id": "call_1", "content": "wrote hello.txt (2 bytes)"},
]


@pytest.mark.parametrize("stream", [True, False], ids=["stream", "plain"])
@pytest.mark.parametrize("spec", [LOCAL, DEEPSEEK], ids=["local", "deepseek"])
async def test_the_body_on_the_wire_is_every_field_the_request_names(stream: bool, spec: Any,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_ADMIN_KEY", "sk-admin-" + "x" * 40)
    name = "deepseek" if spec is DEEPSEEK else "local"
    with ScriptedServer([{"content": "done"}]) as server:
        model = make_model(server, name=name, key=PLANTED_KEY if name == "deepseek" else None, stream=stream)
        try:
            await model.complete(HISTORY, [WRITE_TOOL], spec)
            params = model.request_params(HISTORY, [WRITE_TOOL], spec)
        finally:
            await model.aclose()
    (request,) = server.chat_requests
    expected = {key: value for key, value in params.items() if key not in ("extra_headers", "extra_body")}
    expected.update(params.get("extra_body") or {})
    assert request["body"] == json.loads(json.dumps(expected))
    headers = {key.lower(): value for key, value in request["headers"].items()}
    raw_headers = json.dumps(dict(request["headers"].items()))
    assert headers["content-type"] == "application/json"
    # The admin key in the environment never goes anywhere; a keyless provider gets no Authorization at all.
    assert "sk-admin" not in raw_headers
    if name == "deepseek":
        assert headers["authorization"] == f"Bearer {PLANTED_KEY}"
    else:
        assert "authorization" not in headers


def _decoded(body: bytes) -> dict[str, Any]:
    return json.loads(body.decode("utf-8"))  # type: ignore[no-any-return]


def test_a_growing_history_encodes_each_message_once() -> None:
    encoder = BodyEncoder()
    window = ContextWindow(list(HISTORY[:2]), 2, ContextBudget(10_000_000), lambda *_: "")
    for step in range(200):
        window.append({"role": "assistant", "content": f"step {step}"})
        window.append({"role": "tool", "tool_call_id": f"call_{step}", "content": "result " * 50})
        body = encoder.encode({"model": "m", "messages": window.for_request(), "stream": True})
    assert encoder.encoded == 2 + 2 * 200  # not 2 + 4 + 6 + … as when every request re-encodes the history
    assert _decoded(body) == {"model": "m", "messages": window.messages, "stream": True}


def test_a_message_the_window_replaces_is_sent_as_it_is_now() -> None:
    encoder = BodyEncoder()
    messages = [dict(message) for message in HISTORY]
    encoder.encode({"messages": messages})
    messages[3] = {**messages[3], "content": "[result elided: 25 chars]"}  # how the window elides
    messages[1]["content"] = "changed in place"  # not what the window does, but must not send stale text
    body = _decoded(encoder.encode({"messages": messages, "tools": [WRITE_TOOL]}))
    assert body["messages"] == messages
    assert body["tools"] == [WRITE_TOOL]
    assert encoder.encoded == len(HISTORY) + 2


def test_messages_the_window_dropped_are_forgotten() -> None:
    encoder = BodyEncoder()
    messages = [{"role": "user", "content": "x" * 1000} for _ in range(50)]
    encoder.encode({"messages": messages})
    encoder.encode({"messages": messages[-2:]})
    assert len(encoder._messages) == 2  # the encoder keeps no dropped message (nor its bytes) alive
