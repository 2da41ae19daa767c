"""Watching the workspace (and the configuration file) with watchfiles.

Stale reads need no cache invalidation: disk reads are never cached and every
write compares the content hash the agent last read with the current one, so
an external change to a file the agent read turns its next write into a
conflict. What the watcher adds is configuration reloading: a change to the
configuration file in use reloads it, and the editor is told via
``window/logMessage``.
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import Callable, Iterable
from pathlib import Path

from k1412_ls.lsp import constants as c

log = logging.getLogger(c.LOGGER_NAME)


class WorkspaceWatcher:
    """One asyncio task running ``watchfiles.awatch`` until :meth:`stop`."""

    def __init__(self, on_config_change: Callable[[], None]) -> None:
        self.on_config_change = on_config_change
        self.config_files: set[Path] = set()
        self._stop: asyncio.Event | None = None
        self._task: asyncio.Task[None] | None = None
        self.changes_seen = 0

    def start(self, roots: Iterable[Path], config_files: Iterable[Path]) -> None:
        """(Re)start watching ``roots`` and every place a configuration file may appear (loop thread).

        A configuration file created, changed or removed after start-up reloads the
        configuration, so a new ``.k1412/config.toml`` takes effect without a restart.
        """
        self.stop()
        self.config_files = {Path(os.path.realpath(path)) for path in config_files}
        paths = {Path(os.path.realpath(root)) for root in roots if Path(root).is_dir()}
        for config_file in self.config_files:
            if any(config_file.is_relative_to(p) for p in paths):
                continue
            # Only its own directory: watching a far ancestor (say $HOME) would watch far too much.
            if config_file.parent.is_dir():
                paths.add(config_file.parent)
        if not paths:
            return
        self._stop = asyncio.Event()
        self._task = asyncio.create_task(self._watch(sorted(paths), self._stop))

    def stop(self) -> None:
        if self._stop is not None:
            self._stop.set()
        self._stop = None
        self._task = None

    async def _watch(self, paths: list[Path], stop: asyncio.Event) -> None:
        try:
            from watchfiles import awatch
        except ImportError:
            log.warning("watchfiles is not installed; external changes will not reload the configuration")
            return
        try:
            async for changes in awatch(*paths, stop_event=stop, debounce=200, step=50):
                self.changes_seen += len(changes)
                if any(Path(os.path.realpath(path)) in self.config_files for _kind, path in changes):
                    self.on_config_change()
        except Exception:  # a watcher failure must not take the server down
            log.exception("the workspace watcher stopped")
