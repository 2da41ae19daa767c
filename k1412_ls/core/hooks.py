"""Hooks: the user's own commands around a run, read the way Claude Code reads its command hooks.

``[[hooks]]`` entries come from the user's configuration only (a workspace file that names one is
refused, k1412_ls/config.py). Four events:

* ``UserPromptSubmit`` — before the run starts; may block the request (the run ends ``failed`` with the
  hook's reason) or add context (plain stdout, or ``hookSpecificOutput.additionalContext``);
* ``PreToolUse`` — before a matching tool call; may deny it with a reason the model reads;
* ``PostToolUse`` — after a matching tool call; may add context to the result the model reads;
* ``Stop`` — when the gate would accept the final answer; may block completion with a reason, and the
  run goes on as after a ``completion.rejected`` (at most ``max_rejections`` times, then ``unverified``).

The contract is Claude Code's: JSON on stdin (``session_id``, ``transcript_path``, ``cwd``,
``hook_event_name`` and the event's fields, e.g. ``tool_name``/``tool_input``), redacted like every event;
exit 0 is no objection, with optional JSON on stdout (``{"decision": "block", "reason": ...}``,
``hookSpecificOutput.permissionDecision`` ``deny``/``ask``/``allow``, ``additionalContext``); exit 2 blocks
with stderr as the reason; any other exit, a crash or a timeout is a non-blocking error unless the hook
says ``on_error = "block"``. Matchers are regular expressions over the tool's name, K1412's
(``run_command``) or Claude's (``Bash``).

A hook can only make K1412 stricter: ``allow`` never skips an approval the policy asks for, and a Stop
hook is consulted only once the gate accepts, so nothing a hook says turns ``unverified`` into
``completed``. Every hook run is a ``hook.completed`` event (decision, reason, exit code, time).
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from k1412_ls.config import HookSpec
from k1412_ls.core.model_port import ToolCall
from k1412_ls.text.redact import Redactor
from k1412_ls.tools.processes.hook_process import HookProcessResult, run_hook_process
from k1412_ls.tools.registry import ToolResult

# K1412's tools under the names Claude Code's hooks match on, so users can reuse their matchers.
CLAUDE_NAMES: dict[str, str] = {
    "run_command": "Bash", "write_file": "Write", "patch_file": "Edit", "apply_patch": "Edit",
    "read_file": "Read", "list_files": "LS", "search_files": "Grep", "update_plan": "TodoWrite",
    "spawn_agent": "Task",
}
MAX_PAYLOAD_STRING = 20_000  # longer strings in a payload (a big tool result) are cut
MAX_REASON = 2_000

HookProcess = Callable[[str, bytes, Path, float], HookProcessResult]


@dataclass(frozen=True)
class HookDecision:
    """What one hook run said: ``none``, ``allow``, ``deny`` (PreToolUse), ``block``, ``context`` or ``error``."""

    action: str
    reason: str = ""
    context: str = ""


def _json_object(text: str) -> dict[str, Any] | None:
    stripped = text.strip()
    if not stripped.startswith("{"):
        return None
    try:
        value = json.loads(stripped)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def _text(value: Any) -> str:
    return str(value).strip()[:MAX_REASON] if isinstance(value, str | int | float) else ""


def interpret(event: str, result: HookProcessResult, *, on_error: str = "continue") -> HookDecision:
    """Claude Code's hook contract applied to one finished hook process."""
    blocking = "deny" if event == "PreToolUse" else "block"
    if result.timed_out or result.exit_code is None:
        reason = "the hook was killed at its timeout" if result.timed_out else (result.error or "it did not run")
        return HookDecision(blocking if on_error == "block" else "error", reason)
    if result.exit_code == 2:
        return HookDecision(blocking, result.stderr.strip()[:MAX_REASON] or "a hook blocked this (no reason given)")
    if result.exit_code != 0:
        reason = f"exit {result.exit_code}: {result.stderr.strip()[:MAX_REASON]}".rstrip(": ")
        return HookDecision(blocking if on_error == "block" else "error", reason)
    output = _json_object(result.stdout)
    if output is None:
        text = result.stdout.strip()
        # Only UserPromptSubmit reads plain stdout (as context), like Claude Code.
        return HookDecision("context", context=text[:MAX_REASON]) if event == "UserPromptSubmit" and text \
            else HookDecision("none")
    specific = output.get("hookSpecificOutput") if isinstance(output.get("hookSpecificOutput"), dict) else {}
    reason = _text(output.get("reason"))
    if event == "PreToolUse":
        decision = specific.get("permissionDecision") or {"block": "deny", "approve": "allow"}.get(
            str(output.get("decision")), None)
        if decision in ("deny", "ask"):
            why = _text(specific.get("permissionDecisionReason")) or reason
            if decision == "ask":
                why = f"the hook asks for the user's approval, which only the approval policy can give. {why}"
            return HookDecision("deny", why.strip() or "the hook denied this call")
        if output.get("continue") is False:
            return HookDecision("deny", _text(output.get("stopReason")) or "the hook stopped this call")
        if decision == "allow":
            return HookDecision("allow", _text(specific.get("permissionDecisionReason")))
    elif output.get("decision") == "block" or (event == "UserPromptSubmit" and output.get("continue") is False):
        return HookDecision("block", reason or _text(output.get("stopReason")) or "a hook blocked this")
    context = _text(specific.get("additionalContext"))
    if event == "PostToolUse" and not context:
        context = reason
    return HookDecision("context", context=context) if context else HookDecision("none")


