"""Undoing a run on disk: which paths can go back to their pre-images, and putting them back.

:func:`plan_undo` reads the run's manifest (:mod:`k1412_ls.tools.undo.preimages`) and decides, path by
path: a path is restored only if its state now is exactly the state the run left (content and
permission bits; an editor buffer must also hold no unsaved text); anything else — the user typed,
another run wrote, a file became a symlink or a directory, a directory on the way became a
symlink — is refused with the reason and left untouched. :func:`apply_on_disk` performs the
restores under the workspace lock, re-checking each path just before it changes it, writing through
the same no-symlink, atomic writer the file tools use.
"""

from __future__ import annotations

import os
import stat
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from k1412_ls.text import lossless
from k1412_ls.tools.errors import ToolError
from k1412_ls.tools.files.documents import NO_FILE as DISK_NO_FILE
from k1412_ls.tools.files.documents import atomic_write_bytes
from k1412_ls.tools.files.locks import workspace_lock
from k1412_ls.tools.undo.preimages import NO_FILE, UnsafePath, parent_fd, read_state
from k1412_ls.tools.undo.undo_store import MB, BlobStore, manifest_path, read_json, undo_home, valid_run_id

# What an undo never reaches, said with every result.
NOT_UNDOABLE = (
    "processes the run started and anything they did outside the workspace files",
    "network requests and whatever they changed elsewhere",
    "files outside the workspace, git internals (.git: commits, branches) and skipped directories "
    "(node_modules, .venv, caches) that commands changed",
    "empty directories the run created (they are left in place)",
)
# A file being restored is compared whole: bigger files than this are refused rather than read.
MAX_COMPARE_BYTES = 1024 * MB


class UnknownRun(Exception):
    """No run by that id (or an id that cannot name one); exit code 2."""


@dataclass
class Action:
    """One path to restore: write ``data`` with ``mode``, or delete the file (``data`` None)."""

    rel: str
    data: bytes | None
    mode: int
    current: str  # the path's version when the plan was made (== the run's "after")
    target: str   # the version the path has once restored

    @property
    def deletes(self) -> bool:
        return self.data is None


@dataclass
class UndoPlan:
    run_id: str
    root: Path
    actions: list[Action] = field(default_factory=list)
    refused: list[dict[str, str]] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)  # the run left them as they were: nothing to do
    already: list[str] = field(default_factory=list)    # restored by an earlier undo
    notes: list[str] = field(default_factory=list)
    blocked: str | None = None  # why the whole undo was refused
    manifest: dict[str, Any] = field(default_factory=dict)


def load_manifest(state: Path, run_id: str) -> dict[str, Any] | None:
    """The run's manifest; None when the run changed nothing; UnknownRun when there is no such run."""
    if not isinstance(run_id, str) or not valid_run_id(run_id):
        raise UnknownRun(f"{run_id!r} is not a K1412 run id; `k1412 replay` and the run's result show its id.")
    data = read_json(manifest_path(state, run_id))
    if isinstance(data, dict) and isinstance(data.get("paths"), dict):
        return data
    if not (state / "runs" / f"{run_id}.jsonl").is_file():
        raise UnknownRun(f"There is no run {run_id}; check the id (every run prints it).")
    return None


def _pid_alive(pid: Any) -> bool:
    if not isinstance(pid, int) or pid <= 0 or pid == os.getpid():
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True
    return True


def _refusal(rel: str, reason: str) -> dict[str, str]:
    return {"path": rel, "reason": reason}


def _describe_now(version: str) -> str:
    if version == NO_FILE:
        return "it was deleted after the run"
    if version.startswith("not a regular file"):
        what = version[len("not a regular file ("):-1]
        if what.startswith("a directory on the way"):
            return f"{what}; K1412 does not write through it"
        return f"it is now a {what}; K1412 does not write over it"
    return "it was changed after the run (by you or another run)"


