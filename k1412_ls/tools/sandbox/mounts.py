"""The mounts of one command's sandbox, in order, and the placeholder directories some of them need.

A path the sandbox must keep read-only may not exist yet when a command
starts: a ``PATH`` entry such as ``ws/.venv/bin`` in a workspace without a
venv. Left alone, the command could create it and plant ``git`` there for the
user's next shell. So its first missing component (``ws/.venv``) is covered
by an empty read-only tmpfs; bubblewrap makes that directory as a mount point
(on the host too, since it lies in a bound directory), and it is removed again,
if still empty, when the last command that needed it ends (:class:`Placeholders`).
"""

from __future__ import annotations

import os
import threading
from dataclasses import dataclass, field


def inside(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip("/") + "/")


def missing_components(path: str) -> list[str] | None:
    """The directories from the first missing one down to ``path``; None unless the rest is a plain directory."""
    missing: list[str] = []
    current = path
    while not os.path.lexists(current):
        missing.append(current)
        parent = os.path.dirname(current)
        if parent == current:
            return None
        current = parent
    if not missing or not os.path.isdir(current) or os.path.islink(current):
        return None
    return list(reversed(missing))


def _between(root: str, path: str) -> list[str]:
    """The directories strictly between ``root`` and ``path``, top down."""
    parts = os.path.relpath(path, root).split(os.sep)[:-1]
    return [os.path.join(root, *parts[: i + 1]) for i in range(len(parts))]


