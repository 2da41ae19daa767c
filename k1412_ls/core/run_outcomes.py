"""How a run ends: the result object and the exceptions that carry each ending."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

Status = Literal["completed", "unverified", "failed", "cancelled"]

EXIT_CODES: dict[str, int] = {"completed": 0, "unverified": 3, "failed": 4, "cancelled": 130}


@dataclass
class RunResult:
    """The result object printed by ``k1412 run --json`` and returned by ``k1412.runTask``."""

    run_id: str
    status: Status
    message: str
    evidence: dict[str, list[str]] = field(default_factory=lambda: {"required": [], "satisfied": [], "missing": []})
    files_changed: list[str] = field(default_factory=list)
    iterations: int = 0
    usage: dict[str, int] = field(default_factory=lambda: {"prompt_tokens": 0, "completion_tokens": 0,
                                                           "reasoning_tokens": 0})
    events_path: str = ""
    conversation: str | None = None
    # Usage × the model's pricing, root and sub-agents together (k1412_ls/core/cost.py).
    cost: dict[str, Any] = field(default_factory=lambda: {"amount": 0.0, "currency": "USD", "priced": False})

    def as_dict(self) -> dict[str, Any]:
        return {
            "run_id": self.run_id,
            "status": self.status,
            "message": self.message,
            "evidence": self.evidence,
            "files_changed": self.files_changed,
            "iterations": self.iterations,
            "usage": self.usage,
            "cost": self.cost,
            "events_path": self.events_path,
            "conversation": self.conversation,
        }

    @property
    def exit_code(self) -> int:
        return EXIT_CODES[self.status]


class RunEnded(Exception):
    """Base of the exceptions that end an agent loop; ``message`` is what the user reads."""

    status: Status = "failed"

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class RunCompleted(RunEnded):
    status: Status = "completed"


class RunUnverified(RunEnded):
    status: Status = "unverified"


class RunFailed(RunEnded):
    status: Status = "failed"


class RunCancelled(RunEnded):
    status: Status = "cancelled"
