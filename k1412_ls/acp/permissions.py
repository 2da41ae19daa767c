"""Asking the ACP client's user about a command: ``session/request_permission``.

Options: Allow once, Always allow the prefix (when there is one; kept per user as everywhere), Reject.
Called from a tool thread. No answer within :data:`ANSWER_TIMEOUT_S`, a ``cancelled`` outcome (the
client cancelled the prompt), an option K1412 did not offer, a client error or a cancelled run all
mean deny.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import itertools
import logging
import threading
from typing import TYPE_CHECKING

from acp.schema import PermissionOption, ToolCallUpdate

from k1412_ls.tools.approval.approval_policy import (
    ALLOW_ONCE_TITLE,
    DENY_TITLE,
    ApprovalRequest,
    Approver,
    Decision,
    always_title,
)

if TYPE_CHECKING:
    from acp.interfaces import Client

    from k1412_ls.acp.updates import SessionReporter

log = logging.getLogger("k1412.acp")

ANSWER_TIMEOUT_S = 300.0
_POLL_S = 0.1
OPTION_DECISIONS = {"allow_once": Decision.ALLOW_ONCE, "allow_always": Decision.ALLOW_ALWAYS,
                    "reject": Decision.DENY}


def permission_options(request: ApprovalRequest) -> list[PermissionOption]:
    options = [PermissionOption(option_id="allow_once", name=ALLOW_ONCE_TITLE, kind="allow_once")]
    if request.prefix:
        options.append(PermissionOption(option_id="allow_always", name=always_title(request), kind="allow_always"))
    options.append(PermissionOption(option_id="reject", name=DENY_TITLE, kind="reject_once"))
    return options


def client_approver(conn: Client, loop: asyncio.AbstractEventLoop, session_id: str, reporter: SessionReporter,
                    cancelled: threading.Event, timeout_s: float = ANSWER_TIMEOUT_S) -> Approver:
    """An approver that asks the client and waits for the user's choice."""
    numbers = itertools.count(1)

    def ask(request: ApprovalRequest, cancel: threading.Event) -> Decision | None:
        call_id = reporter.current_call_id() or f"{reporter.run_id}:approval-{next(numbers)}"
        offered = permission_options(request)
        tool_call = ToolCallUpdate(tool_call_id=call_id, title=request.question(), kind="execute", status="pending",
                                   field_meta={"k1412": {"reasons": list(request.reasons),
                                                         "prefix": request.prefix_text}})
        future = asyncio.run_coroutine_threadsafe(
            conn.request_permission(session_id=session_id, tool_call=tool_call, options=offered), loop)
        waited = 0.0
        while waited < timeout_s:
            if cancel.is_set() or cancelled.is_set():
                future.cancel()
                return None
            try:
                answer = future.result(timeout=_POLL_S)
            except concurrent.futures.TimeoutError:
                waited += _POLL_S
                continue
            except Exception as exc:  # a client that cannot ask has not approved
                log.warning("the permission request failed (%s); the command is denied", type(exc).__name__)
                return None
            outcome = answer.outcome
            if getattr(outcome, "outcome", None) != "selected":
                return None
            offered_ids = {option.option_id for option in offered}
            option_id = getattr(outcome, "option_id", None)
            return OPTION_DECISIONS.get(option_id) if option_id in offered_ids else None
        future.cancel()
        log.info("no answer to the permission request within %.0f s; the command is denied", timeout_s)
        return None

    return ask
