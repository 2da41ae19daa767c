"""File tools: stat_path, list_files, read_file, write_file.

Every path goes through :meth:`Workspace.resolve`; reads go through the
document store (open editor buffers are the truth) and are remembered so a
later write over changes the agent never saw is refused.
"""

from __future__ import annotations

import os
import stat
from collections import deque
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from k1412_ls.limits import LIMITS
from k1412_ls.text.numbers import extract_numbers
from k1412_ls.tools.errors import ToolError
from k1412_ls.tools.facts import NUMBER_SCAN_CHARS, write_entry, write_facts
from k1412_ls.tools.files.confined import open_confined
from k1412_ls.tools.files.documents import (
    MAX_DOCUMENT_BYTES,
    NotTextError,
    file_kind,
    open_regular,
    read_fd,
    refuse_special,
)
from k1412_ls.tools.files.edits import commit_text, load_for_edit, note_read, to_lf
from k1412_ls.tools.files.ignore import Entry, GlobFilter, initial_chain, list_children
from k1412_ls.tools.files.locks import write_guard
from k1412_ls.tools.files.skill_files import read_skill_file, skill_file
from k1412_ls.tools.files.textwindow import guess_mime, line_endings_of, stream_window, text_window
from k1412_ls.tools.registry import Tool, ToolContext, ToolResult

MAX_WRITE_BYTES = LIMITS.max_write_bytes
MAX_LIST_ENTRIES = LIMITS.max_list_entries
STAT_LINES_MAX_BYTES = 2 * 1024 * 1024
CORE = frozenset({"core"})


def inspect_facts(rel: str) -> dict[str, Any]:
    return {"kind": "inspect", "paths": [rel]}


# --- stat_path -----------------------------------------------------------------------------------


class StatPathArgs(BaseModel):
    """Arguments of stat_path."""

    model_config = ConfigDict(extra="forbid")
    path: str = Field(description="File or directory, relative to the workspace root.")


def stat_path(args: StatPathArgs, ctx: ToolContext) -> ToolResult:
    """Type, size, mode, mtime and (for text files) line count; a missing path is not an error."""
    real = ctx.workspace.resolve(args.path)
    rel = ctx.workspace.relative(real)
    lexical = Path(args.path) if os.path.isabs(args.path) else ctx.workspace.root / args.path
    is_link = os.path.islink(lexical)
    try:
        # Opened (O_PATH) from the pinned root without following symlinks, then fstat: confined at open time.
        fd = open_confined(real, os.O_PATH | (os.O_DIRECTORY if os.path.isdir(real) else 0))
        try:
            info = os.fstat(fd)
        finally:
            os.close(fd)
    except FileNotFoundError:
        extra = {"symlink": True, "dangling": True} if is_link else {}
        return ToolResult.success(facts=inspect_facts(rel), path=rel, exists=False, **extra)
    except OSError as exc:
        raise ToolError(f"Cannot stat {rel} ({exc.strerror}); check the path with list_files.") from None
    fields: dict[str, Any] = {
        "path": rel,
        "exists": True,
        "type": file_kind(info.st_mode),
        "size": info.st_size,
        "mode": format(stat.S_IMODE(info.st_mode), "04o"),
        "mtime": datetime.fromtimestamp(info.st_mtime, UTC).isoformat(timespec="seconds"),
    }
    if is_link:
        fields["symlink"] = True
    if stat.S_ISREG(info.st_mode) and info.st_size <= STAT_LINES_MAX_BYTES:
        try:
            text = to_lf(ctx.documents.read(real).text)
            fields["lines"] = text.count("\n") + (0 if text.endswith("\n") or not text else 1)
        except NotTextError:
            fields["binary"] = True
        except ToolError:
            pass  # unreadable: the type and size above still answer the question
    return ToolResult.success(facts=inspect_facts(rel), **fields)


# --- list_files ----------------------------------------------------------------------------------


class ListFilesArgs(BaseModel):
    """Arguments of list_files."""

    model_config = ConfigDict(extra="forbid")
    path: str = Field(default=".", description="Directory to list, relative to the workspace root.")
    depth: int = Field(default=2, ge=1, le=20, description="How many directory levels to descend.")
    glob: str | None = Field(
        default=None,
        description="Gitignore-style filter relative to the workspace root, e.g. '*.py' or 'src/**/*.ts'; "
        "a leading '!' excludes.",
    )


def _describe(ctx: ToolContext, entry: Entry) -> str:
    if entry.kind == "dir":
        return entry.rel + "/"
    if entry.kind == "symlink":
        target = Path(os.path.realpath(entry.path))
        inside = target.is_relative_to(ctx.workspace.root)
        shown = ctx.workspace.relative(target) if inside else "(outside the workspace)"
        return f"{entry.rel} -> {shown}"
    return entry.rel