def plan_undo(state: Path, run_id: str, *, buffers: Mapping[str, str] | None = None,
              running: bool = False, workspace: Path | None = None) -> UndoPlan:
    """Decide what undoing ``run_id`` would restore and refuse; ``buffers``: open editor texts by path."""
    manifest = load_manifest(state, run_id)
    if manifest is None:
        plan = UndoPlan(run_id, workspace or Path("."), notes=[f"Run {run_id} changed no files; there is nothing "
                                                                 f"to undo."])
        if _logged_changes(state, run_id):
            plan.blocked = (f"Run {run_id} has no undo record (it was pruned, or the run is older than undo); "
                            f"nothing was restored.")
        return plan
    root = Path(str(manifest.get("workspace") or ""))
    plan = UndoPlan(run_id, root, manifest=manifest, notes=list(manifest.get("notes") or []))
    if workspace is not None and os.path.realpath(workspace) != os.path.realpath(root):
        plan.blocked = f"Run {run_id} ran in {root}, not in this workspace ({workspace}); undo it from there."
        return plan
    if not root.is_dir():
        plan.blocked = f"The workspace of run {run_id} ({root}) no longer exists; nothing was restored."
        return plan
    if running or (not manifest.get("finished") and _pid_alive(manifest.get("pid"))):
        plan.blocked = f"Run {run_id} is still running; cancel it or wait for it to end, then undo it."
        return plan
    blobs = BlobStore(undo_home(state))
    for rel, entry in sorted(manifest["paths"].items()):
        if not isinstance(entry, dict) or not _plain_rel(rel):
            plan.refused.append(_refusal(str(rel), "its undo record is damaged; K1412 leaves it alone"))
            continue
        if entry.get("undone"):
            plan.already.append(rel)
            continue
        before = entry.get("before") if isinstance(entry.get("before"), dict) else {}
        kind = before.get("kind")
        now = read_state(root, rel, MAX_COMPARE_BYTES)
        target = NO_FILE if kind == "absent" else str(before.get("version", ""))
        if (NO_FILE if kind == "absent" else before.get("version")) == entry.get("after"):
            continue  # the run did not change it after all (a refused or failed write): nothing to undo
        if now.version == target and kind in ("absent", "file"):
            plan.unchanged.append(rel)
            continue
        if now.version != entry.get("after"):
            plan.refused.append(_refusal(rel, _describe_now(now.version)))
            continue
        if rel in (buffers or {}) and now.data is not None:
            saved = now.data[3:] if now.data.startswith(b"\xef\xbb\xbf") else now.data
            if (buffers or {})[rel].encode("utf-8", "surrogatepass") != saved:
                plan.refused.append(_refusal(rel, "it has unsaved changes in the editor made after the run"))
                continue
        if kind == "absent":
            plan.actions.append(Action(rel, None, 0, now.version, NO_FILE))
        elif kind == "file":
            data = blobs.get(str(before.get("blob", "")))
            if data is None:
                plan.refused.append(_refusal(rel, "its saved copy is gone (pruned from the undo store)"))
                continue
            plan.actions.append(Action(rel, data, int(before.get("mode", 0o644)), now.version, target))
        elif kind == "too_big":
            size = float(before.get("size") or 0) / MB
            plan.refused.append(_refusal(rel, f"it was {size:.1f} MB before the run, over the undo size limit, "
                                              f"so no copy was kept"))
        elif kind == "other":
            plan.refused.append(_refusal(rel, f"it was not a regular file before the run ({before.get('what')}), "
                                              f"so K1412 cannot put it back"))
        else:
            plan.refused.append(_refusal(rel, "a command changed it before K1412 could keep a copy"))
    return plan


def latest_run(state: Path, root: Path) -> str | None:
    """The most recent run in the workspace at ``root`` with paths not undone yet."""
    best: tuple[float, str] | None = None
    real = os.path.realpath(root)
    for path in (undo_home(state) / "runs").glob("*.json"):
        data = read_json(path)
        if not isinstance(data, dict) or not isinstance(data.get("paths"), dict):
            continue
        if os.path.realpath(str(data.get("workspace") or "")) != real or not valid_run_id(path.stem):
            continue
        if not any(isinstance(e, dict) and not e.get("undone") for e in data["paths"].values()):
            continue
        started = float(data.get("started") or 0)
        if best is None or started > best[0]:
            best = (started, path.stem)
    return best[1] if best else None


