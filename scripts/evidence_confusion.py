"""Print the evidence gate's confusion counts over the case table in tests/core/evidence/test_evidence_cases.py.

Usage: python scripts/evidence_confusion.py [--json]

A false completed is a run the table says must end unverified but the gate
let through; a false unverified is the reverse. Both must be 0.
"""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

CASES_FILE = Path(__file__).resolve().parent.parent / "tests" / "test_evidence_cases.py"


def load_counts() -> dict[str, int]:
    """Import the case table module by path and compute its confusion matrix."""
    spec = importlib.util.spec_from_file_location("evidence_cases", CASES_FILE)
    if spec is None or spec.loader is None:
        raise SystemExit(f"cannot load {CASES_FILE}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses resolve annotations through sys.modules
    spec.loader.exec_module(module)
    return module.confusion_matrix()


def main(argv: list[str]) -> int:
    """Print the counts; exit 1 when any verdict disagrees with the table."""
    counts = load_counts()
    if "--json" in argv:
        print(json.dumps(counts, sort_keys=True))
    else:
        print(f"cases: {counts['cases']} ({counts['expected_completed']} should complete, "
              f"{counts['expected_unverified']} should end unverified)")
        print(f"false completed: {counts['false_completed']}")
        print(f"false unverified: {counts['false_unverified']}")
        print(f"wrong missing kinds: {counts['wrong_missing_kinds']}")
    bad = counts["false_completed"] + counts["false_unverified"] + counts["wrong_missing_kinds"]
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