def list_files(args: ListFilesArgs, ctx: ToolContext) -> ToolResult:
    """Breadth-first listing (so truncation drops the deepest entries), skipping .git and ignored files."""
    real = ctx.workspace.resolve(args.path)
    rel = ctx.workspace.relative(real)
    if not os.path.exists(real):
        raise ToolError(f"{rel} does not exist; list its parent directory to see what is there.")
    if not os.path.isdir(real):
        return ToolResult.success(facts=inspect_facts(rel), path=rel, entries=[rel], count=1, truncated=False)
    glob = GlobFilter(args.glob)
    root_rel = "" if real == ctx.workspace.root else rel
    queue: deque[tuple[Path, str, Any, int]] = deque([(real, root_rel, initial_chain(ctx.workspace.root, real), 1)])
    entries: list[Entry] = []
    truncated = False
    while queue and not truncated:
        if ctx.cancel.is_set():
            raise ToolError("The run was cancelled while listing files.")
        directory, dir_rel, chain, depth = queue.popleft()
        children, child_chain = list_children(directory, dir_rel, chain, depth, glob)
        for child in children:
            if child.kind == "dir":
                if depth < args.depth:
                    queue.append((child.path, child.rel, child_chain, depth + 1))
                if args.glob:
                    continue
            if len(entries) >= MAX_LIST_ENTRIES:
                truncated = True
                break
            entries.append(child)
    entries.sort(key=lambda e: e.rel.split("/"))
    fields: dict[str, Any] = {
        "path": rel,
        "entries": [_describe(ctx, entry) for entry in entries],
        "count": len(entries),
        "truncated": truncated,
    }
    if truncated:
        fields["note"] = (
            f"Listing stopped at {MAX_LIST_ENTRIES} entries; list a subdirectory, lower depth or add a glob."
        )
    return ToolResult.success(facts=inspect_facts(rel), **fields)


# --- read_file -----------------------------------------------------------------------------------


class ReadFileArgs(BaseModel):
    """Arguments of read_file."""

    model_config = ConfigDict(extra="forbid")
    path: str = Field(description="File to read, relative to the workspace root.")
    start_line: int | None = Field(default=None, ge=1, description="First line to return (1-based).")
    end_line: int | None = Field(default=None, ge=1, description="Last line to return (inclusive).")


def _describe_binary(ctx: ToolContext, real: Path, rel: str, reason: str) -> ToolResult:
    with open_regular(real) as (fd, info):
        head = read_fd(fd, 64)
    mime = guess_mime(real.name, head)
    return ToolResult.success(
        facts=inspect_facts(rel), path=rel, binary=True, size=info.st_size, mime=mime,
        note=f"{reason} Its content is not shown; inspect it with run_command (e.g. file, xxd, unzip -l).",
    )


def read_file(args: ReadFileArgs, ctx: ToolContext) -> ToolResult:
    """A window of a text file as LF text, with the line numbers it covers and where to continue."""
    skill = skill_file(args.path, ctx.skill_roots)
    if skill is not None:  # the user's own skills, read-only by absolute path (k1412_ls/tools/files/skill_files.py)
        return read_skill_file(skill, args.path, args.start_line, args.end_line)
    real = ctx.workspace.resolve(args.path)
    rel = ctx.workspace.relative(real)
    start = args.start_line or 1
    if args.end_line is not None and args.end_line < start:
        raise ToolError(f"end_line {args.end_line} is before start_line {start}; pass end_line >= start_line.")
    refuse_special(real)
    try:
        info: os.stat_result | None = os.stat(real)
    except FileNotFoundError:
        info = None  # an unsaved editor buffer may still exist; the document store decides
    except OSError as exc:
        raise ToolError(f"Cannot read {rel} ({exc.strerror}); check the path with stat_path.") from None
    if info is not None and stat.S_ISDIR(info.st_mode):
        raise ToolError(f"{rel} is a directory; use list_files to see its contents.")
    if info is not None and not stat.S_ISREG(info.st_mode):
        raise ToolError(f"{rel} is a {file_kind(info.st_mode)}, not a regular file; read regular files only.")
    fields: dict[str, Any] = {"path": rel}
    if info is not None and info.st_size > MAX_DOCUMENT_BYTES:
        with open_regular(real) as (fd, _):
            if b"\x00" in os.pread(fd, 8192, 0):
                binary = True
            else:
                binary = False
                window, endings = stream_window(fd, start, args.end_line)
        if binary:
            return _describe_binary(ctx, real, rel, f"{rel} is a binary file.")
        fields["note"] = "Large file streamed from disk; invalid UTF-8 bytes are shown as U+FFFD."
    else:
        try:
            snapshot = ctx.documents.read(real)
        except NotTextError as exc:
            return _describe_binary(ctx, real, rel, str(exc).split(";")[0] + ".")
        note_read(ctx, real, snapshot)
        endings = line_endings_of(snapshot.text)
        window = text_window(to_lf(snapshot.text), start, args.end_line)
        if snapshot.bom:
            fields["bom"] = True
    if start > max(window.total_lines, 1):
        raise ToolError(
            f"start_line {start} is past the end of {rel} ({window.total_lines} lines); "
            f"use a start_line between 1 and {max(window.total_lines, 1)}."
        )
    wanted_end = window.total_lines if args.end_line is None else min(args.end_line, window.total_lines)
    fields.update(
        content=window.content, start_line=window.start_line, end_line=window.end_line,
        total_lines=window.total_lines, line_endings=endings, truncated=window.end_line < wanted_end,
    )
    if window.end_line < wanted_end:
        fields["next_start_line"] = window.end_line + 1
    if window.cut_lines:
        fields["cut_lines"] = window.cut_lines
    facts = {"kind": "read", "paths": [rel], "numbers": extract_numbers(window.content[:NUMBER_SCAN_CHARS], 200)}
    return ToolResult.success(facts=facts, **fields)


