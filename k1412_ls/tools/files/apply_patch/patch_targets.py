"""The workspace side of apply_patch: confined paths, policy pre-checks and document-store writes.

Every path in a patch is resolved (and so confined) before anything is
touched, and conflicts and binary targets are refused up front too, so a
patch that breaks a rule changes nothing. Reads and writes go through the
run's DocumentStore (editor buffers in the language server, the disk in the
CLI) via the shared edit plumbing, which keeps line endings, BOM and mode.
"""

from __future__ import annotations

import codecs
import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from k1412_ls.tools.errors import ToolError
from k1412_ls.tools.facts import write_entry
from k1412_ls.tools.files.apply_patch.apply import ApplyFailure
from k1412_ls.tools.files.apply_patch.parser import AddFile, DeleteFile, Section, UpdateFile
from k1412_ls.tools.files.edits import EditBase, commit_text, ensure_not_stale, load_for_edit
from k1412_ls.tools.registry import ToolContext

EDIT_LABEL = "apply_patch"
BINARY_SNIFF_BYTES = 8192


def section_paths(section: Section) -> list[str]:
    """Every path a section names (an update's Move to included)."""
    if isinstance(section, UpdateFile) and section.move_to is not None:
        return [section.path, section.move_to]
    return [section.path]


def resolve_paths(ctx: ToolContext, sections: Sequence[Section]) -> dict[str, Path]:
    """Resolve every path of every section for writing; the first refused path raises ToolError."""
    resolved: dict[str, Path] = {}
    for section in sections:
        for raw in section_paths(section):
            if raw not in resolved:
                if raw.strip() == "":
                    raise ToolError(f"'{section.header}' names no path; give a path relative to the workspace.")
                resolved[raw] = ctx.workspace.resolve(raw, for_write=True)
    return resolved


def looks_binary(path: Path) -> bool:
    """True when the start of ``path`` has a NUL byte or is not UTF-8 (a cut multi-byte tail is fine)."""
    try:
        with path.open("rb") as handle:
            head = handle.read(BINARY_SNIFF_BYTES)
    except OSError:
        return False
    if head.startswith(codecs.BOM_UTF8):
        head = head[len(codecs.BOM_UTF8):]
    if b"\x00" in head:
        return True
    try:
        codecs.getincrementaldecoder("utf-8")().decode(head, final=False)
    except UnicodeDecodeError:
        return True
    return False


def _is_symlink(ctx: ToolContext, raw: str) -> bool:
    lexical = Path(raw) if os.path.isabs(raw) else ctx.workspace.root / raw
    return os.path.islink(os.path.normpath(lexical))


class WorkspacePatchFiles:
    """``PatchFiles`` over a ToolContext; call :meth:`preflight` (under the write lock) first."""

    def __init__(self, ctx: ToolContext, resolved: dict[str, Path]) -> None:
        self.ctx = ctx
        self.resolved = resolved

    def display(self, raw_path: str) -> str:
        return self.ctx.workspace.relative(self.resolved[raw_path])

    def preflight(self, sections: Sequence[Section]) -> None:
        """Refuse symlink removals, binary targets and stale reads before any section is applied."""
        checked: set[Path] = set()
        for section in sections:
            if isinstance(section, DeleteFile) or (isinstance(section, UpdateFile) and section.move_to):
                if _is_symlink(self.ctx, section.path):
                    raise ToolError(
                        f"{section.path} is a symbolic link; apply_patch does not delete or move links, "
                        "use run_command if that is really intended."
                    )
            overwritten = [section.path] if not isinstance(section, DeleteFile) else []
            if isinstance(section, UpdateFile) and section.move_to is not None:
                overwritten.append(section.move_to)
            for raw in overwritten:
                path = self.resolved[raw]
                if path not in checked and path.is_file() and looks_binary(path):
                    raise ToolError(f"{raw} is a binary file; apply_patch only edits text files.")
            for raw in section_paths(section):
                path = self.resolved[raw]
                if path not in checked and path in self.ctx.reads and path.is_file():
                    ensure_not_stale(self.ctx, path, self.ctx.documents.read(path))
                checked.add(path)

    def add(self, section: AddFile) -> dict[str, Any]:
        path = self.resolved[section.path]
        if path.is_dir():
            raise ApplyFailure(f"Failed to write file {section.path}", f"{section.path} is a directory; pick a file path")
        _refuse_nul(section.path, section.contents)
        base = load_for_edit(self.ctx, path, must_exist=False)
        if base.snapshot is not None:
            _refuse_nul(section.path, base.snapshot.text)
        return commit_text(self.ctx, base, section.contents, label=EDIT_LABEL)

    def delete(self, section: DeleteFile) -> dict[str, Any]:
        path = self.resolved[section.path]
        if not path.is_file():
            raise ApplyFailure(
                f"Failed to delete file {section.path}",
                "it does not exist or is not a regular file; check the path with list_files",
            )
        if path in self.ctx.reads:
            load_for_edit(self.ctx, path)
        self.ctx.documents.delete(path, label=EDIT_LABEL)
        self.ctx.reads.pop(path, None)
        return write_entry(self.ctx.workspace.relative(path), None, "delete")

    def update(self, section: UpdateFile, derive: Callable[[str], str]) -> dict[str, Any]:
        path = self.resolved[section.path]
        if not path.exists() or path.is_dir():
            reason = "Is a directory (os error 21)" if path.is_dir() else "No such file or directory (os error 2)"
            raise ApplyFailure(
                f"Failed to read file to update {section.path}: {reason}",
                "check the path with list_files, or use '*** Add File:' to create a new file",
            )
        # Binary files were refused by preflight (and by the document store's read).
        base = load_for_edit(self.ctx, path)
        new_text = derive(base.text)
        target = self.resolved[section.move_to] if section.move_to is not None else path
        if target == path:
            # Upstream would write the file and then delete it; a move onto itself is an update.
            return commit_text(self.ctx, base, new_text, label=EDIT_LABEL)
        assert section.move_to is not None
        if target.is_dir():
            raise ApplyFailure(f"Failed to write file {section.move_to}", "the destination is a directory; pick a file path")
        if target.exists():
            _refuse_nul(section.move_to, load_for_edit(self.ctx, target).text)
        # Renaming first keeps the file's mode and lets an editor follow the document.
        self.ctx.documents.rename(path, target, label=EDIT_LABEL)
        self.ctx.reads.pop(path, None)
        entry = commit_text(self.ctx, EditBase(target, base.snapshot), new_text, label=EDIT_LABEL)
        entry["action"] = "move"
        entry["from"] = self.ctx.workspace.relative(path)
        return entry


def _refuse_nul(raw: str, text: str) -> None:
    if "\x00" in text:
        raise ToolError(f"{raw} would be binary (it contains NUL characters); apply_patch only edits text files.")
