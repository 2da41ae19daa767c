"""What an adapter asks the runtime for: one run (:class:`RunRequest`), and what one agent of it is told.

Light on purpose (no tools, no model code): the language server builds requests
before the run machinery is imported.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from k1412_ls.tools.approval.approval_policy import Approver


def sub_agent_prompt(role: str, task: str) -> str:
    """The opening every sub-agent gets, the editor's delegate and a spawn_agent child alike."""
    return f"You are a sub-agent with the role: {role}. Do exactly this task and report back:\n\n{task}"


@dataclass(frozen=True)
class AgentBrief:
    """What one agent is asked: the task, the words that decide what it must prove, its role and rights."""

    task: str
    # The words that decide what the agent must prove and which tools it is offered, when the task
    # also quotes material (an editor selection) whose words must not add requirements.
    intent: str | None = None
    # A sub-agent's role ("reviewer", "editor" …); None for the root agent of a run.
    role: str | None = None
    write: bool = True
    # None takes the model's max_iterations (root) or the sub-agent limit.
    max_iterations: int | None = None

    @property
    def sub_agent(self) -> bool:
        return self.role is not None

    @property
    def deciding_words(self) -> str:
        return self.intent or self.task

    def opening(self) -> str:
        """The agent's first user message."""
        return self.task if self.role is None else sub_agent_prompt(self.role, self.task)


@dataclass
class RunRequest:
    """What to do, where, as whom, with which model."""

    task: str
    workspace: Path
    model: str | None = None
    user: str = "default"
    conversation: str | None = None
    events_file: Path | None = None
    # Delegated runs from the editor (k1412.delegate) run as a bounded sub-agent with this role.
    role: str | None = None
    # See AgentBrief.intent.
    intent: str | None = None
    write: bool = True
    max_iterations: int | None = None
    # Asks the user about commands the approval policy will not decide alone (editor prompt, terminal).
    approver: Approver | None = None
    # The run's budget; None takes the configuration's [budget].
    max_cost: float | None = None
    max_tokens: int | None = None
    # More experiment ids for every event's meta (``k1412 eval``: experiment and arm).
    meta: dict[str, str] = field(default_factory=dict)
    # Files or directories the run works on (the editor's file, the terminal's directory): instruction files
    # between the workspace root and them are read (k1412_ls/core/instructions.py).
    focus: tuple[Path, ...] = ()

    def brief(self) -> AgentBrief:
        """What the run's root agent is asked."""
        return AgentBrief(self.task, self.intent, self.role, self.write, self.max_iterations)


__all__ = ["AgentBrief", "RunRequest", "sub_agent_prompt"]
