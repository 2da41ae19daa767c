"""A workspace that is your home: dot entries stay read-only to commands, hidden and protected to file tools.

Attack: K1412 opened on ``$HOME``; a command (or a file tool) plants a login file, Python's user-site ``.pth``
(which K1412's own next process would import), or reads a secret directory.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from k1412_ls.tools.errors import ToolError
from k1412_ls.tools.files.documents import DiskDocumentStore
from k1412_ls.tools.files.file_tools import ReadFileArgs, WriteFileArgs, read_file, write_file
from k1412_ls.tools.files.workspace import Workspace
from k1412_ls.tools.processes.run_command import RunCommandArgs, run_command
from k1412_ls.tools.registry import ToolContext
from k1412_ls.tools.sandbox.command_sandbox import bubblewrap

PLANTS = ("mkdir -p .local/lib/python3/site-packages && echo 'import os' > .local/lib/python3/site-packages/x.pth; "
          "echo evil >> .bash_login; mkdir -p .config/fish/conf.d && echo evil > .config/fish/conf.d/e.fish; "
          "echo note > newfile.txt; echo work > projects/app.py; ls projects")


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "home"
    (path / "projects").mkdir(parents=True)
    (path / ".ssh").mkdir()
    (path / ".ssh" / "id_ed25519").write_text("PRIVATE KEY\n")
    (path / ".bashrc").write_text("# mine\n")
    monkeypatch.setenv("HOME", str(path))
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    return path


def context(ws: Path) -> ToolContext:
    return ToolContext(workspace=Workspace(ws), documents=DiskDocumentStore(ws), run_id="r-home")


@pytest.mark.skipif(not bubblewrap().active, reason="bubblewrap is not usable here")
@pytest.mark.parametrize("home_on_path", [False, True], ids=["plain", "home-bin-on-PATH"])
def test_commands_in_home_cannot_touch_dot_entries_or_add_files(home: Path, tmp_path: Path, home_on_path: bool,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    plain_path = os.environ["PATH"]
    if home_on_path:  # a PATH dir under a locked home must not reopen it
        monkeypatch.setenv("PATH", f"{home}/.local/bin:{plain_path}")
    done = run_command(RunCommandArgs(command=PLANTS), context(home))
    assert "app.py" in done.data["output"] and (home / "projects" / "app.py").read_text() == "work\n"
    assert not (home / ".local").exists() and not (home / ".bash_login").exists()
    assert not (home / ".config").exists() and not (home / "newfile.txt").exists()
    assert (home / ".bashrc").read_text() == "# mine\n"
    # Positive control: with HOME elsewhere, the same directory is an ordinary workspace and every write lands.
    monkeypatch.setenv("HOME", str(tmp_path / "elsewhere"))
    monkeypatch.setenv("PATH", plain_path)
    run_command(RunCommandArgs(command=PLANTS), context(home))
    assert (home / ".bash_login").exists() and (home / ".local" / "lib").is_dir() and (home / "newfile.txt").exists()


@pytest.mark.parametrize("path", [".bashrc", ".bash_login", ".local/lib/python3/site-packages/x.pth",
                                  ".config/git/config", ".config/k1412/config.toml"])
def test_file_tools_never_write_dot_entries_of_a_home_workspace(home: Path, path: str) -> None:
    with pytest.raises(ToolError) as info:
        write_file(WriteFileArgs(path=path, content="evil\n"), context(home))
    assert not (home / path).exists() or (home / path).read_text() == "# mine\n"
    assert "never" in str(info.value) and "\n" not in str(info.value)
    write_file(WriteFileArgs(path="projects/ok.txt", content="fine\n"), context(home))  # control
    assert (home / "projects" / "ok.txt").read_text() == "fine\n"


def test_file_tools_never_read_secret_or_k1412_dirs(home: Path) -> None:
    (home / ".config" / "k1412").mkdir(parents=True)
    (home / ".config" / "k1412" / "config.toml").write_text("[sandbox]\n")
    (home / ".bash_history").write_text("export GITHUB_PAT=ghp_canary\n")
    (home / "projects" / "notes.txt").write_text("mine\n")
    for path in (".ssh/id_ed25519", ".config/k1412/config.toml", ".bashrc", ".bash_history"):
        with pytest.raises(ToolError, match="hidden from the agent"):
            read_file(ReadFileArgs(path=path), context(home))
    assert "mine" in read_file(ReadFileArgs(path="projects/notes.txt"), context(home)).data["content"]  # control


def test_file_tools_never_write_into_a_path_directory(ws: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", f"{ws}/.venv/bin:{os.environ['PATH']}")
    with pytest.raises(ToolError, match="PATH directory"):
        write_file(WriteFileArgs(path=".venv/bin/git", content="#!/bin/sh\n"), context(ws))
    assert not (ws / ".venv").exists()
    write_file(WriteFileArgs(path=".venv/pyvenv.cfg", content="x\n"), context(ws))  # control: the rest of .venv
    assert (ws / ".venv" / "pyvenv.cfg").exists()
