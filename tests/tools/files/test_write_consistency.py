"""No lost write across processes: a change commits only over the version it was computed from.

Two K1412 processes patching one file used to lose edits both reported ``ok`` (the write lock was
per process and nothing compared the file with the edit's base just before the rename). These
tests race real processes on one file, and put a foreign writer between an edit's read and its
rename, and check that every edit reported ``ok`` is in the final file.
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from k1412_ls.tools.files import locks
from k1412_ls.tools.files.documents import DiskDocumentStore, Snapshot
from k1412_ls.tools.files.file_tools import TOOLS as FILE_TOOLS
from k1412_ls.tools.files.locks import user_write_lock, write_guard
from k1412_ls.tools.files.patching import TOOLS as PATCH_TOOLS
from k1412_ls.tools.files.workspace import Workspace
from k1412_ls.tools.registry import ToolContext, ToolRegistry
from tests.support.write_race import lost_edits, make_file

REPO = Path(__file__).resolve().parents[3]
REGISTRY = ToolRegistry([*FILE_TOOLS, *PATCH_TOOLS])
STALE = "changed since you last read it"


def race(tmp_path: Path, ws: Path, count: int, *, fresh: bool = True) -> dict[str, list[dict[str, Any]]]:
    """Two driver processes patch their own lines of one 1.5 MB file at the same time."""
    make_file(ws / "big.txt", ("A", "B"), count)
    go = tmp_path / "go"
    go.unlink(missing_ok=True)
    procs = []
    for prefix in "AB":
        (tmp_path / f"{prefix}.ready").unlink(missing_ok=True)
        command = [sys.executable, "-m", "tests.support.write_race", str(ws), "big.txt", prefix, str(count),
                   str(tmp_path / f"{prefix}.json"), "--ready", str(tmp_path / f"{prefix}.ready"), "--go", str(go)]
        if fresh:
            command.append("--fresh")
        procs.append(subprocess.Popen(command, cwd=REPO, stderr=subprocess.PIPE, text=True))
    deadline = time.monotonic() + 30
    while not all((tmp_path / f"{p}.ready").exists() for p in "AB") and time.monotonic() < deadline:
        time.sleep(0.01)
    go.touch()
    for proc in procs:
        _, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err
    return {p: json.loads((tmp_path / f"{p}.json").read_text()) for p in "AB"}


@pytest.mark.e2e
def test_two_processes_patching_one_file_lose_no_ok_edit(tmp_path: Path, ws: Path) -> None:
    results = race(tmp_path, ws, 40)
    for prefix, outcome in results.items():
        assert lost_edits(ws / "big.txt", prefix, outcome) == [], prefix
        # Each call read the file afresh under the lock, so none had a reason to be refused.
        assert all(r["ok"] for r in outcome), [r["error"] for r in outcome if not r["ok"]][:3]


@pytest.mark.e2e
def test_edits_after_an_own_write_are_refused_or_kept_never_lost(tmp_path: Path, ws: Path) -> None:
    # Without --fresh each call remembers its own last write: a change by the other process in between
    # makes the next call stale (refused with the usual sentence), and nothing reported ok is lost.
    results = race(tmp_path, ws, 30, fresh=False)
    for prefix, outcome in results.items():
        assert lost_edits(ws / "big.txt", prefix, outcome) == [], prefix
        assert all(STALE in (r["error"] or "") for r in outcome if not r["ok"])


class ForeignWriteAfterRead(DiskDocumentStore):
    """A disk store where another program rewrites the file right after each read (once)."""

    def __init__(self, root: Path, foreign: str) -> None:
        super().__init__(root)
        self.foreign = foreign
        self.done = False

    def read(self, path: Path) -> Snapshot:
        snapshot = super().read(path)
        if not self.done:
            self.done = True
            path.write_text(self.foreign, encoding="utf-8")  # not through K1412: no lock, no temp file
        return snapshot


def _ctx(ws: Path, documents: Any) -> ToolContext:
    return ToolContext(workspace=Workspace(ws), documents=documents, run_id="r1", write_lock=user_write_lock("u"),
                       user="u")


def test_a_foreign_write_between_read_and_rename_refuses_patch_file(ws: Path) -> None:
    (ws / "a.txt").write_text("one\ntwo\n", encoding="utf-8")
    ctx = _ctx(ws, ForeignWriteAfterRead(ws, "one\ntwo\nthree (someone else's)\n"))
    data = REGISTRY.execute("patch_file", {"path": "a.txt", "edits": [{"old_text": "two", "new_text": "2"}]},
                            ctx).data
    assert not data["ok"] and STALE in data["error"] and "read_file" in data["error"]
    assert (ws / "a.txt").read_text() == "one\ntwo\nthree (someone else's)\n"
    assert [p.name for p in ws.iterdir()] == ["a.txt"]


def test_a_foreign_write_between_read_and_rename_refuses_write_file(ws: Path) -> None:
    (ws / "a.txt").write_text("one\n", encoding="utf-8")
    ctx = _ctx(ws, ForeignWriteAfterRead(ws, "someone else's\n"))
    data = REGISTRY.execute("write_file", {"path": "a.txt", "content": "mine\n"}, ctx).data
    assert not data["ok"] and STALE in data["error"]
    assert (ws / "a.txt").read_text() == "someone else's\n"


class ForeignCreateBeforeWrite(DiskDocumentStore):
    """Another program creates the file after write_file saw it missing and before K1412 renames."""

    def write(self, path: Path, text: str, *, bom: bool = False, label: str = "", **kwargs: Any) -> None:
        path.write_text("created by someone else\n", encoding="utf-8")
        super().write(path, text, bom=bom, label=label, **kwargs)


def test_a_file_created_by_someone_else_meanwhile_is_not_overwritten(ws: Path) -> None:
    ctx = _ctx(ws, ForeignCreateBeforeWrite(ws))
    data = REGISTRY.execute("write_file", {"path": "new.txt", "content": "mine\n"}, ctx).data
    assert not data["ok"] and STALE in data["error"]
    assert (ws / "new.txt").read_text() == "created by someone else\n"


def test_apply_patch_refuses_over_a_foreign_write(ws: Path) -> None:
    from k1412_ls.tools.files.apply_patch.tool import TOOLS as APPLY_TOOLS

    (ws / "a.txt").write_text("one\ntwo\n", encoding="utf-8")
    ctx = _ctx(ws, ForeignWriteAfterRead(ws, "one\ntwo\nthree\n"))
    patch = "*** Begin Patch\n*** Update File: a.txt\n@@\n one\n-two\n+2\n*** End Patch"
    data = ToolRegistry(APPLY_TOOLS).execute("apply_patch", {"patch": patch}, ctx).data
    assert not data["ok"] and STALE in data["error"]
    assert (ws / "a.txt").read_text() == "one\ntwo\nthree\n"


HOLDER = """
import sys, time
from pathlib import Path
from k1412_ls.tools.files.documents import DiskDocumentStore
from k1412_ls.tools.files.locks import write_guard
from k1412_ls.tools.registry import ToolContext
from k1412_ls.tools.files.workspace import Workspace
ctx = ToolContext(workspace=Workspace(sys.argv[1]), documents=DiskDocumentStore(sys.argv[1]))
with write_guard(ctx):
    Path(sys.argv[2]).touch()
    time.sleep(float(sys.argv[3]))