def _cut_strings(value: Any) -> Any:
    if isinstance(value, str):
        return value if len(value) <= MAX_PAYLOAD_STRING else value[:MAX_PAYLOAD_STRING] + "…[cut]"
    if isinstance(value, dict):
        return {k: _cut_strings(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_cut_strings(v) for v in value]
    return value


def matches(matcher: str, tool: str) -> bool:
    """Whether a hook's matcher selects ``tool`` (by K1412's name or Claude Code's)."""
    if matcher in ("", "*"):
        return True
    names = [tool, CLAUDE_NAMES.get(tool, "")]
    return any(name and re.fullmatch(matcher, name) for name in names)


@dataclass
class RunHooks:
    """The user's hooks for one run: each fired event runs the matching hooks in order, and is recorded."""

    specs: Sequence[HookSpec]
    workspace: Path
    redactor: Redactor
    emit: Callable[[str, dict[str, Any]], Any]
    session_id: str
    transcript_path: str = ""
    run_process: HookProcess = run_hook_process

    def active(self, event: str) -> bool:
        return any(spec.event == event for spec in self.specs)

    async def _fire(self, event: str, fields: dict[str, Any], tool: str | None = None) -> list[HookDecision]:
        chosen = [s for s in self.specs if s.event == event and (tool is None or matches(s.matcher, tool))]
        if not chosen:
            return []
        payload = {"session_id": self.session_id, "transcript_path": self.transcript_path,
                   "cwd": str(self.workspace), "hook_event_name": event, **fields}
        body = json.dumps(self.redactor.value(_cut_strings(payload)), ensure_ascii=False).encode("utf-8")
        decisions: list[HookDecision] = []
        for spec in chosen:
            result = await asyncio.to_thread(self.run_process, spec.command, body, self.workspace, spec.timeout)
            decision = interpret(event, result, on_error=spec.on_error)
            self.emit("hook.completed", {
                "event": event, "matcher": spec.matcher, "command": spec.command, "tool": tool,
                "exit_code": result.exit_code, "timed_out": result.timed_out, "ms": result.ms,
                "timeout_s": spec.timeout, "decision": decision.action, "reason": decision.reason,
                "context_chars": len(decision.context),
            })
            decisions.append(decision)
            if decision.action in ("deny", "block"):
                break  # the first refusal decides; later hooks need not run
        return decisions

    async def user_prompt(self, prompt: str) -> tuple[str | None, list[str]]:
        """(the reason a hook blocked the request, or None; context the hooks added)."""
        decisions = await self._fire("UserPromptSubmit", {"prompt": prompt})
        blocked = next((d.reason for d in decisions if d.action == "block"), None)
        return blocked, [d.context for d in decisions if d.context]

    async def before_tool(self, call: ToolCall, arguments: dict[str, Any]) -> str | None:
        """The reason a PreToolUse hook denies this call, or None."""
        decisions = await self._fire("PreToolUse", {"tool_name": call.name, "tool_input": arguments,
                                                    "tool_use_id": call.id}, call.name)
        return next((d.reason for d in decisions if d.action == "deny"), None)

    async def after_tool(self, call: ToolCall, arguments: dict[str, Any], result: ToolResult) -> str | None:
        """Context the PostToolUse hooks add to this call's result, or None."""
        decisions = await self._fire("PostToolUse", {"tool_name": call.name, "tool_input": arguments,
                                                     "tool_use_id": call.id, "tool_response": result.data},
                                     call.name)
        context = "\n".join(d.context or d.reason for d in decisions if d.context or d.action == "block")
        return context or None

    async def stop(self, last_message: str, active: bool) -> str | None:
        """The reason a Stop hook blocks completion, or None."""
        decisions = await self._fire("Stop", {"stop_hook_active": active, "last_assistant_message": last_message})
        return next((d.reason for d in decisions if d.action == "block"), None)


__all__ = ["CLAUDE_NAMES", "HookDecision", "RunHooks", "interpret", "matches"]
