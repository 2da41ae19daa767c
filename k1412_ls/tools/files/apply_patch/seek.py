"""Locate a chunk's lines in a file: upstream's four passes, in near-linear time.

Upstream (``seek_sequence.rs``) tries every position four times, each pass
more lenient: exact, trailing whitespace ignored, both ends trimmed, and
trimmed with Unicode punctuation mapped to ASCII. The first hit of the
earliest pass wins. Here each pass compares whole normalized line lists, the
normalized view of the file is built once per pass and cached across
chunks, and ``list.index`` on the first pattern line skips non-candidates
at C speed, so a large file costs a few linear scans rather than n·m work.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from k1412_ls.tools.files.apply_patch.parser import RUST_WHITESPACE

# Typographic characters mapped to ASCII in the last pass (upstream's table).
_PUNCTUATION = str.maketrans(
    {
        **dict.fromkeys(["\u2010", "\u2011", "\u2012", "\u2013", "\u2014", "\u2015", "\u2212"], "-"),
        **dict.fromkeys(["\u2018", "\u2019", "\u201a", "\u201b"], "'"),
        **dict.fromkeys(["\u201c", "\u201d", "\u201e", "\u201f"], '"'),
        **dict.fromkeys(
            ["\u00a0", "\u2002", "\u2003", "\u2004", "\u2005", "\u2006", "\u2007", "\u2008", "\u2009",
             "\u200a", "\u202f", "\u205f", "\u3000"],
            " ",
        ),
    }
)


def _rstrip(line: str) -> str:
    return line.rstrip(RUST_WHITESPACE)


def _trim(line: str) -> str:
    return line.strip(RUST_WHITESPACE)


def normalise_punctuation(line: str) -> str:
    """Trim, then map Unicode dashes, quotes and odd spaces to ASCII (the fourth pass)."""
    return line.strip(RUST_WHITESPACE).translate(_PUNCTUATION)


PASSES: tuple[Callable[[str], str] | None, ...] = (None, _rstrip, _trim, normalise_punctuation)


class LineMatcher:
    """Finds sequences of lines in one file; normalized views are computed lazily and reused."""

    def __init__(self, lines: list[str]) -> None:
        self.lines = lines
        self._views: dict[int, list[str]] = {0: self.lines}

    def _view(self, pass_index: int) -> list[str]:
        view = self._views.get(pass_index)
        if view is None:
            normalise = PASSES[pass_index]
            assert normalise is not None
            view = [normalise(line) for line in self.lines]
            self._views[pass_index] = view
        return view

    def seek(self, pattern: Sequence[str], start: int, eof: bool = False) -> int | None:
        """Index where ``pattern`` begins at or after ``start`` (only at the very end if ``eof``)."""
        if not pattern:
            return start
        total, size = len(self.lines), len(pattern)
        if size > total:
            return None
        # Upstream tries only the last possible position for an End of File chunk.
        first_candidate = total - size if eof else start
        last_candidate = total - size
        if first_candidate > last_candidate:
            return None
        for pass_index, normalise in enumerate(PASSES):
            wanted = list(pattern) if normalise is None else [normalise(line) for line in pattern]
            found = _find(self._view(pass_index), wanted, first_candidate, last_candidate)
            if found is not None:
                return found
        return None


def _find(view: list[str], wanted: list[str], first: int, last: int) -> int | None:
    head, tail = wanted[0], wanted[1:]
    size = len(wanted)
    position = first
    while position <= last:
        try:
            position = view.index(head, position, last + 1)
        except ValueError:
            return None
        if size == 1 or view[position + 1:position + size] == tail:
            return position
        position += 1
    return None
