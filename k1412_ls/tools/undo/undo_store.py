"""The undo store on disk: content-addressed blobs, one manifest per run, and pruning.

Layout under ``<state dir>/undo/``: ``blobs/<sha[:2]>/<sha>`` (file contents, each kept once however
many runs name it), ``runs/<run_id>.json`` (a run's manifest, written by
:class:`~k1412_ls.tools.undo.preimages.RunJournal`) and ``index/<workspace key>.json`` (which files'
contents are already kept, by size/mtime/inode/ctime). Everything is written atomically: a reader sees
the old or the new file, never half of one.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from k1412_ls.config import UndoSpec
from k1412_ls.text import lossless

MB = 1024 * 1024
RUN_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,127}")
# Blobs that no manifest names (baseline copies, refreshed by every run's index) are kept at least this long.
UNREFERENCED_GRACE_S = 3600.0


@dataclass(frozen=True)
class UndoLimits:
    """How much the journal may keep (``[undo]`` in the configuration)."""

    max_file_bytes: int = 8 * MB
    max_run_bytes: int = 256 * MB
    max_total_bytes: int = 1024 * MB
    max_age_s: float = 14 * 86400.0

    @classmethod
    def from_config(cls, spec: UndoSpec) -> UndoLimits:
        """The limits ``[undo]`` sets (sizes in MB, age in days)."""
        return cls(max_file_bytes=int(spec.max_file_mb * MB), max_run_bytes=int(spec.max_run_mb * MB),
                   max_total_bytes=int(spec.max_total_mb * MB), max_age_s=spec.max_age_days * 86400.0)


def undo_home(state: Path) -> Path:
    return state / "undo"


def valid_run_id(run_id: str) -> bool:
    """A run id names one manifest file and nothing else (no separators, no dots, no traversal)."""
    return RUN_ID.fullmatch(run_id) is not None


def manifest_path(state: Path, run_id: str) -> Path:
    if not valid_run_id(run_id):
        raise ValueError(f"{run_id!r} is not a run id")
    return undo_home(state) / "runs" / f"{run_id}.json"


class BlobStore:
    """File contents by sha256, written atomically; a blob is only ever created, never changed."""

    def __init__(self, home: Path) -> None:
        self.dir = home / "blobs"
        self._made: set[str] = set()  # fan-out directories known to exist (one mkdir each, not one per blob)

    def path(self, sha: str) -> Path:
        return self.dir / sha[:2] / sha

    def put(self, data: bytes) -> str:
        sha = hashlib.sha256(data).hexdigest()
        target = self.path(sha)
        if target.exists():
            with contextlib.suppress(OSError):
                os.utime(target)  # in use again: not pruned as old
            return sha
        if sha[:2] not in self._made:
            target.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
            self._made.add(sha[:2])
        tmp = target.with_name(f".{sha}.{os.getpid()}.{threading.get_ident()}.tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view):]
        finally:
            os.close(fd)
        os.replace(tmp, target)
        return sha

    def get(self, sha: str) -> bytes | None:
        """The blob's bytes, or None if it is gone or no longer matches its name."""
        try:
            data = self.path(sha).read_bytes()
        except OSError:
            return None
        return data if hashlib.sha256(data).hexdigest() == sha else None


def write_json(path: Path, value: Any) -> None:
    """Replace ``path`` with ``value`` as JSON, atomically (a reader sees the old or the new file)."""
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
    # The record rule (k1412_ls/text/lossless.py): a name that is not UTF-8 is kept as os.fsdecode gives it.
    tmp.write_text(lossless.dumps(value, indent=1), encoding="utf-8")
    os.replace(tmp, path)


def read_json(path: Path) -> Any:
    try:
        return lossless.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def prune(state: Path, limits: UndoLimits, now: float | None = None) -> tuple[int, int]:
    """Keep the undo store within its limits; returns ``(manifests removed, blobs removed)``.

    Blobs no manifest names (baseline copies, kept for the next run's index, which touches them) go
    first: when unused for ``max_age_s`` (at least :data:`UNREFERENCED_GRACE_S`), or at once when the
    store is over ``max_total_bytes``. Then
    manifests older than ``max_age_s`` go, and the oldest ones while the blobs they name are over
    ``max_total_bytes``, each with the blobs only it named.
    """
    now = time.time() if now is None else now
    home = undo_home(state)
    runs: list[tuple[float, Path, set[str]]] = []
    for path in (home / "runs").glob("*.json"):
        data = read_json(path) or {}
        entries = data.get("paths") if isinstance(data.get("paths"), dict) else {}
        names = {str(e["before"]["blob"]) for e in entries.values()
                 if isinstance(e, dict) and isinstance(e.get("before"), dict) and e["before"].get("blob")}
        runs.append((float(data.get("started") or 0), path, names))
    runs.sort(key=lambda r: r[0])
    blobs: dict[str, tuple[int, float, Path]] = {}
    for blob in (home / "blobs").glob("*/*"):
        with contextlib.suppress(OSError):
            info = blob.stat()
            blobs[blob.name] = (info.st_size, info.st_mtime, blob)

    def named() -> set[str]:
        return set().union(*(n for _, _, n in runs)) if runs else set()

    removed_blobs = 0

    def drop_blobs(wanted: set[str], *, only_old: bool) -> None:
        nonlocal removed_blobs
        for sha in [s for s in blobs if s not in wanted]:
            _size, mtime, path = blobs[sha]
            if only_old and now - mtime <= max(UNREFERENCED_GRACE_S, limits.max_age_s):
                continue
            with contextlib.suppress(OSError):
                path.unlink()
                removed_blobs += 1
            blobs.pop(sha)

    drop_blobs(named(), only_old=True)
    if sum(size for size, _, _ in blobs.values()) > limits.max_total_bytes:
        drop_blobs(named(), only_old=False)
    removed_runs = 0

    def over() -> bool:
        return sum(blobs[s][0] for s in named() if s in blobs) > limits.max_total_bytes

    while runs and (now - runs[0][0] > limits.max_age_s or over()):
        full = over()
        _, path, _names = runs.pop(0)
        with contextlib.suppress(OSError):
            path.unlink()
            removed_runs += 1
        drop_blobs(named(), only_old=not full)
    return removed_runs, removed_blobs
