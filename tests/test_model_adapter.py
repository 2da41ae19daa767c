"""The model adapter: the real openai SDK against the scripted OpenAI-compatible server."""

from __future__ import annotations

import json
import socket
import time
import urllib.request
from typing import Any

import pytest

from k1412_ls.config import ConfigError, ModelSpec, ProviderSpec, build_config
from k1412_ls.core.model_port import MalformedReply, ModelError, ModelReply
from k1412_ls.models import OpenAIChatModel, build_chat_model
from tests.support.scripted_server import ScriptedServer

PLANTED_KEY = "sk-proj-AbC_dEf-0123456789_ghIJklMNop-qrstUVwx"
USER = [{"role": "user", "content": "write hello.txt"}]
WRITE_TOOL = {
    "type": "function",
    "function": {
        "name": "write_file",
        "description": "Write a file.",
        "parameters": {
            "type": "object",
            "properties": {"path": {"type": "string"}, "content": {"type": "string"}},
            "required": ["path", "content"],
            "additionalProperties": False,
        },
    },
}
LOCAL = ModelSpec(id="luna", provider="local", provider_model="qwen2.5-coder-7b-instruct", max_output_tokens=1234)
LOCAL_THINKING = ModelSpec(
    id="sol", provider="local", provider_model="gpt-oss-20b", thinking=True, reasoning_effort="high"
)
DEEPSEEK = ModelSpec(
    id="deepseek-v4-pro", provider="deepseek", provider_model="deepseek-v4-pro", thinking=True, reasoning_effort="max"
)
STREAM_MODES = pytest.mark.parametrize("stream", [True, False], ids=["stream", "plain"])


def make_model(
    server: ScriptedServer,
    name: str = "local",
    key: str | None = None,
    stream: bool = True,
    retries: int = 0,
    timeout_s: float = 10.0,
) -> OpenAIChatModel:
    env = {"deepseek": "DEEPSEEK_API_KEY", "openai": "OPENAI_API_KEY"}.get(name)
    provider = ProviderSpec(base_url=server.base_url, api_key_env=env, timeout_s=timeout_s, max_retries=retries)
    return OpenAIChatModel(provider, name, key, stream=stream)


async def complete(
    script: list[dict[str, Any]], spec: ModelSpec = LOCAL, tools: list[dict[str, Any]] | None = None, **kw: Any
) -> tuple[ModelReply, ScriptedServer]:
    with ScriptedServer(script) as server:
        model = make_model(server, **kw)
        try:
            reply = await model.complete(USER, tools or [], spec)
        finally:
            await model.aclose()
    return reply, server


async def failure(script: list[dict[str, Any]], spec: ModelSpec = LOCAL, **kw: Any) -> tuple[ModelError, ScriptedServer]:
    with ScriptedServer(script) as server:
        model = make_model(server, **kw)
        try:
            with pytest.raises(ModelError) as caught:
                await model.complete(USER, [WRITE_TOOL], spec)
        finally:
            await model.aclose()
    return caught.value, server


# -- replies ------------------------------------------------------------------


@STREAM_MODES
async def test_final_answer_text_and_usage(stream: bool) -> None:
    reply, server = await complete(
        [{"content": "All done: hello.txt holds the greeting.", "usage": {"prompt_tokens": 42, "completion_tokens": 7}}],
        stream=stream,
    )
    assert reply.content == "All done: hello.txt holds the greeting."
    assert reply.tool_calls == []
    assert reply.finish_reason == "stop"
    assert reply.usage.as_dict() == {"prompt_tokens": 42, "completion_tokens": 7, "reasoning_tokens": 0}
    assert server.chat_requests[0]["body"].get("stream", False) is stream


