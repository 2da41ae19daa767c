"""``k1412 stats``: runs, verdicts, rejections, iterations, tokens, cost and latency over the run logs."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from typing import Any

from k1412_ls.experiments import GROUP_BY
from k1412_ls.experiments.run_records import (
    STATUSES,
    UNFINISHED,
    RunRecord,
    percentile,
    token_totals,
    total_cost,
)
from k1412_ls.locations import ConfigError

_RELATIVE = re.compile(r"^(\d+)([dhm])$")


def parse_since(text: str, now: datetime | None = None) -> datetime:
    """``--since``: a date (``2026-11-30``), a date and time (UTC unless it says), or ``7d``/``12h``/``30m`` ago."""
    value = text.strip()
    relative = _RELATIVE.match(value)
    if relative:
        amount, unit = int(relative.group(1)), relative.group(2)
        delta = {"d": timedelta(days=amount), "h": timedelta(hours=amount), "m": timedelta(minutes=amount)}[unit]
        return (now or datetime.now(UTC)) - delta
    try:
        when = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        raise ConfigError(f"--since takes a date such as 2026-11-30, a time such as 2026-11-30T14:00 (UTC), "
                          f"or an age such as 7d or 12h; {text!r} is none of these.") from None
    return when.replace(tzinfo=UTC) if when.tzinfo is None else when.astimezone(UTC)


def group_summary(key: str | None, records: list[RunRecord]) -> dict[str, Any]:
    """One group's aggregate, the shape ``k1412 stats --json`` prints."""
    runs = len(records)
    by_status = {status: sum(1 for r in records if r.status == status) for status in STATUSES}
    unfinished = sum(1 for r in records if r.status == UNFINISHED)
    if unfinished:
        by_status[UNFINISHED] = unfinished
    latencies = [r.latency_s for r in records]
    cost = total_cost(records)
    return {
        "key": key,
        "runs": runs,
        "by_status": by_status,
        "rates": {status: round(count / runs, 4) if runs else 0.0 for status, count in by_status.items()},
        "rejections": sum(r.rejections for r in records),
        "iterations": sum(r.iterations for r in records),
        "tokens": token_totals(records),
        "cost": cost.as_dict(),
        "unpriced_runs": sum(1 for r in records if not r.cost.priced),
        "latency_s": {"p50": percentile(latencies, 0.5), "p95": percentile(latencies, 0.95)},
    }


def stats_report(records: list[RunRecord], group_by: str = "model", since: datetime | None = None) -> dict[str, Any]:
    """``{"runs": N, "groups": [...]}`` over the runs that started at or after ``since``."""
    chosen = [r for r in records if since is None or r.started >= since]
    groups: dict[str | None, list[RunRecord]] = {}
    for record in chosen:
        groups.setdefault(record.key(group_by), []).append(record)
    ordered = sorted(groups.items(), key=lambda item: (item[0] is None, item[0] or ""))
    return {"runs": len(chosen), "group_by": group_by, "since": since.isoformat() if since else None,
            "groups": [group_summary(key, rows) for key, rows in ordered]}


def render_stats(report: dict[str, Any]) -> str:
    """The report as a table for a terminal."""
    from k1412_ls.core.cost import Cost, describe_cost

    header = (report["group_by"], "runs", "completed", "unverified", "failed", "cancelled", "done %",
              "rejections", "iterations", "tokens", "cost", "p50 s", "p95 s")
    rows: list[tuple[str, ...]] = [header]
    for group in report["groups"]:
        status = group["by_status"]
        latency = group["latency_s"]
        rows.append((str(group["key"] if group["key"] is not None else "-"), str(group["runs"]),
                     str(status["completed"]), str(status["unverified"]), str(status["failed"]),
                     str(status["cancelled"]), f"{100 * group['rates']['completed']:.0f}",
                     str(group["rejections"]), str(group["iterations"]), f"{group['tokens']['total_tokens']:,}",
                     describe_cost(Cost.from_dict(group["cost"])),
                     f"{latency['p50']:.1f}" if latency["p50"] is not None else "-",
                     f"{latency['p95']:.1f}" if latency["p95"] is not None else "-"))
    widths = [max(len(row[i]) for row in rows) for i in range(len(header))]
    lines = ["  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip() for row in rows]
    since = f" since {report['since']}" if report["since"] else ""
    lines.append(f"{report['runs']} runs{since}")
    return "\n".join(lines)


__all__ = ["GROUP_BY", "group_summary", "parse_since", "render_stats", "stats_report"]
