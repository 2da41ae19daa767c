"""The K1412 language server: a thin pygls adapter over the core runtime.

Handlers stay short: each validates its input, then calls the run service
(runs, configuration) or the editor store. Names live in
:mod:`k1412_ls.lsp.constants`. Logs go to stderr and ``window/logMessage``,
never to stdout (the protocol channel).
"""

from __future__ import annotations

import asyncio
import logging
import os
import sys
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lsprotocol import types
from pygls.capabilities import get_capability
from pygls.exceptions import FeatureRequestError, JsonRpcInvalidParams
from pygls.io_ import StdoutWriter
from pygls.lsp.server import LanguageServer
from pygls.uris import to_fs_path

from k1412_ls import __version__
from k1412_ls.lsp import constants as c
from k1412_ls.lsp.byte_sources import StdioSource, StreamSource
from k1412_ls.lsp.messages import log_to_client, show
from k1412_ls.lsp.protocol import K1412Protocol, RedactingFormatter, current_command
from k1412_ls.lsp.pygls_private import converter
from k1412_ls.lsp.settings import Settings, parse_settings
from k1412_ls.lsp.transport import serve_frames
from k1412_ls.lsp.warmup import WarmUp
from k1412_ls.lsp.watcher import WorkspaceWatcher

if TYPE_CHECKING:
    from k1412_ls.lsp.runs import RunService

log = logging.getLogger(c.LOGGER_NAME)



