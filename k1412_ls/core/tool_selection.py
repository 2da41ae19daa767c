"""Which tools an agent is offered: intent routing plus the agent's permissions.

Routing is not permission: the gateway still enforces everything. This only
keeps the catalogue small so models choose better.
"""

from __future__ import annotations

from k1412_ls.core.delegation import DELEGATION_TOOLS
from k1412_ls.core.intent import IntentDecision, select_tool_names
from k1412_ls.tools.registry import ToolRegistry


def select_registry(full: ToolRegistry, intent: IntentDecision | None, *, write: bool = True,
                    delegation: bool = True, sub_agent: bool = False) -> ToolRegistry:
    """The tools for an agent: minus writes for read-only agents, minus delegation; routed by ``intent``.

    With ``intent`` None nothing is routed away: that is the set the agent is permitted to call.
    """
    names = set(full.names())
    if intent is not None:
        names = set(select_tool_names(list(full), intent.tags))
    if not write:
        names = {name for name in names if (tool := full.get(name)) is not None and tool.read_only}
    if not delegation or sub_agent:
        names -= DELEGATION_TOOLS
    # Keep the registry's own order so the schema list is stable between runs.
    return full.subset(name for name in full.names() if name in names)
