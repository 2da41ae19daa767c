"""The one agent factory: the root agent of a run, the editor's delegate and a spawn_agent child.

:class:`AgentFactory` turns an :class:`~k1412_ls.core.run_request.AgentBrief`
into an :class:`Agent`: its gate (what it must prove), the tools it is
permitted and offered, its scheduler and its loop. A brief's intent is
classified once; that one decision routes the tools and derives the
requirements.
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import Executor
from dataclasses import dataclass
from pathlib import Path

from k1412_ls.config import ModelSpec
from k1412_ls.core.agent import AgentLoop
from k1412_ls.core.cost import RunMeter
from k1412_ls.core.delegation import DELEGATION_TOOLS
from k1412_ls.core.events import Emitter, EventBus
from k1412_ls.core.evidence.requirements import without_prohibitions
from k1412_ls.core.evidence_binding import BoundGate
from k1412_ls.core.guards import GuardState, find_duplicate_commands, normalize_arguments
from k1412_ls.core.hooks import RunHooks
from k1412_ls.core.intent import IntentDecision, classify_intent
from k1412_ls.core.model_port import ChatModel
from k1412_ls.core.run_request import AgentBrief
from k1412_ls.core.scheduler import Annotator, Scheduler
from k1412_ls.core.tool_selection import select_registry
from k1412_ls.core.window import ContextBudget
from k1412_ls.limits import Limits
from k1412_ls.tools.ports import RunServices
from k1412_ls.tools.registry import ToolContext, ToolRegistry


@dataclass
class Briefed:
    """A brief with its one intent decision and its gate (made before the agent, so a run can report them)."""

    brief: AgentBrief
    decision: IntentDecision
    gate: BoundGate


@dataclass
class Agent:
    """One agent, ready to run: ``loop.run(messages)``."""

    briefed: Briefed
    permitted: ToolRegistry
    offered: ToolRegistry
    max_iterations: int
    loop: AgentLoop


@dataclass
class AgentFactory:
    """Everything the agents of one run share: the catalogue, the model, the budget, the guards."""

    registry: ToolRegistry
    executor: Executor
    limits: Limits
    bus: EventBus
    model: ChatModel
    spec: ModelSpec
    budget: ContextBudget
    meter: RunMeter
    guards: GuardState
    workspace: Path
    annotate: Annotator | None = None  # test integrity facts after each call (``core.test_watch``)
    # The user's hooks (k1412_ls/core/hooks.py): every agent's tool calls (the runtime gives
    # the run's first agent the Stop hooks).
    hooks: RunHooks | None = None

    def brief(self, brief: AgentBrief, agent_id: str | None = None) -> Briefed:
        """Classify the brief's intent once and bind its gate (only ``agent_id``'s own events count)."""
        decision = classify_intent(without_prohibitions(brief.deciding_words))
        gate = BoundGate.for_task(brief.deciding_words, self.bus, agent_id, max_rejections=self.limits.max_rejections,
                                  workspace=self.workspace, decision=decision)
        return Briefed(brief, decision, gate)

    def build(self, briefed: Briefed, ctx: ToolContext, emit: Emitter) -> Agent:
        """The agent's tools, scheduler and loop; a sub-agent never delegates and gets the sub-agent limit."""
        brief = briefed.brief
        permitted = select_registry(self.registry, None, write=brief.write, delegation=not brief.sub_agent,
                                    sub_agent=brief.sub_agent)
        offered = select_registry(permitted, briefed.decision)
        scheduler = Scheduler(permitted, self.executor, emit, guards=self.guards, normalize=normalize_arguments,
                              find_duplicates=find_duplicate_commands,
                              unavailable=self.unavailable_reason(brief.write, sub_agent=brief.sub_agent),
                              max_calls=self.limits.max_calls_per_response, annotate=self.annotate,
                              hooks=self._tool_hooks())
        requested = brief.max_iterations or (
            self.limits.max_subagent_iterations if brief.sub_agent else self.spec.max_iterations)
        max_iterations = self.limits.iterations(requested, depth=1 if brief.sub_agent else 0)
        loop = AgentLoop(self.model, self.spec, offered, scheduler, ctx, emit, briefed.gate, max_iterations,
                         budget=self.budget, meter=self.meter)
        return Agent(briefed, permitted, offered, max_iterations, loop)

    def _tool_hooks(self) -> RunHooks | None:
        if self.hooks is None or not (self.hooks.active("PreToolUse") or self.hooks.active("PostToolUse")):
            return None
        return self.hooks

    def unavailable_reason(self, write: bool, *, sub_agent: bool) -> Callable[[str], str | None]:
        """Why a tool of the catalogue is refused to this agent (None: not a catalogue tool)."""
        full = self.registry

        def reason(name: str) -> str | None:
            tool = full.get(name)
            if tool is None:
                return None
            if sub_agent and name in DELEGATION_TOOLS:
                return f"{name} is not available: sub-agents cannot delegate; do the work with your own tools."
            if not write and not tool.read_only:
                return f"{name} is not available: this agent is read-only; report what should change instead."
            return f"{name} is not available to this agent; use one of the tools you were given."

        return reason


def child_context(parent: ToolContext, agent_id: str, services: RunServices) -> ToolContext:
    """A sub-agent's tool context: its parent's workspace, documents, user, reads and cancel, one level deeper."""
    return ToolContext(
        workspace=parent.workspace, documents=parent.documents, user=parent.user, run_id=parent.run_id,
        conversation=parent.conversation, agent_id=agent_id, depth=parent.depth + 1, redactor=parent.redactor,
        cancel=parent.cancel, write_lock=parent.write_lock, reads=parent.reads, env=parent.env, services=services,
        skill_roots=parent.skill_roots,
    )


__all__ = ["Agent", "AgentFactory", "Briefed", "child_context"]
