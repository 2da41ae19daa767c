"""Runners that run no test (a pytest-style module run as a script, a test target that only echoes) are read
from the workspace at the start of the run; their green status is 'no test ran', and only theirs."""

from __future__ import annotations

from pathlib import Path

import pytest

from k1412_ls.core.evidence import CompletionGate, EvidenceLedger, derive_requirements
from k1412_ls.core.evidence.hollow_runners import hollow_runners
from tests.core.evidence.test_evidence_ledger import new_bus, run, write

DEFINES = "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n"
RUNS = DEFINES + "\n\nif __name__ == '__main__':\n    test_add()\n    print('ok')\n"


@pytest.mark.parametrize(("files", "hollow"), [
    ({"test_calc.py": DEFINES}, ["file:test_calc.py"]),
    ({"test_calc.py": RUNS}, []),
    ({"test_calc.py": "from calc import add\nassert add(2, 3) == 5\n"}, []),  # top-level checks run
    ({"Makefile": "test:\n\t@echo tests ok\n"}, ["script:make test"]),
    ({"Makefile": "test:\n\tpython3 -m pytest -q\n"}, []),
    ({"Makefile": "test: t_sum\n\t@echo ok\n"}, []),  # it builds a prerequisite first
    ({"package.json": '{"scripts": {"test": "echo \\"no tests\\""}}'}, ["script:npm test", "script:yarn test",
                                                                      "script:pnpm test", "script:bun test"]),
    ({"package.json": '{"scripts": {"test": "node --test"}}'}, []),
    ({"package.json": "{not json"}, []),
])
def test_which_runners_run_no_test(tmp_path: Path, files: dict[str, str], hollow: list[str]) -> None:
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    tests = tuple(n for n in files if n.startswith("test_"))
    assert list(hollow_runners(tmp_path, tests)) == hollow


@pytest.mark.parametrize(("command", "family"), [("python3 test_calc.py", "file:test_calc.py"),
                                                 ("make test", "script:make test")])
def test_a_hollow_runners_green_status_proves_no_test(command: str, family: str) -> None:
    task = "Fix add() in calc.py and make sure the tests pass."

    def complete(hollow: tuple[str, ...]) -> bool:
        ledger = EvidenceLedger()
        bus = new_bus(task, [ledger.record])
        write(bus, "calc.py", "def add(a, b):\n    return a + b\n")
        run(bus, command, 0, "")
        requirements = derive_requirements(task, test_files=("test_calc.py",), hollow=hollow)
        return CompletionGate(requirements).check(ledger, "Fixed add(); the tests pass.").complete

    assert complete(())  # control: the same run of a runner that runs its tests is proof
    assert not complete((family,))
