"""What a process inside a kept sandbox checks before it starts a program there: every cover still in place.

Used by the readers' spawner (``tools.sandbox.reader_spawner``) and the command stage (``tools.sandbox.command_stage``),
which run inside bubblewrap without site-packages and load this file by path: standard library only.
A path the sandbox covers (an empty ``--tmpfs``, or ``/dev/null`` bound over a file) can be uncovered
from the host: a rename over it, or its removal, detaches the cover in the sandbox's namespace. So
what the covered paths and the workspace root look like is taken when the sandbox starts and compared
before each program starts.
"""

from __future__ import annotations

import os
import stat

Snapshot = list[tuple[int, int]]


def snapshot(tmpfs: list[str], null: list[str], root: str) -> Snapshot | None:
    """What the covered paths and the root look like now; None when something is no longer covered."""
    out: Snapshot = []
    try:
        for path in tmpfs:
            info = os.lstat(path)
            if not stat.S_ISDIR(info.st_mode):
                return None
            out.append((info.st_dev, info.st_ino))
        for path in null:
            info = os.lstat(path)
            if not stat.S_ISCHR(info.st_mode):
                return None
            out.append((info.st_rdev, 0))
        info = os.stat(root)
    except OSError:
        return None
    out.append((info.st_dev, info.st_ino))
    return out


def covered_at_start(tmpfs: list[str], null: list[str]) -> bool:
    """Every ``--tmpfs`` path is a mount of its own and every ``/dev/null`` cover is /dev/null."""
    try:
        null_dev = os.stat("/dev/null").st_rdev
        for path in tmpfs:
            if os.lstat(path).st_dev == os.lstat(os.path.dirname(path) or "/").st_dev:
                return False
        return all(os.lstat(path).st_rdev == null_dev for path in null)
    except OSError:
        return False


def cover_checks(flags: list[str]) -> dict[str, list[str]]:
    """The paths bubblewrap ``flags`` cover, for the process inside to check: ``--tmpfs`` mounts and ``/dev/null`` binds."""
    tmpfs: list[str] = []
    null: list[str] = []
    for index, flag in enumerate(flags):
        if flag == "--tmpfs":
            tmpfs.append(flags[index + 1])
        elif flag == "--ro-bind" and flags[index + 1] == "/dev/null":
            null.append(flags[index + 2])
    return {"tmpfs": list(dict.fromkeys(tmpfs)), "null": list(dict.fromkeys(null))}


__all__ = ["Snapshot", "cover_checks", "covered_at_start", "snapshot"]
