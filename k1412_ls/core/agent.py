"""The agent loop (policy ``agent-loop-v8``) for one agent: root or sub-agent.

RequestModel → (tool calls) ValidateCalls → Schedule → Execute →
RecordEvidence → RequestModel … ; (no tool calls) CheckCompletion →
Completed | RequestModel (evidence missing, retries left) | Unverified.
Every way out of :meth:`AgentLoop.run` is a :class:`RunEnded` exception
carrying the message the user reads.

Every request goes through the agent's :class:`ContextWindow` (context policy
``recent-visible-v3``), so it fits the model's window; a provider's refusal for
length lowers the run's budget and retries, at most ``OVERFLOW_RETRIES`` times.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Protocol

from k1412_ls.config import ModelSpec
from k1412_ls.core.cost import Cost, RunMeter, budget_sentence
from k1412_ls.core.digest import run_digest
from k1412_ls.core.events import Emitter
from k1412_ls.core.model_port import (
    CUT_FINISH_REASONS,
    ChatModel,
    ContextOverflow,
    MalformedReply,
    ModelError,
    ModelReply,
    ToolCall,
    Usage,
)
from k1412_ls.core.run_outcomes import RunCompleted, RunFailed, RunUnverified
from k1412_ls.core.scheduler import Scheduler
from k1412_ls.core.window import ContextBudget, ContextTooSmall, ContextWindow, schemas_chars
from k1412_ls.tools.registry import ToolContext, ToolRegistry

# A reply that cannot be dispatched (cut off, arguments not a JSON object) is
# asked for again this many times before the run fails.
MALFORMED_RETRIES = 1
# A request the provider refuses as longer than its window is shrunk and sent again this many times.
OVERFLOW_RETRIES = 3
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
    # The run's context budget, shared with its sub-agents (a window a provider states holds for all).
    budget: ContextBudget | None = None
    usage: Usage = field(default_factory=Usage)
    # Tokens, cost and budget of the whole run (shared with sub-agents); ``cost`` is this agent's own part.
    meter: RunMeter | None = None
    cost: Cost = field(default_factory=Cost)
    _task: str = ""
    iterations: int = 0
    rejections: int = 0
    window: ContextWindow | None = None
    # The user's Stop hooks (root agent only): (final answer, blocked before) -> the reason they block, or None.
    stop_hook: Callable[[str, bool], Awaitable[str | None]] | None = None
    stop_blocks: int = 0

    async def run(self, messages: list[dict[str, Any]]) -> None:
        """Drive the loop from the prepared messages (the task last); always ends by raising RunEnded."""
        schemas = self.registry.schemas()
        if self.budget is None:
            self.budget = ContextBudget(self.spec.context_chars)
        task = messages[-1].get("content") if messages else ""
        self._task = task if isinstance(task, str) else ""
        window = self.window = ContextWindow(messages, len(messages), self.budget, self._digest,
                                             schemas_chars(schemas), self.emit)
        if self.meter is not None and self.meter.pricing is None:
            self.cost = Cost(0.0, False)
        while self.iterations < self.max_iterations:
            self._check_budget()
            self.iterations += 1
            reply = await self._request(schemas)
            if reply.tool_calls:
                calls = unique_call_ids(reply.tool_calls, self.iterations)
                # The call that crossed the budget is paid for, but its tools do not run: nothing half done.
                self._check_budget(dropped=calls)
                reply.tool_calls = calls
                window.append(reply.assistant_message(self.model.carries_reasoning))
                note = getattr(self.ctx.documents, "note_reason", None)
                if note is not None:
                    note(self.ctx.redactor.text(reply.content))  # the description of this batch's edits in the editor
                outcomes = await self.scheduler.run_batch(calls, self.ctx)
                for outcome in outcomes:
                    window.append({"role": "tool", "tool_call_id": outcome.call.id,
                                   "content": self.ctx.redactor.text(outcome.result.to_message())})
                continue
            await self._check_completion(reply, window)
        state = self.gate.state()
        self.emit("completion.unverified", {"reason": "iterations exhausted", "iterations": self.iterations,
                                            **state})
        missing = "; ".join(state["missing"]) or "the model never finished"
        raise RunUnverified(f"Stopped after {self.iterations} iterations without proof of the work: {missing}.")

    async def _request(self, schemas: list[dict[str, Any]]) -> ModelReply:
        assert self.window is not None and self.budget is not None
        attempts = 0
        overflows = 0
        while True:
            try:
                messages = self.window.for_request()
            except ContextTooSmall as exc:
                raise RunFailed(str(exc)) from None
            spec = self._spec()
            sent = self.window.size()
            self.emit("model.requested", {"iteration": self.iterations, "messages": len(messages),
                                          "tools": len(schemas), "model": self.spec.id, "chars": sent,
                                          "budget_chars": self.budget.chars, "verification": self.gate.state()})
            try:
                requested_at = datetime.now(UTC)  # what the call costs may depend on the hour (cost.py)
                reply = await self.model.complete(messages, schemas, spec)
            except ContextOverflow as exc:
                overflows += 1
                self._failed(exc, requested_at)
                if overflows > OVERFLOW_RETRIES or self.window.at_minimum:
                    raise RunFailed(
                        f"The provider refused even the minimum context ({sent} characters: the rules, the tool "
                        "schemas, the task's head and the last step) as longer than its context window; raise the "
                        f"provider's context size for model '{self.spec.id}'."
                    ) from None
                learned = self.budget.learn(exc, sent, spec.max_output_tokens)
                self.emit("context.overflowed", {"iteration": self.iterations, "attempt": overflows,
                                                 "error": str(exc), **learned})
                try:
                    # The last retry sends the least context there is, so a run fails only when even that
                    # does not fit.
                    self.window.shrink(minimum=overflows == OVERFLOW_RETRIES)
                except ContextTooSmall:
                    self.window.shrink(minimum=True)
                continue
            except MalformedReply as exc:
                attempts += 1
                self._failed(exc, requested_at)
                if attempts > MALFORMED_RETRIES:
                    raise RunFailed(str(exc)) from None
                self._check_budget()  # the refused reply was paid for: a budget it reached ends the run
                continue
            except ModelError as exc:
                self._failed(exc, requested_at)
                raise RunFailed(str(exc)) from None
            self.window.at_minimum = False
            self.budget.note_accepted(sent)
            accounting = self._charge(reply.usage, requested_at)
            self.emit("model.responded", {
                "iteration": self.iterations, "ok": True, "finish_reason": reply.finish_reason,
                "content": reply.content[:CONTENT_EXCERPT],
                "tool_calls": [{"id": c.id, "name": c.name} for c in reply.tool_calls],
                "usage": reply.usage.as_dict(), **accounting,
            })
            return reply

    def _charge(self, usage: Usage, requested_at: datetime) -> dict[str, Any]:
        """Count one reply's tokens (and cost) for this agent and the run; the event fields that say so."""
        self.usage.add(usage)
        if self.meter is None:
            return {}
        spent = self.meter.charge(usage, requested_at)
        self.cost = self.cost + spent
        return {"cost": spent.as_dict(), "run": self.meter.snapshot()}

    def _failed(self, exc: ModelError, requested_at: datetime) -> None:
        """A request that failed: its reply's usage, when the provider reported any, is paid all the same."""
        payload: dict[str, Any] = {"iteration": self.iterations, "ok": False, "error": str(exc)}
        if exc.usage is not None:
            payload.update(usage=exc.usage.as_dict(), **self._charge(exc.usage, requested_at))
        self.emit("model.responded", payload)

    def _check_budget(self, dropped: list[ToolCall] | None = None) -> None:
        """End the run ``unverified`` once its cost or token budget is reached, naming the budget."""
        reached = self.meter.exhausted() if self.meter is not None else None
        if reached is None:
            return
        state = self.gate.state()
        self.emit("budget.exhausted", {**reached, "iterations": self.iterations,
                                       "dropped_tool_calls": [c.name for c in dropped or []], **state})
        missing = "; ".join(state["missing"])
        unproven = f" Not verified: {missing}." if missing else ""
        raise RunUnverified(f"Stopped because {budget_sentence(reached)}.{unproven}")

    def _spec(self) -> ModelSpec:
        """The model spec for the next request: the output cap a provider's window forced, if any."""
        cap = self.budget.max_output_tokens if self.budget else None
        if cap is not None and cap < self.spec.max_output_tokens:
            return self.spec.model_copy(update={"max_output_tokens": cap})
        return self.spec

    def _digest(self, folded: set[str], steps: int, limit: int) -> str:
        """The run digest of the folded steps, from this agent's events (see :mod:`k1412_ls.core.digest`)."""
        hashes: dict[str, str] = {}
        for path, record in list(self.ctx.reads.items()):
            try:
                hashes[self.ctx.workspace.relative(path)] = record.sha256
            except Exception:  # a path outside the pinned root is simply not listed
                continue
        return run_digest(list(self.emit.bus.history), agent_id=self.emit.agent_id, depth=self.emit.depth,
                          folded=folded, task=self._task, evidence=self.gate.state(), read_hashes=hashes,
                          steps=steps, limit=limit)

    async def _check_completion(self, reply: ModelReply, window: ContextWindow) -> None:
        verdict = self.gate.check(reply.content)
        cut = reply.finish_reason in CUT_FINISH_REASONS
        if verdict.complete and not cut:
            if await self._stop_hook_blocks(reply, window):
                return  # the run goes on, as after a rejection
            raise RunCompleted(reply.content)
        self._check_budget()  # no budget left to be told what is missing
        self.rejections += 1
        state = {"required": verdict.required, "satisfied": verdict.satisfied, "missing": verdict.missing}
        missing = list(verdict.missing)
        instruction = verdict.instruction
        if cut:
            # An answer cut mid-sentence proves nothing, whatever the evidence so far says.
            what = "the output limit" if reply.finish_reason == "length" else "the provider's content filter"
            missing.insert(0, f"the final answer was cut by {what} (finish_reason {reply.finish_reason})")
            instruction = (f"Your last answer was cut off by {what} before it ended. "
                           + (verdict.instruction if not verdict.complete else
                              "Give the final answer again, shorter: what was done and what shows it."))
            state["cut"] = reply.finish_reason
        if self.rejections > self.gate.max_rejections:
            self.emit("completion.unverified", {"reason": "completion rejected too often",
                                                "rejections": self.rejections, **state})
            raise RunUnverified(
                f"Not verified: {'; '.join(missing)}. The model's last answer: {reply.content}".strip()
            )
        self.emit("completion.rejected", {"rejection": self.rejections, "instruction": instruction, **state})
        window.append({"role": "assistant", "content": reply.content})
        window.append({"role": "user", "content": instruction})


    async def _stop_hook_blocks(self, reply: ModelReply, window: ContextWindow) -> bool:
        """The gate accepted: the user's Stop hooks may still block (stricter), never the other way round."""
        if self.stop_hook is None:
            return False
        reason = await self.stop_hook(reply.content, self.stop_blocks > 0)
        if reason is None:
            return False
        self._check_budget()
        self.stop_blocks += 1
        state = self.gate.state()
        if self.stop_blocks > self.gate.max_rejections:
            self.emit("completion.unverified", {"reason": "a Stop hook blocked completion too often",
                                                "blocks": self.stop_blocks, "hook_reason": reason, **state})
            raise RunUnverified(f"Not completed: the user's Stop hook kept blocking: {reason}. The model's last "
                                f"answer: {reply.content}".strip())
        instruction = (f"Not done yet: the user's Stop hook blocked completion: {reason}\nDo what it asks, "
                       "prove it with tools, then answer again.")
        self.emit("completion.blocked", {"block": self.stop_blocks, "reason": reason, "instruction": instruction,
                                         **state})
        window.append({"role": "assistant", "content": reply.content})
        window.append({"role": "user", "content": instruction})
        return True


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
