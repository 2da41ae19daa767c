"""The DocumentStore port: where file text is read from and written to.

The CLI uses :class:`DiskDocumentStore`; the language server implements the
same protocol over open editor buffers and ``workspace/applyEdit``.

Disk safety rules, in one place:

- reads open only regular files, never ``/proc``, ``/sys`` or ``/dev``, and
  open with ``O_NONBLOCK`` so a FIFO swapped in after the check cannot hang;
- writes walk to the parent directory one component at a time with
  ``O_NOFOLLOW`` (so a directory swapped for a symlink after the path was
  checked is refused, not followed), write a temp file in that directory,
  fsync it and rename it over the target relative to the same directory fd;
  an existing file's mode is kept; a crash or a full disk leaves the old
  content, never a truncated file;
- hard-linked files (``st_nlink > 1``) are refused: writing in place would
  also change the other links (possibly outside the workspace) and renaming
  would silently split them.
"""

from __future__ import annotations

import errno
import hashlib
import os
import secrets
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from k1412_ls.tools.registry import ToolError

BOM = b"\xef\xbb\xbf"
# Largest file loaded whole as a document; read_file streams windows of bigger ones.
MAX_DOCUMENT_BYTES = 16 * 1024 * 1024
SPECIAL_ROOTS = ("/proc", "/sys", "/dev")


class NotTextError(ToolError):
    """The file exists but is binary or not UTF-8, so it cannot be handled as text."""


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


def describe_os_error(exc: OSError, name: str, doing: str) -> str:
    """One sentence for an OS error while ``doing`` something to ``name``."""
    code = exc.errno
    if code in (errno.ENOSPC, errno.EDQUOT):
        return f"The disk is full while {doing} {name}; free some space and try again."
    if code in (errno.EACCES, errno.EPERM):
        return f"Permission denied while {doing} {name}; choose a file you are allowed to change."
    if code == errno.EROFS:
        return f"The filesystem is read-only while {doing} {name}; write somewhere writable."
    if code in (errno.ELOOP, errno.ENOTDIR):
        return (
            f"A directory on the way to {name} is a symlink or not a directory (it may have changed "
            f"while {doing} it); check the path with stat_path and try again."
        )
    if code == errno.ENAMETOOLONG:
        return f"The name {name} is too long; use a shorter path."
    if code == errno.EISDIR:
        return f"{name} is a directory; use list_files to see its contents."
    if code == errno.ENOENT:
        return f"{name} does not exist; check the path with list_files."
    return f"Could not finish {doing} {name} ({errno.errorcode.get(code or 0, 'OS error')}); check the path and try again."


def refuse_special(path: Path) -> None:
    """Refuse kernel and device trees outright: their files lie about their size or never end."""
    text = str(path)
    for root in SPECIAL_ROOTS:
        if text == root or text.startswith(root + "/"):
            raise ToolError(f"{path} is a kernel or device file; read regular workspace files only.")


def file_kind(mode: int) -> str:
    """A short word for the file type in ``mode``."""
    if stat.S_ISREG(mode):
        return "file"
    if stat.S_ISDIR(mode):
        return "directory"
    if stat.S_ISLNK(mode):
        return "symlink"
    if stat.S_ISFIFO(mode):
        return "fifo"
    if stat.S_ISSOCK(mode):
        return "socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "device"
    return "other"


@contextmanager
def open_regular(path: Path) -> Iterator[tuple[int, os.stat_result]]:
    """Open ``path`` read-only if it is a regular file; never blocks on a FIFO or device."""
    refuse_special(path)
    try:
        before = os.stat(path)
    except OSError as exc:
        raise ToolError(describe_os_error(exc, path.name, "reading")) from None
    if not stat.S_ISREG(before.st_mode):
        kind = file_kind(before.st_mode)
        if kind == "directory":
            raise ToolError(f"{path.name} is a directory; use list_files to see its contents.")
        raise ToolError(f"{path.name} is a {kind}, not a regular file; read regular files only.")
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError as exc:
        raise ToolError(describe_os_error(exc, path.name, "reading")) from None
    try:
        after = os.fstat(fd)
        # The path may have been swapped between stat and open: trust only the open file.
        if not stat.S_ISREG(after.st_mode):
            raise ToolError(f"{path.name} changed into a {file_kind(after.st_mode)}; read regular files only.")
        yield fd, after
    finally:
        os.close(fd)


