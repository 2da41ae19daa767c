"""Provider wire shapes and quirks, emulated from each provider's documentation, through the real SDK."""

from __future__ import annotations

import json
import urllib.request
from typing import Any

import pytest

from k1412_ls.core.model_port import MalformedReply, ModelError
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
    expected = {"prompt_tokens": 0, "completion_tokens": 0, "reasoning_tokens": 0, "cached_tokens": 0} \
        if usage == "none" else {"prompt_tokens": 30, "completion_tokens": 4, "reasoning_tokens": 2, "cached_tokens": 0}
    assert reply.usage.as_dict() == expected


async def test_plain_reply_without_usage_is_accepted() -> None:
    reply, _ = await complete([{"content": "ok", "quirks": {"usage": "none"}}], stream=False)
    assert reply.content == "ok" and reply.usage.as_dict()["prompt_tokens"] == 0


async def test_finish_chunk_with_null_delta_is_accepted() -> None:
    reply, _ = await complete([{"tool_calls": CALLS[:1], "quirks": {"finish": "null_delta"}}])
    assert reply.finish_reason == "tool_calls" and reply.tool_calls[0].name == "read_file"


@STREAM_MODES
async def test_tool_calls_of_a_content_filtered_reply_are_refused_with_their_usage(stream: bool) -> None:
    usage = {"prompt_tokens": 40, "completion_tokens": 9}
    error, _ = await failure([{"tool_calls": CALLS, "finish_reason": "content_filter", "usage": usage}], stream=stream)
    assert isinstance(error, MalformedReply)
    assert "finish_reason content_filter" in str(error) and "nothing was run" in str(error)
    assert error.usage is not None and error.usage.total == 49


@STREAM_MODES
async def test_complete_tool_calls_cut_by_the_output_limit_are_kept(stream: bool) -> None:
    # llama.cpp says "length" when the cap lands right after a call's closing tag: the calls are whole.
    reply, _ = await complete([{"tool_calls": CALLS, "finish_reason": "length"}], stream=stream)
    assert reply.finish_reason == "length"
    assert [call.name for call in reply.tool_calls] == ["read_file", "write_file"]


@STREAM_MODES
async def test_a_tool_call_cut_by_the_output_limit_is_refused_with_its_usage(stream: bool) -> None:
    cut = [CALLS[0], {"name": "write_file", "arguments": '{"path": "b.txt", "content": "x ='}]
    usage = {"prompt_tokens": 130, "completion_tokens": 131}
    error, _ = await failure([{"tool_calls": cut, "finish_reason": "length", "usage": usage}], stream=stream)
    assert isinstance(error, MalformedReply) and "finish_reason length" in str(error)
    assert error.usage is not None and error.usage.as_dict()["completion_tokens"] == 131


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
