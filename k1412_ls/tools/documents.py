"""The DocumentStore port: where file text is read from and written to.

The CLI uses :class:`DiskDocumentStore`; the language server implements the
same protocol over open editor buffers and ``workspace/applyEdit``.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from k1412_ls.tools.registry import ToolError


@dataclass(frozen=True)
class Snapshot:
    """The current text of a document. ``version`` is the editor buffer version (None on disk)."""

    text: str
    bom: bool = False
    version: int | None = None

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.text.encode("utf-8", "surrogatepass")).hexdigest()


class DocumentStore(Protocol):
    """Reads and writes whole documents; every method raises ToolError on failure."""

    def read(self, path: Path) -> Snapshot: ...

    def write(self, path: Path, text: str, *, bom: bool = False, label: str = "") -> None: ...

    def delete(self, path: Path, *, label: str = "") -> None: ...

    def rename(self, source: Path, target: Path, *, label: str = "") -> None: ...


class DiskDocumentStore:
    """Documents are files on disk; writes are atomic and keep the file mode."""

    def read(self, path: Path) -> Snapshot:
        try:
            data = path.read_bytes()
        except FileNotFoundError:
            raise ToolError(f"{path.name} does not exist; check the path with list_files.") from None
        except IsADirectoryError:
            raise ToolError(f"{path.name} is a directory; use list_files to see its contents.") from None
        bom = data.startswith(b"\xef\xbb\xbf")
        try:
            text = data[3 if bom else 0:].decode("utf-8")
        except UnicodeDecodeError:
            raise ToolError(f"{path.name} is not UTF-8 text; it cannot be edited as text.") from None
        return Snapshot(text=text, bom=bom)

    def write(self, path: Path, text: str, *, bom: bool = False, label: str = "") -> None:
        data = (b"\xef\xbb\xbf" if bom else b"") + text.encode("utf-8")
        atomic_write_bytes(path, data)

    def delete(self, path: Path, *, label: str = "") -> None:
        try:
            path.unlink()
        except FileNotFoundError:
            raise ToolError(f"{path.name} does not exist; nothing was deleted.") from None

    def rename(self, source: Path, target: Path, *, label: str = "") -> None:
        target.parent.mkdir(parents=True, exist_ok=True)
        os.replace(source, target)


def atomic_write_bytes(path: Path, data: bytes) -> None:
    """Write via a temp file in the same directory, fsync, then rename; keep an existing mode."""
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        mode: int | None = os.stat(path).st_mode & 0o7777
    except FileNotFoundError:
        mode = None
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".k1412tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        if mode is None:
            umask = os.umask(0)
            os.umask(umask)
            mode = 0o666 & ~umask
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise
