"""End to end: agent writes reach the editor as applyEdit; refusals and conflicts write nothing."""

from __future__ import annotations

from pathlib import Path

import pytest
from lsprotocol import types

from k1412_ls.lsp import constants as c
from tests.support.lsp_client import CLIENT_NAMES, lsp_session, wait_until

pytestmark = pytest.mark.e2e

TASK = "Change world to K1412 in hello.py, create new.py that prints ok, then run both to check."


def _units(text: str, encoding: str) -> int:
    if encoding == "utf-8":
        return len(text.encode("utf-8"))
    return len(text.encode("utf-16-le")) // 2


@pytest.mark.parametrize("client", CLIENT_NAMES)
@pytest.mark.parametrize("original", [
    'msg = "héllo 😀 world"\nprint(msg)\n',
    'msg = "hello world"\r\nprint(msg)\r\n',
], ids=["non-bmp", "crlf"])
async def test_run_task_patches_an_open_buffer_and_creates_a_file(tmp_path: Path, client: str,
                                                                  original: str) -> None:
    script = [
        {"tool_calls": [{"name": "read_file", "arguments": {"path": "hello.py"}}]},
        {"tool_calls": [
            {"name": "patch_file", "arguments": {"path": "hello.py",
                                                 "edits": [{"old_text": "world", "new_text": "K1412 🚀"}]}},
            {"name": "write_file", "arguments": {"path": "new.py", "content": "print('ok')\n"}},
        ]},
        {"tool_calls": [{"name": "run_command", "arguments": {"command": "python3 hello.py && python3 new.py"}}]},
        {"content": "Done: hello.py patched, new.py created, both ran."},
    ]
    async with lsp_session(tmp_path, script, client=client) as session:
        hello = session.root / "hello.py"
        hello.write_bytes(original.encode("utf-8"))
        uri = session.editor.open(hello, version=7)
        result = await session.command(c.CMD_RUN_TASK, {"task": TASK})

        expected = original.replace("world", "K1412 🚀")
        assert result["status"] == "completed", result
        assert sorted(result["files_changed"]) == ["hello.py", "new.py"]
        assert session.editor.text(uri) == expected
        assert hello.read_bytes() == expected.encode("utf-8")
        assert (session.root / "new.py").read_text(encoding="utf-8") == "print('ok')\n"

        first = session.editor.edits[0]
        assert first.label.startswith(f"K1412 {result['run_id']}")
        prefix = original[: original.index("world")]
        if client == "vscode":
            (change,) = first.edit.document_changes
            assert change.text_document.version == 7
            (text_edit,) = change.edits
            assert first.edit.change_annotations[c.EDIT_ANNOTATION_ID].needs_confirmation is False
            created = [op for e in session.editor.edits for op in e.edit.document_changes or []
                       if isinstance(op, types.CreateFile)]
            assert [op.uri for op in created] == [session.uri("new.py")]
        else:
            (text_edit,) = first.edit.changes[uri]
            assert len(session.editor.edits) == 1  # no resource operations: the new file goes to disk
        # One minimal replacement, positioned in the client's own encoding.
        assert text_edit.new_text == "K1412 🚀"
        assert text_edit.range.start == types.Position(line=0, character=_units(prefix, session.editor.encoding))
        assert text_edit.range.end.character == text_edit.range.start.character + len("world")


@pytest.mark.parametrize("client", CLIENT_NAMES)
async def test_a_refused_edit_writes_nothing_and_the_tool_fails(tmp_path: Path, client: str) -> None:
    script = [
        {"tool_calls": [{"name": "read_file", "arguments": {"path": "hello.py"}}]},
        {"tool_calls": [{"name": "patch_file", "arguments": {
            "path": "hello.py", "edits": [{"old_text": "world", "new_text": "there"}]}}]},
        {"content": "The editor refused the edit."},
    ]
    async with lsp_session(tmp_path, script, client=client) as session:
        hello = session.root / "hello.py"
        hello.write_text("print('hello world')\n", encoding="utf-8")
        uri = session.editor.open(hello)
        session.editor.refuse = True
        result = await session.command(c.CMD_RUN_TASK, {"task": "Change world to there in hello.py."})

        assert result["status"] != "completed"
        assert result["files_changed"] == []
        assert hello.read_text(encoding="utf-8") == "print('hello world')\n"
        assert session.editor.text(uri) == "print('hello world')\n"
        patch = session.tool_results()[-1]
        assert patch.tool == "patch_file" and patch.ok is False
        tool_message = session.model.chat_requests[2]["body"]["messages"][-1]
        assert tool_message["role"] == "tool"
        assert '"ok": false' in tool_message["content"] and "refused" in tool_message["content"]


