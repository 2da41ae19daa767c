"""Security cases for the file side of the gateway: special files, bytes and modes kept, crashes.

Each case asserts nothing escaped, nothing was lost, and one-sentence errors.
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

from k1412_ls.tools.errors import ToolError
from k1412_ls.tools.files import documents as documents_module
from k1412_ls.tools.files.documents import DiskDocumentStore, atomic_write_bytes
from tests.support.file_layout import REGISTRY, assert_one_sentence, make_ctx

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
        "from k1412_ls.tools.files import documents\n"
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
