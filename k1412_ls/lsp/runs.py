"""Runs started from the editor: the runtime (built at the first run), cancel links, config.

The runtime, the tool catalogue and the model SDK are imported only when the
first run starts, in a worker thread, so server start-up stays lean and the
event loop never stalls on imports.
"""

from __future__ import annotations

import asyncio
import getpass
import logging
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pygls.capabilities import get_capability
from pygls.exceptions import JsonRpcInvalidParams, JsonRpcInvalidRequest
from pygls.lsp.server import LanguageServer

from k1412_ls.assembly import build_runtime
from k1412_ls.locations import ConfigError, find_config_file
from k1412_ls.lsp import constants as c
from k1412_ls.lsp.heap import trim_heap
from k1412_ls.lsp.protocol import CommandCall
from k1412_ls.lsp.pygls_private import describe_sizes, table_sizes

if TYPE_CHECKING:
    from k1412_ls.config import K1412Config
    from k1412_ls.core.run_request import RunRequest
    from k1412_ls.core.runtime import Runtime
    from k1412_ls.lsp.editor_store import EditorDocumentStore
    from k1412_ls.lsp.reporting import RunReporter
    from k1412_ls.lsp.settings import Settings

log = logging.getLogger(c.LOGGER_NAME)


class RunService:
    """Owns the configuration, the runtime and the runs in flight for one server."""

    def __init__(self, server: LanguageServer, on_config_loaded: Callable[[], None] | None = None) -> None:
        self.server = server
        self._on_config_loaded = on_config_loaded  # the server starts its config watcher then (loop thread)
        self._config: K1412Config | None = None
        self._runtime: Runtime | None = None
        self._runtime_lock = asyncio.Lock()
        self.closed: dict[str, threading.Event] = {}

    @property
    def settings(self) -> Settings:
        return self.server.settings  # type: ignore[attr-defined,no-any-return]

    # -- workspace and configuration ---------------------------------------------------------
    def workspace_root(self) -> Path:
        """The workspace root folder, or InvalidRequest when the editor opened none."""
        workspace = self.server.workspace
        root = workspace.root_path
        if root is None and workspace.folders:
            from pygls.uris import to_fs_path

            root = to_fs_path(next(iter(workspace.folders.values())).uri)
        if root is None or not Path(root).is_dir():
            raise JsonRpcInvalidRequest("K1412 needs a workspace folder; open a folder and run the task again.")
        return Path(root).resolve()

    def config_file(self) -> Path | None:
        """The configuration file in use (None: built-in defaults)."""
        try:
            return find_config_file(self.settings.config_path, self._root_or_none())
        except ConfigError:
            return None

    def config_candidates(self) -> list[Path]:
        """Every file that could become the configuration (in search order), existing or not."""
        import os

        root = self._root_or_none()
        candidates = [Path(p).expanduser() for p in (self.settings.config_path, os.environ.get("K1412_CONFIG")) if p]
        if root is not None:
            candidates.append(root / ".k1412" / "config.toml")
        xdg = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
        candidates.append(Path(xdg) / "k1412" / "config.toml")
        return candidates

    def _root_or_none(self) -> Path | None:
        try:
            return self.workspace_root()
        except JsonRpcInvalidRequest:
            return None

    def config(self) -> K1412Config:
        """The loaded configuration; ConfigError with one sentence when it is invalid."""
        if self._config is None:
            from k1412_ls.config import load_config

            self._config = load_config(self.settings.config_path, self._root_or_none())
            log.info("configuration loaded from %s", self._config.source)
            if self._on_config_loaded is not None:
                self._on_config_loaded()
        return self._config

    def reload_config(self) -> str:
        """Reload the configuration; keep the previous one on error. Returns a log line."""
        try:
            from k1412_ls.config import load_config

            config = load_config(self.settings.config_path, self._root_or_none())
        except ConfigError as exc:
            return f"K1412 kept its previous configuration: {exc}"
        self._config = config
        if self._runtime is not None:
            self._runtime.config = config
        return f"K1412 reloaded its configuration from {config.source}."

    # -- runtime ----------------------------------------------------------------------------
    async def runtime(self) -> Runtime:
        async with self._runtime_lock:
            if self._runtime is None:
                config = self.config()
                began = time.perf_counter()
                self._runtime = await asyncio.get_running_loop().run_in_executor(None, build_runtime, config)
                if self._config is not None and self._config is not config:
                    self._runtime.config = self._config  # reloaded while the runtime was being built
                log.info("runtime built in %.0f ms (once for this server)", (time.perf_counter() - began) * 1000)
            return self._runtime

    def cancel(self, run_id: str) -> bool:
        """Cancel a run in flight (loop thread); False when no such run is running."""
        return self._runtime is not None and self._runtime.cancel(run_id)

    def user(self) -> str:
        if self.settings.user:
            return self.settings.user
        try:
            return getpass.getuser()
        except (KeyError, OSError):
            return "default"

    # -- one run ----------------------------------------------------------------------------
    async def run(self, spec: RunRequest, call: CommandCall | None) -> dict[str, Any]:
        """Run ``spec`` to its end with progress, events and editor edits; return the result object.

        The server fills in what the editor's settings decide: the user, the default model and the
        approver that asks in the editor.
        """
        from k1412_ls.core.render import describe_verification
        from k1412_ls.lsp.approvals import editor_approver
        from k1412_ls.lsp.editor_store import EditOptions, EditorDocumentStore
        from k1412_ls.lsp.reporting import RunReporter, progress_title

        root = spec.workspace
        loop = asyncio.get_running_loop()
        # Progress shows at once, before the runtime is ready (the first run after start-up may build it).
        token = call.work_done_token if call is not None else None
        token = token if token is not None else await self._create_token()
        reporter = RunReporter(self.server, loop, token, progress_title(spec.task))
        cancel_run: list[Callable[[], None]] = []  # the run's cancel, once the run exists
        cancelled_early = threading.Event()

        def cancel() -> None:
            if cancel_run:
                cancel_run[0]()
            else:
                cancelled_early.set()

        reporter.begin(cancel)
        if call is not None:
            call.on_cancel(cancel)
        try:
            runtime = await self.runtime()
            model = runtime.resolve_model(spec.model or self.settings.model)
        except ConfigError as exc:
            reporter.end("not started: the configuration is invalid")
            raise JsonRpcInvalidParams(str(exc)) from None
        except BaseException:
            reporter.end("not started")
            raise
        run_id = runtime.new_run_id()
        log.info("run %s starting; in flight: %s", run_id, describe_sizes(table_sizes(self.server)))
        closed = threading.Event()
        self.closed[run_id] = closed
        store = EditorDocumentStore(self.server, loop, root,
                                    EditOptions(label=f"K1412 {run_id}", confirm=self.settings.confirm_edits), closed)
        request = replace(spec, workspace=root, model=spec.model or self.settings.model, user=self.user(),
                          approver=editor_approver(self.server, loop))
        task = asyncio.create_task(self._drive(runtime, request, reporter, store, run_id, model))
        cancel_run.append(lambda: loop.call_soon_threadsafe(self._cancel_task, runtime, run_id, task))
        if cancelled_early.is_set():
            cancel_run[0]()
        try:
            result = await task
        finally:
            closed.set()
            self.closed.pop(run_id, None)
        reporter.end(f"{result.status} · {describe_verification(result.evidence)}")
        loop.run_in_executor(None, trim_heap)  # give the run's freed memory back (not awaited)
        await asyncio.sleep(0)  # let the progress end go out before the reply
        return result.as_dict()

    async def _drive(self, runtime: Runtime, request: RunRequest, reporter: RunReporter,
                     store: EditorDocumentStore, run_id: str, model: Any) -> Any:
        return await runtime.run(request, sinks=[reporter], documents=store, run_id=run_id, model=model)

    @staticmethod
    def _cancel_task(runtime: Runtime, run_id: str, task: asyncio.Task[Any]) -> None:
        if not runtime.cancel(run_id) and not task.done():
            log.info("cancel for %s arrived before it started; it will stop at once", run_id)
            task.get_loop().call_soon(runtime.cancel, run_id)

    async def _create_token(self) -> str | None:
        if not get_capability(self.server.client_capabilities, "window.work_done_progress", False):
            return None
        token = f"k1412-{uuid.uuid4().hex}"
        try:
            await asyncio.wait_for(self.server.work_done_progress.create_async(token), timeout=5)
        except Exception:  # no progress is better than no run
            log.warning("the client did not create a progress token")
            return None
        return token

    def shutdown(self) -> None:
        for closed in self.closed.values():
            closed.set()
