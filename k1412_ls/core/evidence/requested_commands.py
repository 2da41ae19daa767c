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


__all__ = ["requested_commands", "runs_requested"]
