"""Links from outside the workspace into it, in places the user's own tools read or run from.

A dotfiles repository opened as the workspace is the common case: ``~/.config/git/config`` or a program in
``~/.local/bin`` is a symlink to a file in the workspace. The start-up files and ``PATH`` directories are
read-only to commands and refused to the file tools (``protected_paths``), but a link inside them leads to a
file in the workspace, which is writable like the rest of it: a command or an ``apply_patch`` there would
change what the user's shell, git or ``PATH`` runs next. Every such link's target is treated as the place it
is read from: read-only to commands and refused to the file tools.

Only directories that are not system package directories are walked (``/usr``, ``/bin`` … hold no link a
run can make), a few levels deep and a bounded number of entries, so a command start pays little.
"""

from __future__ import annotations

import os
from collections.abc import Iterable

from k1412_ls.tools.sandbox.mounts import inside

SYSTEM_DIRS = ("/usr", "/bin", "/sbin", "/lib", "/lib64", "/etc", "/snap", "/opt/homebrew/Cellar")
MAX_ENTRIES = 4000
MAX_DEPTH = 3


def _walk(path: str, depth: int, budget: list[int]) -> Iterable[str]:
    """Symlinks at or under ``path`` (itself included), depth-first, within the shared entry budget."""
    if budget[0] <= 0:
        return
    budget[0] -= 1
    try:
        if os.path.islink(path):
            yield path
            return
        if depth >= MAX_DEPTH or not os.path.isdir(path):
            return
        with os.scandir(path) as entries:
            children = [e.path for e in entries]
    except OSError:
        return
    for child in children:
        yield from _walk(child, depth + 1, budget)


def inward_link_targets(root: str, places: Iterable[str]) -> list[str]:
    """The real paths inside ``root`` that links at or under ``places`` (outside ``root``) lead to."""
    real_root = os.path.realpath(root)
    budget = [MAX_ENTRIES]
    found: dict[str, None] = {}
    for place in places:
        if not place or not os.path.isabs(place) or any(inside(place, s) for s in SYSTEM_DIRS):
            continue
        if inside(os.path.realpath(os.path.dirname(place)) if os.path.islink(place) else place, real_root):
            continue  # inside the workspace itself: covered by the workspace's own rules
        for link in _walk(place, 0, budget):
            target = os.path.realpath(link)
            if inside(target, real_root) and target != real_root:
                found.setdefault(target, None)
    return list(found)


__all__ = ["inward_link_targets"]
