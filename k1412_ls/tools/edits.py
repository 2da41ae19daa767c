"""Shared edit plumbing for every tool that changes files.

Tools see text with ``\\n`` line endings; :func:`commit_text` puts the file's
own endings (and BOM) back, so untouched lines keep their bytes. A write over
a file that changed since the agent last read it is refused as a conflict.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from k1412_ls.tools.documents import Snapshot
from k1412_ls.tools.facts import write_entry
from k1412_ls.tools.registry import ReadRecord, ToolContext, ToolError


@dataclass(frozen=True)
class EditBase:
    """A document as loaded for editing: LF text plus what is needed to restore its bytes."""

    path: Path
    snapshot: Snapshot | None  # None: the file does not exist yet

    @property
    def text(self) -> str:
        return "" if self.snapshot is None else to_lf(self.snapshot.text)

    @property
    def newline(self) -> str:
        return "\n" if self.snapshot is None else dominant_newline(self.snapshot.text)


def to_lf(text: str) -> str:
    return text.replace("\r\n", "\n")


def dominant_newline(text: str) -> str:
    crlf = text.count("\r\n")
    lf = text.count("\n") - crlf
    return "\r\n" if crlf > lf else "\n"


def restore_newlines(original: str, new_lf: str, newline: str) -> str:
    """Give lines of ``new_lf`` that are unchanged from ``original`` their original ending."""
    import difflib

    old_lines = original.splitlines(keepends=True)
    old_bare = [line.rstrip("\r\n") for line in old_lines]
    new_lines = new_lf.split("\n")
    out: list[str] = []
    matcher = difflib.SequenceMatcher(a=old_bare, b=new_lines[:-1] if new_lf.endswith("\n") else new_lines,
                                      autojunk=False)
    new_body = new_lines[:-1] if new_lf.endswith("\n") else new_lines
    kept_endings: dict[int, str] = {}
    for tag, a0, a1, b0, _b1 in matcher.get_opcodes():
        if tag == "equal":
            for offset in range(a1 - a0):
                line = old_lines[a0 + offset]
                kept_endings[b0 + offset] = line[len(old_bare[a0 + offset]):]
    for index, line in enumerate(new_body):
        is_last = index == len(new_body) - 1
        if is_last and not new_lf.endswith("\n"):
            out.append(line)
        else:
            out.append(line + (kept_endings.get(index) or newline))
    return "".join(out)


def load_for_edit(ctx: ToolContext, path: Path, *, must_exist: bool = True) -> EditBase:
    """Read ``path`` through the document store and refuse if it changed since the agent's last read."""
    if not path.exists() and not must_exist:
        return EditBase(path, None)
    snapshot = ctx.documents.read(path)
    ensure_not_stale(ctx, path, snapshot)
    return EditBase(path, snapshot)


def ensure_not_stale(ctx: ToolContext, path: Path, snapshot: Snapshot) -> None:
    seen = ctx.reads.get(path)
    if seen is not None and seen.sha256 != snapshot.sha256:
        rel = ctx.workspace.relative(path)
        raise ToolError(
            f"{rel} changed since you last read it (edited by the user or another process); "
            f"read it again with read_file and redo your edit."
        )


def note_read(ctx: ToolContext, path: Path, snapshot: Snapshot) -> None:
    ctx.reads[path] = ReadRecord(sha256=snapshot.sha256, version=snapshot.version)


def commit_text(ctx: ToolContext, base: EditBase, new_lf_text: str, *, label: str = "") -> dict[str, Any]:
    """Write ``new_lf_text`` with the file's own line endings and BOM; return the write fact entry."""
    if base.snapshot is None:
        final = new_lf_text
        bom = False
        action = "create"
    else:
        final = restore_newlines(base.snapshot.text, new_lf_text, base.newline)
        bom = base.snapshot.bom
        action = "update"
    ctx.documents.write(base.path, final, bom=bom, label=label)
    written = Snapshot(text=final, bom=bom)
    note_read(ctx, base.path, written)
    return write_entry(ctx.workspace.relative(base.path), final, action)
