"""Tool registry: a tool is a plain function with a pydantic argument model.

The schema sent to the model is derived from the argument model
(``extra="forbid"`` gives ``additionalProperties: false``). Executing a tool
never raises: validation errors, :class:`ToolError` and unexpected
exceptions all become an ``ok: false`` result with one sentence.
"""

from __future__ import annotations

import copy
import functools
import hashlib
import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, Protocol

from pydantic import BaseModel, ValidationError

from k1412_ls.tools.errors import ToolError
from k1412_ls.tools.ports import ReadRecord, ToolContext


@dataclass
class ToolResult:
    """``data`` goes to the model (always with ``ok``); ``facts`` go to the event log as evidence."""

    data: dict[str, Any]
    facts: dict[str, Any] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return bool(self.data.get("ok"))

    @classmethod
    def success(cls, facts: dict[str, Any] | None = None, **fields: Any) -> ToolResult:
        return cls({"ok": True, **fields}, dict(facts or {}))

    @classmethod
    def failure(cls, error: str, facts: dict[str, Any] | None = None, **fields: Any) -> ToolResult:
        return cls({"ok": False, "error": error, **fields}, dict(facts or {}))

    def to_message(self) -> str:
        return json.dumps(self.data, ensure_ascii=False)


Handler = Callable[[Any, ToolContext], ToolResult]


@dataclass(frozen=True)
class Tool:
    """One tool: name, argument model, handler and scheduling facts."""

    name: str
    description: str
    args_model: type[BaseModel]
    handler: Handler
    parallel_safe: bool | Callable[[dict[str, Any]], bool] = False
    read_only: bool = False
    tags: frozenset[str] = frozenset()
    # Argument fields whose values are bodies: published as size + sha256 only.
    body_fields: frozenset[str] = frozenset()
    # The MCP server a tool comes from (k1412_ls/tools/mcp); None for K1412's own. Said in its events.
    server: str | None = None

    def is_parallel_safe(self, arguments: dict[str, Any]) -> bool:
        if callable(self.parallel_safe):
            return bool(self.parallel_safe(arguments))
        return self.parallel_safe

    def schema(self) -> dict[str, Any]:
        """The OpenAI-style function tool definition."""
        return {
            "type": "function",
            "function": {
                "name": self.name,
                "description": self.description,
                "parameters": parameters_schema(self.args_model),
            },
        }

    def public_args(self, arguments: dict[str, Any]) -> dict[str, Any]:
        """Arguments safe to publish: bodies become their size and sha256."""
        public: dict[str, Any] = {}
        for key, value in arguments.items():
            public[key] = body_summary(value) if key in self.body_fields else value
        return public


@functools.lru_cache(maxsize=256)
def _parameters_json(args_model: type[BaseModel]) -> str:
    return json.dumps(inline_schema(args_model.model_json_schema()))


def parameters_schema(args_model: type[BaseModel]) -> dict[str, Any]:
    """The argument model's JSON schema, built once per model (a fresh copy each call)."""
    return json.loads(_parameters_json(args_model))


def body_summary(value: Any) -> dict[str, Any]:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, sort_keys=True)
    data = text.encode("utf-8", "surrogatepass")
    return {"bytes": len(data), "sha256": hashlib.sha256(data).hexdigest()}


def inline_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """Inline ``$defs`` references and drop titles: local servers' grammars often reject ``$ref``."""
    defs = schema.get("$defs", {})

    def walk(node: Any) -> Any:
        if isinstance(node, dict):
            if "$ref" in node:
                name = node["$ref"].rsplit("/", 1)[-1]
                return walk(copy.deepcopy(defs[name]))
            return {k: walk(v) for k, v in node.items() if k not in ("title", "$defs")}
        if isinstance(node, list):
            return [walk(v) for v in node]
        return node

    return walk(schema)


def describe_validation_error(tool: str, exc: ValidationError) -> str:
    parts = []
    for err in exc.errors()[:3]:
        where = ".".join(str(p) for p in err["loc"]) or "arguments"
        parts.append(f"'{where}' {err['msg'].lower()}")
    return f"Invalid arguments for {tool}: {'; '.join(parts)}; fix them and call {tool} again."


class ToolRegistry:
    """The catalogue of tools, and the one place that executes them."""

    def __init__(self, tools: Iterable[Tool] = ()) -> None:
        self._tools: dict[str, Tool] = {}
        for tool in tools:
            self.add(tool)

    def add(self, tool: Tool) -> None:
        if tool.name in self._tools:
            raise ValueError(f"duplicate tool {tool.name}")
        self._tools[tool.name] = tool

    def get(self, name: str) -> Tool | None:
        return self._tools.get(name)

    def names(self) -> list[str]:
        return list(self._tools)

    def __iter__(self):  # type: ignore[no-untyped-def]
        return iter(self._tools.values())

    def __contains__(self, name: object) -> bool:
        return name in self._tools

    def subset(self, names: Iterable[str]) -> ToolRegistry:
        wanted = set(names)
        return ToolRegistry(tool for tool in self._tools.values() if tool.name in wanted)

    def schemas(self) -> list[dict[str, Any]]:
        return [tool.schema() for tool in self._tools.values()]

    def execute(self, name: str, arguments: dict[str, Any], ctx: ToolContext) -> ToolResult:
        """Validate and run one call; never raises."""
        tool = self._tools.get(name)
        if tool is None:
            known = ", ".join(self._tools)
            return ToolResult.failure(f"Unknown tool '{name}'; use one of: {known}.")
        try:
            args = tool.args_model.model_validate(arguments)
        except ValidationError as exc:
            return ToolResult.failure(describe_validation_error(name, exc))
        try:
            return tool.handler(args, ctx)
        except ToolError as exc:
            return ToolResult.failure(str(exc))
        except Exception as exc:  # a tool never raises into the loop
            return ToolResult.failure(
                f"{name} failed unexpectedly ({type(exc).__name__}); try a different approach."
            )


class ToolSet(Protocol):
    """Tools a run got from a :class:`ToolSource`; closed (servers stopped) when the run ends."""

    tools: list[Tool]

    def close(self) -> None: ...


class ToolSource(Protocol):
    """Tools beyond K1412's own catalogue, opened per run (the MCP servers: ``tools.mcp.source``).

    ``open`` runs on a tool thread with the run's context, its context budget in characters and the run's
    event emitter; it never raises for a source's own failure (it says so in events and results).
    """

    def open(self, ctx: ToolContext, budget_chars: int, emit: Callable[[str, dict[str, Any]], None]) -> ToolSet: ...


# ToolContext and ReadRecord live with the run's services in tools/ports.py; most tools import them from here.
__all__ = ["Handler", "ReadRecord", "Tool", "ToolContext", "ToolRegistry", "ToolResult", "ToolSet", "ToolSource",
           "body_summary",
           "describe_validation_error", "inline_schema", "parameters_schema"]
