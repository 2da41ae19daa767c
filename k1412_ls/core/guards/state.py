"""Retry guards: what one run has learned about its writes and commands.

One :class:`GuardState` serves a run (the root agent and its sub-agents).
The scheduler asks :meth:`GuardState.precheck` before a call and reports
every executed call to :meth:`GuardState.observe`. The rules:

- **identical successful write**: a ``write_file`` whose path and content
  equal the last successful ``write_file`` to that path, with no other
  write touching the path since, is skipped and answered ``ok: true,
  unchanged: true``. (Edits made outside the agent are not visible here; a
  stale buffer would refuse the write as a conflict anyway.)
- **identical failed write**: a write call (tool, path, body) equal to one
  that failed is blocked until the body changes, or until its target
  changed (a successful write touched it) or was read again: a conflict
  asks for a re-read, after which the same write is a new attempt.
- **unchanged failed command**: a ``run_command`` equal to one that failed
  (same command after whitespace normalization, same ``cwd``) is blocked
  until a materially different situation exists: a successful write
  (anywhere) since the failure, or another execution since the failure (a
  different command, or a background process started, polled with news, or
  cancelled) whose diagnostic differs from the failed one, such as an
  install that succeeded or a server that began listening. A diagnostic is
  the exit status plus the last non-empty output line (where exceptions,
  compiler verdicts and test summaries land), compared after masking
  run-to-run noise (timestamps, durations, addresses, hashes, temp paths);
  line numbers and counts stay, as they are material. A command that timed
  out may run again with a longer ``timeout_s``. Reads and inspection
  commands (``ls``, ``cat``, ``grep``, ``git status`` … without output
  redirection) never unblock a command: they change nothing it depends on.
  A cancelled command is not a failure.
"""

from __future__ import annotations

import re
import threading
from dataclasses import dataclass
from typing import Any

from k1412_ls.core.evidence.invocations import command_shape
from k1412_ls.core.guards.command_guards import check_command, command_text_key, cwd_key, is_inspection
from k1412_ls.core.guards.normalize import normalize_path
from k1412_ls.core.guards.writes import WRITE_TOOLS, body_sha, one_line, patch_paths, write_key, write_refusal
from k1412_ls.limits import LIMITS
from k1412_ls.tools.facts import write_entry, write_facts
from k1412_ls.tools.registry import ToolResult


def executed_subjects(command: str) -> frozenset[str]:
    """What the programs of a line that run code exercise (``prog:pytest``, ``file:app.py``)."""
    return frozenset(s for i in command_shape(command).invocations if i.proves_execution for s in i.subjects)


def discarded_subjects(command: str) -> frozenset[str]:
    """Subjects of programs that run code whose exit status the line throws away (``pytest || true``)."""
    return frozenset(s for i in command_shape(command).invocations if i.proves_execution and not i.reaches
                     for s in i.subjects)


COMMAND_TOOLS = frozenset({"run_command", "process_start"})
PROCESS_TOOLS = frozenset({"process_start", "process_poll", "process_cancel"})
DEFAULT_TIMEOUT_S = LIMITS.max_command_timeout_s  # run_command's timeout when a call gives none

