"""Programs installed under the host's ``/tmp``, kept reachable behind a command's private ``/tmp``.

Every sandbox K1412 starts mounts a private ``/tmp`` over the host's, so temp files, sockets and other
users' work there stay out of reach. But people clone and install into ``/tmp`` to try things: K1412
itself (its stage and spawner scripts run by path inside the sandbox), its interpreter's venv, and the
user's own tools on ``PATH``. Those trees are bound back read-only, each at its own place; nothing else
of the host's ``/tmp`` is.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable

from k1412_ls.tools.sandbox.mounts import inside

HOST_TMP = "/tmp"


def tool_root(path: str) -> str:
    """The tree to bind for a program directory: a venv's root (where ``pyvenv.cfg`` lies) when ``path`` is
    its ``bin``, else ``path`` itself."""
    parent = os.path.dirname(path)
    if os.path.basename(path) in ("bin", "Scripts") and os.path.isfile(os.path.join(parent, "pyvenv.cfg")):
        return parent
    return path


def tmp_tool_roots(paths: Iterable[str], keep: Iterable[str] = ()) -> list[str]:
    """The trees under the host's ``/tmp`` among ``paths`` (resolved already) that must stay visible.

    A tree holding a path the sandbox binds writable later (``keep``: the workspace, its cwd) or lying
    inside one is left to that bind; a tree inside another is bound with it, not twice.
    """
    kept = [k for k in keep if k]
    roots: list[str] = []
    for path in paths:
        if not path or path == HOST_TMP or not inside(path, HOST_TMP) or not os.path.isdir(path):
            continue
        root = tool_root(path)
        if any(inside(root, k) or inside(k, root) for k in kept):
            continue
        roots.append(root)
    unique = sorted(set(roots))
    return [r for r in unique if not any(r != other and inside(r, other) for other in unique)]


def tmp_tool_flags(paths: Iterable[str], keep: Iterable[str] = ()) -> list[str]:
    """``--ro-bind`` flags for :func:`tmp_tool_roots`, to place right after the private ``/tmp``."""
    flags: list[str] = []
    for root in tmp_tool_roots(paths, keep):
        flags += ["--ro-bind", root, root]
    return flags




_TMP_PATH = re.compile(r"(?<![\w/.-])/tmp/[^\s:'\"`;,()<>|&]+")


def hidden_tmp_note(output: str, private_tmp: str | None) -> str | None:
    """One sentence when a failed command's output names a path under ``/tmp`` that exists on the host but
    not in the run's private ``/tmp`` — the likely cause of its "No such file or directory"."""
    if not private_tmp:
        return None
    for match in _TMP_PATH.finditer(output):
        path = match.group(0).rstrip(".")
        rel = os.path.relpath(path, HOST_TMP)
        if rel.startswith("..") or os.path.lexists(os.path.join(private_tmp, rel)):
            continue
        if os.path.lexists(path):
            return (f"{path} exists on this machine but not inside the sandbox: commands get a private /tmp; "
                    "copy what the command needs into the workspace (or have the user add its directory to "
                    "[sandbox] writable).")
    return None


__all__ = ["HOST_TMP", "hidden_tmp_note", "tmp_tool_flags", "tmp_tool_roots", "tool_root"]
