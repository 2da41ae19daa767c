"""The runtime: everything one run needs, assembled, driven and cleaned up.

Adapters (CLI, language server) build a :class:`Runtime` once with a model
factory (the only way the core reaches the openai SDK) and call
:meth:`Runtime.run` per task. A run never raises: it returns a
:class:`RunResult` whose status says how it ended.
"""

from __future__ import annotations

import asyncio
import os
import uuid
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from k1412_ls.config import ConfigError, K1412Config, ModelSpec
from k1412_ls.core.agent import AgentLoop, failure_message
from k1412_ls.core.agents import AgentFactory, child_context
from k1412_ls.core.context_policy import ContextPolicy
from k1412_ls.core.conventions import Conventions, load_conventions
from k1412_ls.core.cost import Budget, RunMeter
from k1412_ls.core.delegation import DELEGATION_TOOLS, Delegator
from k1412_ls.core.events import AuditFailed, Emitter, EventBus, EventSink, JsonlSink
from k1412_ls.core.evidence.contract import contract_items
from k1412_ls.core.evidence_binding import BoundGate, files_changed
from k1412_ls.core.guards import GuardState
from k1412_ls.core.hooks import RunHooks
from k1412_ls.core.model_port import ChatModel
from k1412_ls.core.run_outcomes import RunCancelled, RunEnded, RunFailed, RunResult
from k1412_ls.core.run_request import AgentBrief, RunRequest
from k1412_ls.core.test_watch import TestWatch
from k1412_ls.core.tool_sources import close_tool_sets, open_tool_sources
from k1412_ls.core.window import ContextBudget, request_chars, schemas_chars
from k1412_ls.limits import LIMITS, Limits
from k1412_ls.text.redact import Redactor
from k1412_ls.tools.approval.approval_policy import (
    AllowStore,
    ApprovalGate,
    ApprovalPolicy,
    parse_rules,
)
from k1412_ls.tools.errors import ToolError
from k1412_ls.tools.files.documents import DiskDocumentStore, DocumentStore
from k1412_ls.tools.files.locks import user_write_lock
from k1412_ls.tools.files.workspace import Workspace
from k1412_ls.tools.ports import RunServices, SubAgentOutcome
from k1412_ls.tools.processes.process_table import ProcessTable
from k1412_ls.tools.registry import ToolContext, ToolRegistry, ToolSet, ToolSource
from k1412_ls.tools.sandbox.command_sandbox import (
    RunSandbox,
    SandboxPolicy,
    hide_from_commands,
)
from k1412_ls.tools.undo.changes import RunChanges
from k1412_ls.tools.undo.preimages import RunJournal
from k1412_ls.tools.undo.recording import RecordingDocumentStore
from k1412_ls.tools.undo.undo_store import UndoLimits, prune

if TYPE_CHECKING:
    from k1412_ls.state.store import StateStore

ModelFactory = Callable[[K1412Config, ModelSpec], ChatModel]


@dataclass
class _ActiveRun:
    task: asyncio.Task[Any]


