"""Assemble and validate a model reply before anything is dispatched.

Pure code over duck-typed SDK objects (no ``openai`` import): the adapter in
:mod:`k1412_ls.models.openai_chat` feeds it either streamed chunks or one
plain completion. The rule it enforces (security notes: a stream cut off mid
tool call ends with no exception): a reply is dispatchable only when it has
a ``finish_reason`` and every tool call has a name and arguments that parse
as a JSON object. Anything else raises :class:`MalformedReply`, and no tool
call of that reply is returned.

What it tolerates, because servers document or ship it:

* ``finish_reason`` "stop" (older Ollama and llama.cpp builds) or any other
  non-empty value next to complete tool calls: the calls decide, not the
  label. "length" keeps calls that are complete (a name, arguments that
  parse as one JSON object) and refuses a reply whose last call was cut;
  "content_filter" refuses them all. A refused reply still carries its usage.
* Tool calls streamed OpenAI's way (``index``; ``id``, ``type`` and name in
  the first delta; arguments in pieces), or each call whole in one chunk
  (Ollama), several whole calls in one chunk, deltas without ``index``, and
  proxies that put every call at index 0 with distinct ids.
* Arguments sent as a JSON object instead of a JSON string; an empty
  string means ``{}``.
* Missing, empty or repeated ids (within a reply, or across the replies of
  one model instance): fresh unique ones (9 alphanumerics, the form Mistral
  chat templates demand).
* No usage at all (servers that ignore ``stream_options``), usage in every
  chunk (the last one counts), usage in the finish chunk.
* Reasoning under ``reasoning_content`` (DeepSeek, llama.cpp, older vLLM),
  ``reasoning`` (Ollama, newer vLLM) or ``thinking``, or as a leading
  ``<think>...</think>`` block of the content (llama.cpp
  ``--reasoning-format none``/``deepseek-legacy``, vLLM without a reasoning
  parser): it is moved out of the content so it is never published.
"""

from __future__ import annotations

import json
import re
import secrets
import string
from dataclasses import dataclass, field
from typing import Any

from k1412_ls.core.model_port import CUT_FINISH_REASONS, MalformedReply, ModelReply, ToolCall, Usage

# Field names under which providers send hidden reasoning: DeepSeek and
# llama.cpp use ``reasoning_content``; Ollama and newer vLLM ``reasoning``.
REASONING_FIELDS = ("reasoning_content", "reasoning", "thinking")

# Finish reasons that mean the reply was cut: tool calls of such a reply are never run.
TRUNCATED_FINISH_REASONS = CUT_FINISH_REASONS

_THINK_OPEN = "<think>"
_THINK_CLOSE = "</think>"
_ID_ALPHABET = string.ascii_letters + string.digits


def _extra(obj: Any, name: str) -> Any:
    """A field the SDK's models do not declare (they keep unknown fields as extras)."""
    value = getattr(obj, name, None)
    if value is None:
        extras = getattr(obj, "model_extra", None) or {}
        value = extras.get(name)
    return value


def reasoning_of(obj: Any) -> str | None:
    """The hidden reasoning text carried by a message or delta, if any (first field that has some)."""
    for name in REASONING_FIELDS:
        value = _extra(obj, name)
        if isinstance(value, str) and value:
            return value
    return None


def split_think(content: str) -> tuple[str, str | None]:
    """Move a leading ``<think>...</think>`` block out of ``content``: ``(content, reasoning)``.

    Only a block at the very start counts (a model may write the tag in an
    answer); an unclosed one means the whole content is reasoning.
    """
    stripped = content.lstrip()
    if not stripped.startswith(_THINK_OPEN):
        return content, None
    inner = stripped[len(_THINK_OPEN):]
    end = inner.find(_THINK_CLOSE)
    if end < 0:
        return "", inner.strip() or None
    return inner[end + len(_THINK_CLOSE):].lstrip(), inner[:end].strip() or None


def _as_int(value: Any) -> int:
    try:
        return int(value or 0)
    except (TypeError, ValueError):
        return 0


def _detail(raw: Any, group: str, name: str) -> Any:
    details = _extra(raw, group)
    if isinstance(details, dict):
        return details.get(name)
    return getattr(details, name, None) if details is not None else None


