"""Scheduler ``safe-parallel-v1``.

At most ``max_calls`` calls of one response run; the rest are answered with
an error and one ``tool.batch_limited`` event. The remaining calls are split
into contiguous groups: parallel-safe calls run concurrently, every other call
runs alone. Results come back in the original order, one per call id.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable, Sequence
from concurrent.futures import Executor
from dataclasses import dataclass
from typing import Any, Protocol

from k1412_ls.core.events import Emitter
from k1412_ls.core.model_port import ToolCall
from k1412_ls.limits import LIMITS
from k1412_ls.tools.registry import ToolContext, ToolRegistry, ToolResult

MAX_CALLS_PER_RESPONSE = LIMITS.max_calls_per_response
CANCEL_GRACE_S = 5.0


# The hooks a scheduler may be given (``k1412_ls.core.guards`` provides both):
# arguments of a call rewritten to their canonical form, given the tool's name and JSON schema;
Normalizer = Callable[[str, dict[str, Any], dict[str, Any]], dict[str, Any]]
# and, for the runnable calls of one response, index of each repeat -> index of its first occurrence.
DuplicateFinder = Callable[[list[ToolCall]], dict[int, int]]
# What a finished call's changes did to the tests (``core.test_watch``), added to its facts before the event.
Annotator = Callable[[dict[str, Any]], list[dict[str, str]] | None]


class ToolHooks(Protocol):
    """The user's PreToolUse/PostToolUse hooks (``k1412_ls.core.hooks.RunHooks``)."""

    async def before_tool(self, call: ToolCall, arguments: dict[str, Any]) -> str | None: ...

    async def after_tool(self, call: ToolCall, arguments: dict[str, Any], result: ToolResult) -> str | None: ...


class Guards(Protocol):
    """The guard state the scheduler consults (see ``k1412_ls.core.guards``)."""

    def precheck(self, tool_name: str, arguments: dict[str, Any]) -> ToolResult | None: ...

    def observe(self, tool_name: str, arguments: dict[str, Any], result: ToolResult) -> None: ...


@dataclass
class CallOutcome:
    """One answered call: what the model will read, and how long it waited and ran."""

    call: ToolCall
    result: ToolResult
    queue_ms: float = 0.0
    run_ms: float = 0.0
    executed: bool = False


@dataclass
class _Prepared:
    index: int
    call: ToolCall
    arguments: dict[str, Any]
    parallel: bool
    early: ToolResult | None = None  # refusal, skip or limit: answered without running
    duplicate_of: int | None = None


def _ms(seconds: float) -> float:
    return round(seconds * 1000, 2)


