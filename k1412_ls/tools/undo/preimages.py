"""Pre-images: what every path a run changed looked like before the run's first change to it.

A :class:`RunJournal` (one per run) keeps, in the state directory, the prior state of each path
the run changes — by a file tool (through :class:`~k1412_ls.tools.undo.recording.RecordingDocumentStore`)
or by a command (through the change tracker) — and the path's state right after the run's last
change to it. ``k1412 undo`` and ``k1412.undoRun`` (:mod:`k1412_ls.tools.undo.undo_on_disk`) restore the prior
states and refuse paths whose state is no longer the run's.

Layout under ``<state dir>/undo/``:

- ``blobs/<sha[:2]>/<sha>``: file contents, content-addressed (a file seen by many runs is kept once);
- ``runs/<run_id>.json``: the run's manifest (path → ``before`` state, ``after`` version, ``by``, ``undone``);
- ``index/<workspace key>.json``: size/mtime/inode/ctime → blob of files already kept, so the
  baseline a run takes before its first command rereads only files that changed since.

Commands change files the tracker only learns about afterwards, so before a run's first command
the journal keeps a **baseline** of every tracked file (same skipped directories as the tracker),
refreshed before each later command for files that changed in between. Files larger than
``max_file_bytes`` (or past the run's ``max_run_bytes``) are not kept: their change is listed as
not undoable, with the reason.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import os
import stat
import threading
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from k1412_ls.tools.undo.changes import MAX_ENTRIES, Snapshot
from k1412_ls.tools.undo.undo_store import (
    MB,
    BlobStore,
    UndoLimits,
    manifest_path,
    read_json,
    undo_home,
    valid_run_id,
    write_json,
)

NO_FILE = "no-file"
_READ_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


class UnsafePath(Exception):
    """A directory on the way to a path is a symlink or not a directory."""


@contextlib.contextmanager
def parent_fd(root: Path, rel: str) -> Iterator[int | None]:
    """The directory holding ``rel``, opened from ``root`` without following any symlink; None if missing."""
    parts = rel.split("/")[:-1]
    fd = os.open(root, _DIR_FLAGS)
    try:
        for part in parts:
            try:
                nxt = os.open(part, _DIR_FLAGS, dir_fd=fd)
            except FileNotFoundError:
                yield None
                return
            except OSError as exc:
                if exc.errno in (errno.ELOOP, errno.ENOTDIR):
                    raise UnsafePath(f"a directory on the way to {rel} is now a symlink or not a directory") from None
                raise
            os.close(fd)
            fd = nxt
        yield fd
    finally:
        os.close(fd)


def version(data: bytes, mode: int) -> str:
    """The version of a regular file: its content hash and permission bits."""
    return f"{hashlib.sha256(data).hexdigest()}:{mode & 0o7777:o}"


@dataclass(frozen=True)
class PathState:
    """What is at a path now: ``kind`` is file, absent, too_big or other (symlink, directory, …)."""

    kind: str
    data: bytes | None = None
    mode: int = 0
    size: int = 0
    what: str = ""
    digest: str = ""  # version of a too_big file

    @property
    def version(self) -> str:
        if self.kind == "absent":
            return NO_FILE
        if self.kind == "file" and self.data is not None:
            return version(self.data, self.mode)
        if self.kind == "too_big":
            return self.digest
        return f"not a regular file ({self.what})"


def read_state(root: Path, rel: str, max_bytes: int) -> PathState:
    """The state of ``root/rel`` without following symlinks; content only up to ``max_bytes``."""
    try:
        with parent_fd(root, rel) as dir_fd:
            if dir_fd is None:
                return PathState("absent")
            name = rel.rsplit("/", 1)[-1]
            try:
                info = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
            except FileNotFoundError:
                return PathState("absent")
            if not stat.S_ISREG(info.st_mode):
                return PathState("other", what=_kind(info.st_mode))
            fd = os.open(name, _READ_FLAGS, dir_fd=dir_fd)
            try:
                info = os.fstat(fd)
                if not stat.S_ISREG(info.st_mode):
                    return PathState("other", what=_kind(info.st_mode))
                mode = stat.S_IMODE(info.st_mode)
                if info.st_size > max_bytes:
                    digest = hashlib.sha256()
                    while chunk := os.read(fd, MB):
                        digest.update(chunk)
                    return PathState("too_big", mode=mode, size=info.st_size,
                                     digest=f"{digest.hexdigest()}:{mode:o}")
                chunks = []
                while chunk := os.read(fd, MB):
                    chunks.append(chunk)
                data = b"".join(chunks)
                return PathState("file", data=data, mode=mode, size=len(data))
            finally:
                os.close(fd)
    except UnsafePath as exc:
        return PathState("other", what=str(exc))
    except OSError as exc:
        return PathState("other", what=f"unreadable, {errno.errorcode.get(exc.errno or 0, 'error')}")


def _kind(mode: int) -> str:
    for test, word in ((stat.S_ISDIR, "directory"), (stat.S_ISLNK, "symlink"), (stat.S_ISFIFO, "fifo"),
                       (stat.S_ISSOCK, "socket"), (stat.S_ISCHR, "device"), (stat.S_ISBLK, "device")):
        if test(mode):
            return word
    return "special file"


class RunJournal:
    """The pre-images of one run (thread-safe): recorded before each path's first change."""

    def __init__(self, run_id: str, root: Path, state: Path, limits: UndoLimits | None = None) -> None:
        self.run_id = run_id
        self.root = Path(os.path.realpath(root))
        self.limits = limits or UndoLimits()
        self.home = undo_home(state)
        self.blobs = BlobStore(self.home)
        self.path = manifest_path(state, run_id) if valid_run_id(run_id) else None
        self._lock = threading.RLock()
        self._kept = 0  # bytes this run has taken from its budget
        self._entries: dict[str, dict[str, Any]] = {}
        self._notes: list[str] = []
        self._baseline: dict[str, tuple[tuple[int, ...], dict[str, Any]]] | None = None
        self._baseline_thread: threading.Thread | None = None
        self._stop = threading.Event()
        self._commands = 0
        self._started = time.time()
        self._finished = False

    # -- file tools --------------------------------------------------------------------------
    def rel(self, path: Path) -> str | None:
        try:
            rel = Path(os.path.realpath(path)).relative_to(self.root).as_posix()
        except ValueError:
            return None
        return None if rel in ("", ".") else rel

    def before(self, path: Path, by: str = "file tool", text: str | None = None) -> None:
        """Keep ``path``'s current state unless this run already changed it (``text``: an editor
        buffer's unsaved text, which is what the user sees)."""
        rel = self.rel(path)
        if rel is None:
            return
        with self._lock:
            if rel in self._entries:
                return
            state = read_state(self.root, rel, self.limits.max_file_bytes)
            if text is not None and state.kind == "file" and state.data is not None:
                bom = b"\xef\xbb\xbf" if state.data.startswith(b"\xef\xbb\xbf") else b""
                state = PathState("file", data=bom + text.encode("utf-8", "surrogatepass"), mode=state.mode)
            self._entries[rel] = {"before": self._keep(rel, state), "after": state.version, "by": by,
                                  "undone": None}
            self._save()

    def after(self, path: Path) -> None:
        """Note the path's state after the run changed it (what undo expects to find)."""
        rel = self.rel(path)
        if rel is None:
            return
        with self._lock:
            entry = self._entries.get(rel)
            if entry is not None:
                entry["after"] = self._version_now(rel)
                self._save()

    def _version_now(self, rel: str) -> str:
        return read_state(self.root, rel, self.limits.max_file_bytes).version

    def _keep(self, rel: str, state: PathState, *, quiet: bool = False) -> dict[str, Any]:
        """The manifest form of a prior state, its content stored if the budget allows (``quiet``: a
        baseline copy, whose limits are only noted if a command then changes the file)."""
        if state.kind == "absent":
            return {"kind": "absent"}
        if state.kind == "too_big":
            kept = {"kind": "too_big", "size": state.size, "version": state.version, "limit": "file"}
            return kept if quiet else self._noted(rel, kept)
        if state.kind != "file" or state.data is None:
            return {"kind": "other", "what": state.what, "version": state.version}
        with self._lock:
            within = self._kept + len(state.data) <= self.limits.max_run_bytes
            if within:
                self._kept += len(state.data)
        if not within:
            kept = {"kind": "too_big", "size": state.size, "version": state.version, "limit": "run"}
            return kept if quiet else self._noted(rel, kept)
        return {"kind": "file", "blob": self.blobs.put(state.data), "mode": state.mode, "size": len(state.data),
                "version": state.version}

    def _noted(self, rel: str, kept: dict[str, Any]) -> dict[str, Any]:
        """Say why a path's change cannot be undone (in the run's notes); returns ``kept``."""
        if kept.get("limit") == "run":
            self._note(f"{rel} was not kept: the run's undo budget of {self.limits.max_run_bytes / MB:g} MB "
                       f"was used up")
        elif kept.get("kind") == "too_big":
            self._note(f"{rel} was {kept['size'] / MB:.1f} MB, over the {self.limits.max_file_bytes / MB:g} MB "
                       f"undo limit per file, so no copy was kept")
        return kept

    def _note(self, text: str) -> None:
        with self._lock:
            if text not in self._notes:
                self._notes.append(text)

    # -- commands ----------------------------------------------------------------------------
    def start_baseline(self) -> None:
        """Start keeping the baseline in the background, while the model works out its first step."""
        with self._lock:
            if self._baseline_thread is not None or self._baseline is not None:
                return
            self._baseline_thread = threading.Thread(target=self._build_baseline, name="k1412-undo-baseline",
                                                     daemon=True)
            self._baseline_thread.start()

    def take_baseline(self) -> None:
        """Before the run's first command: the baseline (awaited, or built now), with files that changed
        since it was built refreshed."""
        with self._lock:
            thread, ready = self._baseline_thread, self._baseline is not None
        if thread is not None:
            thread.join()
            self.refresh(None)  # changes between the background walk and the tracker's start
        elif not ready:
            self._build_baseline()

    def _build_baseline(self) -> None:
        """Keep every tracked file; files kept before (same size, mtime, inode, ctime) are not read again."""
        index_path = self.home / "index" / f"{hashlib.sha256(os.fsencode(self.root)).hexdigest()[:32]}.json"
        index = read_json(index_path) or {}
        snap = Snapshot.take(self.root)
        built: dict[str, tuple[tuple[int, ...], dict[str, Any]]] = {}
        fresh: dict[str, Any] = {}
        # Past the tracker's limit commands' changes are unknown anyway: copying a home directory's worth
        # of files would cost minutes and gigabytes for nothing.
        for rel in sorted(snap.files) if snap.complete else []:
            if self._stop.is_set():
                break
            signature = _signature(self.root / rel)
            if signature is None:
                continue
            cached = index.get(rel)
            if cached and tuple(cached[0]) == signature and self.blobs.path(cached[1]["blob"]).exists():
                kept = cached[1]
                with contextlib.suppress(OSError):
                    os.utime(self.blobs.path(kept["blob"]))
            else:
                kept = self._keep(rel, _read_walked(self.root / rel, self.limits.max_file_bytes), quiet=True)
            if kept["kind"] == "file":
                fresh[rel] = [list(signature), kept]
            built[rel] = (signature, kept)
        with self._lock:
            if not snap.complete:
                self._note(f"the workspace has more than {MAX_ENTRIES:,} files, so no copies were kept for "
                           f"changes made by commands")
            self._baseline = built
        with contextlib.suppress(OSError):
            write_json(index_path, fresh)

    def refresh(self, rels: Iterable[str] | None = None) -> None:
        """Before a later command: re-keep baseline files that changed since (by the user or a file tool)."""
        with self._lock:
            if self._baseline is None:
                return
            names = list(self._baseline) if rels is None else list(rels)
            for rel in names:
                if rel in self._entries:
                    continue
                signature = _signature(self.root / rel)
                old = self._baseline.get(rel)
                if signature is None:
                    self._baseline.pop(rel, None)
                elif old is None or old[0] != signature:
                    state = read_state(self.root, rel, self.limits.max_file_bytes)
                    self._baseline[rel] = (signature, self._keep(rel, state, quiet=True))

    def command_changes(self, changes: list[tuple[str, str]], complete: bool) -> None:
        """After a command: the prior state of each path it created, changed or deleted."""
        with self._lock:
            self._commands += 1
            if not complete:
                self._note("a command changed more files than could be tracked, so some of its changes are unknown")
            for rel, action in changes:
                if rel not in self._entries:
                    known = (self._baseline or {}).get(rel)
                    if action == "create" and known is None:
                        before: dict[str, Any] = {"kind": "absent"}
                    elif known is not None:
                        before = self._noted(rel, known[1])
                    else:
                        before = {"kind": "unknown"}
                        self._note(f"{rel} changed by a command but no copy of it was taken before")
                    self._entries[rel] = {"before": before, "after": "", "by": "command", "undone": None}
                self._entries[rel]["after"] = self._version_now(rel)
                if self._baseline is not None:
                    signature = _signature(self.root / rel)
                    if signature is None:
                        self._baseline.pop(rel, None)
            self._save()

    # -- what the run started from -----------------------------------------------------------
    def prior_bytes(self, rel: str) -> tuple[str, bytes | None]:
        """What ``rel`` held before this run first changed it: ``("file", data)``, ``("absent", None)``, or
        ``("unknown", None)`` when no copy was kept (too big, not a regular file, never recorded)."""
        with self._lock:
            entry = self._entries.get(rel)
            before = entry.get("before") if entry is not None else None
        if not isinstance(before, dict):
            return "unknown", None
        if before.get("kind") == "absent":
            return "absent", None
        blob = before.get("blob")
        if before.get("kind") == "file" and isinstance(blob, str):
            data = self.blobs.get(blob)
            if data is not None:
                return "file", data
        return "unknown", None

    def current_bytes(self, rel: str) -> tuple[str, bytes | None]:
        """What ``rel`` holds now, read without following symlinks, in the same terms as :meth:`prior_bytes`."""
        state = read_state(self.root, rel, self.limits.max_file_bytes)
        if state.kind == "absent":
            return "absent", None
        if state.kind == "file" and state.data is not None:
            return "file", state.data
        return "unknown", None

    # -- the manifest ------------------------------------------------------------------------
    def finish(self) -> None:
        self._stop.set()  # a baseline still being built is no longer needed
        with self._lock:
            self._finished = True
            if self._entries or self._commands:
                self._save()

    def _save(self) -> None:
        if self.path is None:
            return
        try:
            write_json(self.path, {
                "version": 1, "run_id": self.run_id, "workspace": str(self.root), "pid": os.getpid(),
                "started": self._started, "finished": self._finished, "commands": self._commands,
                "notes": self._notes, "paths": self._entries,
            })
        except OSError:
            pass  # undo is a convenience; a full state disk must not fail the run


