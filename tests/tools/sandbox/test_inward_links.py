"""Links from the start-up files and PATH dirs into the workspace make their targets read-only.

Attack: the workspace is a dotfiles repository; ``~/.local/bin/deploy`` (on PATH) and ``~/.config/git/config``
are symlinks to files in it. A command (or apply_patch) rewrites those files, and the user's next shell or
git runs what the run wrote. Positive control: the same write works when no link points at the file.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from k1412_ls.tools.files.documents import DiskDocumentStore
from k1412_ls.tools.files.workspace import Workspace
from k1412_ls.tools.processes.run_command import RunCommandArgs, run_command
from k1412_ls.tools.registry import ToolContext
from k1412_ls.tools.sandbox.command_sandbox import bubblewrap
from k1412_ls.tools.sandbox.inward_links import inward_link_targets
from k1412_ls.tools.sandbox.protected_paths import protected_from_file_writes


def fresh(ws: Path) -> ToolContext:
    return ToolContext(workspace=Workspace(ws), documents=DiskDocumentStore(ws), run_id="r-inward")


@pytest.fixture
def dotfiles(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    home, ws = tmp_path / "home", tmp_path / "dotfiles"
    (home / ".local" / "bin").mkdir(parents=True)
    (home / ".config" / "git").mkdir(parents=True)
    ws.mkdir()
    (ws / "deploy.sh").write_text("#!/bin/sh\necho deploy\n")
    (ws / "gitconfig").write_text("[user]\n\tname = me\n")
    (ws / "notes.txt").write_text("free\n")
    os.symlink(ws / "deploy.sh", home / ".local" / "bin" / "deploy")
    os.symlink(ws / "gitconfig", home / ".config" / "git" / "config")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("PATH", f"{home / '.local' / 'bin'}:{os.environ['PATH']}")
    return home, ws


def test_the_targets_are_found(dotfiles: tuple[Path, Path]) -> None:
    home, ws = dotfiles
    found = inward_link_targets(str(ws), [str(home / ".config" / "git"), str(home / ".local" / "bin")])
    assert sorted(found) == sorted([str(ws / "deploy.sh"), str(ws / "gitconfig")])
    assert protected_from_file_writes(str(ws / "deploy.sh"), str(ws))
    assert not protected_from_file_writes(str(ws / "notes.txt"), str(ws))


@pytest.mark.skipif(not bubblewrap().active, reason="bubblewrap is not usable here")
def test_a_command_cannot_rewrite_what_the_links_lead_to(dotfiles: tuple[Path, Path]) -> None:
    _, ws = dotfiles
    done = run_command(RunCommandArgs(command="echo evil >> deploy.sh; echo evil >> gitconfig; echo ok >> notes.txt"),
                       fresh(ws))
    assert "evil" not in (ws / "deploy.sh").read_text() and "evil" not in (ws / "gitconfig").read_text(), done.data
    assert "ok" in (ws / "notes.txt").read_text(), "the rest of the workspace stays writable (positive control)"
