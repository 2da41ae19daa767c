"""An in-process scripted chat model for core loop tests (the provider side of the port, not our code)."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from k1412_ls.config import ModelSpec
from k1412_ls.core.model_port import ModelError, ModelReply, ToolCall, Usage


class ScriptedChatModel:
    """Plays a list of steps like the scripted HTTP server: content, tool_calls, error, delay_s, repeat."""

    carries_reasoning = False

    def __init__(self, script: list[dict[str, Any]]) -> None:
        self.script = list(script)
        self.requests: list[dict[str, Any]] = []
        self._count = 0

    async def complete(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]],
                       spec: ModelSpec) -> ModelReply:
        self.requests.append({"messages": json.loads(json.dumps(messages)), "tools": [t["function"]["name"]
                                                                                    for t in tools],
                              "max_output_tokens": spec.max_output_tokens})
        if not self.script:
            raise ModelError("script exhausted")
        step = self.script[0] if self.script[0].get("repeat") else self.script.pop(0)
        if step.get("delay_s"):
            await asyncio.sleep(step["delay_s"])
        if "error" in step:
            raise ModelError(step["error"])
        calls = []
        for call in step.get("tool_calls") or []:
            self._count += 1
            calls.append(ToolCall(call.get("id", f"call_{self._count}"), call["name"], call.get("arguments", {}),
                                  json.dumps(call.get("arguments", {}))))
        return ModelReply(content=step.get("content", ""), tool_calls=calls,
                          finish_reason="tool_calls" if calls else "stop", usage=Usage(10, 5, 0))
