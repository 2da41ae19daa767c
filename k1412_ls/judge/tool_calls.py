"""Structured tool calls (Claude Code's tools, by name) as steps.

``Bash`` is a command: ``is_error`` with a leading ``Exit code N`` gives its status, a result
without an error is status 0. A command started in the background (``run_in_background``) is a
background process: ``BashOutput`` polls it (``<status>running</status>``, or an end with
``<exit_code>N</exit_code>``) and ``KillShell`` stops it, as K1412's ``process_*`` tools do. ``Write`` is a write (its content known), ``Edit``/``MultiEdit`` an
edit, ``Read`` a read, ``Glob``/``Grep``/``LS`` a search, ``TodoWrite`` a plan note. Sub-agents (``Task``: their own
calls appear in the stream and are read as steps of their own), web tools and anything else are
unmapped: named, counted, never evidence. K1412's own tool names (an exported run) are read as the
tool of the same kind (``run_command`` as ``Bash``, ``write_file`` as ``Write`` …).
"""

from __future__ import annotations

import re
from typing import Any

from k1412_ls.judge.foreign import Step

_EXIT = re.compile(r"^\s*Exit code (-?\d+)")
_BACKGROUND_ID = re.compile(r"background with ID:\s*(\S+)")
_STATUS = re.compile(r"<status>\s*(\w+)\s*</status>")
_EXIT_TAG = re.compile(r"<exit_code>\s*(-?\d+)\s*</exit_code>")
_SEARCH_TOOLS = frozenset({"Glob", "Grep", "LS"})
_NOTE_TOOLS = frozenset({"TodoWrite", "TodoRead", "ExitPlanMode"})


def result_text(content: Any) -> str:
    """A tool result's text (a string, or a list of text blocks)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(str(b.get("text", "")) for b in content if isinstance(b, dict) and b.get("type") == "text")
    return ""


# K1412's own tools (an exported K1412 run read back as ATIF), by the Claude Code tool of the same kind.
_K1412_NAMES = {"run_command": "Bash", "write_file": "Write", "edit_file": "Edit", "apply_patch": "Edit",
                "read_file": "Read", "list_files": "LS", "search_files": "Grep", "git_status": "LS",
                "git_diff": "Grep", "update_plan": "TodoWrite"}


def tool_step(name: str, args: dict[str, Any], result: str | None, is_error: bool) -> Step:
    """The step one structured call made (``result`` None: the call never got a result)."""
    name = _K1412_NAMES.get(name, name)
    text = result or ""
    if name == "Bash":
        command = args.get("command")
        if not isinstance(command, str) or result is None:
            return Step("unmapped", name, note="a command without a result")
        if args.get("run_in_background"):
            found = _BACKGROUND_ID.search(text)
            if found is None or is_error:
                return Step("unmapped", "Bash (background)", command=command, note="no process id came back")
            return Step("process", name, command=command, process_id=found.group(1), op="start", status="running")
        code = 0
        if is_error:
            match = _EXIT.match(text)
            code = int(match.group(1)) if match else 1
            text = text[match.end():].lstrip("\n") if match else text
        timed_out = is_error and "timed out" in text[:200].lower()
        return Step("command", name, command=command, exit_code=None if timed_out else code, output=text,
                    timed_out=timed_out)
    if name in ("BashOutput", "KillShell"):
        process_id = args.get("bash_id") or args.get("shell_id")
        if not isinstance(process_id, str) or result is None:
            return Step("unmapped", name, note="a process call without an id or a result")
        if name == "KillShell":
            return Step("process", name, process_id=process_id, op="cancel", status="killed", ok=not is_error)
        status = _STATUS.search(text)
        code = _EXIT_TAG.search(text)
        state = status.group(1) if status else ""
        if state == "running":
            return Step("process", name, process_id=process_id, op="poll", status="running", output=text)
        if state in ("completed", "failed", "exited") and code is not None:
            return Step("process", name, process_id=process_id, op="poll", status="exited",
                        exit_code=int(code.group(1)), output=text)
        return Step("unmapped", name, note=f"a poll whose status is not known ({state or 'none'})")
    path = args.get("file_path") or args.get("path") or args.get("notebook_path")
    path = path if isinstance(path, str) else ""
    ok = result is not None and not is_error
    if name == "Write":
        content = args.get("content")
        return Step("write", name, path=path, content=content if isinstance(content, str) else None, ok=ok)
    if name in ("Edit", "MultiEdit"):
        new = args.get("new_string")
        if name == "MultiEdit" and isinstance(args.get("edits"), list):
            new = "\n".join(str(e.get("new_string", "")) for e in args["edits"] if isinstance(e, dict))
        return Step("edit", name, path=path, content=new if isinstance(new, str) else None, ok=ok)
    if name == "Read":
        return Step("read", name, path=path, ok=ok, output=text)
    if name in _SEARCH_TOOLS:
        return Step("search", name, path=path, ok=ok, output=text)
    if name in _NOTE_TOOLS:
        return Step("note", name, ok=ok)
    return Step("unmapped", name or "unknown", note="no K1412 tool of this kind")
