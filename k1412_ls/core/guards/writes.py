"""Write guards: Python that does not parse, and the identity of a write.

A full-file Python write (``write_file`` to ``.py``/``.pyi``/``.pyw``, or an
``apply_patch`` ``*** Add File:`` of one) is parsed before it is written; a
file that does not parse is refused with the parser's message and line. A
text that fails to parse but carries template markers (``{{ `` or ``{%``) is
let through: templated sources are not Python until rendered.
"""

from __future__ import annotations

import ast
import hashlib
import json
import re
from pathlib import PurePosixPath
from typing import Any

from k1412_ls.core.guards.escapes import PYTHON_SUFFIXES
from k1412_ls.core.guards.normalize import normalize_path

_PATCH_HEADER = re.compile(r"^\*\*\* (?:Add|Update|Delete) File: (.+?)\s*$|^\*\*\* Move to: (.+?)\s*$")
WRITE_TOOLS = frozenset({"write_file", "patch_file", "apply_patch"})


def one_line(text: str, limit: int = 120) -> str:
    """``text`` collapsed to one line of at most ``limit`` characters, without a trailing period."""
    flat = " ".join(str(text).split())
    if len(flat) > limit:
        flat = flat[: limit - 1].rstrip() + "…"
    return flat.rstrip(".")


def is_python_path(path: str) -> bool:
    return PurePosixPath(path).suffix.lower() in PYTHON_SUFFIXES


def python_syntax_error(path: str, text: str) -> str | None:
    """The refusal sentence when ``text`` is not valid Python, else None."""
    if "\x00" in text:
        return f"{path} does not parse: it contains a NUL byte; remove it and write the file again."
    try:
        compile(text, path, "exec", flags=ast.PyCF_ONLY_AST, dont_inherit=True)
    except SyntaxError as exc:
        if "{{ " in text or "{%" in text:
            return None
        # Python's own message can hold a second sentence ("invalid syntax. Perhaps …?").
        message = one_line(exc.msg or "invalid syntax").replace(". ", "; ").rstrip("?")
        where = f" at line {exc.lineno}" if exc.lineno else ""
        snippet = one_line(exc.text or "", 60).replace("`", "'")
        shown = f" (`{snippet}`)" if snippet else ""
        return f"{path} does not parse: {message}{where}{shown}; fix the code and write it again."
    return None


def added_files(patch: str) -> list[tuple[str, str]]:
    """``(path, text)`` of every ``*** Add File:`` section of an apply_patch patch that is well formed."""
    files: list[tuple[str, str]] = []
    path: str | None = None
    lines: list[str] = []
    valid = True

    def flush() -> None:
        if path is not None and valid:
            files.append((path, "".join(line + "\n" for line in lines)))

    for line in patch.splitlines():
        if line.startswith("*** "):
            flush()
            path, lines, valid = None, [], True
            if line.startswith("*** Add File: "):
                path = line[len("*** Add File: "):].strip()
            continue
        if path is not None:
            if line.startswith("+"):
                lines.append(line[1:])
            else:
                valid = False  # malformed: the tool itself will explain
    flush()
    return files


def patch_paths(patch: str) -> list[str]:
    """Every path an apply_patch patch names (added, updated, deleted, moved to)."""
    paths: list[str] = []
    for line in patch.splitlines():
        match = _PATCH_HEADER.match(line)
        if match:
            paths.append(normalize_path(match.group(1) or match.group(2)))
    return paths


def body_sha(value: Any) -> str:
    """sha256 of a write body (text as UTF-8, anything else as canonical JSON)."""
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, sort_keys=True)
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def write_key(tool_name: str, arguments: dict[str, Any], path_key: str) -> tuple[str, str, str]:
    """What makes two write calls the same write: tool, target and body."""
    if tool_name == "write_file":
        body: Any = arguments.get("content")
    elif tool_name == "patch_file":
        body = {"edits": arguments.get("edits"), "diff": arguments.get("diff")}
    else:
        body = arguments.get("patch")
    return tool_name, path_key, body_sha(body)


def write_refusal(tool_name: str, arguments: dict[str, Any]) -> str | None:
    """The refusal for a full-file Python write that does not parse, else None."""
    if tool_name == "write_file":
        path, content = arguments.get("path"), arguments.get("content")
        if isinstance(path, str) and isinstance(content, str) and is_python_path(path):
            return python_syntax_error(path, content)
    elif tool_name == "apply_patch" and isinstance(arguments.get("patch"), str):
        for path, text in added_files(arguments["patch"]):
            if is_python_path(path):
                reason = python_syntax_error(path, text)
                if reason is not None:
                    return reason
    return None
