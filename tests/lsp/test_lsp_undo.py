"""End to end through the LSP: k1412.undoRun as one inverse applyEdit, refusals, review before apply."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types

from k1412_ls.lsp import constants as c
from tests.support.lsp_client import CLIENT_NAMES, Session, lsp_session, wait_until

pytestmark = pytest.mark.e2e

TASK = "Change world to there in hello.py, create new.py, delete old.txt with rm, then run hello.py."
REASON = "I will greet there instead of world and add new.py."
SCRIPT = [
    {"tool_calls": [{"name": "read_file", "arguments": {"path": "hello.py"}}]},
    {"content": REASON, "tool_calls": [
        {"name": "patch_file", "arguments": {"path": "hello.py", "edits": [{"old_text": "world", "new_text": "there"}]}},
        {"name": "write_file", "arguments": {"path": "new.py", "content": "print('new')\n"}}]},
    {"tool_calls": [{"name": "run_command", "arguments": {"command": "rm old.txt && python3 hello.py"}}]},
    {"content": "hello.py patched, new.py created, old.txt removed, hello.py ran.", "repeat": True},
]
ORIGINAL = {"hello.py": "print('hello world')\r\n", "old.txt": "old\n", "keep.txt": "keep\n"}


def seed(root: Path) -> dict[str, bytes]:
    for rel, text in ORIGINAL.items():
        (root / rel).write_bytes(text.encode())
    return {p.name: p.read_bytes() for p in sorted(root.iterdir()) if p.is_file()}


def disk(root: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(root.iterdir()) if p.is_file()}


async def run_then_undo(session: Session, **undo_args: Any) -> tuple[dict[str, Any], dict[str, Any], str]:
    uri = session.editor.open(session.root / "hello.py", version=3)
    result = await session.command(c.CMD_RUN_TASK, {"task": TASK})
    assert session.editor.text(uri) == "print('hello there')\r\n"
    assert (session.root / "new.py").exists() and not (session.root / "old.txt").exists()
    return result, undo_args, uri


@pytest.mark.parametrize("client", CLIENT_NAMES)
async def test_undo_run_restores_buffers_and_disk_in_one_edit_and_twice_says_so(tmp_path: Path,
                                                                                client: str) -> None:
    async with lsp_session(tmp_path, SCRIPT, client=client) as session:
        before = seed(session.root)
        result, _, uri = await run_then_undo(session)
        edits_before = len(session.editor.edits)
        undone = await session.command(c.CMD_UNDO_RUN, {"runId": result["run_id"]})
        assert undone["ok"] is True, undone
        assert undone["restored"] == ["hello.py", "new.py", "old.txt"] and undone["refused"] == []
        assert disk(session.root) == before
        assert session.editor.text(uri) == ORIGINAL["hello.py"]
        (undo_edit,) = session.editor.edits[edits_before:]  # one inverse edit
        if client == "vscode":
            ops = undo_edit.edit.document_changes or []
            assert [type(op).__name__ for op in ops] == ["TextDocumentEdit", "DeleteFile", "CreateFile",
                                                         "TextDocumentEdit"]
            assert ops[0].text_document.version == session.editor.version(uri) - 1
        else:
            assert list(undo_edit.edit.changes or {}) == [uri]

        again = await session.command(c.CMD_UNDO_RUN, {"runId": result["run_id"]})
        assert again["ok"] is False and again["restored"] == [] and "already undone" in again["message"]
        assert len(session.editor.edits) == edits_before + 1
        log = [json.loads(line) for line in Path(result["events_path"]).read_text().splitlines()]
        assert [e["payload"]["by"] for e in log if e["type"] == "run.undone"] == ["editor"]


@pytest.mark.parametrize("client", CLIENT_NAMES)
async def test_a_buffer_typed_in_after_the_run_is_refused_the_rest_restored(tmp_path: Path, client: str) -> None:
    async with lsp_session(tmp_path, SCRIPT, client=client) as session:
        before = seed(session.root)
        result, _, uri = await run_then_undo(session)
        session.editor.type_at_end(uri, "# mine\n")  # unsaved: only the buffer has it
        undone = await session.command(c.CMD_UNDO_RUN, {})  # no id: the latest run in this workspace
        assert undone["run_id"] == result["run_id"]
        assert undone["ok"] is False
        assert undone["refused"] == [{"path": "hello.py",
                                      "reason": "it has unsaved changes in the editor made after the run"}]
        assert undone["restored"] == ["new.py", "old.txt"]
        assert session.editor.text(uri) == "print('hello there')\r\n# mine\n"
        assert {k: v for k, v in disk(session.root).items() if k != "hello.py"} == {
            k: v for k, v in before.items() if k != "hello.py"}
        assert (session.root / "hello.py").read_bytes() == b"print('hello there')\r\n"


async def test_unknown_and_malformed_run_ids_restore_nothing(tmp_path: Path) -> None:
    async with lsp_session(tmp_path, []) as session:
        for run_id in ("run-0123456789abcdef", "../../x"):
            out = await session.command(c.CMD_UNDO_RUN, {"runId": run_id})
            assert out["ok"] is False and out["restored"] == [] and out["message"]
        latest = await session.command(c.CMD_UNDO_RUN)
        assert latest["ok"] is False and "anything left to undo" in latest["message"]
        assert session.editor.edits == []


CONFIRM_SCRIPT = [
    {"tool_calls": [{"name": "read_file", "arguments": {"path": "hello.py"}}]},
    {"content": REASON, "tool_calls": [
        {"name": "patch_file", "arguments": {"path": "hello.py", "edits": [{"old_text": "world", "new_text": "there"}]}},
        {"name": "write_file", "arguments": {"path": "new.py", "content": "print('new')\n"}}]},
    {"content": "The user rejected both edits, so nothing changed.", "repeat": True},
]


@pytest.mark.parametrize("client", CLIENT_NAMES)
async def test_confirm_edits_with_a_refusal_writes_nothing_and_tells_the_model(tmp_path: Path, client: str) -> None:
    asked: list[types.ShowMessageRequestParams] = []
    async with lsp_session(tmp_path, CONFIRM_SCRIPT, client=client,
                           init_options={"k1412": {"confirmEdits": True}}) as session:
        before = seed(session.root)
        uri = session.editor.open(session.root / "hello.py", version=3)
        session.editor.refuse = True  # VS Code: the user cancels the refactor preview

        def on_request(params: types.ShowMessageRequestParams) -> types.MessageActionItem:
            asked.append(params)
            return types.MessageActionItem(title="Reject")

        session.client.feature(types.WINDOW_SHOW_MESSAGE_REQUEST)(on_request)
        await session.command(c.CMD_RUN_TASK, {"task": "Change world to there in hello.py and create new.py"})
        tool_messages = [json.loads(m["content"]) for m in session.model.chat_requests[2]["body"]["messages"]
                         if m["role"] == "tool"]
        assert disk(session.root) == before and session.editor.text(uri) == ORIGINAL["hello.py"]
        writes = [m for m in tool_messages if "error" in m]
        assert len(writes) == 2 and all(m["ok"] is False and "nothing was written" in m["error"] for m in writes)
        if client == "vscode":
            assert asked == []
            first = session.editor.edits[0].edit
            note = first.change_annotations[c.EDIT_ANNOTATION_ID]
            assert note.needs_confirmation is True
            assert note.label.endswith("patch hello.py") and note.description == REASON
        else:  # no annotation support: one prompt per edit batch, nothing sent to the editor
            assert len(asked) == 2 and session.editor.edits == []
            assert REASON in asked[0].message and "hello.py" in asked[0].message
            assert all("rejected" in m["error"] for m in writes)


async def test_undo_of_a_run_still_going_in_the_editor_is_refused_whole(tmp_path: Path) -> None:
    script = [
        {"tool_calls": [{"name": "write_file", "arguments": {"path": "a.txt", "content": "run\n"}}]},
        {"delay_s": 2.0, "tool_calls": [{"name": "read_file", "arguments": {"path": "a.txt"}}]},
        {"content": "a.txt now says run.", "repeat": True},
    ]
    async with lsp_session(tmp_path, script) as session:
        (session.root / "a.txt").write_text("mine\n")
        _id, pending = session.send_command(c.CMD_RUN_TASK, {"task": "Write run into a.txt"})
        await wait_until(lambda: bool(session.events_of("tool.completed")))
        run_id = session.events_of("tool.completed")[0].run_id
        early = await session.command(c.CMD_UNDO_RUN, {"runId": run_id})
        assert early["ok"] is False and "still running" in early["message"] and early["restored"] == []
        assert (session.root / "a.txt").read_text() == "run\n"
        await pending
        late = await session.command(c.CMD_UNDO_RUN, {"runId": run_id})
        assert late["ok"] is True and (session.root / "a.txt").read_text() == "mine\n"
