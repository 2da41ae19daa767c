"""A DocumentStore that keeps each path's pre-image before a run's first change to it.

The runtime wraps the run's store (disk or editor) in this one, so every file tool write, delete
and rename — whichever tool made it — passes through :class:`~k1412_ls.tools.undo.preimages.RunJournal`
first; the state after the change is noted whether the change succeeded or not (a failed change
leaves the path as it was, and undo then has nothing to do for it).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from k1412_ls.tools.files.documents import DocumentStore, Snapshot
from k1412_ls.tools.undo.preimages import RunJournal


class RecordingDocumentStore:
    """Forwards to ``inner``; records pre-images in ``journal`` around every change."""

    def __init__(self, inner: DocumentStore, journal: RunJournal) -> None:
        self.inner = inner
        self.journal = journal

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)  # e.g. DiskDocumentStore.version, the editor's options

    def _before(self, path: Path) -> None:
        # An editor buffer with unsaved text is what the user sees: that is the state to restore.
        peek = getattr(self.inner, "buffer_text", None)
        self.journal.before(path, text=peek(path) if peek is not None else None)

    def read(self, path: Path) -> Snapshot:
        return self.inner.read(path)

    def write(self, path: Path, text: str, *, bom: bool = False, label: str = "",
              expect: str | None = None) -> None:
        self._before(path)
        try:
            self.inner.write(path, text, bom=bom, label=label, expect=expect)
        finally:
            self.journal.after(path)

    def delete(self, path: Path, *, label: str = "") -> None:
        self._before(path)
        try:
            self.inner.delete(path, label=label)
        finally:
            self.journal.after(path)

    def rename(self, source: Path, target: Path, *, label: str = "") -> None:
        self._before(source)
        self._before(target)
        try:
            self.inner.rename(source, target, label=label)
        finally:
            self.journal.after(source)
            self.journal.after(target)
