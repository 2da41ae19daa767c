"""Binds the completion gate to a run's event stream (the ledger only ever sees events)."""

from __future__ import annotations

from collections.abc import Iterable

from k1412_ls.core.events import Event, EventBus
from k1412_ls.core.evidence.gate import CompletionGate, Verdict
from k1412_ls.core.evidence.ledger import EvidenceLedger
from k1412_ls.core.evidence.requirements import derive_requirements


class BoundGate:
    """A CompletionGate and the ledger fed by the run's events, as the loop uses them."""

    def __init__(self, gate: CompletionGate, ledger: EvidenceLedger, bus: EventBus | None = None) -> None:
        self.gate = gate
        self.ledger = ledger
        self.max_rejections = gate.max_rejections
        self._bus = bus

    def detach(self) -> None:
        """Stop feeding the ledger (its agent has ended; later events cannot change its verdict)."""
        if self._bus is not None:
            self._bus.remove_sink(self.ledger.record)
            self._bus = None

    @classmethod
    def for_task(cls, task: str, bus: EventBus, agent_id: str | None = None, max_rejections: int = 2) -> BoundGate:
        """A gate for ``task``; with ``agent_id`` only that sub-agent's own tool events count."""
        ledger = EvidenceLedger(agent_id=agent_id)
        for event in list(bus.history):
            ledger.record(event)
        bus.add_sink(ledger.record)
        return cls(CompletionGate(derive_requirements(task), max_rejections=max_rejections), ledger, bus)

    def check(self, final_message: str) -> Verdict:
        return self.gate.check(self.ledger, final_message)

    def state(self) -> dict[str, list[str]]:
        return self.gate.state(self.ledger)


def files_changed(events: Iterable[Event]) -> list[str]:
    """Workspace-relative paths written, created, moved or deleted by successful tool calls, in order."""
    seen: dict[str, None] = {}
    for event in events:
        if event.type != "tool.completed" or not event.payload.get("ok"):
            continue
        facts = event.payload.get("facts") or {}
        if facts.get("kind") != "write" or facts.get("unchanged"):
            continue
        for entry in facts.get("writes") or []:
            for key in ("from", "path"):
                path = entry.get(key)
                if isinstance(path, str) and path:
                    seen.setdefault(path, None)
    return list(seen)
