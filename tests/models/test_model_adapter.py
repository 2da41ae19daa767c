"""The model adapter: the real openai SDK against the scripted OpenAI-compatible server."""

from __future__ import annotations

import socket
import time

import pytest

from k1412_ls.config import ConfigError, ModelSpec, ProviderSpec, build_config
from k1412_ls.core.model_port import MalformedReply, ModelError
from k1412_ls.models import OpenAIChatModel, build_chat_model
from tests.support.model_kit import (
    DEEPSEEK,
    LOCAL,
    LOCAL_THINKING,
    PLANTED_KEY,
    STREAM_MODES,
    USER,
    WRITE_TOOL,
    complete,
    failure,
    make_model,
)
from tests.support.scripted_server import ScriptedServer

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
    assert reply.usage.as_dict() == {"prompt_tokens": 42, "completion_tokens": 7, "reasoning_tokens": 0,
                                     "cached_tokens": 0}
    assert server.chat_requests[0]["body"].get("stream", False) is stream


@STREAM_MODES
@pytest.mark.parametrize("field", ["cached_tokens", "prompt_cache_hit_tokens"], ids=["openai", "deepseek"])
async def test_cached_prompt_tokens_are_read_from_each_providers_field(stream: bool, field: str) -> None:
    usage = {"prompt_tokens": 1000, "completion_tokens": 50, "reasoning_tokens": 20, field: 800}
    reply, _ = await complete([{"content": "ok", "usage": usage}], stream=stream)
    assert reply.usage.as_dict() == {"prompt_tokens": 1000, "completion_tokens": 50, "reasoning_tokens": 20,
                                     "cached_tokens": 800}


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
    assert reply.usage.as_dict() == {"prompt_tokens": 100, "completion_tokens": 60, "reasoning_tokens": 45,
                                     "cached_tokens": 0}


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
