"""Programs K1412 runs itself (git, rg, prlimit, sh, bwrap), found only where a command cannot plant one.

A model's command can write wherever the sandbox lets it, and a user's
``PATH`` often starts with directories the user (and so, without a sandbox,
any command) can write: ``~/.local/bin``, ``~/bin``, a virtualenv in the
workspace. A ``git`` planted there would run *outside* the sandbox with
K1412's own environment. So K1412 never looks its helpers up on ``PATH``: it
takes them from the fixed system directories below, and only when every
directory from ``/`` down to the file, and the file itself, belongs to root
and is writable by nobody else.
"""

from __future__ import annotations

import functools
import os
import stat

SYSTEM_DIRS: tuple[str, ...] = ("/usr/local/sbin", "/usr/local/bin", "/usr/sbin", "/usr/bin", "/sbin", "/bin")
# The PATH K1412's own helper processes (git tools, search) run with.
SAFE_PATH = ":".join(SYSTEM_DIRS)


def _owned_by_root_and_not_shared(path: str) -> bool:
    try:
        info = os.stat(path)
    except OSError:
        return False
    return info.st_uid == 0 and not info.st_mode & (stat.S_IWGRP | stat.S_IWOTH)


def trusted_location(path: str) -> bool:
    """True when ``path`` (resolved) and every directory above it are root's and not group/world-writable."""
    real = os.path.realpath(path)
    if not _owned_by_root_and_not_shared(real):
        return False
    parent = os.path.dirname(real)
    while True:
        if not _owned_by_root_and_not_shared(parent):
            return False
        if parent == "/":
            return True
        parent = os.path.dirname(parent)


@functools.lru_cache(maxsize=32)
def trusted_program(name: str) -> str | None:
    """The absolute, resolved path of system program ``name``, or None when no trusted copy exists."""
    if "/" in name:
        raise ValueError(f"trusted_program takes a bare program name, not {name!r}")
    for directory in SYSTEM_DIRS:
        candidate = os.path.join(directory, name)
        if os.path.isfile(candidate) and os.access(candidate, os.X_OK) and trusted_location(candidate):
            return os.path.realpath(candidate)
    return None


__all__ = ["SAFE_PATH", "SYSTEM_DIRS", "trusted_location", "trusted_program"]
