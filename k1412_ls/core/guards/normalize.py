"""Argument normalization: repair unambiguous model formatting slips before policy runs.

Coercions follow the tool's JSON schema and happen only where one reading is
possible:

- ``"5"`` → ``5`` for integer fields, ``"2.5"`` → ``2.5`` for number fields,
  ``5.0`` → ``5`` for integer fields;
- ``"true"`` / ``"false"`` (any case) → booleans for boolean fields;
- numbers → strings for string fields (``5`` → ``"5"``); booleans are not
  turned into strings (``True`` could mean ``"true"`` or ``"True"``);
- an enum value that matches exactly one member ignoring case → that member;
- a string holding a JSON array (object) where an array (object) is
  expected → the parsed value; a plain string where a list is expected is
  NOT wrapped into a list (which list the model meant is a guess);
- ``null`` for an optional field that does not accept null → the field is
  dropped, so its default applies.

Paths (``path`` and ``cwd`` fields) are normalized lexically; see
:func:`normalize_path`. Write bodies get the doubly-escaped newline repair
of :mod:`k1412_ls.core.guards.escapes`.
"""

from __future__ import annotations

import copy
import json
import math
import re
from typing import Any
from urllib.parse import unquote

from k1412_ls.core.guards.escapes import decode_edit_pair, decode_patch_text, decode_source_text

PATH_FIELDS = frozenset({"path", "cwd"})
_INT = re.compile(r"\s*[-+]?\d+\s*")
_WRAP_QUOTES = ('"', "'", "`")


def _branches(schema: dict[str, Any]) -> list[dict[str, Any]]:
    """The alternatives of a property schema (``anyOf``/``oneOf`` flattened)."""
    for key in ("anyOf", "oneOf"):
        if isinstance(schema.get(key), list):
            return [b for sub in schema[key] if isinstance(sub, dict) for b in _branches(sub)]
    return [schema]


def _types(schema: dict[str, Any]) -> set[str]:
    types: set[str] = set()
    for branch in _branches(schema):
        kind = branch.get("type")
        if isinstance(kind, str):
            types.add(kind)
        elif isinstance(kind, list):
            types.update(k for k in kind if isinstance(k, str))
        elif "enum" in branch or "const" in branch:
            types.add("string")
        elif "properties" in branch:
            types.add("object")
    return types


def _branch_of(schema: dict[str, Any], kind: str) -> dict[str, Any]:
    for branch in _branches(schema):
        if branch.get("type") == kind or (isinstance(branch.get("type"), list) and kind in branch["type"]):
            return branch
    return {}


def _enum_member(schema: dict[str, Any], value: str) -> str:
    members = [m for b in _branches(schema) for m in b.get("enum", []) if isinstance(m, str)]
    if not members or value in members:
        return value
    folded = [m for m in members if m.lower() == value.strip().lower()]
    return folded[0] if len(folded) == 1 else value


def _coerce_string(value: str, schema: dict[str, Any], types: set[str]) -> Any:
    if "string" in types:
        return _enum_member(schema, value)
    if "integer" in types and _INT.fullmatch(value):
        return int(value)
    if "number" in types:
        try:
            number = float(value)
        except ValueError:
            number = math.nan
        if math.isfinite(number):
            return int(number) if _INT.fullmatch(value) else number
    if "boolean" in types and value.strip().lower() in ("true", "false"):
        return value.strip().lower() == "true"
    stripped = value.strip()
    for kind, opener in (("array", "["), ("object", "{")):
        if kind in types and stripped.startswith(opener):
            try:
                parsed = json.loads(stripped)
            except ValueError:
                return value
            if isinstance(parsed, list if kind == "array" else dict):
                return coerce_value(parsed, schema)
    return value


def coerce_value(value: Any, schema: dict[str, Any]) -> Any:
    """``value`` coerced to ``schema`` where exactly one reading is possible."""
    types = _types(schema)
    if not types:
        return value
    if isinstance(value, str):
        return _coerce_string(value, schema, types)
    if isinstance(value, bool):
        return value
    if isinstance(value, (int, float)):
        if isinstance(value, float) and "integer" in types and "number" not in types and value.is_integer():
            return int(value)
        if "string" in types and not types & {"integer", "number"}:
            return str(value)
        return value
    if isinstance(value, list) and "array" in types:
        items = _branch_of(schema, "array").get("items")
        return [coerce_value(v, items) for v in value] if isinstance(items, dict) else list(value)
    if isinstance(value, dict) and "object" in types:
        return coerce_object(value, _branch_of(schema, "object"))
    return value


