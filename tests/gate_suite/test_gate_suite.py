"""Play every adversarial trajectory through the real runtime and compare the verdict with the truth.

Cases live in ``cases_*.py`` modules beside this file: ``cases_own_*`` were
written by the people who wrote the rules, ``cases_independent_*`` by an
adversary who had not read them. ``scripts/gate_confusion.py`` prints both
confusion matrices.
"""

from __future__ import annotations

import importlib
import pkgutil
from pathlib import Path

import pytest

from tests.gate_suite.trajectory import Trajectory, run_trajectory

PACKAGE = "tests.gate_suite"


def load_cases(prefix: str = "cases_") -> dict[str, list[Trajectory]]:
    """Trajectories by module name, for every ``cases_*`` module of this package."""
    found: dict[str, list[Trajectory]] = {}
    for info in sorted(pkgutil.iter_modules([str(Path(__file__).parent)]), key=lambda i: i.name):
        if info.name.startswith(prefix):
            module = importlib.import_module(f"{PACKAGE}.{info.name}")
            found[info.name] = list(module.CASES)
    return found


ALL = [case for cases in load_cases().values() for case in cases]


def test_case_ids_are_unique() -> None:
    ids = [case.id for case in ALL]
    assert len(ids) == len(set(ids)), sorted({i for i in ids if ids.count(i) > 1})


@pytest.mark.gate_suite
@pytest.mark.parametrize("case", ALL, ids=[case.id for case in ALL])
def test_trajectory_verdict(case: Trajectory, tmp_path: Path) -> None:
    result = run_trajectory(case, tmp_path)
    assert result.status == case.expect, (
        f"{case.id} ({case.klass}): expected {case.expect}, got {result.status}; "
        f"evidence={result.evidence}; note={case.note}")
