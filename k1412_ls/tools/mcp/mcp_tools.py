"""MCP server tools as K1412 tools: one :class:`McpTool` per allowed server tool, and the ``mcp_tools`` search.

A call goes the way every K1412 call goes (the scheduler: argument coercion, guards, hooks, events with
``server``; parallel only when the server marks the tool read-only), then here: arguments checked against
the tool's schema, approval (a tool not marked ``readOnlyHint`` asks under ``on-request``, refused under
``never``; an ``[[approval.rules]]`` prefix equal to the tool's name decides first), the workspace watched
for what the server changes while it works (write facts like a command's), the answer redacted and cut.

Facts (kind ``mcp``): ``server``, ``tool``, ``read_only``, ``is_error``, ``sandbox``, ``output`` (excerpt),
``numbers``, ``changes``. The gate reads them as a read of what the server returned and, for ``changes``,
as writes; never as a test run, a build or a commit.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

import mcp_types
from pydantic import BaseModel, ConfigDict, Field

from k1412_ls.text.numbers import extract_numbers
from k1412_ls.tools.errors import ToolError
from k1412_ls.tools.facts import NUMBER_SCAN_CHARS, excerpt
from k1412_ls.tools.mcp.connections import CallAnswer, McpHub, ServerConnection
from k1412_ls.tools.mcp.schemas import argument_problem, normalise_schema
from k1412_ls.tools.registry import Tool, ToolContext, ToolResult
from k1412_ls.tools.sandbox.command_sandbox import SANDBOXED
from k1412_ls.tools.undo.changes import ChangeTracker, change_entries

MAX_RESULT_CHARS = 60_000
MAX_DESCRIPTION = 1_000
SEARCH_TOOL = "mcp_tools"
SEARCH_LIMIT = 12


class McpArguments(BaseModel):
    """Any JSON object: the server tool's own schema checks it (:func:`~k1412_ls.tools.mcp.schemas.argument_problem`)."""

    model_config = ConfigDict(extra="allow")


@dataclass(frozen=True)
class McpTool(Tool):
    """A server's tool under its namespaced name; its schema is the server's, normalised."""

    remote: str = ""
    parameters: dict[str, Any] = field(default_factory=dict)

    def schema(self) -> dict[str, Any]:
        return {"type": "function", "function": {"name": self.name, "description": self.description,
                                                 "parameters": json.loads(json.dumps(self.parameters))}}


def _hints(tool: mcp_types.Tool) -> mcp_types.ToolAnnotations:
    return tool.annotations or mcp_types.ToolAnnotations()


def describe(server: str, tool: mcp_types.Tool, unsandboxed: bool) -> str:
    """The description the model reads: the server's, cut, with where it comes from."""
    text = " ".join((tool.description or tool.title or "").split())[:MAX_DESCRIPTION]
    where = f"[MCP server '{server}'{', runs without the sandbox' if unsandboxed else ''}]"
    return f"{where} {text}".strip()


def render_content(result: mcp_types.CallToolResult) -> str:
    """The answer as text: text blocks as they are, other blocks named, structured content as JSON."""
    parts: list[str] = []
    for block in result.content:
        if isinstance(block, mcp_types.TextContent):
            parts.append(block.text)
        elif isinstance(block, mcp_types.ImageContent | mcp_types.AudioContent):
            parts.append(f"[{block.type}: {block.mime_type}, {len(block.data) * 3 // 4} bytes, not shown]")
        elif isinstance(block, mcp_types.EmbeddedResource):
            resource = block.resource
            if isinstance(resource, mcp_types.TextResourceContents):
                parts.append(f"[resource {resource.uri}]\n{resource.text}")
            else:
                parts.append(f"[resource {resource.uri}: binary, not shown]")
        elif isinstance(block, mcp_types.ResourceLink):
            parts.append(f"[resource link {block.uri}{': ' + block.name if block.name else ''}]")
        else:
            parts.append(f"[{getattr(block, 'type', 'content')} block, not shown]")
    if result.structured_content is not None and not parts:
        parts.append(json.dumps(result.structured_content, ensure_ascii=False))
    return "\n".join(parts)


