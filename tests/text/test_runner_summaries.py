"""Test-runner summaries as each runner prints them, and suites covering each other."""

from __future__ import annotations

import pytest

from k1412_ls.text.runner_summaries import COMPILE_ERROR, Suite, parse_summary

PYTEST_FAIL = """F..
=========================== short test summary info ============================
FAILED test_calc.py::test_add - assert -1 == 5
1 failed, 2 passed in 0.05s
"""
PYTEST_LONG = "============================== 3 passed, 1 skipped, 2 deselected in 0.12s ==============================\n"
UNITTEST_OK = "...\n----------------------------------------------------------------------\nRan 3 tests in 0.001s\n\nOK\n"
UNITTEST_FAIL = "F.E\n------\nRan 3 tests in 0.002s\n\nFAILED (failures=1, errors=1)\n"
UNITTEST_NONE = "\n----------------------------------------------------------------------\nRan 0 tests in 0.000s\n\nNO TESTS RAN\n"
NODE_TAP = "TAP version 13\nok 1 - add\n1..2\n# tests 2\n# suites 0\n# pass 1\n# fail 1\n# cancelled 0\n"
NODE_SPEC = "✔ add (0.5ms)\nℹ tests 3\nℹ suites 0\nℹ pass 3\nℹ fail 0\nℹ cancelled 0\n"
JEST = "Tests:       1 failed, 4 passed, 5 total\nSnapshots:   0 total\n"
VITEST = " Test Files  1 passed (1)\n      Tests  2 passed (2)\n"
GO = "--- FAIL: TestAdd (0.00s)\nFAIL\nFAIL\texample.com/calc\t0.002s\nok  \texample.com/util\t0.001s\n"
CARGO = "test result: ok. 3 passed; 0 failed; 0 ignored; 0 measured; 2 filtered out; finished in 0.00s\n"
DOCTEST = "1 items had no tests:\n    calc\n0 tests in 1 items.\n0 passed and 0 failed.\nTest passed.\n"


@pytest.mark.parametrize(("text", "passed", "failed", "filtered"), [
    (PYTEST_FAIL, 2, 1, 0), (PYTEST_LONG, 3, 0, 2), ("5 passed in 0.01s\n", 5, 0, 0),
    (UNITTEST_OK, 3, 0, 0), (UNITTEST_FAIL, 1, 2, 0), (UNITTEST_NONE, 0, 0, 0),
    (NODE_TAP, 1, 1, 0), (NODE_SPEC, 3, 0, 0), (JEST, 4, 1, 0), (VITEST, 2, 0, 0), (GO, 1, 2, 0),
    (CARGO, 3, 0, 2), (DOCTEST, 0, 0, 0), ("Summary: 4 passed, 0 failed\n", 4, 0, 0),
])
def test_summaries(text: str, passed: int, failed: int, filtered: int) -> None:
    tally = parse_summary(text)
    assert tally.found
    assert (tally.passed, tally.failed + tally.errors, tally.filtered) == (passed, failed, filtered)


@pytest.mark.parametrize("text", ["", "all good\n", "hello world\n3 apples\n"])
def test_no_summary(text: str) -> None:
    assert not parse_summary(text).found


def test_a_failure_summary_is_failing_and_a_clean_one_passes() -> None:
    assert parse_summary(PYTEST_FAIL).failing and not parse_summary(PYTEST_FAIL).clean_pass
    assert parse_summary(UNITTEST_OK).clean_pass
    assert not parse_summary(UNITTEST_NONE).clean_pass  # zero tests prove nothing


@pytest.mark.parametrize(("wide", "narrow", "covers"), [
    (Suite("pytest"), Suite("pytest", ("tests/test_x.py",)), True),
    (Suite("pytest", ("tests",)), Suite("pytest"), True),  # the conventional test root is the whole suite
    (Suite("pytest", ("tests/test_x.py",)), Suite("pytest"), False),
    (Suite("pytest", ("pkg_b",)), Suite("pytest", ("pkg_a",)), False),
    (Suite("pytest", ("pkg_a",)), Suite("pytest", ("pkg_a/test_a.py::test_x",)), True),
    (Suite("pytest", (), "-k selects tests by name"), Suite("pytest"), False),
    (Suite("pytest", (), None, True), Suite("pytest"), False),
    (Suite("unittest"), Suite("pytest"), False),
    (Suite("script:make test"), Suite("pytest"), True),
])
def test_suite_covers(wide: Suite, narrow: Suite, covers: bool) -> None:
    assert wide.covers(narrow) is covers


@pytest.mark.parametrize(("text", "error"), [
    ("main.c:5:1: error: expected ';' before '}' token\n", True),
    ("util.c:3:10: fatal error: util.h: No such file or directory\n", True),
    ("make: [Makefile:2: app] Error 1 (ignored)\n", True),
    ("error[E0308]: mismatched types\n", True),
    ("main.c:5:1: warning: unused variable 'x'\n", False),
    ("no errors found\n", False),
])
def test_compile_errors(text: str, error: bool) -> None:
    assert bool(COMPILE_ERROR.search(text)) is error
