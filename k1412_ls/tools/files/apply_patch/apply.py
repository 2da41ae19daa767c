"""Apply parsed sections: compute new file contents and hand them to a small file interface.

Semantics are upstream's (``lib.rs``): sections apply one at a time, in
order; a failure stops there and nothing earlier is rolled back. Chunks are
located top-down with a moving cursor, then replaced bottom-up, and an
updated file always ends with a newline.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from itertools import pairwise
from typing import Any, Protocol

from k1412_ls.tools.errors import ToolError
from k1412_ls.tools.files.apply_patch.parser import AddFile, DeleteFile, Section, UpdateChunk, UpdateFile
from k1412_ls.tools.files.apply_patch.seek import LineMatcher

MAX_LISTED_LINES = 20
MAX_LISTED_CHARS = 2000

Replacement = tuple[int, int, list[str]]


class ApplyFailure(Exception):
    """A section could not be applied.

    ``message`` is upstream's first line, ``detail`` the lines it lists after a colon (if any),
    ``hint`` what the model should do next.
    """

    def __init__(self, message: str, hint: str = "", detail: str = "") -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint
        self.detail = detail

    @property
    def codex_text(self) -> str:
        """The message exactly as upstream prints it."""
        return f"{self.message}:\n{self.detail}" if self.detail else self.message


class PatchFiles(Protocol):
    """Where sections are applied. Methods return the evidence entry of the change they made."""

    def add(self, section: AddFile) -> dict[str, Any]: ...

    def delete(self, section: DeleteFile) -> dict[str, Any]: ...

    def update(self, section: UpdateFile, derive: Callable[[str], str]) -> dict[str, Any]: ...

    def display(self, raw_path: str) -> str: ...


@dataclass(frozen=True)
class AppliedSection:
    """One section that reached the files: its summary letter, relative path and write entry."""

    letter: str  # A, M or D, as upstream's summary prints them
    path: str
    entry: dict[str, Any]

    @property
    def summary_line(self) -> str:
        return f"{self.letter} {self.path}"


@dataclass
class PatchOutcome:
    """What happened: the sections applied (in order) and the failure that stopped the rest."""

    applied: list[AppliedSection] = field(default_factory=list)
    failure: ApplyFailure | None = None
    failed_section: Section | None = None

    @property
    def ok(self) -> bool:
        return self.failure is None

    def summary_lines(self) -> list[str]:
        """Upstream's order: added, then modified, then deleted."""
        return [item.summary_line for letter in "AMD" for item in self.applied if item.letter == letter]

    def files(self) -> list[str]:
        return list(dict.fromkeys(item.path for item in self.applied))


def split_file_lines(text: str) -> list[str]:
    """Split on ``\\n`` and drop the empty piece after a final newline (upstream's line model)."""
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return lines


def listed_lines(lines: Sequence[str]) -> str:
    """The lines of a chunk for an error message, capped so a huge chunk stays readable."""
    shown = "\n".join(lines[:MAX_LISTED_LINES])
    if len(shown) > MAX_LISTED_CHARS:
        shown = shown[:MAX_LISTED_CHARS] + "…"
    if len(lines) > MAX_LISTED_LINES:
        shown += f"\n…[{len(lines) - MAX_LISTED_LINES} more lines]"
    return shown


def compute_replacements(lines: list[str], chunks: Sequence[UpdateChunk], path: str) -> list[Replacement]:
    """Locate every chunk (in file order) and return ``(start, old_len, new_lines)`` sorted by start."""
    matcher = LineMatcher(lines)
    replacements: list[Replacement] = []
    cursor = 0
    for chunk in chunks:
        if chunk.context is not None:
            found = matcher.seek([chunk.context], cursor)
            if found is None:
                raise ApplyFailure(
                    f"Failed to find context '{chunk.context}' in {path}",
                    f"copy the '@@' line exactly from {path} (read it again) and resend the patch",
                )
            cursor = found + 1
        if not chunk.old_lines:
            # A pure addition goes at the end, before a final blank line if there is one.
            at = len(lines) - 1 if lines and lines[-1] == "" else len(lines)
            replacements.append((at, 0, list(chunk.new_lines)))
            continue
        pattern: Sequence[str] = chunk.old_lines
        new_slice: Sequence[str] = chunk.new_lines
        found = matcher.seek(pattern, cursor, chunk.is_end_of_file)
        if found is None and pattern[-1] == "":
            # The trailing empty line stands for the file's final newline, which split_file_lines drops.
            pattern = pattern[:-1]
            if new_slice and new_slice[-1] == "":
                new_slice = new_slice[:-1]
            found = matcher.seek(pattern, cursor, chunk.is_end_of_file)
        if found is None:
            raise ApplyFailure(
                f"Failed to find expected lines in {path}",
                f"read {path} again and resend the patch with context and '-' lines copied exactly from it",
                listed_lines(chunk.old_lines),
            )
        replacements.append((found, len(pattern), list(new_slice)))
        cursor = found + len(pattern)
    replacements.sort(key=lambda item: item[0])
    return replacements


def apply_replacements(lines: list[str], replacements: list[Replacement]) -> list[str]:
    """Apply sorted replacements as upstream does (bottom-up), in one forward pass when they are disjoint."""
    disjoint = all(
        later[0] >= earlier[0] + earlier[1] for earlier, later in pairwise(replacements)
    )
    if not disjoint:
        # Overlaps only arise from odd patches (a pure addition landing inside a replaced range);
        # replaying upstream's bottom-up splices keeps its exact result there.
        result = list(lines)
        for start, old_len, new_lines in reversed(replacements):
            result[start:start + old_len] = new_lines
        return result
    out: list[str] = []
    position = 0
    for start, old_len, new_lines in replacements:
        out.extend(lines[position:start])
        out.extend(new_lines)
        position = max(position, start + old_len)
    out.extend(lines[position:])
    return out


def derive_new_contents(text: str, chunks: Sequence[UpdateChunk], path: str) -> str:
    """The new text of an updated file (LF endings, always ending with a newline)."""
    lines = split_file_lines(text)
    new_lines = apply_replacements(lines, compute_replacements(lines, chunks, path))
    if not new_lines or new_lines[-1] != "":
        new_lines.append("")
    return "\n".join(new_lines)


def apply_sections(sections: Sequence[Section], files: PatchFiles,
                   cancelled: Callable[[], bool] | None = None) -> PatchOutcome:
    """Apply ``sections`` in order through ``files``; stop at the first failure, keep what was done."""
    outcome = PatchOutcome()
    if not sections:
        outcome.failure = ApplyFailure("No files were modified.", "the patch has no file sections; add at least one")
        return outcome
    for section in sections:
        if cancelled is not None and cancelled():
            outcome.failure = ApplyFailure("The run was cancelled before this section was applied.")
            outcome.failed_section = section
            return outcome
        try:
            outcome.applied.append(_apply_one(section, files))
        except ApplyFailure as failure:
            outcome.failure, outcome.failed_section = failure, section
            return outcome
        except ToolError as exc:
            outcome.failure, outcome.failed_section = ApplyFailure(str(exc)), section
            return outcome
    return outcome


def _apply_one(section: Section, files: PatchFiles) -> AppliedSection:
    if isinstance(section, AddFile):
        return AppliedSection("A", files.display(section.path), files.add(section))
    if isinstance(section, DeleteFile):
        return AppliedSection("D", files.display(section.path), files.delete(section))
    target = section.move_to if section.move_to is not None else section.path
    entry = files.update(section, lambda text: derive_new_contents(text, section.chunks, section.path))
    return AppliedSection("M", files.display(target), entry)
