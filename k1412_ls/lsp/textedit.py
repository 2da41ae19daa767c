"""Text positions and minimal edits in the client's position encoding.

LSP lines end at ``\\n``, ``\\r\\n`` or ``\\r`` only (``str.splitlines`` also
splits on U+2028 and form feeds, which would shift every later line), and
columns count code units of the negotiated encoding: UTF-16 (the default),
UTF-8 or UTF-32. Python strings index code points, so conversion happens here,
in one place.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_BREAK = re.compile(r"\r\n|\r|\n")


def _units(text: str, encoding: str) -> int:
    """Length of ``text`` in code units of ``encoding`` ("utf-8", "utf-16" or "utf-32")."""
    if encoding == "utf-8":
        return len(text.encode("utf-8", "surrogatepass"))
    if encoding == "utf-32":
        return len(text)
    return len(text) + sum(1 for ch in text if ord(ch) > 0xFFFF)


def _line_starts(text: str) -> list[int]:
    return [0, *(match.end() for match in _BREAK.finditer(text))]


def position_at(text: str, offset: int, encoding: str = "utf-16") -> tuple[int, int]:
    """The (line, character) of code-point ``offset`` in ``text``."""
    starts = _line_starts(text[:offset])
    line = len(starts) - 1
    return line, _units(text[starts[-1]:offset], encoding)


def offset_at(text: str, line: int, character: int, encoding: str = "utf-16") -> int:
    """The code-point offset of an LSP position; clamps past-the-end positions like editors do."""
    starts = _line_starts(text)
    if line >= len(starts):
        return len(text)
    start = starts[line]
    end = starts[line + 1] if line + 1 < len(starts) else len(text)
    body = text[start:end].rstrip("\r\n")
    units = 0
    for index, ch in enumerate(body):
        if units >= character:
            return start + index
        units += _units(ch, encoding)
    return start + len(body)


@dataclass(frozen=True)
class Replacement:
    """Replace ``old[start:end]`` (code points) with ``text``."""

    start: int
    end: int
    text: str


def minimal_replacement(old: str, new: str) -> Replacement | None:
    """One replaced range covering everything between the common prefix and suffix; None if equal.

    A ``\\r\\n`` pair is never split: a position between ``\\r`` and ``\\n``
    has no LSP meaning.
    """
    if old == new:
        return None
    limit = min(len(old), len(new))
    head = 0
    while head < limit and old[head] == new[head]:
        head += 1
    if head > 0 and old[head - 1] == "\r" and head < len(old) and old[head] == "\n":
        head -= 1
    tail = 0
    while tail < limit - head and old[len(old) - 1 - tail] == new[len(new) - 1 - tail]:
        tail += 1
    end = len(old) - tail
    if tail and end > 0 and old[end - 1] == "\r" and old[end] == "\n":
        tail -= 1
        end += 1
    return Replacement(head, end, new[head:len(new) - tail])


def apply_replacement(old: str, replacement: Replacement) -> str:
    """``old`` with ``replacement`` applied (used to double-check an edit before sending it)."""
    return old[:replacement.start] + replacement.text + old[replacement.end:]
