"""stat_path, list_files, read_file and write_file as the model sees them."""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

import pytest

from k1412_ls.tools.files.documents import DiskDocumentStore, Snapshot
from k1412_ls.tools.files.edits import restore_newlines
from k1412_ls.tools.files.file_tools import TOOLS as FILE_TOOLS
from k1412_ls.tools.files.locks import user_write_lock
from k1412_ls.tools.files.patching import TOOLS as PATCH_TOOLS
from k1412_ls.tools.files.search import TOOLS as SEARCH_TOOLS
from k1412_ls.tools.files.workspace import Workspace
from k1412_ls.tools.registry import ToolContext, ToolRegistry

ALL_TOOLS = [*FILE_TOOLS, *PATCH_TOOLS, *SEARCH_TOOLS]
REGISTRY = ToolRegistry(ALL_TOOLS)


def call(ctx: ToolContext, tool: str, **arguments: object) -> dict:
    return REGISTRY.execute(tool, dict(arguments), ctx).data


# --- catalogue -----------------------------------------------------------------------------------

@pytest.mark.parametrize(("name", "parallel", "read_only", "bodies"), [
    ("stat_path", True, True, set()),
    ("list_files", True, True, set()),
    ("read_file", True, True, set()),
    ("search_files", True, True, set()),
    ("write_file", False, False, {"content"}),
    ("patch_file", False, False, {"edits", "diff"}),
])
def test_tool_catalogue_flags(name: str, parallel: bool, read_only: bool, bodies: set[str]) -> None:
    tool = REGISTRY.get(name)
    assert tool is not None
    assert tool.is_parallel_safe({}) is parallel and tool.read_only is read_only
    assert tool.tags == frozenset({"core"}) and set(tool.body_fields) == bodies
    assert tool.schema()["function"]["parameters"]["additionalProperties"] is False


def test_tool_argument_names_match_the_spec() -> None:
    params = {t.name: set(t.schema()["function"]["parameters"]["properties"]) for t in ALL_TOOLS}
    assert params == {
        "stat_path": {"path"}, "list_files": {"path", "depth", "glob"},
        "read_file": {"path", "start_line", "end_line"},
        "search_files": {"query", "path", "regex", "glob", "max_results"},
        "write_file": {"path", "content"}, "patch_file": {"path", "edits", "diff"},
    }


# --- read_file -----------------------------------------------------------------------------------

@pytest.mark.parametrize(("raw", "content", "endings"), [
    (b"a\nb\n", "a\nb\n", "lf"),
    (b"a\r\nb\r\n", "a\nb\n", "crlf"),
    (b"a\r\nb\nc", "a\nb\nc", "mixed"),
    (b"", "", "lf"),
])
def test_read_file_returns_lf_text_and_names_the_endings(ctx: ToolContext, ws: Path, raw: bytes, content: str,
                                                         endings: str) -> None:
    (ws / "f.txt").write_bytes(raw)
    data = call(ctx, "read_file", path="f.txt")
    assert data["ok"] and data["content"] == content and data["line_endings"] == endings
    assert data["truncated"] is False


def test_read_file_windows_say_where_to_continue(ctx: ToolContext, ws: Path) -> None:
    (ws / "big.txt").write_text("".join(f"row {i}\n" for i in range(1, 5001)))
    first = call(ctx, "read_file", path="big.txt")
    assert (first["start_line"], first["end_line"], first["total_lines"]) == (1, 2000, 5000)
    assert first["truncated"] and first["next_start_line"] == 2001
    assert first["content"].splitlines()[-1] == "row 2000"
    last = call(ctx, "read_file", path="big.txt", start_line=4001)
    assert (last["start_line"], last["end_line"], last["truncated"]) == (4001, 5000, False)
    assert "next_start_line" not in last
    middle = call(ctx, "read_file", path="big.txt", start_line=10, end_line=12)
    assert middle["content"] == "row 10\nrow 11\nrow 12\n" and middle["truncated"] is False


def test_read_file_caps_bytes_and_cuts_giant_lines(ctx: ToolContext, ws: Path) -> None:
    (ws / "wide.txt").write_text(("y" * 3000 + "\n") * 200 + "z" * 50_000 + "\n")
    data = call(ctx, "read_file", path="wide.txt")
    assert len(data["content"].encode()) <= 256 * 1024 and data["truncated"]
    assert data["next_start_line"] == data["end_line"] + 1 < 201
    rest = call(ctx, "read_file", path="wide.txt", start_line=195)
    assert rest["cut_lines"] == [201] and rest["end_line"] == 201
    assert "…[line cut: 50000 characters in total]" in rest["content"]


