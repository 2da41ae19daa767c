"""Cutting what the model sees to size: long texts to head and tail, tool results with a re-read hint,
old results to stubs, big call arguments to their size and hash. Used by :mod:`k1412_ls.core.window`.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from typing import Any

from k1412_ls.core.digest import one_line

STUB_HEAD = 160
STUB_TAIL = 80
BIG_ARGUMENT = 200


def _split(text: str, room: int) -> tuple[str, str]:
    """Head (2/3 of ``room``) and tail (1/3), moved to line ends when one is near."""
    head = text[: room * 2 // 3]
    tail = text[len(text) - room // 3:] if room // 3 else ""
    if "\n" in head[len(head) // 2:]:
        head = head[: head.rindex("\n") + 1]
    if "\n" in tail[: len(tail) // 2]:
        tail = tail[tail.index("\n") + 1:]
    return head, tail


def cut_text(text: str, limit: int, what: str, hint: str | Callable[[str, str], str] = "") -> str:
    """``text`` in at most ``limit`` characters: head and tail at line ends, a marker saying what was cut."""
    if len(text) <= limit:
        return text
    head, tail = _split(text, max(0, limit - 240))
    omitted = len(text) - len(head) - len(tail)
    extra = hint(head, tail) if callable(hint) else hint
    before = "" if head.endswith("\n") or not head else "\n"
    after = "" if tail.startswith("\n") or not tail else "\n"
    marker = f"{before}…[K1412 omitted {omitted} characters of {what} here to fit the context window{extra}]…{after}"
    return f"{head}{marker}{tail}"


def cut_result(content: str, limit: int, tool: str) -> str:
    """A tool result cut to about ``limit`` characters, kept valid JSON when it was JSON."""
    try:
        data = json.loads(content)
    except ValueError:
        return cut_text(content, limit, "this result")
    if not isinstance(data, dict):
        return cut_text(content, limit, "this result")
    for key in sorted((k for k, v in data.items() if isinstance(v, str)), key=lambda k: -len(data[k])):
        value = data[key]
        excess = len(json.dumps(data, ensure_ascii=False)) - limit
        if excess <= 0:
            break
        if len(value) <= 240:
            continue
        # Escapes make the JSON longer than the text: find the longest cut that fits (bisection).
        what, hint = f"{tool or 'the tool'}'s {key}", _hint(tool, key, data, value)
        low, high = 240, len(value) - 1
        best = cut_text(value, low, what, hint)
        while low <= high:
            keep = (low + high) // 2
            candidate = cut_text(value, keep, what, hint)
            if len(json.dumps({**data, key: candidate}, ensure_ascii=False)) <= limit:
                best, low = candidate, keep + 1
            else:
                high = keep - 1
        data[key] = best
    text = json.dumps(data, ensure_ascii=False)
    return text if len(text) <= limit else cut_text(text, limit, "this result")


def _hint(tool: str, key: str, data: dict[str, Any], value: str) -> str | Callable[[str, str], str]:
    """How the model sees what was cut: exact line numbers for read_file, a narrower command otherwise."""
    start = data.get("start_line")
    if tool == "read_file" and key == "content" and isinstance(start, int):
        def lines(head: str, tail: str) -> str:
            first = start + head.count("\n")
            tail_lines = tail.count("\n") + (0 if tail.endswith("\n") or not tail else 1)
            last = start + value.count("\n") - (0 if value.endswith("\n") else -1) - 1 - tail_lines
            if last >= first:
                return f"; read_file with start_line={first} and end_line={last} shows the lines cut"
            return "; read_file with a narrower line range shows them"
        return lines
    if tool == "run_command":
        return "; re-run with a narrower command (grep, head, tail, sed -n) to see them"
    return "; call the tool again with narrower arguments to see them"


def result_stub(content: str, tool: str, arguments: str) -> str:
    """What an old tool result becomes: call, arguments, ok / exit code, path, short head and tail."""
    status = ""
    try:
        data = json.loads(content)
    except ValueError:
        data = None
    body = content
    if isinstance(data, dict):
        parts = ["ok" if data.get("ok") else "failed"]
        if "exit_code" in data:
            parts.append(f"exit {data['exit_code']}")
        if isinstance(data.get("path"), str):
            parts.append(f"path {data['path']}")
        if data.get("error"):
            parts.append(f"error: {one_line(str(data['error']), 200)}")
        status = ", ".join(parts)
        longest = max((v for v in data.values() if isinstance(v, str)), key=len, default="")
        body = longest if len(longest) > 40 else content
    head = one_line(body[:STUB_HEAD * 2], STUB_HEAD)
    tail = ""
    if len(body) > STUB_HEAD + STUB_TAIL:
        line = one_line(body[-STUB_TAIL * 2:], STUB_TAIL * 2)
        tail = line if len(line) <= STUB_TAIL else "…" + line[-(STUB_TAIL - 1):]
    lines = [f"[K1412 elided this old result to fit the context window] {tool} {one_line(arguments, 200)} → "
             f"{status or 'result'}; {len(content)} characters.", f"head: {head}"]
    if tail:
        lines.append(f"tail: {tail}")
    again = "read_file" if tool in ("read_file", "write_file", "patch_file", "apply_patch") else "the same call"
    lines.append(f"Re-read with {again} if you need it again.")
    return "\n".join(lines)


def cut_call_arguments(call: dict[str, Any], limit: int, *, stub: bool = False) -> dict[str, Any]:
    """A tool call whose long string arguments are replaced (stub) or cut; the same object when nothing changes."""
    function = call.get("function") or {}
    arguments = function.get("arguments")
    if not isinstance(arguments, str) or len(arguments) <= limit:
        return call
    try:
        data = json.loads(arguments)
    except ValueError:
        return call  # a malformed call is answered by an error; keep it as the model sent it
    if not isinstance(data, dict):
        return call
    changed = False
    for key, value in list(data.items()):
        if isinstance(value, str) and len(value) > (BIG_ARGUMENT if stub else limit // 2):
            digest = hashlib.sha256(value.encode("utf-8", "surrogatepass")).hexdigest()[:12]
            if stub:
                data[key] = f"[K1412 elided {len(value)} characters, sha256 {digest}; read_file shows what was written]"
            else:
                data[key] = cut_text(value, limit // 2, f"the {key} argument", f"; sha256 of the whole: {digest}")
            changed = True
    if not changed:
        return call
    return {**call, "function": {**function, "arguments": json.dumps(data, ensure_ascii=False)}}


__all__ = ["BIG_ARGUMENT", "cut_call_arguments", "cut_result", "cut_text", "result_stub"]
