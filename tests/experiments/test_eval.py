"""``k1412 eval`` through the real CLI on the local process pool: per-arm verdicts, independent checks,
gate precision and recall, cost, event logs filed with experiment and arm; bad suites in one sentence."""

from __future__ import annotations

import json
import socket
from pathlib import Path
from typing import Any

import pytest

from tests.support.cli import k1412
from tests.support.eval_model import USAGE, EvalModelServer, expected_counts, write_suite

pytestmark = pytest.mark.e2e

ARM_KEYS = {"name", "runs", "completed", "unverified", "failed", "check_passed", "gate_precision", "gate_recall",
            "cost", "latency_s"}
CALL_COST = ((USAGE["prompt_tokens"] - USAGE["cached_tokens"]) * 2.0 + USAGE["cached_tokens"] * 0.5
             + USAGE["completion_tokens"] * 8.0) / 1e6


def _eval(root: Path, *args: str, tasks: int = 10) -> tuple[Any, Path]:
    state = root / "state"
    with EvalModelServer() as server:
        suite = write_suite(root, server.base_url, tasks=tasks)
        run = k1412("eval", str(suite), *args, cwd=root, env={"K1412_HOME": str(state)}, timeout=280)
    return run, state


def test_eval_reports_each_arm_against_independent_checks(tmp_path: Path) -> None:
    run, state = _eval(tmp_path, "--json", "--workers", "2")
    assert run.code == 0, run.stderr
    report = json.loads(run.stdout)
    assert report["experiment"] == "suite-test"
    expected = expected_counts(10, 1)
    for arm in report["arms"]:
        assert set(arm) >= ARM_KEYS
        want = expected[arm["name"]]
        assert (arm["runs"], arm["completed"], arm["unverified"], arm["failed"], arm["check_passed"]) == \
            (want["runs"], want["completed"], want["unverified"], 0, want["check_passed"])
        assert arm["gate_precision"] == pytest.approx(want["true_positives"] / want["completed"], abs=1e-4)
        assert arm["gate_recall"] == pytest.approx(want["true_positives"] / want["check_passed"], abs=1e-4)
        calls = sum(row["iterations"] for row in report["runs"] if row["arm"] == arm["name"])
        assert arm["cost"] == {"amount": pytest.approx(calls * CALL_COST), "currency": "USD", "priced": True}
        assert arm["latency_s"]["p50"] <= arm["latency_s"]["p95"]
    # The gate is not the check: the "careful" arm has a completed run whose check failed and an
    # unverified run whose check passed, so neither metric is a trivial 1.
    careful = next(a for a in report["arms"] if a["name"] == "careful")
    assert careful["gate_precision"] < 1 and careful["gate_recall"] < 1
    # Every run's log is filed in this machine's state dir, carrying the experiment and its arm.
    assert len(report["runs"]) == 20
    for row in report["runs"]:
        events = [json.loads(line) for line in Path(row["events_path"]).read_text().splitlines()]
        assert Path(row["events_path"]).parent == state / "runs"
        assert all(e["meta"]["experiment"] == "suite-test" and e["meta"]["arm"] == row["arm"] for e in events)
        assert events[-1]["payload"]["status"] == row["status"]
    # The fixture was copied into each workspace (and the check ran there, not here).
    assert not list(tmp_path.glob("t0*.txt"))
    table = k1412("stats", "--group-by", "arm", "--json", cwd=tmp_path, env={"K1412_HOME": str(state)})
    by_arm = {g["key"]: g["by_status"]["completed"] for g in json.loads(table.stdout)["groups"]}
    assert by_arm == {name: counts["completed"] for name, counts in expected.items()}


def test_eval_text_output_and_repeat(tmp_path: Path) -> None:
    run, _ = _eval(tmp_path, "--repeat", "2", tasks=2)
    assert run.code == 0, run.stderr
    assert "careful" in run.stdout and "precision" in run.stdout
    assert "[8/8]" in run.stderr