@pytest.mark.parametrize(("arguments", "fragment"), [
    ({"path": "f.txt", "start_line": 9}, "past the end"),
    ({"path": "f.txt", "start_line": 3, "end_line": 2}, "before start_line"),
    ({"path": "f.txt", "start_line": 0}, "start_line"),
    ({"path": "nope.txt"}, "does not exist"),
    ({"path": "."}, "is a directory"),
])
def test_read_file_refusals_are_one_sentence(ctx: ToolContext, ws: Path, arguments: dict, fragment: str) -> None:
    (ws / "f.txt").write_text("1\n2\n3\n")
    data = call(ctx, "read_file", **arguments)
    assert data["ok"] is False and fragment in data["error"] and "\n" not in data["error"]


def test_read_file_describes_binary_files(ctx: ToolContext, ws: Path) -> None:
    (ws / "logo.png").write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 4)
    result = REGISTRY.execute("read_file", {"path": "logo.png"}, ctx)
    assert result.ok and result.data["binary"] is True and result.data["mime"] == "image/png"
    assert result.data["size"] == 8 + 1024 and "content" not in result.data
    assert result.facts == {"kind": "inspect", "paths": ["logo.png"]}


def test_read_file_reports_bom_and_read_facts(ctx: ToolContext, ws: Path) -> None:
    (ws / "b.txt").write_bytes(b"\xef\xbb\xbfhi 42 and 0.5 s\n")
    result = REGISTRY.execute("read_file", {"path": "b.txt"}, ctx)
    assert result.data["content"] == "hi 42 and 0.5 s\n" and result.data["bom"] is True
    # The numbers read back a figure the answer quotes from the file.
    assert result.facts == {"kind": "read", "paths": ["b.txt"], "numbers": ["42", "0.5"]}


class EditorBuffers(DiskDocumentStore):
    """A document store where some files are open in an editor with unsaved text."""

    def __init__(self, root: Path, buffers: dict[Path, str]) -> None:
        super().__init__(root)
        self.buffers = buffers

    def read(self, path: Path) -> Snapshot:
        if path in self.buffers:
            return Snapshot(text=self.buffers[path], version=7)
        return super().read(path)


def test_read_file_returns_the_open_buffer_not_the_disk(ws: Path) -> None:
    (ws / "open.py").write_text("on disk\n")
    store = EditorBuffers(ws, {ws / "open.py": "unsaved buffer\n"})
    ctx = ToolContext(workspace=Workspace(ws), documents=store)
    assert call(ctx, "read_file", path="open.py")["content"] == "unsaved buffer\n"
    assert ctx.reads[ws / "open.py"].version == 7


# --- write_file ----------------------------------------------------------------------------------

def test_write_file_creates_parents_and_reports_facts(ctx: ToolContext, ws: Path) -> None:
    result = REGISTRY.execute("write_file", {"path": "src/pkg/mod.py", "content": "x = 1\n"}, ctx)
    assert result.ok and result.data["action"] == "create"
    assert (ws / "src/pkg/mod.py").read_text() == "x = 1\n"
    (entry,) = result.facts["writes"]
    assert entry["path"] == "src/pkg/mod.py" and entry["action"] == "create" and entry["bytes"] == 6
    umask = os.umask(0)
    os.umask(umask)
    assert os.stat(ws / "src/pkg/mod.py").st_mode & 0o777 == 0o666 & ~umask


def test_write_file_keeps_mode_bom_and_crlf(ctx: ToolContext, ws: Path) -> None:
    target = ws / "tool.cmd"
    target.write_bytes(b"\xef\xbb\xbf@echo off\r\necho 1\r\n")
    os.chmod(target, 0o755)
    data = call(ctx, "write_file", path="tool.cmd", content="@echo off\necho 2\necho 3\n")
    assert data["ok"] and data["line_endings"] == "crlf"
    assert target.read_bytes() == b"\xef\xbb\xbf@echo off\r\necho 2\r\necho 3\r\n"
    assert os.stat(target).st_mode & 0o7777 == 0o755


