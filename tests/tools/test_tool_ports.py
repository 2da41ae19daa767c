"""The run's services as tools see them (k1412_ls/tools/ports.py): typed fields, one sentence when one is absent."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from k1412_ls.core.agents import child_context
from k1412_ls.core.delegation import TOOLS as DELEGATION
from k1412_ls.tools.errors import ToolError
from k1412_ls.tools.files.documents import DiskDocumentStore
from k1412_ls.tools.files.workspace import Workspace
from k1412_ls.tools.ports import RunServices, SubAgentOutcome, ToolContext, required
from k1412_ls.tools.processes.process_table import ProcessTable
from k1412_ls.tools.processes.process_tools import TOOLS as PROCESS_TOOLS
from k1412_ls.tools.registry import Tool, ToolRegistry
from k1412_ls.tools.sandbox.command_sandbox import SandboxPolicy
from k1412_ls.tools.undo.changes import RunChanges


def _ctx(tmp_path: Path, services: RunServices) -> ToolContext:
    ws = tmp_path / "ws"
    ws.mkdir(exist_ok=True)
    return ToolContext(workspace=Workspace(ws), documents=DiskDocumentStore(), run_id="r-ports", services=services)


@pytest.mark.parametrize(("tools", "name", "arguments", "service"), [
    (DELEGATION, "spawn_agent", {"role": "reviewer", "task": "Review app.py."}, "delegation"),
    (PROCESS_TOOLS, "process_poll", {"process_id": "p1"}, "processes"),
    (PROCESS_TOOLS, "process_start", {"command": "true"}, "processes"),
])
def test_a_tool_without_its_service_answers_in_one_sentence(tmp_path: Path, tools: list[Tool], name: str,
                                                            arguments: dict[str, object], service: str) -> None:
    result = ToolRegistry(tools).execute(name, arguments, _ctx(tmp_path, RunServices()))
    assert result.data == {"ok": False, "error": f"The '{service}' service is not available in this run."}


def test_required_returns_the_service_itself() -> None:
    table = ProcessTable()
    assert required(table, "processes") is table
    with pytest.raises(ToolError, match=re.escape("The 'state' service is not available in this run.")):
        required(None, "state")


def test_a_sub_agent_shares_its_parents_services_but_cannot_delegate(tmp_path: Path) -> None:
    class Delegating:
        def spawn(self, role: str, task: str, write: bool, ctx: ToolContext) -> SubAgentOutcome:
            raise AssertionError("a sub-agent must never reach the delegator")

    table, policy, changes = ProcessTable(), SandboxPolicy(network=True), RunChanges(tmp_path)
    try:
        parent = _ctx(tmp_path, RunServices(processes=table, sandbox=policy, changes=changes,
                                            delegation=Delegating()))
        child = child_context(parent, "agent-1", parent.services.for_sub_agent())
        assert (child.depth, child.agent_id, child.cancel) == (1, "agent-1", parent.cancel)
        assert child.services.processes is table and child.services.sandbox is policy
        assert child.services.changes is changes and child.services.delegation is None
        assert parent.services.delegation is not None  # the parent keeps its own
        refused = ToolRegistry(DELEGATION).execute("spawn_agent", {"role": "x", "task": "recurse"}, child)
        assert refused.data["error"] == "The 'delegation' service is not available in this run."
    finally:
        changes.close()
