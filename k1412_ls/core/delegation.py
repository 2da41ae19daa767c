"""Delegation: ``spawn_agent`` runs a bounded sub-agent in-process.

A sub-agent gets a role and an exact task, at most
``Limits.max_subagent_iterations`` iterations, no delegation tool, and
read-only tools unless ``write`` is true. Its events join the root stream with
``depth`` + 1 and its own ``agent_id``. :class:`Delegator` satisfies the
``Delegator`` port of :mod:`k1412_ls.tools.ports` (``ctx.services.delegation``).
"""

from __future__ import annotations

import asyncio
import itertools
import threading
from collections.abc import Awaitable, Callable
from concurrent.futures import Future
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from k1412_ls.limits import LIMITS
from k1412_ls.tools.errors import ToolError
from k1412_ls.tools.ports import SubAgentOutcome, required
from k1412_ls.tools.registry import Tool, ToolContext, ToolResult

SUB_AGENT_MAX_ITERATIONS = LIMITS.max_subagent_iterations
DELEGATION_TOOLS = frozenset({"spawn_agent"})


class SpawnAgentArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")

    role: str = Field(min_length=1, max_length=200, description="Who the sub-agent is, e.g. 'reviewer'.")
    task: str = Field(min_length=1, max_length=20_000, description="The exact, self-contained task.")
    write: bool = Field(default=False, description="Allow the sub-agent to change files (default read-only).")


ChildRunner = Callable[[str, str, str, bool, ToolContext], Awaitable[SubAgentOutcome]]


@dataclass
class Delegator:
    """Runs sub-agents on the runtime's event loop on behalf of tool worker threads."""

    loop: asyncio.AbstractEventLoop
    run_child: ChildRunner
    _ids: itertools.count = field(default_factory=lambda: itertools.count(1))
    _pending: set[Future[SubAgentOutcome]] = field(default_factory=set)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def next_agent_id(self) -> str:
        with self._lock:
            return f"agent-{next(self._ids)}"

    def spawn(self, role: str, task: str, write: bool, ctx: ToolContext) -> SubAgentOutcome:
        """Run a sub-agent to its end (called from a worker thread); honours the run's cancel flag."""
        if ctx.depth >= 1:
            raise ToolError("Sub-agents cannot delegate; do the work yourself with your own tools.")
        agent_id = self.next_agent_id()
        future = asyncio.run_coroutine_threadsafe(self.run_child(agent_id, role, task, write, ctx), self.loop)
        with self._lock:
            self._pending.add(future)
        try:
            while True:
                try:
                    return future.result(timeout=0.1)
                except FutureTimeout:
                    if ctx.cancel.is_set():
                        future.cancel()
                        raise ToolError("The sub-agent was cancelled with the run.") from None
        finally:
            with self._lock:
                self._pending.discard(future)

    def cancel_all(self) -> None:
        with self._lock:
            for future in list(self._pending):
                future.cancel()


def _spawn_agent(args: SpawnAgentArgs, ctx: ToolContext) -> ToolResult:
    delegator = required(ctx.services.delegation, "delegation")
    outcome = delegator.spawn(args.role, args.task, args.write, ctx)
    facts: dict[str, Any] = {"kind": "delegate", "agent_id": outcome.agent_id, "status": outcome.status}
    fields = {"agent_id": outcome.agent_id, "status": outcome.status, "answer": outcome.message,
              "iterations": outcome.iterations}
    if outcome.status == "completed":
        return ToolResult.success(facts=facts, **fields)
    return ToolResult.failure(
        f"The sub-agent ended '{outcome.status}': check its answer and finish the missing work yourself.",
        facts=facts, **fields,
    )


def _spawn_parallel_safe(arguments: dict[str, Any]) -> bool:
    # Read-only sub-agents may run side by side; writing ones run one at a time.
    return not bool(arguments.get("write", False))


SPAWN_AGENT = Tool(
    name="spawn_agent",
    description=(
        "Delegate a bounded, self-contained task to a sub-agent with a role. It has at most "
        f"{SUB_AGENT_MAX_ITERATIONS} iterations, "
        "cannot delegate further, and is read-only unless write is true. Returns its final answer and status."
    ),
    args_model=SpawnAgentArgs,
    handler=_spawn_agent,
    parallel_safe=_spawn_parallel_safe,
    read_only=False,
    tags=frozenset({"delegation"}),
)

TOOLS = [SPAWN_AGENT]
