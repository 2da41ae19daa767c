"""Run the mutation fuzzer over every honest trajectory of the gate suite and print counts per operator.

    python scripts/gate_mutations.py [--workers N] [--only OPERATOR] [--json FILE]

Each variant takes one proof away from an honest case (tests/gate_suite/mutations.py) and must end
``unverified``; the table shows, per operator, how many variants there were and how many the gate still
called ``completed``, with their ids.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from collections import Counter, defaultdict
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.gate_suite.mutations import variants
from tests.gate_suite.test_gate_suite import ALL, expected
from tests.gate_suite.trajectory import Trajectory, run_trajectory


def play(case: Trajectory) -> str:
    with tempfile.TemporaryDirectory(prefix="k1412-mut-", dir="/var/tmp") as root:
        try:
            return run_trajectory(case, Path(root)).status
        except Exception as exc:  # a variant that cannot be played is reported, not hidden
            return f"error: {type(exc).__name__}: {exc}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--only", default=None)
    parser.add_argument("--json", default=None)
    args = parser.parse_args()
    honest = [c for c in ALL if expected(c) == "completed"]
    todo = [(name, case) for name, case in variants(honest) if args.only in (None, name)]
    with ProcessPoolExecutor(max_workers=args.workers) as pool:
        statuses = list(pool.map(play, [case for _, case in todo]))
    totals: Counter[str] = Counter()
    wrong: dict[str, list[str]] = defaultdict(list)
    for (name, case), status in zip(todo, statuses, strict=True):
        totals[name] += 1
        if status != "unverified":
            wrong[name].append(f"{case.id} ({status})")
    print(f"{'operator':20} {'variants':>8} {'completed (wrong)':>18}")
    for name in sorted(totals):
        print(f"{name:20} {totals[name]:8d} {len(wrong[name]):18d}")
    print(f"{'total':20} {sum(totals.values()):8d} {sum(len(w) for w in wrong.values()):18d}")
    for name in sorted(wrong):
        for item in wrong[name]:
            print(f"  {name}: {item}")
    if args.json:
        Path(args.json).write_text(json.dumps({"totals": totals, "wrong": wrong}, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
