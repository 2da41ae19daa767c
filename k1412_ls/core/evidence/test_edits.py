"""What the request says about changing the tests themselves: asked for, forbidden, or neither.

A weakened test voids test-based proof (``core.evidence.test_integrity``) unless the request asks for the
tests to be changed — "update the test to the new format", "the expected value in test_x.py is wrong",
"修改测试用例" — and a request that forbids it ("without changing the tests", "不要改测试") makes any change to
an existing test file a broken constraint. "Fix the failing tests" and "make the tests pass" ask for the
code to be fixed, not the tests: they allow nothing, so a bent test still proves nothing.
"""

from __future__ import annotations

import re

_TEST_WORDS = (r"(?:unit\s+)?tests?\b|specs?\b|test\s+(?:files?|cases?|suites?|functions?)|assertions?|asserts?\b"
               r"|expected\s+(?:values?|outputs?|results?)|expectations?|snapshots?|fixtures?"
               r"|test_\w+(?:\.py)?|\w+_test\.\w+|\w+\.(?:test|spec)\.\w+")
# Verbs that change a test itself. Not "fix"/"repair": "fix the failing tests" means fix the code.
_EDIT_VERBS = (r"update|change|modify|edit|rewrite|adjust|correct|amend|refactor|rename|move|remove|delete|drop"
               r"|skip|disable|xfail|replace|migrate|convert|port|clean\s+up|simplify|reorgani[sz]e|split|merge"
               r"|regenerate|revise|relax|loosen|tighten|extend|parametri[sz]e")
_NEGATION = r"(?:without|don'?t|do\s+not|never|not|no|nor|avoid|leave|keep)\b"
_ALLOW_EN = re.compile(rf"\b(?:{_EDIT_VERBS})\w*\s+(?:\w+\s+){{0,4}}?(?:{_TEST_WORDS})", re.IGNORECASE)
_WRONG_EN = re.compile(rf"\b(?:the\s+)?(?:{_TEST_WORDS})\s+(?:\w+\s+){{0,3}}?(?:is|are|was|were|looks?|seems?)\s+"
                       r"(?:\w+\s+)?(?:wrong|incorrect|outdated|out\s+of\s+date|stale|broken|mistaken|buggy|invalid)",
                       re.IGNORECASE)
_ZH_TEST = r"(?:测试|用例|断言|单测|期望值|预期值|预期结果|期望结果)"
_ALLOW_ZH = re.compile(rf"(?:修改|更新|改写|改动|调整|重写|修正|更正|修订|删除|删掉|去掉|跳过|禁用|替换|重构|迁移|改)"
                       rf"[^，。；,.;！!？?]{{0,12}}?{_ZH_TEST}")
_WRONG_ZH = re.compile(rf"{_ZH_TEST}[^，。；,.;]{{0,8}}?(?:有误|错了|写错|是错的|不对|过时|有问题)")
_NEGATION_ZH = re.compile(r"(?:不要|别|不许|不能|勿|不得|禁止|不准|不可以|不可|不用|无需|不必|保持)[^，。；,.;]{0,4}$")
_FROZEN_EN = re.compile(
    rf"\b(?:without|don'?t|do\s+not|never|not|no|avoid)\s+(?:\w+\s+){{0,2}}?(?:chang|modif|edit|touch|alter|updat|"
    rf"rewrit|weaken|delet|remov|skip)\w*\s+(?:\w+\s+){{0,3}}?(?:{_TEST_WORDS})"
    rf"|\b(?:{_TEST_WORDS})\s+(?:\w+\s+){{0,2}}?(?:must|should|may|can)(?:\s*not|n'?t)\s+(?:be\s+)?(?:chang|modif|edit|"
    rf"touch|alter|weaken)\w*"
    rf"|\b(?:leave|keep)\s+(?:the\s+|all\s+)?(?:existing\s+)?(?:{_TEST_WORDS})\s*(?:alone|as\s+(?:they\s+are|is)|"
    rf"untouched|unchanged|intact)"
    rf"|\b(?:{_TEST_WORDS})\s+(?:stay|remain)\s+(?:unchanged|untouched|as\s+they\s+are)",
    re.IGNORECASE)
_FROZEN_ZH = re.compile(
    rf"(?:不要|别|不许|不能|勿|不得|禁止|不准|不可以|不可)\s*(?:先)?(?:修改|改动|改|动|碰|删除|删|跳过|调整)[^，。；,.;]{{0,6}}?"
    rf"{_ZH_TEST}"
    rf"|{_ZH_TEST}[^，。；,.;]{{0,4}}?(?:不要|别|不许|不能|不得|不准)\s*(?:修改|改动|改|动|碰|删)"
    rf"|保持{_ZH_TEST}[^，。；,.;]{{0,4}}?不变|{_ZH_TEST}(?:保持)?不变")


def _negated(text: str, start: int) -> bool:
    before = text[max(0, start - 24):start]
    return bool(re.search(rf"{_NEGATION}\s+(?:\w+\s+){{0,2}}$", before, re.IGNORECASE)) or bool(
        _NEGATION_ZH.search(before))


# The tests are the oracle of the work: a fix ("fix the bug", "修复"), or passing tests as the goal ("so the tests
# pass", "make sure the tests still pass", "测试通过"). A behaviour change without either ("make the greeting say
# hi", "rename slug to slugify") changes what the tests expect as part of the work.
_ORACLE = re.compile(
    r"\b(?:fix\w*|bugs?|broken|failing|fails?|repair\w*|regressions?|crash\w*|wrong|incorrect)\b"
    r"|\b(?:tests?|suite|specs?)\s+(?:\w+\s+){0,3}?(?:pass|passes|passing|green|succeed)\w*"
    r"|修复|修一下|修好|修正|改好|bug|错误|报错|失败|不对|崩溃|测试[^，。；,.;]{0,10}(?:通过|全绿|跑过|成功)", re.IGNORECASE)


def tests_are_oracle(request: str) -> bool:
    """Whether the tests judge the work (a fix, or passing tests asked for), so changing what they check
    bends them rather than updating them."""
    return bool(_ORACLE.search(request))


def tests_frozen(request: str) -> bool:
    """Whether the request forbids changing the existing tests."""
    return bool(_FROZEN_EN.search(request) or _FROZEN_ZH.search(request))


def asks_to_edit_tests(request: str) -> bool:
    """Whether the request asks for tests themselves to be changed (not merely made to pass)."""
    if tests_frozen(request):
        return False
    for pattern in (_ALLOW_EN, _ALLOW_ZH, _WRONG_EN, _WRONG_ZH):
        for match in pattern.finditer(request):
            if not _negated(request, match.start()):
                return True
    return False


__all__ = ["asks_to_edit_tests", "tests_are_oracle", "tests_frozen"]
