"""Security cases for the file side of the gateway (shared/notes/security.md, "Files").

Each case asserts: nothing escaped the workspace, nothing was lost, and the
model got one sentence (no newline, ends with '.').
"""

from __future__ import annotations

import errno
import os
import signal
import socket
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path

import pytest

from k1412_ls.tools import documents as documents_module
from k1412_ls.tools.documents import DiskDocumentStore, atomic_write_bytes, open_parent
from k1412_ls.tools.files import TOOLS as FILE_TOOLS
from k1412_ls.tools.patching import TOOLS as PATCH_TOOLS
from k1412_ls.tools.registry import ToolContext, ToolError, ToolRegistry
from k1412_ls.tools.search import TOOLS as SEARCH_TOOLS
from k1412_ls.tools.workspace import Workspace

REGISTRY = ToolRegistry([*FILE_TOOLS, *PATCH_TOOLS, *SEARCH_TOOLS])
SECRET = "TOP-SECRET-OUTSIDE\n"


@pytest.fixture()
def layout(tmp_path: Path) -> dict[str, Path]:
    """A workspace ``ws`` next to an ``outside`` dir and a sibling-prefix ``ws-evil`` dir."""
    ws = tmp_path / "ws"
    outside = tmp_path / "outside"
    evil = tmp_path / "ws-evil"
    for directory in (ws, outside / "deep", evil):
        directory.mkdir(parents=True)
    (outside / "secret.txt").write_text(SECRET)
    (evil / "secret.txt").write_text(SECRET)
    (ws / "inside.txt").write_text("inside\n")
    (ws / ".git" / "hooks").mkdir(parents=True)
    (ws / ".git" / "config").write_text("[core]\n")
    return {"ws": ws, "outside": outside, "evil": evil, "tmp": tmp_path}


def make_ctx(ws: Path) -> ToolContext:
    return ToolContext(workspace=Workspace(ws), documents=DiskDocumentStore(ws), run_id="sec")


def snapshot_outside(tmp: Path, ws: Path) -> dict[str, bytes]:
    """Every file outside the workspace under tmp, with its bytes."""
    found: dict[str, bytes] = {}
    for path in sorted(tmp.rglob("*")):
        if path.is_relative_to(ws) or path.is_symlink() or not path.is_file():
            continue
        found[str(path)] = path.read_bytes()
    return found


def assert_one_sentence(error: str) -> None:
    assert "\n" not in error and error.endswith("."), error
    assert "Traceback" not in error


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


# --- special files ---------------------------------------------------------------------------------

def run_with_timeout(fn: Callable[[], dict], seconds: float = 10.0) -> dict:
    """Run ``fn`` in a thread; fail the test (instead of hanging) if it blocks, re-raise its error."""
    box: list[dict | BaseException] = []

    def target() -> None:
        try:
            box.append(fn())
        except BaseException as exc:
            box.append(exc)

    worker = threading.Thread(target=target, daemon=True)
    worker.start()
    worker.join(seconds)
    assert box, "the call hung"
    if isinstance(box[0], BaseException):
        raise box[0]
    return box[0]


def test_fifo_is_refused_without_blocking(layout: dict[str, Path]) -> None:
    os.mkfifo(layout["ws"] / "pipe")
    ctx = make_ctx(layout["ws"])
    for tool in ["read_file", "stat_path", "search_files", "write_file"]:
        arguments = {"path": "pipe"}
        if tool == "search_files":
            arguments = {"query": "x", "path": "pipe"}
        if tool == "write_file":
            arguments = {"path": "pipe", "content": "x"}
        data = run_with_timeout(lambda a=arguments, t=tool: REGISTRY.execute(t, a, ctx).data)
        if tool == "stat_path":
            assert data["ok"] and data["type"] == "fifo"
        else:
            assert data["ok"] is False and ("fifo" in data["error"] or "not a regular file" in data["error"])
            assert_one_sentence(data["error"])


