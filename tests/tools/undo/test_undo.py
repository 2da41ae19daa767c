"""Undo a whole run in-process: file tools and commands go back, later changes are refused, not clobbered."""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path
from typing import Any

import pytest

from k1412_ls.catalog import default_registry
from k1412_ls.config import build_config
from k1412_ls.core.events import read_events
from k1412_ls.core.run_request import RunRequest
from k1412_ls.core.runtime import Runtime
from k1412_ls.core.undo_result import UnknownRun, undo_on_disk
from k1412_ls.tools.undo.undo_store import prune
from tests.support.scripted_model import ScriptedChatModel

TASK = "Change world to there in hello.py, create new.py, delete old.txt with rm and run hello.py."


def patch_create_delete(extra: list[dict[str, Any]] | None = None) -> list[dict[str, Any]]:
    return [
        {"tool_calls": [{"name": "read_file", "arguments": {"path": "hello.py"}}]},
        {"content": "Patching hello.py to greet there.", "tool_calls": [
            {"name": "patch_file", "arguments": {"path": "hello.py",
                                                 "edits": [{"old_text": "world", "new_text": "there"}]}},
            {"name": "write_file", "arguments": {"path": "new.py", "content": "print('new')\n"}}]},
        {"tool_calls": [{"name": "run_command", "arguments": {
            "command": "rm old.txt && sed -i 's/1/2/' data/conf.ini && python3 hello.py"}}]},
        *(extra or []),
        {"content": "Done: hello.py patched, new.py created, old.txt deleted, conf updated, hello.py ran.",
         "repeat": True},
    ]


def make_runtime(tmp_path: Path, model: ScriptedChatModel, undo: str = "") -> Runtime:
    config = build_config({"undo": json.loads(undo)} if undo else {})
    return Runtime(config, lambda _c, _s: model, tmp_path / "state", default_registry())


def run(runtime: Runtime, ws: Path, task: str = TASK) -> Any:
    return asyncio.run(runtime.run(RunRequest(task=task, workspace=ws)))


def seed(ws: Path) -> dict[str, bytes]:
    (ws / "data").mkdir()
    files = {"hello.py": b"print('hello world')\n", "old.txt": b"old\r\nbytes\xff\n", "data/conf.ini": b"level=1\n",
             "keep.md": b"untouched\n"}
    for rel, data in files.items():
        (ws / rel).write_bytes(data)
    os.chmod(ws / "old.txt", 0o640)
    return files


def tree(ws: Path) -> dict[str, tuple[bytes, int]]:
    return {p.relative_to(ws).as_posix(): (p.read_bytes(), p.stat().st_mode & 0o777)
            for p in sorted(ws.rglob("*")) if p.is_file()}


@pytest.fixture
def done(tmp_path: Path, ws: Path) -> tuple[Path, dict[str, tuple[bytes, int]], Any]:
    seed(ws)
    before = tree(ws)
    result = run(make_runtime(tmp_path, ScriptedChatModel(patch_create_delete())), ws)
    assert (ws / "hello.py").read_text() == "print('hello there')\n" and not (ws / "old.txt").exists()
    return tmp_path / "state", before, result


def test_undo_restores_file_tool_and_command_changes_exactly(ws: Path, done: Any) -> None:
    state, before, result = done
    out = undo_on_disk(state, result.run_id)
    assert out["ok"] is True, out
    assert out["restored"] == ["data/conf.ini", "hello.py", "new.py", "old.txt"]
    assert out["refused"] == []
    assert tree(ws) == before  # bytes (CRLF, non-UTF-8) and modes as before the run
    assert any("processes" in line for line in out["not_undoable"])
    logged = read_events(Path(result.events_path))[-1]
    assert logged.type == "run.undone" and logged.payload["restored"] == out["restored"]
    assert logged.seq == read_events(Path(result.events_path))[-2].seq + 1


