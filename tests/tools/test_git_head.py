"""Reading HEAD of the workspace's repository without running git: loose refs, packed refs, worktrees."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from k1412_ls.tools.git_head import git_dir_of, read_head

GIT = ["git", "-c", "user.name=k", "-c", "user.email=k@example.invalid"]


def git(cwd: Path, *args: str) -> str:
    return subprocess.run([*GIT, *args], cwd=cwd, check=True, capture_output=True, text=True).stdout.strip()


def repo(path: Path) -> Path:
    path.mkdir()
    git(path, "init", "-q")
    (path / "a.txt").write_text("a\n")
    git(path, "add", "a.txt")
    git(path, "commit", "-qm", "one")
    return path


def test_head_follows_loose_and_packed_refs(tmp_path: Path) -> None:
    ws = repo(tmp_path / "ws")
    assert read_head(ws) == git(ws, "rev-parse", "HEAD")
    git(ws, "pack-refs", "--all")
    assert read_head(ws) == git(ws, "rev-parse", "HEAD")
    (ws / "sub").mkdir()
    assert read_head(ws / "sub") == git(ws, "rev-parse", "HEAD"), "a workspace inside the repository"


def test_a_worktree_and_no_repository(tmp_path: Path) -> None:
    ws = repo(tmp_path / "ws")
    git(ws, "worktree", "add", "-q", str(tmp_path / "wt"), "-b", "side")
    (tmp_path / "wt" / "b.txt").write_text("b\n")
    git(tmp_path / "wt", "add", "b.txt")
    git(tmp_path / "wt", "commit", "-qm", "two")
    assert read_head(tmp_path / "wt") == git(tmp_path / "wt", "rev-parse", "HEAD") != read_head(ws)
    plain = tmp_path / "plain"
    plain.mkdir()
    assert git_dir_of(plain) is None or not str(git_dir_of(plain)).startswith(str(tmp_path))


def test_a_fifo_planted_as_a_ref_is_not_read(tmp_path: Path) -> None:
    ws = repo(tmp_path / "ws")
    branch = git(ws, "symbolic-ref", "HEAD").removeprefix("refs/heads/")
    ref = ws / ".git" / "refs" / "heads" / branch
    ref.unlink()
    os.mkfifo(ref)
    assert read_head(ws) is None  # returns at once instead of blocking on the FIFO
