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
    """The normalized answer of one script step."""

    def __init__(self, step: dict[str, Any], call_counter: Iterator[int]) -> None:
        self.content: str | None = step.get("content")
        self.reasoning_field = "reasoning" if "reasoning" in step else "reasoning_content"
        self.reasoning: str | None = step.get("reasoning", step.get("reasoning_content"))
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

    def message(self) -> dict[str, Any]:
        message: dict[str, Any] = {"role": "assistant", "content": self.content}
        if self.reasoning is not None:
            message[self.reasoning_field] = self.reasoning
        if self.tool_calls:
            message["tool_calls"] = [
                {"id": c["id"], "type": "function", "function": {"name": c["name"], "arguments": c["arguments"]}}
                for c in self.tool_calls
            ]
        return message