class Scheduler:
    """Runs the tool calls of one model response under the safe-parallel policy."""

    name = "safe-parallel-v1"

    def __init__(self, registry: ToolRegistry, executor: Executor, emit: Emitter, *, guards: Guards | None = None,
                 normalize: Normalizer | None = None, find_duplicates: DuplicateFinder | None = None,
                 unavailable: Callable[[str], str | None] | None = None,
                 max_calls: int = MAX_CALLS_PER_RESPONSE, annotate: Annotator | None = None,
                 hooks: ToolHooks | None = None) -> None:
        self.registry = registry
        self.executor = executor
        self.emit = emit
        self.guards = guards
        self.normalize = normalize
        self.find_duplicates = find_duplicates
        self.max_calls = max_calls
        self.unavailable = unavailable
        self.annotate = annotate
        self.hooks = hooks

    def _prepare(self, calls: Sequence[ToolCall]) -> list[_Prepared]:
        prepared: list[_Prepared] = []
        for index, call in enumerate(calls):
            tool = self.registry.get(call.name)
            arguments = dict(call.arguments)
            if tool is not None and self.normalize is not None:
                arguments = self.normalize(call.name, arguments, tool.schema()["function"]["parameters"])
            item = _Prepared(index, call, arguments, parallel=bool(tool and tool.is_parallel_safe(arguments)))
            if index >= self.max_calls:
                item.early = ToolResult.failure(
                    f"Not run: at most {self.max_calls} tool calls run per response; "
                    f"call {call.name} again in your next response."
                )
            elif tool is None:
                reason = self.unavailable(call.name) if self.unavailable is not None else None
                known = ", ".join(self.registry.names())
                item.early = ToolResult.failure(reason or f"Unknown tool '{call.name}'; use one of: {known}.")
            prepared.append(item)
        if self.find_duplicates is not None:
            runnable = [ToolCall(p.call.id, p.call.name, p.arguments, p.call.raw_arguments)
                        for p in prepared if p.early is None]  # compare normalized arguments
            positions = [p.index for p in prepared if p.early is None]
            for dup, first in self.find_duplicates(runnable).items():
                prepared[positions[dup]].duplicate_of = positions[first]
        return prepared

    async def run_batch(self, calls: Sequence[ToolCall], ctx: ToolContext) -> list[CallOutcome]:
        """Answer every call in ``calls``, in order."""
        started = time.monotonic()
        prepared = self._prepare(calls)
        if len(calls) > self.max_calls:
            self.emit("tool.batch_limited", {
                "requested": len(calls), "executed": self.max_calls, "limit": self.max_calls,
                "rejected_call_ids": [c.id for c in calls[self.max_calls:]],
            })
        outcomes: dict[int, CallOutcome] = {}
        for group in self._groups(prepared):
            if len(group) > 1:
                results = await asyncio.gather(*(self._run_one(p, ctx, started) for p in group))
            else:
                results = [await self._run_one(group[0], ctx, started)]
            for item, outcome in zip(group, results, strict=True):
                outcomes[item.index] = outcome
        for item in prepared:
            if item.index in outcomes:
                continue
            if item.duplicate_of is not None and item.duplicate_of in outcomes:
                first = outcomes[item.duplicate_of]
                data = {**first.result.data, "duplicate_of": first.call.id}
                outcomes[item.index] = CallOutcome(item.call, ToolResult(data, {}))
            else:
                outcomes[item.index] = CallOutcome(item.call, item.early or ToolResult.failure("Not run."))
            self._completed(outcomes[item.index], item.arguments)
        return [outcomes[i] for i in range(len(prepared))]

    def _groups(self, prepared: list[_Prepared]) -> list[list[_Prepared]]:
        groups: list[list[_Prepared]] = []
        for item in prepared:
            if item.early is not None or item.duplicate_of is not None:
                continue
            if item.parallel and groups and groups[-1][0].parallel:
                groups[-1].append(item)
            else:
                groups.append([item])
        return groups

    async def _run_one(self, item: _Prepared, ctx: ToolContext, batch_start: float) -> CallOutcome:
        call, arguments = item.call, item.arguments
        tool = self.registry.get(call.name)
        assert tool is not None
        early = self.guards.precheck(call.name, arguments) if self.guards is not None else None
        if early is None and self.hooks is not None:
            denied = await self.hooks.before_tool(call, arguments)
            if denied is not None:  # a hook may refuse a call; it can never permit one the policy refuses
                early = ToolResult.failure(f"Not run: the user's PreToolUse hook denied this call: {denied}",
                                           facts={"hook": "denied"})
        if early is not None:
            outcome = CallOutcome(call, early)
            self._completed(outcome, arguments)
            return outcome
        queued = time.monotonic()
        started: dict[str, Any] = {"call_id": call.id, "tool": call.name, "args": tool.public_args(arguments),
                                   "queue_ms": _ms(queued - batch_start)}
        if tool.server is not None:
            started["server"] = tool.server
        self.emit("tool.started", started)
        loop = asyncio.get_running_loop()
        begin = time.monotonic()
        future = loop.run_in_executor(self.executor, self.registry.execute, call.name, arguments, ctx)
        try:
            result = await asyncio.shield(future)
        except asyncio.CancelledError:
            # Tools poll this flag and kill what they started; wait (bounded) until they have,
            # so "cancelled" is only reported once no child process survives.
            ctx.cancel.set()
            with contextlib.suppress(BaseException):
                await asyncio.wait_for(asyncio.shield(future), CANCEL_GRACE_S)
            raise
        end = time.monotonic()
        if self.annotate is not None and isinstance(result.facts, dict):
            integrity = self.annotate(result.facts)
            if integrity:
                result.facts["test_integrity"] = integrity
        if self.guards is not None:
            self.guards.observe(call.name, arguments, result)
        if self.hooks is not None:
            context = await self.hooks.after_tool(call, arguments, result)
            if context:  # for the model only: the evidence (facts) stays what the tool did
                result = ToolResult({**result.data, "hook_context": context}, result.facts)
        outcome = CallOutcome(call, result, queue_ms=_ms(begin - batch_start), run_ms=_ms(end - begin),
                              executed=True)
        self._completed(outcome, arguments)
        return outcome

    def _completed(self, outcome: CallOutcome, arguments: dict[str, Any]) -> None:
        tool = self.registry.get(outcome.call.name)
        public = tool.public_args(arguments) if tool is not None else {}
        payload: dict[str, Any] = {
            "call_id": outcome.call.id, "tool": outcome.call.name, "ok": outcome.result.ok, "args": public,
            "facts": outcome.result.facts, "executed": outcome.executed,
            "queue_ms": outcome.queue_ms, "run_ms": outcome.run_ms,
        }
        if tool is not None and tool.server is not None:
            payload["server"] = tool.server
        if not outcome.result.ok:
            payload["error"] = str(outcome.result.data.get("error", ""))
        if "duplicate_of" in outcome.result.data:
            payload["duplicate_of"] = outcome.result.data["duplicate_of"]
        self.emit("tool.completed", payload)
        facts = outcome.result.facts
        if outcome.result.ok and facts.get("kind") == "state" and facts.get("op") == "plan":
            self.emit("plan.updated", {"plan": facts.get("plan", [])})
