"""Security cases for the file side of the gateway: escapes.

Each case asserts: nothing escaped the workspace, nothing was lost, and the
model got one sentence (no newline, ends with '.'). The ``layout`` fixture is in
``tests/support/file_layout.py``.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest

from k1412_ls.tools.errors import ToolError
from k1412_ls.tools.files.documents import DiskDocumentStore, atomic_write_bytes, open_parent
from k1412_ls.tools.files.workspace import Workspace
from tests.support.file_layout import REGISTRY, SECRET, assert_one_sentence, make_ctx, snapshot_outside

# --- escapes: every tool refuses ------------------------------------------------------------------

Escape = Callable[[dict[str, Path]], str]

ESCAPES: dict[str, Escape] = {
    "dotdot": lambda p: "../outside/secret.txt",
    "dotdot-through-subdir": lambda p: "sub/../../outside/secret.txt",
    "absolute-outside": lambda p: str(p["outside"] / "secret.txt"),
    "absolute-with-dotdot": lambda p: f"{p['ws']}/../outside/secret.txt",
    "sibling-prefix-absolute": lambda p: str(p["evil"] / "secret.txt"),
    "sibling-prefix-relative": lambda p: "../ws-evil/secret.txt",
    "leaf-symlink-out": lambda p: (os.symlink(p["outside"] / "secret.txt", p["ws"] / "leak.txt"), "leak.txt")[1],
    "parent-symlink-out": lambda p: (os.symlink(p["outside"], p["ws"] / "outdir"), "outdir/secret.txt")[1],
    "symlink-chain-out": lambda p: (os.symlink(p["outside"] / "secret.txt", p["ws"] / "l2"),
                                    os.symlink("l2", p["ws"] / "l1"), "l1")[2],
    "symlink-then-dotdot": lambda p: (os.symlink(p["outside"] / "deep", p["ws"] / "dl"), "dl/../secret.txt")[1],
    "symlink-to-proc-environ": lambda p: (os.symlink("/proc/self/environ", p["ws"] / "env"), "env")[1],
    "symlink-to-dev-zero": lambda p: (os.symlink("/dev/zero", p["ws"] / "zero"), "zero")[1],
    "etc-passwd": lambda p: "/etc/passwd",
}

ESCAPE_CALLS: dict[str, Callable[[str], dict]] = {
    "read_file": lambda path: {"path": path},
    "stat_path": lambda path: {"path": path},
    "write_file": lambda path: {"path": path, "content": "pwned\n"},
    "patch_file": lambda path: {"path": path, "edits": [{"old_text": "TOP", "new_text": "pwned"}]},
}


@pytest.mark.parametrize("tool", list(ESCAPE_CALLS))
@pytest.mark.parametrize("case", list(ESCAPES))
def test_escapes_are_refused_by_every_file_tool(layout: dict[str, Path], case: str, tool: str) -> None:
    path = ESCAPES[case](layout)
    before = snapshot_outside(layout["tmp"], layout["ws"])
    data = REGISTRY.execute(tool, ESCAPE_CALLS[tool](path), make_ctx(layout["ws"])).data
    assert data["ok"] is False
    assert "outside the workspace" in data["error"]
    assert_one_sentence(data["error"])
    assert SECRET.strip() not in str(data)
    assert snapshot_outside(layout["tmp"], layout["ws"]) == before


@pytest.mark.parametrize("tool", ["list_files", "search_files"])
@pytest.mark.parametrize("case", ["dotdot", "absolute-outside", "sibling-prefix-absolute", "parent-symlink-out"])
def test_listing_and_searching_outside_is_refused(layout: dict[str, Path], case: str, tool: str) -> None:
    path = ESCAPES[case](layout)
    directory = path.rsplit("/", 1)[0] if path.endswith("secret.txt") else path
    arguments = {"path": directory} if tool == "list_files" else {"path": directory, "query": "TOP"}
    data = REGISTRY.execute(tool, arguments, make_ctx(layout["ws"])).data
    assert data["ok"] is False and "outside the workspace" in data["error"]
    assert_one_sentence(data["error"])


def test_symlinks_out_are_listed_but_never_followed(layout: dict[str, Path]) -> None:
    os.symlink(layout["outside"], layout["ws"] / "outdir")
    ctx = make_ctx(layout["ws"])
    listing = REGISTRY.execute("list_files", {"depth": 3}, ctx).data
    assert "outdir -> (outside the workspace)" in listing["entries"]
    assert not any("secret" in entry for entry in listing["entries"])
    found = REGISTRY.execute("search_files", {"query": "TOP-SECRET"}, ctx).data
    assert found["ok"] and found["matches"] == []


# --- malformed paths -----------------------------------------------------------------------------

@pytest.mark.parametrize(("path", "fragment"), [
    ("a\x00b.txt", "NUL byte"),
    ("x" * 300 + ".txt", "longer than 255 bytes"),
    ("é" * 130, "longer than 255 bytes"),
    ("/".join(["d" * 200] * 25), "longer than 4096 bytes"),
])
@pytest.mark.parametrize("tool", ["read_file", "write_file"])
def test_malformed_paths_are_refused_before_touching_the_disk(layout: dict[str, Path], path: str, fragment: str,
                                                              tool: str) -> None:
    arguments = {"path": path, "content": "x"} if tool == "write_file" else {"path": path}
    data = REGISTRY.execute(tool, arguments, make_ctx(layout["ws"])).data
    assert data["ok"] is False and fragment in data["error"]
    assert_one_sentence(data["error"])
    assert sorted(p.name for p in layout["ws"].iterdir()) == [".git", "inside.txt"]


# --- git internals ---------------------------------------------------------------------------------

GIT_PATHS = [".git/config", ".GIT/config", ".Git/hooks/pre-commit", ".git/index.lock", ".git/hooks/post-checkout",
             "./.git/HEAD", "sub/.git/config", ".git", ".git./config", ".g\u200cit/config", "git~1/config"]


@pytest.mark.parametrize("path", GIT_PATHS)
@pytest.mark.parametrize("tool", ["write_file", "patch_file"])
def test_git_internals_are_never_written(layout: dict[str, Path], path: str, tool: str) -> None:
    ws = layout["ws"]
    before = {p: p.read_bytes() for p in (ws / ".git").rglob("*") if p.is_file()}
    arguments = ({"path": path, "content": "[core]\n\tfsmonitor = evil\n"} if tool == "write_file"
                 else {"path": path, "edits": [{"old_text": "[core]", "new_text": "[evil]"}]})
    data = REGISTRY.execute(tool, arguments, make_ctx(ws)).data
    assert data["ok"] is False and "inside .git" in data["error"]
    assert_one_sentence(data["error"])
    assert {p: p.read_bytes() for p in (ws / ".git").rglob("*") if p.is_file()} == before
    assert not (ws / ".git" / "index.lock").exists() and not (ws / "sub").exists()


def test_worktree_git_file_and_git_reached_through_symlinks(layout: dict[str, Path]) -> None:
    ws = layout["ws"]
    (ws / "wt").mkdir()
    (ws / "wt" / ".git").write_text("gitdir: ../.git/worktrees/wt\n")
    os.symlink(ws / ".git" / "hooks", ws / "hooks")
    ctx = make_ctx(ws)
    for path in ["wt/.git", "hooks/pre-commit"]:
        data = REGISTRY.execute("write_file", {"path": path, "content": "x\n"}, ctx).data
        assert data["ok"] is False and "inside .git" in data["error"]
    assert (ws / "wt" / ".git").read_text() == "gitdir: ../.git/worktrees/wt\n"
    assert not (ws / ".git" / "hooks" / "pre-commit").exists()


def test_git_internals_can_still_be_read(layout: dict[str, Path]) -> None:
    data = REGISTRY.execute("read_file", {"path": ".git/config"}, make_ctx(layout["ws"])).data
    assert data["ok"] and data["content"] == "[core]\n"


# --- dangling symlinks -----------------------------------------------------------------------------

@pytest.mark.parametrize(("link", "target", "path"), [
    ("dang.txt", "not-there.txt", "dang.txt"),
    ("dangdir", "missing-dir", "dangdir/new.txt"),
])
def test_writes_never_create_a_target_through_a_dangling_link(layout: dict[str, Path], link: str, target: str,
                                                              path: str) -> None:
    ws = layout["ws"]
    os.symlink(target, ws / link)
    data = REGISTRY.execute("write_file", {"path": path, "content": "x\n"}, make_ctx(ws)).data
    assert data["ok"] is False and "dangling symlink" in data["error"]
    assert_one_sentence(data["error"])
    assert not (ws / target).exists()


def test_dangling_link_out_of_the_workspace_creates_nothing_outside(layout: dict[str, Path]) -> None:
    os.symlink(layout["outside"] / "new-file.txt", layout["ws"] / "out-dang.txt")
    data = REGISTRY.execute("write_file", {"path": "out-dang.txt", "content": "x"}, make_ctx(layout["ws"])).data
    assert data["ok"] is False and "outside the workspace" in data["error"]
    assert not (layout["outside"] / "new-file.txt").exists()


def test_symlink_inside_the_workspace_is_written_through_and_kept(layout: dict[str, Path]) -> None:
    ws = layout["ws"]
    os.symlink("inside.txt", ws / "alias.txt")
    data = REGISTRY.execute("write_file", {"path": "alias.txt", "content": "new\n"}, make_ctx(ws)).data
    assert data["ok"] and data["path"] == "inside.txt"
    assert (ws / "alias.txt").is_symlink() and (ws / "inside.txt").read_text() == "new\n"


# --- time of check vs time of write ----------------------------------------------------------------

@pytest.mark.parametrize("with_root", [True, False])
def test_directory_swapped_for_symlink_after_resolve_is_refused_at_write(layout: dict[str, Path],
                                                                        with_root: bool) -> None:
    ws, outside = layout["ws"], layout["outside"]
    (ws / "sub").mkdir()
    real = Workspace(ws).resolve("sub/target.txt", for_write=True)
    # The attacker swaps the checked directory for a symlink to the outside before the write happens.
    (ws / "sub").rename(ws / "sub-moved")
    os.symlink(outside, ws / "sub")
    store = DiskDocumentStore(ws if with_root else None)
    with pytest.raises(ToolError) as info:
        store.write(real, "pwned\n")
    assert_one_sentence(str(info.value))
    assert not (outside / "target.txt").exists()
    assert sorted(p.name for p in outside.iterdir()) == ["deep", "secret.txt"]


def test_open_parent_refuses_swapped_ancestor_without_creating_directories_outside(
        layout: dict[str, Path]) -> None:
    ws, outside = layout["ws"], layout["outside"]
    (ws / "a").mkdir()
    target = ws / "a" / "b" / "c" / "file.txt"
    (ws / "a").rename(ws / "a-moved")
    os.symlink(outside, ws / "a")
    with pytest.raises(ToolError), open_parent(target, root=ws, create=True):
        pass
    assert not (outside / "b").exists()


def test_write_outside_root_is_refused_by_the_store_itself(layout: dict[str, Path]) -> None:
    with pytest.raises(ToolError):
        atomic_write_bytes(layout["outside"] / "x.txt", b"x", root=layout["ws"])
    assert not (layout["outside"] / "x.txt").exists()


def test_hard_linked_files_are_refused_and_both_links_untouched(layout: dict[str, Path]) -> None:
    ws, outside = layout["ws"], layout["outside"]
    os.link(outside / "secret.txt", ws / "hard.txt")
    data = REGISTRY.execute("write_file", {"path": "hard.txt", "content": "pwned\n"}, make_ctx(ws)).data
    assert data["ok"] is False and "hard links" in data["error"]
    assert_one_sentence(data["error"])
    assert (outside / "secret.txt").read_text() == SECRET and (ws / "hard.txt").read_text() == SECRET
    assert os.stat(ws / "hard.txt").st_nlink == 2
