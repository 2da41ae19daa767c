"""Workspace change tracking: what a command changed on disk, as write facts.

A :class:`ChangeTracker` (one per run) tells which files under the workspace
root a command created, changed or deleted, so ``sed -i``, ``>``, ``rm``,
``mv`` and generators become write facts like any file tool's. On Linux it
uses inotify: the tree is walked once per run and each command costs reading
the kernel's event queue. Elsewhere, or past the kernel's limits, it takes a
:class:`Snapshot` (size, mtime, inode, type of every file) before and after
each command and compares them. Directories that hold caches, dependencies or version control
internals are skipped (``SKIP_DIRS``), and a tree with more than
``MAX_ENTRIES`` files is marked incomplete rather than walked for ever: the
gate then treats the command's changes as unknown.
"""

from __future__ import annotations

import ctypes
import os
import stat
import struct
import sys
import threading
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from k1412_ls.tools.facts import write_entry

SKIP_DIRS = frozenset({
    ".git", ".hg", ".svn", "node_modules", "__pycache__", ".venv", "venv", ".tox", ".nox", ".mypy_cache",
    ".pytest_cache", ".ruff_cache", ".k1412", "target", ".gradle", ".idea", ".cache", ".eggs", ".next",
    ".parcel-cache", ".turbo", "site-packages",
})
MAX_ENTRIES = 50_000
MAX_LISTED = 200
MAX_TEXT_BYTES = 1024 * 1024

Signature = tuple[int, int, int, int]


@dataclass
class Snapshot:
    """File signatures under a root, keyed by workspace-relative path."""

    files: dict[str, Signature] = field(default_factory=dict)
    complete: bool = True

    @classmethod
    def take(cls, root: Path) -> Snapshot:
        snap = cls()
        stack = [(str(root), "")]
        while stack:
            directory, prefix = stack.pop()
            try:
                entries = os.scandir(directory)
            except OSError:
                continue
            with entries:
                for entry in entries:
                    rel = prefix + entry.name
                    try:
                        info = entry.stat(follow_symlinks=False)
                    except OSError:
                        continue
                    if stat.S_ISDIR(info.st_mode):
                        if entry.name not in SKIP_DIRS and not entry.name.endswith(".egg-info"):
                            stack.append((entry.path, rel + "/"))
                        continue
                    snap.files[rel] = (info.st_size, info.st_mtime_ns, info.st_ino, stat.S_IFMT(info.st_mode))
                    if len(snap.files) > MAX_ENTRIES:
                        snap.complete = False
                        return snap
        return snap

    def changes(self, after: Snapshot) -> list[tuple[str, str]]:
        """``(path, action)`` for every file created, updated or deleted between two snapshots."""
        found: list[tuple[str, str]] = []
        for path, signature in after.files.items():
            before = self.files.get(path)
            if before is None:
                found.append((path, "create"))
            elif before != signature:
                found.append((path, "update"))
        found.extend((path, "delete") for path in self.files if path not in after.files)
        return sorted(found)


