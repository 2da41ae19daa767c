"""The full tool catalogue, assembled from every tool module."""

from __future__ import annotations

from k1412_ls.core.delegation import TOOLS as DELEGATION_TOOLS
from k1412_ls.tools import git, plan_memory
from k1412_ls.tools.files import file_tools, patching, search
from k1412_ls.tools.files.apply_patch import tool as apply_patch_tool
from k1412_ls.tools.processes import process_tools, run_command
from k1412_ls.tools.registry import ToolRegistry


def default_registry() -> ToolRegistry:
    """Every tool K1412 offers, in a stable order."""
    return ToolRegistry([
        *file_tools.TOOLS,
        *search.TOOLS,
        *patching.TOOLS,
        *apply_patch_tool.TOOLS,
        *run_command.TOOLS,
        *git.TOOLS,
        *process_tools.TOOLS,
        *plan_memory.TOOLS,
        *DELEGATION_TOOLS,
    ])