@STREAM_MODES
async def test_parallel_tool_calls_are_assembled_in_order(stream: bool) -> None:
    calls = [
        {"name": "read_file", "arguments": {"path": "a.py"}},
        {"name": "write_file", "arguments": {"path": "b.txt", "content": "line one\nline two ✓"}},
        {"name": "list_files", "arguments": ""},
    ]
    reply, _ = await complete([{"content": "Reading and writing.", "tool_calls": calls}], tools=[WRITE_TOOL], stream=stream)
    assert [call.name for call in reply.tool_calls] == ["read_file", "write_file", "list_files"]
    assert [call.id for call in reply.tool_calls] == ["call_1", "call_2", "call_3"]
    assert reply.tool_calls[0].arguments == {"path": "a.py"}
    assert reply.tool_calls[1].arguments == {"path": "b.txt", "content": "line one\nline two ✓"}
    assert reply.tool_calls[2].arguments == {}
    assert reply.content == "Reading and writing."
    assert reply.finish_reason == "tool_calls"


@STREAM_MODES
async def test_reasoning_tokens_are_counted(stream: bool) -> None:
    reply, _ = await complete(
        [{"content": "ok", "usage": {"prompt_tokens": 100, "completion_tokens": 60, "reasoning_tokens": 45}}],
        stream=stream,
    )
    assert reply.usage.as_dict() == {"prompt_tokens": 100, "completion_tokens": 60, "reasoning_tokens": 45}


@STREAM_MODES
async def test_deepseek_reasoning_is_captured_and_carried_on_tool_turns(stream: bool) -> None:
    step = {"reasoning_content": "The user wants a file; write it.", "tool_calls": [{"name": "write_file", "arguments": {"path": "x", "content": "y"}}]}
    reply, _ = await complete([step], spec=DEEPSEEK, name="deepseek", key=PLANTED_KEY, stream=stream)
    assert reply.reasoning_content == "The user wants a file; write it."
    with ScriptedServer([]) as server:
        deepseek = make_model(server, name="deepseek", key=PLANTED_KEY)
        local = make_model(server)
        assert deepseek.carries_reasoning is True
        assert local.carries_reasoning is False
        await deepseek.aclose()
        await local.aclose()
    message = reply.assistant_message(carry_reasoning=True)
    assert message["reasoning_content"] == "The user wants a file; write it."
    assert message["tool_calls"][0]["function"]["name"] == "write_file"


@STREAM_MODES
async def test_reasoning_field_of_local_servers_is_captured(stream: bool) -> None:
    reply, _ = await complete([{"reasoning": "Think briefly.", "content": "Done."}], spec=LOCAL_THINKING, stream=stream)
    assert reply.reasoning_content == "Think briefly."
    assert reply.content == "Done."


# -- what is sent ---------------------------------------------------------------

REQUEST_CASES = [
    # (provider, spec, key, tokens field, reasoning_effort sent, thinking extra body)
    ("local", LOCAL, None, "max_tokens", None, None),
    ("local", LOCAL_THINKING, None, "max_tokens", "high", None),
    ("deepseek", DEEPSEEK, PLANTED_KEY, "max_tokens", "max", {"type": "enabled"}),
    ("deepseek", DEEPSEEK.model_copy(update={"thinking": False, "reasoning_effort": None}), PLANTED_KEY,
     "max_tokens", None, {"type": "disabled"}),
    ("openai", ModelSpec(provider="openai", provider_model="gpt-5-mini", thinking=True, reasoning_effort="low"),
     PLANTED_KEY, "max_completion_tokens", "low", None),
]


@pytest.mark.parametrize(("name", "spec", "key", "tokens_field", "effort", "thinking"), REQUEST_CASES)
async def test_request_body_follows_the_provider(
    name: str, spec: ModelSpec, key: str | None, tokens_field: str, effort: str | None, thinking: dict[str, str] | None
) -> None:
    _, server = await complete([{"content": "ok"}], spec=spec, tools=[WRITE_TOOL], name=name, key=key)
    body = server.chat_requests[0]["body"]
    assert body["model"] == spec.provider_model
    assert body["messages"] == USER
    assert body["tools"] == [WRITE_TOOL]
    assert body["tool_choice"] == "auto"
    assert body[tokens_field] == spec.max_output_tokens
    other = "max_tokens" if tokens_field == "max_completion_tokens" else "max_completion_tokens"
    assert other not in body
    assert body.get("reasoning_effort") == effort
    assert body.get("thinking") == thinking
    assert body["stream"] is True
    assert body["stream_options"] == {"include_usage": True}


