"""What a command did to the workspace's own git history: did HEAD move, and what did the new commits hold?

"Committed" is a fact about the repository, not about an exit code: ``git commit --dry-run`` and
``git commit --allow-empty`` exit 0, a commit in a scratch repository under ``/tmp`` exits 0, and none of
them put the work into the workspace's history. Around every command K1412 reads the HEAD of the
repository that holds the workspace (from ``.git`` itself, no git process: a few file reads); only when it
moved does it ask git (neutralised as for ``git_status``) which files the new commits changed and how many
paths are still uncommitted. The answer becomes the command's ``git_commit`` fact.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Any

from k1412_ls.tools.errors import ToolError
from k1412_ls.tools.registry import ToolContext

MAX_LISTED = 200
_MAX_REF_BYTES = 1 << 16
_MAX_PACKED_REFS = 8 << 20


def _read(path: Path, limit: int = _MAX_REF_BYTES) -> str | None:
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None  # a FIFO or device planted as a ref is never read
        return os.read(fd, limit).decode("utf-8", "replace")
    except OSError:
        return None
    finally:
        os.close(fd)


def git_dir_of(root: Path) -> Path | None:
    """The git dir of the repository that holds ``root`` (``.git`` there or above; a ``gitdir:`` file
    followed), or None outside any repository."""
    current = Path(os.path.realpath(root))
    for folder in (current, *current.parents):
        dot_git = folder / ".git"
        if dot_git.is_dir() and not dot_git.is_symlink():
            return dot_git
        if dot_git.is_file() and not dot_git.is_symlink():
            text = _read(dot_git) or ""
            if text.startswith("gitdir:"):
                target = Path(text[len("gitdir:"):].strip())
                return target if target.is_absolute() else (folder / target)
            return None
    return None


def _ref_value(git_dir: Path, ref: str) -> str | None:
    loose = _read(git_dir / ref)
    if loose is not None:
        return loose.strip() or None
    common = git_dir
    commondir = _read(git_dir / "commondir")
    if commondir is not None:
        common = (git_dir / commondir.strip()).resolve()
        loose = _read(common / ref)
        if loose is not None:
            return loose.strip() or None
    packed = _read(common / "packed-refs", _MAX_PACKED_REFS) or ""
    for line in packed.splitlines():
        parts = line.split(" ", 1)
        if len(parts) == 2 and parts[1].strip() == ref:
            return parts[0]
    return None


def read_head(root: Path) -> str | None:
    """The commit HEAD names in the workspace's repository (None: no repository, or no commit yet)."""
    git_dir = git_dir_of(root)
    if git_dir is None:
        return None
    head = (_read(git_dir / "HEAD") or "").strip()
    for _ in range(5):  # symbolic refs may chain
        if not head.startswith("ref:"):
            return head or None
        head = _ref_value(git_dir, head[len("ref:"):].strip()) or ""
    return None


def commit_facts(ctx: ToolContext, before: str | None, after: str | None) -> dict[str, Any] | None:
    """The ``git_commit`` fact when HEAD moved between ``before`` and ``after``, else None."""
    if after is None or after == before:
        return None
    from k1412_ls.tools.git import SafeGit  # the neutralised git of the git tools

    fact: dict[str, Any] = {"head_before": before, "head_after": after}
    try:
        git = SafeGit(ctx)
        span = [f"{before}..{after}"] if before else [after]
        listed = git.run("log", "--format=", "--name-only", "--no-renames", *span, "--", ".")
        if listed.exit_code != 0 and before:
            # HEAD moved to a commit that does not descend from the old one (reset, checkout): what it holds
            # now is all that can be told.
            listed = git.run("show", "--format=", "--name-only", "--no-renames", after, "--", ".")
        files = sorted({line.strip() for line in listed.output.splitlines() if line.strip()}) \
            if listed.exit_code == 0 else None
        ancestor = git.run("merge-base", "--is-ancestor", before, after).exit_code == 0 if before else True
        status = git.run("status", "--porcelain", "--untracked-files=all", "--ignore-submodules=dirty", "--", ".")
    except ToolError as exc:
        fact["error"] = str(exc)
        return fact
    fact["files"] = files[:MAX_LISTED] if files is not None else None
    fact["file_count"] = len(files) if files is not None else None
    fact["descends"] = ancestor
    fact["dirty_after"] = len([line for line in status.output.splitlines() if line.strip()]) \
        if status.exit_code == 0 else None
    return fact


__all__ = ["commit_facts", "git_dir_of", "read_head"]
