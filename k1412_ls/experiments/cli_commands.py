"""The ``k1412 stats`` and ``k1412 eval`` commands (argparse wiring and output; the work is elsewhere)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from k1412_ls.experiments import GROUP_BY
from k1412_ls.locations import ConfigError, state_dir
from k1412_ls.text.lossless import terminal_json


def _count(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text!r} must be 1 or more")
    return value


def add_commands(sub: Any) -> None:
    """Add ``stats`` and ``eval`` to the ``k1412`` sub-command parser."""
    stats = sub.add_parser("stats", help="runs, verdicts, tokens, cost and latency over the recorded runs")
    stats.add_argument("--since", metavar="DATE", help="only runs started at or after DATE (2026-11-30, "
                                                        "2026-11-30T14:00 UTC, or an age: 7d, 12h)")
    stats.add_argument("--group-by", choices=GROUP_BY, default="model", help="group runs by (default: model)")
    stats.add_argument("--json", action="store_true", help="print the report as JSON")

    evaluate = sub.add_parser("eval", help="run a suite of tasks with every arm and check the work independently")
    evaluate.add_argument("suite", metavar="SUITE.toml")
    evaluate.add_argument("--repeat", type=_count, default=1, help="runs per task and arm (default 1)")
    evaluate.add_argument("--workers", type=_count, help="runs at once (default: up to 4 local processes; "
                                                         "with --ray, as many as the cluster schedules)")
    evaluate.add_argument("--ray", metavar="ADDRESS", help="run on the Ray cluster at ADDRESS (host:port)")
    evaluate.add_argument("--config", help="configuration file (TOML) for every arm (default: the suite's "
                                           "'config', else the usual search)")
    evaluate.add_argument("--json", action="store_true", help="print the report as JSON")
    evaluate.add_argument("--html", metavar="FILE", help="also write a self-contained HTML report with plots")


def run_command(args: argparse.Namespace) -> int:
    """Run ``stats`` or ``eval``; ConfigError (one sentence, exit 2) on bad input."""
    if args.command == "stats":
        return _cmd_stats(args)
    return _cmd_eval(args)


def _cmd_stats(args: argparse.Namespace) -> int:
    from k1412_ls.experiments.run_records import read_records
    from k1412_ls.experiments.stats import parse_since, render_stats, stats_report

    since = parse_since(args.since) if args.since else None
    report = stats_report(read_records(state_dir() / "runs"), args.group_by, since)
    if args.json:
        print(terminal_json(report))
    else:
        print(render_stats(report))
    return 0


def _html_target(value: str | None) -> Path | None:
    if not value:
        return None
    path = Path(value).expanduser()
    if not path.parent.is_dir():
        raise ConfigError(f"Cannot write the --html report {path}: {path.parent} is not a directory.")
    return path


def _cmd_eval(args: argparse.Namespace) -> int:
    from k1412_ls.experiments.dispatch import check_reachable, default_workers, run_local, run_ray
    from k1412_ls.experiments.evaluation import build_jobs, evaluate
    from k1412_ls.experiments.suite import load_suite

    html = _html_target(args.html)
    suite = load_suite(Path(args.suite).expanduser(), args.config)
    jobs = build_jobs(suite, args.repeat)
    if args.ray:
        check_reachable(args.ray)  # before anything starts, not minutes into Ray's own retries
        outcomes = run_ray(jobs, args.ray, args.workers)
    else:
        outcomes = run_local(jobs, args.workers or default_workers())
    where = f"Ray at {args.ray}" if args.ray else "local processes"
    print(f"k1412 eval: {suite.experiment}: {len(jobs)} runs ({len(suite.tasks)} tasks × {len(suite.arms)} arms × "
          f"{args.repeat}) on {where}", file=sys.stderr)

    def progress(done: int, total: int, outcome: Any) -> None:
        check = {True: " · check passed", False: " · check failed", None: ""}[outcome.check_passed]
        print(f"[{done}/{total}] {outcome.arm} {outcome.task_id} #{outcome.repeat}: {outcome.status}{check}",
              file=sys.stderr, flush=True)

    try:
        report = evaluate(suite, jobs, outcomes, state_dir(), progress)
    except KeyboardInterrupt:
        print(f"k1412 eval: interrupted; the logs of the runs that finished are in {state_dir() / 'runs'}.",
              file=sys.stderr)
        return 130
    report["executor"] = {"kind": "ray", "address": args.ray} if args.ray else {
        "kind": "local", "workers": args.workers or default_workers()}
    if html is not None:
        from k1412_ls.experiments.report_html import render_html

        html.write_text(render_html(report), encoding="utf-8")
    if args.json:
        print(terminal_json(report))
    else:
        print(_render_arms(report))
    return 0


def _render_arms(report: dict[str, Any]) -> str:
    from k1412_ls.core.cost import Cost, describe_cost

    def pct(value: float | None) -> str:
        return "-" if value is None else f"{100 * value:.0f}%"

    header = ("arm", "runs", "completed", "unverified", "failed", "check passed", "precision", "recall", "cost",
              "p50 s", "p95 s")
    rows: list[tuple[str, ...]] = [header]
    for arm in report["arms"]:
        latency = arm["latency_s"]
        rows.append((arm["name"], str(arm["runs"]), str(arm["completed"]), str(arm["unverified"]), str(arm["failed"]),
                     f"{arm['check_passed']}/{arm['checked']}", pct(arm["gate_precision"]), pct(arm["gate_recall"]),
                     describe_cost(Cost.from_dict(arm["cost"])),
                     "-" if latency["p50"] is None else f"{latency['p50']:.1f}",
                     "-" if latency["p95"] is None else f"{latency['p95']:.1f}"))
    widths = [max(len(row[i]) for row in rows) for i in range(len(header))]
    lines = ["  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip() for row in rows]
    lines.append(f"experiment {report['experiment']} · k1412 stats --group-by arm shows these runs again")
    return "\n".join(lines)


__all__ = ["add_commands", "run_command"]
