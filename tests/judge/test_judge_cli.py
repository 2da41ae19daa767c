"""``k1412 judge`` and ``k1412 replay --export atif`` from the command line, and on real runs of other agents.

The real-data tests read every run file in the ``shared/trajectories`` folder beside the repository
and skip with a message where that folder is absent.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from k1412_ls.judge.discovery import find_runs
from k1412_ls.judge.reading import judge_file
from tests.support.cli import k1412
from tests.support.foreign_runs import GOOD_ACTIONS, PASSING_TESTS, observation, write_mini

REPO = Path(__file__).resolve().parents[2]
SHARED = REPO.parent / "shared" / "trajectories"


def _runs(tmp_path: Path) -> Path:
    folder = tmp_path / "runs"
    folder.mkdir()
    write_mini(folder / "good.traj.json", GOOD_ACTIONS)
    failing = [*GOOD_ACTIONS[:2], (PASSING_TESTS, observation(1, "1 failed, 2 passed in 0.03s\n"))]
    write_mini(folder / "bad.traj.json", failing, final="Fixed; all tests pass.")
    (folder / "labels.json").write_text(json.dumps([{"id": "good", "resolved": True},
                                                   {"id": "bad", "resolved": False}]))
    return folder


def test_exit_codes_say_completed_unverified_unreadable(tmp_path: Path) -> None:
    folder = _runs(tmp_path)
    assert k1412("judge", str(folder / "good.traj.json"), cwd=tmp_path).code == 0
    bad = k1412("judge", str(folder / "bad.traj.json"), cwd=tmp_path)
    assert bad.code == 3 and "unverified" in bad.stdout and "failed" in bad.stdout
    junk = tmp_path / "junk.traj.json"
    junk.write_text("not json at all")
    unreadable = k1412("judge", str(junk), str(folder / "good.traj.json"), cwd=tmp_path)
    assert unreadable.code == 2 and "unreadable" in unreadable.stdout and "Traceback" not in unreadable.stderr
    empty = tmp_path / "empty"
    empty.mkdir()
    nothing = k1412("judge", str(empty), cwd=tmp_path)
    assert nothing.code == 2 and "No runs found" in nothing.stderr


def test_json_lines_and_confusion_against_labels(tmp_path: Path) -> None:
    folder = _runs(tmp_path)
    result = k1412("judge", str(folder), "--json", "--labels", str(folder / "labels.json"), cwd=tmp_path)
    rows = [json.loads(line) for line in result.stdout.splitlines()]
    runs = {Path(r["file"]).name: r for r in rows[:-1]}
    assert runs["good.traj.json"]["status"] == "completed" and runs["good.traj.json"]["resolved"] is True
    assert runs["bad.traj.json"]["status"] == "unverified" and runs["bad.traj.json"]["missing"]
    assert {"file", "status", "contract", "missing", "steps", "mapped", "unmapped"} <= set(runs["good.traj.json"])
    assert all(c["mark"] in ("✓", "✗") for c in runs["bad.traj.json"]["contract"])
    confusion = rows[-1]["confusion"]
    assert confusion["completed_resolved"] == 1 and confusion["unverified_unresolved"] == 1
    assert confusion["p_resolved_given_completed"] == 1.0 and confusion["resolved_completed_share"] == 1.0
    assert confusion["base_rate"] == 0.5


def test_resolved_ids_labels_and_html_report(tmp_path: Path) -> None:
    folder = _runs(tmp_path)
    labels = tmp_path / "report.json"
    labels.write_text(json.dumps({"resolved_ids": ["bad"]}))  # every other run is unresolved
    page = tmp_path / "judge.html"
    result = k1412("judge", str(folder), "--labels", str(labels), "--html", str(page), cwd=tmp_path)
    assert "P(resolved | completed) = 0.00" in result.stdout and "P(resolved | unverified) = 1.00" in result.stdout
    html = page.read_text()
    assert "<svg" in html and "good.traj.json" in html and "resolved runs completed" in html
    broken = tmp_path / "broken.json"
    broken.write_text("[1, 2]")
    refused = k1412("judge", str(folder), "--labels", str(broken), cwd=tmp_path)
    assert refused.code == 2 and "no entry with both an id and an outcome" in refused.stderr


def test_task_option_replaces_the_runs_own_task(tmp_path: Path) -> None:
    folder = _runs(tmp_path)
    # Asked only to read calc.py, the run that read it is complete whatever else it did.
    result = k1412("judge", str(folder / "bad.traj.json"), "--task", "What does calc.py contain?", "--json",
                   cwd=tmp_path)
    row = json.loads(result.stdout.splitlines()[0])
    assert row["task"] == "What does calc.py contain?" and row["contract"][0]["item"] == "inspection"


def test_replay_exports_a_k1412_log_as_atif_that_judge_reads(tmp_path: Path) -> None:
    folder = _runs(tmp_path)
    log = tmp_path / "run.jsonl"
    from k1412_ls.judge.mapping import map_run
    from k1412_ls.judge.mini_swe_agent import parse_mini_swe_agent

    events = map_run(parse_mini_swe_agent(folder / "good.traj.json")).events
    log.write_text("".join(e.to_json() + "\n" for e in events))
    assert k1412("judge", str(log), cwd=tmp_path).code == 0  # the K1412 log itself
    exported = k1412("replay", str(log), "--export", "atif", cwd=tmp_path, env={"K1412_HOME": str(tmp_path)})
    assert exported.code == 0, exported.stderr
    atif = json.loads(exported.stdout)
    assert atif["schema_version"].startswith("ATIF") and atif["steps"][0]["source"] == "user"
    calls = [c for s in atif["steps"] for c in s.get("tool_calls", [])]
    assert calls and calls[0]["function_name"] == "run_command"
    path = tmp_path / "trajectory.json"
    path.write_text(exported.stdout)
    assert k1412("judge", str(path), "--format", "atif", cwd=tmp_path).code == 0


@pytest.fixture(scope="module")
def shared() -> Path:
    if not SHARED.is_dir():
        pytest.skip(f"{SHARED} is absent: the real runs are not on this machine")
    return SHARED


def test_every_real_run_is_read_by_its_own_parser(shared: Path) -> None:
    found = list(find_runs([shared]))
    formats = {fmt for _, fmt in found}
    assert {"mini-swe-agent", "terminal-bench", "claude-code"} <= formats
    judged = [judge_file(path, fmt) for path, fmt in found]
    unreadable = [j.file for j in judged if j.status == "unreadable"]
    assert unreadable == []
    by_format = {fmt: sum(1 for _, f in found if f == fmt) for fmt in formats}
    assert by_format["mini-swe-agent"] == len(list(shared.glob("swebench-*/trajs/*.traj.json")))
    assert by_format["terminal-bench"] == len(list(shared.glob("terminal-bench-*/trials/*/")))
    assert by_format["claude-code"] == len(list(shared.glob("claude-code-*/*/agent/claude-code.txt")))
    # Runs with steps are mostly mapped: a parser that lost its steps would show here.
    stepped = [j for j in judged if j.steps]
    assert sum(j.mapped for j in stepped) >= 0.9 * sum(j.steps for j in stepped)


def test_every_real_atif_file_is_read_too(shared: Path) -> None:
    files = list(shared.glob("claude-code-*/*/agent/trajectory.json"))
    if not files:
        pytest.skip("no ATIF files in the shared runs")
    judged = [judge_file(path, "atif") for path in files]
    assert [j.file for j in judged if j.status == "unreadable"] == []
    assert all(j.steps > 0 and j.task for j in judged)
