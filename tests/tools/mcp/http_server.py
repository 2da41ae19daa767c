"""A streamable HTTP MCP server on 127.0.0.1 written with the SDK (``python http_server.py PORT``): one
read-only tool ``add`` with structured output, one ``note`` tool that is not marked read-only."""

from __future__ import annotations

import sys

from mcp.server.mcpserver import MCPServer
from mcp_types import ToolAnnotations

server = MCPServer("k1412-test-http")


@server.tool(annotations=ToolAnnotations(read_only_hint=True))
def add(a: int, b: int) -> dict[str, int]:
    """Add two integers."""
    return {"sum": a + b}


@server.tool()
def note(text: str) -> str:
    """Keep a note (not marked read-only)."""
    return f"noted: {text}"


if __name__ == "__main__":
    server.run("streamable-http", host="127.0.0.1", port=int(sys.argv[1]))