# --- write_file ----------------------------------------------------------------------------------


class WriteFileArgs(BaseModel):
    """Arguments of write_file."""

    model_config = ConfigDict(extra="forbid")
    path: str = Field(description="File to create or overwrite, relative to the workspace root.")
    content: str = Field(description="The complete new content of the file.")


def check_content(content: str, rel: str) -> None:
    """Refuse write bodies that are binary, not encodable or too large, with one sentence."""
    if "\x00" in content:
        raise ToolError(f"The content for {rel} contains NUL bytes; write_file writes text only.")
    try:
        size = len(content.encode("utf-8"))
    except UnicodeEncodeError:
        raise ToolError(f"The content for {rel} is not valid Unicode text; remove lone surrogates.") from None
    if size > MAX_WRITE_BYTES:
        raise ToolError(
            f"The content for {rel} is {size} bytes, over the {MAX_WRITE_BYTES // (1024 * 1024)} MB limit; "
            f"generate large files with a script through run_command."
        )


def write_file(args: WriteFileArgs, ctx: ToolContext) -> ToolResult:
    """Create or overwrite a text file atomically, keeping mode, BOM and line endings."""
    real = ctx.workspace.resolve(args.path, for_write=True)
    rel = ctx.workspace.relative(real)
    check_content(args.content, rel)
    if real == ctx.workspace.root or os.path.isdir(real):
        raise ToolError(f"{rel} is a directory; pass a file path such as {rel}/name.txt.")
    label = f"K1412 {ctx.run_id}: write {rel}".strip()
    with write_guard(ctx):
        try:
            base = load_for_edit(ctx, real, must_exist=False)
        except NotTextError:
            # Replacing a binary file with text: nothing to merge endings with, nothing to go stale.
            ctx.documents.write(real, args.content, label=label)
            entry = write_entry(rel, args.content, "update")
            return ToolResult.success(facts=write_facts([entry]), path=rel, action="update",
                                      bytes=entry["bytes"], line_endings=line_endings_of(args.content))
        if base.snapshot is None:
            entry = commit_text(ctx, base, args.content, label=label)
        else:
            new_text = to_lf(args.content)
            if new_text == base.text:
                entry = write_entry(rel, base.snapshot.text, "update")
                return ToolResult.success(
                    facts=write_facts([entry], unchanged=True), path=rel, action="unchanged",
                    bytes=entry["bytes"], line_endings=line_endings_of(base.snapshot.text),
                    note="The file already had exactly this content; nothing was written.",
                )
            entry = commit_text(ctx, base, new_text, label=label)
    # An existing file keeps its convention: tell the model which one its LF text was given.
    convention = base.snapshot.text if base.snapshot is not None else args.content
    return ToolResult.success(
        facts=write_facts([entry]), path=rel, action=entry["action"], bytes=entry["bytes"],
        line_endings=line_endings_of(convention),
    )


TOOLS: list[Tool] = [
    Tool("stat_path", "Describe a path: exists, type, size, mode, mtime, and line count for text files.",
         StatPathArgs, stat_path, parallel_safe=True, read_only=True, tags=CORE),
    Tool("list_files", "List files and directories (directories end with '/'), skipping .git and "
         "gitignored paths; symlinks are shown, not followed.",
         ListFilesArgs, list_files, parallel_safe=True, read_only=True, tags=CORE),
    Tool("read_file", "Read a text file (LF line endings) in windows of up to 2000 lines; returns "
         "start_line, end_line, total_lines and next_start_line when there is more.",
         ReadFileArgs, read_file, parallel_safe=True, read_only=True, tags=CORE),
    Tool("write_file", "Create or overwrite a whole text file atomically (parent directories are created; "
         "mode, BOM and line endings of an existing file are kept). Prefer patch_file for small edits.",
         WriteFileArgs, write_file, parallel_safe=False, read_only=False, tags=CORE,
         body_fields=frozenset({"content"})),
]
