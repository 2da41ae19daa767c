"""The command a request names as the way to build ("rebuild it with `node build.js`") is its proof of the
build, when exactly that command ran and succeeded after the last change; nothing else named that way."""

from __future__ import annotations

import pytest

from k1412_ls.core.evidence import CompletionGate, EvidenceLedger, derive_requirements
from k1412_ls.core.evidence.requested_commands import requested_commands
from tests.core.evidence.test_evidence_ledger import new_bus, run, write

TASK = "用 `node build.js` 重新构建 out/bundle.js，使其包含 VERSION 2.0。"


def built(*steps: tuple[str, str, int]) -> bool:
    ledger = EvidenceLedger()
    bus = new_bus(TASK, [ledger.record])
    for kind, what, code in steps:
        if kind == "write":
            write(bus, what, "const VERSION = '2.0';\n")
        else:
            run(bus, what, code, "1:const VERSION = '2.0';\n")
    verdict = CompletionGate(derive_requirements(TASK)).check(ledger, "已重新构建 out/bundle.js。")
    return "build" not in verdict.missing_kinds


def test_the_named_build_command_run_after_the_change_proves_the_build() -> None:
    assert built(("run", "node build.js && grep -n VERSION out/bundle.js", 0))
    # Controls: another program, the named one failing, or a change after it.
    assert not built(("run", "node other.js && grep -n VERSION out/bundle.js", 0))
    assert not built(("run", "node build.js", 1))
    assert not built(("run", "node build.js", 0), ("write", "src/version.js", 0))


@pytest.mark.parametrize(("request_text", "commands"), [
    ("Rebuild with `node build.js`.", [("node", "build.js")]),
    ("Run `make dist` then `npm run build`", [("make", "dist"), ("npm", "run", "build")]),
    ("Fix `add()` in `calc.py`", []),  # code names, not commands
    ("Use `curl x | sh`", []),  # a pipeline is not one command to match
])
def test_which_backquoted_spans_are_commands(request_text: str, commands: list[tuple[str, ...]]) -> None:
    assert list(requested_commands(request_text)) == commands


def test_a_command_the_request_names_as_its_check_is_owed() -> None:
    task = "Fix add in calc.py and confirm that `python3 cli.py 2 3` prints 5."

    def complete(command: str) -> bool:
        ledger = EvidenceLedger()
        bus = new_bus(task, [ledger.record])
        write(bus, "calc.py", "def add(a, b):\n    return a + b\n")
        run(bus, command, 0, "5\n" if "cli" in command else "..\n2 passed in 0.01s\n")
        return CompletionGate(derive_requirements(task)).check(ledger, "Fixed add; it prints 5.").complete

    assert complete("python3 cli.py 2 3")
    assert complete("cd . && python3 ./cli.py 2 3")
    assert not complete("python3 -m pytest -q")  # the tests ran, the command asked for never did
    assert not complete("python3 cli.py 3 2")  # another command line


def test_a_requested_test_runner_is_run_by_any_whole_suite_run() -> None:
    task = "Fix add in calc.py so that `pytest` passes."
    ledger = EvidenceLedger()
    bus = new_bus(task, [ledger.record])
    write(bus, "calc.py", "def add(a, b):\n    return a + b\n")
    run(bus, "python3 -m pytest -q -p no:cacheprovider", 0, "..\n2 passed in 0.01s\n")
    assert CompletionGate(derive_requirements(task)).check(ledger, "Fixed add; 2 passed.").complete
