"""Run events: one typed model, one thread-safe bus, pluggable sinks.

The bus assigns ``seq`` (1, 2, 3 … per root run, shared with sub-agents),
redacts every payload in one place, and fans each event out to its sinks in
order. Sinks never break a run: a failing sink is reported on stderr once and
then skipped.
"""

from __future__ import annotations

import json
import sys
import threading
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, Any, Protocol

from pydantic import BaseModel, ConfigDict

from k1412_ls.text.redact import Redactor

# agent-loop-v5 over v4: test runs are judged in context (shadowed runners, env -C/PYTEST_ADDOPTS, runner config
# the run changed; find-out requests need the suite they ask about) — docs/evidence.md.
# agent-loop-v6 over v5: every agent is built by one factory (k1412_ls/core/agents.py): the editor's delegate
# opens with the same sub-agent prompt as a spawn_agent child, and tools are routed by the same intent decision
# the requirements use (the request without what it forbids).
POLICY = "agent-loop-v6"
SCHEDULER = "safe-parallel-v1"
CONTEXT_POLICY = "recent-visible-v2"
# What commands may reach: sandbox-v4 is bubblewrap always (or refused), read-only root, network off by default,
# .git read-only, the approval policy (k1412_ls/tools/sandbox.py, approval.py); v3 over v2: an allow rule's grant
# holds only for a line that runs nothing else but plain readers, no unix sockets with the network off, PATH dirs
# cannot be created or renamed, bare repositories and a home workspace's dot entries are read-only, /proc is
# read-only, hard links into a git dir are undone before a command starts. v4 over v3: hidden and read-only paths
# resolve at each command's start (and stay covered for the run), directories above them inside a writable root
# cannot be renamed, a stopped sandboxed command is killed outright, the next command's sandbox is started ahead.
SANDBOX = "sandbox-v4"
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
        return json.dumps(self.model_dump(), ensure_ascii=False, separators=(",", ":"))


class EventSink(Protocol):
    def __call__(self, event: Event) -> None: ...


def utc_timestamp() -> str:
    now = datetime.now(UTC)
    return now.strftime("%Y-%m-%dT%H:%M:%S.") + f"{now.microsecond // 1000:03d}Z"


class JsonlSink:
    """Appends each event as one line and flushes it, so a crash loses at most one event."""

    def __init__(self, path: Path) -> None:
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        self._fh: IO[str] = path.open("a", encoding="utf-8")

    def __call__(self, event: Event) -> None:
        self._fh.write(event.to_json() + "\n")
        self._fh.flush()

    def close(self) -> None:
        self._fh.close()


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
    _broken: set[int] = field(default_factory=set)
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
            for index, sink in enumerate(self.sinks):
                if index in self._broken:
                    continue
                try:
                    sink(event)
                except Exception as exc:  # a sink must never break the run
                    self._broken.add(index)
                    print(f"k1412: event sink {sink!r} failed and was disabled: {exc}", file=sys.stderr)
        return event

    def add_sink(self, sink: EventSink) -> None:
        with self._lock:
            self.sinks.append(sink)

    def remove_sink(self, sink: EventSink) -> None:
        """Stop sending events to ``sink`` (a sub-agent's ledger once that sub-agent has ended)."""
        with self._lock:
            if sink in self.sinks:
                index = self.sinks.index(sink)
                self.sinks.pop(index)
                # Indices of broken sinks after it shift down by one.
                self._broken = {i - 1 if i > index else i for i in self._broken if i != index}


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


def read_events(path: Path) -> list[Event]:
    """Read a JSONL event log; a torn last line (crash mid-write) is ignored."""
    events: list[Event] = []
    lines = path.read_text(encoding="utf-8").splitlines()
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            events.append(Event.model_validate_json(line))
        except ValueError:
            if number == len(lines):
                break
            raise
    return events

