"""Shared edit plumbing for every tool that changes files.

Tools see text with ``\\n`` line endings; :func:`commit_text` puts the file's
own endings (and BOM) back, so untouched lines keep their bytes. A write over
a file that changed since the agent last read it is refused as a conflict, and
so is a write whose file changed between being loaded for the edit and the
rename that commits it (another process, the user): the document store
compares the file with the loaded version just before renaming.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from k1412_ls.tools.errors import ToolError
from k1412_ls.tools.facts import write_entry
from k1412_ls.tools.files.documents import BOM, NO_FILE, Snapshot, StaleWrite, bytes_version
from k1412_ls.tools.registry import ReadRecord, ToolContext


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


def split_endings(text: str) -> tuple[list[str], list[str]]:
    """Split on ``\\n`` only: bare lines and their exact endings ("\\r\\n", "\\n" or "" for the last)."""
    pieces = text.split("\n")
    bare: list[str] = []
    endings: list[str] = []
    for index, piece in enumerate(pieces):
        if index == len(pieces) - 1:
            if piece:
                bare.append(piece)
                endings.append("")
        elif piece.endswith("\r"):
            bare.append(piece[:-1])
            endings.append("\r\n")
        else:
            bare.append(piece)
            endings.append("\n")
    return bare, endings


# Above this many line pairs in the changed middle, matching is skipped and new endings are used.
_MATCH_BUDGET = 4_000_000


def restore_newlines(original: str, new_lf: str, newline: str) -> str:
    """Give lines of ``new_lf`` that are unchanged from ``original`` their original ending.

    Lines are split on ``\\n`` only (``str.splitlines`` would also split on
    form feeds and U+2028). Inserted or changed lines get ``newline``. Uniform
    files take a linear fast path; otherwise the common prefix and suffix are
    matched directly and only the changed middle goes through difflib.
    """
    crlf = original.count("\r\n")
    if crlf == 0 and newline == "\n":
        return new_lf
    if crlf and crlf == original.count("\n") and newline == "\r\n":
        return new_lf.replace("\n", "\r\n")
    old_bare, old_end = split_endings(original)
    new_bare = new_lf.split("\n")
    trailing = new_lf.endswith("\n")
    if trailing:
        new_bare.pop()
    elif new_bare == [""]:
        new_bare = []
    endings: list[str | None] = [None] * len(new_bare)
    head = 0
    limit = min(len(old_bare), len(new_bare))
    while head < limit and old_bare[head] == new_bare[head]:
        endings[head] = old_end[head]
        head += 1
    tail = 0
    while tail < limit - head and old_bare[-1 - tail] == new_bare[-1 - tail]:
        endings[len(new_bare) - 1 - tail] = old_end[len(old_bare) - 1 - tail]
        tail += 1
    old_mid = old_bare[head:len(old_bare) - tail]
    new_mid = new_bare[head:len(new_bare) - tail]
    if old_mid and new_mid and len(old_mid) * len(new_mid) <= _MATCH_BUDGET:
        import difflib

        matcher = difflib.SequenceMatcher(a=old_mid, b=new_mid, autojunk=False)
        for a0, b0, size in matcher.get_matching_blocks():
            for offset in range(size):
                endings[head + b0 + offset] = old_end[head + a0 + offset]
    out: list[str] = []
    last = len(new_bare) - 1
    for index, line in enumerate(new_bare):
        ending = endings[index]
        if index == last and not trailing:
            ending = ""
        elif not ending:
            ending = newline
        out.append(line + ending)
    return "".join(out)


def load_for_edit(ctx: ToolContext, path: Path, *, must_exist: bool = True) -> EditBase:
    """Read ``path`` through the document store and refuse if it changed since the agent's last read."""
    if not path.exists() and not must_exist:
        return EditBase(path, None)
    snapshot = ctx.documents.read(path)
    ensure_not_stale(ctx, path, snapshot)
    seen = ctx.reads.get(path)
    if seen is not None and seen.disk is not None and snapshot.disk is not None:
        # The edit answers what the agent saw, on disk too: an open buffer can be unchanged while
        # another program rewrote the file behind it, and writing the buffer back would undo that.
        snapshot = replace(snapshot, disk=seen.disk)
    return EditBase(path, snapshot)


def stale_message(ctx: ToolContext, path: Path) -> str:
    """The one sentence for a write refused because the file changed under it."""
    rel = ctx.workspace.relative(path)
    return (f"{rel} changed since you last read it (edited by the user or another process); "
            f"read it again with read_file and redo your edit.")


def ensure_not_stale(ctx: ToolContext, path: Path, snapshot: Snapshot) -> None:
    seen = ctx.reads.get(path)
    if seen is not None and seen.sha256 != snapshot.sha256:
        raise ToolError(stale_message(ctx, path))


def note_read(ctx: ToolContext, path: Path, snapshot: Snapshot) -> None:
    ctx.reads[path] = ReadRecord(sha256=snapshot.sha256, version=snapshot.version, disk=snapshot.disk)


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
    expect = NO_FILE if base.snapshot is None else base.snapshot.disk
    try:
        ctx.documents.write(base.path, final, bom=bom, label=label, expect=expect)
    except StaleWrite as exc:
        raise ToolError(str(exc) if exc.complete else stale_message(ctx, base.path)) from None
    written = Snapshot(text=final, bom=bom, disk=bytes_version((BOM if bom else b"") + final.encode("utf-8")))
    note_read(ctx, base.path, written)
    return write_entry(ctx.workspace.relative(base.path), final, action)
