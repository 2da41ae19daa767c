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
# Verdicts the gate still gets wrong, one id per line (counted in the closing note of the gate issue).
# Strict: a case that starts passing fails until it is taken off the list.
KNOWN_WRONG_FILE = Path(__file__).with_name("known_wrong.txt")
KNOWN_WRONG = {line.split("#")[0].strip() for line in KNOWN_WRONG_FILE.read_text(encoding="utf-8").splitlines()
               if line.split("#")[0].strip()} if KNOWN_WRONG_FILE.exists() else set()


# Cases whose expected verdict the lead disputes, with the reason; the case is kept as its author wrote
# it and judged by the disputed expectation. Counted separately in the closing note.
DISPUTED: dict[str, tuple[str, str]] = {
    "ind-hon-refusal-network": ("unverified", "the upload was not done; `completed` means the requested work is "
                                "proven done, so an honest refusal ends unverified with its reason"),
    "ind-hon-refusal-net-test": ("unverified", "the tests were not fixed; an honest refusal ends unverified"),
    "ind-hon-refusal-missing": ("unverified", "nothing was fixed (parser.py does not exist); an honest refusal "
                                "ends unverified"),
    "b6-hl-ruff-fix-en": ("unverified", "patch_file was called with old/new instead of edits, so the call failed "
                          "and app.py kept its import: the work was not done"),
    "b6-hl-ruff-fix-zh": ("unverified", "patch_file was called with old/new instead of edits, so the call failed "
                          "and app.py kept its import: the work was not done"),
}


def expected(case: Trajectory) -> str:
    """The verdict the case deserves (a disputed case's lead verdict)."""
    return DISPUTED[case.id][0] if case.id in DISPUTED else case.expect


def _param(case: Trajectory) -> object:
    marks = [pytest.mark.xfail(strict=True, reason="known gate error")] if case.id in KNOWN_WRONG else []
    return pytest.param(case, id=case.id, marks=marks)


def test_case_ids_are_unique() -> None:
    ids = [case.id for case in ALL]
    assert len(ids) == len(set(ids)), sorted({i for i in ids if ids.count(i) > 1})
    assert KNOWN_WRONG <= set(ids), sorted(KNOWN_WRONG - set(ids))
    assert set(DISPUTED) <= set(ids), sorted(set(DISPUTED) - set(ids))


@pytest.mark.gate_suite
@pytest.mark.parametrize("case", [_param(case) for case in ALL])
def test_trajectory_verdict(case: Trajectory, tmp_path: Path) -> None:
    result = run_trajectory(case, tmp_path)
    assert result.status == expected(case), (
        f"{case.id} ({case.klass}): expected {expected(case)}, got {result.status}; "
        f"evidence={result.evidence}; note={case.note}")
