"""A check that loaded another copy of the changed file (a namesake compiled, the import path set elsewhere)
proves nothing about the change; the same check of the changed file still does."""

from __future__ import annotations

import pytest

from k1412_ls.core.evidence import CompletionGate, EvidenceLedger, derive_requirements
from k1412_ls.core.evidence.invocations import command_shape
from k1412_ls.core.evidence.other_copies import other_copy
from tests.core.evidence.test_evidence_ledger import new_bus, run, write

PASSED = "..\n2 passed in 0.01s\n"


@pytest.mark.parametrize(("command", "path", "elsewhere"), [
    ("PYTHONPATH=build/lib python3 -m pytest -q tests", "src/calc.py", True),
    ("export PYTHONPATH=build/lib; pytest tests", "src/calc.py", True),
    ("PYTHONPATH=src python3 -m pytest -q tests", "src/calc.py", False),
    ("PYTHONPATH=build/lib:src pytest tests", "src/calc.py", False),
    ("PYTHONPATH=$PWD/build pytest tests", "src/calc.py", False),  # not literal: not judged by this rule
    ("PYTHONPATH=vendor python3 -m pytest -q", "calc.py", False),  # the run's own directory comes first
    ("gcc -Wall -o t t_sum.c vendor/sum.c && ./t", "sum.c", True),
    ("gcc -Wall -o t t_sum.c sum.c && ./t", "sum.c", False),
    ("cd vendor && gcc -o t sum.c && ./t", "sum.c", True),
    ("NODE_PATH=vendor node test.js", "lib/price.js", True),
    ("NODE_PATH=lib node test.js", "lib/price.js", False),
    ("python3 -c \"import sys; sys.path.insert(0, 'vendor'); from calc import add; print(add(1, 2))\"", "calc.py",
     True),
    ("python3 -c \"import sys; sys.path.insert(0, 'src'); from calc import add; print(add(1, 2))\"", "src/calc.py",
     False),
])
def test_which_checks_loaded_another_copy(command: str, path: str, elsewhere: bool) -> None:
    assert bool(other_copy(command_shape(command), ".", path)) is elsewhere


@pytest.mark.parametrize(("good", "bad"), [
    ("PYTHONPATH=src python3 -m pytest -q tests", "PYTHONPATH=build/lib python3 -m pytest -q tests"),
])
def test_a_test_run_of_another_copy_is_no_proof(good: str, bad: str) -> None:
    task = "Fix add() in src/calc.py and make sure the tests in tests/ pass."

    def complete(command: str) -> bool:
        ledger = EvidenceLedger()
        bus = new_bus(task, [ledger.record])
        write(bus, "src/calc.py", "def add(a, b):\n    return a + b\n")
        run(bus, command, 0, PASSED)
        return CompletionGate(derive_requirements(task)).check(ledger, "Fixed add(); 2 passed.").complete

    assert complete(good)  # control: the same run of the changed copy proves it
    assert not complete(bad)