def _cut(text: str) -> tuple[str, int]:
    if len(text) <= MAX_RESULT_CHARS:
        return text, 0
    return excerpt(text, MAX_RESULT_CHARS), len(text) - MAX_RESULT_CHARS


def _approve(ctx: ToolContext, tool: McpTool, arguments: dict[str, Any], hints: mcp_types.ToolAnnotations) -> None:
    gate = ctx.services.approval
    if tool.read_only:
        reasons: list[str] = []
    else:
        reasons = [f"the MCP server '{tool.server}' does not mark '{tool.remote}' read-only"]
        if hints.destructive_hint is not False:
            reasons.append("it may be destructive")
        if hints.open_world_hint:
            reasons.append("it reaches outside systems")
    if gate is None:
        if reasons:
            raise ToolError(f"{tool.name} was not called: {'; '.join(reasons)}, and this run has no approval "
                            "service to ask the user.")
        return
    shown = f"{tool.name} {json.dumps(ctx.redactor.text(json.dumps(arguments, ensure_ascii=False))[:400])}"
    gate.check_tool(tool.name, reasons, shown)


def _answer_result(tool: McpTool, conn: ServerConnection, answer: CallAnswer, ctx: ToolContext,
                   changes: list[dict[str, Any]], complete: bool) -> ToolResult:
    sandboxed = conn.sandbox_label.startswith(SANDBOXED) or conn.spec.url is not None
    facts: dict[str, Any] = {"kind": "mcp", "server": tool.server, "tool": tool.remote, "read_only": tool.read_only,
                             "sandbox": conn.sandbox_label, "changes": changes, "changes_complete": complete,
                             "progress": answer.progress}
    fields: dict[str, Any] = {"server": tool.server, "duration_ms": answer.duration_ms}
    if not sandboxed:
        fields["sandbox"] = (f"The MCP server '{tool.server}' runs without K1412's sandbox ({conn.sandbox_label}): "
                             "it can reach everything you can.")
    if changes:
        fields["changed"] = [c["path"] for c in changes][:50]
    if answer.cancelled:
        facts["cancelled"] = True
        return ToolResult.failure("The call was cancelled; the server was told to stop.", facts=facts, **fields)
    if answer.timed_out:
        facts["timed_out"] = True
        return ToolResult.failure(f"The MCP server '{tool.server}' did not answer within {conn.spec.timeout_s:g} s; "
                                  "the call was abandoned (the server was told to stop).", facts=facts, **fields)
    if answer.result is None:
        facts["is_error"] = True
        return ToolResult.failure(ctx.redactor.text(answer.error or "No answer."), facts=facts, **fields)
    text = ctx.redactor.text(render_content(answer.result))
    shown, omitted = _cut(text)
    facts.update(is_error=bool(answer.result.is_error), output=excerpt(text),
                 numbers=extract_numbers(text[:NUMBER_SCAN_CHARS], 200))
    fields["content"] = shown
    if omitted:
        fields["omitted_chars"] = omitted
    if answer.result.structured_content is not None:
        structured = ctx.redactor.text(json.dumps(answer.result.structured_content, ensure_ascii=False))
        if len(structured) <= MAX_RESULT_CHARS // 2:
            fields["structured"] = json.loads(structured) if structured.startswith(("{", "[")) else structured
    if answer.result.is_error:
        return ToolResult.failure(f"The MCP tool {tool.name} reported an error: {excerpt(shown, 600)}",
                                  facts=facts, **fields)
    return ToolResult.success(facts=facts, **fields)


