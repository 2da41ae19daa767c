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
- a write commits only over the version it was computed from: just before
  the rename, with the directory locked (``flock``) against other K1412
  writers, the file's bytes are compared with the version the caller read
  (``expect``, a sha256 or :data:`NO_FILE`); any difference refuses the
  write with :class:`StaleWrite` and nothing is written;
- the new content is staged outside the workspace, in K1412's state
  directory (``staging/``) when it is on the same filesystem, else in the
  target's directory, as an unnamed file (``O_TMPFILE``) that gets a name
  (``.k1412-<hex>.tmp``) only for the rename; so a process killed mid-write
  leaves nothing in the workspace. Filesystems without ``O_TMPFILE`` get a
  named temp file at once. Such names are never listed, searched or read by
  the tools, and :func:`sweep_write_temps` removes leftovers when a run or the
  server starts;
- hard-linked files (``st_nlink > 1``) are refused: writing in place would
  also change the other links (possibly outside the workspace) and renaming
  would silently split them.
"""

from __future__ import annotations

import errno
import fcntl
import os
import re
import stat
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from k1412_ls.limits import LIMITS
from k1412_ls.locations import state_dir
from k1412_ls.tools.errors import ToolError
from k1412_ls.tools.files.confined import open_confined, start_walk

BOM = b"\xef\xbb\xbf"
# Largest file loaded whole as a document; read_file streams windows of bigger ones.
MAX_DOCUMENT_BYTES = LIMITS.max_document_bytes
SPECIAL_ROOTS = ("/proc", "/sys", "/dev")
# The disk version of a path where no file exists (versions are otherwise sha256 hex digests of the bytes).
NO_FILE = "no-file"
WRITE_TEMP = re.compile(r"\.k1412-[0-9a-f]{12}\.tmp")
WRITE_TEMP_GLOB = ".k1412-????????????.tmp"  # the same names as a glob (for ripgrep)
# The sweep for leftover temp files looks at this many directory entries at most.
SWEEP_MAX_ENTRIES = 50_000


class NotTextError(ToolError):
    """The file exists but is binary or not UTF-8, so it cannot be handled as text."""


class StaleWrite(ToolError):
    """The file is no longer the version a write was computed from; nothing was written.

    ``complete`` marks a message that already says what happened and what to do; otherwise callers
    replace it with their workspace-relative stale-read sentence.
    """

    def __init__(self, message: str, *, complete: bool = False) -> None:
        super().__init__(message)
        self.complete = complete


@dataclass(frozen=True)
class Snapshot:
    """The current text of a document. ``version`` is the editor buffer version (None on disk).

    ``disk`` is the version of the file on disk when the snapshot was taken (sha256 of its bytes,
    :data:`NO_FILE` if there was none, None if unknown): a write computed from this snapshot passes it
    as ``expect`` so it commits only over that same version.
    """

    text: str
    bom: bool = False
    version: int | None = None
    disk: str | None = None

    @property
    def sha256(self) -> str:
        import hashlib  # imported on use: libcrypto is ~0.6 MiB an idle language server need not hold

        return hashlib.sha256(self.text.encode("utf-8", "surrogatepass")).hexdigest()


class DocumentStore(Protocol):
    """Reads and writes whole documents; every method raises ToolError on failure."""

    def read(self, path: Path) -> Snapshot: ...

    def write(self, path: Path, text: str, *, bom: bool = False, label: str = "",
              expect: str | None = None) -> None: ...

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


def is_write_temp(name: str) -> bool:
    """Whether ``name`` is the temp file of a K1412 write (never workspace content)."""
    return WRITE_TEMP.fullmatch(name) is not None


def refuse_special(path: Path) -> None:
    """Refuse kernel and device trees outright (their files lie about their size or never end), and
    the temp files of unfinished writes."""
    text = str(path)
    for root in SPECIAL_ROOTS:
        if text == root or text.startswith(root + "/"):
            raise ToolError(f"{path} is a kernel or device file; read regular workspace files only.")
    if is_write_temp(path.name):
        raise ToolError(f"{path.name} is the temporary file of an unfinished K1412 write, not workspace content; "
                        f"read the file it was meant to replace instead.")


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
    """Open ``path`` read-only if it is a regular file; never blocks on a FIFO or device.

    The open walks from the pinned workspace root without following any
    symlink (:func:`open_confined`), so a directory swapped for a symlink after
    the path was checked cannot lead it outside.
    """
    refuse_special(path)
    try:
        fd = open_confined(path, os.O_RDONLY | os.O_NONBLOCK)
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.ENOTDIR) and os.path.lexists(path):
            raise ToolError(f"{path.name} (or a directory on its way) became a symlink after it was checked; "
                            "nothing was read, list the directory again.") from None
        raise ToolError(describe_os_error(exc, path.name, "reading")) from None
    try:
        after = os.fstat(fd)
        if not stat.S_ISREG(after.st_mode):
            kind = file_kind(after.st_mode)
            if kind == "directory":
                raise ToolError(f"{path.name} is a directory; use list_files to see its contents.")
            raise ToolError(f"{path.name} is a {kind}, not a regular file; read regular files only.")
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
        return Snapshot(text=text, bom=bom, disk=bytes_version(data))

    def write(self, path: Path, text: str, *, bom: bool = False, label: str = "",
              expect: str | None = None) -> None:
        try:
            data = (BOM if bom else b"") + text.encode("utf-8")
        except UnicodeEncodeError:
            raise ToolError(f"The text for {path.name} is not encodable as UTF-8; remove lone surrogates.") from None
        atomic_write_bytes(path, data, root=self.root, expect=expect)

    def version(self, path: Path) -> str:
        """The file's version on disk now: sha256 of its bytes, or :data:`NO_FILE`."""
        if not os.path.isdir(path.parent):
            return NO_FILE
        with open_parent(path, root=self.root, create=False) as dir_fd:
            return version_at(dir_fd, path.name)

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


