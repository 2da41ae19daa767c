"""A foreign run as the event stream K1412 would have logged for the same steps.

Each step becomes a ``tool.started``/``tool.completed`` pair with the payload and facts the K1412
tool of the same kind records (``k1412_ls.tools.facts``): a shell command is a ``run_command`` with
exec facts (its exit status, output, test summary) and the changes its text proves
(``command_writes``); a structured write or edit is a ``write_file``/``edit_file`` write; a read is a
``read_file`` read; a search or listing is a ``search_files`` inspection; a plan note is an
``update_plan`` (no evidence value); a background process is ``process_start``/``process_poll``/
``process_cancel`` with process facts. A step that
maps to none of these is logged with no facts, so it can never become evidence. Files the final diff
changed that no step was seen changing are logged as changed by an unread step just before the end:
they count as changes that were never verified.

The workspace root of the foreign run is written as ``.`` in commands and in the final answer (``cd /testbed`` is ``cd .``,
``/testbed/a.py`` is ``./a.py``), because K1412's commands run in the workspace and name its files
relative to it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from k1412_ls.core.events import META, Event
from k1412_ls.core.evidence.invocations import command_shape
from k1412_ls.judge.command_writes import Change, command_changes, scripts_run, written_by_script
from k1412_ls.judge.foreign import ForeignRun, Step, relative_to_root
from k1412_ls.text.vocabulary import extract_targets
from k1412_ls.tools.facts import exec_facts, write_entry, write_facts

_TS = "1970-01-01T00:00:00.000Z"


@dataclass
class MappedRun:
    """The events of one foreign run and what could not be mapped."""

    events: list[Event]
    steps: int
    mapped: int
    unmapped: dict[str, int]  # tool name -> count of steps that prove nothing
    unread_changes: tuple[str, ...]  # files the final diff changed that no step of the run could have changed


def localize(command: str, root: str) -> str:
    """``command`` with the workspace root written as ``.`` (see the module docstring)."""
    if not root or root == "/":
        return command
    pattern = re.compile(r"(?<![\w./~-])" + re.escape(root.rstrip("/")) + r"(?=/|(?![\w.-]))")
    return pattern.sub(".", command)


class _Log:
    def __init__(self, run: ForeignRun) -> None:
        self.run_id = "judge-" + re.sub(r"[^A-Za-z0-9]+", "-", run.file)[-48:].strip("-")
        self.meta = {**META, "judged_format": run.format}
        self.events: list[Event] = []

    def emit(self, kind: str, payload: dict[str, Any]) -> None:
        self.events.append(Event(run_id=self.run_id, seq=len(self.events) + 1, ts=_TS, type=kind, user="judge",
                                 conversation=None, meta=self.meta, payload=payload))

    def tool(self, name: str, args: dict[str, Any], ok: bool, facts: dict[str, Any] | None) -> None:
        call_id = f"call-{len(self.events) + 1}"
        self.emit("tool.started", {"call_id": call_id, "tool": name, "args": args})
        payload: dict[str, Any] = {"call_id": call_id, "tool": name, "ok": ok, "args": args, "executed": True}
        if facts is not None:
            payload["facts"] = facts
        self.emit("tool.completed", payload)


def map_run(run: ForeignRun) -> MappedRun:
    """The event stream of ``run`` (see the module docstring)."""
    log = _Log(run)
    log.emit("run.created", {"task": run.task, "intent": None, "model": run.format, "role": None,
                             "requirements": _resolved_targets(run.task, run.root)})
    changes = _step_changes(run)
    seen = {c.path for found in changes for c in found} | {
        p for s in run.steps if s.kind in ("write", "edit") for p in [relative_to_root(s.path, run.root)] if p}
    unread: list[str] = []
    for path in run.submitted or ():
        if path in seen:
            continue
        index = _changed_by(run.steps, path)
        if index is None:
            unread.append(path)  # no step could have changed it: it was changed before the run began
        else:
            changes[index] = [*changes[index], Change(path, "update")]
    changed: set[str] = set()
    started: dict[str, str] = {}  # background process id -> its command
    unmapped: dict[str, int] = {}
    mapped = 0
    for step, found in zip(run.steps, changes, strict=True):
        if step.kind == "command":
            _command(log, step, run.root, found)
        elif step.kind == "process":
            _process(log, step, run.root, started)
        elif step.kind in ("write", "edit"):
            changed.update(_write(log, step, run.root, changed))
        elif step.kind == "read":
            _look(log, step, run.root, "read_file", "read")
        elif step.kind == "search":
            _look(log, step, run.root, "search_files", "inspect")
        elif step.kind == "note":
            log.tool("update_plan", {}, step.ok, {"kind": "state", "op": "plan"})  # a plan proves nothing
        else:
            unmapped[step.tool or "unknown"] = unmapped.get(step.tool or "unknown", 0) + 1
            log.tool(step.tool or "unknown", {}, False, None)
            continue
        mapped += 1
    if run.final_message:
        log.emit("model.responded", {"iteration": len(run.steps) + 1, "ok": True, "finish_reason": "stop",
                                     "content": localize(run.final_message, run.root), "tool_calls": []})
    return MappedRun(log.events, len(run.steps), mapped, unmapped, tuple(unread))


def _resolved_targets(task: str, root: str) -> dict[str, object]:
    """The files the task names, as workspace paths (what a live run resolves and records when it starts).

    A name under the workspace root (``/app/out.txt`` for a run in ``/app``) is that workspace path; others
    stay as written. Whether they existed is unknown, so none is recorded as existing.
    """
    targets = [relative_to_root(name, root) or name if name.startswith("/") else name
               for name in extract_targets(task)]
    return {"targets": targets, "existing": []}


def _step_changes(run: ForeignRun) -> list[list[Change]]:
    """What each command changed: its own text, and the text of a script it runs that this run wrote."""
    known: dict[str, str] = {}
    result: list[list[Change]] = []
    for step in run.steps:
        if step.kind == "command":
            found = command_changes(step.command, run.root)
            for script in scripts_run(step.command, run.root):
                if script in known:
                    found += [Change(p, "update") for p in written_by_script(script, known[script], run.root)]
            for change in found:
                if change.text is not None:
                    known[change.path] = change.text
                elif change.action == "delete":
                    known.pop(change.path, None)
            result.append(found)
        else:
            path = relative_to_root(step.path, run.root) if step.kind in ("write", "edit") else None
            if path and step.kind == "write" and step.content is not None:
                known[path] = step.content
            result.append([])
    return result


def _changed_by(steps: list[Step], path: str) -> int | None:
    """The last command that names ``path`` and runs something that can write (not a probe or printed text)."""
    name = path.rsplit("/", 1)[-1]
    for index in range(len(steps) - 1, -1, -1):
        step = steps[index]
        if step.kind == "command" and name in step.command and command_shape(step.command).role not in (
                "probe", "print", "vcs", "commit"):
            return index
    return None


def _command(log: _Log, step: Step, root: str, changes: list[Change]) -> None:
    command = localize(step.command, root)
    killed = step.timed_out or step.exit_code is None
    facts = exec_facts(command, ".", None if killed else step.exit_code, step.output, timed_out=step.timed_out)
    facts["observed"] = []
    entries = []
    for change in changes:
        extra: dict[str, Any] = {"by": "command"}
        if change.origin:
            extra["from"] = change.origin
        entries.append(write_entry(change.path, change.text, change.action, **extra))
    facts["changes"] = entries
    facts["changes_complete"] = False
    log.tool("run_command", {"command": command}, step.exit_code == 0 and not step.timed_out, facts)


def _process(log: _Log, step: Step, root: str, started: dict[str, str]) -> None:
    """A background process: ``process_start``/``process_poll``/``process_cancel`` with process facts."""
    if step.op == "start":
        started[step.process_id] = localize(step.command, root)
    command = started.get(step.process_id, localize(step.command, root))
    facts: dict[str, Any] = {"kind": "process", "op": step.op, "process_id": step.process_id, "command": command,
                             "status": step.status, "exit_code": step.exit_code, "cwd": ".", "observed": []}
    if step.op == "poll":
        facts.update({k: v for k, v in exec_facts(command, ".", step.exit_code, step.output).items()
                      if k in ("output", "numbers", "units", "tests")})
    tool = {"start": "process_start", "poll": "process_poll"}.get(step.op, "process_cancel")
    log.tool(tool, {"process_id": step.process_id}, step.ok, facts)


def _write(log: _Log, step: Step, root: str, changed: set[str]) -> set[str]:
    path = relative_to_root(step.path, root)
    if path is None or not step.ok:
        # A write outside the workspace (a live run would not track it) or one that failed proves nothing.
        log.tool("write_file" if step.kind == "write" else "edit_file", {"path": step.path}, False,
                 write_facts([]) if step.ok else None)
        return set()
    action = "update" if step.kind == "edit" or path in changed else "create"
    entry = write_entry(path, step.content, action)
    log.tool("write_file" if step.kind == "write" else "edit_file", {"path": path}, True, write_facts([entry]))
    return {path}


def _look(log: _Log, step: Step, root: str, tool: str, kind: str) -> None:
    path = relative_to_root(step.path, root) if step.path else "."
    if path is None:
        log.tool(tool, {"path": step.path}, step.ok, None)
        return
    log.tool(tool, {"path": path}, step.ok, {"kind": kind, "paths": [path]})
