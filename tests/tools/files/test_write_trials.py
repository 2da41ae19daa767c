"""Stress trials: real ``k1412 run`` processes (and a ``k1412 lsp`` run) patching one 1.5 MB file.

Each run patches its own lines (``A-NNNN todo`` → ``A-NNNN done``) in batches of
``read_file`` + three ``patch_file`` calls. Some calls are refused as stale (the other process
wrote since this run last read the file); none that reported ``ok`` may be missing from the
final file. Run with ``pytest -m stress`` (``.ci/run`` does).
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.support.cli import config_for
from tests.support.scripted_server import ScriptedServer
from tests.support.write_race import line, make_file

pytestmark = pytest.mark.stress

EDITS = 12
STALE = "changed since you last read it"


def script_for(prefix: str, edits: int = EDITS) -> list[dict[str, Any]]:
    """Batches of read_file + 3 patch_file calls (ids name the edit), then a final answer."""
    steps: list[dict[str, Any]] = []
    for first in range(0, edits, 3):
        calls: list[dict[str, Any]] = [{"name": "read_file", "id": f"read-{prefix}-{first}",
                                        "arguments": {"path": "big.txt", "start_line": 1, "end_line": 2}}]
        for index in range(first, min(first + 3, edits)):
            edit = {"old_text": line(prefix, index) + "\n", "new_text": line(prefix, index, "done") + "\n"}
            calls.append({"name": "patch_file", "id": f"edit-{prefix}-{index}",
                          "arguments": {"path": "big.txt", "edits": [edit]}})
        steps.append({"tool_calls": calls})
    steps.append({"content": f"Marked the {prefix} lines done in big.txt.", "repeat": True})
    return steps


def outcomes(events: list[dict[str, Any]]) -> dict[int, dict[str, Any]]:
    """Edit index → {ok, error} from a run's tool.completed events."""
    found: dict[int, dict[str, Any]] = {}
    for event in events:
        payload = event.get("payload", {})
        call_id = str(payload.get("call_id", ""))
        if event.get("type") == "tool.completed" and call_id.startswith("edit-"):
            found[int(call_id.rsplit("-", 1)[1])] = {"ok": payload["ok"], "error": payload.get("error", "")}
    return found


def judge(path: Path, prefix: str, results: dict[int, dict[str, Any]]) -> dict[str, int]:
    final = set(path.read_text(encoding="utf-8").split("\n"))
    ok = [i for i, r in results.items() if r["ok"]]
    lost = [i for i in ok if line(prefix, i, "done") not in final]
    refused = [r for r in results.values() if not r["ok"]]
    assert all(STALE in r["error"] for r in refused), [r["error"] for r in refused][:3]
    return {"ok": len(ok), "refused": len(refused), "lost": len(lost)}


def cli_run(tmp_path: Path, ws: Path, prefix: str, base_url: str) -> subprocess.Popen[str]:
    folder = tmp_path / prefix
    folder.mkdir()
    return subprocess.Popen(
        [sys.executable, "-m", "k1412_ls.cli", "run", f"Mark every {prefix} line of big.txt done",
         "--config", str(config_for(folder, base_url)), "--events", str(tmp_path / f"{prefix}.jsonl"), "--json"],
        cwd=ws, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env=os.environ.copy())


def read_events(path: Path) -> list[dict[str, Any]]:
    return [json.loads(raw) for raw in path.read_text().splitlines() if raw.strip()]


@pytest.mark.parametrize("trial", range(30))
def test_two_cli_runs_patching_one_file_lose_no_ok_edit(tmp_path: Path, trial: int) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    make_file(ws / "big.txt", ("A", "B"), EDITS)
    with ScriptedServer(script_for("A")) as server_a, ScriptedServer(script_for("B")) as server_b:
        procs = [cli_run(tmp_path, ws, "A", server_a.base_url), cli_run(tmp_path, ws, "B", server_b.base_url)]
        for proc in procs:
            proc.communicate(timeout=240)
    tally = {prefix: judge(ws / "big.txt", prefix, outcomes(read_events(tmp_path / f"{prefix}.jsonl")))
             for prefix in "AB"}
    print(f"trial {trial}: {tally}")
    assert all(t["lost"] == 0 for t in tally.values()), tally
    assert sum(t["ok"] for t in tally.values()) > 0


@pytest.mark.parametrize("trial", range(10))
async def test_an_lsp_run_beside_a_cli_run_loses_no_ok_edit(tmp_path: Path, trial: int) -> None:
    from k1412_ls.lsp import constants as c
    from tests.support.lsp_client import lsp_session

    async with lsp_session(tmp_path, script_for("B")) as session:
        make_file(session.root / "big.txt", ("A", "B"), EDITS)
        with ScriptedServer(script_for("A")) as server_a:
            cli = cli_run(tmp_path, session.root, "A", server_a.base_url)
            pending = session.send_command(c.CMD_RUN_TASK, {"task": "Mark every B line of big.txt done"})[1]
            await asyncio.wait_for(pending, 240)
            await asyncio.get_running_loop().run_in_executor(None, lambda: cli.communicate(timeout=240))
        lsp = {int(r.call_id.rsplit("-", 1)[1]): {"ok": r.ok, "error": getattr(r, "error", "") or ""}
               for r in session.tool_results() if str(r.call_id).startswith("edit-")}
        tally_b = judge(session.root / "big.txt", "B", lsp)
        tally_a = judge(session.root / "big.txt", "A", outcomes(read_events(tmp_path / "A.jsonl")))
    print(f"trial {trial}: lsp {tally_b} cli {tally_a}")
    assert tally_a["lost"] == 0 and tally_b["lost"] == 0, (tally_a, tally_b)
    assert tally_a["ok"] + tally_b["ok"] > 0
