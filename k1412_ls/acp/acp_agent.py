"""The K1412 ACP agent: sessions, prompts as runs, cancellation, on the SDK's agent connection.

An adapter, not a second agent: every run is ``Runtime.run`` of the runtime ``k1412_ls.assembly`` builds
(the same tools, sandbox, gate, undo journal and cost meter as ``k1412 run`` and ``k1412 lsp``). Files go
through the client where it offers ``fs/*`` (``client_files``); commands always run in K1412's sandbox,
never in a client terminal. Bad requests get a JSON-RPC error with one sentence and the agent serves on.
"""

from __future__ import annotations

import asyncio
import getpass
import logging
import os
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any

from acp import RequestError
from acp.agent.connection import AgentSideConnection
from acp.helpers import update_agent_message_text, update_user_message_text
from acp.schema import (
    AvailableCommand,
    AvailableCommandsUpdate,
    InitializeResponse,
    ListSessionsResponse,
    LoadSessionResponse,
    NewSessionResponse,
    PromptResponse,
    SessionInfo,
    Usage,
)

from k1412_ls.acp.capabilities import ClientState, initialize_reply
from k1412_ls.acp.client_files import ClientDocumentStore
from k1412_ls.acp.permissions import client_approver
from k1412_ls.acp.prompts import available_commands, prompt_task, slash_command
from k1412_ls.acp.sessions import Session, known_session, list_sessions, record_session
from k1412_ls.acp.updates import SessionReporter
from k1412_ls.acp.verdict import prompt_usage, stop_reason, verdict, verdict_line
from k1412_ls.locations import ConfigError, state_dir

if TYPE_CHECKING:
    from k1412_ls.acp.acp_server import AcpOptions
    from k1412_ls.acp.wire import StdioTransport
    from k1412_ls.config import K1412Config
    from k1412_ls.core.runtime import Runtime
    from k1412_ls.state.store import StateStore

log = logging.getLogger("k1412.acp")

SHUTDOWN_WAIT_S = 15.0


def invalid_params(message: str) -> RequestError:
    return RequestError(-32602, message)


