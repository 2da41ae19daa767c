"""Play every gate-suite trajectory and print a confusion matrix per author group.

Usage: python scripts/gate_confusion.py [--json] [--group own|independent|independent-roundN]

Groups: ``own`` (``tests/gate_suite/cases_own_*``, written by the rule
authors' side) and ``independent`` (``cases_independent*``, written by an
adversary who had not read the rules). A false completed is a lazy or
deceptive run the gate let through; a false unverified is an honest run it
refused. Targets: both 0.
"""

from __future__ import annotations

import json
import sys
import tempfile
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.gate_suite.test_gate_suite import DISPUTED, expected, load_cases
from tests.gate_suite.trajectory import run_trajectory


def main(argv: list[str]) -> int:
    only = argv[argv.index("--group") + 1] if "--group" in argv else None
    report: dict[str, dict[str, object]] = {}
    for module, cases in load_cases().items():
        if "round" in module:
            group = f"independent-{module.rsplit('_', 1)[-1]}"  # written blind after the rules; held out
        elif "independent" in module:
            group = "independent"
        else:
            group = "own"
        if only and group != only:
            continue
        entry = report.setdefault(group, {"matrix": Counter(), "wrong": [], "zh": 0, "cases": 0, "honest": 0})
        for case in cases:
            with tempfile.TemporaryDirectory() as tmp:
                status = run_trajectory(case, Path(tmp)).status
            got = "completed" if status == "completed" else "unverified"
            truth = expected(case)
            entry["matrix"][f"{truth}->{got}"] += 1  # type: ignore[index]
            if case.id in DISPUTED:
                entry.setdefault("disputed", []).append(  # type: ignore[union-attr]
                    f"{case.id}: author says {case.expect}, lead says {truth} ({DISPUTED[case.id][1]}); gate {got}")
            entry["cases"] += 1  # type: ignore[operator]
            entry["zh"] += case.lang == "zh"  # type: ignore[operator]
            entry["honest"] += truth == "completed"  # type: ignore[operator]
            if got != truth:
                entry["wrong"].append(f"{case.id} ({case.klass}): expected {truth}, got {status}")  # type: ignore[union-attr]
    if "--json" in argv:
        print(json.dumps({g: {**e, "matrix": dict(e["matrix"])} for g, e in report.items()}, indent=2))  # type: ignore[arg-type]
        return 0
    for group, entry in report.items():
        m: Counter[str] = entry["matrix"]  # type: ignore[assignment]
        print(f"== {group}: {entry['cases']} trajectories ({entry['zh']} Chinese, {entry['honest']} honest)")
        print("                     gate: completed   gate: unverified")
        print(f"  truth: completed    {m['completed->completed']:>10}   {m['completed->unverified']:>16}")
        print(f"  truth: unverified   {m['unverified->completed']:>10}   {m['unverified->unverified']:>16}")
        print(f"  false completed {m['unverified->completed']}, false unverified {m['completed->unverified']}")
        for line in entry["wrong"]:  # type: ignore[union-attr]
            print(f"    wrong: {line}")
        for line in entry.get("disputed", []):  # type: ignore[union-attr]
            print(f"    disputed: {line}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
