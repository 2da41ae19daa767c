"""File tools hold confinement at open time: a swap between the check and the use leads nowhere.

Each case checks a path (``Workspace.resolve``), then swaps a directory — or
the workspace root itself — for a symlink to a directory outside, then uses
the checked path the way the tools do. The positive control opens the same
checked path the naive way (``open(path)``) and reaches the outside secret:
the swap is real, only the open-time walk stops it. A last case races a
swapping thread against the real ``read_file``/``list_files``/``write_file``.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from k1412_ls.tools.errors import ToolError
from k1412_ls.tools.files import file_tools, search
from k1412_ls.tools.files.documents import DiskDocumentStore
from k1412_ls.tools.files.ignore import GlobFilter, list_children
from k1412_ls.tools.files.workspace import Workspace
from k1412_ls.tools.registry import ToolContext, ToolRegistry
from k1412_ls.tools.sandbox.command_sandbox import bubblewrap, hide_from_commands
from k1412_ls.tools.sandbox.trusted import trusted_program

SECRET = "OUTSIDE-SECRET-7f3a"
REGISTRY = ToolRegistry(file_tools.TOOLS)


@pytest.fixture
def layout(tmp_path: Path) -> tuple[Path, Path]:
    ws = tmp_path / "ws"
    (ws / "sub").mkdir(parents=True)
    (ws / "sub" / "notes.txt").write_text("inside\n")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "notes.txt").write_text(SECRET + "\n")
    (outside / "secret-name.txt").write_text(SECRET)
    return ws, outside


def swap_for_link(directory: Path, target: Path) -> None:
    directory.rename(directory.with_name(directory.name + "-old"))
    directory.symlink_to(target, target_is_directory=True)


def test_a_read_after_a_parent_swap_is_refused(layout: tuple[Path, Path]) -> None:
    ws, outside = layout
    workspace = Workspace(ws)
    checked = workspace.resolve("sub/notes.txt")
    swap_for_link(ws / "sub", outside)
    assert SECRET in checked.read_text()  # positive control: the checked path now leads outside
    with pytest.raises(ToolError) as info:
        DiskDocumentStore(ws).read(checked)
    assert "symlink" in str(info.value) and "\n" not in str(info.value)


def test_a_listing_after_a_swap_does_not_list_outside(layout: tuple[Path, Path]) -> None:
    ws, outside = layout
    workspace = Workspace(ws)
    checked = workspace.resolve("sub")
    swap_for_link(ws / "sub", outside)
    assert "secret-name.txt" in os.listdir(checked)  # positive control
    entries, _ = list_children(checked, "sub", (), 1, GlobFilter(None))
    assert [e.rel for e in entries] == []


def test_a_write_after_a_swap_lands_nowhere_outside(layout: tuple[Path, Path]) -> None:
    ws, outside = layout
    workspace = Workspace(ws)
    checked = workspace.resolve("sub/new.txt", for_write=True)
    swap_for_link(ws / "sub", outside)
    with pytest.raises(ToolError):
        DiskDocumentStore(ws).write(checked, "planted\n")
    assert not (outside / "new.txt").exists()
    checked.write_text("planted\n")  # positive control: a naive write follows the link
    assert (outside / "new.txt").exists()


def test_a_swapped_workspace_root_is_refused(layout: tuple[Path, Path]) -> None:
    ws, outside = layout
    workspace = Workspace(ws)
    workspace.resolve("sub/notes.txt")
    swap_for_link(ws, outside)
    assert (ws / "notes.txt").read_text().strip() == SECRET  # positive control
    for call in (lambda: workspace.resolve("notes.txt"), lambda: workspace.resolve("x.txt", for_write=True)):
        with pytest.raises(ToolError) as info:
            call()
        assert "was replaced since K1412 started using it" in str(info.value)


def test_a_path_checked_before_a_root_swap_still_opens_the_original_directory(layout: tuple[Path, Path]) -> None:
    ws, outside = layout
    workspace = Workspace(ws)
    checked = workspace.resolve("sub/notes.txt")
    swap_for_link(ws, outside)
    # The open walks from the descriptor pinned before the swap: the original file, never the outside one.
    assert DiskDocumentStore(ws).read(checked).text == "inside\n"


# --- a real race against the tools ------------------------------------------------------------------------------

@pytest.fixture
def swapper(layout: tuple[Path, Path]) -> Iterator[threading.Event]:
    """A thread that keeps swapping ws/sub between the real directory and a symlink to outside."""
    ws, outside = layout
    stop = threading.Event()

    def swap() -> None:
        while not stop.is_set():
            try:
                os.rename(ws / "sub", ws / "sub-real")
                os.symlink(outside, ws / "sub")
                os.unlink(ws / "sub")
                os.rename(ws / "sub-real", ws / "sub")
            except OSError:
                # A write_file created ws/sub while it was missing: put the real one back, go on swapping.
                with contextlib.suppress(OSError):
                    if (ws / "sub").is_symlink():
                        os.unlink(ws / "sub")
                    elif (ws / "sub-real").exists():
                        shutil.rmtree(ws / "sub", ignore_errors=True)
                    if (ws / "sub-real").exists():
                        os.rename(ws / "sub-real", ws / "sub")

    thread = threading.Thread(target=swap, daemon=True)
    thread.start()
    yield stop
    stop.set()
    thread.join(5)


def test_racing_swaps_never_reach_outside(layout: tuple[Path, Path], swapper: threading.Event) -> None:
    ws, outside = layout
    ctx = ToolContext(workspace=Workspace(ws), documents=DiskDocumentStore(ws))
    leaked = naive_leaks = 0
    for attempt in range(600):
        read = REGISTRY.execute("read_file", {"path": "sub/notes.txt"}, ctx)
        listed = REGISTRY.execute("list_files", {"path": "sub"}, ctx)
        REGISTRY.execute("write_file", {"path": f"sub/w{attempt}.txt", "content": "x\n"}, ctx)
        leaked += SECRET in str(read.data) or "secret-name" in str(listed.data)
        try:
            naive_leaks += SECRET in (ws / "sub" / "notes.txt").read_text()
        except OSError:
            pass
    assert naive_leaks > 0, "the race never happened; the test proves nothing"
    assert leaked == 0
    assert sorted(p.name for p in outside.iterdir()) == ["notes.txt", "secret-name.txt"]


@pytest.fixture
def hidden_outside() -> Iterator[Path]:
    """A directory like K1412's state dir: outside the workspace, not under /tmp, hidden from commands."""
    path = Path(tempfile.mkdtemp(prefix="k1412-hidden-", dir="/var/tmp"))
    (path / "notes.txt").write_text(SECRET + "\n")
    hide_from_commands(path)
    yield path
    shutil.rmtree(path, ignore_errors=True)


