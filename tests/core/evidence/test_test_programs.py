"""A test program a compiler builds in the line (``rustc --test``, ``go test -c``) is run as the tests: its
run passes or fails the suite; building it alone runs nothing; an ordinary program stays a program."""

from __future__ import annotations

import pytest

from k1412_ls.core.evidence import CompletionGate, EvidenceLedger, derive_requirements
from k1412_ls.core.evidence.invocations import command_shape
from tests.core.evidence.test_evidence_ledger import new_bus, run, write

LIBTEST_OK = "running 2 tests\ntest tests::high ... ok\ntest tests::low ... ok\n\ntest result: ok. 2 passed; 0 failed; " \
             "0 ignored; 0 measured; 0 filtered out; finished in 0.00s\n"
LIBTEST_FAIL = "running 2 tests\ntest tests::high ... FAILED\n\ntest result: FAILED. 1 passed; 1 failed; 0 ignored; " \
               "0 measured; 0 filtered out; finished in 0.00s\n"
TASK = "Fix clamp in lib.rs so its tests pass."


def complete(command: str, exit_code: int, output: str, answer: str) -> bool:
    ledger = EvidenceLedger()
    bus = new_bus(TASK, [ledger.record])
    write(bus, "lib.rs", "pub fn clamp() {}\n")
    run(bus, command, exit_code, output)
    return CompletionGate(derive_requirements(TASK)).check(ledger, answer).complete


@pytest.mark.parametrize("command", ["rustc --edition 2021 --test lib.rs -o lib_tests && ./lib_tests",
                                     "rustc --test lib.rs && ./lib"])
def test_running_the_built_test_program_is_the_test_run(command: str) -> None:
    assert command_shape(command).invocations[-1].role == "test"
    assert complete(command, 0, LIBTEST_OK, "Fixed clamp; the 2 tests pass.")
    assert not complete(command, 101, LIBTEST_FAIL, "Fixed clamp; the tests pass.")


def test_building_the_test_program_runs_no_test() -> None:
    for command in ("rustc --test lib.rs -o lib_tests", "go test -c -o p.test"):
        assert {i.role for i in command_shape(command).invocations} == {"build"}
    assert not complete("rustc --test lib.rs -o lib_tests", 0, "", "Fixed clamp; the tests pass.")


def test_a_program_built_without_tests_is_only_a_program() -> None:
    assert command_shape("rustc lib.rs -o x && ./x").invocations[-1].role == "run"
    assert command_shape("rustc --test lib.rs -o t && ./other").invocations[-1].role == "run"
    assert not complete("rustc lib.rs -o x && ./x", 0, LIBTEST_OK, "Fixed clamp; the 2 tests pass.")
