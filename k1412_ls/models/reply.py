"""Assemble and validate a model reply before anything is dispatched.

Pure code over duck-typed SDK objects (no ``openai`` import): the adapter in
:mod:`k1412_ls.models.openai_chat` feeds it either streamed chunks or one
plain completion. The rule it enforces (security notes: a stream cut off mid
tool call ends with no exception): a reply is dispatchable only when it has
a ``finish_reason`` and every tool call has a name and arguments that parse
as a JSON object. Anything else raises :class:`MalformedReply`, and no tool
call of that reply is returned.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from k1412_ls.core.model_port import MalformedReply, ModelReply, ToolCall, Usage

# Field names under which providers send hidden reasoning: DeepSeek and
# llama.cpp use ``reasoning_content``; Ollama, newer vLLM and others ``reasoning``.
REASONING_FIELDS = ("reasoning_content", "reasoning")


def _extra(obj: Any, name: str) -> Any:
    """A field the SDK's models do not declare (they keep unknown fields as extras)."""
    value = getattr(obj, name, None)
    if value is None:
        extras = getattr(obj, "model_extra", None) or {}
        value = extras.get(name)
    return value


def reasoning_of(obj: Any) -> str | None:
    """The hidden reasoning text carried by a message or delta, if any."""
    for name in REASONING_FIELDS:
        value = _extra(obj, name)
        if isinstance(value, str) and value:
            return value
    return None


def usage_of(raw: Any) -> Usage:
    """Token usage, including ``completion_tokens_details.reasoning_tokens`` when present."""
    if raw is None:
        return Usage()
    details = getattr(raw, "completion_tokens_details", None)
    reasoning = getattr(details, "reasoning_tokens", None) if details is not None else None
    return Usage(
        prompt_tokens=int(getattr(raw, "prompt_tokens", 0) or 0),
        completion_tokens=int(getattr(raw, "completion_tokens", 0) or 0),
        reasoning_tokens=int(reasoning or 0),
    )


@dataclass
class _PartialCall:
    id: str = ""
    name: str = ""
    arguments: list[str] = field(default_factory=list)


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
            f"Tool call {name or '?'} ({call_id}) had arguments that are not a JSON object; nothing was run."
        )
    return value


def build_reply(
    content: str,
    partial_calls: list[tuple[str, str, str]],
    finish_reason: str | None,
    usage: Usage,
    reasoning: str | None,
) -> ModelReply:
    """Validate the assembled parts and return a dispatchable reply, or raise MalformedReply."""
    if not finish_reason:
        raise MalformedReply(
            "The model's reply was cut off before it finished (no finish_reason); nothing was run."
        )
    calls: list[ToolCall] = []
    seen: set[str] = set()
    for position, (call_id, name, raw) in enumerate(partial_calls, start=1):
        if not name:
            raise MalformedReply(f"Tool call #{position} of the model's reply had no tool name; nothing was run.")
        # Some local servers omit ids or repeat them; every tool result needs its own id.
        unique = call_id or f"call_{position}"
        while unique in seen:
            unique = f"{unique}_{position}"
        seen.add(unique)
        calls.append(ToolCall(id=unique, name=name, arguments=parse_arguments(name, unique, raw), raw_arguments=raw))
    return ModelReply(
        content=content,
        tool_calls=calls,
        finish_reason=finish_reason,
        usage=usage,
        reasoning_content=reasoning,
    )


class StreamAssembler:
    """Collects streamed chunks: content pieces, reasoning pieces, tool-call deltas by index."""

    def __init__(self) -> None:
        self._content: list[str] = []
        self._reasoning: list[str] = []
        self._calls: dict[int, _PartialCall] = {}
        self._order: list[int] = []
        self._finish_reason: str | None = None
        self._usage = Usage()

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
        if getattr(delta, "content", None):
            self._content.append(delta.content)
        reasoning = reasoning_of(delta)
        if reasoning:
            self._reasoning.append(reasoning)
        for tool_delta in getattr(delta, "tool_calls", None) or []:
            self._add_tool_delta(tool_delta)

    def _add_tool_delta(self, tool_delta: Any) -> None:
        index = getattr(tool_delta, "index", None)
        call_id = getattr(tool_delta, "id", None) or ""
        if index is None:
            # Providers without indexes: a new id starts a new call, otherwise continue the last one.
            index = (max(self._order) + 1 if self._order else 0) if call_id or not self._order else self._order[-1]
        partial = self._calls.get(index)
        if partial is None:
            partial = self._calls[index] = _PartialCall()
            self._order.append(index)
        if call_id and not partial.id:
            partial.id = call_id
        function = getattr(tool_delta, "function", None)
        if function is None:
            return
        name = getattr(function, "name", None)
        # OpenAI sends the name once; a few servers repeat it in every delta.
        if name and name != partial.name:
            partial.name = name if not partial.name else partial.name + name
        if getattr(function, "arguments", None):
            partial.arguments.append(function.arguments)

    def reply(self) -> ModelReply:
        """The validated reply (raises MalformedReply if the stream was cut off or is invalid)."""
        calls = [(self._calls[i].id, self._calls[i].name, "".join(self._calls[i].arguments)) for i in self._order]
        reasoning = "".join(self._reasoning) or None
        return build_reply("".join(self._content), calls, self._finish_reason, self._usage, reasoning)


def reply_from_completion(completion: Any) -> ModelReply:
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
                getattr(function, "arguments", None) or "",
            )
        )
    content = getattr(message, "content", None) or ""
    reasoning = reasoning_of(message) if message is not None else None
    return build_reply(content, calls, getattr(choice, "finish_reason", None), usage_of(getattr(completion, "usage", None)), reasoning)
