"""Gateway and scheduler behaviour through the real CLI (issues 3 and 4 acceptance)."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import time
from datetime import datetime
from pathlib import Path

import pytest

from tests.support.cli import config_for, k1412
from tests.support.scripted_server import ScriptedServer

pytestmark = pytest.mark.e2e


def run_script(tmp_path: Path, ws: Path, task: str, script: list[dict]) -> tuple[dict, list[dict], list[dict]]:
    """Play ``script``; its final answer repeats, so the verdict (not the script) decides how the run ends."""
    script = [*script[:-1], {**script[-1], "repeat": True}]
    with ScriptedServer(script) as server:
        run = k1412("run", task, "--config", str(config_for(tmp_path, server.base_url)), "--json", cwd=ws,
                    timeout=120)
        requests = server.chat_requests
    assert run.code in (0, 3), run.stderr
    return run.result, run.events(), requests


def results_of(request: dict) -> list[dict]:
    return [json.loads(m["content"]) for m in request["body"]["messages"] if m["role"] == "tool"]


def test_huge_output_is_capped_with_tail_and_marker(tmp_path: Path, ws: Path) -> None:
    command = "yes | head -c 20000000; echo THE-END"
    _, _, requests = run_script(tmp_path, ws, "Run the generator and tell me how it ends", [
        {"tool_calls": [{"name": "run_command", "arguments": {"command": command}}]},
        {"content": "It ends with THE-END."},
    ])
    result = results_of(requests[1])[-1]
    message = requests[1]["body"]["messages"][-1]["content"]
    assert len(message.encode()) < 200_000
    assert result["exit_code"] == 0 and result["output"].rstrip().endswith("THE-END")
    assert "omitted" in result["output"]


def test_background_grandchild_dies_on_timeout(tmp_path: Path, ws: Path) -> None:
    marker = f"sleep 97.{os.getpid()}"
    started = time.monotonic()
    _, _, requests = run_script(tmp_path, ws, "Run the job with a short timeout", [
        {"tool_calls": [{"name": "run_command", "arguments": {"command": f"({marker} &) ; {marker}",
                                                              "timeout_s": 2}}]},
        {"content": "It timed out."},
    ])
    result = results_of(requests[1])[-1]
    assert not result["ok"] and result.get("timed_out") is True
    assert time.monotonic() - started < 30
    time.sleep(0.3)
    assert subprocess.run(["pgrep", "-f", marker], capture_output=True).returncode == 1


def test_patch_file_keeps_mode_and_crlf_bytes(tmp_path: Path, ws: Path) -> None:
    script_path = ws / "run.sh"
    script_path.write_text("#!/bin/sh\necho old\n")
    script_path.chmod(0o755)
    crlf = ws / "win.txt"
    crlf.write_bytes(b"line one\r\nline two\r\nline three\r\n")
    run_script(tmp_path, ws, "Change old to new in run.sh and two to 2 in win.txt", [
        {"tool_calls": [
            {"name": "patch_file", "arguments": {"path": "run.sh", "edits": [{"old_text": "echo old",
                                                                              "new_text": "echo new"}]}},
            {"name": "patch_file", "arguments": {"path": "win.txt", "edits": [{"old_text": "line two",
                                                                               "new_text": "line 2"}]}},
        ]},
        {"tool_calls": [{"name": "run_command", "arguments": {"command": "./run.sh"}}]},
        {"content": "Done."},
    ])
    assert stat.S_IMODE(script_path.stat().st_mode) == 0o755
    assert script_path.read_text() == "#!/bin/sh\necho new\n"
    assert crlf.read_bytes() == b"line one\r\nline 2\r\nline three\r\n"


def test_parallel_polls_overlap(tmp_path: Path, ws: Path) -> None:
    polls = [{"name": "process_poll", "arguments": {"process_id": "p1", "wait_s": 1.5}} for _ in range(4)]
    _, events, requests = run_script(tmp_path, ws, "Start a background process and poll it", [
        {"tool_calls": [{"name": "process_start", "arguments": {"command": "sleep 30"}}]},
        {"tool_calls": polls},
        {"content": "Still running."},
    ])
    assert all(r["ok"] for r in results_of(requests[2])[-4:])
    done = [e for e in events if e["type"] == "tool.completed" and e["payload"]["tool"] == "process_poll"]
    started = [e for e in events if e["type"] == "tool.started" and e["payload"]["tool"] == "process_poll"]
    stamps = [datetime.fromisoformat(e["ts"].replace("Z", "+00:00")) for e in (*started, *done)]
    wall = (max(stamps) - min(stamps)).total_seconds()
    assert len(done) == 4 and wall < 4 * 1.5 * 0.6  # overlapped, not 6 s in a row
    assert all(e["payload"]["run_ms"] >= 1400 for e in done)


def test_guards_refuse_nonsense_and_repeats(tmp_path: Path, ws: Path) -> None:
    (ws / "README.md").write_text("# readme\n")
    _, _, requests = run_script(tmp_path, ws, "Run the tests of this project", [
        {"tool_calls": [{"name": "run_command", "arguments": {"command": "python3"}},
                        {"name": "run_command", "arguments": {"command": "./README.md"}},
                        {"name": "write_file", "arguments": {"path": "bad.py", "content": "def f(:\n  pass\n"}}]},
        {"tool_calls": [{"name": "run_command", "arguments": {"command": "python3 -c 'import sys; sys.exit(2)'"}}]},
        {"tool_calls": [{"name": "run_command", "arguments": {"command": "python3 -c 'import sys; sys.exit(2)'"}}]},
        {"tool_calls": [{"name": "write_file", "arguments": {"path": "ok.py", "content": "print(1)\n"}}]},
        {"tool_calls": [{"name": "write_file", "arguments": {"path": "ok.py", "content": "print(1)\n"}}]},
        {"tool_calls": [{"name": "run_command", "arguments": {"command": "echo once >> log.txt"}},
                        {"name": "run_command", "arguments": {"command": "echo once >> log.txt"}}]},
        {"content": "Done."},
    ])
    bare, document, syntax = results_of(requests[1])[-3:]
    assert not bare["ok"] and "interactive" in bare["error"]
    assert not document["ok"] and "README.md" in document["error"]
    assert not syntax["ok"] and "line 1" in syntax["error"]
    assert not (ws / "bad.py").exists()
    first_fail = results_of(requests[2])[-1]
    repeat = results_of(requests[3])[-1]
    assert not first_fail["ok"] and first_fail["exit_code"] == 2
    assert not repeat["ok"] and "already failed" in repeat["error"]
    second_write = results_of(requests[5])[-1]
    assert second_write["ok"] and second_write.get("unchanged") is True
    dup_a, dup_b = results_of(requests[6])[-2:]
    assert dup_a["ok"] and dup_b["ok"]
    assert (ws / "log.txt").read_text() == "once\n"