def _handler(hub: McpHub):  # type: ignore[no-untyped-def]
    def call(args: McpArguments, ctx: ToolContext, tool: McpTool) -> ToolResult:
        arguments = dict(args.model_extra or {})
        assert tool.server is not None
        conn = hub.connections[tool.server]
        problem = conn.usable()
        if problem is not None:
            raise ToolError(problem)
        current = conn.tools.get(tool.remote)
        if current is None:
            raise ToolError(f"The MCP server '{tool.server}' no longer offers '{tool.remote}'; do without it.")
        try:
            schema = normalise_schema(current.input_schema)
        except ValueError as exc:
            raise ToolError(f"The MCP server '{tool.server}' now gives '{tool.remote}' a schema K1412 cannot use "
                            f"({exc}); do without it.") from None
        invalid = argument_problem(tool.name, schema, arguments)
        if invalid is not None:
            return ToolResult.failure(invalid)
        if ctx.cancel.is_set():
            raise ToolError("The run was cancelled before the call; nothing was sent.")
        _approve(ctx, tool, arguments, _hints(current))
        holder = ctx.services.changes
        tracker = holder.tracker() if holder is not None else ChangeTracker(ctx.workspace.root)
        before = tracker.begin()
        answer = hub.call(tool.server, tool.remote, arguments, conn.spec.timeout_s, ctx.cancel)
        changed, complete = tracker.end(before)
        if holder is None:
            tracker.close()
        return _answer_result(tool, conn, answer, ctx, change_entries(ctx.workspace.root, changed), complete)

    return call


def build_tools(hub: McpHub, conn: ServerConnection, remote: mcp_types.Tool, name: str,
                listed: bool) -> McpTool:
    """The K1412 tool for ``remote``; ValueError (SchemaProblem) when its schema cannot be offered."""
    parameters = normalise_schema(remote.input_schema)
    read_only = _hints(remote).read_only_hint is True
    unsandboxed = conn.spec.url is None and not conn.sandbox_label.startswith(SANDBOXED)
    handler = _handler(hub)
    tool = McpTool(name=name, description=describe(conn.name, remote, unsandboxed), args_model=McpArguments,
                   handler=lambda a, c: handler(a, c, tool), parallel_safe=read_only, read_only=read_only,
                   tags=frozenset({"core" if listed else "mcp-catalogue"}), server=conn.name, remote=remote.name,
                   parameters=parameters)
    return tool


class SearchArgs(BaseModel):
    """Arguments of mcp_tools."""

    model_config = ConfigDict(extra="forbid")

    query: str = Field(default="", description="Words to look for in tool names and descriptions; empty lists all.")
    server: str | None = Field(default=None, description="Only this MCP server's tools.")


def search_tool(catalogue: list[McpTool]) -> Tool:
    """``mcp_tools``: the MCP tools not listed up front, found by words; call them by the names it gives."""
    servers = sorted({t.server for t in catalogue if t.server})

    def search(args: SearchArgs, ctx: ToolContext) -> ToolResult:
        words = [w for w in args.query.lower().split() if w]
        found = [t for t in catalogue if (args.server is None or t.server == args.server)
                 and all(w in f"{t.name} {t.description}".lower() for w in words)]
        shown = [{"name": t.name, "description": t.description[:300], "read_only": t.read_only,
                  "parameters": t.parameters} for t in found[:SEARCH_LIMIT]]
        return ToolResult.success(facts={"kind": "state", "op": "mcp_tools"}, tools=shown, matched=len(found),
                                  note=("Call a tool by its name with arguments that fit its parameters."
                                        if shown else "No MCP tool matches; try other words or an empty query."))

    return Tool(name=SEARCH_TOOL, description=(
        f"Find tools of the MCP servers {', '.join(servers)} ({len(catalogue)} tools, too many to list here): "
        "give words; get names, descriptions and parameter schemas, then call a tool by its name."),
        args_model=SearchArgs, handler=search, parallel_safe=True, read_only=True, tags=frozenset({"core"}))


__all__ = ["SEARCH_TOOL", "McpArguments", "McpTool", "build_tools", "render_content", "search_tool"]