def _text(path: Path) -> str | None:
    """The text of a regular file (never a FIFO, device or symlink, which could block or lead elsewhere)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError:
        return None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_size > MAX_TEXT_BYTES:
            return None
        data = os.read(fd, MAX_TEXT_BYTES + 1)
    except OSError:
        return None
    finally:
        os.close(fd)
    if b"\0" in data[:8192]:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


def change_entries(root: Path, changes: list[tuple[str, str]]) -> list[dict[str, Any]]:
    """Write-fact entries for tracked changes (text files get the same facts as a file tool's write)."""
    entries: list[dict[str, Any]] = []
    for path, action in changes[:MAX_LISTED]:
        if action == "delete":
            entries.append(write_entry(path, None, "delete", by="command"))
            continue
        text = _text(root / path)
        entry = write_entry(path, text, action, by="command")
        if text is None:
            entry["binary"] = True
        entries.append(entry)
    return entries


# --- inotify: the same answer without walking the tree around every command ---------------------------

_IN_MODIFY, _IN_ATTRIB, _IN_CLOSE_WRITE = 0x2, 0x4, 0x8
_IN_MOVED_FROM, _IN_MOVED_TO, _IN_CREATE, _IN_DELETE = 0x40, 0x80, 0x100, 0x200
_IN_DELETE_SELF, _IN_MOVE_SELF, _IN_Q_OVERFLOW, _IN_IGNORED, _IN_ISDIR = 0x400, 0x800, 0x4000, 0x8000, 0x40000000
_IN_ONLYDIR, _IN_DONT_FOLLOW, _IN_EXCL_UNLINK = 0x01000000, 0x02000000, 0x04000000
_WATCH_MASK = (_IN_MODIFY | _IN_ATTRIB | _IN_CLOSE_WRITE | _IN_MOVED_FROM | _IN_MOVED_TO | _IN_CREATE | _IN_DELETE
               | _IN_DELETE_SELF | _IN_MOVE_SELF | _IN_ONLYDIR | _IN_DONT_FOLLOW | _IN_EXCL_UNLINK)
_EVENT = struct.Struct("iIII")
MAX_WATCHES = 20_000


def _libc() -> Any:
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.inotify_init1.argtypes = [ctypes.c_int]
        libc.inotify_add_watch.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_uint32]
        return libc
    except (OSError, AttributeError):
        return None