def test_socket_is_refused(layout: dict[str, Path]) -> None:
    server = socket.socket(socket.AF_UNIX)
    path = layout["ws"] / "s.sock"
    try:
        server.bind(str(path))
        data = REGISTRY.execute("read_file", {"path": "s.sock"}, make_ctx(layout["ws"])).data
        assert data["ok"] is False and "socket" in data["error"]
    finally:
        server.close()


@pytest.mark.parametrize("path", ["/proc/self/environ", "/dev/zero", "/sys/kernel/mm", "/dev/null"])
def test_document_store_refuses_kernel_and_device_files(path: str) -> None:
    with pytest.raises(ToolError) as info:
        run_with_timeout(lambda: {"r": DiskDocumentStore().read(Path(path))})
    assert_one_sentence(str(info.value))


def test_workspace_inside_proc_cannot_read_environ(tmp_path: Path) -> None:
    ctx = make_ctx(Path("/proc/self"))
    data = run_with_timeout(lambda: REGISTRY.execute("read_file", {"path": "environ"}, ctx).data)
    assert data["ok"] is False and "kernel or device file" in data["error"]


def test_huge_file_is_read_in_windows_not_loaded(layout: dict[str, Path]) -> None:
    big = layout["ws"] / "huge.log"
    line = b"0123456789" * 9 + b"\n"  # 91 bytes
    count = 20 * 1024 * 1024 // len(line) + 1000
    with big.open("wb") as fh:
        fh.write(line * count)
    ctx = make_ctx(layout["ws"])
    first = REGISTRY.execute("read_file", {"path": "huge.log"}, ctx).data
    assert first["ok"] and first["total_lines"] == count and first["end_line"] == 2000
    assert first["next_start_line"] == 2001 and "streamed" in first["note"]
    last = REGISTRY.execute("read_file", {"path": "huge.log", "start_line": count - 1}, ctx).data
    assert last["content"] == (line * 2).decode() and last["truncated"] is False


def test_huge_binary_file_is_described(layout: dict[str, Path]) -> None:
    with (layout["ws"] / "disk.img").open("wb") as fh:
        fh.truncate(40 * 1024 * 1024)  # sparse: NUL bytes
    data = REGISTRY.execute("read_file", {"path": "disk.img"}, make_ctx(layout["ws"])).data
    assert data["ok"] and data["binary"] is True and data["size"] == 40 * 1024 * 1024


@pytest.mark.parametrize(("raw", "mime"), [
    (b"\x7fELF\x02\x01\x01" + b"\x00" * 64, "application/x-executable"),
    (b"caf\xe9 latin-1 text\n", "text/plain"),
    (b"\xff\xfe\x00\x00broken", "text/plain"),
])
def test_binary_and_invalid_utf8_are_described_not_dumped(layout: dict[str, Path], raw: bytes, mime: str) -> None:
    (layout["ws"] / "blob.txt").write_bytes(raw)
    ctx = make_ctx(layout["ws"])
    data = REGISTRY.execute("read_file", {"path": "blob.txt"}, ctx).data
    assert data["ok"] and data["binary"] is True and data["mime"] == mime and "content" not in data
    patched = REGISTRY.execute("patch_file", {"path": "blob.txt", "edits": [{"old_text": "a", "new_text": "b"}]},
                               ctx).data
    assert patched["ok"] is False and "text" in patched["error"]
    assert_one_sentence(patched["error"])
    assert (layout["ws"] / "blob.txt").read_bytes() == raw


# --- bytes and modes kept ----------------------------------------------------------------------------

