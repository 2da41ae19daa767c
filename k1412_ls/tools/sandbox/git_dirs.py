"""The git dirs a command must not write, and second names of their files undone before it starts.

Git dirs: the workspace's ``.git`` (a directory, or a pointer file ``gitdir: PATH`` naming one
elsewhere, as worktrees and submodules have), and nested repositories found below the root.

The sandbox binds ``.git`` read-only, but a file is writable through any other
name (hard link) it has in a writable place. A command that ran while ``.git``
was writable — it made the repository with ``git init``, or an approved
``git commit`` ran — can leave ``ws/cfg`` as a second name of ``.git/config``,
and the next command, meeting a read-only ``.git``, would rewrite the config
(``core.hooksPath``, aliases) through ``ws/cfg``.

So before a command starts with ``.git`` read-only, every regular file under the
git dirs that has more than one name gets an inode of its own again: an
identical copy (same bytes, same mode) renamed over it. The other names keep
their content but no longer lead into ``.git``. This runs at a run's first
command and again after any command that ran with ``.git`` writable or absent;
files above :data:`MAX_COPY_BYTES` (pack files that ``git clone`` of a local
path links on purpose) are left linked and listed.
"""

from __future__ import annotations

import logging
import os
import shutil
import stat
import tempfile
from collections.abc import Iterable
from dataclasses import dataclass, field

log = logging.getLogger(__name__)

MAX_COPY_BYTES = 8 * 1024 * 1024
MAX_ENTRIES = 200_000


def gitdir_of_pointer(dot_git: str) -> str | None:
    """The real directory a ``.git`` pointer file (``gitdir: PATH``) names, or None."""
    if not os.path.isfile(dot_git) or os.path.islink(dot_git):
        return None
    try:
        with open(dot_git, encoding="utf-8", errors="replace") as handle:
            first = handle.readline(4096).strip()
    except OSError:
        return None
    if not first.startswith("gitdir:"):
        return None
    target = first[len("gitdir:"):].strip()
    return os.path.realpath(os.path.join(os.path.dirname(dot_git), target))


NESTED_GIT_MAX_ENTRIES = 50_000
NESTED_GIT_MAX_DEPTH = 8
_NESTED_GIT_SKIP = frozenset({"node_modules", ".venv", "venv", "__pycache__", ".tox", ".mypy_cache", ".cache"})


_BARE_MARKS = frozenset({"HEAD", "objects", "refs"})


def nested_git_dirs(root: str) -> tuple[str, ...]:
    """Git dirs below the workspace root: nested repositories' and submodules' ``.git`` (dirs and pointer
    files) and bare repositories (``mirror.git/`` holding ``HEAD``, ``objects/``, ``refs/``).

    A bounded walk (depth and entry caps, package caches skipped), done once per run.
    """
    found: list[str] = []
    seen = 0
    stack = [(root, 0)]
    while stack and seen < NESTED_GIT_MAX_ENTRIES:
        directory, depth = stack.pop()
        below: list[tuple[str, int]] = []
        names: set[str] = set()
        try:
            with os.scandir(directory) as entries:
                for entry in entries:
                    seen += 1
                    names.add(entry.name)
                    if entry.name == ".git":
                        if directory != root:
                            found.append(entry.path)
                        continue
                    if depth < NESTED_GIT_MAX_DEPTH and entry.name not in _NESTED_GIT_SKIP \
                            and entry.is_dir(follow_symlinks=False):
                        below.append((entry.path, depth + 1))
        except OSError:
            continue
        if directory != root and _BARE_MARKS <= names and os.path.isfile(os.path.join(directory, "HEAD")):
            found.append(directory)  # a bare repository: all of it is git internals
            continue
        stack.extend(below)
    return tuple(sorted(found))


def git_dirs(root: str, nested: tuple[str, ...]) -> list[str]:
    """The directories holding the repositories' data: ``.git`` dirs and the dirs pointer files name."""
    found: list[str] = []
    for path in (os.path.join(root, ".git"), *nested):
        target = gitdir_of_pointer(path)
        found.append(target if target is not None else path)
    return [p for p in dict.fromkeys(found) if os.path.isdir(p) and not os.path.islink(p)]


@dataclass
class LinkReport:
    """What one pass did: files given their own inode, files left linked (too big), entries seen."""

    separated: list[str] = field(default_factory=list)
    left: list[str] = field(default_factory=list)
    seen: int = 0


def separate_git_links(git_dirs: Iterable[str]) -> LinkReport:
    """Give every multiply-linked regular file under ``git_dirs`` its own inode (see the module docstring)."""
    report = LinkReport()
    for top in git_dirs:
        if not os.path.isdir(top) or os.path.islink(top):
            continue
        stack = [top]
        while stack and report.seen < MAX_ENTRIES:
            directory = stack.pop()
            try:
                with os.scandir(directory) as entries:
                    for entry in entries:
                        report.seen += 1
                        _visit(entry, stack, report)
            except OSError:
                continue
    if report.separated:
        log.info("gave %d file(s) in git dirs their own inode: %s", len(report.separated), report.separated[:5])
    return report


def _visit(entry: os.DirEntry[str], stack: list[str], report: LinkReport) -> None:
    try:
        info = entry.stat(follow_symlinks=False)
    except OSError:
        return
    if stat.S_ISDIR(info.st_mode):
        stack.append(entry.path)
    elif stat.S_ISREG(info.st_mode) and info.st_nlink > 1:
        if info.st_size > MAX_COPY_BYTES:
            report.left.append(entry.path)
        elif _own_copy(entry.path, info):
            report.separated.append(entry.path)


def _own_copy(path: str, info: os.stat_result) -> bool:
    """Replace ``path`` by an identical file with its own inode; False (logged) when that fails."""
    directory = os.path.dirname(path)
    try:
        fd, tmp = tempfile.mkstemp(prefix=".k1412-own-", dir=directory)
    except OSError as exc:
        log.warning("cannot separate %s from its other names: %s", path, exc)
        return False
    try:
        source = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
        with os.fdopen(source, "rb") as src, os.fdopen(fd, "wb") as dst:
            fd = -1
            shutil.copyfileobj(src, dst)
        os.chmod(tmp, stat.S_IMODE(info.st_mode))
        os.rename(tmp, path)
        return True
    except OSError as exc:
        log.warning("cannot separate %s from its other names: %s", path, exc)
        if fd >= 0:
            os.close(fd)
        try:
            os.unlink(tmp)
        except OSError:
            pass
        return False


__all__ = ["MAX_COPY_BYTES", "NESTED_GIT_MAX_DEPTH", "NESTED_GIT_MAX_ENTRIES", "LinkReport", "git_dirs",
           "gitdir_of_pointer", "nested_git_dirs", "separate_git_links"]