@pytest.mark.parametrize("client", CLIENT_NAMES)
async def test_typing_between_read_and_patch_keeps_the_typed_text(tmp_path: Path, client: str) -> None:
    script = [
        {"tool_calls": [{"name": "read_file", "arguments": {"path": "hello.py"}}]},
        {"delay_s": 1.5, "tool_calls": [{"name": "patch_file", "arguments": {
            "path": "hello.py", "edits": [{"old_text": "world", "new_text": "there"}]}}]},
        {"content": "Stopped: the file changed under me."},
    ]
    async with lsp_session(tmp_path, script, client=client) as session:
        hello = session.root / "hello.py"
        hello.write_text("print('hello world')\n", encoding="utf-8")
        uri = session.editor.open(hello)
        _, pending = session.send_command(c.CMD_RUN_TASK, {"task": "Change world to there in hello.py."})
        await wait_until(lambda: any(p.tool == "read_file" for p in session.tool_results()))
        session.editor.type_at_end(uri, "# typed by the user\n")
        result = await pending

        assert session.editor.text(uri) == "print('hello world')\n# typed by the user\n"
        assert hello.read_text(encoding="utf-8") == "print('hello world')\n"
        patch = session.tool_results()[-1]
        assert patch.tool == "patch_file" and patch.ok is False
        assert "changed since you last read it" in patch.error
        assert session.editor.edits == []
        assert result["files_changed"] == []


async def test_an_external_change_after_a_read_turns_the_write_into_a_conflict(tmp_path: Path) -> None:
    script = [
        {"tool_calls": [{"name": "read_file", "arguments": {"path": "data.txt"}}]},
        {"delay_s": 1.5, "tool_calls": [{"name": "patch_file", "arguments": {
            "path": "data.txt", "edits": [{"old_text": "one", "new_text": "uno"}]}}]},
        {"content": "Stopped."},
    ]
    async with lsp_session(tmp_path, script) as session:
        data = session.root / "data.txt"
        data.write_text("one\ntwo\n", encoding="utf-8")
        _, pending = session.send_command(c.CMD_RUN_TASK, {"task": "Change one to uno in data.txt."})
        await wait_until(lambda: any(p.tool == "read_file" for p in session.tool_results()))
        data.write_text("one\ntwo\nthree (added outside the editor)\n", encoding="utf-8")
        await pending

        assert data.read_text(encoding="utf-8") == "one\ntwo\nthree (added outside the editor)\n"
        patch = session.tool_results()[-1]
        assert patch.ok is False and "changed since you last read it" in patch.error


@pytest.mark.parametrize("client", CLIENT_NAMES)
async def test_apply_patch_delete_and_move_reach_the_workspace(tmp_path: Path, client: str) -> None:
    patch = ("*** Begin Patch\n*** Delete File: old.txt\n*** Update File: a.txt\n*** Move to: b.txt\n"
             "@@\n-alpha\n+beta\n*** End Patch\n")
    script = [
        {"tool_calls": [{"name": "apply_patch", "arguments": {"patch": patch}}]},
        {"tool_calls": [{"name": "list_files", "arguments": {"path": "."}}]},
        {"content": "Deleted old.txt and moved a.txt to b.txt."},
    ]
    async with lsp_session(tmp_path, script, client=client) as session:
        (session.root / "old.txt").write_text("bye\n", encoding="utf-8")
        (session.root / "a.txt").write_text("alpha\n", encoding="utf-8")
        result = await session.command(c.CMD_RUN_TASK, {"task": "Delete old.txt and rename a.txt to b.txt."})

        assert session.tool_results()[0].ok is True, session.tool_results()[0]
        assert not (session.root / "old.txt").exists() and not (session.root / "a.txt").exists()
        assert (session.root / "b.txt").read_text(encoding="utf-8") == "beta\n"
        operations = [type(op).__name__ for e in session.editor.edits for op in e.edit.document_changes or []]
        if client == "vscode":
            assert "DeleteFile" in operations and "RenameFile" in operations
        else:
            assert operations == []
        assert sorted(result["files_changed"]) == ["a.txt", "b.txt", "old.txt"]