def test_undo_twice_restores_nothing_and_says_so(ws: Path, done: Any) -> None:
    state, _before, result = done
    assert undo_on_disk(state, result.run_id)["ok"] is True
    (ws / "keep.md").write_text("edited after the undo\n")
    again = undo_on_disk(state, result.run_id)
    assert again["ok"] is False and again["restored"] == [] and again["refused"] == []
    assert "already undone" in again["message"]
    assert (ws / "keep.md").read_text() == "edited after the undo\n"


def test_a_file_the_user_changed_after_the_run_is_refused_and_the_rest_restored(ws: Path, done: Any) -> None:
    state, before, result = done
    (ws / "hello.py").write_text("print('my own edit')\n")
    out = undo_on_disk(state, result.run_id)
    assert out["ok"] is False
    assert out["refused"] == [{"path": "hello.py", "reason": "it was changed after the run (by you or another run)"}]
    assert out["restored"] == ["data/conf.ini", "new.py", "old.txt"]
    assert (ws / "hello.py").read_text() == "print('my own edit')\n"
    # Once the user puts the run's version back, a second undo finishes the job.
    (ws / "hello.py").write_text("print('hello there')\n")
    rest = undo_on_disk(state, result.run_id)
    assert rest["ok"] is True and rest["restored"] == ["hello.py"]
    assert tree(ws) == before


def test_a_run_that_changed_nothing_has_nothing_to_undo(tmp_path: Path, ws: Path) -> None:
    (ws / "a.txt").write_text("a\n")
    result = run(make_runtime(tmp_path, ScriptedChatModel([
        {"tool_calls": [{"name": "read_file", "arguments": {"path": "a.txt"}}]},
        {"content": "a.txt holds the letter a."}])), ws, "What is in a.txt?")
    out = undo_on_disk(tmp_path / "state", result.run_id)
    assert out["ok"] is True and out["restored"] == [] and "nothing to undo" in out["message"]


# --- adversarial: undo must refuse rather than clobber -------------------------------------------------

def test_adv_path_replaced_by_symlink_to_outside_is_refused(tmp_path: Path, ws: Path, done: Any) -> None:
    state, _before, result = done
    outside = tmp_path / "outside.txt"
    outside.write_text("precious\n")
    (ws / "hello.py").unlink()
    (ws / "hello.py").symlink_to(outside)
    out = undo_on_disk(state, result.run_id)
    assert {"path": "hello.py", "reason": "it is now a symlink; K1412 does not write over it"} in out["refused"]
    assert outside.read_text() == "precious\n" and (ws / "hello.py").is_symlink()


def test_adv_directory_on_the_way_replaced_by_symlink_is_refused(tmp_path: Path, ws: Path, done: Any) -> None:
    state, _before, result = done
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (outside / "conf.ini").write_text("level=2\n")  # same bytes the run left, but outside the workspace
    (ws / "data" / "conf.ini").unlink()
    (ws / "data").rmdir()
    (ws / "data").symlink_to(outside)
    out = undo_on_disk(state, result.run_id)
    refused = {r["path"]: r["reason"] for r in out["refused"]}
    assert "symlink" in refused["data/conf.ini"]
    assert (outside / "conf.ini").read_text() == "level=2\n"


def test_adv_a_deleted_file_the_user_recreated_is_refused(ws: Path, done: Any) -> None:
    state, _before, result = done
    (ws / "old.txt").write_text("the user's new old.txt\n")
    out = undo_on_disk(state, result.run_id)
    assert {"path": "old.txt", "reason": "it was changed after the run (by you or another run)"} in out["refused"]
    assert (ws / "old.txt").read_text() == "the user's new old.txt\n"


def test_adv_a_directory_where_the_created_file_was_is_refused(ws: Path, done: Any) -> None:
    state, _before, result = done
    (ws / "new.py").unlink()
    (ws / "new.py").mkdir()
    (ws / "new.py" / "mine.txt").write_text("mine\n")
    out = undo_on_disk(state, result.run_id)
    assert {"path": "new.py", "reason": "it is now a directory; K1412 does not write over it"} in out["refused"]
    assert (ws / "new.py" / "mine.txt").read_text() == "mine\n"


@pytest.mark.parametrize("run_id", ["../../x", "../runs/x", "/etc/passwd", "run-1/../../x", ".hidden", "", "a" * 200])
def test_adv_run_ids_that_are_not_ids_are_unknown_runs(tmp_path: Path, run_id: str) -> None:
    (tmp_path / "state" / "undo").mkdir(parents=True)
    (tmp_path / "x.json").write_text(json.dumps({"workspace": str(tmp_path), "paths": {}}))
    with pytest.raises(UnknownRun, match="not a K1412 run id"):
        undo_on_disk(tmp_path / "state", run_id)


def test_adv_a_forged_manifest_cannot_reach_outside_the_workspace(tmp_path: Path, ws: Path, done: Any) -> None:
    state, _before, result = done
    target = tmp_path / "victim.txt"
    target.write_text("victim\n")
    manifest = state / "undo" / "runs" / f"{result.run_id}.json"
    data = json.loads(manifest.read_text())
    data["paths"]["../victim.txt"] = {"before": {"kind": "absent"}, "after": data["paths"]["new.py"]["after"],
                                      "by": "command", "undone": None}
    manifest.write_text(json.dumps(data))
    out = undo_on_disk(state, result.run_id)
    assert {"path": "../victim.txt", "reason": "its undo record is damaged; K1412 leaves it alone"} in out["refused"]
    assert target.read_text() == "victim\n"


def test_adv_a_file_over_the_size_cap_is_listed_not_clobbered(tmp_path: Path, ws: Path) -> None:
    (ws / "big.bin").write_bytes(b"x" * (2 * 1024 * 1024))
    runtime = make_runtime(tmp_path, ScriptedChatModel([
        {"tool_calls": [{"name": "run_command", "arguments": {"command": "printf y >> big.bin && echo ok > s.txt"}}]},
        {"content": "Appended y to big.bin and wrote s.txt."}]), undo='{"max_file_mb": 1}')
    result = run(runtime, ws, "Append y to big.bin and write s.txt with a command")
    out = undo_on_disk(tmp_path / "state", result.run_id)
    refused = {r["path"]: r["reason"] for r in out["refused"]}
    assert "over the undo size limit" in refused["big.bin"]
    assert out["restored"] == ["s.txt"] and not (ws / "s.txt").exists()
    assert (ws / "big.bin").stat().st_size == 2 * 1024 * 1024 + 1
    assert any("big.bin" in note and "1 MB" in note for note in out["not_undoable"])


def test_adv_a_later_run_on_the_same_file_blocks_undo_of_the_earlier_one(tmp_path: Path, ws: Path,
                                                                         done: Any) -> None:
    state, _before, first = done
    second = run(make_runtime(tmp_path, ScriptedChatModel([
        {"tool_calls": [{"name": "read_file", "arguments": {"path": "hello.py"}}]},
        {"tool_calls": [{"name": "patch_file", "arguments": {
            "path": "hello.py", "edits": [{"old_text": "there", "new_text": "again"}]}}]},
        {"tool_calls": [{"name": "run_command", "arguments": {"command": "python3 hello.py"}}]},
        {"content": "hello.py now greets again and ran.", "repeat": True}])), ws,
        "Change there to again in hello.py and run it")
    out = undo_on_disk(state, first.run_id)
    assert {"path": "hello.py", "reason": "it was changed after the run (by you or another run)"} in out["refused"]
    assert (ws / "hello.py").read_text() == "print('hello again')\n"
    # Undoing the later run first, then the earlier one, walks back to the start.
    assert undo_on_disk(state, second.run_id)["ok"] is True
    assert undo_on_disk(state, first.run_id)["ok"] is True
    assert (ws / "hello.py").read_text() == "print('hello world')\n"


def test_adv_a_hard_link_to_outside_is_refused_by_the_writer(tmp_path: Path, ws: Path, done: Any) -> None:
    state, _before, result = done
    outside = tmp_path / "linked.txt"
    os.link(ws / "hello.py", outside)  # same inode, same bytes the run left
    out = undo_on_disk(state, result.run_id)
    refused = {r["path"]: r["reason"] for r in out["refused"]}
    assert "hard links" in refused["hello.py"]
    assert outside.read_text() == "print('hello there')\n"


def test_adv_a_pruned_copy_is_refused_and_pruning_keeps_runs_within_limits(tmp_path: Path, ws: Path,
                                                                             done: Any) -> None:
    state, _before, result = done
    from k1412_ls.tools.undo.undo_store import UndoLimits

    removed, _blobs = prune(state, UndoLimits(max_age_s=1.0), now=10**12)
    assert removed == 1
    with pytest.raises(UnknownRun):
        undo_on_disk(state, "run-0000000000000000")
    out = undo_on_disk(state, result.run_id)  # the log is still there, its undo record is not
    assert out["ok"] is False and out["restored"] == [] and "no undo record" in out["message"]
    assert (ws / "new.py").exists()


@pytest.mark.e2e
def test_adv_undo_of_a_run_still_in_flight_is_refused_whole(tmp_path: Path, ws: Path) -> None:
    """A second process asks to undo while the run is still changing files: nothing is touched."""
    import subprocess
    import sys

    (ws / "a.txt").write_text("before\n")
    runtime = make_runtime(tmp_path, ScriptedChatModel([
        {"tool_calls": [{"name": "run_command", "arguments": {"command": "echo during > a.txt"}}]},
        {"tool_calls": [{"name": "run_command", "arguments": {"command": "sleep 3; echo later > b.txt"}}]},
        {"content": "a.txt and b.txt written.", "repeat": True}]))

    async def scenario() -> tuple[Any, subprocess.CompletedProcess[str]]:
        task = asyncio.create_task(runtime.run(RunRequest(task="Write a.txt then b.txt with commands", workspace=ws),
                                               run_id="run-00000000000000aa"))
        manifest = tmp_path / "state" / "undo" / "runs" / "run-00000000000000aa.json"
        for _ in range(400):  # the first command's change is recorded before the second starts
            if manifest.exists() and "a.txt" in manifest.read_text():
                break
            await asyncio.sleep(0.05)
        env = {**os.environ, "K1412_HOME": str(tmp_path / "state")}
        undo = await asyncio.to_thread(subprocess.run, [sys.executable, "-m", "k1412_ls.cli", "undo",
                                                        "run-00000000000000aa", "--json"],
                                       capture_output=True, text=True, env=env, timeout=60)
        return await task, undo

    result, undo = asyncio.run(scenario())
    assert undo.returncode == 1, undo.stderr
    assert "still running" in json.loads(undo.stdout)["message"]
    assert (ws / "a.txt").read_text() == "during\n" and (ws / "b.txt").read_text() == "later\n"
    after = undo_on_disk(tmp_path / "state", result.run_id)  # once it has ended, the undo goes through
    assert after["ok"] is True and (ws / "a.txt").read_text() == "before\n" and not (ws / "b.txt").exists()


def test_adv_a_symlink_planted_where_the_run_deleted_a_file_is_refused(tmp_path: Path, ws: Path, done: Any) -> None:
    state, _before, result = done
    outside = tmp_path / "target.txt"
    outside.write_text("not yours\n")
    (ws / "old.txt").symlink_to(outside)  # undo would recreate old.txt through it
    out = undo_on_disk(state, result.run_id)
    assert {"path": "old.txt", "reason": "it is now a symlink; K1412 does not write over it"} in out["refused"]
    assert outside.read_text() == "not yours\n"


