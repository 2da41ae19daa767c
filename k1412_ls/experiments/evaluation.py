"""``k1412 eval``: every task × every arm × ``repeat`` runs, their checks, and the per-arm verdict.

Gate precision = runs the gate called ``completed`` whose check passed / ``completed`` runs that have a
check; gate recall = ``completed`` runs whose check passed / runs whose check passed. Both are None when
their denominator is 0 (no evidence either way), never a made-up 0 or 1.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from k1412_ls.core.cost import Cost
from k1412_ls.experiments.jobs import JobOutcome, RunJob, pack_workspace
from k1412_ls.experiments.run_records import STATUSES, percentile
from k1412_ls.experiments.suite import Suite


def build_jobs(suite: Suite, repeat: int) -> list[RunJob]:
    """The suite's runs, repeat by repeat (so a cut-short evaluation still covers every task and arm)."""
    archives = {task.id: pack_workspace(suite.fixture(task)) for task in suite.tasks}
    jobs: list[RunJob] = []
    for number in range(1, repeat + 1):
        for task in suite.tasks:
            for arm in suite.arms:
                jobs.append(RunJob(
                    experiment=suite.experiment, arm=arm.name, task_id=task.id, repeat=number, task=task.task,
                    model=arm.model, config=suite.arm_configs[arm.name], config_source=suite.source_of(arm),
                    workspace_tar=archives[task.id], check=task.check, check_timeout_s=suite.spec.check_timeout_s,
                ))
    return jobs


def file_log(outcome: JobOutcome, state_dir: Path) -> str | None:
    """Put the run's event log into this machine's state dir; its path (None when the run left none)."""
    if not outcome.run_id or not outcome.events:
        return None
    path = state_dir / "runs" / f"{outcome.run_id}.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(outcome.events, encoding="utf-8")
    return str(path)


def _ratio(numerator: int, denominator: int) -> float | None:
    return round(numerator / denominator, 4) if denominator else None


def arm_summary(name: str, outcomes: list[JobOutcome]) -> dict[str, Any]:
    """One arm's line of the report (the shape ``k1412 eval --json`` prints per arm)."""
    counts = {status: sum(1 for o in outcomes if o.status == status) for status in STATUSES}
    checked = [o for o in outcomes if o.check_passed is not None]
    passed = [o for o in checked if o.check_passed]
    completed_checked = [o for o in checked if o.status == "completed"]
    true_positives = sum(1 for o in completed_checked if o.check_passed)
    cost = Cost()
    for outcome in outcomes:
        cost = cost + Cost.from_dict(outcome.cost)
    latencies = [o.latency_s for o in outcomes]
    tokens = sum(int(o.usage.get("prompt_tokens", 0)) + int(o.usage.get("completion_tokens", 0)) for o in outcomes)
    return {
        "name": name,
        "runs": len(outcomes),
        "completed": counts["completed"],
        "unverified": counts["unverified"],
        "failed": counts["failed"],
        "cancelled": counts["cancelled"],
        "checked": len(checked),
        "check_passed": len(passed),
        "check_pass_rate": _ratio(len(passed), len(checked)),
        "gate_precision": _ratio(true_positives, len(completed_checked)),
        "gate_recall": _ratio(true_positives, len(passed)),
        "tokens": tokens,
        "cost": cost.as_dict(),
        "latency_s": {"p50": percentile(latencies, 0.5), "p95": percentile(latencies, 0.95)},
    }


def evaluate(suite: Suite, jobs: list[RunJob], outcomes: Iterable[JobOutcome], state_dir: Path,
             on_outcome: Callable[[int, int, JobOutcome], None] | None = None) -> dict[str, Any]:
    """Collect every outcome (filing its log), then the report: per arm, and every run."""
    collected: list[JobOutcome] = []
    rows: list[dict[str, Any]] = []
    for outcome in outcomes:
        collected.append(outcome)
        row = outcome.row()
        row["events_path"] = file_log(outcome, state_dir)
        rows.append(row)
        if on_outcome is not None:
            on_outcome(len(collected), len(jobs), outcome)
    rows.sort(key=lambda r: (r["repeat"], r["task_id"], r["arm"]))
    arms = [arm_summary(arm.name, [o for o in collected if o.arm == arm.name]) for arm in suite.arms]
    return {"experiment": suite.experiment, "suite": str(suite.path), "repeat": max((j.repeat for j in jobs), default=0),
            "tasks": [task.id for task in suite.tasks], "arms": arms, "runs": rows}


__all__ = ["arm_summary", "build_jobs", "evaluate", "file_log"]