def _walk_start(path: Path, root: Path | None) -> tuple[int, tuple[str, ...]]:
    """A descriptor to walk from (the pinned root when there is one) and the components below it."""
    parent = Path(os.path.normpath(path.parent))
    if root is not None and not parent.is_relative_to(root):
        raise ToolError(f"{path} is outside the workspace; use a path inside {root}.")
    try:
        fd, parts = start_walk(str(parent))
    except OSError as exc:
        raise ToolError(describe_os_error(exc, str(parent), "opening")) from None
    return fd, tuple(parts)


@contextmanager
def open_parent(path: Path, *, root: Path | None = None, create: bool = True) -> Iterator[int]:
    """Open ``path``'s parent directory without following any symlink below the trusted start.

    This is the write-time re-check: ``path`` was confined when it was
    resolved, and if any directory on the way has since become a symlink the
    walk fails with ELOOP/ENOTDIR instead of leaving the workspace. Missing
    directories are created one at a time (``create``), relative to their
    already-verified parent.
    """
    fd, parts = _walk_start(path, root)
    flags = os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC
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


def bytes_version(data: bytes) -> str:
    """The version of a file holding ``data``."""
    import hashlib

    return hashlib.sha256(data).hexdigest()


def version_at(dir_fd: int, name: str) -> str:
    """The version of ``name`` in ``dir_fd`` now; anything but a regular file gets a version no read has."""
    import hashlib

    try:
        fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, dir_fd=dir_fd)
    except FileNotFoundError:
        return NO_FILE
    except OSError as exc:
        return f"unreadable ({errno.errorcode.get(exc.errno or 0, 'error')})"
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            return f"not a regular file ({file_kind(info.st_mode)})"
        digest = hashlib.sha256()
        while chunk := os.read(fd, 1 << 20):
            digest.update(chunk)
        return digest.hexdigest()
    finally:
        os.close(fd)


@contextmanager
def locked_directory(dir_fd: int, *, wait: bool = True) -> Iterator[bool]:
    """Hold an exclusive ``flock`` on a directory: K1412 writes into it, and sweeps of it, take turns.

    Yields False (without the lock) when ``wait`` is False and another holder has it, or when the
    filesystem has no ``flock``; the commit-time comparison still guards the write then.
    """
    try:
        fcntl.flock(dir_fd, fcntl.LOCK_EX | (0 if wait else fcntl.LOCK_NB))
    except OSError:
        yield False
        return
    try:
        yield True
    finally:
        fcntl.flock(dir_fd, fcntl.LOCK_UN)


