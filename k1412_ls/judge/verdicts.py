"""The gate's verdict on one foreign run, judged exactly as ``k1412 replay`` re-checks a K1412 log.

The run's event stream (``mapping``) goes through the same ledger, requirements and gate
(``core.evidence.replay.recheck``); nothing here decides what counts as proof. Two things can only
lower the verdict: a run whose task cannot be read is unverified (the gate cannot know what it owed),
and unmapped steps never add evidence (they are named and counted in the result).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from k1412_ls.core.events import Event
from k1412_ls.core.evidence.replay import recheck, run_task
from k1412_ls.judge.foreign import ForeignRun, UnreadableRun
from k1412_ls.judge.mapping import map_run

COMPLETED, UNVERIFIED, UNREADABLE = "completed", "unverified", "unreadable"
EXIT_CODES = {COMPLETED: 0, UNVERIFIED: 3, UNREADABLE: 2}


@dataclass
class Judgement:
    """What ``k1412 judge`` says of one run."""

    file: str
    format: str
    status: str
    task: str = ""
    contract: list[dict[str, str]] = field(default_factory=list)  # [{"item": kind, "mark": "✓"|"✗"}]
    missing: list[str] = field(default_factory=list)
    steps: int = 0
    mapped: int = 0
    unmapped: dict[str, int] = field(default_factory=dict)
    unread_changes: tuple[str, ...] = ()
    error: str = ""

    def as_dict(self) -> dict[str, Any]:
        record: dict[str, Any] = {
            "file": self.file, "format": self.format, "status": self.status, "contract": self.contract,
            "missing": self.missing, "steps": self.steps, "mapped": self.mapped,
            "unmapped": sum(self.unmapped.values()), "unmapped_tools": self.unmapped,
            "unread_changes": list(self.unread_changes), "task": self.task[:200]}
        if self.error:
            record["error"] = self.error
        return record

    def describe(self) -> str:
        """A few lines for a terminal."""
        if self.status == UNREADABLE:
            return f"{self.file}: unreadable · {self.error}"
        marks = " ".join(f"{c['mark']} {c['item']}" for c in self.contract) or "nothing owed"
        lines = [f"{self.file}: {self.status} ({self.format}) · {marks} · {self.mapped}/{self.steps} steps mapped"]
        if self.unmapped:
            lines.append("  unmapped: " + ", ".join(f"{name} ×{n}" for name, n in sorted(self.unmapped.items())))
        lines += [f"  missing: {m}" for m in self.missing[:6]]
        return "\n".join(lines)


def judge_events(file: str, fmt: str, events: list[Event], steps: int, mapped: int,
                 unmapped: dict[str, int], unread: tuple[str, ...] = ()) -> Judgement:
    """The verdict on an event stream (a mapped foreign run, or a K1412 log)."""
    ordered = sorted(events, key=lambda e: e.seq)
    task = run_task(ordered)
    if not task.strip():
        return Judgement(file, fmt, UNVERIFIED, "", [], ["task: the run's task could not be read, so what it "
                                                         "owed is unknown (pass --task)"],
                         steps, mapped, unmapped, unread)
    verdict = recheck(ordered)
    contract = [{"item": kind, "mark": "✓" if kind in verdict.satisfied else "✗"} for kind in verdict.required]
    status = COMPLETED if verdict.complete else UNVERIFIED
    return Judgement(file, fmt, status, task, contract, list(verdict.missing), steps, mapped, unmapped, unread)


def judge_run(run: ForeignRun, task: str | None = None) -> Judgement:
    """The verdict on one parsed foreign run (``task`` replaces the run's own task)."""
    if task is not None:
        run.task = task
    mapped = map_run(run)
    return judge_events(run.file, run.format, mapped.events, mapped.steps, mapped.mapped, mapped.unmapped,
                        mapped.unread_changes)


def unreadable(path: Path, fmt: str, error: UnreadableRun | str) -> Judgement:
    return Judgement(str(path), fmt, UNREADABLE, error=str(error))
