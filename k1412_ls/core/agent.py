"""The agent loop (policy ``agent-loop-v4``) for one agent: root or sub-agent.

RequestModel → (tool calls) ValidateCalls → Schedule → Execute →
RecordEvidence → RequestModel … ; (no tool calls) CheckCompletion →
Completed | RequestModel (evidence missing, retries left) | Unverified.
Every way out of :meth:`AgentLoop.run` is a :class:`RunEnded` exception
carrying the message the user reads.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

from k1412_ls.config import ModelSpec
from k1412_ls.core.events import Emitter
from k1412_ls.core.model_port import ChatModel, MalformedReply, ModelError, ModelReply, ToolCall, Usage
from k1412_ls.core.outcomes import RunCompleted, RunFailed, RunUnverified
from k1412_ls.core.scheduler import Scheduler
from k1412_ls.tools.registry import ToolContext, ToolRegistry

# A reply that cannot be dispatched (cut off, arguments not a JSON object) is
# asked for again this many times before the run fails.
MALFORMED_RETRIES = 1
CONTENT_EXCERPT = 2000


class Verdict(Protocol):
    complete: bool
    required: list[str]
    satisfied: list[str]
    missing: list[str]
    instruction: str


class Gate(Protocol):
    """What the loop needs from the completion gate (``k1412_ls.core.evidence``)."""

    max_rejections: int

    def check(self, final_message: str) -> Verdict: ...

    def state(self) -> dict[str, list[str]]: ...


@dataclass
class AgentLoop:
    """Runs one agent until it completes, runs out of budget, fails or is cancelled."""

    model: ChatModel
    spec: ModelSpec
    registry: ToolRegistry
    scheduler: Scheduler
    ctx: ToolContext
    emit: Emitter
    gate: Gate
    max_iterations: int
    usage: Usage = field(default_factory=Usage)
    iterations: int = 0
    rejections: int = 0

    async def run(self, messages: list[dict[str, Any]]) -> None:
        """Drive the loop; always ends by raising a RunEnded subclass."""
        schemas = self.registry.schemas()
        while self.iterations < self.max_iterations:
            self.iterations += 1
            reply = await self._request(messages, schemas)
            if reply.tool_calls:
                calls = unique_call_ids(reply.tool_calls, self.iterations)
                reply.tool_calls = calls
                messages.append(reply.assistant_message(self.model.carries_reasoning))
                outcomes = await self.scheduler.run_batch(calls, self.ctx)
                for outcome in outcomes:
                    messages.append({"role": "tool", "tool_call_id": outcome.call.id,
                                     "content": self.ctx.redactor.text(outcome.result.to_message())})
                continue
            self._check_completion(reply, messages)
        state = self.gate.state()
        self.emit("completion.unverified", {"reason": "iterations exhausted", "iterations": self.iterations,
                                            **state})
        missing = "; ".join(state["missing"]) or "the model never finished"
        raise RunUnverified(f"Stopped after {self.iterations} iterations without proof of the work: {missing}.")

    async def _request(self, messages: list[dict[str, Any]], schemas: list[dict[str, Any]]) -> ModelReply:
        attempts = 0
        while True:
            self.emit("model.requested", {"iteration": self.iterations, "messages": len(messages),
                                          "tools": len(schemas), "model": self.spec.id,
                                          "verification": self.gate.state()})
            try:
                reply = await self.model.complete(messages, schemas, self.spec)
            except MalformedReply as exc:
                attempts += 1
                self.emit("model.responded", {"iteration": self.iterations, "ok": False, "error": str(exc)})
                if attempts > MALFORMED_RETRIES:
                    raise RunFailed(str(exc)) from None
                continue
            except ModelError as exc:
                self.emit("model.responded", {"iteration": self.iterations, "ok": False, "error": str(exc)})
                raise RunFailed(str(exc)) from None
            self.usage.add(reply.usage)
            self.emit("model.responded", {
                "iteration": self.iterations, "ok": True, "finish_reason": reply.finish_reason,
                "content": reply.content[:CONTENT_EXCERPT],
                "tool_calls": [{"id": c.id, "name": c.name} for c in reply.tool_calls],
                "usage": reply.usage.as_dict(),
            })
            return reply

    def _check_completion(self, reply: ModelReply, messages: list[dict[str, Any]]) -> None:
        verdict = self.gate.check(reply.content)
        if verdict.complete:
            raise RunCompleted(reply.content)
        self.rejections += 1
        state = {"required": verdict.required, "satisfied": verdict.satisfied, "missing": verdict.missing}
        if self.rejections > self.gate.max_rejections:
            self.emit("completion.unverified", {"reason": "completion rejected too often",
                                                "rejections": self.rejections, **state})
            raise RunUnverified(
                f"Not verified: {'; '.join(verdict.missing)}. The model's last answer: {reply.content}".strip()
            )
        self.emit("completion.rejected", {"rejection": self.rejections, "instruction": verdict.instruction,
                                          **state})
        messages.append({"role": "assistant", "content": reply.content})
        messages.append({"role": "user", "content": verdict.instruction})


def unique_call_ids(calls: list[ToolCall], iteration: int) -> list[ToolCall]:
    """Give every call a distinct, non-empty id so each gets exactly one tool message."""
    seen: set[str] = set()
    fixed: list[ToolCall] = []
    for index, call in enumerate(calls):
        call_id = call.id or f"call_{iteration}_{index}"
        while call_id in seen:
            call_id = f"{call_id}_{index}"
        seen.add(call_id)
        fixed.append(call if call_id == call.id else ToolCall(call_id, call.name, call.arguments, call.raw_arguments))
    return fixed


def failure_message(exc: BaseException) -> str:
    """One sanitized line for an unexpected internal error."""
    return f"Internal error ({type(exc).__name__}); the run was stopped. See the event log for details."


__all__ = ["AgentLoop", "Gate", "failure_message", "unique_call_ids"]