class ChangeTracker:
    """Which files under a root change while a command runs (one per run; thread-safe).

    With inotify (Linux) the tree is walked once, when the tracker starts; each command then costs
    reading the kernel's event queue. Without it, or when the kernel's limits are reached or its queue
    overflows, it falls back to a :class:`Snapshot` before and after each command.
    """

    def __init__(self, root: Path, observer: ChangeObserver | None = None) -> None:
        self.root = root
        self.observer = observer
        self._lock = threading.Lock()
        self._fd: int | None = None
        self._dirs: dict[int, str] = {}       # watch descriptor → directory (relative, "" for the root)
        self._files: set[str] = set()          # known files (relative)
        self._libc = _libc() if sys.platform.startswith("linux") else None
        self._start()

    @property
    def live(self) -> bool:
        """Whether inotify backs this tracker (else every command walks the tree twice)."""
        return self._fd is not None

    def _start(self) -> None:
        if self._libc is None:
            return
        fd = self._libc.inotify_init1(os.O_NONBLOCK | os.O_CLOEXEC)
        if fd < 0:
            return
        self._fd = fd
        if not self._watch_tree(""):
            self.close()

    def _watch_tree(self, rel_dir: str) -> bool:
        """Watch ``rel_dir`` and everything under it; record its files. False when limits were hit."""
        stack = [rel_dir]
        while stack:
            current = stack.pop()
            if len(self._dirs) >= MAX_WATCHES or len(self._files) > MAX_ENTRIES:
                return False
            path = os.path.join(self.root, current) if current else str(self.root)
            assert self._fd is not None and self._libc is not None
            wd = self._libc.inotify_add_watch(self._fd, os.fsencode(path), _WATCH_MASK)
            if wd < 0:
                if ctypes.get_errno() in (28, 24):  # ENOSPC (watch limit), EMFILE
                    return False
                continue  # vanished or not a directory any more
            self._dirs[wd] = current
            try:
                with os.scandir(path) as entries:
                    for entry in entries:
                        rel = f"{current}/{entry.name}" if current else entry.name
                        if entry.is_dir(follow_symlinks=False):
                            if entry.name not in SKIP_DIRS and not entry.name.endswith(".egg-info"):
                                stack.append(rel)
                        else:
                            self._files.add(rel)
            except OSError:
                continue
        return True

    def close(self) -> None:
        with self._lock:
            if self._fd is not None:
                os.close(self._fd)
                self._fd = None

    def begin(self) -> Snapshot | None:
        """Before a command: forget changes made since the last one (file tools, the user)."""
        with self._lock:
            if self._fd is None:
                if self.observer is not None:
                    self.observer.refresh(None)
                return Snapshot.take(self.root)
            touched, _complete = self._drain(report=True)
            self._apply(touched)
            if self.observer is not None:
                self.observer.refresh(touched)
            return None

    def end(self, before: Snapshot | None) -> tuple[list[tuple[str, str]], bool]:
        """After the command: ``(changes, complete)``."""
        with self._lock:
            if self._fd is None or before is not None:
                after = Snapshot.take(self.root)
                found, complete = (before.changes(after) if before is not None else []), bool(
                    before is not None and before.complete and after.complete)
            else:
                touched, complete = self._drain(report=True)
                found = self._classify(touched)
            if self.observer is not None:
                self.observer.command_changes(found, complete)
            return found, complete

    def _drain(self, report: bool) -> tuple[set[str], bool]:
        touched: set[str] = set()
        complete = True
        assert self._fd is not None
        while True:
            try:
                data = os.read(self._fd, 256 * 1024)
            except BlockingIOError:
                break
            except OSError:
                return touched, False
            offset = 0
            while offset + _EVENT.size <= len(data):
                wd, mask, _cookie, length = _EVENT.unpack_from(data, offset)
                raw = data[offset + _EVENT.size: offset + _EVENT.size + length].rstrip(b"\0")
                offset += _EVENT.size + length
                if mask & _IN_Q_OVERFLOW:
                    complete = False
                    continue
                directory = self._dirs.get(wd)
                if directory is None:
                    continue
                if mask & (_IN_IGNORED | _IN_DELETE_SELF | _IN_MOVE_SELF) and not raw:
                    if mask & _IN_IGNORED:
                        self._dirs.pop(wd, None)
                    touched.update(f for f in self._files if directory and (f == directory
                                                                           or f.startswith(directory + "/")))
                    continue
                name = os.fsdecode(raw)
                if not name:
                    continue
                rel = f"{directory}/{name}" if directory else name
                if mask & _IN_ISDIR:
                    if name in SKIP_DIRS or name.endswith(".egg-info"):
                        continue
                    if mask & (_IN_CREATE | _IN_MOVED_TO):
                        before = set(self._files)
                        if not self._watch_tree(rel):
                            complete = False
                        fresh = self._files - before  # new to us: reported as created
                        self._files -= fresh
                        touched.update(fresh)
                    if mask & (_IN_DELETE | _IN_MOVED_FROM):
                        touched.update(f for f in self._files if f.startswith(rel + "/"))
                    continue
                touched.add(rel)
        if not report:
            self._apply(touched)
            return set(), complete
        return touched, complete

    def _apply(self, touched: set[str]) -> None:
        for rel in touched:
            if os.path.lexists(os.path.join(self.root, rel)):
                self._files.add(rel)
            else:
                self._files.discard(rel)

    def _classify(self, touched: set[str]) -> list[tuple[str, str]]:
        found: list[tuple[str, str]] = []
        for rel in sorted(touched):
            exists = os.path.lexists(os.path.join(self.root, rel))
            known = rel in self._files
            if exists and not os.path.isdir(os.path.join(self.root, rel)):
                found.append((rel, "update" if known else "create"))
                self._files.add(rel)
            elif not exists and known:
                found.append((rel, "delete"))
                self._files.discard(rel)
        return found


class ChangeObserver(Protocol):
    """Told about files around commands (the run's undo journal keeps their prior content)."""

    def take_baseline(self) -> None: ...

    def refresh(self, rels: Iterable[str] | None) -> None: ...

    def command_changes(self, changes: list[tuple[str, str]], complete: bool) -> None: ...


class RunChanges:
    """The run's change tracker, started on the first command (a run that runs none pays nothing).

    An ``observer`` takes its baseline right after the tracker starts watching, so a change in
    between is seen by the tracker and refreshed before the command.
    """

    def __init__(self, root: Path, observer: ChangeObserver | None = None) -> None:
        self.root = root
        self.observer = observer
        self._tracker: ChangeTracker | None = None
        self._lock = threading.Lock()

    def tracker(self) -> ChangeTracker:
        with self._lock:
            if self._tracker is None:
                self._tracker = ChangeTracker(self.root, self.observer)
                if self.observer is not None:
                    self.observer.take_baseline()
            return self._tracker

    def close(self) -> None:
        with self._lock:
            if self._tracker is not None:
                self._tracker.close()
                self._tracker = None