def _open_unnamed(dir_fd: int) -> int | None:
    """An unnamed file in ``dir_fd`` (``O_TMPFILE``), or None where the filesystem has none."""
    flag = getattr(os, "O_TMPFILE", 0)
    if not flag:
        return None
    try:
        return os.open(".", flag | os.O_WRONLY | os.O_CLOEXEC, 0o600, dir_fd=dir_fd)
    except OSError as exc:
        if exc.errno in (errno.EOPNOTSUPP, errno.EISDIR, errno.EINVAL, errno.ENOENT):
            return None
        raise


def _write_all(fd: int, data: bytes, mode: int, group: int | None) -> None:
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]
    if group is not None:
        try:
            os.fchown(fd, -1, group)  # what the target directory's setgid bit would have given it
        except OSError:
            pass
    os.fchmod(fd, mode)
    os.fsync(fd)


def _staged_temp(stage_fd: int, data: bytes, mode: int, group: int | None, *,
                 unnamed: bool = True) -> tuple[int, str | None]:
    """The new content, written and synced: ``(fd, None)`` for an unnamed file, else ``(fd, temp name)``."""
    fd = _open_unnamed(stage_fd) if unnamed else None
    if fd is not None:
        try:
            _write_all(fd, data, mode, group)
        except BaseException:
            os.close(fd)  # the unnamed file vanishes with its last descriptor
            raise
        return fd, None
    import secrets

    name = f".k1412-{secrets.token_hex(6)}.tmp"
    # 0600 while the data is incomplete; the final mode is set before the rename.
    fd = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600, dir_fd=stage_fd)
    try:
        _write_all(fd, data, mode, group)
    except BaseException:
        os.close(fd)
        _unlink_quietly(name, stage_fd)
        raise
    return fd, name


def _name_unnamed(fd: int, stage_fd: int) -> str | None:
    """Link an unnamed file into ``stage_fd`` under a temp name; None if this system cannot."""
    import secrets

    name = f".k1412-{secrets.token_hex(6)}.tmp"
    try:
        os.link(f"/proc/self/fd/{fd}", name, dst_dir_fd=stage_fd, follow_symlinks=True)
    except OSError as exc:
        if exc.errno in (errno.ENOENT, errno.EXDEV, errno.EPERM, errno.ENOTDIR):
            return None  # no /proc, or linking refused: write a named temp file instead
        raise
    return name


def _unlink_quietly(name: str, dir_fd: int) -> None:
    try:
        os.unlink(name, dir_fd=dir_fd)
    except OSError:
        pass


def staging_dir() -> Path:
    """Where new content is staged before it is renamed into place (K1412's state directory)."""
    return state_dir() / "staging"


def _open_staging(dir_fd: int) -> int | None:
    """The staging directory, if it is on the same filesystem as ``dir_fd`` (a rename can cross then)."""
    path = staging_dir()
    try:
        path.mkdir(mode=0o700, parents=True, exist_ok=True)
        fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        if os.fstat(fd).st_dev == os.fstat(dir_fd).st_dev:
            return fd
    except OSError:
        pass
    os.close(fd)
    return None


class _CrossDevice(Exception):
    """The staging directory is on another mount than the target after all (a bind mount)."""


def _commit(dir_fd: int, stage_fd: int, name: str, data: bytes, mode: int, group: int | None,
            expect: str | None) -> None:
    """Stage ``data`` in ``stage_fd``, compare the target with ``expect``, rename it over ``name``."""
    try:
        fd, tmp = _staged_temp(stage_fd, data, mode, group)
    except OSError as exc:
        raise ToolError(describe_os_error(exc, name, "writing")) from None
    try:
        if expect is not None and version_at(dir_fd, name) != expect:
            raise StaleWrite(f"{name} changed on disk since it was read; nothing was written.")
        if tmp is None:
            tmp = _name_unnamed(fd, stage_fd)
            if tmp is None:
                os.close(fd)
                fd = -1
                fd, tmp = _staged_temp(stage_fd, data, mode, group, unnamed=False)
        try:
            os.replace(tmp, name, src_dir_fd=stage_fd, dst_dir_fd=dir_fd)
        except OSError as exc:
            if exc.errno == errno.EXDEV and stage_fd != dir_fd:
                raise _CrossDevice from None
            raise
        tmp = None
    except OSError as exc:
        raise ToolError(describe_os_error(exc, name, "writing")) from None
    finally:
        if tmp is not None:
            _unlink_quietly(tmp, stage_fd)
        if fd >= 0:
            os.close(fd)


