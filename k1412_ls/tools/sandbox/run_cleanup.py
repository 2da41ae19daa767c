"""What a run leaves behind, made harmless when it ends: special mode bits, shadowing programs, its ``/tmp``.

Inside the sandbox every mount is ``nosuid`` and ``PATH`` has no relative
entries, so none of this matters while the run's commands run; it matters once
the user's own shell (or a host process) gets the workspace back. So when the
run ends, after its processes were killed:

* every non-directory under the workspace and the user's writable directories
  whose status changed during the run and that carries a setuid or setgid bit
  loses both (a ``cp -p``/``install -m 4755`` copy of a setuid binary, a file
  made with ``open(…, 0o4755)``, a tar extraction) (:func:`strip_special_bits`);
* a program made during the run under a directory that a *relative* entry of
  the user's ``PATH`` names (``sub/node_modules/.bin/git`` for
  ``node_modules/.bin``; any directory for ``.`` or an empty entry) whose name
  is also a program on the absolute ``PATH`` stops shadowing it: a file loses
  its execute bits, a symlink is removed (:func:`unshadow`);
* the run's private ``/tmp`` is removed whatever it holds: trees deeper than
  any path may be long, directories without permissions, any byte in a name
  (:func:`remove_tree`).
"""

from __future__ import annotations

import errno
import logging
import os
import stat
import subprocess
from collections.abc import Iterable

from k1412_ls.tools.sandbox.trusted import trusted_program

log = logging.getLogger(__name__)

SPECIAL_BITS = stat.S_ISUID | stat.S_ISGID
EXEC_BITS = stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH
FIND_TIMEOUT_S = 300.0


def _changed_since(root: str, since: float, extra: list[str]) -> list[tuple[str, str]]:
    """(type letter, path) of every entry under ``root`` whose status changed at or after ``since``."""
    find = trusted_program("find")
    if find is None or not os.path.isdir(root):
        return []
    argv = [find, root, *extra, "-printf", "%C@\\0%y\\0%p\\0"]
    try:
        done = subprocess.run(argv, capture_output=True, timeout=FIND_TIMEOUT_S, stdin=subprocess.DEVNULL,
                              env={"PATH": "/usr/bin:/bin", "LC_ALL": "C"})
    except (OSError, subprocess.TimeoutExpired) as exc:
        log.warning("could not look for files the run changed under %s (%s)", root, exc)
        return []
    fields = done.stdout.split(b"\0")
    found: list[tuple[str, str]] = []
    for at in range(0, len(fields) - 2, 3):
        try:
            changed = float(fields[at])
        except ValueError:
            continue
        if changed >= since:
            found.append((fields[at + 1].decode(), os.fsdecode(fields[at + 2])))
    return found


def _chmod_nofollow(path: str, change: int) -> bool:
    """Clear ``change`` bits of ``path`` without following a symlink at its end; True when done."""
    try:
        fd = os.open(path, os.O_PATH | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError:
        return False
    try:
        info = os.fstat(fd)
        if stat.S_ISLNK(info.st_mode):
            return False
        os.chmod(f"/proc/self/fd/{fd}", stat.S_IMODE(info.st_mode) & ~change)
        return True
    except OSError:
        return False
    finally:
        os.close(fd)


def strip_special_bits(roots: Iterable[str], since: float) -> list[str]:
    """Clear setuid/setgid on every non-directory changed under ``roots`` since ``since``; the paths cleared."""
    cleared: list[str] = []
    for root in dict.fromkeys(roots):
        for _kind, path in _changed_since(root, since, ["!", "-type", "d", "!", "-type", "l", "-perm", "/6000"]):
            if _chmod_nofollow(path, SPECIAL_BITS):
                cleared.append(path)
    if cleared:
        log.warning("cleared setuid/setgid bits a run left on %d file(s): %s", len(cleared), ", ".join(cleared[:20]))
    return cleared


def _system_programs(path_var: str) -> set[str]:
    names: set[str] = set()
    for entry in path_var.split(":"):
        if entry.startswith("/"):
            try:
                names.update(os.listdir(entry))
            except OSError:
                continue
    return names


def unshadow(roots: Iterable[str], relative_entries: Iterable[str], path_var: str, since: float) -> list[str]:
    """Make programs made since ``since`` in directories the relative ``PATH`` entries name shadow nothing."""
    entries = [e.rstrip("/") for e in relative_entries]
    if not entries:
        return []
    programs = _system_programs(path_var)
    done: list[str] = []
    for root in dict.fromkeys(roots):
        for kind, path in _changed_since(root, since, ["(", "-type", "f", "-o", "-type", "l", ")"]):
            parent, name = os.path.split(path)
            if name not in programs or not any(e in ("", ".") or parent.endswith("/" + e.removeprefix("./"))
                                               for e in entries):
                continue
            if kind == "l":
                try:
                    os.unlink(path)
                    done.append(path)
                except OSError:
                    pass
            elif _chmod_nofollow(path, EXEC_BITS | SPECIAL_BITS):
                done.append(path)
    if done:
        log.warning("a run made programs that a relative PATH entry would run in place of system ones; their "
                    "execute bits were cleared (symlinks removed): %s", ", ".join(done[:20]))
    return done


def remove_tree(top: str) -> bool:
    """Remove the directory ``top`` and everything in it; True when it is gone.

    Walks by descriptors, one directory open at a time (a 1,100-level tree
    neither exhausts descriptors nor needs a path longer than ``PATH_MAX``),
    gives each directory back its owner's permissions before reading it, and
    never follows a symlink. An entry that cannot be removed (a mount point)
    is left and the rest goes on.
    """
    try:
        os.chmod(top, 0o700)
        fd = os.open(top, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except FileNotFoundError:
        return True
    except OSError as exc:
        log.warning("the run's directory %s could not be removed (%s)", top, exc.strerror)
        return False
    names: list[str] = []  # the path from top to the directory fd is open on
    skipped: list[set[str]] = [set()]
    while True:
        child = _next_dir(fd, skipped[-1])
        if child is not None:
            try:
                os.chmod(child, 0o700, dir_fd=fd)
                inner = os.open(child, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=fd)
            except OSError:
                skipped[-1].add(child)
                continue
            os.close(fd)
            fd = inner
            names.append(child)
            skipped.append(set())
            continue
        if not names:
            os.close(fd)
            break
        parent = os.open("..", os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC, dir_fd=fd)
        os.close(fd)
        fd = parent
        name = names.pop()
        skipped.pop()
        try:
            os.rmdir(name, dir_fd=fd)
        except OSError:
            skipped[-1].add(name)
    try:
        os.rmdir(top)
    except OSError as exc:
        log.warning("the run's directory %s could not be removed entirely (%s)", top, exc.strerror)
        return False
    return True


def _next_dir(fd: int, skipped: set[str]) -> str | None:
    """Remove every non-directory in ``fd`` and every empty directory; the first other directory, if any."""
    try:
        entries = list(os.scandir(fd))
    except OSError:
        return None
    for entry in entries:
        name = entry.name
        if name in skipped:
            continue
        try:
            is_dir = entry.is_dir(follow_symlinks=False)
        except OSError:
            is_dir = False
        if not is_dir:
            try:
                os.unlink(name, dir_fd=fd)
            except OSError:
                skipped.add(name)
            continue
        try:
            os.rmdir(name, dir_fd=fd)
        except OSError as exc:
            if exc.errno in (errno.ENOTEMPTY, errno.EEXIST, errno.EACCES, errno.EPERM):
                return name
            skipped.add(name)
    return None


__all__ = ["remove_tree", "strip_special_bits", "unshadow"]
