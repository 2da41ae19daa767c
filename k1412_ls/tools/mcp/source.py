"""The MCP tool source of a run: the user's configured servers started for it, their tools offered, all
stopped when it ends (the runtime calls :meth:`McpToolSource.open` and :meth:`McpToolSet.close`).

Trust: servers come only from ``[mcp.servers]`` of the user's own configuration (a workspace file may list
servers in ``[mcp] disabled`` or tools in ``disabled_tools``, never add or change an entry:
``workspace_policy``). A stdio server gets only ``PATH`` (cleaned), ``HOME``, ``LANG`` and the variables
its entry names (``env``, ``env_vars``); values that look secret are taught to the run's redactor.

Budget: when the tools are more than ``[mcp] max_listed_tools``, or their schemas would take more than
:data:`MAX_SCHEMA_SHARE` of the context budget, none is listed up front: the model gets ``mcp_tools`` to
search them and calls them by name (they stay permitted, not offered).
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from k1412_ls.config import McpServerSpec, McpSpec
from k1412_ls.tools.mcp.connections import McpHub, ServerConnection
from k1412_ls.tools.mcp.mcp_tools import McpTool, build_tools, search_tool
from k1412_ls.tools.mcp.schemas import SchemaProblem, tool_name
from k1412_ls.tools.processes.run_command import run_sandbox
from k1412_ls.tools.registry import Tool, ToolContext
from k1412_ls.tools.sandbox.environment import clean_path, looks_secret

log = logging.getLogger("k1412.mcp")
MAX_SCHEMA_SHARE = 0.15
Emit = Callable[[str, dict[str, Any]], None]


def server_env(spec: McpServerSpec, source: dict[str, str] | os._Environ[str]) -> dict[str, str]:
    """The whole environment of a stdio server: a clean PATH, HOME and LANG, and what its entry names."""
    env = {"PATH": clean_path(source.get("PATH", os.defpath))[0]}
    for name in ("HOME", "LANG"):
        if name in source:
            env[name] = source[name]
    for name in spec.env_vars:
        if name in source:
            env[name] = source[name]
    env.update(spec.env)
    return env


def wanted(name: str, spec: McpServerSpec, config: McpSpec) -> str | None:
    """None when the server is to start; else why not."""
    if not spec.enabled:
        return "enabled = false"
    if name in config.disabled:
        return "listed in [mcp] disabled"
    return None


def tool_allowed(server: str, tool: str, spec: McpServerSpec, config: McpSpec) -> bool:
    if spec.tools is not None and tool not in spec.tools:
        return False
    off = set(config.disabled_tools)
    return f"{server}.{tool}" not in off and tool_name(server, tool) not in off


@dataclass
class McpToolSet:
    """The tools one run got from its servers, and the hub to stop when the run ends."""

    hub: McpHub | None
    tools: list[Tool] = field(default_factory=list)
    servers: list[dict[str, Any]] = field(default_factory=list)

    def close(self) -> None:
        if self.hub is not None:
            self.hub.close()
            self.hub = None


@dataclass
class McpToolSource:
    """Starts the configured servers for a run (``Runtime.tool_sources``)."""

    config: McpSpec
    reserved: frozenset[str] = frozenset()  # K1412's own tool names

    def configured(self) -> bool:
        return any(wanted(n, s, self.config) is None for n, s in self.config.servers.items())

    def open(self, ctx: ToolContext, budget_chars: int, emit: Emit) -> McpToolSet:
        """Start every wanted server (at once), list their tools; never raises for a server's failure."""
        source = os.environ if ctx.env is None else ctx.env
        conns: list[ServerConnection] = []
        servers: list[dict[str, Any]] = []
        for name, spec in self.config.servers.items():
            why = wanted(name, spec, self.config)
            if why is not None:
                servers.append({"server": name, "state": "disabled", "reason": why})
                continue
            env = server_env(spec, source)
            secrets = [v for k, v in env.items() if len(v) >= 6 and looks_secret(k, v, ctx.redactor)]
            if secrets:
                ctx.redactor.add(*secrets)
            conns.append(ServerConnection(name, spec, env=env))
        if not conns:
            for entry in servers:
                emit("mcp.server", entry)
            return McpToolSet(None, servers=servers)
        hub = McpHub()
        sandbox = run_sandbox(ctx) if any(c.spec.url is None and c.spec.sandbox for c in conns) else None
        hub.start(conns, sandbox, ctx.workspace.root)
        tools = self._tools(hub, conns, budget_chars)
        for conn in conns:
            offered = sorted(t.remote for t in tools if isinstance(t, McpTool) and t.server == conn.name)
            entry: dict[str, Any] = {"server": conn.name, "state": conn.state, "sandbox": conn.sandbox_label,
                                     "tools": offered}
            if conn.protocol:
                entry["protocol"] = conn.protocol
            if conn.problem:
                entry["error"] = ctx.redactor.text(conn.problem)
            servers.append(entry)
        for entry in servers:
            emit("mcp.server", entry)
        return McpToolSet(hub, tools, servers)

    def _tools(self, hub: McpHub, conns: list[ServerConnection], budget_chars: int) -> list[Tool]:
        chosen: list[tuple[ServerConnection, Any, str]] = []
        names: set[str] = set(self.reserved)
        for conn in conns:
            if conn.state != "running":
                continue
            for remote in conn.tools.values():
                if not tool_allowed(conn.name, remote.name, conn.spec, self.config):
                    continue
                name = tool_name(conn.name, remote.name)
                if name in names:
                    log.warning("MCP tool '%s' of server '%s' left out: its name %s is taken", remote.name,
                                conn.name, name)
                    continue
                names.add(name)
                chosen.append((conn, remote, name))
        built: list[McpTool] = []
        for conn, remote, name in chosen:
            try:
                built.append(build_tools(hub, conn, remote, name, listed=True))
            except SchemaProblem as exc:
                log.warning("MCP tool '%s' of server '%s' left out: %s", remote.name, conn.name, exc)
        chars = sum(len(json.dumps(t.schema())) for t in built)
        if len(built) <= self.config.max_listed_tools and chars <= budget_chars * MAX_SCHEMA_SHARE:
            return list(built)
        hidden = [build_tools(hub, c, r, n, listed=False) for c, r, n in chosen if any(b.name == n for b in built)]
        return [search_tool(hidden), *hidden]


__all__ = ["MAX_SCHEMA_SHARE", "McpToolSet", "McpToolSource", "server_env", "tool_allowed", "wanted"]
