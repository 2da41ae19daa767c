"""The JSON-RPC layer, hardened: every request id gets exactly one sanitized reply.

pygls 2.1.1 leaves gaps we close here:

- a request whose params do not match the LSP types gets no reply at all
  (the error is raised while decoding) — we answer InvalidParams;
- requests after ``shutdown`` are silently dropped — we answer InvalidRequest;
- requests before ``initialize`` would crash on the missing workspace — we
  answer ServerNotInitialized;
- InternalError replies carry the traceback in ``error.data`` — every error
  we send is reduced to a redacted one-sentence message without data;
- ``$/cancelRequest`` on ``workspace/executeCommand`` does not reach the
  command coroutine — the command sees a :class:`CommandCall` whose cancel
  callbacks run when the request is cancelled (or cancelled by shutdown);
- a notification method sent with an id, a batch array, a message without
  ``"jsonrpc"`` and JSON that is no object at all are dropped silently — we
  answer InvalidRequest (to each request id of a batch; id null when there is
  none) and run none of them (:meth:`K1412Protocol.receive`).
"""

from __future__ import annotations

import contextvars
import logging
import time
from collections.abc import Callable, Generator
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from lsprotocol import types
from pygls.exceptions import (
    JsonRpcException,
    JsonRpcInvalidParams,
    JsonRpcInvalidRequest,
    JsonRpcServerNotInitialized,
)
from pygls.protocol import LanguageServerProtocol
from pygls.protocol.json_rpc import MsgId, RPCRequest
from pygls.protocol.language_server import lsp_method

from k1412_ls.lsp.pygls_private import (
    FilteredResponses,
    ReleasingTables,
    initialized,
    request_future,
    send_raw,
    shutting_down,
)

if TYPE_CHECKING:
    from k1412_ls.text.redact import Redactor

log = logging.getLogger("k1412.lsp")

INTERNAL_ERROR = -32603


class _Answered:
    """Marks a message that was already answered while it was being decoded."""


ANSWERED = _Answered()


@dataclass
class CommandCall:
    """What a command handler may know about the request that invoked it."""

    msg_id: MsgId | None
    work_done_token: types.ProgressToken | None
    _on_cancel: list[Callable[[], None]] = field(default_factory=list)
    cancelled: bool = False

    def on_cancel(self, callback: Callable[[], None]) -> None:
        """Run ``callback`` when the client cancels this request (at once if it already did)."""
        if self.cancelled:
            callback()
        else:
            self._on_cancel.append(callback)

    def fire_cancel(self) -> None:
        if self.cancelled:
            return
        self.cancelled = True
        for callback in self._on_cancel:
            try:
                callback()
            except Exception:  # one failing hook must not keep the others from cancelling
                log.exception("cancel hook failed")


current_command: contextvars.ContextVar[CommandCall | None] = contextvars.ContextVar(
    "k1412_current_command", default=None
)


def sanitize_error(error: types.ResponseError, redactor: Redactor) -> types.ResponseError:
    """One redacted sentence, never a traceback: internal errors are named only by their type."""
    if error.code == INTERNAL_ERROR:
        kind = (error.message or "").split(":", 1)[0].strip() or "error"
        if not kind.isidentifier():
            kind = "error"
        message = f"K1412 hit an internal error ({kind}); the details are in the server log."
    else:
        message = redactor.text(error.message or "Request failed.")
    return types.ResponseError(code=error.code, message=message[:2000], data=None)


def is_notification_method(method: str) -> bool:
    """Whether the LSP specification defines ``method`` as a notification (it has no response type)."""
    entry = types.METHOD_TO_TYPES.get(method)
    return entry is not None and entry[1] is None


def shared_redactor() -> Redactor:
    """The server's one redactor (error replies and log lines), built when first needed."""
    if K1412Protocol._redactor is None:
        from k1412_ls.text.redact import Redactor

        K1412Protocol._redactor = Redactor.from_environment()
    return K1412Protocol._redactor


class RedactingFormatter(logging.Formatter):
    """Log lines leave redacted, tracebacks included: an error may quote a key pasted where a model id goes."""

    def format(self, record: logging.LogRecord) -> str:
        text = super().format(record)
        if _literal(record):
            return text  # a fixed sentence of K1412's own code: the idle server builds no redactor for it
        return shared_redactor().text(text)


def _literal(record: logging.LogRecord) -> bool:
    """A record of K1412's own loggers with no arguments and no traceback: its text is in our source."""
    own = record.name.split(".", 1)[0] in ("k1412", "k1412_ls")
    return own and not record.args and record.exc_info is None and record.stack_info is None \
        and isinstance(record.msg, str)