def atomic_write_bytes(path: Path, data: bytes, *, root: Path | None = None, expect: str | None = None) -> None:
    """Replace ``path`` with ``data`` atomically; keep an existing file's mode.

    Refuses directories, special files and hard-linked files. The content is staged outside the
    workspace (:func:`staging_dir`, when it is on the same filesystem; else in the target's
    directory) and renamed into place. With ``expect`` (a version from :func:`bytes_version`, or
    :data:`NO_FILE`) the rename happens only if the file is still that version, checked with the
    directory locked just before it; otherwise :class:`StaleWrite`. On any failure the old file is
    untouched and no temp file remains; errors are ToolErrors with one sentence.
    """
    name = path.name
    with open_parent(path, root=root, create=True) as dir_fd, locked_directory(dir_fd):
        try:
            directory = os.fstat(dir_fd)
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
        group = directory.st_gid if directory.st_mode & stat.S_ISGID else None
        staging = _open_staging(dir_fd)
        try:
            if staging is not None:
                try:
                    _commit(dir_fd, staging, name, data, mode, group, expect)
                except _CrossDevice:
                    _commit(dir_fd, dir_fd, name, data, mode, None, expect)
            else:
                _commit(dir_fd, dir_fd, name, data, mode, None, expect)
        finally:
            if staging is not None:
                os.close(staging)
        try:
            os.fsync(dir_fd)  # make the rename itself durable
        except OSError:
            pass


def sweep_write_temps(root: Path) -> int:
    """Remove temp files that killed K1412 writes left under ``root``; returns how many.

    A directory where another K1412 write is under way (its lock is held) is left alone, so a live
    write never loses its temp file. Version-control internals and dependency trees are skipped, and
    the walk stops after :data:`SWEEP_MAX_ENTRIES` entries.
    """
    removed = _sweep_staging()
    seen = 0
    stack = [str(root)]
    while stack and seen < SWEEP_MAX_ENTRIES:
        directory = stack.pop()
        leftovers: list[str] = []
        try:
            with os.scandir(directory) as entries:
                for entry in entries:
                    seen += 1
                    if entry.is_dir(follow_symlinks=False):
                        if entry.name not in _SWEEP_SKIP:
                            stack.append(entry.path)
                    elif is_write_temp(entry.name) and entry.is_file(follow_symlinks=False):
                        leftovers.append(entry.name)
        except OSError:
            continue
        if leftovers:
            removed += _sweep_directory(directory, leftovers)
    return removed


# A staged file older than this belongs to no live write (a write stages and renames within seconds).
STAGING_MAX_AGE_S = 600.0


def _sweep_staging() -> int:
    """Remove staged files that killed writes left in the staging directory."""
    removed = 0
    try:
        entries = list(os.scandir(staging_dir()))
    except OSError:
        return 0
    now = time.time()
    for entry in entries:
        try:
            if is_write_temp(entry.name) and now - entry.stat(follow_symlinks=False).st_mtime > STAGING_MAX_AGE_S:
                os.unlink(entry.path)
                removed += 1
        except OSError:
            continue
    return removed


_SWEEP_SKIP = frozenset({".git", ".hg", ".svn", "node_modules", ".venv", "venv", "__pycache__", ".tox", ".mypy_cache"})


def _sweep_directory(directory: str, names: list[str]) -> int:
    try:
        dir_fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError:
        return 0
    removed = 0
    try:
        with locked_directory(dir_fd, wait=False) as locked:
            if not locked:
                return 0  # a write is under way here (or no flock): leave its temp file alone
            for name in names:
                try:
                    os.unlink(name, dir_fd=dir_fd)
                    removed += 1
                except OSError:
                    pass
    finally:
        os.close(dir_fd)
    return removed