_NOISE: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(?::\d{2}(?:[.,]\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?"), "<time>"),
    (re.compile(r"\b\d{1,2}:\d{2}:\d{2}(?:[.,]\d+)?\b"), "<time>"),
    (re.compile(r"\b\d+(?:\.\d+)?\s*(?:ms|µs|us|ns|s|sec|secs|seconds|minutes|min)\b"), "<duration>"),
    (re.compile(r"\b0x[0-9a-fA-F]+\b"), "<addr>"),
    (re.compile(r"\b[0-9a-f]{7,64}\b"), "<hash>"),
    (re.compile(r"/tmp/[^\s:'\"()]*"), "<tmp>"),
    (re.compile(r"\b(?:pid|PID|process)\s*[=:]?\s*\d+"), "<pid>"),
)
_SIGNATURE_TAIL = 3000  # errors live in the tail of the output


def diagnostic_signature(text: str) -> str:
    """The last non-empty line of ``text`` with run-to-run noise masked, for "materially different"."""
    lines = [line for line in text[-_SIGNATURE_TAIL:].splitlines() if line.strip()]
    tail = lines[-1] if lines else ""
    for pattern, mask in _NOISE:
        tail = pattern.sub(mask, tail)
    return " ".join(tail.split())


@dataclass
class _FailedWrite:
    seq: int
    error: str
    paths: list[str]


@dataclass
class _FailedCommand:
    seq: int
    summary: str
    signature: str
    timed_out: bool
    timeout_s: float


@dataclass
class _Execution:
    seq: int
    key: tuple[str, str] | None
    signature: str


def _guard_refusal(guard: str, sentence: str) -> ToolResult:
    return ToolResult.failure(sentence, facts={"kind": "guard", "guard": guard})


def _timeout(arguments: dict[str, Any]) -> float:
    value = arguments.get("timeout_s")
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else DEFAULT_TIMEOUT_S


def _output_of(result: ToolResult) -> str:
    facts, data = result.facts, result.data
    for source in (facts, data):
        output = source.get("output")
        if isinstance(output, str) and output:
            return output
    return ""


def _last_line(text: str) -> str:
    lines = [line for line in text.splitlines() if line.strip()]
    return one_line(lines[-1]) if lines else ""


class GuardState:
    """Run-scoped memory behind the retry guards; safe to share across threads and sub-agents."""

    def __init__(self, workspace_root: str | None = None) -> None:
        self._root = normalize_path(str(workspace_root)) if workspace_root else None
        self._lock = threading.Lock()
        self._seq = 0
        self._any_write_seq = 0
        self._write_seq: dict[str, int] = {}  # path → last successful write touching it
        self._read_seq: dict[str, int] = {}   # path → last read of it
        self._written: dict[str, tuple[str, str]] = {}  # path → (content sha, relative path) of write_file
        self._failed_writes: dict[tuple[str, str, str], _FailedWrite] = {}
        self._failed_commands: dict[tuple[str, str], _FailedCommand] = {}
        self._executions: list[_Execution] = []

    def _path_key(self, path: Any) -> str:
        """A path as the facts name it: normalized, relative to the workspace when inside it."""
        if not isinstance(path, str):
            return ""
        key = normalize_path(path)
        if self._root and key.startswith(self._root + "/"):
            key = key[len(self._root) + 1:]
        return key

    def _target_paths(self, tool_name: str, arguments: dict[str, Any]) -> list[str]:
        if tool_name == "apply_patch":
            patch = arguments.get("patch")
            return [self._path_key(p) for p in patch_paths(patch)] if isinstance(patch, str) else []
        return [self._path_key(arguments.get("path"))]

    # precheck -----------------------------------------------------------------

    def precheck(self, tool_name: str, arguments: dict[str, Any]) -> ToolResult | None:
        """A refusal, a skip (``unchanged``), or None when the call should run."""
        if not isinstance(arguments, dict):
            return None
        if tool_name in COMMAND_TOOLS and isinstance(arguments.get("command"), str):
            reason = check_command(arguments["command"])
            if reason is not None:
                return _guard_refusal("command", reason)
            if tool_name == "run_command":
                with self._lock:
                    return self._repeat_command(arguments)
        if tool_name in WRITE_TOOLS:
            reason = write_refusal(tool_name, arguments)
            if reason is not None:
                return _guard_refusal("syntax", reason)
            with self._lock:
                return self._repeat_write(tool_name, arguments)
        return None

    def _repeat_write(self, tool_name: str, arguments: dict[str, Any]) -> ToolResult | None:
        path_key = "" if tool_name == "apply_patch" else self._path_key(arguments.get("path"))
        if tool_name == "write_file" and isinstance(arguments.get("content"), str):
            record = self._written.get(path_key)
            if record is not None and record[0] == body_sha(arguments["content"]):
                rel = record[1]
                return ToolResult.success(
                    facts=write_facts([write_entry(rel, arguments["content"], "update")], unchanged=True),
                    path=rel, unchanged=True,
                    message=f"{rel} already has exactly this content from your earlier write; nothing was written.",
                )
        failed = self._failed_writes.get(write_key(tool_name, arguments, path_key))
        if failed is None:
            return None
        if any(self._write_seq.get(p, 0) > failed.seq or self._read_seq.get(p, 0) > failed.seq
               for p in failed.paths):
            return None
        return _guard_refusal(
            "repeat_write",
            f"This exact write already failed: {failed.error}; change the content or fix the cause first.",
        )

    def _repeat_command(self, arguments: dict[str, Any]) -> ToolResult | None:
        key = (command_text_key(arguments["command"]), cwd_key(arguments.get("cwd")))
        # `pytest || true` (or `pytest; exit 0`) after `pytest` failed would succeed whatever pytest
        # did, and a later success of the same work resolves a failure for the evidence gate: the
        # failure would be hidden. Refuse lines that discard the status of failed work.
        discarded = discarded_subjects(arguments["command"])
        for (failed_text, failed_cwd), earlier in self._failed_commands.items():
            failed = executed_subjects(failed_text)
            if failed_cwd == key[1] and failed & discarded:
                return _guard_refusal(
                    "masked_failure",
                    f"This command discards the exit status of work that failed ({earlier.summary}); run it "
                    "without `|| true`, `; exit 0`, `; echo …` or `&`, and fix what fails.",
                )
        failed = self._failed_commands.get(key)
        if failed is None:
            return None
        if self._any_write_seq > failed.seq:
            return None
        if failed.timed_out and _timeout(arguments) > failed.timeout_s:
            return None
        if any(e.seq > failed.seq and e.key != key and e.signature != failed.signature for e in self._executions):
            return None
        return _guard_refusal(
            "repeat_command",
            f"This command already failed unchanged ({failed.summary}); change the code or the command "
            f"before running it again.",
        )

    # observe ------------------------------------------------------------------

    def observe(self, tool_name: str, arguments: dict[str, Any], result: ToolResult) -> None:
        """Learn from one executed call (its normalized arguments and its result)."""
        if not isinstance(arguments, dict) or result.facts.get("kind") == "guard":
            return
        with self._lock:
            self._seq += 1
            seq = self._seq
            if result.facts.get("kind") == "write" or tool_name in WRITE_TOOLS:
                self._observe_write(seq, tool_name, arguments, result)
            elif result.facts.get("kind") == "read" or tool_name == "read_file":
                paths = result.facts.get("paths") or [arguments.get("path")]
                for path in paths:
                    self._read_seq[self._path_key(path)] = seq
            if tool_name == "run_command":
                self._observe_command(seq, arguments, result)
            elif tool_name in PROCESS_TOOLS or result.facts.get("kind") == "process":
                self._observe_process(seq, result)

    def _observe_write(self, seq: int, tool_name: str, arguments: dict[str, Any], result: ToolResult) -> None:
        path_key = "" if tool_name == "apply_patch" else self._path_key(arguments.get("path"))
        if not result.ok:
            if tool_name in WRITE_TOOLS:
                error = one_line(result.data.get("error") or "the tool reported a failure")
                self._failed_writes[write_key(tool_name, arguments, path_key)] = _FailedWrite(
                    seq, error, self._target_paths(tool_name, arguments))
            return
        if result.data.get("unchanged") or result.facts.get("unchanged"):
            return
        entries = [e for e in result.facts.get("writes") or [] if isinstance(e, dict)]
        touched = {self._path_key(e.get(k)) for e in entries for k in ("path", "from") if e.get(k)}
        if not touched:
            touched = set(self._target_paths(tool_name, arguments))
        for path in touched:
            self._write_seq[path] = seq
        self._any_write_seq = seq
        self._written = {k: v for k, v in self._written.items() if v[1] not in touched and k not in touched}
        if tool_name in WRITE_TOOLS:
            self._failed_writes.pop(write_key(tool_name, arguments, path_key), None)
        if tool_name == "write_file" and isinstance(arguments.get("content"), str):
            rel = next((self._path_key(e["path"]) for e in entries if e.get("path")), path_key)
            self._written[path_key] = (body_sha(arguments["content"]), rel or path_key)

    def _observe_command(self, seq: int, arguments: dict[str, Any], result: ToolResult) -> None:
        command = arguments.get("command")
        if not isinstance(command, str):
            return
        key = (command_text_key(command), cwd_key(arguments.get("cwd")))
        facts, data = result.facts, result.data
        if facts.get("cancelled") or data.get("cancelled"):
            return  # the user stopped it: not a verdict on the command
        output = _output_of(result)
        exit_code = facts.get("exit_code", data.get("exit_code"))
        timed_out = bool(facts.get("timed_out") or data.get("timed_out"))
        error = "" if result.ok else one_line(data.get("error") or "")
        status = f"exit={exit_code} timed_out={timed_out} "
        signature = status + diagnostic_signature(output or error)
        if not is_inspection(command):
            self._executions.append(_Execution(seq, key, signature))
        if result.ok:
            self._failed_commands.pop(key, None)
            return
        last = _last_line(output)
        if timed_out:
            summary = f"timed out: {last}" if last else "timed out"
        elif isinstance(exit_code, int):
            summary = f"exit {exit_code}: {last}" if last else f"exit {exit_code}, no output"
        else:
            last = last or error
            summary = f"error: {last}" if last else "error"
        self._failed_commands[key] = _FailedCommand(seq, one_line(summary, 160), signature, timed_out,
                                                    _timeout(arguments))

    def _observe_process(self, seq: int, result: ToolResult) -> None:
        facts = result.facts
        output = _output_of(result)
        status = facts.get("status", result.data.get("status"))
        op = facts.get("op", "")
        if not output and status == "running" and op == "poll":
            return  # a silent poll of a running process says nothing new
        detail = f"op={op} status={status} exit={facts.get('exit_code', result.data.get('exit_code'))}"
        self._executions.append(_Execution(seq, None, f"{detail} {diagnostic_signature(output)}"))

