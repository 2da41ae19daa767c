"""An editor-like pytest-lsp client for end-to-end tests of the real ``k1412 lsp`` process.

* ``CLIENTS``: recorded VS Code and Neovim capability sets (pytest-lsp ships them);
  VS Code negotiates UTF-16 positions, Neovim 0.11 UTF-8.
* :class:`Editor`: the client's own buffers. It applies ``workspace/applyEdit``
  like an editor does (pygls' independent position code, version checks,
  ``didChange`` sent before the reply, files created / deleted / renamed on
  disk), or refuses edits when told to.
* :func:`lsp_session`: a scripted model server, a config, a workspace and the
  server process, initialized and shut down around a test.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import sys
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Union

import pygls.protocol
import pytest_lsp
from lsprotocol import types
from pygls.workspace import TextDocument
from pygls.workspace.position_codec import PositionCodec
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities

from tests.conftest import write_config
from tests.support.scripted_server import ScriptedServer

CLIENTS = {
    "vscode": "visual-studio-code@v1.65.2",
    "neovim": "neovim@v0.11.0",
}
CLIENT_NAMES = list(CLIENTS)
SERVER_COMMAND = [sys.executable, "-m", "k1412_ls.cli", "lsp"]
TIMEOUT = 30.0


def _converter() -> Any:
    # lsprotocol 2025.0.0 turns a CodeAction with a command into a Command on the client side.
    conv = pygls.protocol.default_converter()
    conv.register_structure_hook(
        Union[types.Command, types.CodeAction],  # noqa: UP007 - the hook is keyed by this exact typing.Union
        lambda obj, _: conv.structure(obj, types.Command if isinstance(obj.get("command"), str)
                                      else types.CodeAction),
    )
    return conv


@dataclass
class Editor:
    """The client's buffers and its answer to ``workspace/applyEdit``."""

    client: LanguageClient
    encoding: str = "utf-16"
    docs: dict[str, TextDocument] = field(default_factory=dict)
    refuse: bool = False
    edits: list[types.ApplyWorkspaceEditParams] = field(default_factory=list)
    # Runs first on every applyEdit: e.g. another program writing the file during the round trip.
    before_apply: Any = None

    def open(self, path: Path, text: str | None = None, version: int = 1) -> str:
        """``didOpen`` ``path`` with ``text`` (default: its content on disk); returns the URI."""
        uri = path.as_uri()
        source = path.read_bytes().decode("utf-8") if text is None else text  # keeps CRLF, like editors
        self.docs[uri] = TextDocument(uri, source, version, position_codec=PositionCodec(self.encoding))
        self.client.text_document_did_open(types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(uri=uri, language_id="python", version=version, text=source)))
        return uri

    def text(self, uri: str) -> str:
        return self.docs[uri].source

    def version(self, uri: str) -> int | None:
        return self.docs[uri].version

    def type(self, uri: str, rng: types.Range, text: str) -> None:
        """The user edits the buffer: change it and send ``didChange``."""
        self._change(uri, [types.TextDocumentContentChangePartial(range=rng, text=text)])

    def type_at_end(self, uri: str, text: str) -> None:
        doc = self.docs[uri]
        end = doc.client_position_at_offset(len(doc.source))
        self.type(uri, types.Range(start=end, end=end), text)

    def _change(self, uri: str, changes: list[types.TextDocumentContentChangePartial]) -> None:
        doc = self.docs[uri]
        for change in changes:
            doc.apply_change(change)
        doc.version = (doc.version or 0) + 1
        self.client.text_document_did_change(types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=doc.version),
            content_changes=changes))

    def apply(self, params: types.ApplyWorkspaceEditParams) -> types.ApplyWorkspaceEditResult:
        self.edits.append(params)
        if self.before_apply is not None:
            self.before_apply(params)
        if self.refuse:
            return types.ApplyWorkspaceEditResult(applied=False, failure_reason="the user declined")
        edit = params.edit
        changes: list[Any] = list(edit.document_changes or [])
        for uri, text_edits in (edit.changes or {}).items():
            changes.append(types.TextDocumentEdit(
                text_document=types.OptionalVersionedTextDocumentIdentifier(uri=uri, version=None),
                edits=list(text_edits)))
        for change in changes:  # transactional: check every version before changing anything
            if isinstance(change, types.TextDocumentEdit) and change.text_document.version is not None:
                doc = self.docs.get(change.text_document.uri)
                if doc is None or doc.version != change.text_document.version:
                    return types.ApplyWorkspaceEditResult(applied=False, failure_reason="stale document version")
        for change in changes:
            self._apply_one(change)
        return types.ApplyWorkspaceEditResult(applied=True)

    def _apply_one(self, change: Any) -> None:
        if isinstance(change, types.CreateFile):
            path = _path(change.uri)
            path.parent.mkdir(parents=True, exist_ok=True)
            if not path.exists():
                path.write_bytes(b"")
        elif isinstance(change, types.DeleteFile):
            with contextlib.suppress(FileNotFoundError):
                _path(change.uri).unlink()
        elif isinstance(change, types.RenameFile):
            target = _path(change.new_uri)
            target.parent.mkdir(parents=True, exist_ok=True)
            os.replace(_path(change.old_uri), target)
            moved = self.docs.pop(change.old_uri, None)
            if moved is not None:  # the editor follows the document to its new name
                self.client.text_document_did_close(types.DidCloseTextDocumentParams(
                    text_document=types.TextDocumentIdentifier(uri=change.old_uri)))
                self.open(target, moved.source)
        elif change.text_document.uri in self.docs:
            # Apply last edit first so earlier ranges stay valid, like editors do.
            ordered = sorted(change.edits, key=lambda e: (e.range.start.line, e.range.start.character), reverse=True)
            self._change(change.text_document.uri, [
                types.TextDocumentContentChangePartial(range=e.range, text=e.new_text) for e in ordered])


