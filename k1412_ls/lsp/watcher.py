"""Watching the configuration files (and nothing else) with watchfiles.

Stale reads need no cache invalidation: disk reads are never cached and every
write compares the content hash the agent last read with the current one, so
an external change to a file the agent read turns its next write into a
conflict. What the watcher adds is configuration reloading: a change to a
configuration file reloads it, and the editor is told via ``window/logMessage``.

Only the configuration files themselves are watched: each one's directory,
not recursively, with every other entry filtered out. A file whose directory
does not exist yet (``<workspace>/.k1412/config.toml`` before ``.k1412`` is
made) is watched from its nearest existing ancestor, again one level deep,
for the missing directory only; when it appears the watch moves down to it (also when it appeared
before the watch was armed: the watcher looks once a second).
So a configuration in ``$HOME`` costs one non-recursive watch of ``$HOME``,
and a busy workspace or home folder produces no events at all.
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import Callable, Iterable
from pathlib import Path

from k1412_ls.lsp import constants as c

log = logging.getLogger(c.LOGGER_NAME)

SETTLE_S = 0.3  # like watchfiles' debounce: a file just created is usually written by then


def _spellings(path: Path) -> set[Path]:
    """The path as given (absolute) and with symlinks resolved: an edit may arrive under either."""
    return {Path(os.path.abspath(path)), Path(os.path.realpath(path))}


def watch_plan(config_files: Iterable[Path]) -> tuple[set[Path], set[Path], set[Path]]:
    """(files to react to, directories to watch one level deep, missing directories awaited)."""
    files: set[Path] = set()
    for config_file in config_files:
        files |= _spellings(Path(config_file).expanduser())
    dirs: set[Path] = set()
    awaited: set[Path] = set()
    for config_file in files:
        parent = config_file.parent
        while not parent.is_dir() and parent.parent != parent:
            awaited.add(parent)  # appears (mkdir) in the directory above it
            parent = parent.parent
        if parent.is_dir():
            dirs.add(parent)
    return files, dirs, awaited


class WorkspaceWatcher:
    """One asyncio task running ``watchfiles.awatch`` on the configuration files until :meth:`stop`."""

    def __init__(self, on_config_change: Callable[[], None]) -> None:
        self.on_config_change = on_config_change
        self.config_files: set[Path] = set()
        self.watched_dirs: set[Path] = set()
        self._candidates: list[Path] = []
        self._stop: asyncio.Event | None = None
        self._task: asyncio.Task[None] | None = None
        self.changes_seen = 0

    def start(self, config_files: Iterable[Path]) -> None:
        """(Re)start watching every place a configuration file may appear (loop thread).

        A configuration file created, changed or removed after start-up reloads the
        configuration, so a new ``.k1412/config.toml`` takes effect without a restart.
        """
        self.stop()
        self._candidates = [Path(path) for path in config_files]
        files, dirs, awaited = watch_plan(self._candidates)
        self.config_files, self.watched_dirs = files, dirs
        if not dirs:
            return
        self._stop = asyncio.Event()
        self._task = asyncio.create_task(self._watch(sorted(dirs), files, awaited, self._stop))

    def _reload_if_present(self, files: set[Path]) -> None:
        if any(path.is_file() for path in files):
            self.on_config_change()

    def stop(self) -> None:
        if self._stop is not None:
            self._stop.set()
        self._stop = None
        self._task = None

    async def _watch(self, dirs: list[Path], files: set[Path], awaited: set[Path], stop: asyncio.Event) -> None:
        try:
            from watchfiles import awatch
        except ImportError:
            log.warning("watchfiles is not installed; external changes will not reload the configuration")
            return
        wanted = {str(path) for path in files | awaited}

        def relevant(_change: object, path: str) -> bool:
            return path in wanted

        try:
            # yield_on_timeout: an empty batch every second, to look whether an awaited directory appeared
            # before the watch was armed (its creation event is then never delivered).
            async for changes in awatch(*dirs, watch_filter=relevant, recursive=False, stop_event=stop,
                                        debounce=200, step=50, rust_timeout=1000, yield_on_timeout=True):
                self.changes_seen += len(changes)
                paths = {Path(path) for _kind, path in changes}
                if not changes:
                    paths = {path for path in awaited if path.is_dir()}
                if paths & awaited and not stop.is_set():
                    # A missing directory appeared: watch one level further down. A file written into it
                    # before that watch is armed is caught by a look once writes had time to settle.
                    self.start(self._candidates)
                    asyncio.get_running_loop().call_later(SETTLE_S, self._reload_if_present, files)
                    return
                if paths & files:
                    self.on_config_change()
        except Exception:  # a watcher failure must not take the server down
            log.exception("the configuration watcher stopped")
