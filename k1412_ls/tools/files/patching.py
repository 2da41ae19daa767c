"""patch_file: exact-text edits or a unified diff applied to one file.

All edits (or hunks) are applied in memory to the file's LF text first; the
file is written once, only when every one of them applied, so a failing call
never leaves a partly patched file. :func:`commit_text` then restores the
file's own line endings (CRLF and mixed files keep the bytes of untouched
lines), BOM and mode.
"""

from __future__ import annotations

import difflib
import os
import re
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, model_validator

from k1412_ls.tools.errors import ToolError
from k1412_ls.tools.facts import write_entry, write_facts
from k1412_ls.tools.files.edits import commit_text, load_for_edit, to_lf
from k1412_ls.tools.files.locks import write_guard
from k1412_ls.tools.files.textwindow import line_endings_of
from k1412_ls.tools.registry import Tool, ToolContext, ToolResult

CLOSEST_MAX_LINES = 30
_HUNK_HEADER = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")


class EditOp(BaseModel):
    """One exact-text replacement."""

    model_config = ConfigDict(extra="forbid")
    old_text: str = Field(description="Exact text to replace (copy it from read_file, including indentation).")
    new_text: str = Field(description="Replacement text.")
    replace_all: bool = Field(default=False, description="Replace every occurrence instead of exactly one.")


class PatchFileArgs(BaseModel):
    """Arguments of patch_file: ``path`` and exactly one of ``edits`` or ``diff``."""

    model_config = ConfigDict(extra="forbid")
    path: str = Field(description="File to patch, relative to the workspace root.")
    edits: list[EditOp] | None = Field(default=None, min_length=1, max_length=200,
                                       description="Replacements applied in order.")
    diff: str | None = Field(default=None, description="A unified diff of this one file.")

    @model_validator(mode="after")
    def _exactly_one(self) -> PatchFileArgs:
        if (self.edits is None) == (self.diff is None):
            raise ValueError("pass exactly one of 'edits' or 'diff'")
        return self