def _read_walked(path: Path, max_bytes: int) -> PathState:
    """A file the baseline walk just listed (no symlinks followed on the walk): one open, not one per directory.

    Only read, never written: if a directory on the way was swapped meanwhile, the worst case is a copy
    of the wrong bytes, which an undo then refuses to use (the path's state will not match the run's)."""
    try:
        fd = os.open(path, _READ_FLAGS)
    except OSError as exc:
        return PathState("other", what=f"unreadable, {errno.errorcode.get(exc.errno or 0, 'error')}")
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            return PathState("other", what=_kind(info.st_mode))
        mode = stat.S_IMODE(info.st_mode)
        if info.st_size > max_bytes:
            return PathState("too_big", mode=mode, size=info.st_size, digest="")
        chunks = []
        while chunk := os.read(fd, MB):
            chunks.append(chunk)
        data = b"".join(chunks)
        return PathState("file", data=data, mode=mode, size=len(data))
    finally:
        os.close(fd)


def _signature(path: Path) -> tuple[int, ...] | None:
    try:
        info = os.lstat(path)
    except OSError:
        return None
    if not stat.S_ISREG(info.st_mode):
        return None
    return (info.st_size, info.st_mtime_ns, info.st_ino, info.st_ctime_ns, info.st_mode)


__all__ = ["NO_FILE", "PathState", "RunJournal", "parent_fd", "read_state", "version"]