@dataclass
class MountPlan:
    """The bubblewrap arguments for one command, built in mount order (later mounts cover earlier)."""

    writable: list[str] = field(default_factory=list)
    flags: list[str] = field(default_factory=list)
    placeholders: list[str] = field(default_factory=list)  # read-only paths made as empty mount points
    locked: list[str] = field(default_factory=list)  # read-only again inside a writable root (whole trees)
    anchors: set[str] = field(default_factory=set)  # directories bound onto themselves (see anchor_ancestors)
    anchor_at: int | None = None  # where in flags the anchors go: before every mount they must hold in place
    veiled: list[str] = field(default_factory=list)  # covered by an empty directory (``$HOME``, home_view)
    shown: list[str] = field(default_factory=list)  # bound read-only again inside a veiled directory
    covered: list[str] = field(default_factory=list)  # hidden directories (empty read-only tmpfs): all under them unseen

    def unseen(self, path: str) -> bool:
        """Whether ``path`` lies under a veil and nothing bound there shows it (no cover needed)."""
        if any(inside(path, c) for c in self.covered):
            return True  # a path under a hidden directory: covering it again would need a mount point there
        return (any(inside(path, v) for v in self.veiled)
                and not any(inside(path, s) for s in (*self.shown, *self.writable)))

    def show(self, source: str, path: str) -> None:
        """``source`` bound read-only at ``path`` (inside a veiled directory)."""
        self.flags += ["--ro-bind", source, path]
        self.shown.append(path)

    def bind(self, path: str) -> None:
        self.flags += ["--bind", path, path]
        self.writable.append(path)

    def lock(self, path: str) -> None:
        """A whole tree read-only inside a writable root (later :meth:`bind` calls may reopen parts of it)."""
        self.flags += ["--ro-bind", path, path]
        self.locked.append(path)

    def writable_at(self, path: str) -> bool:
        """Whether ``path`` lies in a writable mount: the deepest mount holding it decides."""
        deepest, verdict = -1, False
        for roots, value in ((self.writable, True), (self.locked, False)):
            for root in roots:
                # ">=" for locks: a tree locked at the same place as a writable root was bound later, and wins.
                if inside(path, root) and (len(root) > deepest or (not value and len(root) == deepest)):
                    deepest, verdict = len(root), value
        return verdict

    def read_only(self, path: str) -> None:
        if self.writable_at(path) and os.path.exists(path) and not self.unseen(path):
            self.anchor_ancestors(path)
            self.flags += ["--ro-bind", path, path]

    def pin(self, source: str, path: str) -> None:
        """``source`` (a private copy of what was judged at ``path``) bound read-only over ``path`` where a command
        could otherwise change it; the directories above it kept in place as for :meth:`read_only`."""
        if self.writable_at(path) and os.path.isfile(path) and not self.unseen(path):
            self.anchor_ancestors(path)
            self.flags += ["--ro-bind", source, path]

    def anchor_ancestors(self, path: str) -> None:
        """Keep ``path`` where it is: its directories below the deepest mount holding it become mount points.

        A covered or read-only path is itself a mount point, which cannot be renamed; but a writable
        directory above it can (``mv conf conf.bak``), and the path would then live on, uncovered, under a
        name no rule names. Each such directory is bound onto itself (placed by :meth:`place_anchors`
        before every cover, so no later bind uncovers one).
        """
        roots = [r for r in (*self.writable, *self.locked) if inside(path, r) and r != path]
        if not roots or not self.writable_at(path):
            return
        for ancestor in _between(max(roots, key=len), path):
            if os.path.isdir(ancestor) and not os.path.islink(ancestor):
                self.anchors.add(ancestor)

    def start_covers(self) -> None:
        """Mark where the covers begin: the anchors are placed here, after the writable binds."""
        self.anchor_at = len(self.flags)

    def place_anchors(self) -> None:
        """Insert the anchors, shallowest first (a bind of a parent after its child would cover the child's)."""
        if self.anchor_at is None or not self.anchors:
            return
        binds = [flag for path in sorted(self.anchors, key=lambda p: (p.count("/"), p))
                 for flag in ("--bind", path, path)]
        self.flags[self.anchor_at:self.anchor_at] = binds
        self.anchors = set()

    def protect_path_dir(self, path: str) -> None:
        """A ``PATH`` directory in a writable place: read-only, and no way to make one of that name again.

        Its directories up to the writable root are bound onto themselves (a mount
        point cannot be renamed, so ``mv .venv old && mkdir -p .venv/bin`` fails),
        then the directory itself is bound read-only; one that does not exist yet
        gets an empty read-only directory where its first missing component would
        be. Call before other read-only mounts inside the same root: a bind of an
        ancestor would uncover them.
        """
        roots = [w for w in self.writable if inside(path, w) and w != path]
        if not roots or not self.writable_at(path):
            return
        root = max(roots, key=len)
        target = path
        if not os.path.lexists(path):
            missing = missing_components(path)
            if missing is None:
                return
            target = missing[0]
        elif not os.path.isdir(path) or os.path.islink(path):
            return
        for ancestor in _between(root, target):
            if os.path.isdir(ancestor) and not os.path.islink(ancestor):
                self.anchors.add(ancestor)
        if target == path:
            self.flags += ["--ro-bind", path, path]
        else:
            self.flags += ["--tmpfs", target, "--remount-ro", target]
            self.placeholders.append(target)

    def hide(self, path: str, keep: list[str]) -> None:
        """Cover ``path`` unless it holds a path the command needs (the workspace, its cwd)."""
        if not os.path.lexists(path) or any(inside(k, path) for k in keep) or self.unseen(path):
            return
        self.anchor_ancestors(path)
        if os.path.isdir(path) and not os.path.islink(path):
            self.flags += ["--tmpfs", path, "--remount-ro", path]
            self.covered.append(path)
        else:
            self.flags += ["--ro-bind", "/dev/null", path]


class Placeholders:
    """Directories made as mount points for missing read-only paths, counted per path across commands.

    The first command that needs ``path`` records which of its directories were
    missing; when the last one ends they are removed deepest first, each only if
    empty (``rmdir``), so nothing a user or command put there is lost.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._held: dict[str, tuple[int, list[str]]] = {}

    def acquire(self, paths: list[str]) -> None:
        with self._lock:
            for path in paths:
                count, made = self._held.get(path, (0, []))
                if count == 0:
                    made = missing_components(path) or []
                self._held[path] = (count + 1, made)

    def release(self, paths: list[str]) -> None:
        with self._lock:
            for path in paths:
                count, made = self._held.get(path, (0, []))
                if count > 1:
                    self._held[path] = (count - 1, made)
                    continue
                self._held.pop(path, None)
                for directory in reversed(made):
                    if any(inside(other, directory) for other in self._held):
                        break  # another held placeholder lives below: keep the way to it
                    try:
                        os.rmdir(directory)
                    except OSError:
                        break

    def held(self) -> list[str]:
        with self._lock:
            return sorted(self._held)


PLACEHOLDERS = Placeholders()

__all__ = ["PLACEHOLDERS", "MountPlan", "Placeholders", "inside", "missing_components"]