def read_fd(fd: int, limit: int) -> bytes:
    """Read at most ``limit`` bytes from ``fd``."""
    chunks: list[bytes] = []
    remaining = limit
    while remaining > 0:
        chunk = os.read(fd, min(remaining, 1 << 20))
        if not chunk:
            break
        chunks.append(chunk)
        remaining -= len(chunk)
    return b"".join(chunks)


def decode_text(data: bytes, name: str) -> tuple[str, bool]:
    """Decode file bytes as UTF-8 text (BOM noted) or raise NotTextError."""
    bom = data.startswith(BOM)
    body = data[3:] if bom else data
    if b"\x00" in body:
        raise NotTextError(f"{name} is a binary file; it cannot be read or edited as text.")
    try:
        return body.decode("utf-8"), bom
    except UnicodeDecodeError:
        raise NotTextError(f"{name} is not valid UTF-8 text; it cannot be read or edited as text.") from None


class DiskDocumentStore:
    """Documents are files on disk; writes are atomic and keep the file mode.

    ``root`` (optional) is the trusted directory where the write-time walk
    starts; without it the walk starts at ``/``, so paths must be real paths
    (as :meth:`Workspace.resolve` returns them).
    """

    def __init__(self, root: Path | str | None = None) -> None:
        self.root = Path(os.path.realpath(root)) if root is not None else None

    def read(self, path: Path) -> Snapshot:
        with open_regular(path) as (fd, info):
            if info.st_size > MAX_DOCUMENT_BYTES:
                raise ToolError(
                    f"{path.name} is larger than {MAX_DOCUMENT_BYTES // (1024 * 1024)} MB; "
                    f"read it in windows with read_file or process it with run_command."
                )
            data = read_fd(fd, MAX_DOCUMENT_BYTES + 1)
        text, bom = decode_text(data, path.name)
        return Snapshot(text=text, bom=bom)

    def write(self, path: Path, text: str, *, bom: bool = False, label: str = "") -> None:
        try:
            data = (BOM if bom else b"") + text.encode("utf-8")
        except UnicodeEncodeError:
            raise ToolError(f"The text for {path.name} is not encodable as UTF-8; remove lone surrogates.") from None
        atomic_write_bytes(path, data, root=self.root)

    def delete(self, path: Path, *, label: str = "") -> None:
        with open_parent(path, root=self.root, create=False) as dir_fd:
            try:
                info = os.stat(path.name, dir_fd=dir_fd, follow_symlinks=False)
                if stat.S_ISDIR(info.st_mode):
                    raise ToolError(f"{path.name} is a directory; file tools delete files only.")
                os.unlink(path.name, dir_fd=dir_fd)
                os.fsync(dir_fd)
            except FileNotFoundError:
                raise ToolError(f"{path.name} does not exist; nothing was deleted.") from None
            except OSError as exc:
                raise ToolError(describe_os_error(exc, path.name, "deleting")) from None

    def rename(self, source: Path, target: Path, *, label: str = "") -> None:
        with open_parent(source, root=self.root, create=False) as src_fd, \
                open_parent(target, root=self.root, create=True) as dst_fd:
            try:
                os.replace(source.name, target.name, src_dir_fd=src_fd, dst_dir_fd=dst_fd)
                os.fsync(dst_fd)
            except OSError as exc:
                raise ToolError(describe_os_error(exc, source.name, "renaming")) from None


def _walk_start(path: Path, root: Path | None) -> tuple[str, tuple[str, ...]]:
    """The trusted directory to open normally and the components to walk below it."""
    parent = Path(os.path.normpath(path.parent))
    if root is not None:
        if not parent.is_relative_to(root):
            raise ToolError(f"{path} is outside the workspace; use a path inside {root}.")
        return str(root), parent.relative_to(root).parts
    return "/", parent.parts[1:]


