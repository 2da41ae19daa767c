"""Claude Code runs: ``--output-format stream-json`` (one JSON event a line) and ATIF trajectories.

Stream-json: ``assistant`` events hold ``tool_use`` blocks, ``user`` events the ``tool_result``
blocks (matched by id); the ``system``/``init`` event gives the working directory, the ``result``
event the final answer (else the last assistant text). The stream does not carry the prompt: the
task is the first user text in the stream, else the first user step of an ATIF ``trajectory.json``
beside the file, else the ``-p`` argument of a ``claude`` command line in a ``command*.txt`` beside it.

ATIF (``schema_version`` "ATIF-…"): ``steps`` with ``source`` user/agent, ``tool_calls``
(``function_name``, ``arguments``) and ``observation.results`` (``source_call_id``, ``content``).
ATIF has no error flag, so a command's status is read from a leading ``Exit code N`` only.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from k1412_ls.judge.foreign import ForeignRun, Step, UnreadableRun
from k1412_ls.judge.tool_calls import result_text, tool_step
from k1412_ls.shell import parse_line


def _events(path: Path) -> list[dict[str, Any]]:
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise UnreadableRun(f"{path} could not be read as text ({type(exc).__name__}).") from None
    events: list[dict[str, Any]] = []
    for line in lines:
        if not line.strip():
            continue
        try:
            event = json.loads(line)
        except ValueError:
            continue  # text the program printed between events (its stderr), or a torn last line
        if isinstance(event, dict):
            events.append(event)
    if not any(e.get("type") in ("assistant", "user") for e in events):
        raise UnreadableRun(f"{path} holds no assistant or user events, so it is not a Claude Code stream.")
    return events


def parse_claude_code(path: Path) -> ForeignRun:
    """Read one stream-json file; UnreadableRun when it is not one."""
    events = _events(path)
    calls: list[tuple[str, str, dict[str, Any]]] = []
    results: dict[str, tuple[str, bool]] = {}
    texts: list[str] = []
    task = ""
    root = ""
    final = ""
    for event in events:
        kind = event.get("type")
        if kind == "system" and isinstance(event.get("cwd"), str):
            root = root or event["cwd"]
        if kind == "result" and isinstance(event.get("result"), str):
            final = event["result"]
        message = event.get("message") if isinstance(event.get("message"), dict) else {}
        content = message.get("content")
        main = event.get("parent_tool_use_id") is None  # not a sub-agent's own conversation
        if kind == "user" and isinstance(content, str) and main:
            task = task or content
        for block in content if isinstance(content, list) else []:
            if not isinstance(block, dict):
                continue
            if kind == "assistant" and block.get("type") == "tool_use":
                args = block.get("input") if isinstance(block.get("input"), dict) else {}
                calls.append((str(block.get("id", "")), str(block.get("name", "")), args))
            elif kind == "assistant" and block.get("type") == "text" and main:
                texts.append(str(block.get("text", "")))
            elif kind == "user" and block.get("type") == "tool_result":
                results[str(block.get("tool_use_id", ""))] = (result_text(block.get("content")),
                                                             bool(block.get("is_error")))
            elif kind == "user" and block.get("type") == "text" and main:
                task = task or str(block.get("text", ""))
    steps = [_step(name, args, results.get(call_id)) for call_id, name, args in calls]
    task = task or _task_beside(path)
    return ForeignRun(str(path), "claude-code", task, steps, final or (texts[-1] if texts else ""), root, None,
                      "result" if final else "no result event")


def _step(name: str, args: dict[str, Any], result: tuple[str, bool] | None) -> Step:
    return tool_step(name, args, result[0] if result else None, result[1] if result else False)


def _task_beside(path: Path) -> str:
    atif = path.parent / "trajectory.json"
    if atif.is_file():
        try:
            data = json.loads(atif.read_text(encoding="utf-8"))
            return next((str(s.get("message", "")) for s in data.get("steps", [])
                         if isinstance(s, dict) and s.get("source") == "user"), "")
        except (OSError, UnicodeDecodeError, ValueError, AttributeError):
            pass
    for command_file in sorted(path.parent.glob("command*/command.txt")) + sorted(path.parent.glob("command*.txt")):
        try:
            line = command_file.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        for simple in parse_line(line).commands:
            words = list(simple.argv)
            if words and words[0].endswith("claude") and "-p" in words[:-1]:
                return words[words.index("-p") + 1]
    return ""


def looks_like_atif(data: Any) -> bool:
    return isinstance(data, dict) and str(data.get("schema_version", "")).startswith("ATIF") and isinstance(
        data.get("steps"), list)


def parse_atif(path: Path, data: Any | None = None) -> ForeignRun:
    """Read one ATIF trajectory; UnreadableRun when it is not one."""
    if data is None:
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, ValueError) as exc:
            raise UnreadableRun(f"{path} is not a JSON trajectory ({type(exc).__name__}).") from None
    if not looks_like_atif(data):
        raise UnreadableRun(f"{path} is not an ATIF trajectory (no schema_version 'ATIF-…' with steps).")
    task = ""
    final = ""
    steps: list[Step] = []
    agent = data.get("agent") if isinstance(data.get("agent"), dict) else {}
    extra = agent.get("extra") if isinstance(agent.get("extra"), dict) else {}
    cwds = extra.get("cwds") if isinstance(extra.get("cwds"), list) else []
    for step in data["steps"]:
        if not isinstance(step, dict):
            continue
        if step.get("source") == "user" and not task:
            task = str(step.get("message", ""))
            continue
        calls = step.get("tool_calls") if isinstance(step.get("tool_calls"), list) else []
        observation = step.get("observation") if isinstance(step.get("observation"), dict) else {}
        found = {str(r.get("source_call_id")): result_text(r.get("content"))
                 for r in observation.get("results", []) if isinstance(r, dict)}
        for call in calls:
            if not isinstance(call, dict):
                continue
            args = call.get("arguments") if isinstance(call.get("arguments"), dict) else {}
            result = found.get(str(call.get("tool_call_id")))
            failed = result is not None and result.lstrip().startswith("Exit code ")
            steps.append(tool_step(str(call.get("function_name", "")), args, result, failed))
        if not calls and step.get("source") == "agent" and isinstance(step.get("message"), str):
            final = step["message"]
    root = str(cwds[0]) if cwds else ""
    return ForeignRun(str(path), "atif", task, steps, final, root, None, "")