def test_write_file_identical_content_is_reported_unchanged(ctx: ToolContext, ws: Path) -> None:
    (ws / "same.txt").write_bytes(b"a\r\nb\r\n")
    result = REGISTRY.execute("write_file", {"path": "same.txt", "content": "a\nb\n"}, ctx)
    assert result.ok and result.data["action"] == "unchanged" and result.facts["unchanged"] is True


@pytest.mark.parametrize(("content", "fragment"), [
    ("bin\x00ary", "NUL"),
    ("x" * (2 * 1024 * 1024 + 1), "limit"),
    ("\ud800", "lone surrogates"),
])
def test_write_file_refuses_binary_oversized_or_broken_content(ctx: ToolContext, ws: Path, content: str,
                                                               fragment: str) -> None:
    data = call(ctx, "write_file", path="out.txt", content=content)
    assert data["ok"] is False and fragment in data["error"] and "\n" not in data["error"]
    assert not (ws / "out.txt").exists()


def test_write_file_over_a_directory_is_refused(ctx: ToolContext, ws: Path) -> None:
    (ws / "d").mkdir()
    data = call(ctx, "write_file", path="d", content="x")
    assert data["ok"] is False and "is a directory" in data["error"]


def test_write_file_replaces_a_binary_file_with_text(ctx: ToolContext, ws: Path) -> None:
    (ws / "blob").write_bytes(b"\x00\x01\x02")
    assert call(ctx, "write_file", path="blob", content="text now\n")["ok"]
    assert (ws / "blob").read_text() == "text now\n"


def test_write_after_external_change_is_a_conflict(ctx: ToolContext, ws: Path) -> None:
    (ws / "c.txt").write_text("v1\n")
    assert call(ctx, "read_file", path="c.txt")["ok"]
    (ws / "c.txt").write_text("v1 edited by the user\n")
    data = call(ctx, "write_file", path="c.txt", content="agent version\n")
    assert data["ok"] is False and "read it again" in data["error"]
    assert (ws / "c.txt").read_text() == "v1 edited by the user\n"
    assert call(ctx, "read_file", path="c.txt")["ok"]
    assert call(ctx, "write_file", path="c.txt", content="agent version\n")["ok"]


def test_writes_of_one_user_wait_for_that_users_lock(ws: Path) -> None:
    ctx = ToolContext(workspace=Workspace(ws), documents=DiskDocumentStore(ws), user="alice-lock-test")
    other = ToolContext(workspace=Workspace(ws), documents=DiskDocumentStore(ws), user="bob-lock-test")
    lock = user_write_lock("alice-lock-test")
    assert lock is user_write_lock("alice-lock-test") and lock is not user_write_lock("bob-lock-test")
    finished = threading.Event()
    with lock:
        worker = threading.Thread(target=lambda: (call(ctx, "write_file", path="a.txt", content="a"),
                                                  finished.set()))
        worker.start()
        assert call(other, "write_file", path="b.txt", content="b")["ok"]  # another user is not blocked
        assert not finished.wait(0.3)
        assert not (ws / "a.txt").exists()
    worker.join(10)
    assert finished.is_set() and (ws / "a.txt").read_text() == "a"


# --- list_files and stat_path --------------------------------------------------------------------

def make_tree(ws: Path) -> None:
    for rel in ["src/app.py", "src/deep/er/x.py", "README.md", "build/out.o", "notes.log", ".env.example",
                ".git/HEAD"]:
        (ws / rel).parent.mkdir(parents=True, exist_ok=True)
        (ws / rel).write_text("x\n")
    (ws / ".gitignore").write_text("build/\n*.log\n")
    os.symlink("src/app.py", ws / "app-link.py")


def test_list_files_respects_depth_gitignore_and_git(ctx: ToolContext, ws: Path) -> None:
    make_tree(ws)
    data = call(ctx, "list_files")
    assert data["entries"] == [".env.example", ".gitignore", "README.md", "app-link.py -> src/app.py", "src/",
                               "src/app.py", "src/deep/"]
    deeper = call(ctx, "list_files", path="src", depth=5)
    assert deeper["entries"] == ["src/app.py", "src/deep/", "src/deep/er/", "src/deep/er/x.py"]


def test_list_files_glob_filters_files(ctx: ToolContext, ws: Path) -> None:
    make_tree(ws)
    assert call(ctx, "list_files", depth=5, glob="*.py")["entries"] == [
        "app-link.py -> src/app.py", "src/app.py", "src/deep/er/x.py"]


