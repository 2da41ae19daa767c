"""``k1412.undoRun``: a run's inverse as one ``workspace/applyEdit``, then the same restores on disk.

The plan (:func:`k1412_ls.tools.undo.undo_on_disk.plan_undo`) sees the open buffers, so a buffer with text typed
after the run is refused like a file changed on disk. The editor gets a single edit: versioned text
edits for open buffers, ``CreateFile`` for files the run deleted and ``DeleteFile`` for files it
created (when the client supports them), so its own undo stack can redo the run. Only when the
editor applied it are the files on disk restored (each re-checked under the workspace lock); a
refused edit restores nothing.
"""

from __future__ import annotations

import asyncio
import functools
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lsprotocol import types
from pygls.capabilities import get_capability
from pygls.uris import from_fs_path, to_fs_path

from k1412_ls.core.undo_result import finish_undo
from k1412_ls.locations import state_dir
from k1412_ls.lsp.textedit import minimal_replacement, position_at
from k1412_ls.tools.undo.preimages import read_state
from k1412_ls.tools.undo.undo_on_disk import (
    MAX_COMPARE_BYTES,
    UndoPlan,
    UnknownRun,
    apply_on_disk,
    latest_run,
    plan_undo,
)

if TYPE_CHECKING:
    from pygls.lsp.server import LanguageServer

    from k1412_ls.lsp.runs import RunService


async def undo_run(server: LanguageServer, runs: RunService, run_id: str | None) -> dict[str, Any]:
    """Undo ``run_id`` (default: the latest run in this workspace that is not undone yet)."""
    root = runs.workspace_root()
    state = state_dir()
    loop = asyncio.get_running_loop()
    if run_id is None:
        run_id = await loop.run_in_executor(None, latest_run, state, root)
        if run_id is None:
            return _result("", "No K1412 run in this workspace has anything left to undo.")
    buffers = _buffers(server, root)
    try:
        plan = await loop.run_in_executor(None, functools.partial(
            plan_undo, state, run_id, buffers={rel: text for rel, (_uri, text, _v) in buffers.items()},
            running=run_id in runs.closed, workspace=root))
    except UnknownRun as exc:
        return _result(run_id, str(exc))
    if plan.blocked is not None or not plan.actions:
        return await loop.run_in_executor(None, functools.partial(finish_undo, state, plan, [], [], by="editor"))
    edit, created = _inverse_edit(server, plan, _buffers(server, root))
    if edit is not None:
        params = types.ApplyWorkspaceEditParams(edit=edit, label=f"K1412: undo {run_id}")
        try:
            answer = await asyncio.wait_for(server.workspace_apply_edit_async(params), timeout=60)
            applied, reason = answer.applied, answer.failure_reason
        except Exception:  # no answer, or an error reply: the same as a refusal
            applied, reason = False, "no answer"
        if not applied:
            message = (f"The editor did not apply the undo of run {run_id}" + (f" ({reason})" if reason else "")
                       + "; nothing was restored.")
            return await loop.run_in_executor(None, functools.partial(finish_undo, state, plan, [], [],
                                                                      by="editor", message=message))
    accepted = {rel: {state_now} for rel in created
                if (state_now := _created_state(plan, rel)) is not None}
    restored, refused = await loop.run_in_executor(None, functools.partial(apply_on_disk, plan,
                                                                           also_accept=accepted))
    return await loop.run_in_executor(None, functools.partial(finish_undo, state, plan, restored, refused,
                                                              by="editor"))


def _result(run_id: str, message: str) -> dict[str, Any]:
    return {"ok": False, "run_id": run_id, "restored": [], "refused": [], "message": message, "not_undoable": []}


def _buffers(server: LanguageServer, root: Path) -> dict[str, tuple[str, str, int | None]]:
    """Open buffers inside ``root``: workspace-relative path → (uri, text, version)."""
    found: dict[str, tuple[str, str, int | None]] = {}
    for uri, doc in server.workspace.text_documents.items():
        fs_path = to_fs_path(uri)
        if fs_path is None or doc.version is None:
            continue
        try:
            rel = Path(os.path.realpath(fs_path)).relative_to(root).as_posix()
        except ValueError:
            continue
        found[rel] = (doc.uri, doc.source, doc.version)
    return found


def _text(data: bytes | None) -> str | None:
    if data is None:
        return None
    body = data[3:] if data.startswith(b"\xef\xbb\xbf") else data
    try:
        return body.decode("utf-8")
    except UnicodeDecodeError:
        return None  # not text: restored on disk only


def _inverse_edit(server: LanguageServer, plan: UndoPlan,
                  buffers: dict[str, tuple[str, str, int | None]]) -> tuple[types.WorkspaceEdit | None, list[str]]:
    """The editor's part of the undo, and the paths it will create (empty, or with their text)."""
    caps = server.client_capabilities
    if not get_capability(caps, "workspace.apply_edit", False):
        return None, []  # the client takes no edits: the disk alone is restored
    document_changes = bool(get_capability(caps, "workspace.workspace_edit.document_changes", False))
    resource_ops = set(get_capability(caps, "workspace.workspace_edit.resource_operations", None) or [])
    encoding = str(server.workspace.position_encoding or "utf-16")
    changes: list[Any] = []
    plain: dict[str, list[types.TextEdit]] = {}
    created: list[str] = []
    for action in plan.actions:
        uri = from_fs_path(str(plan.root / action.rel)) or (plan.root / action.rel).as_uri()
        text = _text(action.data)
        buffer = buffers.get(action.rel)
        if action.deletes:
            if document_changes and "delete" in resource_ops:
                changes.append(types.DeleteFile(uri=uri, options=types.DeleteFileOptions(ignore_if_not_exists=True)))
            continue
        if buffer is not None and text is not None:
            edit = _replace_all(buffer[1], text, encoding)
            if edit is None:
                continue
            if document_changes:
                changes.append(types.TextDocumentEdit(text_document=types.OptionalVersionedTextDocumentIdentifier(
                    uri=buffer[0], version=buffer[2]), edits=[edit]))
            else:
                plain.setdefault(buffer[0], []).append(edit)
        elif action.current == "no-file" and document_changes and "create" in resource_ops:
            changes.append(types.CreateFile(uri=uri, options=types.CreateFileOptions(ignore_if_exists=True)))
            created.append(action.rel)
            if text:
                changes.append(types.TextDocumentEdit(text_document=types.OptionalVersionedTextDocumentIdentifier(
                    uri=uri, version=None), edits=[_replace_all("", text, encoding)]))  # type: ignore[list-item]
    if document_changes and changes:
        return types.WorkspaceEdit(document_changes=changes), created
    if plain:
        return types.WorkspaceEdit(changes=plain), created
    return None, created


def _replace_all(old: str, new: str, encoding: str) -> types.TextEdit | None:
    change = minimal_replacement(old, new)
    if change is None:
        return None
    start = types.Position(*position_at(old, change.start, encoding))
    end = types.Position(*position_at(old, change.end, encoding))
    return types.TextEdit(range=types.Range(start=start, end=end), new_text=change.text)


def _created_state(plan: UndoPlan, rel: str) -> str | None:
    """The version of a file the editor just created, if it holds nothing or exactly the restored bytes."""
    action = next(a for a in plan.actions if a.rel == rel)
    now = read_state(plan.root, rel, MAX_COMPARE_BYTES)
    if now.kind == "file" and now.data is not None and now.data in (b"", action.data, _bomless(action.data)):
        return now.version
    return None


def _bomless(data: bytes | None) -> bytes | None:
    return data[3:] if data is not None and data.startswith(b"\xef\xbb\xbf") else data
