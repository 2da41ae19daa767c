"""Asking the editor's user about a command: ``window/showMessageRequest`` with Allow once / Always / Deny.

Called from a tool thread. No answer within :data:`ANSWER_TIMEOUT_S`, a
dismissed prompt, a client error or a cancelled run all mean deny.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import threading

from lsprotocol import types
from pygls.lsp.server import LanguageServer

from k1412_ls.lsp import constants as c
from k1412_ls.tools.approval.approval_policy import (
    ALLOW_ONCE_TITLE,
    DENY_TITLE,
    ApprovalRequest,
    Approver,
    Decision,
    always_title,
    decision_for,
)

log = logging.getLogger(c.LOGGER_NAME)

ANSWER_TIMEOUT_S = 300.0
_POLL_S = 0.1


def editor_approver(server: LanguageServer, loop: asyncio.AbstractEventLoop,
                    timeout_s: float = ANSWER_TIMEOUT_S) -> Approver:
    """An approver that shows the question in the editor and waits for the user's choice."""

    def ask(request: ApprovalRequest, cancel: threading.Event) -> Decision | None:
        actions = [types.MessageActionItem(title=ALLOW_ONCE_TITLE)]
        if request.prefix:
            actions.append(types.MessageActionItem(title=always_title(request)))
        actions.append(types.MessageActionItem(title=DENY_TITLE))
        params = types.ShowMessageRequestParams(type=types.MessageType.Warning, message=request.question(),
                                                actions=actions)
        future = asyncio.run_coroutine_threadsafe(server.window_show_message_request_async(params), loop)
        waited = 0.0
        while waited < timeout_s:
            if cancel.is_set():
                future.cancel()
                return None
            try:
                item = future.result(timeout=_POLL_S)
            except concurrent.futures.TimeoutError:
                waited += _POLL_S
                continue
            except Exception as exc:  # a client that cannot show the prompt has not approved
                log.warning("the approval prompt failed (%s); the command is denied", exc)
                return None
            return decision_for(item.title if item is not None else None, request)
        future.cancel()
        log.info("no answer to the approval prompt within %.0f s; the command is denied", timeout_s)
        return None

    return ask


__all__ = ["ANSWER_TIMEOUT_S", "editor_approver"]