async def test_no_tools_means_no_tools_and_no_tool_choice() -> None:
    _, server = await complete([{"content": "ok"}], tools=[], stream=False)
    body = server.chat_requests[0]["body"]
    assert "tools" not in body
    assert "tool_choice" not in body
    assert "stream" not in body


async def test_provider_without_key_sends_no_authorization(monkeypatch: pytest.MonkeyPatch) -> None:
    # Neither a placeholder nor the user's OpenAI credentials may reach a keyless server.
    monkeypatch.setenv("OPENAI_API_KEY", PLANTED_KEY)
    monkeypatch.setenv("OPENAI_ORG_ID", "org-should-not-leak")
    _, server = await complete([{"content": "ok"}])
    request = server.requests[0]
    assert request["headers"].get("Authorization") is None
    assert request["headers"].get("OpenAI-Organization") is None
    assert PLANTED_KEY not in repr(request)


async def test_provider_with_key_sends_bearer() -> None:
    _, server = await complete([{"content": "ok"}], spec=DEEPSEEK, name="deepseek", key=PLANTED_KEY)
    assert server.requests[0]["headers"].get("Authorization") == f"Bearer {PLANTED_KEY}"


# -- malformed replies: nothing is dispatched ---------------------------------------


@STREAM_MODES
async def test_reply_cut_mid_tool_call_is_refused(stream: bool) -> None:
    error, server = await failure([{"cut": "mid_tool_call"}], stream=stream)
    assert isinstance(error, MalformedReply)
    assert "cut off" in str(error)
    assert "nothing was run" in str(error)
    assert len(server.chat_requests) == 1


BAD_ARGUMENTS = ['{"path": "a.txt", "content": ', "[1, 2]", '"x"', "42", "null", "{'path': 'a'}"]


@STREAM_MODES
@pytest.mark.parametrize("arguments", BAD_ARGUMENTS)
async def test_arguments_that_are_not_a_json_object_are_refused(stream: bool, arguments: str) -> None:
    script = [{"tool_calls": [{"name": "read_file", "arguments": {"path": "ok.txt"}},
                              {"name": "write_file", "arguments": arguments}]}]
    error, _ = await failure(script, stream=stream)
    assert isinstance(error, MalformedReply)
    assert "write_file" in str(error)
    assert "not a JSON object" in str(error)


@STREAM_MODES
async def test_missing_finish_reason_is_refused(stream: bool) -> None:
    error, _ = await failure([{"content": "I wrote it.", "finish_reason": None}], stream=stream)
    assert isinstance(error, MalformedReply)
    assert "no finish_reason" in str(error)


@STREAM_MODES
async def test_length_cut_tool_call_is_refused(stream: bool) -> None:
    script = [{"tool_calls": [{"name": "write_file", "arguments": '{"path": "a.txt", "content": "abc'}], "finish_reason": "length"}]
    error, _ = await failure(script, stream=stream)
    assert isinstance(error, MalformedReply)


async def test_tool_call_without_name_is_refused() -> None:
    error, _ = await failure([{"tool_calls": [{"name": "", "arguments": {}}]}])
    assert isinstance(error, MalformedReply)
    assert "no tool name" in str(error)


# -- provider errors ------------------------------------------------------------------


