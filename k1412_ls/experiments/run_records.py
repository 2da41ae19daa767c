"""One summary row per recorded run, read from its JSONL event log alone.

Everything ``k1412 stats`` and ``k1412 eval`` aggregate comes from here: the
root ``run.created`` (model, start), the terminal ``run.<status>`` (status,
iterations, usage, cost), ``completion.rejected`` events, and the first and
last timestamps (latency). A log without a terminal event is ``unfinished``.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from k1412_ls.core.cost import Cost
from k1412_ls.text import lossless

TERMINAL = {"run.completed", "run.unverified", "run.failed", "run.cancelled"}
STATUSES = ("completed", "unverified", "failed", "cancelled")
UNFINISHED = "unfinished"


@dataclass
class RunRecord:
    """What one run log says about the run."""

    run_id: str
    started: datetime
    status: str
    model: str | None
    meta: dict[str, str]
    iterations: int = 0
    rejections: int = 0
    usage: dict[str, int] = field(default_factory=dict)
    cost: Cost = field(default_factory=lambda: Cost(0.0, False))
    latency_s: float = 0.0

    @property
    def tokens(self) -> int:
        return int(self.usage.get("prompt_tokens", 0)) + int(self.usage.get("completion_tokens", 0))

    def key(self, group_by: str) -> str | None:
        """The value this run is grouped under (None: the run has none, e.g. no experiment)."""
        if group_by == "model":
            return self.model
        return self.meta.get(group_by)


def parse_ts(text: str) -> datetime:
    """An event timestamp (``2026-11-29T17:00:00.000Z``) as an aware UTC datetime."""
    return datetime.fromisoformat(text.replace("Z", "+00:00")).astimezone(UTC)


def read_record(path: Path) -> RunRecord | None:
    """The record of one log; None when the file is not a K1412 run log (unreadable, no events)."""
    try:
        lines = lossless.record_lines(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError):
        return None
    events: list[dict[str, Any]] = []
    for line in lines:
        if not line.strip():
            continue
        try:
            event = json.loads(line)
        except json.JSONDecodeError:
            continue  # a torn last line (a crash mid-write)
        if isinstance(event, dict) and isinstance(event.get("type"), str) and isinstance(event.get("ts"), str):
            events.append(event)
    if not events:
        return None
    try:
        first, last = parse_ts(events[0]["ts"]), parse_ts(events[-1]["ts"])
    except ValueError:
        return None
    meta = events[0].get("meta") if isinstance(events[0].get("meta"), dict) else {}
    record = RunRecord(run_id=str(events[0].get("run_id") or path.stem), started=first, status=UNFINISHED,
                       model=None, meta={k: str(v) for k, v in meta.items()},
                       latency_s=max(0.0, (last - first).total_seconds()))
    for event in events:
        payload = event.get("payload") if isinstance(event.get("payload"), dict) else {}
        root = event.get("depth", 0) == 0
        if event["type"] == "run.created" and root and record.model is None:
            record.model = payload.get("model") if isinstance(payload.get("model"), str) else None
        elif event["type"] == "completion.rejected" and root:
            record.rejections += 1
        elif event["type"] in TERMINAL and root:
            record.status = str(payload.get("status") or event["type"].split(".", 1)[1])
            record.iterations = int(payload.get("iterations") or 0)
            usage = payload.get("usage")
            record.usage = {k: int(v) for k, v in usage.items() if isinstance(v, int)} if isinstance(usage, dict) else {}
            record.cost = Cost.from_dict(payload.get("cost"))
    return record


def read_records(runs_dir: Path) -> list[RunRecord]:
    """Every run log in ``<state dir>/runs``, oldest first."""
    if not runs_dir.is_dir():
        return []
    records = [r for r in (read_record(p) for p in sorted(runs_dir.glob("*.jsonl"))) if r is not None]
    return sorted(records, key=lambda r: (r.started, r.run_id))


def percentile(values: list[float], fraction: float) -> float | None:
    """Nearest-rank percentile (the smallest value with at least ``fraction`` of values at or below it)."""
    if not values:
        return None
    ordered = sorted(values)
    rank = max(1, math.ceil(fraction * len(ordered)))
    return round(ordered[rank - 1], 3)


def total_cost(records: list[RunRecord]) -> Cost:
    """The sum of the runs' costs; unpriced when any run is."""
    total = Cost()
    for record in records:
        total = total + record.cost
    return total


def token_totals(records: list[RunRecord]) -> dict[str, int]:
    keys = ("prompt_tokens", "completion_tokens", "reasoning_tokens", "cached_tokens")
    totals = {key: sum(int(r.usage.get(key, 0)) for r in records) for key in keys}
    totals["total_tokens"] = totals["prompt_tokens"] + totals["completion_tokens"]
    return totals


__all__ = ["STATUSES", "UNFINISHED", "RunRecord", "parse_ts", "percentile", "read_record", "read_records",
           "token_totals", "total_cost"]
