"""Re-check a run's verdict from its event log alone (``k1412 replay``).

The task comes from the root ``run.created`` payload, the evidence from the
``tool.completed`` events, and the final answer from the run's last
tool-free model reply (or the ``run.completed`` message). Nothing else is
consulted, so a verdict that cannot be recomputed from the log was not
earned by the log.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from k1412_ls.core.events import Event
from k1412_ls.core.evidence.gate import CompletionGate, Verdict
from k1412_ls.core.evidence.ledger import EvidenceLedger
from k1412_ls.core.evidence.requirements import derive_requirements

TERMINAL_STATUS: dict[str, str] = {"run.completed": "completed", "run.unverified": "unverified",
                                   "run.failed": "failed", "run.cancelled": "cancelled"}


def run_task(events: Iterable[Event]) -> str:
    """The task of the root run (empty when the log has no ``run.created``)."""
    for event in events:
        if event.type == "run.created" and event.depth == 0:
            # A delegated editor run records the instruction that decides its requirements as
            # ``intent`` (its task also quotes the selection, whose words must not add any).
            task = event.payload.get("intent") or event.payload.get("task")
            return task if isinstance(task, str) else ""
    return ""


def recorded_requirements(events: Iterable[Event]) -> dict[str, object] | None:
    """The target resolution the root run recorded (policy v4 onwards), if any."""
    for event in events:
        if event.type == "run.created" and event.depth == 0:
            record = event.payload.get("requirements")
            return record if isinstance(record, dict) else None
    return None


def final_message(events: list[Event]) -> str:
    """The root agent's final answer as the log recorded it."""
    for event in reversed(events):
        if event.depth != 0:
            continue
        if event.type == "run.completed" and isinstance(event.payload.get("message"), str):
            status = event.payload.get("status", "completed")
            if status == "completed":
                return event.payload["message"]
        if event.type == "model.responded" and event.payload.get("ok", True) and not event.payload.get("tool_calls"):
            content = event.payload.get("content")
            if isinstance(content, str):
                return content
    return ""


def recorded_status(events: list[Event]) -> str | None:
    """The status the run ended with, from its last root terminal event (None if it never ended)."""
    for event in reversed(events):
        if event.depth != 0:
            continue
        if event.type in TERMINAL_STATUS:
            status = event.payload.get("status")
            return status if isinstance(status, str) else TERMINAL_STATUS[event.type]
        if event.type == "completion.unverified":
            return "unverified"
    return None


def recheck(events: list[Event]) -> Verdict:
    """The verdict the gate gives this log's task, answer and tool events."""
    ordered = sorted(events, key=lambda e: e.seq)
    ledger = EvidenceLedger()
    for event in ordered:
        ledger.record(event)
    gate = CompletionGate(derive_requirements(run_task(ordered), recorded=recorded_requirements(ordered)))
    return gate.check(ledger, final_message(ordered))


@dataclass(frozen=True)
class ReplayComparison:
    """The recorded status next to the recomputed verdict.

    ``agrees`` is None for runs that ended failed or cancelled (or never
    ended): those end on facts other than evidence, so there is nothing to
    compare.
    """

    recorded: str | None
    recomputed: str
    verdict: Verdict
    agrees: bool | None

    def describe(self) -> str:
        """One line for a terminal."""
        if self.agrees is None:
            return f"recorded {self.recorded or 'no ending'}; evidence re-check says {self.recomputed}"
        word = "agrees" if self.agrees else "DISAGREES"
        return f"recorded {self.recorded}, re-check says {self.recomputed}: {word}"


def compare_with_recorded(events: list[Event]) -> ReplayComparison:
    """Recompute the verdict and compare it with the status the run recorded."""
    ordered = sorted(events, key=lambda e: e.seq)
    verdict = recheck(ordered)
    recomputed = "completed" if verdict.complete else "unverified"
    recorded = recorded_status(ordered)
    agrees = recorded == recomputed if recorded in ("completed", "unverified") else None
    return ReplayComparison(recorded, recomputed, verdict, agrees)