@pytest.mark.parametrize(("suite", "message"), [
    ('[[task]]\nid = "a"\ntask = "x"\n', "key 'arm': Field required"),
    ('[[task]]\nid = "a"\ntask = "x"\n[[arm]]\nname = "a"\nmodel = "nope"\n', "arm 'a': Unknown model 'nope'"),
    ('[[task]]\nid = "a"\ntask = "x"\nworkspace = "missing"\n[[arm]]\nname = "a"\nmodel = "luna"\n',
     "names workspace 'missing'"),
    ('[[task]]\nid = "a"\ntask = "x"\n[[task]]\nid = "a"\ntask = "y"\n[[arm]]\nname = "a"\nmodel = "luna"\n',
     "task id 'a' is used twice"),
    ('[[task]]\nid = "a"\ntask = "x"\nretries = 2\n[[arm]]\nname = "a"\nmodel = "luna"\n', "key 'task.0.retries'"),
    ("[[task]\n", "Invalid TOML in suite file"),
    ('[[task]]\nid = "a"\ntask = "x"\n[[arm]]\nname = "a"\nmodel = "scripted-free"\n[arm.config.budget]\n'
     "max_cost = 1.0\n", "has a cost budget but model 'scripted-free' has no pricing"),
])
def test_bad_suites_are_one_sentence_and_exit_2(tmp_path: Path, suite: str, message: str) -> None:
    path = tmp_path / "suite.toml"
    path.write_text(suite)
    (tmp_path / "cfg.toml").write_text('[models.scripted-free]\nprovider = "local"\nprovider_model = "m"\n')
    run = k1412("eval", str(path), "--config", str(tmp_path / "cfg.toml"), cwd=tmp_path)
    assert run.code == 2, run.stderr
    assert message in run.stderr and run.stderr.count("\n") == 1 and "Traceback" not in run.stderr


def test_missing_suite_and_bad_counts(tmp_path: Path) -> None:
    missing = k1412("eval", str(tmp_path / "none.toml"), cwd=tmp_path)
    assert missing.code == 2 and "does not exist" in missing.stderr
    zero = k1412("eval", str(tmp_path / "none.toml"), "--repeat", "0", cwd=tmp_path)
    assert zero.code == 2 and "must be 1 or more" in zero.stderr


def test_an_unreachable_ray_cluster_is_one_sentence(tmp_path: Path) -> None:
    with EvalModelServer() as server:
        suite = write_suite(tmp_path, server.base_url, tasks=1)
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]  # nothing listens here once the socket is closed
    run = k1412("eval", str(suite), "--ray", f"127.0.0.1:{port}", cwd=tmp_path, timeout=60)
    assert run.code == 2 and "Cannot reach the Ray cluster" in run.stderr and run.stderr.count("\n") == 1
    bad = k1412("eval", str(suite), "--ray", "head-node", cwd=tmp_path)
    assert bad.code == 2 and "HOST:PORT" in bad.stderr


def test_an_arm_runs_with_its_own_configuration_overrides(tmp_path: Path) -> None:
    state = tmp_path / "state"
    with EvalModelServer() as server:
        suite = write_suite(tmp_path, server.base_url, tasks=2)
        suite.write_text(suite.read_text() + '[[arm]]\nname = "capped"\nmodel = "careful"\n'
                         "[arm.config.budget]\nmax_tokens = 1500\n")
        run = k1412("eval", str(suite), "--json", cwd=tmp_path, env={"K1412_HOME": str(state)}, timeout=120)
    assert run.code == 0, run.stderr
    arms = {arm["name"]: arm for arm in json.loads(run.stdout)["arms"]}
    assert arms["careful"]["completed"] == 2
    # Same model, but a 1,500-token budget: each call uses 1,100, so the second one ends the run.
    assert arms["capped"]["completed"] == 0 and arms["capped"]["unverified"] == 2
    capped = [row for row in json.loads(run.stdout)["runs"] if row["arm"] == "capped"]
    assert all("token budget" in row["message"] and row["iterations"] == 2 for row in capped)
    events = [json.loads(line) for line in Path(capped[0]["events_path"]).read_text().splitlines()]
    assert events[0]["meta"]["budget"] == "max_tokens=1500" and events[0]["meta"]["arm"] == "capped"
