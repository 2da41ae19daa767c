"""Run events: one typed model, one thread-safe bus, pluggable sinks.

The bus assigns ``seq`` (1, 2, 3 … per root run, shared with sub-agents),
redacts every payload in one place, and fans each event out to its sinks in
order. Events are written under the record rule of k1412_ls/text/lossless.py (any name, any
byte of output, any surrogate, any line separator is kept exactly). A sink that cannot take an
event stops the run: the bus keeps the first failure as one sentence, :meth:`EventBus.emit`
raises :class:`AuditFailed` (the run ends ``failed``), and the run's closing event still goes to
every sink that can take it.
"""

from __future__ import annotations

import os
import threading
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Protocol

from pydantic import BaseModel, ConfigDict

from k1412_ls.core.run_outcomes import RunFailed
from k1412_ls.text import lossless
from k1412_ls.text.redact import Redactor

# agent-loop-v5 over v4: test runs are judged in context (shadowed runners, env -C/PYTEST_ADDOPTS, runner config
# the run changed; find-out requests need the suite they ask about) — docs/evidence.md.
# agent-loop-v6 over v5: every agent is built by one factory (k1412_ls/core/agents.py): the editor's delegate
# opens with the same sub-agent prompt as a spawn_agent child, and tools are routed by the same intent decision
# the requirements use (the request without what it forbids).
# agent-loop-v7 over v6: the gate judges observed facts: bent tests (test_integrity facts) void test proof,
# change-set constraints are checked, commits are facts of the workspace repository, reads must show content,
# test claims are found by subject and outcome, and the contract is recorded and marked item by item.
# agent-loop-v8 over v7: every part of a request is owed (each file a change clause names, each value it sets,
# each backquoted check command), proof must reach the changed copy (no namesake, no import path elsewhere),
# runners that run no test prove none, an answer's own "not done" or unseen quotes end unverified; probes,
# read-only git, rustc --test programs and same-line change-then-test count as the facts they are.
POLICY = "agent-loop-v8"
SCHEDULER = "safe-parallel-v1"
CONTEXT_POLICY = "recent-visible-v3"
# What commands may reach: sandbox-v6 (what the approval read is what runs: judged files pinned read-only; Landlock
# limits opening files for writing to the writable trees; no file leases; see docs/policies.md) over v5 (allow lists:
# seccomp, environment, home) over v4, which is bubblewrap always (or refused), read-only root, network off by default,
# .git read-only, the approval policy (k1412_ls/tools/sandbox/command_sandbox.py, approval.py); v3 over v2: an allow rule's grant
# holds only for a line that runs nothing else but plain readers, no unix sockets with the network off, PATH dirs
# cannot be created or renamed, bare repositories and a home workspace's dot entries are read-only, /proc is
# read-only, hard links into a git dir are undone before a command starts. v4 over v3: hidden and read-only paths
# resolve at each command's start (and stay covered for the run), directories above them inside a writable root
# cannot be renamed, a stopped sandboxed command is killed outright, the next command's sandbox is started ahead.
SANDBOX = "sandbox-v6"
META: dict[str, str] = {"policy": POLICY, "scheduler": SCHEDULER, "context_policy": CONTEXT_POLICY,
                        "sandbox": SANDBOX}

EVENT_TYPES: frozenset[str] = frozenset(
    {
        "run.created",
        "context.built",
        "context.compacted",
        "context.overflowed",
        "run.completed",
        "run.unverified",
        "run.failed",
        "run.cancelled",
        # Appended after the run's end by `k1412 undo` / k1412.undoRun (k1412_ls/core/undo_result.py).
        "run.undone",
        # One per configured MCP server at a run's start: started, failed or disabled (k1412_ls/tools/mcp).
        "mcp.server",
        "model.requested",
        "model.responded",
        "tool.started",
        "tool.completed",
        "tool.batch_limited",
        "completion.rejected",
        "completion.unverified",
        # The gate accepted, but the user's Stop hook blocked completion; the run goes on (k1412_ls/core/hooks.py).
        "completion.blocked",
        # One of the user's hooks ran: event, decision, reason, exit code, time (k1412_ls/core/hooks.py).
        "hook.completed",
        "agent.spawned",
        "agent.completed",
        "plan.updated",
        "approval.requested",
        "approval.decided",
        # A run's cost or token budget was reached; the run ends unverified (k1412_ls/core/cost.py).
        "budget.exhausted",
    }
)


class Event(BaseModel):
    """One run event, exactly the documented event shape."""

    model_config = ConfigDict(extra="forbid")

    run_id: str
    seq: int
    ts: str
    type: str
    user: str
    conversation: str | None
    depth: int = 0
    agent_id: str | None = None
    meta: dict[str, str]
    payload: dict[str, Any]

    def to_json(self) -> str:
        """One line under the record rule (k1412_ls/text/lossless.py): exact, valid UTF-8, no raw line break."""
        return lossless.dumps(self.model_dump())


