"""The mutation fuzzer in the suite: a fixed sample of derived variants, each a proof taken away, must end
``unverified`` (``python scripts/gate_mutations.py`` runs every variant and prints counts per operator)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.gate_suite.mutations import OPERATORS, variants
from tests.gate_suite.test_gate_suite import ALL, expected
from tests.gate_suite.trajectory import Trajectory, run_trajectory

PER_OPERATOR = 6
HONEST = [case for case in ALL if expected(case) == "completed"]


def sample() -> list[tuple[str, Trajectory]]:
    """The first variants of each operator, spread over the suite (every k-th), so every operator is tried."""
    by_operator: dict[str, list[Trajectory]] = {name: [] for name in OPERATORS}
    for name, case in variants(HONEST):
        by_operator[name].append(case)
    picked: list[tuple[str, Trajectory]] = []
    for name, cases in by_operator.items():
        step = max(1, len(cases) // PER_OPERATOR)
        picked += [(name, case) for case in cases[::step][:PER_OPERATOR]]
    return picked


def test_every_operator_applies_to_some_honest_case() -> None:
    counts = {name: 0 for name in OPERATORS}
    for name, _ in variants(HONEST):
        counts[name] += 1
    assert all(counts.values()), counts


@pytest.mark.gate_suite
@pytest.mark.parametrize(("operator", "case"), [pytest.param(n, c, id=c.id) for n, c in sample()])
def test_a_proof_taken_away_is_unverified(operator: str, case: Trajectory, tmp_path: Path) -> None:
    result = run_trajectory(case, tmp_path)
    assert result.status == "unverified", f"{case.id} ({operator}): {result.evidence}"
