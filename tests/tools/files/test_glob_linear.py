"""Globs from the workspace or the model are matched in linear time (positive control: the old regex shape)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from k1412_ls.tools.errors import ToolError
from k1412_ls.tools.files.ignore import GlobFilter, compile_rule

EVIL = "*a" * 18 + "*b"
NAME = "a" * 300


def test_backtracking_regex_does_not_finish_positive_control() -> None:
    code = ("import re; r = re.compile(r'^(?:.*/)?' + r'[^/]*a' * 18 + r'[^/]*b$', re.S); "
            f"r.match('{NAME}')")
    with pytest.raises(subprocess.TimeoutExpired):
        subprocess.run([sys.executable, "-c", code], timeout=2, check=False)


def test_our_matcher_answers_the_same_glob() -> None:
    code = ("from k1412_ls.tools.files.ignore import compile_rule; "
            f"r = compile_rule('{EVIL}'); print(r.matches('{NAME}', False), r.matches('{NAME}b', False))")
    out = subprocess.run([sys.executable, "-c", code], timeout=20, check=True, capture_output=True, text=True)
    assert out.stdout.split() == ["False", "True"]


@pytest.mark.parametrize(("glob", "path", "expected"), [
    ("*.py", "src/a.py", True), ("*.py", "src/a.pyc", False), ("/src/*.py", "src/x/a.py", False),
    ("src/**/*.ts", "src/a/b/c.ts", True), ("src/**/*.ts", "src/c.ts", True), ("**/b", "a/b", True),
    ("a/**", "a/b/c", True), ("a/**", "a", False), ("[!a]x", "bx", True), ("[!a]x", "ax", False),
    ("[a-c]?", "b/", False), ("a?c", "a/c", False), ("\\*x", "*x", True), ("\\*x", "ax", False),
    ("a*b*c", "aXbYc", True), ("a*b*c", "aXc", False), ("a**b", "axxb", True), ("[z", "[z", True),
])
def test_glob_semantics(glob: str, path: str, expected: bool) -> None:
    rule = compile_rule(glob)
    assert rule is not None and rule.matches(path, False) is expected


def test_overlong_glob_is_refused_in_one_sentence() -> None:
    with pytest.raises(ToolError, match="characters long"):
        GlobFilter("*" * 5000)


def test_the_regex_fast_path_agrees_with_the_state_set() -> None:
    """Globs with at most two stars take a compiled regex; on random globs and paths it must answer exactly
    as the linear state set does (the positive control is the set itself, forced for the same glob)."""
    import random

    from k1412_ls.tools.files.globmatch import GlobMatcher, tokenize

    rng = random.Random(1412)
    pieces = ["a", "b", ".", "/", "*", "**/", "?", "[ab]", "[!a]", "x"]
    letters = "ab./x"
    checked = 0
    for _ in range(3000):
        glob = "".join(rng.choice(pieces) for _ in range(rng.randint(1, 6)))
        fast = GlobMatcher(tokenize(glob))
        if fast._regex is None:
            continue
        slow = GlobMatcher(tokenize(glob))
        slow._regex = None
        for _ in range(8):
            path = "".join(rng.choice(letters) for _ in range(rng.randint(0, 8)))
            assert fast.match(path) == slow.match(path), (glob, path)
            checked += 1
    assert checked > 5000