class AuditFailed(RunFailed):
    """A sink could not record an event: the run stops, since what it does next would go unrecorded."""



class EventSink(Protocol):
    def __call__(self, event: Event) -> None: ...


def utc_timestamp() -> str:
    now = datetime.now(UTC)
    return now.strftime("%Y-%m-%dT%H:%M:%S.") + f"{now.microsecond // 1000:03d}Z"


class JsonlSink:
    """Appends each event as one line with one unbuffered write, so a crash loses at most one event.

    A write that fails part way (a full disk) is cut back to the last whole line, so the log never
    holds half an event in the middle.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        self._fd: int | None = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o600)

    def __repr__(self) -> str:
        return f"the event log {self.path}"

    def __call__(self, event: Event) -> None:
        if self._fd is None:
            raise OSError(f"{self.path} is closed")
        data = (event.to_json() + "\n").encode("utf-8")
        start = os.fstat(self._fd).st_size
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(self._fd, view):]
        except OSError:
            try:
                os.ftruncate(self._fd, start)
            except OSError:
                pass
            raise

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None


@dataclass
class EventBus:
    """Numbers, redacts and publishes the events of one root run (and its sub-agents)."""

    run_id: str
    user: str
    conversation: str | None
    redactor: Redactor
    sinks: list[EventSink] = field(default_factory=list)
    meta: dict[str, str] = field(default_factory=lambda: dict(META))
    _seq: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock)
    failure: str | None = None  # the first sink failure, as the one sentence the run ends with
    history: list[Event] = field(default_factory=list)

    def emit(self, type_: str, payload: dict[str, Any] | None = None, *, depth: int = 0,
             agent_id: str | None = None) -> Event:
        if type_ not in EVENT_TYPES:
            # Consumers (replay, editors, the evidence gate) rely on the catalogue: no ad-hoc types.
            raise ValueError(f"unknown event type {type_!r}; add it to EVENT_TYPES in noun.verb style")
        clean = self.redactor.value(payload or {})
        with self._lock:
            self._seq += 1
            event = Event(
                run_id=self.run_id, seq=self._seq, ts=utc_timestamp(), type=type_, user=self.user,
                conversation=self.conversation, depth=depth, agent_id=agent_id, meta=self.meta, payload=clean,
            )
            self.history.append(event)
            for sink in list(self.sinks):
                try:
                    sink(event)
                except Exception as exc:  # never disabled in silence: the run stops (below)
                    if self.failure is None:
                        self.failure = audit_sentence(sink, event, exc)
            failure = self.failure
        if failure is not None and type_ != "run.failed":
            # Every later event raises too, so a caller that swallowed the first one still stops, and a
            # run that would have ended otherwise ends failed.
            raise AuditFailed(failure)
        return event

    def add_sink(self, sink: EventSink) -> None:
        with self._lock:
            self.sinks.append(sink)

    def remove_sink(self, sink: EventSink) -> None:
        """Stop sending events to ``sink`` (a sub-agent's ledger once that sub-agent has ended)."""
        with self._lock:
            if sink in self.sinks:
                self.sinks.remove(sink)


@dataclass(frozen=True)
class Emitter:
    """The bus as one agent sees it: root (depth 0) or a sub-agent (depth >= 1)."""

    bus: EventBus
    depth: int = 0
    agent_id: str | None = None

    def __call__(self, type_: str, payload: dict[str, Any] | None = None) -> Event:
        return self.bus.emit(type_, payload, depth=self.depth, agent_id=self.agent_id)

    def child(self, agent_id: str) -> Emitter:
        return Emitter(self.bus, self.depth + 1, agent_id)


def audit_sentence(sink: object, event: Event, exc: Exception) -> str:
    """The one sentence a run ends with when ``sink`` could not take ``event``."""
    reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else (str(exc) or type(exc).__name__)
    return (f"The run was stopped because {sink!r} could not record event {event.seq} ({event.type}): "
            f"{reason}; what it did next would have gone unrecorded.")


def read_events(path: Path) -> list[Event]:
    """Read a JSONL event log (split on ``\\n`` only); a torn last line (crash mid-write) is ignored."""
    events: list[Event] = []
    lines = [line for line in lossless.record_lines(path.read_text(encoding="utf-8")) if line.strip()]
    for number, line in enumerate(lines, start=1):
        try:
            events.append(Event.model_validate(lossless.loads(line)))
        except ValueError:
            if number == len(lines):
                break
            raise
    return events

