"""Write locks: per user inside one process, and per workspace across processes.

Workspace writes of one user are serialized across every concurrent run,
LSP request and CLI call in this process. Runs should set
``ToolContext.write_lock = user_write_lock(user)``; writing tools use
:func:`write_guard`, which also takes the user's lock when a context carries
a private one, always in the same order (user lock first) so two guards can
never deadlock.

The guard then takes the workspace lock: an exclusive ``flock`` on one lock
file per workspace in K1412's state directory (``locks/<hash of the root>.lock``,
never inside the workspace), so a ``k1412 run`` beside another one, or beside
``k1412 lsp``, reads, computes and writes a file while the others wait. It is
held through the whole read-modify-write (and the editor's applyEdit round
trip). A guard waits at most :data:`LOCK_WAIT_S` for another process and stops
waiting as soon as its run is cancelled. If the lock file cannot be created
(an unwritable state directory) writes go on without it: the document store
still compares the file with the edit's base just before the rename.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from k1412_ls.locations import state_dir
from k1412_ls.tools.errors import ToolError
from k1412_ls.tools.registry import ToolContext

# Longest wait for another process's (or thread's) write in the same workspace.
LOCK_WAIT_S = 30.0
_POLL_MIN_S = 0.001
_POLL_MAX_S = 0.02

_LOCKS: dict[str, threading.RLock] = {}
_WORKSPACES: dict[str, WorkspaceLock] = {}
_GUARD = threading.Lock()


def user_write_lock(user: str) -> threading.RLock:
    """The one re-entrant write lock of ``user`` in this process (created on first use)."""
    with _GUARD:
        lock = _LOCKS.get(user)
        if lock is None:
            lock = _LOCKS[user] = threading.RLock()
        return lock


def lock_file_for(root: Path) -> Path:
    """The lock file of the workspace at ``root`` (in the state directory, keyed by the real path)."""
    key = hashlib.sha256(os.fsencode(os.path.realpath(root))).hexdigest()[:32]
    return state_dir() / "locks" / f"{key}.lock"


class WorkspaceLock:
    """One workspace's lock in this process: a re-entrant thread lock plus the cross-process flock."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._threads = threading.RLock()
        self._depth = 0
        self._fd: int | None = None

    @contextmanager
    def hold(self, cancel: threading.Event) -> Iterator[None]:
        deadline = time.monotonic() + LOCK_WAIT_S
        while not self._threads.acquire(timeout=_POLL_MAX_S):
            _give_up_if(cancel, deadline, "another K1412 run in this process")
        try:
            if self._depth == 0:
                self._fd = self._lock_file(cancel, deadline)
            self._depth += 1
            try:
                yield
            finally:
                self._depth -= 1
                if self._depth == 0 and self._fd is not None:
                    fd, self._fd = self._fd, None
                    try:
                        fcntl.flock(fd, fcntl.LOCK_UN)
                    finally:
                        os.close(fd)
        finally:
            self._threads.release()

    def _open(self) -> int | None:
        try:
            self.path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
            return os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
        except OSError:
            return None  # no lock file: the commit-time comparison still refuses stale writes

    def _lock_file(self, cancel: threading.Event, deadline: float) -> int | None:
        fd = self._open()
        if fd is None:
            return None
        pause = _POLL_MIN_S
        try:
            while True:
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except BlockingIOError:
                    _give_up_if(cancel, deadline, _holder(fd))
                    time.sleep(pause)
                    pause = min(pause * 2, _POLL_MAX_S)
                except OSError:
                    os.close(fd)  # no flock on this filesystem: same fallback as no lock file
                    return None
            try:
                os.ftruncate(fd, 0)
                os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
            except OSError:
                pass  # the holder's pid only improves the waiting message
            return fd
        except BaseException:
            os.close(fd)
            raise


def _holder(fd: int) -> str:
    try:
        pid = os.pread(fd, 32, 0).decode("ascii", "replace").strip()
    except OSError:
        pid = ""
    return f"another K1412 process (pid {pid})" if pid.isdigit() else "another K1412 process"


def _give_up_if(cancel: threading.Event, deadline: float, holder: str) -> None:
    if cancel.is_set():
        raise ToolError("The run was cancelled while waiting for another write in this workspace; "
                        "nothing was written.")
    if time.monotonic() > deadline:
        raise ToolError(f"Waited {LOCK_WAIT_S:g} s for {holder} writing in this workspace; nothing was "
                        f"written, retry in a moment.")


def workspace_lock(root: Path) -> WorkspaceLock:
    """The lock of the workspace at ``root`` in this process (one per lock file)."""
    path = lock_file_for(root)
    with _GUARD:
        lock = _WORKSPACES.get(str(path))
        if lock is None:
            lock = _WORKSPACES[str(path)] = WorkspaceLock(path)
        return lock


@contextmanager
def write_guard(ctx: ToolContext) -> Iterator[None]:
    """Hold the user's process-wide write lock, the context's lock and the workspace lock for one write."""
    user_lock = user_write_lock(ctx.user)
    shared = workspace_lock(ctx.workspace.root)
    with user_lock:
        if ctx.write_lock is user_lock:
            with shared.hold(ctx.cancel):
                yield
        else:
            with ctx.write_lock, shared.hold(ctx.cancel):
                yield
