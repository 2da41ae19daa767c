"""The full tool catalogue, assembled from every tool module."""

from __future__ import annotations

from k1412_ls.core.delegation import TOOLS as DELEGATION_TOOLS
from k1412_ls.tools import commands, files, git, patching, processes, runtime_tools, search
from k1412_ls.tools.apply_patch import tool as apply_patch_tool
from k1412_ls.tools.registry import ToolRegistry


def default_registry() -> ToolRegistry:
    """Every tool K1412 offers, in a stable order."""
    return ToolRegistry([
        *files.TOOLS,
        *search.TOOLS,
        *patching.TOOLS,
        *apply_patch_tool.TOOLS,
        *commands.TOOLS,
        *git.TOOLS,
        *processes.TOOLS,
        *runtime_tools.TOOLS,
        *DELEGATION_TOOLS,
    ])