class PatchMismatch(ToolError):
    """An edit or hunk that does not apply; ``closest`` shows the most similar region."""

    def __init__(self, message: str, closest: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.closest = closest


# --- finding text --------------------------------------------------------------------------------


def line_of(text: str, index: int) -> int:
    """1-based line number of character ``index``."""
    return text.count("\n", 0, index) + 1


def numbered(lines: list[str], first: int) -> str:
    return "\n".join(f"{first + i:>6}| {line}" for i, line in enumerate(lines))


def closest_region(lines: list[str], wanted: list[str]) -> dict[str, Any] | None:
    """The window of ``lines`` most similar to ``wanted`` (difflib), with line numbers."""
    if not lines or not wanted:
        return None
    size = min(len(wanted), len(lines))
    target = "\n".join(wanted)
    starts = range(len(lines) - size + 1)
    if len(starts) > 20000:  # sample huge files instead of scoring every window
        starts = range(0, len(lines) - size + 1, len(starts) // 20000 + 1)
    scored: list[tuple[float, int]] = []
    for start in starts:
        matcher = difflib.SequenceMatcher(None, "\n".join(lines[start:start + size]), target, autojunk=False)
        scored.append((matcher.quick_ratio(), start))
    scored.sort(key=lambda item: (-item[0], item[1]))
    best_ratio, best = 0.0, scored[0][1]
    for _, start in scored[:25]:
        ratio = difflib.SequenceMatcher(None, "\n".join(lines[start:start + size]), target,
                                        autojunk=False).ratio()
        if ratio > best_ratio:
            best_ratio, best = ratio, start
    first = max(0, best - 2)
    last = min(len(lines), best + size + 2, first + CLOSEST_MAX_LINES)
    return {"start_line": best + 1, "end_line": best + size, "similarity": round(best_ratio, 2),
            "text": numbered(lines[first:last], first + 1)}


def _squash(text: str) -> str:
    return "\n".join(" ".join(line.split()) for line in text.split("\n"))


def apply_edits(text: str, edits: list[EditOp], rel: str) -> tuple[str, int]:
    """Apply ``edits`` in order to LF ``text``; returns the new text and the number of replacements."""
    total = len(edits)
    replaced = 0
    for number, edit in enumerate(edits, start=1):
        where = f"Edit {number} of {total}" if total > 1 else "The edit"
        old, new = to_lf(edit.old_text), to_lf(edit.new_text)
        if not old:
            raise ToolError(f"{where} has an empty old_text; give the exact text to replace "
                            f"(use write_file to write a whole file).")
        count = text.count(old)
        if count == 0:
            lines = text.split("\n")
            closest = closest_region(lines, old.rstrip("\n").split("\n"))
            span = f"lines {closest['start_line']}-{closest['end_line']}" if closest else "nowhere"
            if _squash(old) and _squash(old) in _squash(text):
                reason = f"it differs from the file only in whitespace or indentation (closest: {span})"
            else:
                reason = f"the most similar text is at {span}"
            raise PatchMismatch(
                f"{where}: old_text was not found in {rel} (0 matches); {reason}, shown in 'closest'; "
                f"copy the exact text from there (or read_file again) and retry.", closest)
        if count > 1 and not edit.replace_all:
            at, starts, index = [], 0, text.find(old)
            while index >= 0 and len(at) < 10:
                at.append(str(line_of(text, index)))
                starts = index + len(old)
                index = text.find(old, starts)
            raise PatchMismatch(
                f"{where}: old_text matches {count} times in {rel} (at lines {', '.join(at)}); "
                f"include more surrounding lines to make it unique, or set replace_all to true.")
        text = text.replace(old, new) if edit.replace_all else text.replace(old, new, 1)
        replaced += count if edit.replace_all else 1
    return text, replaced


# --- unified diffs -------------------------------------------------------------------------------


@dataclass
class Hunk:
    """One ``@@`` hunk: the old-side lines (context and removals) and the new-side lines."""

    old_start: int
    old: list[str] = field(default_factory=list)
    new: list[str] = field(default_factory=list)
    old_no_eol: bool = False
    new_no_eol: bool = False


def _header_path(line: str) -> str:
    name = line[4:].split("\t", 1)[0].strip()
    if name.startswith(("a/", "b/")):
        name = name[2:]
    return name


def parse_diff(diff: str, rel: str) -> list[Hunk]:
    """Hunks of a one-file unified diff; headers, if any, must name ``rel``."""
    lines = to_lf(diff).split("\n")
    while lines and lines[-1] == "":  # trailing blank lines are the diff's end, not empty context
        lines.pop()
    hunks: list[Hunk] = []
    targets: list[str] = []
    current: Hunk | None = None
    last_side = ""
    for number, line in enumerate(lines, start=1):
        header = _HUNK_HEADER.match(line)
        if header:
            current = Hunk(old_start=int(header.group(1)))
            hunks.append(current)
            continue
        if line.startswith("+++ ") or line.startswith("--- "):
            nxt = lines[number] if number < len(lines) else ""
            if line.startswith("--- ") and (current is None or nxt.startswith("+++ ")):
                if _header_path(line) == "/dev/null":
                    raise ToolError(f"The diff creates a new file; use write_file to create {rel}.")
                current = None
                continue
            if line.startswith("+++ ") and current is None:
                targets.append(_header_path(line))
                continue
        if current is None:
            if line.startswith(("diff ", "index ", "new file", "deleted file", "similarity", "rename ", "old mode",
                                "new mode")) or not line.strip():
                continue
            raise ToolError(f"Line {number} of the diff comes before any '@@' hunk header; "
                            f"start each hunk with '@@ -line,count +line,count @@'.")
        if line.startswith("\\"):
            if last_side in (" ", "-"):
                current.old_no_eol = True
            if last_side in (" ", "+"):
                current.new_no_eol = True
            continue
        side, body = (line[0], line[1:]) if line else (" ", "")
        if side == " ":
            current.old.append(body)
            current.new.append(body)
        elif side == "-":
            current.old.append(body)
        elif side == "+":
            current.new.append(body)
        else:
            raise ToolError(f"Line {number} of the diff does not start with ' ', '+' or '-'; "
                            f"fix the diff (context lines start with a space) and retry.")
        last_side = side
    if "/dev/null" in targets:
        raise ToolError(f"The diff deletes {rel}; delete files with apply_patch or run_command instead.")
    if len(set(targets)) > 1:
        raise ToolError("The diff changes more than one file; patch_file takes one file, use apply_patch "
                        "for several.")
    if targets and not _same_file(targets[0], rel):
        raise ToolError(f"The diff is for {targets[0]} but path is {rel}; pass the matching path.")
    if not hunks or all(not h.old and not h.new for h in hunks):
        raise ToolError("The diff has no hunks; give at least one '@@ ... @@' hunk with changes.")
    return hunks


def _same_file(header: str, rel: str) -> bool:
    header = os.path.normpath(header.lstrip("/")) if header.startswith("/") else os.path.normpath(header)
    return header == rel or header.endswith("/" + rel) or rel.endswith("/" + header)


def _find_block(lines: list[str], block: list[str], expected: int, floor: int) -> int | None:
    """Index where ``block`` occurs exactly, nearest to ``expected``, not before ``floor``."""
    size = len(block)
    limit = len(lines) - size
    expected = min(max(expected, floor), max(limit, floor))
    for distance in range(max(limit - floor, 0) + 1):
        for index in (expected - distance, expected + distance) if distance else (expected,):
            if floor <= index <= limit and lines[index:index + size] == block:
                return index
    return None


def apply_diff(text: str, hunks: list[Hunk], rel: str) -> tuple[str, list[int]]:
    """Apply hunks to LF ``text``; returns the new text and each hunk's line offset from its header."""
    final_newline = text.endswith("\n") or text == ""
    lines = text.split("\n")
    if text.endswith("\n") or text == "":
        lines.pop()
    delta, floor = 0, 0
    offsets: list[int] = []
    for number, hunk in enumerate(hunks, start=1):
        expected = (hunk.old_start - 1 if hunk.old else hunk.old_start) + delta
        index = _find_block(lines, hunk.old, expected, floor) if hunk.old else min(max(expected, floor), len(lines))
        if index is None:
            raise PatchMismatch(
                f"Hunk {number} of {len(hunks)} does not apply to {rel}: its context and removed lines were not "
                f"found exactly; compare with 'closest', read_file again and resend the diff.",
                closest_region(lines, hunk.old))
        offsets.append(index - expected)
        lines[index:index + len(hunk.old)] = hunk.new
        delta += len(hunk.new) - len(hunk.old) + (index - expected)
        floor = index + len(hunk.new)
        if hunk.new_no_eol or hunk.old_no_eol:
            final_newline = not hunk.new_no_eol
    new_text = "\n".join(lines)
    return (new_text + "\n" if lines and final_newline else new_text), offsets


# --- the tool ------------------------------------------------------------------------------------


def patch_file(args: PatchFileArgs, ctx: ToolContext) -> ToolResult:
    """Apply exact-text edits or a unified diff to one existing text file, all or nothing."""
    real = ctx.workspace.resolve(args.path, for_write=True)
    rel = ctx.workspace.relative(real)
    if not real.exists():
        raise ToolError(f"{rel} does not exist; create it with write_file.")
    if real.is_dir():
        raise ToolError(f"{rel} is a directory; patch a file inside it.")
    bodies = [e.new_text for e in args.edits] if args.edits is not None else [args.diff or ""]
    if any("\x00" in body for body in bodies):
        raise ToolError(f"The patch for {rel} contains NUL bytes; patch_file writes text only.")
    label = f"K1412 {ctx.run_id}: patch {rel}".strip()
    fields: dict[str, Any] = {"path": rel}
    try:
        with write_guard(ctx):
            base = load_for_edit(ctx, real, must_exist=True)
            if args.edits is not None:
                new_text, replaced = apply_edits(base.text, args.edits, rel)
                fields["replacements"] = replaced
            else:
                new_text, offsets = apply_diff(base.text, parse_diff(args.diff or "", rel), rel)
                fields["hunks"] = len(offsets)
                if any(offsets):
                    fields["note"] = f"Hunks applied with line offsets {offsets} from their headers."
            original = base.snapshot.text if base.snapshot is not None else ""
            if new_text == base.text:
                entry = write_entry(rel, original, "update")
                fields["note"] = "The patch changes nothing; the file was not written."
                return ToolResult.success(facts=write_facts([entry], unchanged=True), action="unchanged",
                                          **fields)
            entry = commit_text(ctx, base, new_text, label=label)
    except PatchMismatch as exc:
        extra = {"closest": exc.closest} if exc.closest else {}
        return ToolResult.failure(str(exc), path=rel, **extra)
    return ToolResult.success(facts=write_facts([entry]), action="update", bytes=entry["bytes"],
                              line_endings=line_endings_of(original), **fields)


TOOLS: list[Tool] = [
    Tool("patch_file", "Edit one existing file: either 'edits' (each old_text must match exactly once "
         "unless replace_all) or 'diff' (a unified diff of this file). All or nothing; line endings, BOM "
         "and mode are kept.", PatchFileArgs, patch_file, parallel_safe=False, read_only=False,
         tags=frozenset({"core"}), body_fields=frozenset({"edits", "diff"})),
]
