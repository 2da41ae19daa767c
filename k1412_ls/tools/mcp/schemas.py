"""An MCP tool's name and input schema, made into what a provider's function-calling request accepts.

- names: ``mcp__<server>__<tool>``, characters outside ``[A-Za-z0-9_-]`` replaced, at most 64 characters
  (a longer one ends in a short hash so two stay apart);
- schemas: a JSON object schema; ``$ref`` into ``$defs``/``definitions`` inlined (a reference cycle, a
  reference that leads nowhere, or more than :data:`MAX_DEPTH` levels makes it invalid), ``$schema``,
  ``$id``, ``$comment`` and titles dropped, ``required`` kept to declared properties, checked with
  ``jsonschema`` and at most :data:`MAX_SCHEMA_CHARS` characters. :class:`SchemaProblem` names what is
  wrong; the tool is then left out (one log line), never sent to the provider.

Arguments the model sends are validated against the normalised schema before the server sees them.
"""

from __future__ import annotations

import hashlib
import json
import re
from typing import Any

import jsonschema

MAX_NAME = 64
MAX_DEPTH = 24
MAX_SCHEMA_CHARS = 16_000
PREFIX = "mcp__"
_UNSAFE = re.compile(r"[^A-Za-z0-9_-]")
_DROPPED_KEYS = frozenset({"$schema", "$id", "$comment", "title", "$defs", "definitions"})


class SchemaProblem(ValueError):
    """Why a tool's schema cannot be offered (one clause)."""


def tool_name(server: str, tool: str) -> str:
    """The name the model sees for ``tool`` of ``server``."""
    name = f"{PREFIX}{_UNSAFE.sub('_', server)}__{_UNSAFE.sub('_', tool)}"
    if len(name) <= MAX_NAME:
        return name
    digest = hashlib.sha256(f"{server}\0{tool}".encode()).hexdigest()[:8]
    return f"{name[:MAX_NAME - 9]}_{digest}"


def _resolve(ref: str, root: dict[str, Any]) -> Any:
    if not ref.startswith("#/"):
        raise SchemaProblem(f"it references '{ref[:80]}', outside the schema")
    node: Any = root
    for part in ref[2:].split("/"):
        part = part.replace("~1", "/").replace("~0", "~")
        if not isinstance(node, dict) or part not in node:
            raise SchemaProblem(f"its reference '{ref[:80]}' leads nowhere")
        node = node[part]
    return node


def _walk(node: Any, root: dict[str, Any], seen: tuple[str, ...], depth: int) -> Any:
    if depth > MAX_DEPTH:
        raise SchemaProblem(f"it nests deeper than {MAX_DEPTH} levels")
    if isinstance(node, dict):
        ref = node.get("$ref")
        if isinstance(ref, str):
            if ref in seen:
                raise SchemaProblem(f"its reference '{ref[:80]}' refers to itself")
            target = _walk(_resolve(ref, root), root, (*seen, ref), depth + 1)
            extra = {k: _walk(v, root, seen, depth + 1) for k, v in node.items()
                     if k != "$ref" and k not in _DROPPED_KEYS}
            return {**target, **extra} if isinstance(target, dict) else target
        out: dict[str, Any] = {}
        for key, value in node.items():
            if key in _DROPPED_KEYS:
                continue
            if key == "properties" and isinstance(value, dict):
                out[key] = {str(k): _walk(v, root, seen, depth + 1) for k, v in value.items()}
            else:
                out[key] = _walk(value, root, seen, depth + 1)
        return out
    if isinstance(node, list):
        return [_walk(item, root, seen, depth + 1) for item in node]
    return node


def normalise_schema(schema: Any) -> dict[str, Any]:
    """The provider-ready form of an MCP ``inputSchema``; :class:`SchemaProblem` when it cannot be offered."""
    if not isinstance(schema, dict):
        raise SchemaProblem("its input schema is not a JSON object")
    try:
        json.dumps(schema)
    except (TypeError, ValueError):
        raise SchemaProblem("its input schema is not plain JSON") from None
    out = _walk(schema, schema, (), 0)
    if not isinstance(out, dict):
        raise SchemaProblem("its input schema is not a JSON object")
    kind = out.get("type", "object")
    if kind != "object":
        raise SchemaProblem(f"its input schema has type {json.dumps(kind)[:40]}, not an object")
    out["type"] = "object"
    properties = out.get("properties", {})
    if not isinstance(properties, dict) or not all(isinstance(v, dict | bool) for v in properties.values()):
        raise SchemaProblem("its 'properties' is not a table of schemas")
    out["properties"] = properties
    required = out.get("required")
    if required is not None:
        if not isinstance(required, list) or not all(isinstance(r, str) for r in required):
            raise SchemaProblem("its 'required' is not a list of names")
        kept = [r for r in required if r in properties]
        if kept:
            out["required"] = kept
        else:
            out.pop("required")
    try:
        jsonschema.validators.validator_for(out, default=jsonschema.Draft202012Validator).check_schema(out)
    except jsonschema.SchemaError as exc:
        raise SchemaProblem(f"its input schema is invalid ({exc.message[:120]})") from None
    size = len(json.dumps(out, ensure_ascii=False))
    if size > MAX_SCHEMA_CHARS:
        raise SchemaProblem(f"its input schema is {size} characters, over the {MAX_SCHEMA_CHARS} a tool may take")
    return out


def argument_problem(tool: str, schema: dict[str, Any], arguments: dict[str, Any]) -> str | None:
    """One sentence about the first few ways ``arguments`` break ``schema``; None when they fit."""
    validator = jsonschema.Draft202012Validator(schema)
    errors = sorted(validator.iter_errors(arguments), key=lambda e: list(e.absolute_path))[:3]
    if not errors:
        return None
    parts = []
    for error in errors:
        where = ".".join(str(p) for p in error.absolute_path) or "arguments"
        parts.append(f"'{where}': {error.message[:160]}")
    return f"Invalid arguments for {tool}: {'; '.join(parts)}; fix them and call {tool} again."


__all__ = ["MAX_SCHEMA_CHARS", "PREFIX", "SchemaProblem", "argument_problem", "normalise_schema", "tool_name"]
