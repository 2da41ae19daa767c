"""Programs installed under the host's /tmp stay reachable behind a command's private /tmp.

People clone and install into /tmp to try things. Commands get a private /tmp, which used to hide K1412's
own stage script (so no sandbox could be kept), a venv's interpreter and the user's tools on PATH. The
trees those live in are bound back read-only; nothing else of the host's /tmp is; and a failed command
that names a host /tmp path it cannot see says why in one sentence.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from k1412_ls.tools.files.documents import DiskDocumentStore
from k1412_ls.tools.files.workspace import Workspace
from k1412_ls.tools.processes.run_command import RunCommandArgs, run_command
from k1412_ls.tools.registry import ToolContext
from k1412_ls.tools.sandbox import command_sandbox
from k1412_ls.tools.sandbox.command_sandbox import bubblewrap
from k1412_ls.tools.sandbox.host_tmp import hidden_tmp_note, tmp_tool_roots

needs_bwrap = pytest.mark.skipif(not bubblewrap().active, reason="bubblewrap is not usable here")


@pytest.fixture
def host_tmp() -> Iterator[Path]:
    """A directory of the host's /tmp itself (pytest's tmp_path may live elsewhere)."""
    path = Path(tempfile.mkdtemp(prefix="k1412-host-tmp-", dir="/tmp"))
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


def fresh(ws: Path) -> ToolContext:
    return ToolContext(workspace=Workspace(ws), documents=DiskDocumentStore(ws), run_id="r-host-tmp")


def test_a_venv_is_bound_whole_and_a_tree_inside_another_is_not_bound_twice(host_tmp: Path) -> None:
    venv = host_tmp / "venv"
    (venv / "bin").mkdir(parents=True)
    (venv / "pyvenv.cfg").write_text("home = /usr/bin\n")
    tools = host_tmp / "tools" / "bin"
    tools.mkdir(parents=True)
    roots = tmp_tool_roots([str(venv / "bin"), str(tools), str(host_tmp / "tools"), "/usr/bin", "/tmp"])
    assert roots == sorted([str(venv), str(host_tmp / "tools")])
    # A tree that holds the workspace (or lies inside it) is left to the workspace's own writable bind.
    assert tmp_tool_roots([str(tools)], keep=[str(host_tmp)]) == []


@needs_bwrap
def test_a_tool_on_path_under_the_host_tmp_runs(ws: Path, host_tmp: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    bin_dir = host_tmp / "bin"
    bin_dir.mkdir()
    tool = bin_dir / "k1412-hello-tool"
    tool.write_text("#!/bin/sh\necho hello from the tool\n")
    tool.chmod(0o755)
    (host_tmp / "unrelated.txt").write_text("not for commands\n")
    monkeypatch.setenv("PATH", f"{bin_dir}:{os.environ['PATH']}")
    done = run_command(RunCommandArgs(command=f"k1412-hello-tool; cat {host_tmp}/unrelated.txt"), fresh(ws))
    assert "hello from the tool" in done.data["output"], done.data
    # Only the tool's tree is bound back: the rest of the host's /tmp stays private.
    assert "not for commands" not in done.data["output"]
    # Positive control: without binding it back, the private /tmp hides the tool.
    monkeypatch.setattr(command_sandbox, "tmp_tool_flags", lambda paths, keep=(): [])
    hidden = run_command(RunCommandArgs(command="k1412-hello-tool"), fresh(ws))
    assert hidden.data["exit_code"] == 127, hidden.data


@needs_bwrap
def test_a_failed_command_names_the_private_tmp(ws: Path, host_tmp: Path) -> None:
    (host_tmp / "data.csv").write_text("a,b\n")
    done = run_command(RunCommandArgs(command=f"cat {host_tmp}/data.csv"), fresh(ws))
    assert not done.ok and "private /tmp" in done.data["note"], done.data
    # Control: a path that exists nowhere gets the plain failure, with no word about /tmp.
    missing = run_command(RunCommandArgs(command=f"cat {host_tmp}/no-such-file.csv"), fresh(ws))
    assert not missing.ok and "private /tmp" not in missing.data.get("note", "")


def test_the_note_ignores_paths_the_private_tmp_has(tmp_path: Path, host_tmp: Path) -> None:
    (host_tmp / "x").write_text("x")
    private = tmp_path / "private"
    (private / host_tmp.name).mkdir(parents=True)
    (private / host_tmp.name / "x").write_text("x")
    assert hidden_tmp_note(f"cat: {host_tmp}/x: No such file or directory", str(private)) is None
    assert hidden_tmp_note(f"cat: {host_tmp}/x: No such file or directory", str(tmp_path / "empty")) is not None