@dataclass
class Runtime:
    """Long-lived: one per CLI invocation or language server process."""

    config: K1412Config
    model_factory: ModelFactory
    state_dir: Path
    registry: ToolRegistry
    state: StateStore | None = None  # memories, plans and history; optional for embedders
    context_policy: ContextPolicy = field(default_factory=ContextPolicy)
    executor: ThreadPoolExecutor = field(default_factory=lambda: ThreadPoolExecutor(32, "k1412-tool"))
    limits: Limits = LIMITS  # hard limits, whatever a model or configuration asks for
    # Tools beyond the catalogue, opened for each run (the user's MCP servers; assembly.py wires them).
    tool_sources: tuple[ToolSource, ...] = ()
    _active: dict[str, _ActiveRun] = field(default_factory=dict)

    def __post_init__(self) -> None:
        # Commands the model runs must not read other users' event logs and memories, nor forge
        # this run's log: the state directory is hidden inside their sandbox.
        hide_from_commands(self.state_dir)

    def resolve_model(self, model_id: str | None) -> tuple[ModelSpec, ChatModel]:
        """Find the model and build its client; ConfigError names what is wrong."""
        spec = self.config.model_spec(model_id)
        self.budget_for(RunRequest("", Path()), spec)  # a configured cost budget needs a priced model
        return spec, self.model_factory(self.config, spec)

    def budget_for(self, request: RunRequest, spec: ModelSpec) -> Budget:
        """The run's budget: the request's limits over the configuration's; ConfigError if it cannot be kept."""
        configured = self.config.budget
        budget = Budget(configured.max_cost if request.max_cost is None else request.max_cost,
                        configured.max_tokens if request.max_tokens is None else request.max_tokens)
        if budget.max_cost is not None and spec.pricing is None:
            raise ConfigError(
                f"Model '{spec.id}' has no pricing, so a cost budget (max_cost) cannot be kept; add "
                "pricing = { input = ..., cached_input = ..., output = ... } to the model, or use a token budget "
                "(--max-tokens)."
            )
        return budget

    def cancel(self, run_id: str) -> bool:
        """Cancel a run in flight; True if it was running."""
        active = self._active.get(run_id)
        if active is None or active.task.done():
            return False
        active.task.cancel()
        return True

    def new_run_id(self) -> str:
        return f"run-{uuid.uuid4().hex[:16]}"

    async def run(self, request: RunRequest, *, sinks: Sequence[EventSink] = (),
                  documents: DocumentStore | None = None, run_id: str | None = None,
                  model: tuple[ModelSpec, ChatModel] | None = None) -> RunResult:
        """Run one task to its end and return the result object. Raises ConfigError only before starting."""
        spec, chat_model = model or self.resolve_model(request.model)
        budget = self.budget_for(request, spec)
        run_id = run_id or self.new_run_id()
        conversation = request.conversation or f"c-{uuid.uuid4().hex[:12]}"
        current = asyncio.current_task()
        assert current is not None, "Runtime.run must run inside an asyncio task"
        self._active[run_id] = _ActiveRun(current)
        events_path = self.state_dir / "runs" / f"{run_id}.jsonl"
        redactor = Redactor.from_environment(
            extra_names=[p.api_key_env for p in self.config.providers.values() if p.api_key_env]
        )
        jsonl = JsonlSink(events_path)
        extra_files = [JsonlSink(request.events_file)] if request.events_file else []
        if request.events_file:
            hide_from_commands(request.events_file)  # a command must not forge the copy either
        bus = EventBus(run_id, request.user, conversation, redactor, [jsonl, *extra_files, *sinks])
        bus.meta.update(request.meta)
        if budget:
            bus.meta["budget"] = budget.describe()  # a budget can end a run early: results say so
        # Pre-images of every path the run changes, for `k1412 undo` (k1412_ls/tools/undo/preimages.py).
        limits = UndoLimits.from_config(self.config.undo)
        journal = RunJournal(run_id, request.workspace, self.state_dir, limits)
        try:
            prune(self.state_dir, limits)
        except OSError:
            pass
        store = RecordingDocumentStore(documents or DiskDocumentStore(request.workspace.resolve()), journal)
        if request.write:
            journal.start_baseline()  # copies for commands' changes, kept while the model thinks
        run = _Run(self, request, spec, chat_model, bus, store, conversation, journal, events_path)
        try:
            result = await run.drive()
        finally:
            journal.finish()
            self._active.pop(run_id, None)
            close = getattr(chat_model, "aclose", None)
            if close is not None:
                try:
                    await close()  # the HTTP pool of this run's client
                except Exception:
                    pass
            jsonl.close()
            for sink in extra_files:
                sink.close()
        result.events_path = str(events_path)
        return result


