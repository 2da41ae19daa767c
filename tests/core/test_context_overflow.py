"""Context-length refusals of each provider are recognised, with the numbers they state.

The table holds each provider's error body as it arrives (see the docstring of
k1412_ls/models/overflow.py); the adapter cases play them through the real
openai SDK against the scripted server.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from k1412_ls.core.model_port import ContextOverflow, ModelError
from k1412_ls.models.overflow import Overflow, context_overflow
from tests.support.model_kit import LOCAL, USER, make_model
from tests.support.scripted_server import ScriptedServer, refusal_body

LLAMA_CPP = {"error": {"code": 400, "type": "exceed_context_size_error", "n_prompt_tokens": 4476, "n_ctx": 4096,
                       "message": "request (4476 tokens) exceeds the available context size (4096 tokens), "
                                  "try increasing it"}}

REFUSALS: list[tuple[str, int, Any, Overflow]] = [
    ("openai, messages only", 400, {"error": {
        "message": "This model's maximum context length is 8192 tokens. However, your messages resulted in 8227 "
                   "tokens. Please reduce the length of the messages.",
        "type": "invalid_request_error", "param": "messages", "code": "context_length_exceeded"}},
     Overflow(8192, 8227, None)),
    ("openai, with the completion", 400, {"error": {
        "message": "This model's maximum context length is 4097 tokens. However, you requested 4118 tokens (3118 in "
                   "the messages, 1000 in the completion). Please reduce the length of the messages or completion.",
        "type": "invalid_request_error", "param": "messages", "code": "context_length_exceeded"}},
     Overflow(4097, 3118, 1000)),
    ("openai, newer wording", 400, {"error": {
        "message": "Your input exceeds the context window of this model. Please adjust your input and try again.",
        "type": "invalid_request_error", "param": "input", "code": "context_length_exceeded"}},
     Overflow(None, None, None)),
    ("deepseek", 400, {"error": {
        "message": "This model's maximum context length is 131072 tokens. However, you requested 131134 tokens "
                   "(122942 in the messages, 8192 in the completion). Please reduce the length of the messages or "
                   "completion.", "type": "invalid_request_error", "param": None, "code": "invalid_request_error"}},
     Overflow(131072, 122942, 8192)),
    ("llama.cpp", 400, LLAMA_CPP, Overflow(4096, 4476, None)),
    ("llama.cpp, older builds", 400, {"error": {
        "code": 400, "type": "invalid_request_error",
        "message": "the request exceeds the available context size, try increasing the context size or enable "
                   "context shift"}}, Overflow(None, None, None)),
    ("vllm", 400, {"error": {
        "message": "This model's maximum context length is 4096 tokens. However, your request has 4176 input "
                   "tokens. Please reduce the length of the input messages. None",
        "type": "BadRequestError", "param": None, "code": 400}}, Overflow(4096, 4176, None)),
    ("vllm, older object", 400, {"object": "error", "message": (
        "This model's maximum context length is 32768 tokens. However, you requested 33000 tokens (31000 in the "
        "messages, 2000 in the completion). Please reduce the length of the messages or completion."),
        "type": "BadRequestError", "param": None, "code": 400}, Overflow(32768, 31000, 2000)),
    ("vllm, output cap too large", 400, {"error": {
        "message": "'max_tokens' or 'max_completion_tokens' is too large: 8000. This model's maximum context length "
                   "is 4096 tokens and your request has 2778 input tokens (8000 > 4096 - 2778). None",
        "type": "BadRequestError", "param": None, "code": 400}}, Overflow(4096, 2778, 8000)),
    ("ollama, llama.cpp's error in a string", 400, {"error": json.dumps(LLAMA_CPP)}, Overflow(4096, 4476, None)),
    ("ollama, without shift", 400, {"error": "the prompt is longer than the context length currently available to "
                                              "the model; reduce it or raise num_ctx"}, Overflow(None, None, None)),
    ("ollama, embeddings", 500, {"error": "the input length exceeds the context length"}, Overflow(None, None, None)),
]

NOT_REFUSALS: list[tuple[str, int, Any]] = [
    ("rate limit", 429, {"error": {"message": "Rate limit reached for requests", "code": "rate_limit_exceeded"}}),
    ("vllm tool choice", 400, {"error": {"message": '"auto" tool choice requires --enable-auto-tool-choice and '
                                                    "--tool-call-parser to be set", "type": "BadRequestError"}}),
    ("bad key", 401, {"error": {"message": "Incorrect API key provided", "code": "invalid_api_key"}}),
    ("server error", 500, {"error": {"message": "CUDA out of memory"}}),
    ("context word elsewhere", 400, {"error": {"message": "Invalid 'messages[3].content': the context field is "
                                                           "not allowed here"}}),
]


@pytest.mark.parametrize(("status", "body", "expected"), [r[1:] for r in REFUSALS], ids=[r[0] for r in REFUSALS])
def test_each_providers_refusal_is_recognised_with_its_numbers(status: int, body: Any, expected: Overflow) -> None:
    inner = body.get("error", body) if isinstance(body, dict) else body
    message = inner.get("message", "") if isinstance(inner, dict) else str(inner)
    assert context_overflow(status, body, message) == expected


@pytest.mark.parametrize(("status", "body"), [r[1:] for r in NOT_REFUSALS], ids=[r[0] for r in NOT_REFUSALS])
def test_other_errors_are_not_refusals_for_length(status: int, body: Any) -> None:
    message = body["error"]["message"]
    assert context_overflow(status, body, message) is None


@pytest.mark.parametrize("stream", [True, False], ids=["stream", "plain"])
async def test_the_adapter_raises_context_overflow_with_the_stated_window(stream: bool) -> None:
    with ScriptedServer([{"status": 400, "body": refusal_body("openai", 40_000, 30_000)}]) as server:
        model = make_model(server, stream=stream)
        try:
            with pytest.raises(ContextOverflow) as caught:
                await model.complete(USER, [], LOCAL)
        finally:
            await model.aclose()
    error = caught.value
    assert (error.window_tokens, error.prompt_tokens) == (7_500, 10_000)
    assert str(error).startswith("The provider 'local' refused the request as longer than its context window")
    assert "\n" not in str(error)


async def test_llama_cpp_fields_reach_the_loop() -> None:
    with ScriptedServer([{"status": 400, "body": LLAMA_CPP}]) as server:
        model = make_model(server)
        try:
            with pytest.raises(ContextOverflow) as caught:
                await model.complete(USER, [], LOCAL)
        finally:
            await model.aclose()
    assert (caught.value.window_tokens, caught.value.prompt_tokens) == (4096, 4476)


async def test_an_error_object_mid_stream_saying_length_is_an_overflow() -> None:
    message = ("This model's maximum context length is 2048 tokens. However, your request has 3000 input tokens. "
               "Please reduce the length of the input messages.")
    with ScriptedServer([{"stream_error": {"error": {"message": message, "type": "BadRequestError"}}}]) as server:
        model = make_model(server, stream=True)
        try:
            with pytest.raises(ContextOverflow) as caught:
                await model.complete(USER, [], LOCAL)
        finally:
            await model.aclose()
    assert caught.value.window_tokens == 2048


async def test_other_400s_stay_plain_model_errors() -> None:
    with ScriptedServer([{"status": 400, "body": {"error": {"message": "Invalid value for 'tool_choice'"}}}]) as server:
        model = make_model(server)
        try:
            with pytest.raises(ModelError) as caught:
                await model.complete(USER, [], LOCAL)
        finally:
            await model.aclose()
    assert not isinstance(caught.value, ContextOverflow)