def usage_of(raw: Any) -> Usage:
    """Token usage with its cached and reasoning parts, from each provider's documented fields.

    Reasoning: ``completion_tokens_details.reasoning_tokens`` (OpenAI; DeepSeek too). Cached prompt
    tokens: DeepSeek's ``prompt_cache_hit_tokens`` (what it bills at the cache-hit price), else
    OpenAI's ``prompt_tokens_details.cached_tokens`` (also sent by vLLM and llama.cpp).
    """
    if raw is None:
        return Usage()
    prompt = _as_int(getattr(raw, "prompt_tokens", 0))
    hit = _extra(raw, "prompt_cache_hit_tokens")
    cached = _as_int(hit if hit is not None else _detail(raw, "prompt_tokens_details", "cached_tokens"))
    return Usage(
        prompt_tokens=prompt,
        completion_tokens=_as_int(getattr(raw, "completion_tokens", 0)),
        reasoning_tokens=_as_int(_detail(raw, "completion_tokens_details", "reasoning_tokens")),
        cached_tokens=min(cached, prompt) if prompt else cached,
    )


def stream_error_of(obj: Any) -> str | None:
    """The provider's message when a chunk or body is an error object rather than a reply.

    vLLM before 0.10.1 sends ``{"object": "error", "message": ...}`` (mid-stream
    too); others ``{"error": {"message": ...}}`` where a chunk should be.
    """
    if getattr(obj, "choices", None):
        return None
    if getattr(obj, "object", None) == "error" or _extra(obj, "object") == "error":
        message = _extra(obj, "message")
        return message if isinstance(message, str) and message else "unspecified error"
    error = _extra(obj, "error")
    if isinstance(error, dict):
        message = error.get("message")
        return message if isinstance(message, str) and message else "unspecified error"
    if isinstance(error, str) and error:
        return error
    return None