class K1412Protocol(ReleasingTables, FilteredResponses, LanguageServerProtocol):
    """pygls' LSP protocol with one reply per request id, sanitized errors and no residue of finished work."""

    _redactor: Redactor | None = None
    last_received = 0.0  # monotonic time of the last message from the client (the warm-up waits for quiet)

    # No ``redactor`` property here: pygls reads every attribute of the protocol when it is made
    # (``_register_builtin_features``), which would build the redactor (~60 ms, ~1.5 MiB) at start.
    # ``shared_redactor()`` builds it at the first error reply or non-literal log line.

    def receive(self, data: Any) -> None:
        """Handle one parsed JSON body: refuse what is not a single JSON-RPC 2.0 message, run the rest."""
        self.last_received = time.monotonic()
        if isinstance(data, list):
            self._refuse_batch(data)
            return
        if not isinstance(data, dict):
            log.warning("refused a message that is not a JSON object (%s)", type(data).__name__)
            self._refuse(None, "The message is not a JSON object; send one JSON-RPC message per frame.")
            return
        method = data.get("method")
        is_request = "id" in data and "method" in data
        if data.get("jsonrpc") != self.VERSION:
            if is_request:
                self._refuse(data["id"], "Only JSON-RPC 2.0 requests are accepted; set \"jsonrpc\": \"2.0\".")
            else:
                log.warning("dropped a message without \"jsonrpc\": \"2.0\"")
            return
        if is_request and not isinstance(method, str):
            self._refuse(data["id"], "The request's method is not a string; name the method to call.")
            return
        if is_request and is_notification_method(method):
            log.warning("refused %s sent as a request (id %r)", method[:100], data["id"])
            self._refuse(data["id"], f"{method[:100]} is a notification; send it without an id (it was not run).")
            return
        try:
            message = self.structure_message(data)
        except Exception:
            log.exception("could not decode a message")
            if is_request:
                self._refuse(data["id"], "The request could not be decoded; check its params.")
            return
        self.handle_message(message)

    def _refuse_batch(self, items: list[Any]) -> None:
        ids = [item["id"] for item in items if isinstance(item, dict) and "id" in item and "method" in item]
        log.warning("refused a batch of %d messages (%d requests); LSP has no batches", len(items), len(ids))
        message = "Batches are not part of LSP; send each message in its own frame (nothing in the batch was run)."
        for msg_id in ids:
            self._refuse(msg_id, message)
        if not ids:
            self._refuse(None, message)

    def _refuse(self, msg_id: Any, message: str) -> None:
        send_raw(self, {"jsonrpc": self.VERSION, "id": msg_id,
                        "error": {"code": JsonRpcInvalidRequest.CODE, "message": message}})

    def structure_message(self, data: dict[str, Any]) -> Any:
        try:
            return super().structure_message(data)
        except JsonRpcException as exc:
            if isinstance(data, dict) and "id" in data and "method" in data:
                method = str(data.get("method"))[:100]
                log.warning("invalid params for %s (request %r)", method, data.get("id"))
                error = JsonRpcInvalidParams(
                    f"Invalid params for {method}; send parameters of the types the LSP specification defines."
                )
                self.send_error(data["id"], error.to_response_error())
                return ANSWERED
            raise exc from None

    def handle_message(self, message: Any) -> None:
        if message is ANSWERED:
            return
        if isinstance(message, RPCRequest):
            error = self._refusal(message)
            if error is not None:
                self.send_error(message.id, error.to_response_error())
                return
        super().handle_message(message)

    def _refusal(self, message: Any) -> JsonRpcException | None:
        if message.jsonrpc != self.VERSION:
            return JsonRpcInvalidRequest("Only JSON-RPC 2.0 requests are accepted; set \"jsonrpc\": \"2.0\".")
        if shutting_down(self):
            return JsonRpcInvalidRequest("The server is shutting down and accepts no more requests; restart it.")
        if not initialized(self) and message.method != types.INITIALIZE:
            return JsonRpcServerNotInitialized("The server is not initialized yet; send 'initialize' first.")
        return None

    def filter_error(self, error: Any) -> Any:
        """Error replies leave redacted and bounded."""
        return sanitize_error(error, shared_redactor())

    @lsp_method(types.WORKSPACE_EXECUTE_COMMAND)
    def lsp_workspace__execute_command(self, params: types.ExecuteCommandParams) -> Generator[Any, Any, Any]:
        """Run a command with a :class:`CommandCall` in its context, linked to this request's cancel."""
        call = CommandCall(self.msg_id, params.work_done_token)
        outer = request_future(self, call.msg_id)
        if outer is not None:
            outer.add_done_callback(lambda future: _cancelled(future, call))
        # The command coroutine is created inside the delegated generator, in this context.
        current_command.set(call)
        return (yield from super().lsp_workspace__execute_command(params))


def _cancelled(future: Future[Any], call: CommandCall) -> None:
    if future.cancelled():
        call.fire_cancel()