async def test_server_error_storm_ends_after_the_sdk_retries() -> None:
    step = {"status": 500, "repeat": True, "headers": {"retry-after-ms": "20"},
            "body": {"error": {"message": f"upstream exploded near {PLANTED_KEY}\nsecond line", "type": "server_error"}}}
    started = time.monotonic()
    error, server = await failure([step], retries=1)
    assert time.monotonic() - started < 20
    assert len(server.chat_requests) == 2  # one attempt plus exactly one SDK retry, no second layer
    text = str(error)
    assert text.startswith("HTTP 500 (server error) from provider 'local' after 2 attempts: upstream exploded near")
    assert "\n" not in text
    assert PLANTED_KEY not in text
    assert "[REDACTED]" in text


async def test_long_provider_message_is_cut_to_one_short_line() -> None:
    step = {"status": 503, "repeat": True, "headers": {"retry-after-ms": "1"}, "body": {"error": {"message": "x" * 5000}}}
    error, _ = await failure([step])
    assert len(str(error)) < 300


async def test_rate_limit_retry_after_is_honoured() -> None:
    script = [{"status": 429, "headers": {"retry-after-ms": "400"}, "body": {"error": {"message": "slow down"}}},
              {"content": "made it"}]
    reply, server = await complete(script, retries=2)
    assert reply.content == "made it"
    first, second = server.requests[:2]
    assert second["time"] - first["time"] >= 0.35
    assert second["headers"].get("x-stainless-retry-count") == "1"


async def test_rate_limit_storm_names_the_status() -> None:
    step = {"status": 429, "repeat": True, "headers": {"Retry-After": "0.01"}, "body": {"error": {"message": "quota"}}}
    error, server = await failure([step], retries=1)
    assert str(error) == "HTTP 429 (rate limited) from provider 'local' after 2 attempts: quota."
    assert len(server.chat_requests) == 2


@pytest.mark.parametrize(("status", "env_hint"), [(401, "DEEPSEEK_API_KEY"), (403, "DEEPSEEK_API_KEY")])
async def test_auth_failure_names_the_variable_never_the_key(status: int, env_hint: str) -> None:
    body = {"error": {"message": f"Incorrect API key provided: {PLANTED_KEY}", "type": "authentication_error"}}
    error, server = await failure([{"status": status, "body": body}], spec=DEEPSEEK, name="deepseek", key=PLANTED_KEY)
    assert str(error).startswith(f"The provider 'deepseek' answered HTTP {status}")
    assert env_hint in str(error)
    for rendered in (str(error), repr(error), repr(error.args)):
        assert PLANTED_KEY not in rendered
        assert "sk-proj" not in rendered
    # The SDK exception (its request headers hold the key) is not chained either.
    assert error.__cause__ is None
    assert error.__context__ is None
    assert len(server.chat_requests) == 1  # 401 is not retried


async def test_bad_request_shows_the_provider_message() -> None:
    body = {"error": {"message": "model 'nope' does not exist", "type": "invalid_request_error"}}
    error, _ = await failure([{"status": 400, "body": body}])
    assert str(error) == "The provider 'local' refused the request with HTTP 400 (bad request): model 'nope' does not exist."


async def test_connection_refused_is_one_clear_line() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    provider = ProviderSpec(base_url=f"http://127.0.0.1:{port}/v1", timeout_s=5, max_retries=0)
    model = OpenAIChatModel(provider, "local", None)
    with pytest.raises(ModelError) as caught:
        await model.complete(USER, [], LOCAL)
    await model.aclose()
    assert str(caught.value) == (
        f"Could not connect to http://127.0.0.1:{port}/v1 (connection refused); is the local server running?"
    )


async def test_slow_server_times_out_with_a_clear_line() -> None:
    error, _ = await failure([{"delay_s": 1.5, "content": "too late"}], timeout_s=0.3)
    assert str(error) == (
        "The provider 'local' timed out after 0.3 s per attempt (1 attempt); try again later or raise timeout_s."
    )


# -- construction from configuration ---------------------------------------------------