class _Run:
    """One run's wiring: context, tools, gate, loop and the ending."""

    def __init__(self, runtime: Runtime, request: RunRequest, spec: ModelSpec, model: ChatModel, bus: EventBus,
                 documents: DocumentStore, conversation: str, journal: RunJournal | None = None,
                 events_path: Path | None = None) -> None:
        self.runtime = runtime
        self.journal = journal
        self.request = request
        self.model = model
        self.bus = bus
        self.emit = Emitter(bus)
        self.documents = documents
        self.conversation = conversation
        self.workspace = Workspace(request.workspace)
        # Generation length is capped whatever the configuration says.
        self.spec = spec.model_copy(update={"max_output_tokens": runtime.limits.output_tokens(spec.max_output_tokens)})
        self.loop: AgentLoop | None = None
        # One budget per run: a window a provider states holds for the root agent and its sub-agents.
        self.budget = ContextBudget(self.spec.context_chars)
        # Tokens, cost and budget of the whole run, root and sub-agents.
        self.meter = RunMeter(spec.pricing, runtime.budget_for(request, spec))
        # The user's hooks (user configuration only; k1412_ls/core/hooks.py).
        self.hooks = RunHooks(runtime.config.hooks, self.workspace.root, bus.redactor, self.emit, bus.run_id,
                              str(events_path or "")) if runtime.config.hooks else None
        # Every agent of the run (root, editor delegate, spawn_agent children) is built by this factory;
        # the guards are shared with sub-agents.
        self.agents = AgentFactory(runtime.registry, runtime.executor, runtime.limits, bus, model, self.spec,
                                   self.budget, self.meter, GuardState(workspace_root=str(self.workspace.root)),
                                   self.workspace.root, hooks=self.hooks,
                                   annotate=TestWatch(journal).annotate if journal is not None else None)
        self.conventions = Conventions()
        self.briefed = self.agents.brief(request.brief())
        self.gate: BoundGate = self.briefed.gate

    def _context(self, services: RunServices) -> ToolContext:
        return ToolContext(
            workspace=self.workspace, documents=self.documents, user=self.request.user, run_id=self.bus.run_id,
            conversation=self.conversation, redactor=self.bus.redactor, write_lock=user_write_lock(self.request.user),
            services=services, skill_roots=self.conventions.skill_roots,
        )

    async def drive(self) -> RunResult:
        request = self.request
        # Instruction files and skills: text for the model, listed here, never a permission (docs/conventions.md).
        focus = [*request.focus, *(self.workspace.root / t for t in self.gate.gate.requirements.targets)]
        try:
            self.conventions = load_conventions(self.workspace, self.runtime.config.conventions, focus,
                                                self.budget.chars, self.bus.redactor.text)
        except (OSError, ToolError, ValueError):  # unreadable guidance is no guidance; the run goes on
            self.conventions = Conventions()
        try:
            self.emit("run.created", {
                "task": request.task, "intent": request.intent, "model": self.spec.id, "provider": self.spec.provider,
                "workspace": str(self.workspace.root), "role": request.role, "pid": os.getpid(),
                "requirements": self.gate.gate.requirements.as_record(),
                "contract": [item for _, item in contract_items(self.gate.gate.requirements)],
                **self.conventions.created(),
            })
        except AuditFailed as failed:
            return self._finish(failed)
        processes = ProcessTable()
        delegator = Delegator(asyncio.get_running_loop(), self._run_child)
        changes = RunChanges(self.workspace.root, self.journal)
        sandbox = RunSandbox(self._sandbox_policy())
        # The user's extra hidden paths are refused by the file tools too (process-wide, like the state dir).
        hide_from_commands(*(os.path.expanduser(p) for p in sandbox.policy.hidden))
        approval = ApprovalGate(
            policy=ApprovalPolicy(self.runtime.config.approval.policy,
                                  parse_rules([r.model_dump() for r in self.runtime.config.approval.rules])),
            sandbox=sandbox.policy, approver=request.approver,
            store=AllowStore(self.runtime.state_dir / "approvals.json"), user=request.user,
            emit=lambda kind, payload: self.emit(kind, payload),
            git_dir_exists=lambda: (self.workspace.root / ".git").exists(), workspace=self.workspace.root,
            others_running=lambda: sandbox.registry.running() > 0)
        ctx = self._context(RunServices(processes=processes, delegation=delegator, changes=changes, sandbox=sandbox,
                                        approval=approval, state=self.runtime.state))
        approval.cancel = ctx.cancel  # a pending question is given up when the run is cancelled
        tool_sets: list[ToolSet] = []
        try:
            await self._open_tool_sources(ctx, tool_sets)
            hook_context = await self._prompt_hooks()
            messages = self._build_context(hook_context)
            agent = self.agents.build(self.briefed, ctx, self.emit)
            if self.hooks is not None and self.hooks.active("Stop"):
                agent.loop.stop_hook = self.hooks.stop
            schema_chars = schemas_chars(agent.offered.schemas())
            self.bus.emit("context.built", {**self._context_payload, "tools": agent.offered.names(),
                                            "chars": request_chars(messages, schema_chars),
                                            "schema_chars": schema_chars, "budget_chars": self.budget.chars,
                                            "configured_budget_chars": self.budget.configured,
                                            "verification": self.gate.state()})
            # Routing is not permission: the model is offered `agent.offered`, but may call any tool it is
            # permitted; the gateway enforces what each tool may do.
            self.loop = agent.loop
            await self.loop.run(messages)
            raise RunFailed("The agent loop ended without a verdict.")
        except RunEnded as ended:
            return self._finish(ended)
        except asyncio.CancelledError:
            current = asyncio.current_task()
            if current is not None:
                current.uncancel()
            return self._finish(RunCancelled("The run was cancelled; its processes were stopped."))
        except Exception as exc:  # the run never raises to its caller
            return self._finish(RunFailed(failure_message(exc)))
        finally:
            ctx.cancel.set()
            delegator.cancel_all()
            processes.kill_all()
            if tool_sets:
                await close_tool_sets(tool_sets, self.runtime.executor)
            changes.close()
            sandbox.close()

    async def _open_tool_sources(self, ctx: ToolContext, opened: list[ToolSet]) -> None:
        """Open the runtime's tool sources (MCP servers) for this run; their tools join what agents may call."""
        extra = await open_tool_sources(self.runtime.tool_sources, self.runtime.executor, ctx, self.budget.chars,
                                        lambda kind, payload: self.emit(kind, payload), opened)
        if extra:
            self.agents.registry = ToolRegistry([*self.runtime.registry, *extra])

    def _sandbox_policy(self) -> SandboxPolicy:
        spec = self.runtime.config.sandbox
        return SandboxPolicy(network=spec.network, mode=spec.mode, git_writable=spec.git_writable,
                             writable=tuple(spec.writable), hidden=tuple(spec.hidden), max_processes=spec.max_processes,
                             env=tuple(spec.env), readable=tuple(spec.readable))

    async def _prompt_hooks(self) -> list[str]:
        """The user's UserPromptSubmit hooks: context they add; a block ends the run before any model call."""
        if self.hooks is None or not self.hooks.active("UserPromptSubmit"):
            return []
        blocked, context = await self.hooks.user_prompt(self.request.task)
        if blocked is not None:
            raise RunFailed(f"The user's UserPromptSubmit hook blocked this request: {blocked}")
        return [f"Context from the user's UserPromptSubmit hook (not instructions):\n{text}" for text in context]

    def _build_context(self, hook_context: Sequence[str] = ()) -> list[dict[str, Any]]:
        state = self.runtime.state
        memories: list[str] = []
        history: list[dict[str, Any]] = []
        if state is not None:
            memories = [m.text for m in state.recall(self.request.user, None, self.runtime.context_policy.max_memories)]
            history = []
            for exchange in state.exchanges(self.request.user, self.conversation):
                # status and files_changed feed the digest of turns that no longer fit; they are never sent.
                verdict = {"status": exchange["status"], "files_changed": exchange["files_changed"]}
                if exchange["task"]:
                    history.append({"role": "user", "content": exchange["task"], **verdict})
                if exchange["answer"]:
                    history.append({"role": "assistant", "content": exchange["answer"], **verdict})
        guidance = [*self.conventions.messages, *hook_context]
        prepared = self.runtime.context_policy.prepare(history, self.briefed.brief.opening(), self.budget.chars,
                                                       memories, guidance)
        self._context_payload = {
            "policy": self.runtime.context_policy.name, "messages": len(prepared.messages),
            "dropped": prepared.dropped, "history_kept": prepared.history_kept, "memories": prepared.memories,
            "digest_turns": prepared.digest_turns, "instructions": len(self.conventions.instructions),
            "skills": len(self.conventions.skills), "skill_catalogue_chars": self.conventions.catalogue_chars,
        }
        return prepared.messages

    def _finish(self, ended: RunEnded) -> RunResult:
        if self.bus.failure is not None and not isinstance(ended, AuditFailed):
            ended = AuditFailed(self.bus.failure)  # whatever the loop made of it, the log failed first
        loop = self.loop
        evidence = self.gate.state()
        changed = files_changed(self.bus.history)
        usage = loop.usage.as_dict() if loop else {"prompt_tokens": 0, "completion_tokens": 0, "reasoning_tokens": 0,
                                                   "cached_tokens": 0}
        iterations = loop.iterations if loop else 0
        message = self.bus.redactor.text(ended.message)
        cost = self.meter.cost.as_dict()
        payload = {"status": ended.status, "message": message[:4000], "evidence": evidence,
                   "files_changed": changed, "iterations": iterations, "usage": usage, "cost": cost}
        # Every run ends with exactly one run.<status> event carrying the result summary; a run whose
        # log could not take an event ends failed, saying why (core/events.py: a sink is never disabled).
        try:
            self.emit(f"run.{ended.status}", payload)
        except AuditFailed as failed:
            return self._finish(failed)
        state = self.runtime.state
        if state is not None and not self.request.role:
            try:
                state.append_exchange(self.request.user, self.conversation, self.bus.run_id, self.request.task,
                                      message, ended.status, changed)
            except Exception:  # history is a convenience; losing it must not change the verdict
                pass
        return RunResult(run_id=self.bus.run_id, status=ended.status, message=message, evidence=evidence,
                         files_changed=changed, iterations=iterations, usage=usage,
                         conversation=self.conversation, cost=cost)

    async def _run_child(self, agent_id: str, role: str, task: str, write: bool,
                         parent: ToolContext) -> SubAgentOutcome:
        emit = Emitter(self.bus, parent.depth + 1, agent_id)
        briefed = self.agents.brief(AgentBrief(task, role=role, write=write), agent_id)
        ctx = child_context(parent, agent_id, parent.services.for_sub_agent())
        agent = self.agents.build(briefed, ctx, emit)
        emit("agent.spawned", {"agent_id": agent_id, "role": role, "task": task, "write": write,
                               "max_iterations": agent.max_iterations})
        loop, gate = agent.loop, briefed.gate
        messages = self.runtime.context_policy.prepare([], briefed.brief.opening(), self.budget.chars,
                                                       guidance=self.conventions.messages).messages
        try:
            await loop.run(messages)
            ended: RunEnded = RunFailed("The sub-agent ended without a verdict.")
        except RunEnded as exc:
            ended = exc
        except asyncio.CancelledError:
            emit("agent.completed", {"agent_id": agent_id, "status": "cancelled", "iterations": loop.iterations})
            gate.detach()
            raise
        if self.loop is not None:
            self.loop.usage.add(loop.usage)
        message = self.bus.redactor.text(ended.message)
        emit("agent.completed", {"agent_id": agent_id, "status": ended.status, "message": message[:2000],
                                 "iterations": loop.iterations, "evidence": gate.state(),
                                 "usage": loop.usage.as_dict(), "cost": loop.cost.as_dict()})
        gate.detach()
        return SubAgentOutcome(agent_id, ended.status, message, loop.iterations)



__all__ = ["DELEGATION_TOOLS", "ModelFactory", "RunRequest", "Runtime"]
