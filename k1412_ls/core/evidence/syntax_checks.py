"""Interpreter options that only parse a script: a syntax check runs none of its code."""

from __future__ import annotations

# Shells by name (also what ``invocations`` treats as a shell).
SHELL_NAMES = frozenset({"bash", "sh", "zsh", "dash", "ksh", "mksh", "ash"})

_NO_EXEC_FLAG = {"perl": "c", "ruby": "c", "php": "l"}


def syntax_check_only(program: str, rest: list[str]) -> bool:
    """Options before the script that make an interpreter only parse it: ``-n`` for shells (noexec), ``-c``
    for perl and ruby, ``-l`` for php. A check of syntax runs none of the code."""
    flag = "n" if program in SHELL_NAMES else _NO_EXEC_FLAG.get(program)
    if flag is None:
        return False
    words = iter(rest)
    for word in words:
        if program in SHELL_NAMES and word in ("-o", "+o"):
            if next(words, "") == "noexec" and word == "-o":
                return True
            continue
        if not word.startswith("-") or word == "-":
            return False  # the script (or stdin) comes first: later words are its arguments
        if word.startswith("--"):
            if program in SHELL_NAMES and word == "--noexec":
                return True
            continue
        if flag in word[1:] and not (program in SHELL_NAMES and "c" in word[1:]):
            return True
    return False


__all__ = ["SHELL_NAMES", "syntax_check_only"]
