"""The contract ("done when"): shown when the run starts, each item marked ✓ or ✗ in the verdict."""

from __future__ import annotations

from pathlib import Path

from k1412_ls.core.evidence.contract import contract_items
from k1412_ls.core.evidence.requirements import derive_requirements
from tests.gate_suite.trajectory import Trajectory, answer, run_trajectory, sh, write

PRICING = "def total(prices):\n    return sum(prices) - 1\n"
TEST = "from pricing import total\n\n\ndef test_total():\n    assert total([2, 3]) == 5\n"


def test_the_items_say_what_the_request_owes() -> None:
    items = dict(contract_items(derive_requirements("Fix total() in pricing.py; only change pricing.py, and make "
                                                    "sure the tests pass.")))
    assert "pricing.py" in items["artifact"] and "verify" in items["artifact"]
    assert items["tests"] == "the whole test suite passes after the last change"
    assert items["constraints"] == "change only pricing.py"


def test_the_verdict_marks_each_item(tmp_path: Path) -> None:
    case = Trajectory("t", "honest", "en", "completed", "Fix total() in pricing.py so the tests pass.",
                      (write("pricing.py", "def total(prices):\n    return sum(prices) - 2\n"),
                       sh("cat pricing.py"), sh("python3 -m pytest -q"), answer("Fixed total(); all tests pass.")),
                      files={"pricing.py": PRICING, "test_pricing.py": TEST})
    result = run_trajectory(case, tmp_path)
    contract = result.evidence["contract"]
    assert result.status == "unverified"
    assert any(line.startswith("✓ change pricing.py") for line in contract), contract
    assert any(line.startswith("✗ the whole test suite passes") and "—" in line for line in contract), contract
