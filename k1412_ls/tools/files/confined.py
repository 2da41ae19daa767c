"""Opening workspace paths so that confinement holds at open time, not only when the path was checked.

:meth:`Workspace.resolve` proves a path is inside the workspace *now*; a
command running beside the file tools can swap a directory for a symlink a
moment later. So every read, listing and write opens its path by walking
from a **pinned** descriptor of the workspace root (opened when the
workspace was first used, so swapping the root itself for a symlink later
changes nothing) one component at a time with ``O_NOFOLLOW``: a component
that has become a symlink fails with ``ELOOP``/``ENOTDIR`` instead of
leading outside. Paths outside every pinned root (none in normal use) are
walked the same way from ``/``.
"""

from __future__ import annotations

import errno
import os
import threading
from collections import OrderedDict
from pathlib import Path

from k1412_ls.tools.errors import ToolError

DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
MAX_PINNED = 64


class PinnedRoot:
    """A directory held open by descriptor; walks start from a duplicate of it."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.fd = os.open(path, DIR_FLAGS)

    def close(self) -> None:
        os.close(self.fd)


_lock = threading.Lock()
_pinned: OrderedDict[str, PinnedRoot] = OrderedDict()


def pin_root(path: Path | str) -> None:
    """Pin ``path`` (a real directory path) from now on; a no-op when it is pinned already."""
    real = os.path.realpath(path)
    with _lock:
        if real in _pinned:
            _pinned.move_to_end(real)
            return
        try:
            _pinned[real] = PinnedRoot(real)
        except OSError:
            return  # not a directory (yet): paths below it are walked from "/"
        while len(_pinned) > MAX_PINNED:
            _, oldest = _pinned.popitem(last=False)
            oldest.close()


def start_walk(path: str) -> tuple[int, list[str]]:
    """A new descriptor to walk from and the components below it (the deepest pinned root wins)."""
    with _lock:
        best = ""
        for root in _pinned:
            if (path == root or path.startswith(root.rstrip("/") + "/")) and len(root) > len(best):
                best = root
        if best:
            _pinned.move_to_end(best)
            fd = os.dup(_pinned[best].fd)
            rest = path[len(best):]
            return fd, [part for part in rest.split("/") if part]
    return os.open("/", DIR_FLAGS), [part for part in path.split("/") if part]


def open_confined(path: Path | str, flags: int, mode: int = 0o666) -> int:
    """Open ``path`` (absolute, normalized) with no symlink followed anywhere below its pinned root.

    ``flags`` apply to the last component (``O_NOFOLLOW`` is added). Raises
    ``OSError`` like :func:`os.open`; a component swapped for a symlink gives
    ``ELOOP`` (or ``ENOTDIR``).
    """
    text = os.path.normpath(os.fspath(path))
    if not os.path.isabs(text):
        raise ValueError(f"open_confined needs an absolute path, not {text!r}")
    fd, parts = start_walk(text)
    try:
        if any(part == ".." for part in parts):
            raise OSError(errno.EACCES, "a '..' component is not walked", text)
        for part in parts[:-1]:
            next_fd = os.open(part, DIR_FLAGS, dir_fd=fd)
            os.close(fd)
            fd = next_fd
        if not parts:  # the pinned root (or "/") itself
            if flags & os.O_DIRECTORY:
                return fd
            raise OSError(errno.EISDIR, "is a directory", text)
        result = os.open(parts[-1], flags | os.O_NOFOLLOW | os.O_CLOEXEC, mode, dir_fd=fd)
    except BaseException:
        os.close(fd)
        raise
    os.close(fd)
    return result


def open_dir_confined(path: Path | str) -> int:
    """A descriptor of directory ``path``, opened as :func:`open_confined` does."""
    return open_confined(path, DIR_FLAGS)


def moved_away(path: Path | str) -> bool:
    """True when ``path`` is pinned but no longer names the directory it named when pinned."""
    real = os.path.normpath(os.fspath(path))
    with _lock:
        pinned = _pinned.get(real)
        if pinned is None:
            return False
        held = os.fstat(pinned.fd)
    try:
        now = os.stat(real, follow_symlinks=False)
    except OSError:
        return True
    return (now.st_dev, now.st_ino) != (held.st_dev, held.st_ino)


def refuse_if_moved(path: Path | str) -> None:
    if moved_away(path):
        raise ToolError(f"The workspace root {path} was replaced since K1412 started using it (it is now a "
                        "different directory or a symlink); nothing was read or written. Restart the run.")


__all__ = ["DIR_FLAGS", "moved_away", "open_confined", "open_dir_confined", "pin_root", "refuse_if_moved",
           "start_walk"]
