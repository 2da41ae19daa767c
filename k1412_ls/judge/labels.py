"""Outcome labels (``--labels FILE``) and the confusion of the gate's verdicts against them.

A label file is a JSON list of objects with an id (``id``, ``instance_id``, ``trial``, ``task_id``)
and an outcome (``resolved``, ``is_resolved``, or ``reward`` above 0), or an object with
``resolved_ids`` (and ``unresolved_ids``; without it every other run is unresolved). A run matches
a label whose id is its file's name without extensions or the name of a directory above it (nearest
first).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from k1412_ls.judge.verdicts import COMPLETED, UNREADABLE, UNVERIFIED, Judgement
from k1412_ls.locations import ConfigError

_ID_KEYS = ("id", "instance_id", "trial", "task_id", "run_id")


@dataclass(frozen=True)
class Labels:
    outcomes: dict[str, bool]
    closed: bool  # every run not listed is unresolved (a resolved_ids file without unresolved_ids)


def load_labels(path: Path) -> Labels:
    """The labels in ``path``; ConfigError (one sentence, exit 2) when it is not a label file."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise ConfigError(f"{path} is not a readable JSON label file ({type(exc).__name__}).") from None
    if isinstance(data, dict) and isinstance(data.get("resolved_ids"), list):
        outcomes = {str(i): True for i in data["resolved_ids"]}
        unresolved = data.get("unresolved_ids")
        if isinstance(unresolved, list):
            outcomes.update({str(i): False for i in unresolved})
        return Labels(outcomes, not isinstance(unresolved, list))
    if not isinstance(data, list):
        raise ConfigError(f"{path} holds neither a list of {{id, resolved}} nor resolved_ids.")
    outcomes: dict[str, bool] = {}
    for item in data:
        if not isinstance(item, dict):
            continue
        key = next((str(item[k]) for k in _ID_KEYS if isinstance(item.get(k), (str, int))), None)
        outcome = _outcome(item)
        if key is not None and outcome is not None:
            outcomes[key] = outcome
    if not outcomes:
        raise ConfigError(f"{path} has no entry with both an id and an outcome (resolved, is_resolved or reward).")
    return Labels(outcomes, False)


def _outcome(item: dict[str, Any]) -> bool | None:
    for key in ("resolved", "is_resolved"):
        if isinstance(item.get(key), bool):
            return bool(item[key])
    reward = item.get("reward")
    if isinstance(reward, (int, float)) and not isinstance(reward, bool):
        return reward > 0
    return None


def run_ids(file: str) -> list[str]:
    """The ids a run file can be labelled by, nearest first."""
    path = Path(file)
    stem = path.name.split(".")[0] if path.name.endswith((".traj.json", ".json", ".jsonl", ".txt", ".log")) else path.name
    names = [path.name.removesuffix(".traj.json"), stem, path.stem]
    return list(dict.fromkeys([*names, *(p.name for p in path.parents if p.name)]))


def outcome_of(judgement: Judgement, labels: Labels) -> bool | None:
    for key in run_ids(judgement.file):
        if key in labels.outcomes:
            return labels.outcomes[key]
    return False if labels.closed else None


def _ratio(num: int, den: int) -> float | None:
    return round(num / den, 4) if den else None


def confusion(judgements: list[Judgement], labels: Labels) -> dict[str, Any]:
    """Counts and rates of the verdicts against the outcomes (runs without a label are only counted)."""
    cells = {"completed_resolved": 0, "completed_unresolved": 0, "unverified_resolved": 0,
             "unverified_unresolved": 0, "unreadable": 0, "unlabelled": 0}
    wrong: list[dict[str, Any]] = []
    for judgement in judgements:
        if judgement.status == UNREADABLE:
            cells["unreadable"] += 1
            continue
        outcome = outcome_of(judgement, labels)
        if outcome is None:
            cells["unlabelled"] += 1
            continue
        status = COMPLETED if judgement.status == COMPLETED else UNVERIFIED
        cells[f"{status}_{'resolved' if outcome else 'unresolved'}"] += 1
        if (status == COMPLETED) != outcome:
            wrong.append({"file": judgement.file, "status": status, "resolved": outcome,
                          "missing": judgement.missing[:3], "contract": judgement.contract})
    completed = cells["completed_resolved"] + cells["completed_unresolved"]
    unverified = cells["unverified_resolved"] + cells["unverified_unresolved"]
    resolved = cells["completed_resolved"] + cells["unverified_resolved"]
    return {**cells, "labelled": completed + unverified,
            "p_resolved_given_completed": _ratio(cells["completed_resolved"], completed),
            "p_resolved_given_unverified": _ratio(cells["unverified_resolved"], unverified),
            "resolved_completed_share": _ratio(cells["completed_resolved"], resolved),
            "base_rate": _ratio(resolved, completed + unverified), "wrong": wrong}


def describe_confusion(report: dict[str, Any]) -> list[str]:
    def pct(value: float | None) -> str:
        return "n/a" if value is None else f"{value:.2f}"

    return [
        f"labelled runs: {report['labelled']} (unlabelled {report['unlabelled']}, unreadable {report['unreadable']})",
        "                resolved  unresolved",
        f"  completed     {report['completed_resolved']:>8}  {report['completed_unresolved']:>10}",
        f"  unverified    {report['unverified_resolved']:>8}  {report['unverified_unresolved']:>10}",
        f"P(resolved | completed) = {pct(report['p_resolved_given_completed'])} · P(resolved | unverified) = "
        f"{pct(report['p_resolved_given_unverified'])} · resolved runs completed = "
        f"{pct(report['resolved_completed_share'])} · base rate = {pct(report['base_rate'])}",
    ]