class K1412Agent:
    """One per ``k1412 acp`` process: the sessions of one client, one runtime per configuration."""

    def __init__(self, options: AcpOptions, client: ClientState) -> None:
        self.options = options
        self.client = client
        self.conn: Any = None
        self.sessions: dict[str, Session] = {}
        self._runtimes: dict[str, Runtime] = {}
        self._runtime_lock = asyncio.Lock()
        self._store: StateStore | None = None
        self._runs: set[asyncio.Task[Any]] = set()
        self.user = options.user or _login_user()

    def on_connect(self, conn: Any) -> None:
        self.conn = conn

    # -- lifecycle --------------------------------------------------------------------------
    async def initialize(self, protocol_version: int, client_capabilities: Any = None, client_info: Any = None,
                         **kwargs: Any) -> InitializeResponse:
        params = {"protocolVersion": protocol_version,
                  "clientCapabilities": client_capabilities.model_dump(by_alias=True) if client_capabilities else {},
                  "clientInfo": client_info.model_dump(by_alias=True) if client_info else None}
        return InitializeResponse.model_validate(initialize_reply(params, self.client))

    async def new_session(self, cwd: str, additional_directories: list[str] | None = None,
                          mcp_servers: list[Any] | None = None, **kwargs: Any) -> NewSessionResponse:
        root = await self._workspace(cwd, mcp_servers, additional_directories)
        from datetime import UTC, datetime

        from k1412_ls.state.store import new_conversation_id

        session_id = new_conversation_id()
        created = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"
        await asyncio.get_running_loop().run_in_executor(None, record_session, state_dir(), self.user, session_id,
                                                         root, created)
        self.sessions[session_id] = Session(session_id, root)
        asyncio.get_running_loop().call_later(0.05, self._announce_commands, session_id)
        return NewSessionResponse(session_id=session_id)

    async def load_session(self, cwd: str, session_id: str, mcp_servers: list[Any] | None = None,
                           additional_directories: list[str] | None = None, **kwargs: Any) -> LoadSessionResponse:
        root = await self._workspace(cwd, mcp_servers, additional_directories)
        current = self.sessions.get(session_id)
        if current is not None and current.running:
            raise RequestError(-32600, f"Session {session_id} is running a prompt; wait for its response or send "
                                       f"session/cancel before loading it.")
        loop = asyncio.get_running_loop()
        store = await self._state() if self._has_state() else None
        if current is None and not await loop.run_in_executor(None, known_session, state_dir(), store, self.user,
                                                              session_id):
            raise invalid_params(f"Unknown session {session_id!r}: no K1412 session of user {self.user!r} has "
                                 f"that id; list them with session/list or start one with session/new.")
        exchanges = await loop.run_in_executor(None, store.exchanges, self.user, session_id) if store else []
        for exchange in exchanges:  # the conversation so far, replayed before the response
            if exchange["task"]:
                await self.conn.session_update(session_id=session_id, update=update_user_message_text(exchange["task"]))
            text = exchange["answer"].rstrip()
            status = exchange.get("status") or "unknown"
            text = (text + "\n\n" if text else "") + f"K1412 verdict (recorded): {status}"
            await self.conn.session_update(session_id=session_id, update=update_agent_message_text(text))
        self.sessions[session_id] = Session(session_id, root)
        loop.call_later(0.05, self._announce_commands, session_id)
        return LoadSessionResponse()

    async def list_sessions(self, cwd: str | None = None, cursor: str | None = None,
                            **kwargs: Any) -> ListSessionsResponse:
        if cursor is not None and not cursor.isdigit():
            raise invalid_params("The cursor is not one K1412 gave; list again without a cursor.")
        if not self._has_state() and not (state_dir() / "acp-sessions").is_dir():
            return ListSessionsResponse(sessions=[])  # nothing stored yet: do not create the database to say so
        store = await self._state()
        page, next_cursor = await asyncio.get_running_loop().run_in_executor(
            None, list_sessions, store, state_dir(), self.user, cwd, cursor)
        return ListSessionsResponse(sessions=[SessionInfo.model_validate(s) for s in page], next_cursor=next_cursor)

    async def cancel(self, session_id: str, **kwargs: Any) -> None:
        session = self.sessions.get(session_id)
        if session is None or not session.running:
            return
        session.cancelled.set()
        if session.cancel is not None:
            session.cancel()

    async def ext_method(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        raise RequestError.method_not_found(f"_{method}")

    async def ext_notification(self, method: str, params: dict[str, Any]) -> None:
        log.info("ignored the extension notification _%s", method)

    # -- prompts ----------------------------------------------------------------------------
    async def prompt(self, session_id: str, prompt: list[Any], **kwargs: Any) -> PromptResponse:
        session = self.sessions.get(session_id)
        if session is None:
            raise invalid_params(f"Unknown session {session_id!r}; start one with session/new or session/load.")
        if session.running:
            raise RequestError(-32600, f"Session {session_id} is already running a prompt; wait for its response "
                                       f"or send session/cancel first.")
        spec = prompt_task(prompt, session.cwd)
        session.running = True
        session.cancelled.clear()
        try:
            command = slash_command(spec.task)
            if command is not None:
                from k1412_ls.acp.slash import run_slash_command

                return await run_slash_command(self.conn, await self._state(), self.user, session, *command)
            return await self._run(session, spec)
        finally:
            session.running = False
            session.cancel = None

    async def _run(self, session: Session, spec: Any) -> PromptResponse:
        from k1412_ls.core.run_request import RunRequest

        loop = asyncio.get_running_loop()
        try:
            runtime = await self._runtime(await self._config(session.cwd))
            model = runtime.resolve_model(self.options.model)
        except ConfigError as exc:
            raise invalid_params(str(exc)) from None
        run_id = runtime.new_run_id()
        reporter = SessionReporter(self.conn, loop, session.session_id, run_id, session.cwd,
                                   context_tokens=model[0].context_chars // 4, cost_before=session.cost)
        closed = threading.Event()
        documents = ClientDocumentStore(self.conn, loop, session.session_id, session.cwd, self.client, closed,
                                        reporter)
        request = RunRequest(task=spec.task, workspace=session.cwd, model=self.options.model, user=self.user,
                             conversation=session.session_id, intent=spec.intent, focus=spec.focus,
                             approver=client_approver(self.conn, loop, session.session_id, reporter, session.cancelled))
        task = loop.create_task(runtime.run(request, sinks=[reporter], documents=documents, run_id=run_id,
                                            model=model))
        self._runs.add(task)
        session.cancel = lambda: _cancel_task(runtime, run_id, task)
        if session.cancelled.is_set():  # cancelled while the runtime was being built
            session.cancel()
        try:
            result = await task
        finally:
            closed.set()
            self._runs.discard(task)
        session.last_run_id = run_id
        if result.cost.get("priced"):
            session.cost += float(result.cost.get("amount") or 0.0)
        await reporter.finish(result, verdict_line(result))
        return PromptResponse(stop_reason=stop_reason(result, reporter.ended_by),  # type: ignore[arg-type]
                              usage=Usage.model_validate(prompt_usage(result)),
                              field_meta={"k1412": {"verdict": verdict(result)}})

    # -- shared pieces ----------------------------------------------------------------------
    async def _workspace(self, cwd: str, mcp_servers: list[Any] | None, additional: list[str] | None) -> Path:
        if mcp_servers:
            raise invalid_params("MCP servers from the client are not supported yet; start the session with an "
                                 "empty mcpServers list (K1412 uses the tools of its own configuration).")
        if additional:
            raise invalid_params("K1412 works in one directory per session; additionalDirectories is not supported.")
        if not os.path.isabs(cwd) or not os.path.isdir(cwd):
            raise invalid_params(f"The session's cwd must be an absolute path to an existing directory, not {cwd!r}.")
        root = Path(os.path.realpath(cwd))
        await asyncio.get_running_loop().run_in_executor(None, _sweep_write_temps, root)
        return root

    async def _config(self, root: Path) -> K1412Config:
        from k1412_ls.config import load_config

        return await asyncio.get_running_loop().run_in_executor(None, load_config, self.options.config_path, root)

    async def _runtime(self, config: K1412Config) -> Runtime:
        from k1412_ls.assembly import build_runtime

        key = str(config.source)
        async with self._runtime_lock:
            runtime = self._runtimes.get(key)
            if runtime is None:
                runtime = await asyncio.get_running_loop().run_in_executor(None, build_runtime, config)
                self._runtimes[key] = runtime
            else:
                runtime.config = config  # the file may have changed since the last prompt
            return runtime

    def _has_state(self) -> bool:
        return self._store is not None or (state_dir() / "k1412.sqlite3").exists()

    async def _state(self) -> StateStore:
        if self._store is None:
            from k1412_ls.state.store import StateStore

            self._store = StateStore(state_dir() / "k1412.sqlite3")
        return self._store

    def _announce_commands(self, session_id: str) -> None:
        commands = [AvailableCommand.model_validate(c) for c in available_commands()]
        update = AvailableCommandsUpdate(session_update="available_commands_update", available_commands=commands)
        task = asyncio.get_running_loop().create_task(self.conn.session_update(session_id=session_id, update=update))
        task.add_done_callback(lambda t: t.cancelled() or t.exception())  # a closed client is not an error

    async def shutdown(self) -> None:
        """The client is gone: cancel every run (their processes die) and wait for them to end."""
        for session in self.sessions.values():
            session.cancelled.set()
            if session.cancel is not None:
                session.cancel()
        if self._runs:
            await asyncio.wait(set(self._runs), timeout=SHUTDOWN_WAIT_S)


def _cancel_task(runtime: Runtime, run_id: str, task: asyncio.Task[Any]) -> None:
    if not runtime.cancel(run_id) and not task.done():
        log.info("cancel for %s arrived before it started; it will stop at once", run_id)
        task.get_loop().call_soon(runtime.cancel, run_id)


def _login_user() -> str:
    try:
        return getpass.getuser()
    except (KeyError, OSError):
        return "default"


def _sweep_write_temps(root: Path) -> None:
    from k1412_ls.tools.files.documents import sweep_write_temps

    removed = sweep_write_temps(root)
    if removed:
        log.info("removed %d temp file(s) of interrupted writes under %s", removed, root)


async def serve_connection(options: AcpOptions, client: ClientState, transport: StdioTransport) -> None:
    """Serve one client on ``transport`` until it closes the connection."""
    agent = K1412Agent(options, client)
    connection = AgentSideConnection(agent, transport, listening=False)
    try:
        await connection.listen()
    finally:
        await agent.shutdown()
        await connection.close()
