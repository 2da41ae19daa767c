"""``k1412 replay`` of a run that never finished (killed) says so, and compares nothing.

It used to print ``"recorded": null, "agrees": true``: a killed run looked like one whose verdict
had been re-checked and confirmed.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.support.cli import config_for, k1412
from tests.support.scripted_server import ScriptedServer

pytestmark = pytest.mark.e2e

REPO = Path(__file__).resolve().parents[3]
SCRIPT = [
    {"tool_calls": [{"name": "write_file", "arguments": {"path": "a.txt", "content": "one\n"}}]},
    {"delay_s": 60, "content": "never sent"},
]


def _killed_run_log(tmp_path: Path, ws: Path, home: Path) -> Path:
    with ScriptedServer(SCRIPT) as server:
        proc = subprocess.Popen(
            [sys.executable, "-m", "k1412_ls.cli", "run", "Create a.txt", "--config",
             str(config_for(tmp_path, server.base_url)), "--json"],
            cwd=ws, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            env=os.environ.copy())
        try:
            deadline = time.monotonic() + 60
            while len(server.chat_requests) < 2:  # the write ran; the second model call hangs
                assert proc.poll() is None and time.monotonic() < deadline
                time.sleep(0.05)
            time.sleep(0.2)
        finally:
            proc.send_signal(signal.SIGKILL)
            proc.communicate(timeout=30)
    (log,) = (home / "runs").glob("*.jsonl")
    return log


def test_replay_json_of_a_killed_run_says_unfinished(tmp_path: Path, ws: Path, isolated_home: Path) -> None:
    log = _killed_run_log(tmp_path, ws, isolated_home)
    types = [json.loads(line)["type"] for line in log.read_text().splitlines()]
    assert "tool.completed" in types and not any(t.startswith("run.") and t != "run.created" for t in types)
    replay = k1412("replay", str(log), "--json", cwd=ws)
    assert replay.code == 0, replay.stderr
    report = json.loads(replay.stdout)
    assert report["recorded"] == "unfinished"
    assert report["agrees"] is None  # nothing was recorded, so nothing agrees or disagrees
    text = k1412("replay", str(log), cwd=ws)
    assert "recorded verdict: unfinished" in text.stdout
    assert "disagrees" not in text.stdout


def test_replay_of_a_log_torn_mid_line_says_unfinished(tmp_path: Path, ws: Path, isolated_home: Path) -> None:
    log = _killed_run_log(tmp_path, ws, isolated_home)
    torn = tmp_path / "torn.jsonl"
    torn.write_text(log.read_text() + '{"run_id": "x", "seq": 99, "type": "run.compl')
    report = json.loads(k1412("replay", str(torn), "--json", cwd=ws).stdout)
    assert report["recorded"] == "unfinished" and report["agrees"] is None
