"""``k1412 stats`` through the real CLI over 30 recorded runs: every figure matches the run logs."""

from __future__ import annotations

import json
import math
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from tests.support.cli import k1412
from tests.support.eval_model import EvalModelServer, expected_counts, write_suite

pytestmark = pytest.mark.e2e

TERMINAL = ("run.completed", "run.unverified", "run.failed", "run.cancelled")


def _ts(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def _nearest_rank(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return round(ordered[max(1, math.ceil(fraction * len(ordered))) - 1], 3)


def _from_logs(logs: list[list[dict[str, Any]]], key: str) -> dict[Any, dict[str, Any]]:
    """The expected groups, computed straight from the JSONL events."""
    groups: dict[Any, dict[str, Any]] = {}
    for events in logs:
        created = next(e for e in events if e["type"] == "run.created")
        group = created["payload"]["model"] if key == "model" else events[0]["meta"].get(key)
        ending = [e for e in events if e["type"] in TERMINAL and e["depth"] == 0]
        entry = groups.setdefault(group, {"runs": 0, "status": {}, "cost": 0.0, "tokens": 0, "rejections": 0,
                                          "iterations": 0, "latency": []})
        entry["runs"] += 1
        status = ending[-1]["payload"]["status"] if ending else "unfinished"
        entry["status"][status] = entry["status"].get(status, 0) + 1
        entry["rejections"] += sum(1 for e in events if e["type"] == "completion.rejected" and e["depth"] == 0)
        entry["latency"].append((_ts(events[-1]["ts"]) - _ts(events[0]["ts"])).total_seconds())
        if ending:
            payload = ending[-1]["payload"]
            entry["cost"] += payload["cost"]["amount"]
            entry["tokens"] += payload["usage"]["prompt_tokens"] + payload["usage"]["completion_tokens"]
            entry["iterations"] += payload["iterations"]
    return groups


@pytest.fixture(scope="module")
def thirty_runs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A state dir holding 30 recorded runs (15 tasks × 2 arms, made by ``k1412 eval``) and one killed run."""
    root = tmp_path_factory.mktemp("stats")
    state = root / "state"
    with EvalModelServer() as server:
        suite = write_suite(root, server.base_url, tasks=15, experiment="stats-30")
        run = k1412("eval", str(suite), "--workers", "2", "--json", cwd=root,
                    env={"K1412_HOME": str(state)}, timeout=240)
    assert run.code == 0, run.stderr
    logs = sorted((state / "runs").glob("*.jsonl"))
    assert len(logs) == 30
    # A run killed mid-way: its log has no ending.
    lines = logs[0].read_text().splitlines()
    (state / "runs" / "run-killed0000000.jsonl").write_text(
        "\n".join(line.replace(json.loads(lines[0])["run_id"], "run-killed0000000") for line in lines[:4]) + "\n")
    return state


@pytest.mark.parametrize("group_by", ["arm", "model", "experiment", "policy"])
def test_stats_json_matches_the_logs(thirty_runs: Path, group_by: str) -> None:
    run = k1412("stats", "--group-by", group_by, "--json", cwd=thirty_runs, env={"K1412_HOME": str(thirty_runs)})
    assert run.code == 0, run.stderr
    report = json.loads(run.stdout)
    logs = [[json.loads(line) for line in path.read_text().splitlines() if line.strip()]
            for path in sorted((thirty_runs / "runs").glob("*.jsonl"))]
    expected = _from_logs(logs, group_by)
    assert report["runs"] == 31
    assert {g["key"] for g in report["groups"]} == set(expected)
    for group in report["groups"]:
        want = expected[group["key"]]
        assert set(group) >= {"key", "runs", "by_status", "cost", "latency_s"}
        assert group["runs"] == want["runs"]
        assert {k: v for k, v in group["by_status"].items() if v} == want["status"]
        assert group["cost"]["amount"] == pytest.approx(want["cost"]) and group["cost"]["currency"] == "USD"
        assert group["tokens"]["total_tokens"] == want["tokens"]
        assert group["rejections"] == want["rejections"] and group["iterations"] == want["iterations"]
        assert group["latency_s"] == {"p50": _nearest_rank(want["latency"], 0.5),
                                      "p95": _nearest_rank(want["latency"], 0.95)}
    if group_by == "arm":
        # What the scripted arms do with 15 tasks, plus the killed copy of one run, unfinished.
        by_arm = {g["key"]: g["by_status"] for g in report["groups"]}
        for arm, counts in expected_counts(15, 1).items():
            assert by_arm[arm]["completed"] == counts["completed"]
            assert by_arm[arm]["unverified"] == counts["unverified"]
        assert sum(status.get("unfinished", 0) for status in by_arm.values()) == 1
        assert sum(g["rejections"] for g in report["groups"]) > 0


def test_stats_since_filters_and_bad_input_is_one_sentence(thirty_runs: Path) -> None:
    env = {"K1412_HOME": str(thirty_runs)}
    later = json.loads(k1412("stats", "--since", "2999-01-01", "--json", cwd=thirty_runs, env=env).stdout)
    assert later == {"runs": 0, "group_by": "model", "since": "2999-01-01T00:00:00+00:00", "groups": []}
    recent = json.loads(k1412("stats", "--since", "1d", "--json", cwd=thirty_runs, env=env).stdout)
    assert recent["runs"] == 31
    table = k1412("stats", "--group-by", "arm", cwd=thirty_runs, env=env)
    assert table.code == 0 and "careful" in table.stdout and "31 runs" in table.stdout
    bad = k1412("stats", "--since", "last tuesday", cwd=thirty_runs, env=env)
    assert bad.code == 2 and bad.stderr.count("\n") == 1 and "--since takes a date" in bad.stderr
    assert "Traceback" not in bad.stderr
