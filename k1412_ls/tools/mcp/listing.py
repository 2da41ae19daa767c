"""``k1412 mcp list``: each configured server started as a run would start it, its state and tools, then stopped."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from k1412_ls.config import K1412Config
from k1412_ls.text.redact import Redactor
from k1412_ls.tools.files.documents import DiskDocumentStore
from k1412_ls.tools.files.workspace import Workspace
from k1412_ls.tools.mcp.mcp_tools import McpTool
from k1412_ls.tools.mcp.source import McpToolSource
from k1412_ls.tools.ports import RunServices
from k1412_ls.tools.registry import ToolContext
from k1412_ls.tools.sandbox.command_sandbox import RunSandbox, SandboxPolicy


def list_servers(config: K1412Config, workspace: Path) -> list[dict[str, Any]]:
    """One row per configured server: state, transport, sandbox, the tools a run would get (or the sentence why not)."""
    spec = config.sandbox
    sandbox = RunSandbox(SandboxPolicy(network=spec.network, mode=spec.mode, git_writable=spec.git_writable,
                                       writable=tuple(spec.writable), hidden=tuple(spec.hidden),
                                       max_processes=spec.max_processes, env=tuple(spec.env),
                                       readable=tuple(spec.readable)))
    ctx = ToolContext(workspace=Workspace(workspace), documents=DiskDocumentStore(workspace.resolve()),
                      redactor=Redactor.from_environment(), services=RunServices(sandbox=sandbox))
    opened = McpToolSource(config.mcp).open(ctx, 10**9, lambda kind, payload: None)
    try:
        tools = [t for t in opened.tools if isinstance(t, McpTool)]
        rows = []
        for entry in opened.servers:
            server = config.mcp.servers[entry["server"]]
            row = {**entry, "transport": "http" if server.url else "stdio",
                   "endpoint": server.url or " ".join([server.command or "", *server.args]).strip()}
            if entry["state"] != "disabled":
                row["tools"] = [{"name": t.name, "tool": t.remote, "read_only": t.read_only}
                                for t in tools if t.server == entry["server"]]
            rows.append(row)
        return rows
    finally:
        opened.close()
        sandbox.close()


def render_rows(rows: list[dict[str, Any]]) -> list[str]:
    """The rows as lines for a person."""
    if not rows:
        return ["No MCP servers are configured ([mcp.servers.NAME] in your user configuration)."]
    lines: list[str] = []
    for row in rows:
        head = f"{row['server']}: {row['state']} ({row['transport']}: {row['endpoint']})"
        if row["state"] == "disabled":
            lines.append(f"{head}, {row['reason']}")
            continue
        lines.append(f"{head}, {row.get('sandbox', '')}")
        if row.get("error"):
            lines.append(f"  {row['error']}")
        for tool in row.get("tools", []):
            lines.append(f"  {tool['name']}{' (read-only)' if tool['read_only'] else ''}")
    return lines


__all__ = ["list_servers", "render_rows"]