def test_build_chat_model_reads_the_key_from_the_named_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    config = build_config({})
    monkeypatch.delenv("DEEPSEEK_API_KEY", raising=False)
    with pytest.raises(ConfigError, match="DEEPSEEK_API_KEY"):
        build_chat_model(config, config.model_spec("deepseek-v4-pro"))
    monkeypatch.setenv("DEEPSEEK_API_KEY", PLANTED_KEY)
    model = build_chat_model(config, config.model_spec("deepseek-v4-pro"))
    assert model.carries_reasoning is True
    assert model.provider_name == "deepseek"


async def test_build_chat_model_for_a_configured_local_server() -> None:
    with ScriptedServer([{"content": "hello from mine"}]) as server:
        config = build_config(
            {"default_model": "my-model",
             "providers": {"mine": {"base_url": server.base_url, "max_retries": 0}},
             "models": {"my-model": {"provider": "mine", "provider_model": "qwen2.5-coder-7b"}}}
        )
        spec = config.model_spec()
        model = build_chat_model(config, spec)
        reply = await model.complete(USER, [], spec)
        await model.aclose()
    assert reply.content == "hello from mine"
    assert server.requests[0]["headers"].get("Authorization") is None
    assert server.chat_requests[0]["body"]["model"] == "qwen2.5-coder-7b"


# -- provider wire shapes, emulated from their documentation ----------------------------
#
# OpenAI: index + id/name in the first delta, arguments in pieces, finish "tool_calls".
# DeepSeek: reasoning_content deltas first; SSE ": keep-alive" comments (plain: empty lines)
#   while the request waits.
# llama.cpp: reasoning_content (--reasoning-format deepseek, the default); with "none" the
#   thoughts stay in content as <think>...</think>; older builds ended tool calls with "stop".
# Ollama /v1: reasoning in "reasoning"; each tool call whole in one chunk; older versions
#   finished with "stop" and sent no index.
# vLLM: "reasoning" (older "reasoning_content", some versions both at once).
# Proxies: every call at index 0, each with its own id.

CALLS = [
    {"name": "read_file", "arguments": {"path": "a.py"}},
    {"name": "write_file", "arguments": {"path": "b.txt", "content": "x = 1\n"}},
]
THOUGHT = "Read a.py first, then write b.txt."
PROVIDER_WIRES: dict[str, dict[str, Any]] = {
    "openai": {},
    "deepseek": {"reasoning_content": THOUGHT, "quirks": {"keepalive": 3}},
    "llama.cpp": {"reasoning_content": THOUGHT},
    "llama.cpp old build": {"reasoning_content": THOUGHT, "finish_reason": "stop"},
    "llama.cpp reasoning-format none": {"content_prefix": f"<think>{THOUGHT}</think>\n"},
    "ollama": {"reasoning": THOUGHT, "quirks": {"tool_calls": "whole"}},
    "ollama old": {"reasoning": THOUGHT, "finish_reason": "stop", "quirks": {"tool_calls": "whole", "index": "omit"}},
    "vllm": {"reasoning": THOUGHT, "quirks": {"reasoning_fields": ["reasoning", "reasoning_content"]}},
    "vllm old": {"reasoning_content": THOUGHT},
    "proxy index 0": {"reasoning": THOUGHT, "quirks": {"index": "zero"}},
    "one chunk, finish on it": {"reasoning": THOUGHT, "quirks": {"tool_calls": "one_chunk", "finish": "with_last_delta"}},
    "no usage, no [DONE]": {"reasoning": THOUGHT, "quirks": {"usage": "none", "done": False}},
}


@STREAM_MODES
@pytest.mark.parametrize("wire", list(PROVIDER_WIRES))
async def test_every_provider_wire_shape_gives_the_same_reply(wire: str, stream: bool) -> None:
    step = dict(PROVIDER_WIRES[wire])
    step["content"] = step.pop("content_prefix", "") + "Reading, then writing."
    reply, _ = await complete([{**step, "tool_calls": CALLS}], spec=LOCAL_THINKING, tools=[WRITE_TOOL], stream=stream)
    assert [(call.name, call.arguments) for call in reply.tool_calls] == [
        ("read_file", {"path": "a.py"}), ("write_file", {"path": "b.txt", "content": "x = 1\n"})]
    assert reply.content == "Reading, then writing."
    assert reply.reasoning_content == (None if wire == "openai" else THOUGHT)
    assert THOUGHT not in reply.content
    assert len({call.id for call in reply.tool_calls}) == 2