class K1412LanguageServer(LanguageServer):
    """pygls server with size-capped framing, sanitized out-of-band errors and the run service."""

    def __init__(self) -> None:
        super().__init__(c.SERVER_NAME, __version__, protocol_cls=K1412Protocol)
        self.settings = Settings()
        self._runs: RunService | None = None
        self.watcher = WorkspaceWatcher(self._config_changed)
        self.warm_up = WarmUp(self)

    @property
    def runs(self) -> RunService:
        """The run service; configuration, runtime and pydantic load on first use, not at start-up."""
        if self._runs is None:
            from k1412_ls.lsp.runs import RunService

            self._runs = RunService(self, on_config_loaded=self._config_loaded)
        return self._runs

    def _config_loaded(self) -> None:
        # The watcher (watchfiles, a thread: ~2 MiB) starts with the first configuration load: until a
        # run or k1412.prepare needs the configuration, a change to it has nothing to reload.
        if not self.watcher.config_files and not self.watcher.watched_dirs:
            _restart_watcher(self)

    def _config_changed(self) -> None:
        log_to_client(self, self.runs.reload_config())

    def _oversize(self, size: int) -> None:
        show(self, f"K1412 refused a {size}-byte message (the limit is {c.MAX_FRAME_BYTES} bytes); "
                   f"send smaller messages.", types.MessageType.Error)

    def report_server_error(self, error: Exception, source: Any) -> None:
        # pygls would show str(error) to the user; it may hold secrets or paths. Log it, show one sentence.
        log.error("server error (%s): %r", getattr(source, "__name__", source), error)
        if source is not FeatureRequestError:
            show(self, "K1412 hit an internal error while handling a notification; see the server log.",
                 types.MessageType.Error)

    def start_io(self, stdin: Any = None, stdout: Any = None) -> None:
        """Serve over stdio with size-capped framing."""
        self._stop_event = threading.Event()
        source = StdioSource(stdin or sys.stdin.buffer)
        self.protocol.set_writer(StdoutWriter(stdout or sys.stdout.buffer))
        try:
            asyncio.run(serve_frames(source, self.protocol, self._stop_event, max_frame=c.MAX_FRAME_BYTES,
                                     on_oversize=self._oversize))
        except BrokenPipeError:
            log.error("the client connection is gone; shutting down")
        except (KeyboardInterrupt, SystemExit):
            pass
        finally:
            self._stop_event.set()

    def start_tcp(self, host: str, port: int) -> None:
        """Serve one client over TCP with size-capped framing."""
        self._stop_event = stop = threading.Event()

        async def connection(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            self.protocol.set_writer(writer)  # type: ignore[arg-type]
            await serve_frames(StreamSource(reader), self.protocol, stop, max_frame=c.MAX_FRAME_BYTES,
                               on_oversize=self._oversize)
            stop.set()
            if self._server is not None:
                self._server.close()

        async def main() -> None:
            self._server = await asyncio.start_server(connection, host, port, limit=1 << 20)
            log.info("listening on %s:%s", host, port)
            async with self._server:
                try:
                    await self._server.serve_forever()
                except asyncio.CancelledError:
                    pass

        try:
            asyncio.run(main())
        except (KeyboardInterrupt, SystemExit):
            pass


# -- lifecycle ---------------------------------------------------------------------------------
def on_initialize(ls: K1412LanguageServer, params: types.InitializeParams) -> None:
    ls.settings, problems = parse_settings(params.initialization_options)
    for problem in problems:
        show(ls, problem)


async def on_initialized(ls: K1412LanguageServer, params: types.InitializedParams) -> None:
    if get_capability(ls.client_capabilities, "workspace.configuration", False):
        await _pull_settings(ls)
    await asyncio.get_running_loop().run_in_executor(None, _sweep_write_temps, ls)
    ls.warm_up.at_start()  # the first run should not wait for imports: warm at the task prompt (or once idle)


async def on_did_change_configuration(ls: K1412LanguageServer, params: types.DidChangeConfigurationParams) -> None:
    settings = params.settings
    if isinstance(settings, dict) and c.SETTINGS_SECTION in settings:
        _apply_settings(ls, settings)
    elif get_capability(ls.client_capabilities, "workspace.configuration", False):
        await _pull_settings(ls)


async def _pull_settings(ls: K1412LanguageServer) -> None:
    try:
        items = [types.ConfigurationItem(section=c.SETTINGS_SECTION)]
        values = await asyncio.wait_for(
            ls.workspace_configuration_async(types.ConfigurationParams(items=items)), timeout=5)
    except Exception:
        log.warning("the client did not answer workspace/configuration")
        return
    if values and values[0] is not None:
        _apply_settings(ls, values[0])


def _apply_settings(ls: K1412LanguageServer, raw: Any) -> None:
    before = ls.settings
    ls.settings, problems = parse_settings(raw, before)
    for problem in problems:
        show(ls, problem)
    if ls.settings.config_path != before.config_path:
        log_to_client(ls, ls.runs.reload_config())
        _restart_watcher(ls)


def _restart_watcher(ls: K1412LanguageServer) -> None:
    ls.watcher.start(ls.runs.config_candidates())


def _sweep_write_temps(ls: K1412LanguageServer) -> None:
    """Remove temp files that killed writes left in the workspace (off the event loop)."""
    from k1412_ls.tools.files.documents import sweep_write_temps

    try:
        root = ls.runs.workspace_root()
    except Exception:  # no folder open: nothing to sweep
        return
    removed = sweep_write_temps(root)
    if removed:
        log.info("removed %d temp file(s) of interrupted writes under %s", removed, root)


def on_shutdown(ls: K1412LanguageServer, params: Any) -> None:
    ls.watcher.stop()
    if ls._runs is not None:
        ls._runs.shutdown()


# -- code actions ------------------------------------------------------------------------------
def code_actions(ls: K1412LanguageServer, params: types.CodeActionParams) -> list[types.CodeAction] | None:
    rng = params.range
    if rng.start == rng.end:
        return None
    argument = {"uri": params.text_document.uri, "range": converter(ls.protocol).unstructure(rng)}
    command = types.Command(title=c.CODE_ACTION_DELEGATE_TITLE, command=c.CMD_DELEGATE, arguments=[argument])
    return [types.CodeAction(title=c.CODE_ACTION_DELEGATE_TITLE, kind=types.CodeActionKind.RefactorRewrite,
                             command=command)]


# -- commands ----------------------------------------------------------------------------------
# Command modules (pydantic models, the run service) are imported on first use to keep start-up lean.
async def run_task(ls: K1412LanguageServer, *arguments: Any) -> dict[str, Any]:
    from k1412_ls.core.run_request import RunRequest
    from k1412_ls.lsp.command_args import RunTaskArgs, parse_args

    args = parse_args(c.CMD_RUN_TASK, arguments, RunTaskArgs)
    spec = RunRequest(task=args.task, workspace=ls.runs.workspace_root(), model=args.model,
                      conversation=args.conversation)
    return await ls.runs.run(spec, current_command.get())


async def delegate(ls: K1412LanguageServer, *arguments: Any) -> dict[str, Any]:
    from k1412_ls.core.run_request import RunRequest
    from k1412_ls.lsp.command_args import (
        DelegateArgs,
        delegate_instruction,
        delegate_task,
        parse_args,
        selection_text,
    )

    args = parse_args(c.CMD_DELEGATE, arguments, DelegateArgs)
    root = ls.runs.workspace_root()
    fs_path = to_fs_path(args.uri)
    real = os.path.realpath(fs_path) if fs_path else None
    if real is None or not (real == str(root) or real.startswith(str(root) + os.sep)) or not os.path.isfile(real):
        raise JsonRpcInvalidParams("The selection must be in a file inside the workspace; select text in a "
                                   "workspace file and try again.")
    try:
        source = ls.workspace.get_text_document(args.uri).source
    except (OSError, UnicodeDecodeError):
        raise JsonRpcInvalidParams("The selected file is not readable UTF-8 text; delegate a text file.") from None
    text, first, last = selection_text(source, args.range, str(ls.workspace.position_encoding or "utf-16"))
    if not text.strip():
        raise JsonRpcInvalidParams("The selection is empty; select the code to delegate and try again.")
    rel = os.path.relpath(real, root)
    # Only the instruction decides what the run must prove, never the words of the selected code.
    spec = RunRequest(task=delegate_task(args, rel, text, first, last), workspace=root,
                      role="editor" if args.write else "reviewer", write=args.write,
                      intent=f"{delegate_instruction(args)} ({rel})", focus=(Path(real),))
    return await ls.runs.run(spec, current_command.get())


def cancel_run(ls: K1412LanguageServer, *arguments: Any) -> dict[str, Any]:
    from k1412_ls.lsp.command_args import CancelRunArgs, parse_args

    args = parse_args(c.CMD_CANCEL_RUN, arguments, CancelRunArgs)
    return {"run_id": args.run_id, "cancelled": ls.runs.cancel(args.run_id)}


async def undo_run(ls: K1412LanguageServer, *arguments: Any) -> dict[str, Any]:
    from k1412_ls.lsp.command_args import UndoRunArgs, parse_args
    from k1412_ls.lsp.undo_run import undo_run as undo

    args = parse_args(c.CMD_UNDO_RUN, arguments, UndoRunArgs, optional=True)
    return await undo(ls, ls.runs, args.run_id)


def prepare_runs(ls: K1412LanguageServer, *arguments: Any) -> dict[str, bool]:
    """``k1412.prepare``: the editor shows the task prompt; the run machinery loads while the user types.

    Answered at once (no pydantic here: loading it is the warm-up's work, off the loop).
    """
    if len(arguments) > 1 or (arguments and arguments[0] not in ({}, [], None)):  # Lua sends {} as []
        raise JsonRpcInvalidParams(f"{c.CMD_PREPARE} takes no arguments; send [{{}}] or nothing.")
    return ls.warm_up.prepare()


def list_models(ls: K1412LanguageServer, *arguments: Any) -> list[dict[str, Any]]:
    from k1412_ls.locations import ConfigError
    from k1412_ls.lsp.command_args import ListModelsArgs, parse_args

    parse_args(c.CMD_LIST_MODELS, arguments, ListModelsArgs, optional=True)
    try:
        return ls.runs.config().models_listing()
    except ConfigError as exc:
        raise JsonRpcInvalidParams(str(exc)) from None


def build_server() -> K1412LanguageServer:
    """A fresh server with every K1412 feature and command registered."""
    server = K1412LanguageServer()
    server.feature(types.INITIALIZE)(on_initialize)
    server.feature(types.INITIALIZED)(on_initialized)
    server.feature(types.WORKSPACE_DID_CHANGE_CONFIGURATION)(on_did_change_configuration)
    server.feature(types.SHUTDOWN)(on_shutdown)
    server.feature(types.TEXT_DOCUMENT_CODE_ACTION,
                   types.CodeActionOptions(code_action_kinds=[types.CodeActionKind.RefactorRewrite]))(code_actions)
    server.command(c.CMD_RUN_TASK)(run_task)
    server.command(c.CMD_DELEGATE)(delegate)
    server.command(c.CMD_CANCEL_RUN)(cancel_run)
    server.command(c.CMD_LIST_MODELS)(list_models)
    server.command(c.CMD_UNDO_RUN)(undo_run)
    server.command(c.CMD_PREPARE)(prepare_runs)
    return server


def _parse_tcp(value: str) -> tuple[str, int] | None:
    host, _, port = value.rpartition(":")
    if not host or not port.isdigit() or not 0 < int(port) < 65536:
        return None
    return host.strip("[]"), int(port)


LOOPBACK_HOSTS = frozenset({"127.0.0.1", "::1", "localhost"})
OWN_LOGGERS = ("k1412", "k1412_ls")  # c.LOGGER_NAME and every module's __name__


def serve(tcp: str | None = None) -> int:
    """Run the language server on stdio (or TCP ``HOST:PORT``) until the client exits."""
    # Third-party loggers stay at WARNING: pygls logs every message body at INFO (file contents and task
    # text do not belong in logs), watchfiles each file event, the HTTP client each model call.
    # Every line is redacted (pygls logs a failed command's traceback, and an error may quote a pasted key).
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(RedactingFormatter("k1412-ls %(levelname)s %(message)s"))
    logging.basicConfig(level=logging.WARNING, handlers=[handler])
    for name in OWN_LOGGERS:
        logging.getLogger(name).setLevel(logging.INFO)
    server = build_server()
    if tcp is None:
        server.start_io()
        return 0
    address = _parse_tcp(tcp)
    if address is None:
        sys.stderr.write(f"k1412: --tcp expects HOST:PORT (e.g. 127.0.0.1:2087), got {tcp!r}.\n")
        return 2
    if address[0] not in LOOPBACK_HOSTS:
        # Anyone who can connect can run tasks with the user's keys: the protocol has no authentication.
        sys.stderr.write(f"k1412: --tcp only listens on this machine (127.0.0.1, ::1 or localhost), not "
                         f"{address[0]!r}: the language server protocol has no authentication.\n")
        return 2
    server.start_tcp(*address)
    return 0