@pytest.mark.parametrize(("raw", "mode", "old", "new", "expected"), [
    (b"a\r\nb\r\nc\r\n", 0o644, "b", "B", b"a\r\nB\r\nc\r\n"),
    (b"a\r\nb\nc\r\n", 0o644, "c", "C", b"a\r\nb\nC\r\n"),
    (b"\xef\xbb\xbfa\nb\n", 0o600, "b", "B", b"\xef\xbb\xbfa\nB\n"),
    (b"#!/bin/sh\r\necho a\r\n", 0o755, "echo a", "echo b", b"#!/bin/sh\r\necho b\r\n"),
    (b"no final newline", 0o640, "final", "last", b"no last newline"),
])
def test_edits_keep_untouched_bytes_and_mode(layout: dict[str, Path], raw: bytes, mode: int, old: str, new: str,
                                             expected: bytes) -> None:
    target = layout["ws"] / "keep.txt"
    target.write_bytes(raw)
    os.chmod(target, mode)
    data = REGISTRY.execute("patch_file", {"path": "keep.txt", "edits": [{"old_text": old, "new_text": new}]},
                            make_ctx(layout["ws"])).data
    assert data["ok"], data
    assert target.read_bytes() == expected
    assert os.stat(target).st_mode & 0o7777 == mode


# --- crashes and full disks ----------------------------------------------------------------------------

def leftovers(directory: Path) -> list[str]:
    return [p.name for p in directory.iterdir() if p.name.endswith(".tmp")]


def test_failed_rename_leaves_old_content_and_no_temp(layout: dict[str, Path],
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    ws = layout["ws"]

    def broken_replace(*args: object, **kwargs: object) -> None:
        raise OSError(errno.EIO, "I/O error")

    monkeypatch.setattr(documents_module.os, "replace", broken_replace)
    data = REGISTRY.execute("write_file", {"path": "inside.txt", "content": "new\n"}, make_ctx(ws)).data
    assert data["ok"] is False
    assert_one_sentence(data["error"])
    assert (ws / "inside.txt").read_text() == "inside\n" and leftovers(ws) == []


def test_disk_full_mid_write_leaves_old_content(layout: dict[str, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    ws = layout["ws"]
    real_write = os.write
    calls = {"n": 0}

    def filling_write(fd: int, data: bytes) -> int:
        calls["n"] += 1
        if calls["n"] > 1:
            raise OSError(errno.ENOSPC, "No space left on device")
        return real_write(fd, bytes(data)[:10])  # a short write first, then the disk is full

    monkeypatch.setattr(documents_module.os, "write", filling_write)
    data = REGISTRY.execute("write_file", {"path": "inside.txt", "content": "x" * 1000}, make_ctx(ws)).data
    assert data["ok"] is False and "disk is full" in data["error"]
    assert_one_sentence(data["error"])
    assert (ws / "inside.txt").read_text() == "inside\n" and leftovers(ws) == []


def test_process_killed_mid_write_leaves_old_content(layout: dict[str, Path]) -> None:
    ws = layout["ws"]
    target = ws / "inside.txt"
    script = (
        "import os, signal, sys\n"
        "from pathlib import Path\n"
        "from k1412_ls.tools import documents\n"
        "documents.os.fsync = lambda fd: os.kill(os.getpid(), signal.SIGKILL)\n"
        "documents.atomic_write_bytes(Path(sys.argv[1]), b'new content' * 1000, root=Path(sys.argv[2]))\n"
    )
    proc = subprocess.run([sys.executable, "-c", script, str(target), str(ws)], timeout=60,
                          capture_output=True)
    assert proc.returncode == -signal.SIGKILL
    assert target.read_text() == "inside\n"


def test_written_file_is_never_truncated_for_readers(layout: dict[str, Path]) -> None:
    ws = layout["ws"]
    target = ws / "data.txt"
    old, new = b"A" * 200_000, b"B" * 300_000
    target.write_bytes(old)
    seen: set[int] = set()
    stop = threading.Event()

    def reader() -> None:
        while not stop.is_set():
            seen.add(len(target.read_bytes()))

    worker = threading.Thread(target=reader)
    worker.start()
    try:
        for i in range(20):
            atomic_write_bytes(target, new if i % 2 == 0 else old, root=ws)
    finally:
        stop.set()
        worker.join()
    assert seen <= {len(old), len(new)}