def test_list_files_truncates_with_a_note(ctx: ToolContext, ws: Path) -> None:
    (ws / "many").mkdir()
    for i in range(2100):
        (ws / "many" / f"f{i:04}").touch()
    data = call(ctx, "list_files", path="many")
    assert data["truncated"] and data["count"] == 2000 and "2000 entries" in data["note"]


@pytest.mark.parametrize(("setup", "path", "expected"), [
    (lambda ws: (ws / "f.txt").write_bytes(b"a\nb\nc"), "f.txt",
     {"exists": True, "type": "file", "size": 5, "lines": 3}),
    (lambda ws: (ws / "d").mkdir(), "d", {"exists": True, "type": "directory"}),
    (lambda ws: None, "missing.txt", {"exists": False}),
    (lambda ws: os.symlink("nowhere", ws / "dangling"), "dangling", {"exists": False, "dangling": True}),
    (lambda ws: (ws / "b.bin").write_bytes(b"\x00\x01"), "b.bin", {"type": "file", "binary": True}),
])
def test_stat_path_describes_paths(ctx: ToolContext, ws: Path, setup, path: str, expected: dict) -> None:
    setup(ws)
    data = call(ctx, "stat_path", path=path)
    assert data["ok"] is True
    assert {key: data.get(key) for key in expected} == expected


def test_stat_path_mode_is_an_octal_string(ctx: ToolContext, ws: Path) -> None:
    (ws / "run.sh").write_text("#!/bin/sh\n")
    os.chmod(ws / "run.sh", 0o755)
    data = call(ctx, "stat_path", path=str(ws / "run.sh"))
    assert data["mode"] == "0755" and data["path"] == "run.sh" and data["mtime"].endswith("+00:00")


# --- line-ending restoration ---------------------------------------------------------------------

@pytest.mark.parametrize(("original", "new_lf", "expected"), [
    ("a\r\nb\r\n", "a\nb\nc\n", "a\r\nb\r\nc\r\n"),
    ("a\r\nb\nc\r\n", "a\nb\nc\n", "a\r\nb\nc\r\n"),
    ("a\r\nb\nc\r\nd\n", "a\nX\nb\nc\nd\n", "a\r\nX\nb\nc\r\nd\n"),
    ("a\fb\r\nc\r\n", "a\fb\nc\nd", "a\fb\r\nc\r\nd"),
    ("a\u2028b\r\n", "a\u2028b\n", "a\u2028b\r\n"),
    ("a\x0bb\r\nc\nd\n", "a\x0bb\nc\nd\nE\n", "a\x0bb\r\nc\nd\nE\n"),
    ("one\r\ntwo", "one\ntwo\nthree", "one\r\ntwo\r\nthree"),
    ("x\n", "", ""),
])
def test_restore_newlines_is_exact(original: str, new_lf: str, expected: str) -> None:
    newline = "\r\n" if original.count("\r\n") > original.count("\n") - original.count("\r\n") else "\n"
    assert restore_newlines(original, new_lf, newline) == expected


def test_restore_newlines_on_a_large_mixed_file_is_fast_and_exact() -> None:
    lines = [f"line {i}" + ("\r\n" if i % 3 else "\n") for i in range(200_000)]
    original = "".join(lines)
    new_lf = original.replace("\r\n", "\n").replace("line 100000\n", "changed\n")
    started = time.monotonic()
    result = restore_newlines(original, new_lf, "\r\n")
    assert time.monotonic() - started < 10  # generous bound: this must not be quadratic
    assert result == original.replace("line 100000\r\n", "changed\r\n").replace("line 100000\n", "changed\n")


def test_restore_newlines_with_many_repeated_lines_is_not_quadratic() -> None:
    original = "".join("}\r\n" if i % 2 else "    x\n" for i in range(40_000))
    lf = original.replace("\r\n", "\n")
    new_lf = lf[: len(lf) // 2] + "inserted\n" + lf[len(lf) // 2:]
    started = time.monotonic()
    result = restore_newlines(original, new_lf, "\r\n")
    assert time.monotonic() - started < 10  # the previous full difflib pass took about 4 minutes here
    half = len(original) // 2
    assert result == original[:half] + "inserted\r\n" + original[half:]