def test_adv_a_fifo_in_place_of_a_created_file_is_refused_without_blocking(ws: Path, done: Any) -> None:
    state, _before, result = done
    (ws / "new.py").unlink()
    os.mkfifo(ws / "new.py")
    out = undo_on_disk(state, result.run_id)
    assert {"path": "new.py", "reason": "it is now a fifo; K1412 does not write over it"} in out["refused"]
    assert (ws / "new.py").is_fifo()


def test_a_write_that_failed_is_neither_restored_nor_refused(tmp_path: Path, ws: Path) -> None:
    (ws / "adir").mkdir()
    (ws / "adir" / "inside.txt").write_text("inside\n")
    result = run(make_runtime(tmp_path, ScriptedChatModel([
        {"tool_calls": [{"name": "write_file", "arguments": {"path": "adir", "content": "x"}}]},
        {"tool_calls": [{"name": "write_file", "arguments": {"path": "b.txt", "content": "b\n"}}]},
        {"content": "b.txt written.", "repeat": True}])), ws, "Write b.txt")
    out = undo_on_disk(tmp_path / "state", result.run_id)
    assert out["ok"] is True and out["restored"] == ["b.txt"] and out["refused"] == []
    assert not (ws / "b.txt").exists() and (ws / "adir" / "inside.txt").read_text() == "inside\n"


@pytest.mark.e2e
def test_adv_a_user_edit_made_while_the_model_thinks_is_what_undo_restores(tmp_path: Path, ws: Path) -> None:
    """The baseline is kept in the background at run start; the user edits before the first command:
    undo must give back the user's version, not the older copy (that would lose the user's edit)."""
    (ws / "x.txt").write_text("original\n")
    runtime = make_runtime(tmp_path, ScriptedChatModel([
        {"delay_s": 2.0, "tool_calls": [{"name": "run_command", "arguments": {"command": "echo agent > x.txt"}}]},
        {"content": "x.txt now says agent.", "repeat": True}]))

    async def scenario() -> Any:
        task = asyncio.create_task(runtime.run(RunRequest(task="Write agent into x.txt with a command",
                                                          workspace=ws)))
        index = tmp_path / "state" / "undo" / "index"
        for _ in range(200):
            if index.exists() and any(index.iterdir()):
                break
            await asyncio.sleep(0.01)
        (ws / "x.txt").write_text("the user's edit\n")
        return await task

    result = asyncio.run(scenario())
    assert (ws / "x.txt").read_text() == "agent\n"
    out = undo_on_disk(tmp_path / "state", result.run_id)
    assert out["ok"] is True and (ws / "x.txt").read_text() == "the user's edit\n"


def test_pruning_keeps_the_store_within_its_size_oldest_runs_first(tmp_path: Path, ws: Path, done: Any) -> None:
    state, _before, first = done
    from k1412_ls.tools.undo.undo_store import UndoLimits

    (ws / "big.txt").write_text("a" * 50_000)
    second = run(make_runtime(tmp_path, ScriptedChatModel([
        {"tool_calls": [{"name": "write_file", "arguments": {"path": "big.txt", "content": "b" * 50_000}}]},
        {"content": "big.txt written.", "repeat": True}])), ws, "Write big.txt")
    blobs = state / "undo" / "blobs"
    assert prune(state, UndoLimits()) == (0, 0)  # within limits: baseline copies stay for the next index
    # The second run's 50,000-byte copy alone fits: the first run's record and the copies nobody names go.
    removed, _ = prune(state, UndoLimits(max_total_bytes=50_010))
    assert removed == 1 and sum(p.stat().st_size for p in blobs.glob("*/*")) == 50_000
    assert "no undo record" in undo_on_disk(state, first.run_id)["message"]
    assert undo_on_disk(state, second.run_id)["restored"] == ["big.txt"]
    assert (ws / "big.txt").read_text() == "a" * 50_000