def coerce_object(arguments: dict[str, Any], schema: dict[str, Any]) -> dict[str, Any]:
    """Coerce each known property; drop ``null`` where the field is optional and not nullable."""
    properties = schema.get("properties") or {}
    required = set(schema.get("required") or [])
    out: dict[str, Any] = {}
    for key, value in arguments.items():
        prop = properties.get(key)
        if not isinstance(prop, dict):
            out[key] = value  # unknown keys stay: strict validation names them
            continue
        if value is None:
            if key not in required and "null" not in _types(prop):
                continue
            out[key] = value
            continue
        out[key] = coerce_value(value, prop)
    return out


def normalize_path(path: str) -> str:
    """A path as the model meant it, changed only lexically.

    - surrounding whitespace and one pair of wrapping quotes/backticks go;
    - a ``file://`` URI becomes its (percent-decoded) path;
    - backslashes become slashes only in a Windows-looking relative path:
      one with no forward slash, no ``\\ `` (a shell-escaped space) and no
      drive letter; POSIX allows ``\\`` in names, so mixed forms stay;
    - empty and ``.`` components and trailing slashes go (``./a//b/`` → ``a/b``);
    - ``..`` is kept: collapsing it lexically changes the meaning when a
      component is a symlink, and confinement resolves it for real.
    """
    text = path.strip()
    if len(text) >= 2 and text[0] == text[-1] and text[0] in _WRAP_QUOTES:
        text = text[1:-1].strip()
    if text.lower().startswith("file://"):
        rest = unquote(text[7:])
        if rest.lower().startswith("localhost/"):
            rest = rest[9:]
        text = rest
    if "\\" in text and "/" not in text and "\\ " not in text and not re.match(r"[A-Za-z]:", text):
        text = text.replace("\\", "/")
    if not text:
        return path.strip()
    absolute = text.startswith("/")
    parts = [p for p in text.split("/") if p not in ("", ".")]
    joined = "/".join(parts)
    if absolute:
        return "/" + joined
    return joined or "."


def _decode_bodies(tool_name: str, args: dict[str, Any]) -> None:
    path = args.get("path") if isinstance(args.get("path"), str) else None
    if tool_name == "write_file" and isinstance(args.get("content"), str):
        args["content"] = decode_source_text(args["content"], path)
    elif tool_name == "patch_file":
        if isinstance(args.get("diff"), str):
            args["diff"] = decode_patch_text(args["diff"], unified=True)
        edits = args.get("edits")
        if isinstance(edits, list):
            fixed = []
            for edit in edits:
                if isinstance(edit, dict) and isinstance(edit.get("old_text"), str) \
                        and isinstance(edit.get("new_text"), str):
                    old, new = decode_edit_pair(edit["old_text"], edit["new_text"], path)
                    edit = {**edit, "old_text": old, "new_text": new}
                fixed.append(edit)
            args["edits"] = fixed
    elif tool_name == "apply_patch" and isinstance(args.get("patch"), str):
        args["patch"] = decode_patch_text(args["patch"], unified=False)


def normalize_arguments(tool_name: str, arguments: dict[str, Any], schema: dict[str, Any]) -> dict[str, Any]:
    """A new, normalized copy of ``arguments`` for ``tool_name``; never raises.

    ``schema`` is the tool's parameters schema (``Tool.schema()["function"]
    ["parameters"]``); the full function definition is accepted too.
    """
    try:
        if not isinstance(arguments, dict):
            return arguments
        if isinstance(schema, dict) and isinstance(schema.get("function"), dict):
            schema = schema["function"].get("parameters") or {}
        args = coerce_object(copy.deepcopy(arguments), schema if isinstance(schema, dict) else {})
        for key in PATH_FIELDS:
            if isinstance(args.get(key), str):
                args[key] = normalize_path(args[key])
        _decode_bodies(tool_name, args)
        return args
    except Exception:  # normalization is a courtesy: the raw arguments still get validated
        return dict(arguments) if isinstance(arguments, dict) else arguments
