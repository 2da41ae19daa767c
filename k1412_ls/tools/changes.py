"""Workspace change tracking: what a command changed on disk, as write facts.

A :class:`Snapshot` records (size, mtime, inode, type) of every file under
the workspace root before a command and again after it; the difference is
the list of paths the command created, changed or deleted, so ``sed -i``,
``>``, ``rm``, ``mv`` and generators become write facts like any file
tool's. Directories that hold caches, dependencies or version control
internals are skipped (``SKIP_DIRS``), and a tree with more than
``MAX_ENTRIES`` files is marked incomplete rather than walked for ever: the
gate then treats the command's changes as unknown.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

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