@contextmanager
def open_parent(path: Path, *, root: Path | None = None, create: bool = True) -> Iterator[int]:
    """Open ``path``'s parent directory without following any symlink below the trusted start.

    This is the write-time re-check: ``path`` was confined when it was
    resolved, and if any directory on the way has since become a symlink the
    walk fails with ELOOP/ENOTDIR instead of leaving the workspace. Missing
    directories are created one at a time (``create``), relative to their
    already-verified parent.
    """
    start, parts = _walk_start(path, root)
    flags = os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC
    try:
        fd = os.open(start, flags)
    except OSError as exc:
        raise ToolError(describe_os_error(exc, start, "opening")) from None
    try:
        for part in parts:
            try:
                next_fd = os.open(part, flags | os.O_NOFOLLOW, dir_fd=fd)
            except FileNotFoundError:
                if not create:
                    raise ToolError(f"The directory of {path.name} does not exist; check the path.") from None
                try:
                    os.mkdir(part, 0o777, dir_fd=fd)
                except FileExistsError:
                    pass  # created concurrently; the O_NOFOLLOW open below still verifies it
                next_fd = os.open(part, flags | os.O_NOFOLLOW, dir_fd=fd)
            os.close(fd)
            fd = next_fd
    except ToolError:
        os.close(fd)
        raise
    except OSError as exc:
        os.close(fd)
        raise ToolError(describe_os_error(exc, path.name, "writing")) from None
    try:
        yield fd
    finally:
        os.close(fd)


def _current_umask() -> int:
    # os.umask() can only be read by setting it, which races with other threads; ask the kernel.
    try:
        with open("/proc/self/status", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError):
        pass
    return 0o022


def atomic_write_bytes(path: Path, data: bytes, *, root: Path | None = None) -> None:
    """Replace ``path`` with ``data`` atomically; keep an existing file's mode.

    Refuses directories, special files and hard-linked files. On any failure
    the old file is untouched and the temp file is removed; errors are
    ToolErrors with one sentence.
    """
    name = path.name
    with open_parent(path, root=root, create=True) as dir_fd:
        try:
            existing: os.stat_result | None = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
        except FileNotFoundError:
            existing = None
        except OSError as exc:
            raise ToolError(describe_os_error(exc, name, "writing")) from None
        if existing is not None:
            if stat.S_ISDIR(existing.st_mode):
                raise ToolError(f"{name} is a directory; write to a file path inside it instead.")
            if stat.S_ISLNK(existing.st_mode):
                raise ToolError(f"{name} became a symlink while writing; check it with stat_path and retry.")
            if not stat.S_ISREG(existing.st_mode):
                raise ToolError(f"{name} is a {file_kind(existing.st_mode)}, not a regular file; K1412 does not write it.")
            if existing.st_nlink > 1:
                raise ToolError(
                    f"{name} has {existing.st_nlink} hard links and K1412 does not write hard-linked files; "
                    f"break the link (copy the file to a new name and move it back) and retry."
                )
        mode = (existing.st_mode & 0o7777) if existing is not None else (0o666 & ~_current_umask())
        tmp = f".k1412-{secrets.token_hex(6)}.tmp"
        try:
            # 0600 while the data is incomplete; the final mode is set before the rename.
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600,
                         dir_fd=dir_fd)
        except OSError as exc:
            raise ToolError(describe_os_error(exc, name, "writing")) from None
        try:
            try:
                view = memoryview(data)
                while view:
                    written = os.write(fd, view)
                    view = view[written:]
                os.fchmod(fd, mode)
                os.fsync(fd)
            finally:
                os.close(fd)
            os.replace(tmp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
        except BaseException as exc:
            try:
                os.unlink(tmp, dir_fd=dir_fd)
            except OSError:
                pass
            if isinstance(exc, OSError):
                raise ToolError(describe_os_error(exc, name, "writing")) from None
            raise
        try:
            os.fsync(dir_fd)  # make the rename itself durable
        except OSError:
            pass
