"""The ``k1412 judge`` command: argparse wiring and output (the work is in the other modules)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from k1412_ls.judge.discovery import FORMATS
from k1412_ls.locations import ConfigError


def add_command(sub: Any) -> None:
    """Add ``judge`` to the ``k1412`` sub-command parser."""
    judge = sub.add_parser("judge", help="judge runs of other agents with K1412's evidence gate")
    judge.add_argument("paths", nargs="+", metavar="PATH", help="run files, or directories to search for runs")
    judge.add_argument("--format", choices=FORMATS, default="auto", help="the runs' format (default: sniffed)")
    judge.add_argument("--task", help="judge against this task instead of the run's own first user message")
    judge.add_argument("--json", action="store_true", help="print one JSON object per run (JSON Lines)")
    judge.add_argument("--labels", metavar="FILE", help="outcome labels: print the confusion against them")
    judge.add_argument("--html", metavar="FILE", help="write a report page (inline SVG) to FILE")


def run_judge(args: argparse.Namespace) -> int:
    """Judge every run; exit 0 when all completed, 3 when any is unverified, 2 when any is unreadable."""
    # The gate is imported here, not with the parser: every ``k1412`` command (``lsp`` too) builds the parser.
    from k1412_ls.judge.discovery import find_runs
    from k1412_ls.judge.judge_page import render_html
    from k1412_ls.judge.labels import confusion, describe_confusion, load_labels, outcome_of
    from k1412_ls.judge.reading import judge_file
    from k1412_ls.judge.verdicts import COMPLETED, EXIT_CODES, UNREADABLE, UNVERIFIED, Judgement
    from k1412_ls.text.lossless import dumps

    labels = load_labels(Path(args.labels)) if args.labels else None
    judgements: list[Judgement] = []
    for path, fmt in find_runs([Path(p) for p in args.paths], args.format):
        judgement = judge_file(path, fmt, args.task)
        judgements.append(judgement)
        if args.json:
            record = judgement.as_dict()
            if labels is not None:
                record["resolved"] = outcome_of(judgement, labels)
            print(dumps(record))
        else:
            print(judgement.describe())
    if not judgements:
        raise ConfigError(f"No runs found in {', '.join(args.paths)} (pass --format if the files are runs).")
    report = confusion(judgements, labels) if labels is not None else None
    if report is not None:
        if args.json:
            print(dumps({"confusion": {k: v for k, v in report.items() if k != "wrong"}, "wrong": report["wrong"]}))
        else:
            print("\n".join(["", *describe_confusion(report)]))
    if args.html:
        outcomes = {j.file: outcome_of(j, labels) if labels else None for j in judgements}
        try:
            Path(args.html).write_text(render_html(judgements, report, outcomes), encoding="utf-8")
        except OSError as exc:
            raise ConfigError(f"The report could not be written to {args.html} ({exc.strerror}).") from None
        print(f"report written to {args.html}", file=sys.stderr)
    statuses = {j.status for j in judgements}
    if not args.json and len(judgements) > 1:
        counts = {s: sum(1 for j in judgements if j.status == s) for s in (COMPLETED, UNVERIFIED, UNREADABLE)}
        print(f"\n{len(judgements)} runs: " + ", ".join(f"{n} {s}" for s, n in counts.items()))
    for status in (UNREADABLE, UNVERIFIED):
        if status in statuses:
            return EXIT_CODES[status]
    return EXIT_CODES[COMPLETED]