@pytest.mark.skipif(not bubblewrap().active or trusted_program("rg") is None, reason="needs bubblewrap and ripgrep")
def test_search_through_a_racing_swap_reaches_no_hidden_directory(tmp_path: Path, hidden_outside: Path) -> None:
    ws = tmp_path / "ws"
    (ws / "sub").mkdir(parents=True)
    (ws / "sub" / "notes.txt").write_text("inside\n")
    ctx = ToolContext(workspace=Workspace(ws), documents=DiskDocumentStore(ws))
    registry = ToolRegistry(search.TOOLS)
    stop = threading.Event()

    def swap() -> None:
        while not stop.is_set():
            with contextlib.suppress(OSError):
                os.rename(ws / "sub", ws / "sub-real")
                os.symlink(hidden_outside, ws / "sub")
                time.sleep(0.002)
                os.unlink(ws / "sub")
                os.rename(ws / "sub-real", ws / "sub")

    thread = threading.Thread(target=swap, daemon=True)
    thread.start()
    leaked = naive = 0
    try:
        for _ in range(150):
            found = registry.execute("search_files", {"query": SECRET, "path": "sub"}, ctx)
            leaked += SECRET in str(found.data.get("matches"))
            bare = subprocess.run([trusted_program("rg") or "rg", "-l", SECRET, str(ws / "sub")],
                                  capture_output=True, text=True, check=False)
            naive += bool(bare.stdout.strip())
    finally:
        stop.set()
        thread.join(5)
    assert naive > 0, "the race never happened; the test proves nothing"
    assert leaked == 0


def test_file_tools_never_write_the_git_dir_a_pointer_file_names(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    (ws / ".gitdir").mkdir(parents=True)
    (ws / ".gitdir" / "config").write_text("[core]\n")
    (ws / ".git").write_text("gitdir: .gitdir\n")
    ctx = ToolContext(workspace=Workspace(ws), documents=DiskDocumentStore(ws))
    result = ToolRegistry(file_tools.TOOLS).execute("write_file", {"path": ".gitdir/config", "content": "x\n"}, ctx)
    assert result.data["ok"] is False and "inside .git" in result.data["error"]
    assert (ws / ".gitdir" / "config").read_text() == "[core]\n"
    # Positive control: without the pointer file the same directory is an ordinary one.
    (ws / ".git").unlink()
    plain = ToolRegistry(file_tools.TOOLS).execute("write_file", {"path": ".gitdir/config", "content": "x\n"},
                                              ToolContext(workspace=Workspace(ws), documents=DiskDocumentStore(ws)))
    assert plain.data["ok"] is True
