"""Publishing one run to the ACP client as ``session/update`` notifications.

The runtime calls the sink from the agent loop and from tool threads (under the event bus's lock, in
``seq`` order); the sink records what it must know synchronously (which call is running, the diffs
of its writes) and queues each update for one sender task on the event loop, so updates leave in
the order the events happened and all of them before the prompt's response.

What goes out: ``tool_call`` / ``tool_call_update`` per call (kind, status, locations, the event's
redacted public arguments as ``rawInput``, a ``diff`` per write or patch), ``plan`` from
``update_plan``, ``usage_update`` after each model reply (cost only when the model is priced), and
``agent_message_chunk`` with the model's visible text only. Reasoning is never sent: events never
hold it, and no ``agent_thought_chunk`` is published.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from acp import helpers
from acp.schema import Cost, ToolCallLocation, UsageUpdate

from k1412_ls.core.events import Event
from k1412_ls.text.lossless import visible

if TYPE_CHECKING:
    from acp.interfaces import Client

    from k1412_ls.core.run_outcomes import RunResult

log = logging.getLogger("k1412.acp")

KINDS = {
    "read_file": "read", "stat_path": "read", "git_status": "read", "git_diff": "read", "process_poll": "read",
    "list_files": "search", "search_files": "search",
    "write_file": "edit", "patch_file": "edit", "apply_patch": "edit",
    "run_command": "execute", "process_start": "execute", "process_cancel": "execute",
    "update_plan": "think", "remember": "think", "recall": "think", "forget": "think",
}
# Calls that run alone (never beside another call of the same agent): writes and commands happen inside them.
EXCLUSIVE = frozenset({"write_file", "patch_file", "apply_patch", "run_command", "process_start",
                       "process_cancel", "spawn_agent"})
TITLE_MAX = 160


def tool_kind(tool: str) -> str:
    return KINDS.get(tool, "other")


def tool_title(tool: str, args: dict[str, Any]) -> str:
    """``run_command: pytest -q``, ``write_file app.py`` …: one line, every control character shown."""
    subject = args.get("command") or args.get("path") or args.get("query") or args.get("task") or ""
    if not isinstance(subject, str):
        subject = ""
    line = visible(" ".join(subject.split()), keep_lines=False)
    title = f"{tool}: {line}" if tool in ("run_command", "process_start") else f"{tool} {line}".strip()
    return title if len(title) <= TITLE_MAX else title[:TITLE_MAX - 1] + "…"


@dataclass
class _Call:
    tool_call_id: str
    tool: str
    diffs: list[tuple[str, str | None, str]] = field(default_factory=list)


class SessionReporter:
    """Event sink of one run in one session; safe to call from any thread."""

    def __init__(self, conn: Client, loop: asyncio.AbstractEventLoop, session_id: str, run_id: str, root: Path,
                 context_tokens: int, cost_before: float) -> None:
        self.conn = conn
        self.loop = loop
        self.session_id = session_id
        self.run_id = run_id
        self.root = root
        self.context_tokens = context_tokens
        self.cost_before = cost_before  # what earlier prompts of this session cost (usage_update is cumulative)
        self.ended_by: str | None = None  # iterations / max_tokens / max_cost when the gate gave up early
        self.run_cost = 0.0
        self._lock = threading.Lock()
        self._calls: dict[str, _Call] = {}
        self._running: list[_Call] = []  # exclusive calls in flight, innermost last (a sub-agent's inside its spawn)
        self._pending_answer: str | None = None
        self._queue: asyncio.Queue[Any] = asyncio.Queue()
        self._sender = loop.create_task(self._send_all(), name=f"k1412-acp-updates-{run_id}")

    # -- from the runtime (any thread) ---------------------------------------------------------
    def __call__(self, event: Event) -> None:
        try:
            for update in self._updates(event):
                self.loop.call_soon_threadsafe(self._queue.put_nowait, update)
        except Exception:  # the client's view must never stop the run
            log.exception("could not publish event %s", event.type)

    def record_diff(self, path: Path, old: str | None, new: str) -> None:
        """A write of the running call (from the document store): shown as its ``diff`` when the call ends."""
        with self._lock:
            if self._running:
                self._running[-1].diffs.append((str(path), old, new))

    def current_call_id(self) -> str | None:
        """The tool call that is running now (an approval belongs to it)."""
        with self._lock:
            return self._running[-1].tool_call_id if self._running else None

    async def finish(self, result: RunResult, line: str) -> None:
        """The final answer (when the run has one), then the verdict line; returns once all were sent."""
        with self._lock:  # calls the run never finished (it was cancelled or stopped): closed, not left running
            unfinished, self._calls, self._running = list(self._calls.values()), {}, []
        for call in unfinished:
            why = f"not finished: the run ended {result.status}"
            self._queue.put_nowait(helpers.update_tool_call(
                call.tool_call_id, status="failed", content=[helpers.tool_content(helpers.text_block(why))],
                raw_output={"ok": False, "error": why}))
        answer = self._pending_answer
        if answer is not None:
            text = result.message if result.status == "completed" and result.message else answer
            self._queue.put_nowait(helpers.update_agent_message_text(text.rstrip() + "\n\n"))
        self._queue.put_nowait(helpers.update_agent_message_text(line))
        self._queue.put_nowait(None)
        await self._sender

    # -- events → updates ------------------------------------------------------------------
    def _updates(self, event: Event) -> list[Any]:
        payload = event.payload
        kind = event.type
        if kind == "tool.started":
            return [self._started(event)]
        if kind == "tool.completed":
            return [self._completed(event)]
        if kind == "plan.updated" and not event.depth:
            entries = [helpers.plan_entry(str(item.get("step", "")), status=item.get("status", "pending"))
                       for item in payload.get("plan") or [] if isinstance(item, dict)]
            return [helpers.update_plan(entries)]
        if kind == "model.responded" and payload.get("ok"):
            return self._responded(event)
        if kind in ("completion.rejected", "completion.blocked") and not event.depth:
            answer, self._pending_answer = self._pending_answer, None
            return [helpers.update_agent_message_text(answer.rstrip() + "\n\n")] if answer else []
        if kind == "completion.unverified" and not event.depth:
            if str(payload.get("reason", "")).startswith("iterations"):
                self.ended_by = "iterations"
        if kind == "budget.exhausted" and not event.depth:
            self.ended_by = str(payload.get("budget") or "")
        return []

    def _call_id(self, event: Event) -> str:
        return f"{self.run_id}:{event.agent_id or 'root'}:{event.payload.get('call_id')}"

    def _locations(self, args: dict[str, Any]) -> list[ToolCallLocation] | None:
        path = args.get("path")
        if not isinstance(path, str) or not path:
            return None
        line = args.get("start_line")
        return [ToolCallLocation(path=str(self.root / path), line=line if isinstance(line, int) else None)]

    def _started(self, event: Event) -> Any:
        tool = str(event.payload.get("tool"))
        args = event.payload.get("args") if isinstance(event.payload.get("args"), dict) else {}
        call = _Call(self._call_id(event), tool)
        with self._lock:
            self._calls[call.tool_call_id] = call
            if tool in EXCLUSIVE:
                self._running.append(call)
        return helpers.start_tool_call(call.tool_call_id, tool_title(tool, args), kind=tool_kind(tool),  # type: ignore[arg-type]
                                       status="in_progress", locations=self._locations(args), raw_input=args)

    def _completed(self, event: Event) -> Any:
        payload = event.payload
        tool = str(payload.get("tool"))
        args = payload.get("args") if isinstance(payload.get("args"), dict) else {}
        tool_call_id = self._call_id(event)
        with self._lock:
            call = self._calls.pop(tool_call_id, None)
            if call is not None and call in self._running:
                self._running.remove(call)
        ok = bool(payload.get("ok"))
        content: list[Any] = []
        locations: list[ToolCallLocation] = []
        for path, old, new in call.diffs if call is not None else []:
            content.append(helpers.tool_diff_content(path, new, old))
            locations.append(ToolCallLocation(path=path))
        if not ok and payload.get("error"):
            content.append(helpers.tool_content(helpers.text_block(str(payload["error"]))))
        raw_output = {key: payload[key] for key in ("ok", "error", "executed", "run_ms", "duplicate_of")
                      if key in payload}
        status = "completed" if ok else "failed"
        if call is None:  # answered without running (a guard, the batch limit): one closed tool_call
            return helpers.start_tool_call(tool_call_id, tool_title(tool, args), kind=tool_kind(tool),  # type: ignore[arg-type]
                                           status=status, content=content or None,
                                           locations=self._locations(args), raw_input=args, raw_output=raw_output)
        return helpers.update_tool_call(tool_call_id, status=status, content=content or None,
                                        locations=locations or None, raw_output=raw_output)

    def _responded(self, event: Event) -> list[Any]:
        payload = event.payload
        updates: list[Any] = []
        content = payload.get("content")
        if not event.depth and isinstance(content, str) and content.strip():
            if payload.get("tool_calls"):
                updates.append(helpers.update_agent_message_text(content.rstrip() + "\n\n"))
            else:
                self._pending_answer = content  # the final answer: sent at the end (in full) or when rejected
        usage = payload.get("usage") if isinstance(payload.get("usage"), dict) else {}
        used = int(usage.get("prompt_tokens", 0) or 0) + int(usage.get("completion_tokens", 0) or 0)
        run = payload.get("run") if isinstance(payload.get("run"), dict) else {}
        cost = run.get("cost") if isinstance(run.get("cost"), dict) else {}
        priced = bool(cost.get("priced")) and isinstance(cost.get("amount"), int | float)
        if priced:
            self.run_cost = float(cost["amount"])
        updates.append(UsageUpdate(
            session_update="usage_update", used=used, size=max(used, self.context_tokens),
            cost=Cost(amount=self.cost_before + self.run_cost, currency=str(cost.get("currency") or "USD"))
            if priced else None,
            field_meta={"k1412": {"priced": priced, "run_id": self.run_id, "run_tokens": run.get("tokens")}}))
        return updates

    # -- the sender ------------------------------------------------------------------------
    async def _send_all(self) -> None:
        while True:
            update = await self._queue.get()
            if update is None:
                return
            try:
                await self.conn.session_update(session_id=self.session_id, update=update)
            except Exception as exc:  # a client that is gone or rejects an update: the run goes on
                log.warning("could not send a session update (%s)", type(exc).__name__)
