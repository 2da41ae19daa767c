"""The user's skills directories, readable by ``read_file`` though they lie outside the workspace.

A skill's body is read on demand with an ordinary ``read_file`` (docs/conventions.md). Workspace skills
(``.agents/skills/``) are workspace files like any other; the user's own skills live in
``$XDG_CONFIG_HOME/k1412/skills``, so ``read_file`` accepts an absolute path whose real path (every
symlink resolved) lies inside one of the run's skill roots. Read-only: no other tool reaches them, and a
symlink out of a skills directory leads nowhere.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Sequence
from pathlib import Path

from k1412_ls.tools.errors import ToolError
from k1412_ls.tools.files.textwindow import text_window
from k1412_ls.tools.registry import ToolResult
from k1412_ls.tools.sandbox.mounts import inside
from k1412_ls.tools.sandbox.protected_paths import hidden_from_file_tools

MAX_SKILL_FILE_BYTES = 512 * 1024


def skill_file(path: str, roots: Sequence[Path]) -> Path | None:
    """The real path of ``path`` when it names something inside one of the user's skill roots, else None."""
    if not roots or not isinstance(path, str) or "\x00" in path or not os.path.isabs(path):
        return None
    real = os.path.realpath(path)
    for root in roots:
        top = os.path.realpath(root)
        if inside(real, top):
            # K1412's config directory is hidden from file tools and holds the skills directory: only hidden
            # paths that do not contain the skills directory (a secret inside it, say) still refuse.
            if any(inside(real, hidden) and not inside(top, hidden) for hidden in hidden_from_file_tools()):
                return None
            return Path(real)
    return None


def read_skill_file(real: Path, shown: str, start_line: int | None, end_line: int | None) -> ToolResult:
    """A window of a text file of the user's skills, like read_file's answer for a workspace file."""
    start = start_line or 1
    if end_line is not None and end_line < start:
        raise ToolError(f"end_line {end_line} is before start_line {start}; pass end_line >= start_line.")
    try:
        fd = os.open(real, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError as exc:
        raise ToolError(f"Cannot read {shown} ({exc.strerror}); check the skill's path.") from None
    try:
        info = os.fstat(fd)
        if stat.S_ISDIR(info.st_mode):
            entries = sorted(os.listdir(real))[:200]
            return ToolResult.success(path=shown, directory=True, entries=entries)
        if not stat.S_ISREG(info.st_mode):
            raise ToolError(f"{shown} is not a regular file; read the skill's files only.")
        if info.st_size > MAX_SKILL_FILE_BYTES:
            raise ToolError(f"{shown} is larger than {MAX_SKILL_FILE_BYTES // 1024} KiB; a skill file must be "
                            "small text.")
        data = os.read(fd, MAX_SKILL_FILE_BYTES + 1)
    finally:
        os.close(fd)
    if b"\x00" in data:
        raise ToolError(f"{shown} is a binary file; only a skill's text files can be read.")
    text = data.decode("utf-8", errors="replace").replace("\r\n", "\n")
    window = text_window(text, start, end_line)
    if start > max(window.total_lines, 1):
        raise ToolError(f"start_line {start} is past the end of {shown} ({window.total_lines} lines).")
    fields: dict[str, object] = {"path": shown, "skill_file": True, "content": window.content,
                                 "start_line": window.start_line, "end_line": window.end_line,
                                 "total_lines": window.total_lines}
    wanted_end = window.total_lines if end_line is None else min(end_line, window.total_lines)
    if window.end_line < wanted_end:
        fields["next_start_line"] = window.end_line + 1
    return ToolResult.success(facts={"kind": "skill_read", "path": shown}, **fields)


__all__ = ["MAX_SKILL_FILE_BYTES", "read_skill_file", "skill_file"]
