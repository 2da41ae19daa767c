"""The MCP servers of one run: started, initialised and listed on a private event loop, called from tool threads.

:class:`McpHub` owns one asyncio loop in a thread; each :class:`ServerConnection` holds its transport and
the SDK's :class:`~mcp.client.session.ClientSession` open in one task of that loop until the hub closes.
A tool handler (a worker thread) calls :meth:`McpHub.call`, which waits for the answer while watching the
run's cancel flag and the entry's ``timeout_s``; a cancelled or timed-out call is abandoned, and the SDK
sends the server ``notifications/cancelled``. A server that fails to start, or ends mid-run, gets one
sentence (:attr:`ServerConnection.problem`); its calls fail with it and the run goes on.
``notifications/tools/list_changed`` makes the connection list its tools again: a tool that is gone is
refused, one whose schema changed is validated against the new one (new tools wait for the next run).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import logging
import threading
import time
from collections.abc import Coroutine
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import mcp_types
from mcp.client.session import ClientSession
from mcp.client.streamable_http import streamable_http_client

from k1412_ls.config import McpServerSpec
from k1412_ls.tools.errors import ToolError
from k1412_ls.tools.mcp.stdio_process import ServerProcess, start_server, stdio_streams
from k1412_ls.tools.sandbox.command_sandbox import RunSandbox

log = logging.getLogger("k1412.mcp")
CLIENT_INFO = mcp_types.Implementation(name="k1412", version="0.1.0")
MAX_LISTED = 2000
POLL_S = 0.05


@dataclass
class CallAnswer:
    """What a server answered, or why there is no answer."""

    result: mcp_types.CallToolResult | None = None
    error: str | None = None
    cancelled: bool = False
    timed_out: bool = False
    progress: int = 0
    duration_ms: int = 0


@dataclass
class ServerConnection:
    """One configured server during a run: its state, its tools, and the sentence about its end."""

    name: str
    spec: McpServerSpec
    env: dict[str, str] = field(default_factory=dict)
    state: str = "starting"  # starting | running | failed | exited | stopped
    problem: str | None = None
    tools: dict[str, mcp_types.Tool] = field(default_factory=dict)
    sandbox_label: str = "remote (streamable HTTP)"
    protocol: str | None = None
    process: ServerProcess | None = None
    session: ClientSession | None = None
    _ready: threading.Event = field(default_factory=threading.Event)
    _stop: asyncio.Event | None = None

    def usable(self) -> str | None:
        """None when calls can go to the server; otherwise the sentence why not."""
        if self.state == "running" and self.process is not None and self.process.exit_code() is not None:
            self._ended()
        if self.state == "running":
            return None
        return self.problem or f"The MCP server '{self.name}' is not running."

    def _ended(self) -> None:
        if self.state != "running":
            return
        self.state = "exited"
        if self.process is not None:
            self.process.settle(0.5)
        code = self.process.exit_code() if self.process is not None else None
        tail = self.process.stderr_tail() if self.process is not None else ""
        said = f" (exit code {code})" if code is not None else ""
        last = f"; its last words: {tail}" if tail else ""
        self.problem = (f"The MCP server '{self.name}' stopped mid-run{said}{last}; its tools are unavailable for "
                        "the rest of this run, so do the work with other tools.")

    async def serve(self, sandbox: RunSandbox | None, workspace: Path, startup_s: float) -> None:
        """Start, initialise and list; then hold the session open until the hub stops."""
        self._stop = asyncio.Event()
        try:
            async with self._transport(sandbox, workspace) as (read, write):
                async with ClientSession(read, write, client_info=CLIENT_INFO,  # type: ignore[arg-type]
                                         message_handler=self._on_message) as session:
                    with anyio.fail_after(startup_s):
                        init = await session.initialize()
                        self.protocol = str(init.protocol_version)
                        await self._list(session)
                    self.session = session
                    self.state = "running"
                    self._ready.set()
                    await self._stop.wait()
        except BaseException as exc:  # a failed server is a sentence; the run goes on
            log.debug("MCP server %s ended", self.name, exc_info=True)
            exc = _first_leaf(exc)
            if self.state == "starting":
                self.state = "failed"
                self.problem = self._start_problem(exc, startup_s)
            else:
                self._ended()
            if isinstance(exc, asyncio.CancelledError):
                raise
        finally:
            self.session = None
            if self.state == "running" and self._stop.is_set():
                self.state = "stopped"  # the run ended: no sentence, no wait for its exit here
            elif self.state == "running":
                self._ended()
            self._ready.set()
            if self.process is not None:
                await asyncio.to_thread(self.process.stop)

    def _start_problem(self, exc: BaseException, startup_s: float) -> str:
        if isinstance(exc, TimeoutError):
            why = f"did not answer initialize within {startup_s:g} s"
        elif isinstance(exc, ToolError):
            why = str(exc)
        elif self.process is not None and self.process.settle() is not None:
            tail = self.process.stderr_tail()
            why = f"exited with code {self.process.exit_code()}" + (f" ({tail})" if tail else "")
        else:
            text = str(exc).strip().splitlines()
            why = f"could not be reached ({type(exc).__name__}{': ' + text[0][:200] if text else ''})"
        return (f"The MCP server '{self.name}' {why}; the run goes on without its tools "
                "(check its [mcp.servers] entry and `k1412 mcp list`).")

    @contextlib.asynccontextmanager
    async def _transport(self, sandbox: RunSandbox | None, workspace: Path):  # type: ignore[no-untyped-def]
        spec = self.spec
        if spec.url is not None:
            async with streamable_http_client(spec.url) as streams:
                yield streams
            return
        assert spec.command is not None
        confine = sandbox if spec.sandbox else None
        self.process = await asyncio.to_thread(start_server, [spec.command, *spec.args], workspace, self.env,
                                               sandbox=confine, workspace=workspace, network=spec.network)
        self.sandbox_label = self.process.label
        async with stdio_streams(self.process) as streams:
            yield streams

    async def _list(self, session: ClientSession) -> None:
        tools: dict[str, mcp_types.Tool] = {}
        cursor: str | None = None
        while len(tools) < MAX_LISTED:
            params = mcp_types.PaginatedRequestParams(cursor=cursor) if cursor else None
            listed = await session.list_tools(params=params)
            for tool in listed.tools:
                tools.setdefault(tool.name, tool)
            cursor = listed.next_cursor
            if not cursor:
                break
        self.tools = tools

    async def _on_message(self, message: Any) -> None:
        if isinstance(message, mcp_types.ToolListChangedNotification) and self.session is not None:
            with contextlib.suppress(Exception):
                await self._list(self.session)

    async def call(self, tool: str, arguments: dict[str, Any], timeout_s: float, answer: CallAnswer) -> None:
        session = self.session
        if session is None:
            raise ToolError(self.usable() or f"The MCP server '{self.name}' is not running.")

        async def progress(done: float, total: float | None, message: str | None) -> None:
            answer.progress += 1

        answer.result = await session.call_tool(tool, arguments, read_timeout_seconds=timeout_s,
                                                progress_callback=progress)

    def wait_ready(self, timeout_s: float) -> None:
        self._ready.wait(timeout_s)

    def stop(self) -> None:
        if self._stop is not None:
            self._stop.set()


class McpHub:
    """The private event loop the servers of a run live on."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self.loop.run_forever, name="k1412-mcp", daemon=True)
        self._thread.start()
        self._tasks: list[concurrent.futures.Future[None]] = []
        self.connections: dict[str, ServerConnection] = {}

    def submit(self, coro: Coroutine[Any, Any, Any]) -> concurrent.futures.Future[Any]:
        return asyncio.run_coroutine_threadsafe(coro, self.loop)

    def start(self, connections: list[ServerConnection], sandbox: RunSandbox | None, workspace: Path) -> None:
        """Start every server at once and wait until each is running or has its sentence."""
        for conn in connections:
            self.connections[conn.name] = conn
            self._tasks.append(self.submit(conn.serve(sandbox, workspace, conn.spec.startup_timeout_s)))
        deadline = time.monotonic() + max((c.spec.startup_timeout_s for c in connections), default=0) + 5
        for conn in connections:
            conn.wait_ready(max(0.0, deadline - time.monotonic()))
            if conn.state == "starting":
                conn.state = "failed"
                conn.problem = f"The MCP server '{conn.name}' did not start in time; the run goes on without it."

    def call(self, server: str, tool: str, arguments: dict[str, Any], timeout_s: float,
             cancel: threading.Event) -> CallAnswer:
        """One tools/call, waited for from a tool thread; never raises."""
        conn = self.connections[server]
        answer = CallAnswer()
        problem = conn.usable()
        if problem is not None:
            answer.error = problem
            return answer
        begin = time.monotonic()
        future = self.submit(conn.call(tool, arguments, timeout_s + 1, answer))
        deadline = begin + timeout_s
        while True:
            try:
                future.result(POLL_S)
                break
            except concurrent.futures.TimeoutError:
                if cancel.is_set() or time.monotonic() > deadline or conn.usable() is not None:
                    answer.cancelled = cancel.is_set()
                    answer.timed_out = not answer.cancelled and conn.usable() is None
                    future.cancel()
                    break
            except (concurrent.futures.CancelledError, Exception) as exc:
                if getattr(exc, "code", None) == mcp_types.CONNECTION_CLOSED and conn.process is not None:
                    conn.process.settle(1.0)  # the pipe closed first: let its exit (and last words) arrive
                answer.error = conn.usable() or _call_error(conn.name, exc)
                break
        if not answer.cancelled and not answer.timed_out and answer.result is None and answer.error is None:
            answer.error = conn.usable() or f"The MCP server '{conn.name}' gave no answer."
        answer.duration_ms = int((time.monotonic() - begin) * 1000)
        return answer

    def close(self) -> None:
        """Stop every server (their processes are killed and reaped), then the loop."""
        for conn in self.connections.values():
            self.loop.call_soon_threadsafe(conn.stop)
        for task in self._tasks:
            with contextlib.suppress(BaseException):
                task.result(10)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join(5)
        if not self.loop.is_running():
            self.loop.close()


def _first_leaf(exc: BaseException) -> BaseException:
    """The first real error inside (nested) exception groups."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return exc


def _call_error(server: str, exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    detail = text[0][:300] if text else type(exc).__name__
    return f"The MCP server '{server}' answered with an error: {detail}"


__all__ = ["CallAnswer", "McpHub", "ServerConnection"]