def raw_stream(step: dict[str, Any]) -> list[Any]:
    """The SSE events the scripted server sends for one step (to prove an emulation is real)."""
    body = {"model": "m", "messages": USER, "stream": True, "stream_options": {"include_usage": True}}
    with ScriptedServer([step]) as server:
        request = urllib.request.Request(f"{server.base_url}/chat/completions", data=json.dumps(body).encode(),
                                         headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(request, timeout=10) as response:
            raw = response.read().decode()
    return [json.loads(b[6:]) if b[6:] != "[DONE]" else "[DONE]" for b in raw.split("\n\n") if b.startswith("data: ")]


def tool_deltas(events: list[Any]) -> list[dict[str, Any]]:
    return [t for e in events if e != "[DONE]" for c in e["choices"] for t in (c["delta"] or {}).get("tool_calls", [])]


def test_emulated_wire_shapes_are_what_they_claim() -> None:
    whole = tool_deltas(raw_stream({"tool_calls": CALLS, "quirks": {"tool_calls": "whole", "index": "omit"}}))
    assert len(whole) == 2 and all("index" not in t and json.loads(t["function"]["arguments"]) for t in whole)
    zero = tool_deltas(raw_stream({"tool_calls": CALLS, "quirks": {"index": "zero"}}))
    assert {t["index"] for t in zero} == {0} and len([t for t in zero if t.get("id")]) == 2
    one = raw_stream({"tool_calls": CALLS, "quirks": {"tool_calls": "one_chunk", "finish": "with_last_delta",
                                                       "arguments": "object", "ids": "empty", "done": False}})
    assert "[DONE]" not in one
    last = one[-2]["choices"][0]  # before the usage chunk
    assert last["finish_reason"] == "tool_calls" and len(last["delta"]["tool_calls"]) == 2
    assert last["delta"]["tool_calls"][0]["function"]["arguments"] == {"path": "a.py"}
    assert [t["id"] for t in last["delta"]["tool_calls"]] == ["", ""]
    both = raw_stream({"reasoning": "hm", "content": "ok", "quirks": {"reasoning_fields": ["reasoning", "reasoning_content"],
                                                                     "usage": "in_finish_chunk"}})
    deltas = [c["delta"] for e in both if e != "[DONE]" for c in e["choices"]]
    assert "".join(d.get("reasoning", "") for d in deltas) == "hm" == "".join(d.get("reasoning_content", "") for d in deltas)
    finish = [e for e in both if e != "[DONE]" and e["choices"] and e["choices"][0]["finish_reason"]]
    assert finish[0]["usage"]["prompt_tokens"] == 10 and all(e == "[DONE]" or e["choices"] for e in both)


@STREAM_MODES
@pytest.mark.parametrize("ids", ["empty", "omit", "duplicate"])
async def test_missing_empty_or_repeated_ids_get_fresh_unique_ids(stream: bool, ids: str) -> None:
    calls = [dict(call, id="call_dup") for call in CALLS] if ids == "duplicate" else CALLS
    quirks = {} if ids == "duplicate" else {"ids": ids}
    script = [{"tool_calls": calls, "quirks": quirks}, {"tool_calls": calls, "quirks": quirks}]
    with ScriptedServer(script) as server:
        model = make_model(server, stream=stream)
        first = await model.complete(USER, [WRITE_TOOL], LOCAL)
        second = await model.complete(USER, [WRITE_TOOL], LOCAL)
        await model.aclose()
    every_id = [call.id for reply in (first, second) for call in reply.tool_calls]
    assert len(set(every_id)) == 4  # unique within a reply and across the turns of one model
    fresh = every_id[1:] if ids == "duplicate" else every_id
    assert all(len(call_id) == 9 and call_id.isalnum() for call_id in fresh)  # Mistral templates demand this form
    if ids == "duplicate":
        assert every_id[0] == "call_dup"


@STREAM_MODES
async def test_arguments_sent_as_a_json_object_are_accepted(stream: bool) -> None:
    reply, _ = await complete([{"tool_calls": CALLS, "quirks": {"tool_calls": "whole", "arguments": "object"}}],
                              stream=stream)
    assert reply.tool_calls[1].arguments == {"path": "b.txt", "content": "x = 1\n"}
    assert json.loads(reply.tool_calls[1].raw_arguments) == reply.tool_calls[1].arguments


@pytest.mark.parametrize("usage", ["none", "in_finish_chunk", "every_chunk", None])
async def test_usage_wherever_it_comes_or_not_at_all(usage: str | None) -> None:
    step = {"content": "ok", "usage": {"prompt_tokens": 30, "completion_tokens": 4, "reasoning_tokens": 2},
            "quirks": {"usage": usage} if usage else {}}
    reply, _ = await complete([step])
    expected = {"prompt_tokens": 0, "completion_tokens": 0, "reasoning_tokens": 0} if usage == "none" else \
        {"prompt_tokens": 30, "completion_tokens": 4, "reasoning_tokens": 2}
    assert reply.usage.as_dict() == expected


async def test_plain_reply_without_usage_is_accepted() -> None:
    reply, _ = await complete([{"content": "ok", "quirks": {"usage": "none"}}], stream=False)
    assert reply.content == "ok" and reply.usage.as_dict()["prompt_tokens"] == 0


async def test_finish_chunk_with_null_delta_is_accepted() -> None:
    reply, _ = await complete([{"tool_calls": CALLS[:1], "quirks": {"finish": "null_delta"}}])
    assert reply.finish_reason == "tool_calls" and reply.tool_calls[0].name == "read_file"


@STREAM_MODES
@pytest.mark.parametrize("finish_reason", ["length", "content_filter"])
async def test_complete_looking_tool_calls_of_a_cut_reply_are_refused(stream: bool, finish_reason: str) -> None:
    error, _ = await failure([{"tool_calls": CALLS, "finish_reason": finish_reason}], stream=stream)
    assert isinstance(error, MalformedReply)
    assert f"finish_reason {finish_reason}" in str(error) and "nothing was run" in str(error)


@STREAM_MODES
async def test_a_cut_text_answer_is_still_returned(stream: bool) -> None:
    reply, _ = await complete([{"content": "Partial answ", "finish_reason": "length"}], stream=stream)
    assert reply.content == "Partial answ" and reply.finish_reason == "length"


@STREAM_MODES
@pytest.mark.parametrize(("content", "answer", "thought"), [
    ("<think>plan quietly</think>\n\nDone.", "Done.", "plan quietly"),
    ("  <think>never closed, cut", "", "never closed, cut"),
    ("Use the <think> tag like this: <think>x</think>", "Use the <think> tag like this: <think>x</think>", None),
])
async def test_thoughts_left_in_the_content_are_moved_out(stream: bool, content: str, answer: str,
                                                          thought: str | None) -> None:
    reply, _ = await complete([{"content": content}], spec=LOCAL_THINKING, stream=stream)
    assert reply.content == answer
    assert reply.reasoning_content == thought


@STREAM_MODES
async def test_reasoning_field_wins_over_a_legacy_think_block(stream: bool) -> None:
    # llama.cpp --reasoning-format deepseek-legacy: <think> stays in content and reasoning_content is filled.
    step = {"reasoning_content": "the field", "content": "<think>the field</think>Answer."}
    reply, _ = await complete([step], spec=LOCAL_THINKING, stream=stream)
    assert (reply.content, reply.reasoning_content) == ("Answer.", "the field")


async def test_thinking_field_is_captured() -> None:
    reply, _ = await complete([{"content": "ok", "reasoning": "x", "quirks": {"reasoning_fields": ["thinking"]}}],
                              spec=LOCAL_THINKING)
    assert reply.reasoning_content == "x"


@STREAM_MODES
async def test_deepseek_thinking_tool_turn_without_reasoning_still_carries_the_field(stream: bool) -> None:
    reply, _ = await complete([{"tool_calls": CALLS[:1]}], spec=DEEPSEEK, name="deepseek", key=PLANTED_KEY,
                              stream=stream)
    assert reply.assistant_message(carry_reasoning=True)["reasoning_content"] == ""
    local, _ = await complete([{"tool_calls": CALLS[:1]}], spec=LOCAL_THINKING, stream=stream)
    assert local.reasoning_content is None


async def test_deepseek_insufficient_balance_is_one_clear_line() -> None:
    body = {"error": {"message": "Insufficient Balance", "type": "unknown_error", "param": None, "code": "invalid_request_error"}}
    error, server = await failure([{"status": 402, "body": body, "repeat": True}], spec=DEEPSEEK, name="deepseek",
                                  key=PLANTED_KEY, retries=2)
    assert str(error) == (
        "The provider 'deepseek' answered HTTP 402 (payment required): Insufficient Balance. Check the account's balance."
    )
    assert len(server.chat_requests) == 1  # not retried


async def test_vllm_legacy_error_body_is_shown() -> None:
    message = '"auto" tool choice requires --enable-auto-tool-choice and --tool-call-parser to be set'
    body = {"object": "error", "message": message, "type": "BadRequestError", "param": None, "code": 400}
    error, _ = await failure([{"status": 400, "body": body}])
    assert str(error) == f"The provider 'local' refused the request with HTTP 400 (bad request): {message}."


async def test_ollama_missing_model_names_the_fix() -> None:
    body = {"error": {"message": 'model "qwen3" not found, try pulling it first', "type": "not_found_error"}}
    error, _ = await failure([{"status": 404, "body": body}])
    assert str(error).startswith("The provider 'local' answered HTTP 404 (not found): model \"qwen3\" not found")
    assert str(error).endswith("Check base_url and the model id.")


async def test_llama_cpp_loading_model_is_retried() -> None:
    loading = {"status": 503, "headers": {"retry-after-ms": "10"},
               "body": {"error": {"code": 503, "message": "Loading model", "type": "unavailable_error"}}}
    reply, server = await complete([loading, {"content": "loaded"}], retries=1)
    assert reply.content == "loaded" and len(server.chat_requests) == 2


@pytest.mark.parametrize("payload", [
    {"object": "error", "message": f"CUDA out of memory near {PLANTED_KEY}", "type": "InternalServerError", "code": 500},
    {"error": {"message": f"CUDA out of memory near {PLANTED_KEY}", "type": "server_error"}},
], ids=["vllm-legacy", "openai-shape"])
async def test_error_in_the_middle_of_a_stream_is_one_sanitized_line(payload: dict[str, Any]) -> None:
    script = [{"content": "Starting", "tool_calls": CALLS, "stream_error": payload}]
    error, _ = await failure(script, key=PLANTED_KEY, name="deepseek", spec=DEEPSEEK)
    text = str(error)
    assert not isinstance(error, MalformedReply)
    assert "CUDA out of memory" in text and "\n" not in text and PLANTED_KEY not in text
    assert error.__cause__ is None and error.__context__ is None


async def test_plain_body_that_is_an_error_object_is_a_model_error() -> None:
    body = {"object": "error", "message": "engine dead", "type": "InternalServerError", "code": 500}
    with ScriptedServer([{"status": 200, "body": body}]) as server:
        model = make_model(server, stream=False)
        with pytest.raises(ModelError, match="reported an error instead of a reply: engine dead"):
            await model.complete(USER, [], LOCAL)
        await model.aclose()
