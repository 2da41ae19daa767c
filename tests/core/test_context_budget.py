"""Acceptance of context policy recent-visible-v3 through the real ``k1412 run`` CLI and the scripted server.

* A 60-step run (30 reads of 14 KB files, 10 commands printing 9 KB, a write at step 1 verified at
  step 58) at ``context_chars = 40000``: every request within 1.1 x the budget, the run completes with
  the step-1 write still counted, and at least 70 % of requests extend the previous one byte for byte.
* A provider that refuses above 30k characters while the configuration claims 200k: the run recovers.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.support.cli import CliRun, config_for, k1412
from tests.support.long_run import SCRIPT_PATH, TASK, make_script, make_workspace, request_stats
from tests.support.scripted_server import ScriptedServer, request_chars

# Six runs of 60 steps through the CLI (~35 s): the slow tier, run by .ci/run (`pytest -m slow`).
pytestmark = pytest.mark.slow

BUDGET = 40_000


def long_run(tmp_path: Path, ws: Path, script: list[dict[str, Any]], context_chars: int,
             **server: Any) -> tuple[CliRun, list[dict[str, Any]], ScriptedServer]:
    make_workspace(ws)
    with ScriptedServer(script, **server) as scripted:
        cfg = config_for(tmp_path, scripted.base_url, f"context_chars = {context_chars}\n")
        cfg.write_text(cfg.read_text().replace("max_iterations = 12", "max_iterations = 80"))
        run = k1412("run", TASK, "--config", str(cfg), "--json", cwd=ws, timeout=240)
        bodies = [r["body"] for r in scripted.chat_requests]
    return run, bodies, scripted


def test_a_60_step_run_fits_40k_keeps_its_step_1_evidence_and_reuses_prefixes(tmp_path: Path, ws: Path) -> None:
    run, bodies, _ = long_run(tmp_path, ws, make_script(), BUDGET)
    assert run.code == 0, (run.stderr, run.stdout[-2000:])
    result = run.result
    assert result["status"] == "completed" and result["files_changed"] == [SCRIPT_PATH]
    assert "artifact" in result["evidence"]["satisfied"] and not result["evidence"]["missing"]
    stats = request_stats(bodies)
    assert stats.requests == 60
    assert stats.largest_chars <= 1.1 * BUDGET, stats
    assert stats.extend_share >= 0.70, stats
    events = run.events()
    # The write happened in the first step and its verification in step 58 ...
    write = next(e for e in events if e["type"] == "tool.completed" and e["payload"]["tool"] == "write_file")
    verify = next(e for e in events if e["type"] == "tool.completed"
                  and e["payload"]["args"].get("command") == f"python3 {SCRIPT_PATH}")
    requested = [e for e in events if e["type"] == "model.requested"]
    assert [r["payload"]["iteration"] for r in requested if r["seq"] < write["seq"]] == [1]
    assert len([r for r in requested if r["seq"] < verify["seq"]]) == 58
    missing = {r["payload"]["iteration"]: r["payload"]["verification"]["missing"] for r in requested}
    assert any("summary.py was written but never verified" in m for m in missing[58])
    assert missing[59] == []  # the step-58 run verified the step-1 write
    # ... the step-1 call had long left the model's context by then (folded into the digest) ...
    step_58 = json.dumps(bodies[57]["messages"])
    assert '"name": "write_file"' not in step_58 and "summary.py (create, 14 B, sha256" in step_58
    # ... and the gate still counted it: it judges the events, never the digest.
    assert any(e["type"] == "context.compacted" and e["payload"]["steps_folded"] for e in events)
    built = next(e for e in events if e["type"] == "context.built")["payload"]
    assert built["policy"] == "recent-visible-v3" and built["budget_chars"] == BUDGET
    assert built["schema_chars"] > 0 and built["chars"] > built["schema_chars"]
    assert all(e["meta"]["context_policy"] == "recent-visible-v3" for e in events)


def test_the_same_run_without_the_late_verification_is_not_completed(tmp_path: Path, ws: Path) -> None:
    # Positive control: the step-58 run is what proves the write; without it the run is unverified.
    script = make_script()
    script[57] = {"tool_calls": [{"name": "stat_path", "arguments": {"path": "src"}}]}
    script[-1] = {**script[-1], "repeat": True}  # the model insists; the gate rejects it each time
    run, _, _ = long_run(tmp_path, ws, script, BUDGET)
    assert run.code == 3 and run.result["status"] == "unverified", run.stdout[-2000:]


@pytest.mark.parametrize("refusal", ["openai", "llama.cpp", "bare"])
def test_a_provider_refusing_above_30k_while_the_config_claims_200k_recovers(tmp_path: Path, ws: Path,
                                                                           refusal: str) -> None:
    run, bodies, scripted = long_run(tmp_path, ws, make_script(), 200_000, max_chars=30_000, refusal=refusal)
    assert run.code == 0, (run.stderr, run.stdout[-2000:])
    assert run.result["status"] == "completed"
    events = run.events()
    overflows = [e["payload"] for e in events if e["type"] == "context.overflowed"]
    assert overflows and scripted.refused == len(overflows) <= 3
    if refusal == "bare":
        assert not overflows[0]["learned_window"]
    else:
        assert overflows[0]["learned_window"] and overflows[0]["window_tokens"] == 7_500
        assert len(overflows) == 1  # learned once, used for the rest of the run
    answered = [b for b in bodies if request_chars(b) <= 30_000]
    assert len(answered) == 60
    final_budget = [e["payload"]["budget_chars"] for e in events if e["type"] == "model.requested"][-1]
    assert final_budget == overflows[-1]["budget_chars"] < 30_000


def test_a_provider_whose_window_cannot_hold_the_minimum_fails_in_one_sentence(tmp_path: Path, ws: Path) -> None:
    run, _, scripted = long_run(tmp_path, ws, make_script(), 200_000, max_chars=4_000)
    assert run.code == 4 and run.result["status"] == "failed"
    message = run.result["message"]
    assert "\n" not in message and message.count(". ") == 0 and message.endswith(".")
    assert "context" in message
    assert scripted.refused <= 4  # bounded: the first request and at most three smaller retries
