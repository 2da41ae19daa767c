"""Values a request asks to set ("set retries to 5", "把 timeout 改成 30"): the changed files must hold them.

The content of a file written with the file tools is known to the ledger as its numbers; a request that
sets a number no changed file holds at the end was not done, whatever the answer says. Files a command
wrote have no known content, so then this rule says nothing (the other proofs still hold).
"""

from __future__ import annotations

import re

from k1412_ls.core.evidence.ledger import FileState

_SET_EN = re.compile(r"\b(?:set|change|bump|raise|lower|increase|decrease|update|make|put|default)\b[^.;\n]{0,60}?"
                     r"\bto\s+(-?\d+(?:\.\d+)?)(?![\w%]|\.\d)", re.IGNORECASE)
_TO_EN = re.compile(r"\b(?:and|,)\s+[\w.-]+\s+to\s+(-?\d+(?:\.\d+)?)(?![\w%]|\.\d)", re.IGNORECASE)
_SET_ZH = re.compile(r"(?:改成|改为|设为|设成|设置为|设置成|调整为|调整成|调到|调成|升到|升至|降到|降至|换成|变成)\s*(-?\d+(?:\.\d+)?)(?![\w%]|\.\d)")


def requested_values(request: str) -> tuple[str, ...]:
    """The numbers ``request`` asks some setting to become, in order."""
    found = [m.group(1) for p in (_SET_EN, _SET_ZH) for m in p.finditer(request)]
    if _SET_EN.search(request):
        found += [m.group(1) for m in _TO_EN.finditer(request)]
    return tuple(dict.fromkeys(found))


def values_not_held(request: str, changed: list[FileState]) -> list[str]:
    """Requested values that no changed file holds at the end (empty when some content is unknown)."""
    wanted = requested_values(request)
    present = [s for s in changed if s.present]
    if not wanted or not present or any(s.last.by_command or s.last.binary for s in present):
        return []
    held = {n for s in present for n in s.last.numbers}
    return [v for v in wanted if v not in held]


__all__ = ["requested_values", "values_not_held"]
