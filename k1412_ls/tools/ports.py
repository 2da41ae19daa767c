"""The seams of the tool layer: what a tool gets from the run it serves.

- :class:`ToolContext`: everything a tool may touch during one run (tools get nothing else);
- :class:`RunServices`: the run-scoped services in it, one typed field each, ``None`` where a run
  has none; a tool that needs one gets it through :func:`required`, which answers the model with
  one sentence when it is absent;
- :class:`Delegator`: the protocol of the one service built above the tools (``core.delegation``
  runs sub-agents on the run's event loop); core's class satisfies it structurally, so this layer
  never imports core.

The other services are classes of this layer or below it (process table, sandbox, approval gate,
change tracker, state store) and are named by their own types.
"""

from __future__ import annotations

import dataclasses
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Protocol, TypeVar

from k1412_ls.text.redact import Redactor
from k1412_ls.tools.errors import ToolError

if TYPE_CHECKING:
    from k1412_ls.state.store import StateStore
    from k1412_ls.tools.approval.approval_policy import ApprovalGate
    from k1412_ls.tools.files.documents import DocumentStore
    from k1412_ls.tools.files.workspace import Workspace
    from k1412_ls.tools.processes.process_table import ProcessTable
    from k1412_ls.tools.sandbox.command_sandbox import RunSandbox, SandboxPolicy
    from k1412_ls.tools.undo.changes import RunChanges


@dataclass
class SubAgentOutcome:
    """How a sub-agent ended: its id, status (completed, failed, …), final message and iterations used."""

    agent_id: str
    status: str
    message: str
    iterations: int


class Delegator(Protocol):
    """Runs a sub-agent to its end for ``spawn_agent`` (called from a tool worker thread).

    Raises :class:`ToolError` when the caller may not delegate or the run is cancelled meanwhile.
    """

    def spawn(self, role: str, task: str, write: bool, ctx: ToolContext) -> SubAgentOutcome: ...


# The scrubbed environment of a run's commands, with the key of the environment it was made from.
ChildEnvCache = tuple[tuple[int, int, int], dict[str, str]]


@dataclass
class RunServices:
    """The run-scoped services a tool may use; a run built by the runtime has all but ``child_env`` set.

    ``sandbox`` may be a bare policy (an embedder's): the first command wraps it into a
    :class:`~k1412_ls.tools.sandbox.command_sandbox.RunSandbox` and stores that here. ``child_env`` is filled by the
    first command of the run (``tools.processes.run_command.child_env``).
    """

    processes: ProcessTable | None = None
    delegation: Delegator | None = None
    changes: RunChanges | None = None
    sandbox: RunSandbox | SandboxPolicy | None = None
    approval: ApprovalGate | None = None
    state: StateStore | None = None
    child_env: ChildEnvCache | None = None

    def for_sub_agent(self) -> RunServices:
        """A sub-agent's services: its parent's, without delegation (sub-agents never delegate)."""
        return dataclasses.replace(self, delegation=None)


S = TypeVar("S")


def required(service: S | None, name: str) -> S:
    """``service``, or a ToolError naming it when this run has none (e.g. ``required(ctx.services.state, "state")``)."""
    if service is None:
        raise ToolError(f"The '{name}' service is not available in this run.")
    return service


@dataclass
class ReadRecord:
    """What the agent last saw of a file: used to refuse writes over changes it never saw."""

    sha256: str
    version: int | None = None
    disk: str | None = None  # the file's version on disk at that read (documents.Snapshot.disk)


@dataclass
class ToolContext:
    """Everything a tool may touch during one run. Tools get nothing else."""

    workspace: Workspace
    documents: DocumentStore
    user: str = "default"
    run_id: str = ""
    conversation: str | None = None
    agent_id: str | None = None
    depth: int = 0
    redactor: Redactor = field(default_factory=Redactor)
    cancel: threading.Event = field(default_factory=threading.Event)
    write_lock: threading.RLock = field(default_factory=threading.RLock)
    reads: dict[Path, ReadRecord] = field(default_factory=dict)
    env: dict[str, str] | None = None
    services: RunServices = field(default_factory=RunServices)
    # The user's skills directories: read_file may read inside them by absolute path (read-only, outside the
    # workspace); see k1412_ls/tools/files/skill_files.py.
    skill_roots: tuple[Path, ...] = ()


__all__ = ["ChildEnvCache", "Delegator", "ReadRecord", "RunServices", "SubAgentOutcome", "ToolContext", "required"]
