"""Everything K1412 needs from pygls that pygls 2.1.1 offers no public API for, in one place.

No other module touches a private attribute of pygls (tests/test_architecture.py checks it);
tests/lsp/test_lsp_tables.py and tests/lsp/test_pygls_private.py pin the behaviour of the pygls version
this was written against, so an upgrade that changes it fails there first.

Accessors (:func:`send_raw`, :func:`request_future`, :func:`converter`, :func:`shutting_down`,
:func:`initialized`) and two protocol mixins: :class:`ReleasingTables` and
:class:`FilteredResponses` (every error reply passes :meth:`FilteredResponses.filter_error`).

The bookkeeping tables, and their release when the work they track ends:

- ``JsonRPCProtocol._request_futures``: msg id -> future. A client request's entry is removed
  when its reply is sent, a server request's when its answer arrives. pygls never removes the
  entries it files under a fresh uuid: the inner handler of a generator handler (every
  ``workspace/executeCommand``: the command coroutine and, through it, the finished run and its
  result) and every coroutine or threaded notification handler. A server request whose caller
  gave up waiting (a timeout) also stays forever.
- ``JsonRPCProtocol._result_types``: msg id -> reply type of a server request; kept forever when
  the client answers with an error, or never answers.
- ``LanguageServer.work_done_progress.tokens``: token -> cancel future; never removed by pygls
  (:class:`k1412_ls.lsp.reporting.RunReporter` removes its own at the end of a run).

:class:`ReleasingTables` (mixed into the protocol) removes each entry once its future is done,
so a server that runs the agent all day keeps no residue of finished requests and runs.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from concurrent.futures import Future
from typing import Any

from pygls.protocol.json_rpc import JsonRPCProtocol, MsgId

log = logging.getLogger("k1412.lsp")

AnyFuture = Future[Any] | asyncio.Future[Any]


def _release(table: dict[MsgId, Any], msg_id: MsgId, future: AnyFuture) -> None:
    """Remove ``msg_id`` from ``table`` if it still maps to ``future`` (an id may be reused later)."""
    if table.get(msg_id) is future:
        table.pop(msg_id, None)


class ReleasingTables(JsonRPCProtocol):
    """Drops every ``_request_futures`` / ``_result_types`` entry once its future is done."""

    def _execute_handler(self, msg_id: MsgId, handler: Any, callback: Any,
                         args: tuple[Any, ...] | None = None, kwargs: dict[str, Any] | None = None) -> None:
        super()._execute_handler(msg_id, handler, callback, args, kwargs)
        future = self._request_futures.get(msg_id)
        if future is not None:
            future.add_done_callback(self._later(_release, self._request_futures, msg_id))

    def send_request(self, method: str, params: Any | None = None, callback: Any = None,
                     msg_id: MsgId | None = None) -> Future[Any]:
        sent_id = msg_id if msg_id is not None else str(uuid.uuid4())
        future: Future[Any] = super().send_request(method, params, callback, sent_id)
        future.add_done_callback(self._later(self._forget_request, sent_id))
        return future

    @staticmethod
    def _later(release: Any, *args: Any) -> Any:
        """A done-callback that runs ``release(*args, future)`` on the loop's next turn.

        Futures of pygls are concurrent ones: their callbacks run inside ``cancel()``, and pygls'
        shutdown cancels while it iterates ``_request_futures``, so removing at once would break it.
        """
        try:
            loop: asyncio.AbstractEventLoop | None = asyncio.get_running_loop()
        except RuntimeError:
            loop = None

        def done(future: AnyFuture) -> None:
            if loop is None or loop.is_closed():
                release(*args, future)
            else:
                loop.call_soon_threadsafe(release, *args, future)

        return done

    def _forget_request(self, msg_id: MsgId, future: Future[Any]) -> None:
        # An answered request was already removed by pygls; a cancelled one (the caller timed out)
        # is removed here, and a late answer is then logged as unknown and dropped.
        _release(self._request_futures, msg_id, future)
        self._result_types.pop(msg_id, None)

    def _handle_response(self, msg_id: MsgId, result: Any | None = None, error: Any = None) -> None:
        self._result_types.pop(msg_id, None)  # pygls keeps it when the client answered with an error
        super()._handle_response(msg_id, result, error)


class FilteredResponses(JsonRPCProtocol):
    """Every reply pygls sends goes through ``_send_response``; error replies pass :meth:`filter_error` first."""

    def filter_error(self, error: Any) -> Any:
        """The error as it may leave the server (override: e.g. redaction)."""
        return error

    def _send_response(self, msg_id: MsgId, result: Any | None = None, error: Any = None) -> None:
        if error is not None:
            error = self.filter_error(error)
        super()._send_response(msg_id, result=result, error=error)

    def send_error(self, msg_id: MsgId, error: Any) -> None:
        """Answer request ``msg_id`` with ``error`` (a ``ResponseError``), the way pygls answers."""
        self._send_response(msg_id, error=error)


def send_raw(protocol: JsonRPCProtocol, payload: dict[str, Any]) -> None:
    """Write one JSON-RPC message as it is (for replies to messages pygls could not even structure)."""
    protocol._send_data(payload)


def request_future(protocol: JsonRPCProtocol, msg_id: MsgId | None) -> Future[Any] | None:
    """The future pygls keeps for request ``msg_id`` (cancelled when the client sends $/cancelRequest)."""
    if msg_id is None:
        return None
    return protocol._request_futures.get(msg_id)


def converter(protocol: JsonRPCProtocol) -> Any:
    """The cattrs converter pygls (un)structures LSP types with."""
    return protocol._converter


def shutting_down(protocol: Any) -> bool:
    """Whether the client has sent ``shutdown``."""
    return bool(protocol._shutdown)


def initialized(protocol: Any) -> bool:
    """Whether ``initialize`` has been handled (pygls makes the workspace then)."""
    return protocol._workspace is not None


def requests_in_flight(protocol: JsonRPCProtocol) -> int:
    """Requests either side is still working on (client requests and server requests awaiting answers)."""
    return len(protocol._request_futures)


def table_sizes(server: Any) -> dict[str, int]:
    """How many entries each bookkeeping table holds now (pygls' and the run service's)."""
    protocol = server.protocol
    sizes = {
        "requests": len(protocol._request_futures),
        "result_types": len(protocol._result_types),
        "progress_tokens": len(server.work_done_progress.tokens),
    }
    runs = getattr(server, "_runs", None)
    if runs is not None:
        sizes["runs"] = len(runs.closed)
        runtime = getattr(runs, "_runtime", None)
        sizes["active"] = len(runtime._active) if runtime is not None else 0
    return sizes


def describe_sizes(sizes: dict[str, int]) -> str:
    """``requests=1 result_types=0 …`` for the server log."""
    return " ".join(f"{name}={count}" for name, count in sizes.items())
