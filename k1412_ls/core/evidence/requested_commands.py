"""Commands the request itself names as the way to do or check the work: "rebuild it with `node build.js`",
"用 `make dist` 构建". Running exactly that command, successfully, after the last change is the proof the user
asked for, whatever kind of program it is (a build script is a build even though no compiler ran in it).
"""

from __future__ import annotations

import re

from k1412_ls.core.evidence.invocations import Invocation
from k1412_ls.shell import parse_line

_QUOTED = re.compile(r"`([^`\n]{2,200})`")


def requested_commands(request: str) -> tuple[tuple[str, ...], ...]:
    """The argv of every backquoted span of ``request`` that reads as a command line of two or more words."""
    found: list[tuple[str, ...]] = []
    for span in _QUOTED.findall(request):
        line = parse_line(span)
        if not line.parsed or len(line.commands) != 1 or None in line.commands[0].words:
            continue
        words = tuple(line.commands[0].argv)
        if len(words) >= 2 and re.match(r"^[\w./-]+$", words[0]) and not any(c in span for c in "|;&<>$"):
            found.append(words)
    return tuple(dict.fromkeys(found))


def runs_requested(invocations: tuple[Invocation, ...], requested: tuple[tuple[str, ...], ...]) -> bool:
    """Whether one of ``invocations`` is exactly one of the requested commands (the same words, in order)."""
    return any(tuple(i.argv) in requested for i in invocations if not i.background)


def _normal(argv: tuple[str, ...]) -> tuple[str, ...]:
    """``python3 -m pytest -q`` as ``pytest -q``; a program by its name (``./greet.sh`` as ``greet.sh``)."""
    words = tuple(w.removeprefix("./") for w in argv)
    if len(words) >= 3 and re.fullmatch(r"python[\d.]*|pypy3?", words[0]) and words[1] == "-m":
        return words[2:]
    if words and re.fullmatch(r"python[\d.]*", words[0]):
        return ("python", *words[1:])
    return words


def runs_like(invocations: tuple[Invocation, ...], requested: tuple[str, ...]) -> bool:
    """Whether one of ``invocations`` runs the requested command: the same program with every requested word,
    in order (options the run adds, such as ``-q``, are allowed)."""
    want = _normal(requested)
    for invocation in invocations:
        have = _normal(tuple(invocation.argv))
        if invocation.background or not have or have[0] != want[0]:
            continue
        rest = iter(have[1:])
        if all(any(word == got for got in rest) for word in want[1:]):
            return True
    return False


__all__ = ["requested_commands", "runs_like", "runs_requested"]