def _logged_changes(state: Path, run_id: str) -> bool:
    """Whether the run's log says it changed files (its end event, or any command or write fact)."""
    try:
        lines = lossless.record_lines((state / "runs" / f"{run_id}.jsonl").read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError):
        return False
    for line in lines:
        try:
            event = lossless.loads(line)
        except ValueError:
            continue
        payload = event.get("payload") if isinstance(event, dict) else None
        if isinstance(payload, dict) and (payload.get("files_changed") or (payload.get("facts") or {}).get("changes")):
            return True
    return False


def _plain_rel(rel: Any) -> bool:
    """A manifest path must be relative and plain: no absolute paths, no ``..``, no empty parts."""
    if not isinstance(rel, str) or not rel or rel.startswith("/") or "\0" in rel:
        return False
    return all(part not in ("", ".", "..") for part in rel.split("/"))


def apply_on_disk(plan: UndoPlan, *, also_accept: Mapping[str, set[str]] | None = None,
                  cancel: threading.Event | None = None) -> tuple[list[str], list[dict[str, str]]]:
    """Restore the plan's actions under the workspace lock; ``(restored, refused)``.

    Each path is re-read just before it changes: it must still be the version the plan saw (or one
    of ``also_accept[rel]``: the editor already applied its part), else it is refused untouched.
    """
    restored: list[str] = []
    refused: list[dict[str, str]] = []
    if not plan.actions:
        return restored, refused
    try:
        with workspace_lock(plan.root).hold(cancel or threading.Event()):
            for action in plan.actions:
                try:
                    if _restore(plan.root, action, (also_accept or {}).get(action.rel, set())):
                        restored.append(action.rel)
                    else:
                        refused.append(_refusal(action.rel, "it changed while the undo was running; it was left "
                                                            "as is"))
                except ToolError as exc:
                    refused.append(_refusal(action.rel, str(exc).rstrip(".")))
    except ToolError as exc:  # another K1412 process kept the workspace lock: nothing was touched
        done = set(restored)
        refused.extend(_refusal(a.rel, str(exc).rstrip(".")) for a in plan.actions if a.rel not in done)
    return restored, refused


def _restore(root: Path, action: Action, accepted: set[str]) -> bool:
    now = read_state(root, action.rel, MAX_COMPARE_BYTES)
    if now.version == action.target:
        return True
    if now.version != action.current and now.version not in accepted:
        return False
    path = root / action.rel
    if action.deletes:
        _delete(root, action.rel, now.version)
        return True
    expect = DISK_NO_FILE if now.kind == "absent" else now.version.split(":")[0]
    assert action.data is not None
    atomic_write_bytes(path, action.data, root=root, expect=expect)
    _chmod(root, action.rel, action.mode)
    return True


def _delete(root: Path, rel: str, expected: str) -> None:
    name = rel.rsplit("/", 1)[-1]
    try:
        with parent_fd(root, rel) as dir_fd:
            if dir_fd is None:
                return
            if read_state(root, rel, MAX_COMPARE_BYTES).version != expected:
                raise ToolError(f"{rel} changed while the undo was running; it was left as is.")
            info = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
            if not stat.S_ISREG(info.st_mode):
                raise ToolError(f"{rel} is no longer a regular file; it was left as is.")
            os.unlink(name, dir_fd=dir_fd)
    except UnsafePath as exc:
        raise ToolError(f"{exc}; K1412 does not delete through it.") from None
    except FileNotFoundError:
        return
    except OSError as exc:
        raise ToolError(f"{rel} could not be deleted ({exc.strerror or exc}).") from None


def _chmod(root: Path, rel: str, mode: int) -> None:
    name = rel.rsplit("/", 1)[-1]
    try:
        with parent_fd(root, rel) as dir_fd:
            if dir_fd is None:
                return
            fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, dir_fd=dir_fd)
            try:
                if stat.S_IMODE(os.fstat(fd).st_mode) != mode & 0o7777:
                    os.fchmod(fd, mode & 0o7777)
            finally:
                os.close(fd)
    except (OSError, UnsafePath):
        pass  # the content is back; the mode is best effort
