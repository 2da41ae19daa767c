"""Publishing one run to the editor: ``k1412/event`` notifications and work-done progress.

Event sinks are called from the agent loop and from tool worker threads, so
the sink only schedules work on the server's event loop
(``call_soon_threadsafe`` keeps the order in which events were emitted). The
latest verification state (required / satisfied / missing evidence) is kept
and appended to every progress message.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Mapping
from typing import Any

from lsprotocol import types
from pygls.lsp.server import LanguageServer

from k1412_ls.core.events import Event
from k1412_ls.core.render import describe_event, describe_verification
from k1412_ls.lsp import constants as c

log = logging.getLogger("k1412.lsp")

_QUIET = {
    "model.requested": "asking the model",
    "tool.started": "running",
}


def progress_title(task: str) -> str:
    """``K1412: <task>`` on one short line."""
    line = " ".join(task.split())
    return c.PROGRESS_TITLE_PREFIX + (line if len(line) <= 60 else line[:59] + "…")


def verification_of(event: Event) -> Mapping[str, Any] | None:
    """The verification state an event carries, if any (root agent only)."""
    if event.depth:
        return None
    payload = event.payload
    if isinstance(payload.get("verification"), Mapping):
        return payload["verification"]
    if event.type.startswith("completion.") and "required" in payload:
        return {key: payload.get(key) or [] for key in ("required", "satisfied", "missing")}
    if isinstance(payload.get("evidence"), Mapping):
        return payload["evidence"]
    return None


def event_message(event: Event, verification: Mapping[str, Any] | None) -> str:
    """One short human line for ``event`` with the verification state appended."""
    line = describe_event(event)
    if line is None:
        hint = event.payload.get("tool") or f"iteration {event.payload.get('iteration', '?')}"
        line = "  " * event.depth + f"{_QUIET.get(event.type, event.type)} {hint}".strip()
    if event.type.startswith("run.") and event.type != "run.created":
        return line  # the verdict line already names the evidence
    state = describe_verification(verification)
    if not state or state in line:  # completion.* lines already name their evidence
        return line
    return f"{line} · {state}"


class RunReporter:
    """Event sink and progress bar of one run; safe to call from any thread."""

    def __init__(self, server: LanguageServer, loop: asyncio.AbstractEventLoop,
                 token: types.ProgressToken | None, title: str) -> None:
        self.server = server
        self.loop = loop
        self.token = token
        self.title = title
        self.verification: Mapping[str, Any] | None = None
        self.events = 0

    def begin(self, on_cancel: Callable[[], None]) -> None:
        """Open the progress bar (on the loop thread); ``on_cancel`` runs when the user cancels it."""
        if self.token is None:
            return
        progress = self.server.work_done_progress
        progress.begin(self.token, types.WorkDoneProgressBegin(title=self.title, cancellable=True,
                                                               message="starting"))
        future = progress.tokens.get(self.token)
        if future is not None:
            future.add_done_callback(lambda f: on_cancel() if f.cancelled() else None)

    def __call__(self, event: Event) -> None:
        self.loop.call_soon_threadsafe(self._publish, event)

    def _publish(self, event: Event) -> None:
        try:
            self.events += 1
            self.server.protocol.notify(c.NOTIFY_EVENT, event.model_dump())
            state = verification_of(event)
            if state is not None:
                self.verification = state
            if self.token is not None:
                message = event_message(event, self.verification)
                self.server.work_done_progress.report(self.token, types.WorkDoneProgressReport(message=message))
        except Exception:  # the editor connection may be gone; the run must go on
            log.exception("could not publish event %s", event.type)

    def end(self, message: str) -> None:
        """Close the progress bar after every event already scheduled (FIFO on the loop)."""
        self.loop.call_soon_threadsafe(self._end, message)

    def _end(self, message: str) -> None:
        if self.token is None:
            return
        try:
            self.server.work_done_progress.end(self.token, types.WorkDoneProgressEnd(message=message))
        except Exception:
            log.exception("could not end progress")
        # pygls never forgets tokens; a finished run's token must not leak or block reuse.
        self.server.work_done_progress.tokens.pop(self.token, None)
