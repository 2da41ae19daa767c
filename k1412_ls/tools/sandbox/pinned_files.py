"""Files the approval check judged, pinned for as long as the command it judged runs.

The ``ask``/``forbid`` rules read what a line runs from files (``bash rel.sh``, a Makefile, ``package.json``,
``./gt``'s bytes: ``tools.approval.judged_reads``). What the approval read must be what runs, so the exact bytes
it read are written to a private copy and bound read-only over the file's path in that command's sandbox
(``--ro-bind COPY PATH``): a write through the path fails (``EROFS``), and so do a rename over it and an unlink
(``EBUSY``: the path is a mount point there), also for every process the command starts.

A mount point holds only in its own mount namespace: a process of another sandbox of the run could still rename
a file over the path, which detaches the cover (the kernel lazily unmounts a mount whose dentry is replaced in
another namespace). So while a judged command runs, every sandbox of the run started meanwhile gets the same
read-only covers (:meth:`PinRegistry.live`), the file tools refuse to write those paths
(:func:`pinned_by_a_command`), and a command whose approval depends on file content while another command of
the run is running is not trusted by content (the approval asks: ``tools.approval.approval_policy``).
"""

from __future__ import annotations

import itertools
import os
import shutil
import tempfile
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from k1412_ls.tools.errors import ToolError

# A judged program file larger than this is bound onto itself (read-only) instead of copied.
MAX_COPY_BYTES = 16 * 1024 * 1024

Judged = tuple[tuple[str, bytes | None], ...]  # (resolved path, the bytes judged or None for "too large to copy")

_PROCESS_PINS: dict[int, tuple[str, ...]] = {}  # every run's live pins, for the file tools (one process-wide view)
_PROCESS_LOCK = threading.Lock()
_TOKENS = itertools.count(1)


def pinned_by_a_command(path: str) -> bool:
    """Whether a running command of any run has ``path`` (resolved) pinned as its approval judged it."""
    with _PROCESS_LOCK:
        return any(path in paths for paths in _PROCESS_PINS.values())


@dataclass
class PinRegistry:
    """One run's pinned files and running commands (held by the run's :class:`RunSandbox`)."""

    _lock: threading.Lock = field(default_factory=threading.Lock)
    _pins: dict[int, tuple[tuple[str, str], ...]] = field(default_factory=dict)  # token → (source, path)
    _running: int = 0

    def live(self) -> tuple[tuple[str, str], ...]:
        """Every (source, path) a running command of the run has pinned, for a sandbox starting now."""
        with self._lock:
            return tuple(dict.fromkeys(p for pins in self._pins.values() for p in pins))

    def materialize(self, judged: Judged) -> tuple[tuple[tuple[str, str], ...], str]:
        """Private read-only copies of the judged bytes: the (copy, path) pairs to bind and the directory of the
        copies ("" for none); nothing registered yet.

        Refuses (one sentence) a judged file that is gone or no longer a regular file: what runs would not be
        what was judged.
        """
        if not judged:
            return (), ""
        directory = tempfile.mkdtemp(prefix="k1412-judged-")
        pins: list[tuple[str, str]] = []
        for index, (path, data) in enumerate(judged):
            if not os.path.isfile(path) or os.path.islink(path):
                shutil.rmtree(directory, ignore_errors=True)
                raise ToolError(f"The file {os.path.basename(path)} changed after the approval check read it (it is "
                                "gone or no longer a plain file), so the command was not run; run it again.")
            if data is None:
                pins.append((path, path))  # too large to copy: bound onto itself, read-only
                continue
            copy = os.path.join(directory, str(index))
            mode = os.stat(path).st_mode & 0o555
            with open(copy, "wb") as handle:
                handle.write(data)
            os.chmod(copy, mode | 0o400)
            pins.append((copy, path))
        return tuple(pins), directory

    def hold(self, pins: tuple[tuple[str, str], ...], directory: str = "") -> Callable[[], None]:
        """Register ``pins`` as live (the command is starting) and count it running; the callable undoes both."""
        token = next(_TOKENS)
        with self._lock:
            self._running += 1
            if pins:
                self._pins[token] = pins
        if pins:
            with _PROCESS_LOCK:
                _PROCESS_PINS[token] = tuple(path for _, path in pins)
        done = threading.Event()

        def release() -> None:
            if done.is_set():
                return
            done.set()
            with self._lock:
                self._running -= 1
                self._pins.pop(token, None)
            with _PROCESS_LOCK:
                _PROCESS_PINS.pop(token, None)
            if directory:
                shutil.rmtree(directory, ignore_errors=True)  # mounts made from them keep their inodes

        return release

    def running(self) -> int:
        """How many commands of the run are running now (foreground and background)."""
        with self._lock:
            return self._running


def inside_any(path: str, roots: Iterable[str]) -> bool:
    return any(path == r or path.startswith(r.rstrip("/") + "/") for r in roots)


__all__ = ["MAX_COPY_BYTES", "Judged", "PinRegistry", "inside_any", "pinned_by_a_command"]
