"""Where a command's writes land as the approval policy sees them, and what approving such a write opens."""

from __future__ import annotations

import os
from pathlib import Path

from k1412_ls.tools.sandbox.command_sandbox import SECRET_PATHS, STARTUP_FILES


def outside_writable(path: str, workspace: Path | None, writable: tuple[str, ...]) -> str | None:
    """The normalized path when it lies outside every place a command may write, else None."""
    home = os.environ.get("HOME") or str(Path.home())
    if path.startswith("~/") or path == "~":
        path = home + path[1:]
    if not os.path.isabs(path):
        if workspace is None or not path.startswith(".."):
            return None  # relative to the command's directory inside the workspace
        path = os.path.join(workspace, path)
    path = os.path.normpath(path)
    allowed = ["/tmp", "/dev", "/proc/self", *(os.path.expanduser(w) for w in writable)]
    if workspace is not None:
        allowed.append(str(workspace))
    if any(path == root or path.startswith(root.rstrip("/") + "/") for root in allowed):
        return None
    return path


def writable_dir_for(path: str) -> str:
    """What an approval of a write to ``path`` makes writable.

    The deepest existing directory that holds it, unless that directory holds
    start-up files, secrets or K1412's own config (``$HOME``, ``~/.config``):
    then only the file itself, which K1412 creates empty when the command is
    approved, so the approval cannot widen to ``~/.bash_login`` and the like.
    """
    current = path if os.path.isdir(path) else os.path.dirname(path)
    while current != "/" and not os.path.isdir(current):
        current = os.path.dirname(current)
    if _holds_protected(current) and not os.path.isdir(path):
        return path
    return current


def _holds_protected(directory: str) -> bool:
    home = os.path.realpath(os.environ.get("HOME") or str(Path.home()))
    protected = [os.path.join(home, name) for name in (*STARTUP_FILES, *SECRET_PATHS)]
    root = directory.rstrip("/") + "/"
    return directory in ("/", home) or home.startswith(root) or any(p.startswith(root) for p in protected)


__all__ = ["outside_writable", "writable_dir_for"]
