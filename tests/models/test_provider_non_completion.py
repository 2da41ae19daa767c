"""A 200 reply that is not a chat completion is named as such, never as a reply "cut off".

Wrong base_urls, captive portals and proxies answer with HTML pages, plain text, invalid or
unrelated JSON, or a completion without choices; the adapter used to report all of these as
"the reply was cut off (no finish_reason)". A reply that really was cut keeps that sentence.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from k1412_ls.core.model_port import MalformedReply
from tests.support.model_kit import STREAM_MODES, failure

NOT_A_COMPLETION = "answered with something that is not a chat completion"

HTML = ("<!DOCTYPE html><html><head><title>502 Bad Gateway</title></head>"
        "<body><h1>502 Bad Gateway</h1><p>nginx</p></body></html>")


def _raw(body: str | bytes, content_type: str = "application/json") -> dict[str, Any]:
    return {"raw": list(body) if isinstance(body, bytes) else body, "content_type": content_type}


CASES = {
    "html page": (_raw(HTML, "text/html; charset=utf-8"), "HTML page"),
    "html sent as json": (_raw(HTML), "HTML page"),
    "invalid json": (_raw("{not json at all}"), "invalid JSON"),
    "empty body": (_raw(""), "empty"),
    "plain text": (_raw("Service temporarily unavailable", "text/plain"), "text"),
    "empty choices": (_raw(json.dumps({"id": "x", "object": "chat.completion", "choices": []})), "choices"),
    "unrelated object": (_raw(json.dumps({"status": "ok", "models": []})), "choices"),
    "json array": (_raw(json.dumps([1, 2, 3])), "JSON"),
    "json string": (_raw(json.dumps("hello")), "JSON"),
    "binary": (_raw(bytes(range(256)), "application/octet-stream"), ""),
}


@STREAM_MODES
@pytest.mark.parametrize("case", list(CASES))
async def test_a_reply_that_is_not_a_chat_completion_is_named(case: str, stream: bool) -> None:
    step, what = CASES[case]
    if stream and "json" in step["content_type"]:
        what = "application/json response without chat completion chunks"  # the SDK reads it as events
    error, server = await failure([step], stream=stream)
    message = str(error)
    assert NOT_A_COMPLETION in message, message
    assert what in message, message
    assert "cut off" not in message and "finish_reason" not in message
    assert "nothing was run" in message and "\n" not in message and len(message) < 400
    assert len(server.chat_requests) == 1  # a configuration problem: not retried


@STREAM_MODES
async def test_the_provider_page_never_leaks_a_key_into_the_message(stream: bool) -> None:
    key = "sk-proj-AbC_dEf-0123456789_ghIJklMNop-qrstUVwx"
    page = f"<html><head><title>Login {key}</title></head><body>{key}</body></html>"
    error, _ = await failure([_raw(page, "text/html")], stream=stream, name="openai", key=key)
    assert key not in str(error) and NOT_A_COMPLETION in str(error)


async def test_an_event_stream_of_unrelated_events_is_named() -> None:
    body = 'data: {"type": "ping"}\n\ndata: {"hello": "world"}\n\ndata: [DONE]\n\n'
    error, _ = await failure([_raw(body, "text/event-stream")], stream=True)
    assert NOT_A_COMPLETION in str(error) and "finish_reason" not in str(error)


async def test_an_event_stream_whose_data_is_not_json_is_named() -> None:
    for data, what in (("<html>oops</html>", "an HTML page ('oops')"), ("{oops}", "invalid JSON ('{oops}')")):
        body = f"data: {data}\n\ndata: [DONE]\n\n"
        error, _ = await failure([_raw(body, "text/event-stream")], stream=True)
        assert f"{NOT_A_COMPLETION}: an event stream whose data is {what}" in str(error)


@STREAM_MODES
async def test_a_reply_really_cut_off_is_still_called_cut_off(stream: bool) -> None:
    # A guard for the distinction, not a reproduction: this already held before.
    error, _ = await failure([{"cut": "mid_tool_call"}], stream=stream)
    assert isinstance(error, MalformedReply) and "cut off" in str(error)
    assert NOT_A_COMPLETION not in str(error)


@pytest.mark.parametrize("tail", ['{"id": "x", "choices": [{"index": 0, "finish_reason": nu',
                                  '{"id": "x", "choices": [{"index": 0, "finish_reason": "sto',
                                  '{"id": "x", "choices": [{"index": 0, ',
                                  '{"id": "x", "created": 17'])
async def test_truncated_plain_bodies_are_cut_off_not_foreign(tail: str) -> None:
    # A guard for the distinction, not a reproduction: this already held before.
    error, _ = await failure([_raw(tail)], stream=False)
    assert isinstance(error, MalformedReply) and "cut off" in str(error), str(error)
