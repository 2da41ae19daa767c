"""The ACP client as a DocumentStore: ``fs/read_text_file`` and ``fs/write_text_file`` where the client offers them.

With them, what the agent reads and writes is the client's buffer (unsaved typing included), as with
``workspace/applyEdit`` in the language server; without them, the disk. The guarantees are the disk
store's and the editor store's: every read also reads the disk (size, binary and symlink checks, the
disk version a write must still find); a write re-reads the client's text first and refuses when it
changed since the agent read it (the user typed), refuses when the disk changed since (unless into the
buffer's own text: the user saved), and after the client took the text, makes the disk hold it only if
the disk is still what was checked before the round trip. The run holds the workspace lock throughout,
so another K1412 process cannot write in between. Deletes and renames (by commands) go to the disk:
ACP has no methods for them. Tools call this from worker threads; requests go out on the event loop.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import os
import threading
from collections.abc import Coroutine
from pathlib import Path
from typing import TYPE_CHECKING, Any

from k1412_ls.tools.errors import ToolError
from k1412_ls.tools.files.documents import (
    BOM,
    NO_FILE,
    DiskDocumentStore,
    Snapshot,
    StaleWrite,
    bytes_version,
)

if TYPE_CHECKING:
    from acp.interfaces import Client

    from k1412_ls.acp.capabilities import ClientState
    from k1412_ls.acp.updates import SessionReporter

log = logging.getLogger("k1412.acp")

ANSWER_TIMEOUT_S = 30.0
_POLL_S = 0.05


class ClientDocumentStore:
    """DocumentStore over the client's text files (where offered) and the disk."""

    def __init__(self, conn: Client, loop: asyncio.AbstractEventLoop, session_id: str, root: Path,
                 client: ClientState, closed: threading.Event, reporter: SessionReporter | None = None) -> None:
        self.conn = conn
        self.loop = loop
        self.session_id = session_id
        self.root = Path(os.path.realpath(root))
        self.client = client
        self.closed = closed
        self.reporter = reporter
        self.disk = DiskDocumentStore(self.root)
        self._read_texts: dict[Path, str] = {}  # what the agent last read of each file through the client

    # -- reading ---------------------------------------------------------------------------
    def read(self, path: Path) -> Snapshot:
        snapshot = self.disk.read(path)  # size, binary and symlink checks; the disk version a write must find
        text = self._client_text(path)
        if text is None:
            self._read_texts.pop(path, None)
            return snapshot
        self._read_texts[path] = text
        return Snapshot(text=text, bom=snapshot.bom, disk=snapshot.disk)

    def buffer_text(self, path: Path) -> str | None:
        """The client's text of an existing file (undo keeps it as the state before the run's write)."""
        if not self.client.read_text_file or not os.path.isfile(path):
            return None
        return self._client_text(path)

    def _client_text(self, path: Path) -> str | None:
        if not self.client.read_text_file:
            return None
        try:
            answer = self._ask(self.conn.read_text_file(session_id=self.session_id, path=str(path)), path)
        except ToolError:
            raise
        except Exception as exc:  # the client cannot read it: the disk is the truth
            log.info("the client did not read %s (%s); using the disk", self._rel(path), type(exc).__name__)
            return None
        return str(answer.content)

    # -- writing ---------------------------------------------------------------------------
    def write(self, path: Path, text: str, *, bom: bool = False, label: str = "",
              expect: str | None = None) -> None:
        old = self._text_before(path)
        if not self.client.write_text_file:
            self.disk.write(path, text, bom=bom, expect=expect)
            self._written(path, old, text)
            return
        if os.path.lexists(path):
            checked = self.disk.version(path)
            current = self._client_text(path)
            read = self._read_texts.get(path)
            if read is not None and current is not None and current != read:
                raise ToolError(f"{self._rel(path)} changed in the editor since you last read it (the user is "
                                f"typing); read it again with read_file and redo your edit.")
            saved = bytes_version((BOM if bom else b"") + read.encode("utf-8", "surrogatepass")) \
                if read is not None else None
            if expect is not None and checked not in (expect, saved):
                raise StaleWrite(f"{path.name} changed on disk since it was read.")
            unchanged = current is not None and current == text
            old = current if current is not None else old  # the diff is against what the user sees
        else:
            checked = NO_FILE
            if expect is not None and expect != NO_FILE:
                raise StaleWrite(f"{path.name} was deleted since it was read.")
            unchanged = False
        if not unchanged:
            try:
                self._ask(self.conn.write_text_file(session_id=self.session_id, path=str(path), content=text), path)
            except ToolError:
                raise
            except Exception:
                raise ToolError(f"The client refused the write to {self._rel(path)}; nothing was written, so read "
                                f"the file again and ask before retrying.") from None
        self._persist(path, text, bom, checked)
        self._read_texts[path] = text
        self._written(path, old, text)

    def _persist(self, path: Path, text: str, bom: bool, checked: str) -> None:
        """Make the disk hold ``text``: the client may have saved it, or kept it in its buffer only."""
        ours = bytes_version((BOM if bom else b"") + text.encode("utf-8", "surrogatepass"))
        after = self.disk.version(path)
        if after == ours:
            return
        without_bom = bytes_version(text.encode("utf-8", "surrogatepass"))
        if after in (checked, without_bom) or (checked == NO_FILE and after == bytes_version(b"")):
            try:
                self.disk.write(path, text, bom=bom, expect=after)
                return
            except StaleWrite:
                pass
        raise StaleWrite(
            f"{self._rel(path)} changed on disk while the client applied the edit: the client has the edit but "
            f"the file on disk was not written; ask the user to save or reload it, then read it again with "
            f"read_file.", complete=True)

    def _text_before(self, path: Path) -> str | None:
        try:
            return self.disk.read(path).text if os.path.isfile(path) else None
        except ToolError:
            return None

    def _written(self, path: Path, old: str | None, new: str) -> None:
        if self.reporter is not None:
            self.reporter.record_diff(path, old, new)

    def delete(self, path: Path, *, label: str = "") -> None:
        self.disk.delete(path)
        self._read_texts.pop(path, None)

    def rename(self, source: Path, target: Path, *, label: str = "") -> None:
        self.disk.rename(source, target)
        self._read_texts.pop(source, None)
        self._read_texts.pop(target, None)

    # -- loop plumbing ---------------------------------------------------------------------
    def _ask(self, request: Coroutine[Any, Any, Any], path: Path) -> Any:
        """Send ``request`` on the loop and wait for its answer (bounded; gives up when the run ends)."""
        future = asyncio.run_coroutine_threadsafe(request, self.loop)
        waited = 0.0
        while True:
            try:
                return future.result(timeout=_POLL_S)
            except concurrent.futures.TimeoutError:
                waited += _POLL_S
                if self.closed.is_set() or waited > ANSWER_TIMEOUT_S:
                    future.cancel()
                    raise ToolError(f"The client did not answer about {self._rel(path)} in time; nothing was "
                                    f"written, so retry if the change is still wanted.") from None

    def _rel(self, path: Path) -> str:
        try:
            return str(Path(os.path.realpath(path)).relative_to(self.root))
        except ValueError:
            return path.name
