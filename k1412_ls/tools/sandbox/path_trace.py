"""Resolving paths the way the kernel does, noting every entry looked at, so the answers can be re-checked cheaply.

The paths a command's sandbox hides or keeps read-only (``~/.ssh``, ``~/.bashrc``, ``PATH``
directories …) are mounted at their resolved locations. Resolved once per run, a symlink re-pointed
between two commands (``~/.ssh -> dots/ssh`` made to point at ``dots2/ssh``) would leave the new
target uncovered. Resolving them all for every command costs ~1 ms; instead each resolution notes what
it saw of every entry it looked at (its type and inode, a symlink's target, or that it was missing),
and :meth:`PathTrace.unchanged` says with one ``lstat`` per entry whether every answer still holds.
A symlink is never changed in place (re-pointing one makes a new one), and its target is re-read too,
so an inode number reused for a new link is caught as well.
"""

from __future__ import annotations

import os
import stat
import threading
from collections.abc import Callable, Hashable, Iterable

MAX_LINKS = 40  # as the kernel: more symlinks than this in one resolution is a loop
Seen = tuple[int, int, int, str] | None  # (device, inode, file type, link target); None: missing


def _look(path: str) -> Seen:
    try:
        info = os.lstat(path)
    except OSError:
        return None
    kind = stat.S_IFMT(info.st_mode)
    target = ""
    if kind == stat.S_IFLNK:
        try:
            target = os.readlink(path)
        except OSError:
            return None
    return info.st_dev, info.st_ino, kind, target


class PathTrace:
    """Resolutions that share what they looked at (one ``lstat`` per entry for all of them)."""

    def __init__(self) -> None:
        self.seen: dict[str, Seen] = {}

    def _entry(self, path: str) -> Seen:
        if path not in self.seen:
            self.seen[path] = _look(path)
        return self.seen[path]

    def resolve(self, path: str) -> str:
        """``path`` with every symlink followed and ``.``/``..`` applied (missing parts kept as written)."""
        links = [0]
        # Not abspath: it would apply '..' before the symlinks it follows are known.
        return self._resolve("/", path if path.startswith("/") else os.path.join(os.getcwd(), path), links)

    def _resolve(self, base: str, path: str, links: list[int]) -> str:
        current = "/" if path.startswith("/") else base
        parts = [p for p in path.split("/") if p and p != "."]
        for index, name in enumerate(parts):
            if name == "..":
                current = os.path.dirname(current)
                continue
            candidate = os.path.join(current, name)
            seen = self._entry(candidate)
            if seen is None or seen[2] != stat.S_IFLNK:
                current = candidate
                continue
            links[0] += 1
            if links[0] > MAX_LINKS:
                return os.path.join(candidate, *parts[index + 1:])
            current = self._resolve(current, seen[3], links)
        return current

    def resolve_all(self, paths: Iterable[str]) -> list[str]:
        return [self.resolve(p) for p in paths]

    def unchanged(self) -> bool:
        """Whether every entry looked at is as it was (so every resolution made here still holds)."""
        return all(_look(path) == seen for path, seen in self.seen.items())


class KeptResolution:
    """Paths resolved as they are now, re-resolved only when something they went through changed.

    What was resolved once stays in the answer (while ``key`` is the same): a secret that lay behind a
    symlink before it was re-pointed is still refused afterwards. Fail closed: forgetting would expose it.
    """

    MAX_PATHS = 10_000

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._key: Hashable = None
        self._trace: PathTrace | None = None
        self._paths: dict[str, None] = {}

    def resolve(self, key: Hashable, paths: Callable[[], Iterable[str]]) -> tuple[str, ...]:
        with self._lock:
            if key == self._key and self._trace is not None and self._trace.unchanged():
                return tuple(self._paths)
            if key != self._key or len(self._paths) > self.MAX_PATHS:
                self._paths = {}
            trace = PathTrace()
            self._paths.update(dict.fromkeys(trace.resolve_all(paths())))
            self._key, self._trace = key, trace
            return tuple(self._paths)


__all__ = ["KeptResolution", "PathTrace"]