def arguments_text(value: Any) -> str:
    """Tool-call arguments as text: a string as sent, anything else (an object) JSON-encoded."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    try:
        return json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        return repr(value)  # not JSON: refused by parse_arguments


def new_call_id() -> str:
    """A fresh tool-call id: 9 alphanumerics, unique in practice across a conversation."""
    return "".join(secrets.choice(_ID_ALPHABET) for _ in range(9))


@dataclass
class _PartialCall:
    id: str = ""
    name: str = ""
    arguments: list[str] = field(default_factory=list)

    def has_object_arguments(self) -> bool:
        """True once the arguments so far parse as a complete JSON object."""
        try:
            return isinstance(json.loads("".join(self.arguments)), dict)
        except (json.JSONDecodeError, RecursionError):
            return False


def parse_arguments(name: str, call_id: str, raw: str) -> dict[str, Any]:
    """Parse tool-call arguments; an empty string means ``{}``; anything but an object is refused."""
    if not raw.strip():
        return {}
    try:
        value = json.loads(raw)
    except (json.JSONDecodeError, RecursionError):
        value = None
    if not isinstance(value, dict):
        raise MalformedReply(
            f"Tool call {name or '?'} ({call_id or 'no id'}) had arguments that are not a JSON object; nothing was run."
        )
    return value


def _complete_call(name: str, raw: str) -> bool:
    """Whether a tool call stands on its own: a name and arguments that parse as one JSON object.

    A reply cut by the output limit after such calls keeps them: the cut fell after them (llama.cpp
    reports ``length`` when the cap lands right after a call's closing tag).
    """
    if not name:
        return False
    try:
        return isinstance(json.loads(raw), dict) if raw.strip() else False
    except (json.JSONDecodeError, RecursionError):
        return False


def build_reply(
    content: str,
    partial_calls: list[tuple[str, str, str]],
    finish_reason: str | None,
    usage: Usage,
    reasoning: str | None,
    seen_ids: set[str] | None = None,
) -> ModelReply:
    """Validate the assembled parts and return a dispatchable reply, or raise MalformedReply.

    ``seen_ids`` holds the tool-call ids of earlier replies of the same conversation: an id
    seen before is replaced too (servers that number calls per reply), and new ones are added.
    """
    if not finish_reason:
        raise MalformedReply(
            "The model's reply was cut off before it finished (no finish_reason); nothing was run.", usage=usage
        )
    if partial_calls and finish_reason == "content_filter":
        raise MalformedReply(
            "The model's reply was cut by the provider's content filter in the middle of tool calls "
            "(finish_reason content_filter); nothing was run.", usage=usage
        )
    if partial_calls and finish_reason == "length" and not all(_complete_call(name, raw) for _, name, raw in partial_calls):
        raise MalformedReply(
            "The model's reply was cut by the output limit (max_output_tokens) in the middle of tool calls "
            "(finish_reason length); nothing was run.", usage=usage
        )
    content, inline_reasoning = split_think(content)
    calls: list[ToolCall] = []
    seen: set[str] = seen_ids if seen_ids is not None else set()
    for position, (call_id, name, raw) in enumerate(partial_calls, start=1):
        if not name:
            raise MalformedReply(f"Tool call #{position} of the model's reply had no tool name; nothing was run.",
                                 usage=usage)
        try:
            arguments = parse_arguments(name, call_id, raw)
        except MalformedReply as exc:
            exc.usage = usage
            raise
        # Some local servers omit ids, send "" or repeat them; every tool result needs its own id.
        unique = call_id
        while not unique or unique in seen:
            unique = new_call_id()
        seen.add(unique)
        calls.append(ToolCall(id=unique, name=name, arguments=arguments, raw_arguments=raw))
    return ModelReply(
        content=content,
        tool_calls=calls,
        finish_reason=finish_reason,
        usage=usage,
        reasoning_content=reasoning or inline_reasoning,
    )


class StreamAssembler:
    """Collects streamed chunks: content pieces, reasoning pieces, tool-call deltas by index."""

    def __init__(self) -> None:
        self._content: list[str] = []
        self._reasoning: list[str] = []
        self._calls: list[_PartialCall] = []
        self._open: dict[int, int] = {}  # wire index -> position in self._calls of the call open there
        self._finish_reason: str | None = None
        self._usage = Usage()

    @property
    def usage(self) -> Usage:
        """The usage the stream reported so far (what a reply that then fails still cost)."""
        return self._usage

    def add(self, chunk: Any) -> None:
        """Fold one ``chat.completion.chunk`` into the reply."""
        if getattr(chunk, "usage", None) is not None:
            self._usage = usage_of(chunk.usage)
        for choice in getattr(chunk, "choices", None) or []:
            if getattr(choice, "index", 0) not in (0, None):
                continue  # we ask for one choice; ignore stray extra choices
            delta = getattr(choice, "delta", None)
            if delta is not None:
                self._add_delta(delta)
            if getattr(choice, "finish_reason", None):
                self._finish_reason = choice.finish_reason

    def _add_delta(self, delta: Any) -> None:
        content = getattr(delta, "content", None)
        if isinstance(content, str) and content:
            self._content.append(content)
        reasoning = reasoning_of(delta)
        if reasoning:
            self._reasoning.append(reasoning)
        for tool_delta in getattr(delta, "tool_calls", None) or []:
            self._add_tool_delta(tool_delta)

    def _new_call(self, index: int) -> _PartialCall:
        partial = _PartialCall()
        self._calls.append(partial)
        self._open[index] = len(self._calls) - 1
        return partial

    def _target(self, index: Any, call_id: str, name: str) -> _PartialCall:
        """The partial call a delta continues, or a new one."""
        if not isinstance(index, int):
            # No index: a new id starts a new call; so does a name arriving after a complete call
            # (servers that send whole calls back to back); anything else continues the last call.
            last = self._calls[-1] if self._calls else None
            if last is None or (call_id and last.id and call_id != last.id) or (
                name and last.name and not call_id and last.has_object_arguments()
            ):
                return self._new_call(-len(self._calls) - 1)
            return last
        position = self._open.get(index)
        if position is None:
            return self._new_call(index)
        partial = self._calls[position]
        if call_id and partial.id and call_id != partial.id:
            return self._new_call(index)  # proxies that put every call at index 0, each with its own id
        return partial

    def _add_tool_delta(self, tool_delta: Any) -> None:
        call_id = getattr(tool_delta, "id", None) or ""
        function = getattr(tool_delta, "function", None)
        name = (getattr(function, "name", None) or "") if function is not None else ""
        partial = self._target(getattr(tool_delta, "index", None), call_id, name)
        if call_id and not partial.id:
            partial.id = call_id
        # OpenAI sends the name once; a few servers repeat it in every delta.
        if name and name != partial.name:
            partial.name = name if not partial.name else partial.name + name
        if function is not None:
            pieces = arguments_text(getattr(function, "arguments", None))
            if pieces:
                partial.arguments.append(pieces)

    def reply(self, seen_ids: set[str] | None = None) -> ModelReply:
        """The validated reply (raises MalformedReply if the stream was cut off or is invalid)."""
        calls = [(c.id, c.name, "".join(c.arguments)) for c in self._calls]
        reasoning = "".join(self._reasoning) or None
        return build_reply("".join(self._content), calls, self._finish_reason, self._usage, reasoning, seen_ids)


# -- replies that are no chat completion at all -----------------------------------------------

NOT_A_COMPLETION = "answered with something that is not a chat completion"
_TITLE = re.compile(r"<title[^>]*>(.*?)</title>", re.IGNORECASE | re.DOTALL)
_TAG = re.compile(r"<[^>]*>")
_HTML_START = re.compile(r"\s*(<!doctype html|<html|<head|<body|<!--|<\?xml)", re.IGNORECASE)
_SNIPPET_CHARS = 80


def _snippet(text: str) -> str:
    line = " ".join(text.split())
    return line if len(line) <= _SNIPPET_CHARS else line[:_SNIPPET_CHARS] + "…"


def describe_text(text: str, content_type: str = "") -> str:
    """What a body that is not JSON looks like: an HTML page (with its title), text, or nothing."""
    if not text.strip():
        return "an empty body"
    if "\ufffd" in text or any(ord(ch) < 32 and ch not in "\t\r\n" for ch in text[:4096]):
        return f"binary data ({content_type or 'no content type'})"
    if _HTML_START.match(text) or "html" in content_type.lower():
        title = _TITLE.search(text)
        shown = _snippet(_TAG.sub(" ", title.group(1) if title else text))
        return f"an HTML page ('{shown}')" if shown else "an HTML page"
    return f"text that is not JSON ('{_snippet(text)}')"


def describe_invalid_json(doc: str, content_type: str = "") -> str:
    """What a body that claimed to be JSON but does not parse looks like."""
    if not doc.strip() or _HTML_START.match(doc) or "html" in content_type.lower():
        return describe_text(doc, content_type)
    return f"invalid JSON ('{_snippet(doc)}')"


def describe_json(data: Any) -> str | None:
    """What parsed JSON is, when it is no chat completion (a non-empty ``choices`` list); else None."""
    if not isinstance(data, dict):
        return f"JSON that is not an object (a {type(data).__name__})"
    choices = data.get("choices")
    if choices is None:
        return "a JSON object without choices"
    if not isinstance(choices, list):
        return "a JSON object whose choices are not a list"
    if not choices:
        return "a JSON object whose choices are empty"
    return None


def describe_non_completion(obj: Any) -> str | None:
    """What a plain reply the SDK parsed is, when it is no chat completion; None when it is one.

    The SDK hands a body that is not JSON over as text, and JSON of any shape as-is or as a
    ``ChatCompletion`` built without validation (so ``choices`` may be missing or empty).
    """
    if isinstance(obj, str):
        return describe_text(obj)
    if obj is None:
        return "an empty body"
    if isinstance(obj, list | int | float | bool):
        return f"JSON that is not an object (a {type(obj).__name__})"
    choices = getattr(obj, "choices", None)
    if choices is None:
        return "a JSON object without choices"
    if not choices:
        return "a JSON object whose choices are empty"
    return None


def is_completion_chunk(chunk: Any) -> bool:
    """Whether a streamed event is a chat completion chunk (the usage-only chunk has ``choices: []``)."""
    return isinstance(getattr(chunk, "choices", None), list) or getattr(chunk, "object", None) == "chat.completion.chunk"


def json_cut_off(doc: str, pos: int, msg: str) -> bool:
    """Whether JSON that failed to parse at ``pos`` looks truncated rather than foreign.

    Truncated JSON fails at its end, inside a string that never closes, or in the middle of a
    literal or number; foreign text (HTML, ``{not json}``) fails before its end.
    """
    if not doc.strip():
        return False
    rest = doc[pos:].strip()
    if not rest or msg.startswith("Unterminated string"):
        return True
    if msg.startswith("Expecting value") and any(word.startswith(rest) for word in ("true", "false", "null")):
        return True
    return re.fullmatch(r"-?[0-9]*\.?[0-9]*(?:[eE][+-]?[0-9]*)?", rest) is not None


def reply_from_completion(completion: Any, seen_ids: set[str] | None = None) -> ModelReply:
    """Validate a plain (non-streamed) ``chat.completion``."""
    choices = getattr(completion, "choices", None) or []
    if not choices:
        raise MalformedReply("The model's reply had no choices; nothing was run.")
    choice = choices[0]
    message = getattr(choice, "message", None)
    calls: list[tuple[str, str, str]] = []
    for call in getattr(message, "tool_calls", None) or []:
        function = getattr(call, "function", None)
        calls.append(
            (
                getattr(call, "id", None) or "",
                getattr(function, "name", None) or "",
                arguments_text(getattr(function, "arguments", None)),
            )
        )
    content = getattr(message, "content", None)
    reasoning = reasoning_of(message) if message is not None else None
    return build_reply(
        content if isinstance(content, str) else "",
        calls,
        getattr(choice, "finish_reason", None),
        usage_of(getattr(completion, "usage", None)),
        reasoning,
        seen_ids,
    )
