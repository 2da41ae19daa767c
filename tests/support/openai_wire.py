"""OpenAI chat-completions wire shapes for the scripted server: reply messages, tool calls, usage.

Kept apart from the HTTP plumbing in :mod:`tests.support.scripted_server`.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

MODEL_ID = "scripted-model"
_PIECES = 3  # how many deltas a streamed string is split into, like real providers do


def split_text(text: str, pieces: int = _PIECES) -> list[str]:
    """Split ``text`` into up to ``pieces`` non-empty consecutive parts."""
    if not text:
        return []
    size = max(1, -(-len(text) // pieces))
    return [text[i : i + size] for i in range(0, len(text), size)]


def encode_arguments(arguments: Any) -> str:
    if isinstance(arguments, str):
        return arguments
    return json.dumps(arguments if arguments is not None else {}, ensure_ascii=False)


class Headers(dict[str, str]):
    """Recorded request headers; names compare case-insensitively, as in HTTP."""

    def _name(self, name: object) -> object:
        if isinstance(name, str):
            for key in self.keys():
                if key.lower() == name.lower():
                    return key
        return name

    def __getitem__(self, name: str) -> str:
        return super().__getitem__(self._name(name))  # type: ignore[arg-type]

    def __contains__(self, name: object) -> bool:
        return super().__contains__(self._name(name))

    def get(self, name: str, default: Any = None) -> Any:  # type: ignore[override]
        return super().get(self._name(name), default)  # type: ignore[arg-type]


class Reply:
    """The normalized answer of one script step (``quirks`` shape how it goes on the wire)."""

    def __init__(self, step: dict[str, Any], call_counter: Iterator[int]) -> None:
        self.content: str | None = step.get("content")
        self.reasoning_field = "reasoning" if "reasoning" in step else "reasoning_content"
        self.reasoning: str | None = step.get("reasoning", step.get("reasoning_content"))
        self.quirks: dict[str, Any] = dict(step.get("quirks") or {})
        self.stream_error: Any = step.get("stream_error")
        self.tool_calls: list[dict[str, str]] = []
        for call in step.get("tool_calls") or []:
            self.tool_calls.append(
                {
                    "id": call.get("id") or f"call_{next(call_counter)}",
                    "name": call["name"],
                    "arguments": encode_arguments(call.get("arguments", {})),
                }
            )
        default_finish = "tool_calls" if self.tool_calls else "stop"
        self.finish_reason: str = step.get("finish_reason", default_finish)
        usage = step.get("usage") or {}
        self.usage = {
            "prompt_tokens": int(usage.get("prompt_tokens", 10)),
            "completion_tokens": int(usage.get("completion_tokens", 5)),
            "total_tokens": int(usage.get("prompt_tokens", 10)) + int(usage.get("completion_tokens", 5)),
            "completion_tokens_details": {"reasoning_tokens": int(usage.get("reasoning_tokens", 0))},
        }
        # Cached prompt tokens as OpenAI reports them, or as DeepSeek does (hit and miss counts).
        if "cached_tokens" in usage:
            self.usage["prompt_tokens_details"] = {"cached_tokens": int(usage["cached_tokens"])}
        if "prompt_cache_hit_tokens" in usage:
            hit = int(usage["prompt_cache_hit_tokens"])
            self.usage["prompt_cache_hit_tokens"] = hit
            self.usage["prompt_cache_miss_tokens"] = self.usage["prompt_tokens"] - hit

    @property
    def reasoning_fields(self) -> list[str]:
        """Where reasoning goes: the step's own field, or every field of ``quirks["reasoning_fields"]``."""
        return list(self.quirks.get("reasoning_fields") or [self.reasoning_field])

    def wire_call(self, index: int, call: dict[str, str], *, whole: bool = True) -> dict[str, Any]:
        """One tool call as it goes on the wire (a whole call, or the first delta of a split one)."""
        arguments: Any = call["arguments"] if whole else ""
        if whole and self.quirks.get("arguments") == "object":
            try:
                arguments = json.loads(call["arguments"])
            except json.JSONDecodeError:
                pass  # not an object to begin with: stays a raw string
        wire: dict[str, Any] = {"id": call["id"], "type": "function",
                                "function": {"name": call["name"], "arguments": arguments}}
        ids = self.quirks.get("ids")
        if ids == "empty":
            wire["id"] = ""
        elif ids == "omit":
            del wire["id"]
        position = self.wire_index(index)
        if position is not None:
            wire["index"] = position
        return wire

    def wire_index(self, index: int) -> int | None:
        """The ``index`` a streamed call delta carries: its own, 0 for every call, or none."""
        mode = self.quirks.get("index")
        if mode == "omit":
            return None
        return 0 if mode == "zero" else index

    def message(self) -> dict[str, Any]:
        message: dict[str, Any] = {"role": "assistant", "content": self.content}
        if self.reasoning is not None:
            for name in self.reasoning_fields:
                message[name] = self.reasoning
        if self.tool_calls:
            calls = [self.wire_call(i, c) for i, c in enumerate(self.tool_calls)]
            for call in calls:
                call.pop("index", None)  # a plain message lists calls in order, without indexes
            message["tool_calls"] = calls
        return message