def _path(uri: str) -> Path:
    from pygls.uris import to_fs_path

    return Path(to_fs_path(uri) or uri)


def make_editor_client() -> LanguageClient:
    """A pytest-lsp client with default handlers, the code-action fix and an :class:`Editor`."""
    client = LanguageClient(converter_factory=_converter)
    pytest_lsp.client.register_lsp_features(client)
    editor = Editor(client)
    client.editor = editor  # type: ignore[attr-defined]
    client.feature(types.WORKSPACE_APPLY_EDIT)(lambda params: editor.apply(params))
    client.events = []  # type: ignore[attr-defined]
    client.feature("k1412/event")(lambda params: client.events.append(params))  # type: ignore[attr-defined]
    return client


@dataclass
class Session:
    """One initialized server process and everything around it."""

    client: LanguageClient
    editor: Editor
    root: Path
    model: ScriptedServer
    config_path: Path
    init_result: types.InitializeResult

    @property
    def events(self) -> list[Any]:
        return self.client.events  # type: ignore[attr-defined,no-any-return]

    async def command(self, command: str, *arguments: Any, token: str | None = None,
                      timeout: float = TIMEOUT) -> Any:
        if token is not None:
            self.client.progress_reports.setdefault(token, [])
        params = types.ExecuteCommandParams(command=command, arguments=list(arguments), work_done_token=token)
        return await asyncio.wait_for(self.client.workspace_execute_command_async(params), timeout)

    def send_command(self, command: str, *arguments: Any, token: str | None = None,
                     msg_id: int | str | None = None) -> tuple[Any, asyncio.Future[Any]]:
        """Start a command without waiting; returns (request id, awaitable future)."""
        msg_id = msg_id if msg_id is not None else f"cmd-{uuid.uuid4().hex[:8]}"
        if token is not None:
            self.client.progress_reports.setdefault(token, [])
        params = types.ExecuteCommandParams(command=command, arguments=list(arguments), work_done_token=token)
        future = self.client.protocol.send_request(types.WORKSPACE_EXECUTE_COMMAND, params, msg_id=msg_id)
        return msg_id, asyncio.wrap_future(future)

    def uri(self, rel: str) -> str:
        return (self.root / rel).as_uri()

    def events_of(self, kind: str) -> list[Any]:
        return [event for event in self.events if event.type == kind]

    def tool_results(self) -> list[Any]:
        """Payloads of the ``tool.completed`` events so far."""
        return [event.payload for event in self.events_of("tool.completed")]


@contextlib.asynccontextmanager
async def lsp_session(tmp_path: Path, script: list[dict[str, Any]] | None = None, *, client: str = "vscode",
                      init_options: Any = None, env: dict[str, str] | None = None,
                      config_extra: str = "") -> AsyncIterator[Session]:
    """Start the real server against a scripted model; yield an initialized :class:`Session`."""
    root = tmp_path / "ws"
    root.mkdir(exist_ok=True)
    with ScriptedServer(script or []) as model:
        config_path = write_config(tmp_path / "k1412.toml", model.base_url, extra=config_extra)
        server_env = {**os.environ, "K1412_CONFIG": str(config_path), **(env or {})}
        config = ClientServerConfig(server_command=SERVER_COMMAND, client_factory=make_editor_client,
                                    server_env=server_env)
        lsp = await config.start()
        editor: Editor = lsp.editor  # type: ignore[attr-defined]
        try:
            result = await asyncio.wait_for(lsp.initialize_session(types.InitializeParams(
                capabilities=client_capabilities(CLIENTS[client]), root_uri=root.as_uri(),
                workspace_folders=[types.WorkspaceFolder(uri=root.as_uri(), name="ws")],
                initialization_options=init_options)), TIMEOUT)
            editor.encoding = str(result.capabilities.position_encoding or "utf-16")
            yield Session(lsp, editor, root, model, config_path, result)
        finally:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(lsp.shutdown_session(), 10)
            process = lsp._server
            if process is not None and process.returncode is None:
                process.kill()  # a server that ignores shutdown/exit must not hang the test run
            await lsp.stop()


async def wait_until(predicate: Any, timeout: float = 10.0, interval: float = 0.02) -> None:
    """Poll ``predicate`` until it is true; fail the test after ``timeout`` seconds."""
    deadline = asyncio.get_running_loop().time() + timeout
    while not predicate():
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError(f"condition not met within {timeout} s")
        await asyncio.sleep(interval)
