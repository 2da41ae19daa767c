"""``k1412 acp``: serve the Agent Client Protocol on stdio until the client closes it.

Lean on purpose: the first ``initialize`` is answered by the wire while the protocol SDK and the agent
load in a thread (``k1412 acp`` start → ``initialize`` reply: ``scripts/bench_acp_start.py``). Logs go to
stderr, redacted; stdout carries the protocol only.
"""

from __future__ import annotations

import asyncio
import importlib
import logging
import sys
from dataclasses import dataclass
from typing import Any

from k1412_ls.acp.capabilities import ClientState, initialize_reply
from k1412_ls.acp.wire import stdio_transport

log = logging.getLogger("k1412.acp")

OWN_LOGGERS = ("k1412", "k1412_ls")


@dataclass(frozen=True)
class AcpOptions:
    """What ``k1412 acp`` was started with: a configuration file, a default model and the user."""

    config_path: str | None = None
    model: str | None = None
    user: str | None = None


class RedactingFormatter(logging.Formatter):
    """Log lines leave redacted (an error may quote a key); K1412's own fixed sentences need no redactor."""

    _redactor: Any = None

    def format(self, record: logging.LogRecord) -> str:
        text = super().format(record)
        literal = record.name.split(".", 1)[0] in OWN_LOGGERS and not record.args and record.exc_info is None
        if literal:
            return text
        if RedactingFormatter._redactor is None:
            from k1412_ls.text.redact import Redactor

            RedactingFormatter._redactor = Redactor.from_environment()
        return str(RedactingFormatter._redactor.text(text))


def serve(options: AcpOptions) -> int:
    """Run the ACP agent on stdio; 0 when the client closed the connection."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(RedactingFormatter("k1412-acp %(levelname)s %(message)s"))
    logging.basicConfig(level=logging.WARNING, handlers=[handler])
    for name in OWN_LOGGERS:
        logging.getLogger(name).setLevel(logging.INFO)
    try:
        asyncio.run(_serve(options))
    except (KeyboardInterrupt, BrokenPipeError):
        pass
    return 0


async def _serve(options: AcpOptions) -> None:
    client = ClientState()
    transport = await stdio_transport(lambda params: initialize_reply(params, client))
    loop = asyncio.get_running_loop()
    # The SDK (pydantic models of the whole protocol) loads while initialize is answered on the wire.
    agent_module = await loop.run_in_executor(None, importlib.import_module, "k1412_ls.acp.acp_agent")
    transport.on_initialize = None
    await agent_module.serve_connection(options, client, transport)
