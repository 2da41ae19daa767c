"""A run's tool sources (the user's MCP servers, wired by ``assembly``): opened before the first model
request, closed off the event loop when the run ends. Core sees only the protocols of ``tools.registry``."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from concurrent.futures import Executor
from typing import Any

from k1412_ls.tools.registry import Tool, ToolContext, ToolSet, ToolSource


async def open_tool_sources(sources: Sequence[ToolSource], executor: Executor, ctx: ToolContext, budget_chars: int,
                            emit: Callable[[str, dict[str, Any]], None], opened: list[ToolSet]) -> list[Tool]:
    """Open each source on a tool thread (``opened`` gets each set at once, for closing); their tools."""
    loop = asyncio.get_running_loop()
    for source in sources:
        opened.append(await loop.run_in_executor(executor, source.open, ctx, budget_chars, emit))
    return [tool for tool_set in opened for tool in tool_set.tools]


async def close_tool_sets(tool_sets: Sequence[ToolSet], executor: Executor) -> None:
    """Close every set (their servers are killed and reaped) on a tool thread; a second cancel does not stop it."""
    def close_all() -> None:
        for tool_set in tool_sets:
            tool_set.close()

    future = asyncio.get_running_loop().run_in_executor(executor, close_all)
    try:
        await asyncio.shield(future)
    except asyncio.CancelledError:  # cancelled again while closing: the closing goes on in its thread
        current = asyncio.current_task()
        if current is not None:
            current.uncancel()


__all__ = ["close_tool_sets", "open_tool_sources"]
