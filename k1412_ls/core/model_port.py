"""The port between the loop and a chat model. Adapters live in ``k1412_ls.models``."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Protocol

from k1412_ls.config import ModelSpec

# Finish reasons that mean the reply was cut before it ended: such a final answer is never a completion.
CUT_FINISH_REASONS: frozenset[str] = frozenset({"length", "content_filter"})


@dataclass(frozen=True)
class ToolCall:
    """One tool call of a model reply; ``arguments`` is always a JSON object."""

    id: str
    name: str
    arguments: dict[str, Any]
    raw_arguments: str = ""


@dataclass
class Usage:
    """Tokens as the provider counted them.

    ``cached_tokens`` is the part of ``prompt_tokens`` served from the provider's prompt cache and
    ``reasoning_tokens`` the part of ``completion_tokens`` spent on hidden reasoning.
    """

    prompt_tokens: int = 0
    completion_tokens: int = 0
    reasoning_tokens: int = 0
    cached_tokens: int = 0

    def add(self, other: Usage) -> None:
        self.prompt_tokens += other.prompt_tokens
        self.completion_tokens += other.completion_tokens
        self.reasoning_tokens += other.reasoning_tokens
        self.cached_tokens += other.cached_tokens

    @property
    def total(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    def as_dict(self) -> dict[str, int]:
        return {
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "reasoning_tokens": self.reasoning_tokens,
            "cached_tokens": self.cached_tokens,
        }


@dataclass
class ModelReply:
    """A complete, dispatchable reply.

    ``reasoning_content`` is hidden reasoning: it is carried back to providers
    that require it on tool-call turns and is never published.
    """

    content: str
    tool_calls: list[ToolCall] = field(default_factory=list)
    finish_reason: str = "stop"
    usage: Usage = field(default_factory=Usage)
    reasoning_content: str | None = None

    def assistant_message(self, carry_reasoning: bool) -> dict[str, Any]:
        """The assistant message to append to the transcript for the next request."""
        message: dict[str, Any] = {"role": "assistant", "content": self.content or None}
        if self.tool_calls:
            message["tool_calls"] = [
                {"id": call.id, "type": "function",
                 "function": {"name": call.name, "arguments": call.raw_arguments or json.dumps(call.arguments, ensure_ascii=False)}}
                for call in self.tool_calls
            ]
        if carry_reasoning and self.reasoning_content is not None and self.tool_calls:
            message["reasoning_content"] = self.reasoning_content
        return message


class ModelError(Exception):
    """A failed model request, carrying one sanitized line (never headers, never keys).

    ``usage`` is what the provider reported for the failed reply (a reply refused as cut off or
    malformed still cost its tokens), None when it reported nothing.
    """

    def __init__(self, message: str, *, usage: Usage | None = None) -> None:
        super().__init__(message)
        self.usage = usage


class MalformedReply(ModelError):
    """The reply cannot be dispatched: cut off, or tool arguments that are not a JSON object."""


class ContextOverflow(ModelError):
    """The provider refused the request as longer than its context window.

    The token counts are what the provider stated (None when it did not say):
    ``window_tokens`` its real window, ``prompt_tokens`` what the refused
    request's messages came to, ``completion_tokens`` the output reservation it
    counted against the window.
    """

    def __init__(self, message: str, *, window_tokens: int | None = None, prompt_tokens: int | None = None,
                 completion_tokens: int | None = None, usage: Usage | None = None) -> None:
        super().__init__(message, usage=usage)
        self.window_tokens = window_tokens
        self.prompt_tokens = prompt_tokens
        self.completion_tokens = completion_tokens


class ChatModel(Protocol):
    """What the loop needs from a model."""

    async def complete(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]], spec: ModelSpec) -> ModelReply:
        ...

    @property
    def carries_reasoning(self) -> bool:
        """True when the provider requires ``reasoning_content`` back on tool-call turns."""
        ...

