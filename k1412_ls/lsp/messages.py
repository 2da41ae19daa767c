"""Messages to the user: ``window/showMessage`` and ``window/logMessage`` (loop thread only)."""

from __future__ import annotations

import logging

from lsprotocol import types
from pygls.lsp.server import LanguageServer

from k1412_ls.lsp import constants as c

log = logging.getLogger(c.LOGGER_NAME)


def show(server: LanguageServer, message: str, kind: types.MessageType = types.MessageType.Warning) -> None:
    """``window/showMessage``: one sentence the user should see."""
    log.info("%s", message)
    server.window_show_message(types.ShowMessageParams(type=kind, message=message))


def log_to_client(server: LanguageServer, message: str, kind: types.MessageType = types.MessageType.Info) -> None:
    """``window/logMessage`` and the stderr log."""
    log.info("%s", message)
    server.window_log_message(types.LogMessageParams(type=kind, message=message))
