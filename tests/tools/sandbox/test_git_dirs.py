"""Second names (hard links) of git-dir files are undone before a command meets a read-only ``.git``.

Attack: a command that runs while ``.git`` is writable (it made the repository) links ``.git/config``
into the workspace; a later command, with ``.git`` read-only, writes the config through that link.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from k1412_ls.tools.processes.run_command import RunCommandArgs, run_command
from k1412_ls.tools.registry import ToolContext
from k1412_ls.tools.sandbox import git_dirs
from k1412_ls.tools.sandbox.command_sandbox import bubblewrap
from k1412_ls.tools.sandbox.git_dirs import separate_git_links

ALIAS = "[alias]\n\tpwned = !id\n"


def repo(ws: Path) -> Path:
    subprocess.run(["git", "init", "-q", str(ws)], check=True)
    return ws / ".git"


def test_a_linked_config_gets_its_own_inode_with_content_and_mode_kept(ws: Path) -> None:
    git = repo(ws)
    before = (git / "config").read_bytes()
    os.chmod(git / "config", 0o640)
    os.link(git / "config", ws / "cfg")
    os.link(git / "HEAD", ws / "head")
    with open(ws / "head", "a") as handle:  # positive control: before, the link writes .git
        handle.write("")
    assert (git / "config").stat().st_ino == (ws / "cfg").stat().st_ino
    report = separate_git_links([str(git)])
    assert sorted(Path(p).name for p in report.separated) == ["HEAD", "config"]
    (ws / "cfg").write_text(ALIAS)
    assert (git / "config").read_bytes() == before
    assert oct((git / "config").stat().st_mode & 0o777) == oct(0o640)
    assert (git / "config").stat().st_nlink == 1 and not list(git.glob(".k1412-own-*"))


def test_unlinked_repositories_are_left_alone(ws: Path) -> None:
    git = repo(ws)
    inode = (git / "config").stat().st_ino
    report = separate_git_links([str(git)])
    assert report.separated == [] and report.left == [] and report.seen > 5
    assert (git / "config").stat().st_ino == inode


def test_files_too_big_to_copy_are_listed_not_copied(ws: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    git = repo(ws)
    os.link(git / "description", ws / "desc")
    monkeypatch.setattr(git_dirs, "MAX_COPY_BYTES", 4)
    report = separate_git_links([str(git)])
    assert report.left == [str(git / "description")] and report.separated == []


def test_pointer_files_lead_to_the_git_dir_they_name(ws: Path, tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere.git"
    subprocess.run(["git", "init", "-q", "--separate-git-dir", str(elsewhere), str(ws)], check=True)
    assert git_dirs.git_dirs(str(ws), ()) == [str(elsewhere.resolve())]


@pytest.mark.skipif(not bubblewrap().active, reason="bubblewrap is not usable here")
def test_a_repository_made_in_the_run_cannot_be_written_through_a_link_later(ctx: ToolContext, ws: Path) -> None:
    made = run_command(RunCommandArgs(command="git init -q && ln .git/config cfg && echo linked"), ctx)
    assert "linked" in made.data["output"]
    later = run_command(RunCommandArgs(command=f"printf '{ALIAS}' >> cfg; tail -1 cfg; touch .git/probe"), ctx)
    assert "pwned" in later.data["output"]  # positive control: the command ran and wrote its file
    assert "pwned" not in (ws / ".git" / "config").read_text()
    assert not (ws / ".git" / "probe").exists()


def test_a_bare_repository_in_the_workspace_is_git_internals_for_file_tools(ctx: ToolContext, ws: Path) -> None:
    from k1412_ls.tools.errors import ToolError
    from k1412_ls.tools.files.file_tools import WriteFileArgs, write_file

    subprocess.run(["git", "init", "-q", "--bare", str(ws / "mirror.git")], check=True)
    with pytest.raises(ToolError, match=r"inside \.git"):
        write_file(WriteFileArgs(path="mirror.git/hooks/post-receive", content="#!/bin/sh\n"), ctx)
    assert git_dirs.nested_git_dirs(str(ws)) == (str(ws / "mirror.git"),)
    write_file(WriteFileArgs(path="mirror/notes.txt", content="fine\n"), ctx)  # control: an ordinary directory
    assert (ws / "mirror" / "notes.txt").exists()


@pytest.mark.skipif(not bubblewrap().active, reason="bubblewrap is not usable here")
def test_a_bare_repository_is_read_only_to_commands(ctx: ToolContext, ws: Path) -> None:
    subprocess.run(["git", "init", "-q", "--bare", str(ws / "mirror.git")], check=True)
    done = run_command(RunCommandArgs(command="echo x > mirror.git/hooks/post-receive; echo rc=$?; "
                                              "echo y > mirror.txt; cat mirror.txt"), ctx)
    assert "rc=0" not in done.data["output"] and "y" in done.data["output"]  # it ran, and wrote elsewhere
    assert not (ws / "mirror.git" / "hooks" / "post-receive").exists()
