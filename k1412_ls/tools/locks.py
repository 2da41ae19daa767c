"""Process-wide per-user write locks.

Workspace writes of one user are serialized across every concurrent run,
LSP request and CLI call in this process. Runs should set
``ToolContext.write_lock = user_write_lock(user)``; writing tools use
:func:`write_guard`, which also takes the user's lock when a context carries
a private one, always in the same order (user lock first) so two guards can
never deadlock.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager

from k1412_ls.tools.registry import ToolContext

_LOCKS: dict[str, threading.RLock] = {}
_GUARD = threading.Lock()


def user_write_lock(user: str) -> threading.RLock:
    """The one re-entrant write lock of ``user`` in this process (created on first use)."""
    with _GUARD:
        lock = _LOCKS.get(user)
        if lock is None:
            lock = _LOCKS[user] = threading.RLock()
        return lock


@contextmanager
def write_guard(ctx: ToolContext) -> Iterator[None]:
    """Hold the user's process-wide write lock and the context's lock for one write."""
    user_lock = user_write_lock(ctx.user)
    with user_lock:
        if ctx.write_lock is user_lock:
            yield
        else:
            with ctx.write_lock:
                yield
