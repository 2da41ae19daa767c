"""The editor as a DocumentStore: open buffers are the truth, writes go through applyEdit.

Tools call this store from worker threads. Everything that touches pygls
state or sends a message is marshalled onto the server's event loop; the
calling thread waits (bounded, and gives up when the run ends). The client
applies the edit first; only then is the same text persisted to disk, so a
refused edit writes nothing and, after a write, the buffer and the file agree.

A write is computed from what the agent read: the buffer at some version, and
the disk as it was then (``Snapshot.disk``). Before the edit is sent, the buffer
must still be at that version and the disk still that version (or hold the
buffer's own text: the user saved); after the client applied it, the disk write
commits only if the disk is still what was checked before the round trip. The
run holds the workspace lock throughout, so another K1412 process cannot write
in between; anything else that does is caught by these comparisons.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from lsprotocol import types
from pygls.capabilities import get_capability
from pygls.lsp.server import LanguageServer
from pygls.uris import from_fs_path, to_fs_path

from k1412_ls.lsp import constants as c
from k1412_ls.lsp.textedit import minimal_replacement, position_at
from k1412_ls.tools.errors import ToolError
from k1412_ls.tools.files.documents import (
    BOM,
    NO_FILE,
    DiskDocumentStore,
    Snapshot,
    StaleWrite,
    bytes_version,
    open_regular,
)

T = TypeVar("T")

APPLY_TIMEOUT_S = 30.0
APPLY_ACTION = "Apply"
REJECT_ACTION = "Reject"
CONFIRM_TIMEOUT_S = 600.0  # the user is reviewing the edit
BUFFER_SYNC_TIMEOUT_S = 2.0


@dataclass(frozen=True)
class OpenBuffer:
    uri: str
    text: str
    version: int | None


@dataclass(frozen=True)
class EditOptions:
    """How edits are labelled: the run label and whether the user must confirm them."""

    label: str
    confirm: bool = False


class EditorDocumentStore:
    """DocumentStore over open buffers and ``workspace/applyEdit``; disk for everything else."""

    def __init__(self, server: LanguageServer, loop: asyncio.AbstractEventLoop, root: Path,
                 options: EditOptions, closed: threading.Event) -> None:
        self.server = server
        self.loop = loop
        self.root = Path(os.path.realpath(root))
        self.options = options
        self.closed = closed
        self.disk = DiskDocumentStore(self.root)
        self._read_versions: dict[Path, int | None] = {}
        caps = server.client_capabilities
        self.apply_edit = bool(get_capability(caps, "workspace.apply_edit", False))
        self.document_changes = bool(get_capability(caps, "workspace.workspace_edit.document_changes", False))
        self.resource_ops = set(get_capability(caps, "workspace.workspace_edit.resource_operations", None) or [])
        self.annotations = get_capability(caps, "workspace.workspace_edit.change_annotation_support", None) is not None
        self.encoding = str(server.workspace.position_encoding or "utf-16")
        self.reason = ""  # what the model said before its current tool calls (the edits' description)

    def note_reason(self, text: str) -> None:
        """The model's stated reason for the tool calls it is about to make (shown with their edits)."""
        self.reason = " ".join(text.split())[:500]

    def buffer_text(self, path: Path) -> str | None:
        """The open buffer's text (None when closed), without touching the read versions."""
        buffer = self._on_loop(lambda: self._buffer(path))
        return buffer.text if buffer is not None else None

    # -- reading ---------------------------------------------------------------------------
    def read(self, path: Path) -> Snapshot:
        buffer = self._on_loop(lambda: self._buffer(path))
        if buffer is None:
            self._read_versions.pop(path, None)
            return self.disk.read(path)  # never cached: an external change is seen at once
        self._read_versions[path] = buffer.version
        return Snapshot(text=buffer.text, bom=_disk_has_bom(path), version=buffer.version,
                        disk=self.disk.version(path))

    # -- writing ---------------------------------------------------------------------------
    def write(self, path: Path, text: str, *, bom: bool = False, label: str = "",
              expect: str | None = None) -> None:
        if not self.apply_edit:
            self._confirm_disk_change(label, path)
            self.disk.write(path, text, bom=bom, expect=expect)
            return
        buffer = self._on_loop(lambda: self._buffer(path))
        if buffer is not None:
            checked = self._write_buffer(path, buffer, text, label, bom, expect)
        elif path.exists():
            old = self.disk.read(path)
            checked = old.disk
            if expect is not None and checked != expect:
                raise StaleWrite(f"{path.name} changed on disk since it was read.")
            self._write_closed(path, old.text, text, label)
        else:
            checked = NO_FILE
            if expect is not None and expect != NO_FILE:
                raise StaleWrite(f"{path.name} was deleted since it was read.")
            if self.document_changes and "create" in self.resource_ops:
                uri = from_fs_path(str(path)) or path.as_uri()
                create = types.CreateFile(uri=uri, options=types.CreateFileOptions(ignore_if_exists=True),
                                          annotation_id=self._annotation_id())
                self._apply([create, self._text_edit(uri, None, "", text)], label, path)
                # The editor creates the file itself: empty, or already holding the text.
                created = self.disk.version(path)
                ours = (BOM if bom else b"") + text.encode("utf-8", "surrogatepass")
                if created in (bytes_version(b""), bytes_version(ours)):
                    checked = created
            else:
                self._confirm_disk_change(label, path)  # the editor has no say in a file it cannot create
        # Without file-creation support the editor has no buffer to update: the disk is the truth.
        # The disk must still be what was checked before the round trip to the editor.
        try:
            self.disk.write(path, text, bom=bom, expect=checked)
        except StaleWrite:
            raise StaleWrite(
                f"{self._rel(path)} changed on disk while the editor applied the edit: the editor has the edit "
                f"but the file on disk was not written; ask the user to save or reload it, then read it "
                f"again with read_file.", complete=True) from None

    def _write_buffer(self, path: Path, buffer: OpenBuffer, text: str, label: str, bom: bool,
                      expect: str | None) -> str:
        """Send the edit of an open buffer; returns the disk version checked just before it."""
        read_version = self._read_versions.get(path, buffer.version)
        if buffer.version != read_version:
            raise ToolError(
                f"{self._rel(path)} changed in the editor since you last read it (the user is typing); "
                f"read it again with read_file and redo your edit."
            )
        checked = self.disk.version(path)
        # The disk may only have changed into the buffer's own text (the user saved it).
        saved = bytes_version((BOM if bom else b"") + buffer.text.encode("utf-8", "surrogatepass"))
        if expect is not None and checked not in (expect, saved):
            raise StaleWrite(f"{path.name} changed on disk since it was read.")
        if text == buffer.text:
            return checked
        self._apply([self._text_edit(buffer.uri, read_version, buffer.text, text)], label, path)
        synced = self._wait_for_buffer(path, text)
        self._read_versions[path] = synced.version if synced is not None else read_version
        return checked

    def _write_closed(self, path: Path, old: str, text: str, label: str) -> None:
        if old == text:
            return
        uri = from_fs_path(str(path)) or path.as_uri()
        self._apply([self._text_edit(uri, None, old, text)], label, path)

    def delete(self, path: Path, *, label: str = "") -> None:
        if self.apply_edit and self.document_changes and "delete" in self.resource_ops:
            uri = from_fs_path(str(path)) or path.as_uri()
            self._apply([types.DeleteFile(uri=uri, options=types.DeleteFileOptions(ignore_if_not_exists=True),
                                          annotation_id=self._annotation_id())], label, path)
            if not os.path.lexists(path):
                return  # the editor deleted it
        else:
            self._confirm_disk_change(label, path)
        self.disk.delete(path)

    def rename(self, source: Path, target: Path, *, label: str = "") -> None:
        if self.apply_edit and self.document_changes and "rename" in self.resource_ops:
            old_uri = from_fs_path(str(source)) or source.as_uri()
            new_uri = from_fs_path(str(target)) or target.as_uri()
            self._apply([types.RenameFile(old_uri=old_uri, new_uri=new_uri,
                                          options=types.RenameFileOptions(overwrite=True),
                                          annotation_id=self._annotation_id())], label, source)
            if not os.path.lexists(source) and os.path.lexists(target):
                return  # the editor moved it
        else:
            self._confirm_disk_change(label, source)
        self.disk.rename(source, target)

    # -- edits -----------------------------------------------------------------------------
    def _annotation_id(self) -> str | None:
        return c.EDIT_ANNOTATION_ID if self.annotations else None

    def _text_edit(self, uri: str, version: int | None, old: str, new: str) -> types.TextDocumentEdit:
        change = minimal_replacement(old, new)
        assert change is not None  # callers return early when nothing changes
        start = types.Position(*position_at(old, change.start, self.encoding))
        end = types.Position(*position_at(old, change.end, self.encoding))
        rng = types.Range(start=start, end=end)
        annotation = self._annotation_id()
        edit: types.TextEdit | types.AnnotatedTextEdit = (
            types.AnnotatedTextEdit(range=rng, new_text=change.text, annotation_id=annotation)
            if annotation else types.TextEdit(range=rng, new_text=change.text)
        )
        return types.TextDocumentEdit(
            text_document=types.OptionalVersionedTextDocumentIdentifier(uri=uri, version=version), edits=[edit])

    def _workspace_edit(self, changes: list[Any], label: str) -> types.WorkspaceEdit:
        annotations = None
        if self.annotations:
            # Label: the tool call; description: why the model made it (VS Code shows both in its preview).
            annotations = {c.EDIT_ANNOTATION_ID: types.ChangeAnnotation(
                label=label or self.options.label, needs_confirmation=self.options.confirm,
                description=self.reason or None)}
        if self.document_changes:
            return types.WorkspaceEdit(document_changes=changes, change_annotations=annotations)
        # Clients without documentChanges (e.g. Neovim's advertised set) take plain per-URI edits.
        plain: dict[str, list[types.TextEdit]] = {}
        for change in changes:
            if isinstance(change, types.TextDocumentEdit):
                plain.setdefault(change.text_document.uri, []).extend(
                    types.TextEdit(range=e.range, new_text=e.new_text) for e in change.edits)
        return types.WorkspaceEdit(changes=plain)

    def _apply(self, changes: list[Any], label: str, path: Path) -> None:
        title = f"{self.options.label}: {label}" if label else self.options.label
        params = types.ApplyWorkspaceEditParams(edit=self._workspace_edit(changes, label), label=title)
        if self._on_loop_thread():
            raise ToolError("Edits cannot be applied from the editor thread; retry the tool call.")
        if self.options.confirm and not self.annotations:
            self._confirm(title, path)
        future = asyncio.run_coroutine_threadsafe(self.server.workspace_apply_edit_async(params), self.loop)
        deadline = time.monotonic() + (CONFIRM_TIMEOUT_S if self.options.confirm else APPLY_TIMEOUT_S)
        rel = self._rel(path)
        while True:
            try:
                result = future.result(timeout=0.05)
                break
            except concurrent.futures.TimeoutError:
                if self.closed.is_set() or time.monotonic() > deadline:
                    future.cancel()
                    raise ToolError(
                        f"The editor did not answer the edit to {rel} in time; nothing was written to disk, "
                        f"so check the buffer and retry if the edit is still wanted."
                    ) from None
            except Exception:
                raise ToolError(
                    f"The editor rejected the edit to {rel} with an error; nothing was written, "
                    f"so read the file again and retry."
                ) from None
        if not result.applied:
            reason = f" ({result.failure_reason})" if result.failure_reason else ""
            raise ToolError(
                f"The editor refused the edit to {rel}{reason}; nothing was written, so read the file "
                f"again and ask before retrying."
            )

    def _confirm_disk_change(self, label: str, path: Path) -> None:
        """With ``confirmEdits``, a change the editor cannot be sent (no resource operations) is asked about."""
        if self.options.confirm:
            self._confirm(f"{self.options.label}: {label}" if label else self.options.label, path)

    def _confirm(self, title: str, path: Path) -> None:
        """Ask before an edit when the client cannot preview annotated edits (Neovim): one prompt per batch."""
        rel = self._rel(path)
        why = f"\n{self.reason}" if self.reason else ""
        params = types.ShowMessageRequestParams(
            type=types.MessageType.Info, message=f"{title}{why}\nApply this change to {rel}?",
            actions=[types.MessageActionItem(title=APPLY_ACTION), types.MessageActionItem(title=REJECT_ACTION)])
        future = asyncio.run_coroutine_threadsafe(self.server.window_show_message_request_async(params), self.loop)
        deadline = time.monotonic() + CONFIRM_TIMEOUT_S
        answer = None
        while True:
            try:
                answer = future.result(timeout=0.05)
                break
            except concurrent.futures.TimeoutError:
                if self.closed.is_set() or time.monotonic() > deadline:
                    future.cancel()
                    break
            except Exception:
                break
        if answer is None or answer.title != APPLY_ACTION:
            raise ToolError(f"The user rejected the edit to {rel}; nothing was written. Do not retry it: say what "
                            f"you wanted to change and ask the user how to go on.")

    def _wait_for_buffer(self, path: Path, text: str) -> OpenBuffer | None:
        """Wait briefly for the editor's didChange that follows an applied edit."""
        deadline = time.monotonic() + BUFFER_SYNC_TIMEOUT_S
        while time.monotonic() < deadline and not self.closed.is_set():
            buffer = self._on_loop(lambda: self._buffer(path))
            if buffer is None or buffer.text == text:
                return buffer
            time.sleep(0.01)
        return None

    # -- loop plumbing ---------------------------------------------------------------------
    def _buffer(self, path: Path) -> OpenBuffer | None:
        """The open buffer for ``path`` (matched by real path), read on the loop thread."""
        wanted = os.path.realpath(path)
        for uri, doc in self.server.workspace.text_documents.items():
            if doc.version is None:
                continue
            fs_path = to_fs_path(uri)
            if fs_path is not None and os.path.realpath(fs_path) == wanted:
                return OpenBuffer(doc.uri, doc.source, doc.version)
        return None

    def _on_loop_thread(self) -> bool:
        try:
            return asyncio.get_running_loop() is self.loop
        except RuntimeError:
            return False

    def _on_loop(self, fn: Callable[[], T]) -> T:
        if self._on_loop_thread():
            return fn()
        result: concurrent.futures.Future[T] = concurrent.futures.Future()

        def run() -> None:
            try:
                result.set_result(fn())
            except BaseException as exc:
                result.set_exception(exc)

        try:
            self.loop.call_soon_threadsafe(run)
            return result.result(timeout=10)
        except (RuntimeError, concurrent.futures.TimeoutError):
            raise ToolError("The editor connection is not responding; retry the tool call.") from None

    def _rel(self, path: Path) -> str:
        try:
            return str(Path(os.path.realpath(path)).relative_to(self.root))
        except ValueError:
            return path.name


def _disk_has_bom(path: Path) -> bool:
    """Whether the file behind an open buffer starts with a BOM (editors hide it in the buffer)."""
    try:
        with open_regular(path) as (fd, _info):
            return os.read(fd, 3) == BOM
    except (ToolError, OSError):
        return False
