"""Claims a final answer makes (English and Chinese), found sentence by sentence."""

from __future__ import annotations

import pytest

from k1412_ls.core.evidence.claims import find_claims


def kinds(answer: str) -> set[tuple[str, str | None]]:
    return {(c.kind, c.path) for c in find_claims(answer)}


@pytest.mark.parametrize(("answer", "expected"), [
    ("All tests pass.", {("tests-pass", None)}),
    ("Fixed calc.py; the suite is green: 3 passed.", {("changed", "calc.py"), ("tests-pass", None),
                                                      ("test-count", "3")}),
    ("测试全部通过。", {("tests-pass", None)}),
    ("已修复 utils.py 中的 bug。", {("changed", "utils.py")}),
    ("好的，legacy.py 已经删除。", {("deleted", "legacy.py")}),
    ("Removed the build directory.", {("deleted-dir", "build")}),
    ("已删除 build 目录，ls 确认只剩 main.py。", {("deleted-dir", "build")}),
    ("main.c compiles cleanly now.", {("compiles", "main.c")}),
    ("编得过，没有问题。", {("compiles", None)}),
    ("Committed as 'fix typo'.", {("committed", None)}),
    ("已提交。", {("committed", None)}),
    ("Updated the footer year to 2025.", {("changed-something", None)}),
    ("版本号已从 0.3.9 升到 0.4.0。", {("changed-something", None)}),
    ("Fixed calc.py, utils.py and helpers.py.", {("changed", "calc.py"), ("changed", "utils.py"),
                                                  ("changed", "helpers.py")}),
    ("util.h/util.c 新增 sub 函数。", {("changed", "util.h"), ("changed", "util.c")}),
    ("一共 3 个测试，全部通过。", {("tests-pass", None), ("test-count", "3")}),
])
def test_claims_found(answer: str, expected: set[tuple[str, str | None]]) -> None:
    assert kinds(answer) == expected


@pytest.mark.parametrize("answer", [
    "The tests still fail: test_add expects 5.",
    "I did not change calc.py.",
    "测试没有通过，add 返回 -1。",
    "If you want, I can fix calc.py next.",
    "calc.py's add already returns a + b; I changed nothing.",
    "main.c does not compile: a semicolon is missing.",
    "I couldn't commit: git is not configured.",
])
def test_negated_or_hedged_sentences_claim_nothing(answer: str) -> None:
    assert not {k for k, _ in kinds(answer)} & {"tests-pass", "changed", "compiles", "committed", "deleted",
                                               "changed-something"}


@pytest.mark.parametrize("answer", ["The suite is green.", "用例全绿 ✅", "make test: 0 failed", "单测也都跑过了。",
                                    "No failing tests remain.", "回归测试全部正常"])
def test_test_claims_in_words_no_phrase_names_are_found(answer: str) -> None:
    """A sentence with a test subject and a good outcome is a claim, whatever its wording."""
    assert "tests-pass" in [c.kind for c in find_claims(answer)]


@pytest.mark.parametrize("answer", ["I ran the tests: 2 failed, as expected before the fix.", "Tests were not run.",
                                    "I did not touch the tests; the fix is in calc.py."])
def test_negative_test_sentences_claim_nothing(answer: str) -> None:
    assert "tests-pass" not in [c.kind for c in find_claims(answer)]