"""


def _hold_lock_elsewhere(ws: Path, tmp_path: Path, seconds: float) -> subprocess.Popen[str]:
    held = tmp_path / "held"
    proc = subprocess.Popen([sys.executable, "-c", HOLDER, str(ws), str(held), str(seconds)], cwd=REPO,
                            stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 30
    while not held.exists():
        assert proc.poll() is None, proc.communicate()[1]
        assert time.monotonic() < deadline
        time.sleep(0.01)
    return proc


@pytest.mark.e2e
def test_the_write_lock_holds_across_processes(ws: Path, tmp_path: Path) -> None:
    (ws / "a.txt").write_text("one\n", encoding="utf-8")
    proc = _hold_lock_elsewhere(ws, tmp_path, 1.0)
    started = time.monotonic()
    data = REGISTRY.execute("write_file", {"path": "a.txt", "content": "two\n"}, _ctx(ws, DiskDocumentStore(ws))).data
    waited = time.monotonic() - started
    proc.communicate(timeout=30)
    assert data["ok"], data
    assert waited > 0.5  # it waited for the other process's write to finish


@pytest.mark.e2e
def test_a_lock_held_too_long_elsewhere_fails_with_one_sentence(ws: Path, tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(locks, "LOCK_WAIT_S", 0.3)
    (ws / "a.txt").write_text("one\n", encoding="utf-8")
    proc = _hold_lock_elsewhere(ws, tmp_path, 3.0)
    try:
        data = REGISTRY.execute("write_file", {"path": "a.txt", "content": "two\n"},
                                _ctx(ws, DiskDocumentStore(ws))).data
    finally:
        proc.kill()
        proc.communicate(timeout=30)
    assert not data["ok"]
    assert "another K1412" in data["error"] and "\n" not in data["error"]
    assert (ws / "a.txt").read_text() == "one\n"


@pytest.mark.e2e
def test_a_cancelled_run_stops_waiting_for_the_lock(ws: Path, tmp_path: Path) -> None:
    (ws / "a.txt").write_text("one\n", encoding="utf-8")
    proc = _hold_lock_elsewhere(ws, tmp_path, 5.0)
    ctx = _ctx(ws, DiskDocumentStore(ws))
    threading.Timer(0.3, ctx.cancel.set).start()
    started = time.monotonic()
    try:
        data = REGISTRY.execute("write_file", {"path": "a.txt", "content": "two\n"}, ctx).data
    finally:
        proc.kill()
        proc.communicate(timeout=30)
    assert time.monotonic() - started < 3
    assert not data["ok"] and "cancel" in data["error"]
    assert (ws / "a.txt").read_text() == "one\n"


def test_the_guard_is_reentrant_in_one_thread_and_exclusive_between_threads(ws: Path) -> None:
    ctx_a = _ctx(ws, DiskDocumentStore(ws))
    ctx_b = ToolContext(workspace=Workspace(ws), documents=DiskDocumentStore(ws), user="other")
    inside = threading.Event()
    order: list[str] = []

    def other() -> None:
        inside.wait(5)
        with write_guard(ctx_b):  # another user: not the same in-process lock, still the same workspace
            order.append("b")

    thread = threading.Thread(target=other)
    thread.start()
    with write_guard(ctx_a):
        with write_guard(ctx_a):
            inside.set()
            time.sleep(0.2)
            order.append("a")
    thread.join(5)
    assert order == ["a", "b"]


def test_the_lock_file_lives_outside_the_workspace(ws: Path, isolated_home: Path) -> None:
    with write_guard(_ctx(ws, DiskDocumentStore(ws))):
        pass
    assert [p.name for p in ws.iterdir()] == []
    assert list((isolated_home / "locks").glob("*.lock"))



# --- the editor path: the applyEdit round trip is part of the write ------------------------------

PATCH_SCRIPT = [
    {"tool_calls": [{"name": "read_file", "arguments": {"path": "a.txt"}}]},
    {"tool_calls": [{"name": "patch_file", "arguments": {"path": "a.txt",
                                                         "edits": [{"old_text": "two", "new_text": "2"}]}}]},
    {"content": "Changed two to 2 in a.txt.", "repeat": True},
]


@pytest.mark.e2e
@pytest.mark.parametrize("open_in_editor", [False, True], ids=["closed", "open"])
async def test_a_foreign_write_during_the_apply_edit_round_trip_is_not_overwritten(
        tmp_path: Path, open_in_editor: bool) -> None:
    from k1412_ls.lsp import constants as c
    from tests.support.lsp_client import lsp_session

    async with lsp_session(tmp_path, PATCH_SCRIPT) as session:
        target = session.root / "a.txt"
        target.write_text("one\ntwo\n", encoding="utf-8")
        if open_in_editor:
            session.editor.open(target)
        # Another program (a CLI run without the lock, a formatter) rewrites the file while the editor
        # is applying K1412's edit.
        session.editor.before_apply = lambda params: target.write_text("one\ntwo\nthree\n", encoding="utf-8")
        await session.command(c.CMD_RUN_TASK, {"task": "Change two to 2 in a.txt"})
        (result,) = [r for r in session.tool_results() if r.tool == "patch_file"]
    assert not result.ok
    assert "changed on disk while the editor applied the edit" in result.error
    assert target.read_text(encoding="utf-8") == "one\ntwo\nthree\n"


@pytest.mark.e2e
async def test_a_foreign_write_after_the_read_is_refused_before_the_editor_sees_an_edit(
        tmp_path: Path) -> None:
    from k1412_ls.lsp import constants as c
    from tests.support.lsp_client import lsp_session

    script = [
        {"tool_calls": [{"name": "read_file", "arguments": {"path": "a.txt"}}]},
        {"delay_s": 0.5, "tool_calls": [{"name": "patch_file", "arguments": {
            "path": "a.txt", "edits": [{"old_text": "two", "new_text": "2"}]}}]},
        {"content": "Changed two to 2 in a.txt.", "repeat": True},
    ]
    async with lsp_session(tmp_path, script) as session:
        target = session.root / "a.txt"
        target.write_text("one\ntwo\n", encoding="utf-8")
        uri = session.editor.open(target)
        pending = session.send_command(c.CMD_RUN_TASK, {"task": "Change two to 2 in a.txt"})[1]
        from tests.support.lsp_client import wait_until

        await wait_until(lambda: any(r.tool == "read_file" for r in session.tool_results()))
        target.write_text("one\ntwo\nthree\n", encoding="utf-8")  # saved by another program; buffer unchanged
        await pending
        (result,) = [r for r in session.tool_results() if r.tool == "patch_file"]
    assert not result.ok and STALE in result.error
    assert session.editor.edits == []
    assert session.editor.text(uri) == "one\ntwo\n"
    assert target.read_text(encoding="utf-8") == "one\ntwo\nthree\n"


def test_writes_go_on_when_the_state_dir_cannot_hold_locks_or_staging(ws: Path, tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("a file where the state directory should be")
    monkeypatch.setenv("K1412_HOME", str(blocker / "state"))
    (ws / "a.txt").write_text("one\ntwo\n", encoding="utf-8")
    ctx = _ctx(ws, DiskDocumentStore(ws))
    data = REGISTRY.execute("patch_file", {"path": "a.txt", "edits": [{"old_text": "two", "new_text": "2"}]},
                            ctx).data
    assert data["ok"], data
    assert (ws / "a.txt").read_text() == "one\n2\n" and [p.name for p in ws.iterdir()] == ["a.txt"]
    # The commit-time comparison still guards the write without a lock file.
    stale = _ctx(ws, ForeignWriteAfterRead(ws, "someone else's\n"))
    data = REGISTRY.execute("write_file", {"path": "a.txt", "content": "mine\n"}, stale).data
    assert not data["ok"] and STALE in data["error"]
